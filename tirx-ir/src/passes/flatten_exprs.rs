//! flatten-exprs — expressions become instructions on atoms (Thread → Ptx).
//!
//! Phase: Thread → Ptx. Preconditions: no ops or scopes remain. Postconditions: every
//! expression is an atom (variable or immediate); `Let`/`Assign` of a compound value writes
//! its last instruction straight into the variable; `If` conditions are predicate variables;
//! `For` bounds are evaluated once, before the loop.
//!
//! Special registers, shape parameters and the aligned shared-memory base are read once, in a
//! prologue at kernel entry (registers are function-wide in PTX, so one read serves every
//! use). Unsigned division and remainder by a power of two become shifts and masks. A
//! warpgroup's index (`%tid.x / 2ⁿ`, n ≥ 7) is read there too and broadcast from lane 0
//! (`shfl.sync.idx`, §9.7.9.6), so ptxas knows it is warp-uniform and keeps the addresses and
//! wgmma descriptors computed from it in uniform registers (in `gemm_sm90_fp8_block`'s K loop
//! this removed 8 `R2UR` and 8 64-bit adds a K block). Not a warp's index (`warp_id`,
//! `%tid.x / 32`): broadcast, it made ptxas spill 280 bytes in a `tcgen05.ld`/`st` test
//! kernel (`tests/tmem_shapes.rs`), whose TMEM lane quarter it selects.
//! PTX used: §9.7.1 (integer arithmetic), §9.7.8 (logic and shift), §9.7.7.1 (setp),
//! §9.7.9.1 (mov), §10 (special registers `%tid`, `%ctaid`, `%nctaid`, `%laneid`,
//! `%cluster_ctarank`), §9.7.9.8 (ld.param).

use super::Pass;
use super::walk::{Rewriter, rewrite_body_with};
use crate::abi::AbiParam;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BinOp, Block, CmpOp, Expr, Inst, Kernel, Operand, Phase, ScalarType as T, Span, Special, Stmt,
    StmtKind, Var,
};
use std::collections::HashMap;

/// The pass.
pub struct FlattenExprs;

struct Flat {
    pre: Vec<Stmt>,
    specials: HashMap<&'static str, Handle<Var>>,
    dims: HashMap<String, Handle<Var>>,
    zero: Option<Handle<Var>>,
    /// `%tid.x >> shift` (shift ≥ 7: the same in every lane of a warp), by shift.
    uniform: HashMap<u32, Handle<Var>>,
}

/// The type of an expression.
pub fn type_of(k: &Kernel, e: &Expr) -> T {
    match e {
        Expr::Imm(_, t) => *t,
        Expr::Var(v) => k.vars[*v].ty,
        Expr::Dim(_) | Expr::Special(_) => T::U32,
        Expr::Bin(_, a, b) => match (&**a, type_of(k, a)) {
            (Expr::Imm(..), _) => type_of(k, b),
            (_, t) => t,
        },
        Expr::Cmp(..) | Expr::Not(_) | Expr::AndP(..) => T::Pred,
    }
}

fn bin_opcode(op: BinOp, t: T) -> String {
    let (s, b) = match t {
        T::U32 => ("u32", "b32"),
        T::S32 => ("s32", "b32"),
        T::U64 => ("u64", "b64"),
        T::S64 => ("s64", "b64"),
        T::F32 => ("f32", "b32"),
        T::B8 => ("b8", "b8"),
        T::B16 => ("u16", "b16"),
        T::Pred => ("pred", "pred"),
        T::B128 => ("b128", "b128"),
    };
    match op {
        BinOp::Add => format!("add.{s}"),
        BinOp::Sub => format!("sub.{s}"),
        BinOp::Mul if t == T::F32 => "mul.f32".into(),
        BinOp::Mul => format!("mul.lo.{s}"),
        BinOp::Div if t == T::F32 => "div.rn.f32".into(),
        BinOp::Div => format!("div.{s}"),
        BinOp::Rem => format!("rem.{s}"),
        BinOp::And => format!("and.{b}"),
        BinOp::Or => format!("or.{b}"),
        BinOp::Xor => format!("xor.{b}"),
        BinOp::Shl => format!("shl.{b}"),
        BinOp::Shr => format!("shr.{s}"),
        BinOp::Min => format!("min.{s}"),
        BinOp::Max => format!("max.{s}"),
        BinOp::CeilDiv => unreachable!("expanded before"),
    }
}

