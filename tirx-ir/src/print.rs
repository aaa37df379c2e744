//! Text form: printing. `Display` for [`Module`] and [`Kernel`] is the only text format of the
//! IR; snapshots, `TIRX_DUMP` and `tirx explain` all use it, and `parse::parse_module` reads it
//! back (`parse(print(m)) == m`).
//!
//! ```text
//! kernel tma_copy config default phase tile
//!   const BM = 64
//!   signature tma_copy_default_sm_90a          // see abi_text.rs
//!     target sm_90a
//!     …
//!   var %0: u32 "k"
//!   buffer @tile: smem bf16 (64, 64):(64, 1) swizzle B128 offset 0
//!   barrier @bar: count 1 arrivals 1 offset 8192
//!   pipeline @pipe: stages 4 full @pipe.full empty @pipe.empty
//! {
//!   scope warp 0..=0 {
//!     for %0 = 0:u32 to cdiv(dim M, 64:u32) step 1:u32 {
//!       op producer_acquire @pipe iter %0 -> %1
//!       op copy @tile[%1] <- global src[ctaid.y, %0] bar @pipe.full[%1]
//!       inst @!%3 %4 = mbarrier.try_wait.parity.shared::cta.b64 [%5], %6
//!     }
//!   }
//! }
//! ```
//!
//! Stability: values print as `%<arena index>`; buffers, barriers and pipelines as `@<name>`
//! (so names must be unique within each arena); everything in insertion order; immediates as
//! `<value>:<type>` in expressions (`u64` ones unsigned), f32 operands as PTX hex bits (`0f3F800000`). Expressions
//! print with Rust's precedences and only the parentheses they need. Names that are not plain
//! identifiers print quoted. Spans are printed only by `{:#}`, as a ` !<id>` suffix on the
//! header line of each statement or declaration whose span is not `Span::NONE`.

use std::fmt::{self, Write};

use crate::abi_text::write_signature;
use crate::arena::{Arena, Handle};
use crate::ir::*;
use crate::parse::lexer::{Name, Quoted};

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.kernels.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            if f.alternate() {
                write!(f, "{k:#}")?
            } else {
                write!(f, "{k}")?
            }
        }
        Ok(())
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spans = f.alternate();
        Printer {
            out: f,
            k: self,
            spans,
        }
        .kernel()
    }
}

/// Context-free: an expression alone (variables print as `%<index>`).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, 0)
    }
}

/// Context-free: an instruction operand alone.
impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_operand(f, self)
    }
}

/// The text spelling of a phase.
pub(crate) fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Tile => "tile",
        Phase::Thread => "thread",
        Phase::Ptx => "ptx",
    }
}

/// Binding strength of an expression's outermost node (higher binds tighter); Rust's order.
pub(crate) fn prec(e: &Expr) -> u8 {
    match e {
        Expr::AndP(..) => 1,
        Expr::Cmp(..) => 2,
        Expr::Bin(op, ..) => bin_info(*op).1,
        Expr::Not(_) => 9,
        Expr::Imm(..) | Expr::Var(_) | Expr::Dim(_) | Expr::Special(_) => 10,
    }
}

/// A binary operator's spelling and precedence; precedence 10 means call syntax (`cdiv(a, b)`).
pub(crate) fn bin_info(op: BinOp) -> (&'static str, u8) {
    match op {
        BinOp::Or => ("|", 3),
        BinOp::Xor => ("^", 4),
        BinOp::And => ("&", 5),
        BinOp::Shl => ("<<", 6),
        BinOp::Shr => (">>", 6),
        BinOp::Add => ("+", 7),
        BinOp::Sub => ("-", 7),
        BinOp::Mul => ("*", 8),
        BinOp::Div => ("/", 8),
        BinOp::Rem => ("%", 8),
        BinOp::CeilDiv => ("cdiv", 10),
        BinOp::Min => ("min", 10),
        BinOp::Max => ("max", 10),
    }
}

