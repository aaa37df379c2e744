//! flatten-exprs — expressions become instructions on atoms (Thread → Ptx).
//!
//! Phase: Thread → Ptx. Preconditions: no ops or scopes remain. Postconditions: every
//! expression is an atom (variable or immediate); `Let`/`Assign` of a compound value writes
//! its last instruction straight into the variable; `If` conditions are predicate variables;
//! `For` bounds are evaluated once, before the loop.
//!
//! Special registers, shape parameters and the aligned shared-memory base are read once, in a
//! prologue at kernel entry (registers are function-wide in PTX, so one read serves every
//! use). Unsigned division and remainder by a power of two become shifts and masks.
//! PTX used: §9.7.1 (integer arithmetic), §9.7.8 (logic and shift), §9.7.7.1 (setp),
//! §9.7.9.1 (mov), §10 (special registers `%tid`, `%ctaid`, `%nctaid`, `%laneid`,
//! `%cluster_ctarank`), §9.7.9.8 (ld.param).

use super::Pass;
use crate::abi::AbiParam;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BinOp, Block, CmpOp, Expr, Inst, Kernel, Operand, Phase, ScalarType as T, Special, Stmt,
    StmtKind, Var,
};
use std::collections::HashMap;

/// The pass.
pub struct FlattenExprs;

struct Flat<'k> {
    k: &'k mut Kernel,
    pre: Vec<Stmt>,
    specials: HashMap<&'static str, Handle<Var>>,
    dims: HashMap<String, Handle<Var>>,
    zero: Option<Handle<Var>>,
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
        T::F32 => ("f32", "b32"),
        T::B16 => ("u16", "b16"),
        T::Pred => ("pred", "pred"),
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