fn cmp_name(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

fn special_src(s: Special) -> &'static str {
    match s {
        Special::TidX => "%tid.x",
        Special::CtaId(0) => "%ctaid.x",
        Special::CtaId(1) => "%ctaid.y",
        Special::CtaId(_) => "%ctaid.z",
        Special::NCtaId(0) => "%nctaid.x",
        Special::NCtaId(1) => "%nctaid.y",
        Special::NCtaId(_) => "%nctaid.z",
        Special::ClusterCtaRank => "%cluster_ctarank",
        Special::LaneId => "%laneid",
        Special::WarpId | Special::SmemBase => "",
    }
}

impl Flat {
    fn pre_inst(&mut self, i: Inst) {
        self.pre.push(Stmt::new(StmtKind::Inst(i)));
    }
    fn special(&mut self, k: &mut Kernel, s: Special) -> Handle<Var> {
        if let Some(v) = self.specials.get(s.name()) {
            return *v;
        }
        let v = k.new_var(s.name(), T::U32);
        match s {
            Special::WarpId => {
                let tid = self.special(k, Special::TidX);
                self.pre_inst(Inst::binary("shr.u32", v, reg(tid), Operand::Imm(5)));
            }
            Special::SmemBase => {
                self.pre_inst(Inst::mov("u32", v, Operand::Sym("tirx_smem".into())));
                self.pre_inst(Inst::binary("add.u32", v, reg(v), Operand::Imm(1023)));
                self.pre_inst(Inst::binary("and.b32", v, reg(v), Operand::Imm(-1024)));
            }
            other => self.pre_inst(Inst::mov("u32", v, Operand::Sym(special_src(other).into()))),
        }
        self.specials.insert(s.name(), v);
        v
    }
    /// `%tid.x >> shift` for `shift ≥ 7` (a warpgroup's index or coarser), read in the
    /// prologue: a value the same in every lane of a warp, broadcast from lane 0 with
    /// `shfl.sync.idx` so that ptxas knows it and keeps what is computed from it (a
    /// warpgroup's shared-memory offsets, its wgmma descriptors) in uniform registers. At
    /// kernel entry every lane of every warp is present (a CTA of whole warps; otherwise the
    /// plain shift).
    fn warp_uniform(&mut self, k: &mut Kernel, shift: u32) -> Handle<Var> {
        if let Some(v) = self.uniform.get(&shift) {
            return *v;
        }
        let tid = self.special(k, Special::TidX);
        let s = k.new_var("tid_shr", T::U32);
        self.pre_inst(Inst::binary(
            "shr.u32",
            s,
            reg(tid),
            Operand::Imm(shift as i64),
        ));
        let v = if k.sig.threads.is_multiple_of(32) {
            let v = k.new_var("warp_uniform", T::U32);
            self.pre_inst(Inst::shfl_idx0(v, s));
            v
        } else {
            s
        };
        self.uniform.insert(shift, v);
        v
    }
    fn dim(&mut self, k: &mut Kernel, sym: &str) -> Handle<Var> {
        if let Some(v) = self.dims.get(sym) {
            return *v;
        }
        // An integer scalar argument reads its own parameter (`p_s_<name>`, its 32 bits).
        let p = match k.sig.int_scalar(sym) {
            Some(_) => AbiParam::Scalar { name: sym.into() },
            None => AbiParam::Dim { symbol: sym.into() },
        };
        let name = p.ptx_name();
        if !k.sig.params.contains(&p) {
            k.sig.params.push(p);
        }
        let v = k.new_var(sym, T::U32);
        self.pre_inst(Inst::ld_param("u32", v, &name));
        self.dims.insert(sym.into(), v);
        v
    }
    fn pred_imm(&mut self, k: &mut Kernel, out: &mut Block, d: Handle<Var>, value: bool) {
        let z = match self.zero {
            Some(z) => z,
            None => {
                let z = k.new_var("zero", T::U32);
                self.pre_inst(Inst::mov("u32", z, Operand::Imm(0)));
                self.zero = Some(z);
                z
            }
        };
        let cmp = if value { "eq" } else { "ne" };
        out.push(Stmt::new(StmtKind::Inst(Inst::setp(
            cmp,
            "u32",
            d,
            reg(z),
            Operand::Imm(0),
        ))));
    }
    /// An operand holding `e`.
    fn atom(&mut self, k: &mut Kernel, out: &mut Block, e: &Expr) -> Operand {
        match e {
            Expr::Imm(v, t) if *t != T::Pred => Operand::Imm(*v),
            Expr::Var(v) => reg(*v),
            Expr::Special(s) => reg(self.special(k, *s)),
            Expr::Dim(s) => reg(self.dim(k, s)),
            e => {
                let ty = type_of(k, e);
                let d = k.new_var("t", ty);
                self.emit_into(k, out, d, e);
                reg(d)
            }
        }
    }
    /// Emits instructions computing `e` into `d`.
    fn emit_into(&mut self, k: &mut Kernel, out: &mut Block, d: Handle<Var>, e: &Expr) {
        let ty = k.vars[d].ty;
        let push = |out: &mut Block, i: Inst| out.push(Stmt::new(StmtKind::Inst(i)));
        match e {
            Expr::Imm(v, T::Pred) => self.pred_imm(k, out, d, *v != 0),
            Expr::Imm(..) | Expr::Var(_) | Expr::Special(_) | Expr::Dim(_) => {
                let a = self.atom(k, out, e);
                let value = match a {
                    Operand::Reg(v) => Expr::Var(v),
                    Operand::Imm(v) => Expr::Imm(v, ty),
                    _ => unreachable!("atoms are registers or immediates"),
                };
                out.push(Stmt::new(StmtKind::Let { var: d, value }));
            }
            Expr::Bin(BinOp::CeilDiv, a, b) => {
                let t = type_of(k, a);
                let sum = Expr::bin(
                    BinOp::Sub,
                    Expr::bin(BinOp::Add, (**a).clone(), (**b).clone()),
                    Expr::Imm(1, t),
                );
                self.emit_into(k, out, d, &Expr::bin(BinOp::Div, sum, (**b).clone()));
            }
            // A warpgroup's index: the prologue's broadcast value.
            Expr::Bin(BinOp::Div, a, b)
                if matches!(**a, Expr::Special(Special::TidX))
                    && matches!(**b, Expr::Imm(v, _) if v >= 128 && (v as u64).is_power_of_two())
                    && ty == T::U32 =>
            {
                let Expr::Imm(v, _) = **b else { unreachable!() };
                let w = self.warp_uniform(k, v.trailing_zeros());
                out.push(Stmt::new(StmtKind::Let {
                    var: d,
                    value: Expr::Var(w),
                }));
            }
            Expr::Bin(op @ (BinOp::Div | BinOp::Rem), a, b)
                if matches!(**b, Expr::Imm(v, _) if v > 0 && (v as u64).is_power_of_two())
                    && ty != T::S32
                    && ty != T::F32 =>
            {
                let Expr::Imm(v, _) = **b else { unreachable!() };
                let x = self.atom(k, out, a);
                let (opc, imm) = match op {
                    BinOp::Div => (bin_opcode(BinOp::Shr, ty), v.trailing_zeros() as i64),
                    _ => (bin_opcode(BinOp::And, ty), v - 1),
                };
                push(out, Inst::binary(&opc, d, x, Operand::Imm(imm)));
            }
            Expr::Bin(op, a, b) => {
                let t = type_of(k, e);
                let (x, y) = (self.atom(k, out, a), self.atom(k, out, b));
                push(out, Inst::binary(&bin_opcode(*op, t), d, x, y));
            }
            Expr::Cmp(c, a, b) => {
                let t = type_of(k, a);
                let t = if t == T::Pred { T::U32 } else { t };
                let (x, y) = (self.atom(k, out, a), self.atom(k, out, b));
                push(out, Inst::setp(cmp_name(*c), t.name(), d, x, y));
            }
            Expr::Not(a) => {
                let x = self.atom(k, out, a);
                push(
                    out,
                    Inst {
                        opcode: "not.pred".into(),
                        dsts: vec![reg(d)],
                        srcs: vec![x],
                        guard: None,
                    },
                );
            }
            Expr::AndP(a, b) => {
                let (x, y) = (self.atom(k, out, a), self.atom(k, out, b));
                push(out, Inst::binary("and.pred", d, x, y));
            }
        }
    }
    fn var_of(&mut self, k: &mut Kernel, out: &mut Block, e: &Expr, ty: T) -> Handle<Var> {
        match self.atom(k, out, e) {
            Operand::Reg(v) => v,
            Operand::Imm(v) => {
                let d = k.new_var("c", ty);
                out.push(Stmt::new(StmtKind::Let {
                    var: d,
                    value: Expr::Imm(v, ty),
                }));
                d
            }
            _ => unreachable!("atoms are registers or immediates"),
        }
    }
    fn atom_expr(&mut self, k: &mut Kernel, out: &mut Block, e: &Expr) -> Expr {
        match self.atom(k, out, e) {
            Operand::Reg(v) => Expr::Var(v),
            Operand::Imm(v) => Expr::Imm(v, type_of(k, e)),
            _ => unreachable!("atoms are registers or immediates"),
        }
    }
}