/// A comparison's spelling.
pub(crate) fn cmp_name(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// A special register's spelling; `Special::name` except that an out-of-range axis prints as
/// its number (`ctaid.3`) so that it still round-trips.
pub(crate) fn special_name(s: Special) -> String {
    match s {
        Special::CtaId(n) | Special::NCtaId(n) if n > 2 => {
            let base = if matches!(s, Special::CtaId(_)) {
                "ctaid"
            } else {
                "nctaid"
            };
            format!("{base}.{n}")
        }
        _ => s.name().to_string(),
    }
}

/// Writes `e`, parenthesised if it binds looser than `min`.
fn write_expr(out: &mut dyn Write, e: &Expr, min: u8) -> fmt::Result {
    let p = prec(e);
    if p < min {
        out.write_str("(")?;
    }
    match e {
        // A u64 (addresses, descriptors) prints as the unsigned value of its bits.
        Expr::Imm(v, ScalarType::U64) => write!(out, "{}:u64", *v as u64)?,
        Expr::Imm(v, ty) => write!(out, "{v}:{}", ty.name())?,
        Expr::Var(h) => write!(out, "%{}", h.index())?,
        Expr::Dim(s) => write!(out, "dim {}", Name(s))?,
        Expr::Special(s) => out.write_str(&special_name(*s))?,
        Expr::Bin(op, a, b) => match bin_info(*op) {
            (name, 10) => {
                write!(out, "{name}(")?;
                write_expr(out, a, 0)?;
                out.write_str(", ")?;
                write_expr(out, b, 0)?;
                out.write_str(")")?;
            }
            // Left-associative: a right operand of the same precedence needs parentheses.
            (name, p) => write_infix(out, a, name, b, p, p + 1)?,
        },
        // Comparisons do not chain: both sides bind tighter.
        Expr::Cmp(op, a, b) => write_infix(out, a, cmp_name(*op), b, p + 1, p + 1)?,
        Expr::AndP(a, b) => write_infix(out, a, "&&", b, p, p + 1)?,
        Expr::Not(a) => {
            out.write_str("!")?;
            write_expr(out, a, p)?;
        }
    }
    if p < min {
        out.write_str(")")?;
    }
    Ok(())
}

fn write_infix(out: &mut dyn Write, a: &Expr, op: &str, b: &Expr, pa: u8, pb: u8) -> fmt::Result {
    write_expr(out, a, pa)?;
    write!(out, " {op} ")?;
    write_expr(out, b, pb)
}

fn write_list<T>(
    out: &mut dyn Write,
    items: &[T],
    mut item: impl FnMut(&mut dyn Write, &T) -> fmt::Result,
) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        item(out, x)?;
    }
    Ok(())
}

fn write_exprs(out: &mut dyn Write, es: &[Expr]) -> fmt::Result {
    write_list(out, es, |out, e| write_expr(out, e, 0))
}

fn write_operand(out: &mut dyn Write, o: &Operand) -> fmt::Result {
    match o {
        Operand::Reg(h) => write!(out, "%{}", h.index()),
        Operand::NotReg(h) => write!(out, "!%{}", h.index()),
        Operand::Imm(v) => write!(out, "{v}"),
        Operand::F32Bits(b) => write!(out, "0f{b:08X}"),
        Operand::Sym(s) => write!(out, "{}", Name(s)),
        Operand::Mem(base, off) => {
            out.write_str("[")?;
            write_operand(out, base)?;
            match *off {
                0 => {}
                o if o > 0 => write!(out, "+{o}")?,
                o => write!(out, "{o}")?,
            }
            out.write_str("]")
        }
        Operand::TensorMem(map, coords) => {
            out.write_str("[")?;
            write_operand(out, map)?;
            out.write_str(", {")?;
            write_list(out, coords, write_operand)?;
            out.write_str("}]")
        }
        Operand::Vector(items) => {
            out.write_str("{")?;
            write_list(out, items, write_operand)?;
            out.write_str("}")
        }
        // `a|b` groups to the right; a pair on the left needs parentheses.
        Operand::Pair(a, b) if matches!(**a, Operand::Pair(..)) => {
            out.write_str("(")?;
            write_operand(out, a)?;
            out.write_str(")|")?;
            write_operand(out, b)
        }
        Operand::Pair(a, b) => {
            write_operand(out, a)?;
            out.write_str("|")?;
            write_operand(out, b)
        }
    }
}

/// `@<name>` of an arena element; a dangling handle prints as `@#<index>` (which does not
/// parse) rather than panicking, so that invalid IR can still be dumped.
struct At<'a, T>(&'a Arena<T>, Handle<T>, fn(&T) -> &str);

impl<T> fmt::Display for At<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.contains(self.1) {
            write!(f, "@{}", Name((self.2)(&self.0[self.1])))
        } else {
            write!(f, "@#{}", self.1.index())
        }
    }
}

/// Prints one kernel.
struct Printer<'a, 'k> {
    out: &'a mut dyn Write,
    k: &'k Kernel,
    spans: bool,
}

