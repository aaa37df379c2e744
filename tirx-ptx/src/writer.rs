//! `Writer`: prints one kernel in `Phase::Ptx` as a complete PTX module.
//!
//! Section order is fixed (PTX ISA §11, "Directives"):
//!
//! ```text
//! // tirx <version> - <kernel>, config <config>, target <target>
//! .version 8.7 / .target sm_90a|sm_100a / .address_size 64
//! .extern .shared .align 1024 .b8 tirx_smem[];         dynamic shared memory
//! .visible .entry <sig.entry>( <params in sig.params order> )
//! .maxntid <threads>, 1, 1  [.reqnctapercluster x, y, z]
//! {  register declarations (arena order), blank line, body, ret;  }
//! ```
//!
//! Conventions, all deterministic (no hashing, numbering in print order):
//! - Registers are named by `Namer` (type prefix + arena index, `%r12`); only variables the body
//!   mentions are declared. The writer's own loop predicates are `%pfN`.
//! - Every `If`, `For` and `Loop` takes the next number `N` of one counter when the writer
//!   reaches it (pre-order), and names its labels `$L_else_N`/`$L_end_N`, `$L_for_N`/
//!   `$L_for_end_N` (with predicate `%pfN`), or `$L_loop_N`. One counter for all three kinds
//!   keeps every label of a kernel unique and lets `N` identify the construct.
//! - Instructions are one per line, indented by one tab whatever the nesting; labels start in
//!   column 0.
//! - `Expr::Imm(v, _)` assigned to an `f32` variable means the *number* `v`, converted to `f32`
//!   (`2` → `0f40000000`); to move raw bits use an `Inst` with `Operand::F32Bits`.
//! - Addresses are `[base]` or `[base+off]`; a negative offset prints as `[base+-4]`, the only
//!   spelling ptxas parses (`[base-4]` is a syntax error).
//! - An `If` on a constant predicate (`Expr::Imm`) prints only the branch that runs; a `For`
//!   of wgmmas whose constant bounds run its body at least once is tested at the bottom.
//!
//! The `.version` is 8.7: the lowest that knows both `sm_100a` and the tcgen05 family is 8.6,
//! and the H200's driver (CUDA 13.0) rejects anything above 9.0 (DESIGN.md §6).
//!
//! Invariant: the writer never panics on its input; anything it cannot print is a `PtxError`.

use std::fmt::Write as _;

use tirx_ir::abi::AbiParam;
use tirx_ir::{
    Block, Expr, Handle, Inst, Kernel, Op, Operand, Phase, ScalarType, Span, Stmt, StmtKind, Var,
};

use crate::error::PtxError;
use crate::namer::Namer;

/// The PTX ISA version every module declares. Keep at 9.0 or less (DESIGN.md §6).
pub const PTX_VERSION: &str = "8.7";

/// The symbol of the dynamic shared memory window; lowering refers to it as
/// `Operand::Sym(SMEM_SYMBOL)`.
pub const SMEM_SYMBOL: &str = "tirx_smem";

/// Prints one kernel. Use through [`crate::write_string`].
pub struct Writer<'k> {
    kernel: &'k Kernel,
    namer: Namer,
    /// The body, written first because the declarations depend on what it mentions.
    body: String,
    /// `(byte offset in body, span)` at the start of every statement written.
    marks: Vec<(usize, Span)>,
    /// Whether the body mentions each variable, by arena index.
    used: Vec<bool>,
    /// The `%pfN` predicates `For` loops made, in print order.
    loop_preds: Vec<String>,
    /// Number of the next control construct.
    next_label: u32,
    /// Whether the body has a `setmaxnreg` (the entry then needs a register count: see
    /// [`Writer::register_cap`]).
    setmaxnreg: bool,
}

/// The condition of an `If`, once its `Not`s are folded.
enum Cond {
    /// Known at compile time.
    Const(bool),
    /// A predicate register, possibly negated.
    Reg { name: String, negated: bool },
}