impl Flat<'_> {
    fn pre_inst(&mut self, i: Inst) {
        self.pre.push(Stmt::new(StmtKind::Inst(i)));
    }
    fn special(&mut self, s: Special) -> Handle<Var> {
        if let Some(v) = self.specials.get(s.name()) {
            return *v;
        }
        let v = self.k.new_var(s.name(), T::U32);
        match s {
            Special::WarpId => {
                let tid = self.special(Special::TidX);
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
    fn dim(&mut self, sym: &str) -> Handle<Var> {
        if let Some(v) = self.dims.get(sym) {
            return *v;
        }
        let p = AbiParam::Dim { symbol: sym.into() };
        let name = p.ptx_name();
        if !self.k.sig.params.contains(&p) {
            self.k.sig.params.push(p);
        }
        let v = self.k.new_var(sym, T::U32);
        self.pre_inst(Inst::ld_param("u32", v, &name));
        self.dims.insert(sym.into(), v);
        v
    }
    fn pred_imm(&mut self, out: &mut Block, d: Handle<Var>, value: bool) {
        let z = match self.zero {
            Some(z) => z,
            None => {
                let z = self.k.new_var("zero", T::U32);
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
    fn atom(&mut self, out: &mut Block, e: &Expr) -> Operand {
        match e {
            Expr::Imm(v, t) if *t != T::Pred => Operand::Imm(*v),
            Expr::Var(v) => reg(*v),
            Expr::Special(s) => reg(self.special(*s)),
            Expr::Dim(s) => reg(self.dim(s)),
            e => {
                let ty = type_of(self.k, e);
                let d = self.k.new_var("t", ty);
                self.emit_into(out, d, e);
                reg(d)
            }
        }
    }
    /// Emits instructions computing `e` into `d`.
    fn emit_into(&mut self, out: &mut Block, d: Handle<Var>, e: &Expr) {
        let ty = self.k.vars[d].ty;
        let push = |out: &mut Block, i: Inst| out.push(Stmt::new(StmtKind::Inst(i)));
        match e {
            Expr::Imm(v, T::Pred) => self.pred_imm(out, d, *v != 0),
            Expr::Imm(..) | Expr::Var(_) | Expr::Special(_) | Expr::Dim(_) => {
                let a = self.atom(out, e);
                let value = match a {
                    Operand::Reg(v) => Expr::Var(v),
                    Operand::Imm(v) => Expr::Imm(v, ty),
                    _ => unreachable!("atoms are registers or immediates"),
                };
                out.push(Stmt::new(StmtKind::Let { var: d, value }));
            }
            Expr::Bin(BinOp::CeilDiv, a, b) => {
                let t = type_of(self.k, a);
                let sum = Expr::bin(
                    BinOp::Sub,
                    Expr::bin(BinOp::Add, (**a).clone(), (**b).clone()),
                    Expr::Imm(1, t),
                );
                self.emit_into(out, d, &Expr::bin(BinOp::Div, sum, (**b).clone()));
            }
            Expr::Bin(op @ (BinOp::Div | BinOp::Rem), a, b)
                if matches!(**b, Expr::Imm(v, _) if v > 0 && (v as u64).is_power_of_two())
                    && ty != T::S32
                    && ty != T::F32 =>
            {
                let Expr::Imm(v, _) = **b else { unreachable!() };
                let x = self.atom(out, a);
                let (opc, imm) = match op {
                    BinOp::Div => (bin_opcode(BinOp::Shr, ty), v.trailing_zeros() as i64),
                    _ => (bin_opcode(BinOp::And, ty), v - 1),
                };
                push(out, Inst::binary(&opc, d, x, Operand::Imm(imm)));
            }
            Expr::Bin(op, a, b) => {
                let t = type_of(self.k, e);
                let (x, y) = (self.atom(out, a), self.atom(out, b));
                push(out, Inst::binary(&bin_opcode(*op, t), d, x, y));
            }
            Expr::Cmp(c, a, b) => {
                let t = type_of(self.k, a);
                let t = if t == T::Pred { T::U32 } else { t };
                let (x, y) = (self.atom(out, a), self.atom(out, b));
                push(out, Inst::setp(cmp_name(*c), t.name(), d, x, y));
            }
            Expr::Not(a) => {
                let x = self.atom(out, a);
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
                let (x, y) = (self.atom(out, a), self.atom(out, b));
                push(out, Inst::binary("and.pred", d, x, y));
            }
        }
    }
    fn var_of(&mut self, out: &mut Block, e: &Expr, ty: T) -> Handle<Var> {
        match self.atom(out, e) {
            Operand::Reg(v) => v,
            Operand::Imm(v) => {
                let d = self.k.new_var("c", ty);
                out.push(Stmt::new(StmtKind::Let {
                    var: d,
                    value: Expr::Imm(v, ty),
                }));
                d
            }
            _ => unreachable!("atoms are registers or immediates"),
        }
    }
    fn atom_expr(&mut self, out: &mut Block, e: &Expr) -> Expr {
        match self.atom(out, e) {
            Operand::Reg(v) => Expr::Var(v),
            Operand::Imm(v) => Expr::Imm(v, type_of(self.k, e)),
            _ => unreachable!("atoms are registers or immediates"),
        }
    }
    fn block(&mut self, block: Block) -> Block {
        let mut out = Vec::with_capacity(block.len());
        for s in block {
            let span = s.span;
            let start = out.len();
            match s.kind {
                StmtKind::Let { var, value } | StmtKind::Assign { var, value } => {
                    self.emit_into(&mut out, var, &value)
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let p = self.var_of(&mut out, &cond, T::Pred);
                    let (t, e) = (self.block(then_body), self.block(else_body));
                    out.push(Stmt::new(StmtKind::If {
                        cond: Expr::Var(p),
                        then_body: t,
                        else_body: e,
                    }));
                }
                StmtKind::For {
                    var,
                    start: a,
                    end,
                    step,
                    body,
                } => {
                    let (a, end, step) = (
                        self.atom_expr(&mut out, &a),
                        self.atom_expr(&mut out, &end),
                        self.atom_expr(&mut out, &step),
                    );
                    let body = self.block(body);
                    out.push(Stmt::new(StmtKind::For {
                        var,
                        start: a,
                        end,
                        step,
                        body,
                    }));
                }
                StmtKind::Loop { body, until } => {
                    let body = self.block(body);
                    out.push(Stmt::new(StmtKind::Loop { body, until }));
                }
                kind @ (StmtKind::Inst(_) | StmtKind::Scope { .. } | StmtKind::Op(_)) => {
                    out.push(Stmt::new(kind))
                }
            }
            for s in &mut out[start..] {
                if s.span == crate::ir::Span::NONE {
                    s.span = span;
                }
            }
        }
        out
    }
}

impl Pass for FlattenExprs {
    fn name(&self) -> &'static str {
        "flatten-exprs"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let body = std::mem::take(&mut k.body);
        let mut f = Flat {
            k,
            pre: Vec::new(),
            specials: HashMap::new(),
            dims: HashMap::new(),
            zero: None,
        };
        let body = f.block(body);
        let pre = std::mem::take(&mut f.pre);
        k.body = pre.into_iter().chain(body).collect();
        k.phase = Phase::Ptx;
        Ok(())
    }
}