impl<'k> Printer<'_, 'k> {
    fn kernel(&mut self) -> fmt::Result {
        let k = self.k;
        writeln!(
            self.out,
            "kernel {} config {} phase {}",
            Name(&k.name),
            Name(&k.config),
            phase_name(k.phase)
        )?;
        for (name, v) in &k.consts {
            writeln!(self.out, "  const {} = {v}", Name(name))?;
        }
        write_signature(self.out, &k.sig, 2)?;
        for (h, v) in k.vars.iter() {
            writeln!(
                self.out,
                "  var %{}: {} {}",
                h.index(),
                v.ty.name(),
                Quoted(&v.name)
            )?;
        }
        for (h, b) in k.buffers.iter() {
            write!(
                self.out,
                "  buffer {}: {} {} (",
                self.buf(h),
                b.space.name(),
                b.elem.name()
            )?;
            write_list(self.out, &b.layout.shape, |o, d| write!(o, "{d}"))?;
            self.out.write_str("):(")?;
            write_list(self.out, &b.layout.stride, |o, d| write!(o, "{d}"))?;
            write!(self.out, ") swizzle {}", b.layout.swizzle.name())?;
            // K-major is the default and prints nothing, so K-major buffers read as before.
            if b.layout.major != crate::ir::Major::K {
                write!(self.out, " major {}", b.layout.major.name())?;
            }
            if let Some(l) = &b.regs {
                tile::write_reg_layout(self.out, l)?;
            }
            if let Some(o) = b.offset {
                write!(self.out, " offset {o}")?;
            }
            if let Some(c) = b.tmem_cols {
                write!(self.out, " cols {c}")?;
            }
            if let Some(a) = b.alias {
                write!(self.out, " alias {}", self.buf(a))?;
            }
            self.end(b.span)?;
        }
        for (h, b) in k.barriers.iter() {
            write!(
                self.out,
                "  barrier {}: count {} arrivals {}",
                self.bar(h),
                b.count,
                b.arrivals
            )?;
            if let Some(o) = b.offset {
                write!(self.out, " offset {o}")?;
            }
            self.end(b.span)?;
        }
        for (h, p) in k.pipelines.iter() {
            let (full, empty) = (self.bar(p.full), self.bar(p.empty));
            write!(
                self.out,
                "  pipeline {}: stages {} full {full} empty {empty}",
                self.pipe(h),
                p.stages
            )?;
            if p.peers != 1 {
                write!(self.out, " peers {}", p.peers)?;
            }
            self.end(p.span)?;
        }
        self.out.write_str("{\n")?;
        self.block(&k.body, 2)?;
        self.out.write_str("}\n")
    }

    fn buf(&self, h: Handle<Buffer>) -> At<'k, Buffer> {
        let k: &'k Kernel = self.k;
        At(&k.buffers, h, |b| &b.name)
    }
    fn bar(&self, h: Handle<Barrier>) -> At<'k, Barrier> {
        let k: &'k Kernel = self.k;
        At(&k.barriers, h, |b| &b.name)
    }
    fn pipe(&self, h: Handle<Pipeline>) -> At<'k, Pipeline> {
        let k: &'k Kernel = self.k;
        At(&k.pipelines, h, |p| &p.name)
    }

    /// The span suffix (under `{:#}`), then the end of the line.
    fn end(&mut self, span: Span) -> fmt::Result {
        self.span(span)?;
        self.out.write_str("\n")
    }

    fn span(&mut self, span: Span) -> fmt::Result {
        if self.spans && span != Span::NONE {
            write!(self.out, " !{}", span.0)
        } else {
            Ok(())
        }
    }

    fn block(&mut self, body: &Block, indent: usize) -> fmt::Result {
        body.iter().try_for_each(|s| self.stmt(s, indent))
    }

    /// ` [!span] {`, the body, and the closing `}` (without its line end).
    fn nested(&mut self, span: Span, body: &Block, indent: usize) -> fmt::Result {
        self.span(span)?;
        self.out.write_str(" {\n")?;
        self.block(body, indent + 2)?;
        write!(self.out, "{:indent$}}}", "")
    }

    fn stmt(&mut self, s: &Stmt, indent: usize) -> fmt::Result {
        write!(self.out, "{:indent$}", "")?;
        match &s.kind {
            StmtKind::Let { var, value } => {
                write!(self.out, "let %{} = ", var.index())?;
                write_expr(self.out, value, 0)?;
            }
            StmtKind::Assign { var, value } => {
                write!(self.out, "%{} = ", var.index())?;
                write_expr(self.out, value, 0)?;
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.out.write_str("if ")?;
                write_expr(self.out, cond, 0)?;
                self.nested(s.span, then_body, indent)?;
                if !else_body.is_empty() {
                    self.out.write_str(" else {\n")?;
                    self.block(else_body, indent + 2)?;
                    write!(self.out, "{:indent$}}}", "")?;
                }
                return self.out.write_str("\n");
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
            } => {
                write!(self.out, "for %{} = ", var.index())?;
                write_expr(self.out, start, 0)?;
                self.out.write_str(" to ")?;
                write_expr(self.out, end, 0)?;
                self.out.write_str(" step ")?;
                write_expr(self.out, step, 0)?;
                self.nested(s.span, body, indent)?;
                return self.out.write_str("\n");
            }
            StmtKind::Loop { body, until } => {
                self.out.write_str("loop")?;
                self.nested(s.span, body, indent)?;
                return writeln!(self.out, " until %{}", until.index());
            }
            StmtKind::Scope { scope, body } => {
                self.out.write_str("scope ")?;
                match scope {
                    Scope::Cta => self.out.write_str("cta")?,
                    Scope::Warpgroup(a, b) => write!(self.out, "warpgroup {a}..={b}")?,
                    Scope::Warp(a, b) => write!(self.out, "warp {a}..={b}")?,
                    Scope::Thread(t) => write!(self.out, "thread {t}")?,
                    Scope::Elect => self.out.write_str("elect")?,
                    Scope::Leader => self.out.write_str("leader")?,
                }
                self.nested(s.span, body, indent)?;
                return self.out.write_str("\n");
            }
            StmtKind::Op(op) => {
                self.out.write_str("op ")?;
                self.op(op)?;
            }
            StmtKind::Inst(inst) => self.inst(inst)?,
        }
        self.end(s.span)
    }

    fn inst(&mut self, inst: &Inst) -> fmt::Result {
        self.out.write_str("inst")?;
        if let Some(g) = &inst.guard {
            self.out.write_str(" @")?;
            write_operand(self.out, g)?;
        }
        if !inst.dsts.is_empty() {
            self.out.write_str(" ")?;
            write_list(self.out, &inst.dsts, write_operand)?;
            self.out.write_str(" =")?;
        }
        write!(self.out, " {}", Name(&inst.opcode))?;
        if !inst.srcs.is_empty() {
            self.out.write_str(" ")?;
            write_list(self.out, &inst.srcs, write_operand)?;
        }
        Ok(())
    }

    fn tile(&mut self, t: &TileRef) -> fmt::Result {
        match t {
            TileRef::Buf { buf, index } => {
                let b = self.buf(*buf);
                write!(self.out, "{b}")?;
                if !index.is_empty() {
                    self.out.write_str("[")?;
                    write_exprs(self.out, index)?;
                    self.out.write_str("]")?;
                }
                Ok(())
            }
            TileRef::Global {
                tensor,
                coords,
                elements,
            } => {
                // `global x[…]` (tile coordinates), `global_at x[…]` (element offsets),
                // `global_at x[…] within […]` (and bounds).
                let kw = if elements.is_some() {
                    "global_at"
                } else {
                    "global"
                };
                write!(self.out, "{kw} {}[", Name(tensor))?;
                write_exprs(self.out, coords)?;
                self.out.write_str("]")?;
                if let Some(b) = elements.as_ref().map(|b| &b.0).filter(|b| !b.is_empty()) {
                    self.out.write_str(" within [")?;
                    write_exprs(self.out, b)?;
                    self.out.write_str("]")?;
                }
                Ok(())
            }
        }
    }

    fn bar_ref(&mut self, r: &BarRef) -> fmt::Result {
        let b = self.bar(r.bar);
        write!(self.out, "{b}[")?;
        write_expr(self.out, &r.index, 0)?;
        self.out.write_str("]")
    }

    /// ` cta_group 2` for an op of the CTA pair; nothing for `cta_group::1`.
    fn pair(&mut self, pair: bool) -> fmt::Result {
        if pair {
            self.out.write_str(" cta_group 2")?;
        }
        Ok(())
    }

    fn variant(&mut self, v: Option<&'static str>) -> fmt::Result {
        match v {
            Some(v) => write!(self.out, " variant {}", Name(v)),
            None => Ok(()),
        }
    }

    fn op(&mut self, op: &Op) -> fmt::Result {
        let name = op_name(op);
        self.out.write_str(name)?;
        match op {
            Op::Copy {
                dst,
                src,
                bar,
                multicast,
                scale,
                variant,
                pair,
                atomic,
            } => {
                self.out.write_str(" ")?;
                self.tile(dst)?;
                self.out.write_str(" <- ")?;
                self.tile(src)?;
                if let Some(a) = atomic {
                    write!(self.out, " atomic {} {} {}", a.op, a.scope, a.sem)?;
                    if let Some(old) = &a.old {
                        self.out.write_str(" old ")?;
                        self.tile(old)?;
                    }
                }
                if let Some(b) = bar {
                    self.out.write_str(" bar ")?;
                    self.bar_ref(b)?;
                }
                if let Some(m) = multicast {
                    self.out.write_str(" multicast ")?;
                    write_expr(self.out, m, 0)?;
                }
                if let Some(sc) = scale {
                    write!(self.out, " alpha {}", Name(&sc.alpha))?;
                    if let Some(b) = &sc.beta {
                        write!(self.out, " beta {}", Name(b))?;
                    }
                }
                self.pair(*pair)?;
                self.variant(variant.map(|v| v.name()))
            }
            Op::Mma {
                acc,
                a,
                b,
                accumulate,
                variant,
                pair,
                scale,
                saturate,
            } => {
                self.out.write_str(" ")?;
                self.tile(acc)?;
                self.out.write_str(" <- ")?;
                self.tile(a)?;
                self.out.write_str(", ")?;
                self.tile(b)?;
                self.out.write_str(" accumulate ")?;
                write_expr(self.out, accumulate, 0)?;
                if let Some(sc) = scale {
                    self.out.write_str(" scale ")?;
                    self.tile(&sc.a)?;
                    self.out.write_str(", ")?;
                    self.tile(&sc.b)?;
                    if sc.mxf4 {
                        self.out.write_str(" mxf4")?;
                    }
                }
                if *saturate {
                    self.out.write_str(" saturate")?;
                }
                self.pair(*pair)?;
                self.variant(variant.map(|v| v.name()))
            }
            Op::ProducerAcquire { pipe, iter, stage } | Op::ConsumerWait { pipe, iter, stage } => {
                let p = self.pipe(*pipe);
                write!(self.out, " {p} iter ")?;
                write_expr(self.out, iter, 0)?;
                write!(self.out, " -> %{}", stage.index())
            }
            Op::ConsumerRelease { pipe, stage } => {
                let p = self.pipe(*pipe);
                write!(self.out, " {p} stage ")?;
                write_expr(self.out, stage, 0)
            }
            Op::MbarInit { bar } => {
                let b = self.bar(*bar);
                write!(self.out, " {b}")
            }
            Op::MbarArrive { bar } => {
                self.out.write_str(" ")?;
                self.bar_ref(bar)
            }
            Op::Tcgen05Commit {
                bar,
                pair,
                multicast,
            } => {
                self.out.write_str(" ")?;
                self.bar_ref(bar)?;
                self.pair(*pair)?;
                match multicast {
                    Some(m) => write!(self.out, " multicast {m}"),
                    None => Ok(()),
                }
            }
            Op::TmemRelinquish { pair } => self.pair(*pair),
            Op::Tcgen05Shift { tile, pair } => {
                self.out.write_str(" ")?;
                self.tile(tile)?;
                self.pair(*pair)
            }
            Op::ClcTryCancel {
                resp,
                bar,
                multicast,
            } => {
                self.out.write_str(" ")?;
                self.tile(resp)?;
                self.out.write_str(" bar ")?;
                self.bar_ref(bar)?;
                match multicast {
                    true => self.out.write_str(" multicast"),
                    false => Ok(()),
                }
            }
            Op::LoadScalar {
                dst,
                tensor,
                index,
                oob_zero,
            } => {
                write!(self.out, " global {}[", Name(tensor))?;
                write_exprs(self.out, index)?;
                write!(self.out, "] -> %{}", dst.index())?;
                match oob_zero {
                    true => self.out.write_str(" oob_zero"),
                    false => Ok(()),
                }
            }
            Op::ClcIsCanceled { resp, dst } => {
                self.out.write_str(" ")?;
                self.tile(resp)?;
                write!(self.out, " -> %{}", dst.index())
            }
            Op::ClcFirstCta { resp, dsts } => {
                self.out.write_str(" ")?;
                self.tile(resp)?;
                self.out.write_str(" ->")?;
                for (i, d) in dsts.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(self.out, "{sep}%{}", d.index())?;
                }
                Ok(())
            }
            Op::MbarArriveExpectTx { bar, bytes } => {
                self.out.write_str(" ")?;
                self.bar_ref(bar)?;
                match bytes {
                    Some(n) => write!(self.out, " bytes {n}"),
                    None => Ok(()),
                }
            }
            Op::MbarWait { bar, parity } => {
                self.out.write_str(" ")?;
                self.bar_ref(bar)?;
                self.out.write_str(" parity ")?;
                write_expr(self.out, parity, 0)
            }
            Op::TmaWaitGroup { n, read } => {
                write!(self.out, " {n}{}", if *read { " read" } else { "" })
            }
            Op::TmemAlloc { buf, pair } | Op::TmemDealloc { buf, pair } => {
                let b = self.buf(*buf);
                write!(self.out, " {b}")?;
                self.pair(*pair)
            }
            Op::WgmmaWait { n } => write!(self.out, " {n}"),
            Op::NamedBarrier { id, threads, .. } => {
                self.out.write_str(" ")?;
                write_expr(self.out, id, 0)?;
                write!(self.out, " threads {threads}")
            }
            Op::SetMaxNReg { inc, count } => {
                write!(self.out, " {} {count}", if *inc { "inc" } else { "dec" })
            }
            Op::FenceMbarrierInit
            | Op::FenceProxyAsync
            | Op::GridDepWait
            | Op::GridDepLaunch
            | Op::SyncThreads
            | Op::TmaCommitGroup
            | Op::Tcgen05FenceBefore
            | Op::Tcgen05FenceAfter
            | Op::WgmmaFence
            | Op::WgmmaCommit
            | Op::ClusterSync => Ok(()),
            Op::Compute { .. } | Op::Reduce { .. } | Op::WarpVote { .. } => self.tile_op(op),
        }
    }
}