impl<'k> Writer<'k> {
    /// A writer for `kernel`.
    pub fn new(kernel: &'k Kernel) -> Writer<'k> {
        Writer {
            kernel,
            namer: Namer::new(&kernel.vars),
            body: String::new(),
            marks: Vec::new(),
            used: vec![false; kernel.vars.len()],
            loop_preds: Vec::new(),
            next_label: 0,
            setmaxnreg: false,
        }
    }

    /// Prints the whole module.
    pub fn write(self) -> Result<String, PtxError> {
        self.write_with_lines().map(|(ptx, _)| ptx)
    }

    /// Prints the whole module and says where each body line came from: `(line, span)` pairs,
    /// 1-based PTX line numbers in increasing order, each the first line written for a
    /// statement with that user span (the lines up to the next pair belong to it). Statements
    /// without a span (`Span::NONE`, the compiler's own) are left out.
    pub fn write_with_lines(mut self) -> Result<(String, Vec<(u32, Span)>), PtxError> {
        let kernel = self.kernel;
        if kernel.phase != Phase::Ptx {
            return Err(PtxError::WrongPhase {
                kernel: kernel.name.clone(),
                phase: kernel.phase,
            });
        }
        self.block(&kernel.body)?;
        let mut out = String::new();
        self.module_header(&mut out)?;
        self.entry_header(&mut out)?;
        out.push_str("{\n");
        self.declarations(&mut out)?;
        out.push('\n');
        let first = out.matches('\n').count() as u32 + 1;
        let mut lines: Vec<(u32, Span)> = Vec::new();
        let (mut at, mut line) = (0usize, first);
        for &(offset, span) in &self.marks {
            line += self.body[at..offset].matches('\n').count() as u32;
            at = offset;
            if span == Span::NONE || lines.last().is_some_and(|l| l.1 == span) {
                continue;
            }
            // A statement that wrote nothing leaves its line to the next one.
            if lines.last().is_some_and(|l| l.0 == line) {
                lines.pop();
            }
            lines.push((line, span));
        }
        out.push_str(&self.body);
        out.push_str("\tret;\n}\n");
        Ok((out, lines))
    }

    /// The comment line, the module directives and the dynamic shared memory.
    fn module_header(&self, out: &mut String) -> Result<(), PtxError> {
        let k = self.kernel;
        writeln!(
            out,
            "// tirx {} - {}, config {}, target {}",
            env!("CARGO_PKG_VERSION"),
            k.name,
            k.config,
            k.target().name()
        )?;
        writeln!(out, ".version {PTX_VERSION}")?;
        writeln!(out, ".target {}", k.target().name())?;
        writeln!(out, ".address_size 64")?;
        out.push('\n');
        // PTX ISA §5.1.5: an `.extern .shared` array of unspecified size is the dynamic shared
        // memory. 1024-byte alignment is what 128B-swizzled tiles need (DESIGN.md §4).
        writeln!(out, ".extern .shared .align 1024 .b8 {SMEM_SYMBOL}[];")?;
        out.push('\n');
        Ok(())
    }

    /// `.visible .entry name(params)` and the performance-tuning directives (PTX ISA §11.4).
    fn entry_header(&self, out: &mut String) -> Result<(), PtxError> {
        let sig = &self.kernel.sig;
        write!(out, ".visible .entry {}(", sig.entry)?;
        for (i, param) in sig.params.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            write!(out, "\t{}", param_decl(sig, param))?;
        }
        if !sig.params.is_empty() {
            out.push('\n');
        }
        out.push_str(")\n");
        writeln!(out, ".maxntid {}, 1, 1", sig.threads)?;
        let [x, y, z] = sig.cluster;
        if sig.cluster != [1, 1, 1] {
            writeln!(out, ".reqnctapercluster {x}, {y}, {z}")?;
        }
        self.register_cap(out)
    }