/// Puts the statement's span on what flattening made for it (made with `Span::NONE`).
fn with_span(mut v: Vec<Stmt>, span: Span) -> Vec<Stmt> {
    for s in &mut v {
        if s.span == Span::NONE {
            s.span = span;
        }
    }
    v
}

impl Rewriter for Flat {
    /// An `if` condition or `for` bounds are computed before the statement (and before its
    /// nested blocks, so their variables come first).
    fn enter_stmt(&mut self, k: &mut Kernel, s: &mut Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        let mut out = Vec::new();
        match &mut s.kind {
            StmtKind::If { cond, .. } => {
                let p = self.var_of(k, &mut out, cond, T::Pred);
                *cond = Expr::Var(p);
            }
            StmtKind::For {
                start, end, step, ..
            } => {
                *start = self.atom_expr(k, &mut out, start);
                *end = self.atom_expr(k, &mut out, end);
                *step = self.atom_expr(k, &mut out, step);
            }
            _ => {}
        }
        Ok(with_span(out, s.span))
    }
    fn exit_stmt(&mut self, k: &mut Kernel, s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        match s.kind {
            StmtKind::Let { var, value } | StmtKind::Assign { var, value } => {
                let mut out = Vec::new();
                self.emit_into(k, &mut out, var, &value);
                Ok(with_span(out, s.span))
            }
            _ => Ok(vec![s]),
        }
    }
}

impl Pass for FlattenExprs {
    fn name(&self) -> &'static str {
        "flatten-exprs"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut f = Flat {
            pre: Vec::new(),
            specials: HashMap::new(),
            dims: HashMap::new(),
            zero: None,
            uniform: HashMap::new(),
        };
        rewrite_body_with(k, &mut f)?;
        let body = std::mem::take(&mut k.body);
        k.body = f.pre.into_iter().chain(body).collect();
        k.phase = Phase::Ptx;
        Ok(())
    }
}