/// The word after `op` that names an op.
pub(crate) fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Copy { .. } => "copy",
        Op::Mma { .. } => "mma",
        Op::ProducerAcquire { .. } => "producer_acquire",
        Op::ConsumerWait { .. } => "consumer_wait",
        Op::ConsumerRelease { .. } => "consumer_release",
        Op::MbarInit { .. } => "mbar_init",
        Op::MbarArrive { .. } => "mbar_arrive",
        Op::MbarArriveExpectTx { .. } => "mbar_arrive_expect_tx",
        Op::MbarWait { .. } => "mbar_wait",
        Op::FenceMbarrierInit => "fence_mbarrier_init",
        Op::FenceProxyAsync => "fence_proxy_async",
        Op::GridDepWait => "grid_dep_wait",
        Op::GridDepLaunch => "grid_dep_launch",
        Op::SyncThreads => "sync_threads",
        Op::TmaCommitGroup => "tma_commit_group",
        Op::TmaWaitGroup { .. } => "tma_wait_group",
        Op::TmemAlloc { .. } => "tmem_alloc",
        Op::TmemRelinquish { .. } => "tmem_relinquish",
        Op::TmemDealloc { .. } => "tmem_dealloc",
        Op::Tcgen05Commit { .. } => "tcgen05_commit",
        Op::ClcTryCancel { .. } => "clc_try_cancel",
        Op::Tcgen05Shift { .. } => "tcgen05_shift",
        Op::ClcIsCanceled { .. } => "clc_is_canceled",
        Op::LoadScalar { .. } => "load_scalar",
        Op::ClcFirstCta { .. } => "clc_first_cta",
        Op::Tcgen05FenceBefore => "tcgen05_fence_before",
        Op::Tcgen05FenceAfter => "tcgen05_fence_after",
        Op::WgmmaFence => "wgmma_fence",
        Op::WgmmaCommit => "wgmma_commit",
        Op::WgmmaWait { .. } => "wgmma_wait",
        Op::SetMaxNReg { .. } => "setmaxnreg",
        Op::ClusterSync => "cluster_sync",
        Op::NamedBarrier { arrive: false, .. } => "named_barrier",
        Op::NamedBarrier { arrive: true, .. } => "named_barrier_arrive",
        Op::Compute { .. } => "compute",
        Op::Reduce { .. } => "reduce",
        Op::WarpVote { .. } => "warp_vote",
    }
}

#[cfg(test)]
mod tests;
mod tile;
pub(crate) use tile::{CMPS, cmp_word};