    /// The register count at entry of a kernel that moves registers with `setmaxnreg`:
    /// `.minnctapersm 1` (PTX ISA §11.4.4) after `.maxntid`. `setmaxnreg` "requires that the
    /// kernel has been launched with a valid value of maximum number of per-thread registers"
    /// (§9.7.19.6); with only `.maxntid` ptxas cannot determine it and drops every
    /// `setmaxnreg` of the kernel (its info C7508, "'setmaxnreg' ignored; unable to determine
    /// register count at entry"; no `USETMAXREG` in the SASS: seen with ptxas 13 on every
    /// warp-specialised kernel, 2026-12-02). With one CTA per SM ptxas can size the count at
    /// entry from the register file and the CTA's threads, and the warpgroups' counts move
    /// within it (`tirx check` prints the count ptxas chose). A `.maxnreg` cap would also
    /// determine it, but caps every warp at that count, defeating the `.inc`.
    fn register_cap(&self, out: &mut String) -> Result<(), PtxError> {
        if self.setmaxnreg {
            writeln!(out, ".minnctapersm 1")?;
        }
        Ok(())
    }

    /// `.reg` lines for the variables the body mentions, in arena order, then the loop
    /// predicates in print order (PTX ISA §5.1.1). Integers are declared with bit-size types
    /// (`.b32`, `.b64`): typed instructions accept same-size bit-size registers (§5.2.2), while
    /// some instructions (`tcgen05.mma` operands, for one) reject `.u32` registers.
    fn declarations(&self, out: &mut String) -> Result<(), PtxError> {
        for (h, var) in self.kernel.vars.iter() {
            if self.used[h.index()] {
                let ty = match var.ty {
                    tirx_ir::ScalarType::U32 | tirx_ir::ScalarType::S32 => "b32",
                    tirx_ir::ScalarType::U64 => "b64",
                    other => other.name(),
                };
                writeln!(out, "\t.reg .{ty} {};", self.namer.name(h)?)?;
            }
        }
        for pred in &self.loop_preds {
            writeln!(out, "\t.reg .pred {pred};")?;
        }
        Ok(())
    }

    fn block(&mut self, block: &Block) -> Result<(), PtxError> {
        block.iter().try_for_each(|stmt| self.stmt(stmt))
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<(), PtxError> {
        self.marks.push((self.body.len(), stmt.span));
        match &stmt.kind {
            StmtKind::Inst(inst) => self.inst(inst),
            StmtKind::Let { var, value } | StmtKind::Assign { var, value } => {
                self.mov(*var, value, stmt.span)
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => self.if_else(cond, then_body, else_body, stmt.span),
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
            } => self.for_loop(*var, [start, end, step], body, stmt.span),
            StmtKind::Loop { body, until } => self.spin_loop(body, *until),
            StmtKind::Scope { scope, .. } => Err(PtxError::NotLowered {
                what: format!("scope `{scope:?}`{}", at(stmt.span)),
            }),
            StmtKind::Op(op) => Err(PtxError::NotLowered {
                what: format!("op `{}`{}", op_name(op), at(stmt.span)),
            }),
        }
    }

    /// `[@guard ]opcode dsts…, srcs…;`
    fn inst(&mut self, inst: &Inst) -> Result<(), PtxError> {
        if inst.opcode == tirx_ir::inst::TIRX_CHECK {
            // A note for the emulator, not an instruction: a comment (PTX ISA §4.2) on the
            // line before the instruction it describes.
            let words = inst
                .srcs
                .iter()
                .map(|op| self.operand(op))
                .collect::<Result<Vec<_>, _>>()?;
            writeln!(self.body, "\t// {} {}", inst.opcode, words.join(" "))?;
            return Ok(());
        }
        self.setmaxnreg |= inst.opcode.starts_with("setmaxnreg.");
        let guard = match &inst.guard {
            None => String::new(),
            Some(g @ (Operand::Reg(v) | Operand::NotReg(v))) => {
                self.expect_ty(*v, ScalarType::Pred, "instruction guard")?;
                format!("@{} ", self.operand(g)?)
            }
            Some(other) => {
                return Err(PtxError::BadOperand {
                    what: format!("guard `{other:?}` of `{}`", inst.opcode),
                });
            }
        };
        let ops = inst
            .dsts
            .iter()
            .chain(&inst.srcs)
            .map(|op| self.operand(op))
            .collect::<Result<Vec<_>, _>>()?;
        let sep = if ops.is_empty() { "" } else { " " };
        writeln!(
            self.body,
            "\t{guard}{}{sep}{};",
            inst.opcode,
            ops.join(", ")
        )?;
        Ok(())
    }

    /// One operand as PTX text (PTX ISA §6.4, "Operand Types").
    fn operand(&mut self, op: &Operand) -> Result<String, PtxError> {
        Ok(match op {
            Operand::Reg(v) => self.reg(*v)?,
            Operand::NotReg(v) => {
                self.expect_ty(*v, ScalarType::Pred, "negated operand")?;
                format!("!{}", self.reg(*v)?)
            }
            Operand::Imm(v) => v.to_string(),
            Operand::F32Bits(bits) => f32_bits(*bits),
            Operand::Sym(s) => s.clone(),
            Operand::Mem(base, off) => {
                let base = self.operand(base)?;
                // PTX ISA §6.4.1: the address form is `[reg+imm]` with a signed `imm`; ptxas
                // 13.5 rejects `[reg-4]` with a syntax error, so a negative offset prints
                // as `[reg+-4]`.
                match off {
                    0 => format!("[{base}]"),
                    o => format!("[{base}+{o}]"),
                }
            }
            Operand::TensorMem(map, coords) => {
                format!("[{}, {}]", self.operand(map)?, self.vector(coords)?)
            }
            Operand::Vector(items) => self.vector(items)?,
            // `elect.sync %r|%p, …` and two-output `setp` (PTX ISA §9.7.13.12, §9.7.7.1).
            Operand::Pair(a, b) => format!("{}|{}", self.operand(a)?, self.operand(b)?),
        })
    }

    fn vector(&mut self, items: &[Operand]) -> Result<String, PtxError> {
        let items = items
            .iter()
            .map(|op| self.operand(op))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(format!("{{{}}}", items.join(", ")))
    }

    /// `Let`/`Assign` of an atom: `mov.<type of var> var, value;` (PTX ISA §9.7.9.1).
    fn mov(&mut self, var: Handle<Var>, value: &Expr, span: Span) -> Result<(), PtxError> {
        let ty = self.ty(var)?;
        let dst = self.reg(var)?;
        let src = self.atom(value, ty, span)?;
        writeln!(self.body, "\tmov.{} {dst}, {src};", ty.name())?;
        Ok(())
    }

    /// Structured `If` as a forward branch around each arm (PTX ISA §9.7.13.4, `bra`).
    fn if_else(
        &mut self,
        cond: &Expr,
        then_body: &Block,
        else_body: &Block,
        span: Span,
    ) -> Result<(), PtxError> {
        let (name, negated) = match self.cond(cond, span)? {
            Cond::Const(taken) => return self.block(if taken { then_body } else { else_body }),
            Cond::Reg { name, negated } => (name, negated),
        };
        let n = self.next_label();
        // Branch past the then-arm when the condition is false.
        let skip_guard = if negated { "@" } else { "@!" };
        let skip_to = if else_body.is_empty() { "end" } else { "else" };
        writeln!(self.body, "\t{skip_guard}{name} bra $L_{skip_to}_{n};")?;
        self.block(then_body)?;
        if !else_body.is_empty() {
            writeln!(self.body, "\tbra.uni $L_end_{n};")?;
            writeln!(self.body, "$L_else_{n}:")?;
            self.block(else_body)?;
        }
        writeln!(self.body, "$L_end_{n}:")?;
        Ok(())
    }

    /// Counted loop: `var = start; while var < end { body; var += step }`. Tested at the top,
    /// or at the bottom when it issues wgmmas and constant bounds say it runs at least once
    /// ([`issues_wgmma`], [`runs_once`]): ptxas then sees no path that skips it. On a path
    /// that skips a loop of `wgmma.mma_async`, the `wgmma.commit_group` after it commits an
    /// empty group; ptxas fills it with a dummy MMA behind a warpgroup arrive of its own, and
    /// where it cannot prove the warps converged there (no `.aligned` instruction since a
    /// branch on `%tid`, as in the decode kernels without `setmaxnreg`) it serialises every
    /// wgmma of the kernel (its C7519, issue #31). Other loops keep the test at the top:
    /// rotating every constant loop moved ptxas's register allocation elsewhere (8–32 spilled
    /// bytes in `attention_sm90_decode_gqa`'s `w2` configs and `attention_sm100`'s
    /// `fa4_d192_128`, ptxas 13).
    fn for_loop(
        &mut self,
        var: Handle<Var>,
        [start, end, step]: [&Expr; 3],
        body: &Block,
        span: Span,
    ) -> Result<(), PtxError> {
        let ty = self.ty(var)?;
        if !matches!(ty, ScalarType::U32 | ScalarType::S32 | ScalarType::U64) {
            return Err(self.mismatch(var, "loop counter", "u32, s32 or u64"));
        }
        let iv = self.reg(var)?;
        let bottom = runs_once(start, end, ty) && issues_wgmma(body);
        let (start, end, step) = (
            self.atom(start, ty, span)?,
            self.atom(end, ty, span)?,
            self.atom(step, ty, span)?,
        );
        let n = self.next_label();
        let pred = Namer::loop_pred(n);
        self.loop_preds.push(pred.clone());
        let t = ty.name();
        writeln!(self.body, "\tmov.{t} {iv}, {start};")?;
        writeln!(self.body, "$L_for_{n}:")?;
        if !bottom {
            writeln!(self.body, "\tsetp.lt.{t} {pred}, {iv}, {end};")?;
            writeln!(self.body, "\t@!{pred} bra $L_for_end_{n};")?;
        }
        self.block(body)?;
        writeln!(self.body, "\tadd.{t} {iv}, {iv}, {step};")?;
        if bottom {
            writeln!(self.body, "\tsetp.lt.{t} {pred}, {iv}, {end};")?;
            writeln!(self.body, "\t@{pred} bra $L_for_{n};")?;
        } else {
            writeln!(self.body, "\tbra.uni $L_for_{n};")?;
        }
        writeln!(self.body, "$L_for_end_{n}:")?;
        Ok(())
    }

    /// Spin loop, tested at the bottom: repeat `body` until `until` holds.
    fn spin_loop(&mut self, body: &Block, until: Handle<Var>) -> Result<(), PtxError> {
        self.expect_ty(until, ScalarType::Pred, "loop exit condition")?;
        let pred = self.reg(until)?;
        let n = self.next_label();
        writeln!(self.body, "$L_loop_{n}:")?;
        self.block(body)?;
        writeln!(self.body, "\t@!{pred} bra $L_loop_{n};")?;
        Ok(())
    }

    /// Folds `Not`s around a predicate variable or constant.
    fn cond(&mut self, cond: &Expr, span: Span) -> Result<Cond, PtxError> {
        Ok(match cond {
            Expr::Imm(v, _) => Cond::Const(*v != 0),
            Expr::Var(v) => {
                self.expect_ty(*v, ScalarType::Pred, "if condition")?;
                Cond::Reg {
                    name: self.reg(*v)?,
                    negated: false,
                }
            }
            Expr::Not(inner) => match self.cond(inner, span)? {
                Cond::Const(b) => Cond::Const(!b),
                Cond::Reg { name, negated } => Cond::Reg {
                    name,
                    negated: !negated,
                },
            },
            other => return Err(not_atom(other, span)),
        })
    }

    /// An atom as a source operand of an instruction typed `ty`.
    fn atom(&mut self, value: &Expr, ty: ScalarType, span: Span) -> Result<String, PtxError> {
        match value {
            Expr::Imm(v, _) if ty == ScalarType::F32 => Ok(f32_bits((*v as f32).to_bits())),
            Expr::Imm(v, _) => Ok(v.to_string()),
            Expr::Var(v) => {
                let found = self.ty(*v)?;
                let same_width_int = matches!(
                    (found, ty),
                    (ScalarType::U32, ScalarType::S32) | (ScalarType::S32, ScalarType::U32)
                );
                if found != ty && !same_width_int {
                    return Err(self.mismatch(*v, "operand", ty.name()));
                }
                self.reg(*v)
            }
            other => Err(not_atom(other, span)),
        }
    }

    /// A variable's register name; records that the body uses it.
    fn reg(&mut self, var: Handle<Var>) -> Result<String, PtxError> {
        let name = self.namer.name(var)?.to_owned();
        self.used[var.index()] = true;
        Ok(name)
    }

    fn ty(&self, var: Handle<Var>) -> Result<ScalarType, PtxError> {
        if !self.kernel.vars.contains(var) {
            return Err(PtxError::UnknownVar { index: var.index() });
        }
        Ok(self.kernel.vars[var].ty)
    }

    fn expect_ty(
        &self,
        var: Handle<Var>,
        expected: ScalarType,
        what: &str,
    ) -> Result<(), PtxError> {
        if self.ty(var)? == expected {
            Ok(())
        } else {
            Err(self.mismatch(var, what, expected.name()))
        }
    }

    fn mismatch(&self, var: Handle<Var>, what: &str, expected: &'static str) -> PtxError {
        PtxError::TypeMismatch {
            what: what.to_owned(),
            index: var.index(),
            found: self.kernel.vars[var].ty.name(),
            expected,
        }
    }

    fn next_label(&mut self) -> u32 {
        let n = self.next_label;
        self.next_label += 1;
        n
    }
}

/// A kernel parameter declaration, with the size and alignment the ABI gives
/// (PTX ISA §5.1.6.1, kernel parameters).
fn param_decl(sig: &tirx_ir::abi::Signature, param: &AbiParam) -> String {
    let name = param.ptx_name();
    match param {
        AbiParam::TensorMap { .. } => {
            let (size, align) = param.size_align(sig);
            format!(".param .align {align} .b8 {name}[{size}]")
        }
        AbiParam::Pointer { .. } | AbiParam::Stride { .. } => format!(".param .u64 {name}"),
        AbiParam::Dim { .. } => format!(".param .u32 {name}"),
        AbiParam::Scalar { name: s } => match sig.int_scalar(s) {
            Some(tirx_ir::abi::ElemType::I32) => format!(".param .s32 {name}"),
            Some(tirx_ir::abi::ElemType::I64) => format!(".param .s64 {name}"),
            Some(tirx_ir::abi::ElemType::U64) => format!(".param .u64 {name}"),
            Some(_) => format!(".param .u32 {name}"),
            None => format!(".param .f32 {name}"),
        },
    }
}

/// Whether a counted loop's constant bounds say its body runs at least once: `start < end`,
/// compared as the counter's type compares them (unsigned for `u32`/`u64`).
fn runs_once(start: &Expr, end: &Expr, ty: ScalarType) -> bool {
    match (start, end) {
        (Expr::Imm(s, _), Expr::Imm(e, _)) if ty == ScalarType::S32 => s < e,
        (Expr::Imm(s, _), Expr::Imm(e, _)) => (*s as u64) < (*e as u64),
        _ => false,
    }
}

/// Whether a block issues a `wgmma.mma_async` (PTX ISA §9.7.15.5.2), at any depth.
fn issues_wgmma(block: &Block) -> bool {
    block.iter().any(|stmt| match &stmt.kind {
        StmtKind::Inst(inst) => inst.opcode.starts_with("wgmma.mma_async"),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => issues_wgmma(then_body) || issues_wgmma(else_body),
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => issues_wgmma(body),
        _ => false,
    })
}

/// A 32-bit float literal by its bits (`0f3F800000`, PTX ISA §4.5.1).
fn f32_bits(bits: u32) -> String {
    format!("0f{bits:08X}")
}

/// ` at span N`, or nothing for compiler-made nodes.
fn at(span: Span) -> String {
    if span == Span::NONE {
        String::new()
    } else {
        format!(" at span {}", span.0)
    }
}

fn not_atom(expr: &Expr, span: Span) -> PtxError {
    PtxError::NotLowered {
        what: format!("expression `{expr:?}`{}", at(span)),
    }
}

/// The variant name of an op (`MbarInit`), without its fields.
fn op_name(op: &Op) -> String {
    let debug = format!("{op:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests;
