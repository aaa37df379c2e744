//! From a parsed [`Instr`] to an executable [`Inst`]: the instruction's name picks the
//! behaviour, its modifiers the type, rounding and variant (PTX ISA §9.7, one section per
//! name, cited on each [`Op`] variant).
//!
//! Anything outside the subset is [`SimError::Unsupported`] with the opcode and line, with
//! the reason: every name or modifier combination not listed here (`memory.rs` for memory,
//! barriers, atomics and cluster launch control; `mma.rs` for wgmma and tcgen05).

mod memory;
mod mma;

use super::diag::SimError;
use super::float::Rnd;
use super::ops::*;
use super::program::{Addr, Collective, Inst, Reg, Symbols, Val};
use crate::ptx::{Instr, Operand, Type};

/// What the decoder reads from one instruction.
pub(super) struct Cx<'a> {
    i: &'a Instr,
    syms: &'a Symbols,
    text: String,
}

impl Cx<'_> {
    pub(super) fn err(&self, reason: impl Into<String>) -> SimError {
        SimError::Unsupported {
            line: self.i.line,
            instr: self.text.clone(),
            reason: reason.into(),
        }
    }
    pub(super) fn has(&self, m: &str) -> bool {
        self.i.opcode.has(m)
    }
    pub(super) fn n(&self, want: usize) -> Result<(), SimError> {
        if self.i.operands.len() == want {
            Ok(())
        } else {
            Err(self.err(format!(
                "expected {want} operands, found {}",
                self.i.operands.len()
            )))
        }
    }
    pub(super) fn op(&self, k: usize) -> Result<&Operand, SimError> {
        self.i
            .operands
            .get(k)
            .ok_or_else(|| self.err(format!("missing operand {k}")))
    }
    pub(super) fn val(&self, k: usize) -> Result<Val, SimError> {
        self.syms.val(self.op(k)?, self.i.line, &self.text)
    }
    pub(super) fn reg(&self, k: usize) -> Result<Reg, SimError> {
        self.syms
            .dst(self.op(k)?, self.i.line, &self.text)?
            .ok_or_else(|| self.err("the sink `_` is not allowed here"))
    }
    pub(super) fn dst(&self, k: usize) -> Result<Option<Reg>, SimError> {
        self.syms.dst(self.op(k)?, self.i.line, &self.text)
    }
    pub(super) fn addr(&self, k: usize) -> Result<Addr, SimError> {
        self.syms.addr(self.op(k)?, self.i.line, &self.text)
    }
    /// The type modifiers, in order.
    pub(super) fn types(&self) -> Vec<Type> {
        let m = &self.i.opcode.modifiers;
        m.iter().filter_map(|m| Type::from_name(m)).collect()
    }
    /// The last type modifier.
    pub(super) fn ty(&self) -> Result<Type, SimError> {
        self.types()
            .last()
            .copied()
            .ok_or_else(|| self.err("no type modifier"))
    }
    pub(super) fn rnd(&self) -> Option<Rnd> {
        self.i
            .opcode
            .modifiers
            .iter()
            .find_map(|m| rnd(m).map(|r| r.0))
    }
    /// A vector operand's elements, or the single operand.
    pub(super) fn list(&self, k: usize) -> Result<Vec<&Operand>, SimError> {
        Ok(match self.op(k)? {
            Operand::Vector(v) => v.iter().collect(),
            o => vec![o],
        })
    }
}

fn rnd(m: &str) -> Option<(Rnd, bool)> {
    Some(match m {
        "rn" => (Rnd::Rn, false),
        "rna" => (Rnd::Rna, false),
        "rz" => (Rnd::Rz, false),
        "rm" => (Rnd::Rm, false),
        "rp" => (Rnd::Rp, false),
        "rni" => (Rnd::Rn, true),
        "rzi" => (Rnd::Rz, true),
        "rmi" => (Rnd::Rm, true),
        "rpi" => (Rnd::Rp, true),
        _ => return None,
    })
}

/// Bits of a type in a register (`.pred` is one bit).
pub(crate) fn bits(ty: Type) -> u32 {
    if ty == Type::Pred {
        1
    } else {
        ty.size_bytes() * 8
    }
}

pub(crate) fn is_float(ty: Type) -> bool {
    matches!(ty, Type::F32 | Type::F64 | Type::F16 | Type::Bf16)
}

/// Decodes one instruction.
pub(crate) fn decode(i: &Instr, syms: &Symbols) -> Result<Inst, SimError> {
    let cx = Cx {
        i,
        syms,
        text: i.opcode.to_string(),
    };
    let guard = match &i.pred {
        Some(g) => Some((syms.reg(&g.reg, i.line, &cx.text)?, g.negated)),
        None => None,
    };
    let base = i.opcode.base.as_str();
    let mut collective = if cx.has("aligned") && !base.starts_with("bar") {
        Collective::Warp
    } else {
        Collective::No
    };
    let op = match base {
        "mov" => mov(&cx)?,
        "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" | "and" | "or"
        | "xor" | "shl" | "shr" => binary(&cx)?,
        "not" | "cnot" | "neg" | "abs" | "popc" | "clz" | "brev" | "rcp" | "sqrt" | "rsqrt"
        | "ex2" | "lg2" | "tanh" | "sin" | "cos" => unary(&cx)?,
        "setp" => setp(&cx)?,
        "selp" => {
            cx.n(4)?;
            let (c, c_neg) = pred_operand(&cx, 3)?;
            Op::Selp {
                bits: bits(cx.ty()?),
                d: cx.reg(0)?,
                a: cx.val(1)?,
                b: cx.val(2)?,
                c,
                c_neg,
            }
        }
        "cvt" => cvt(&cx)?,
        "cvta" => {
            cx.n(2)?;
            let space = if cx.has("shared") || cx.has("shared::cta") {
                MemSpace::SharedCta
            } else if cx.has("param") {
                MemSpace::Param
            } else if cx.has("global") {
                MemSpace::Global
            } else {
                return Err(cx.err("cvta of this state space"));
            };
            Op::Cvta {
                to_generic: !cx.has("to"),
                space,
                d: cx.reg(0)?,
                a: cx.val(1)?,
            }
        }
        "ld" | "ld.global.nc" | "st" => memory::ld_st(&cx)?,
        "atom" | "red" => memory::atom(&cx)?,
        "ldmatrix" | "stmatrix" => memory::matrix(&cx)?,
        "st.async" => memory::st_async(&cx)?,
        "clusterlaunchcontrol.try_cancel" => memory::clc_try_cancel(&cx)?,
        "clusterlaunchcontrol.query_cancel" => memory::clc_query(&cx)?,
        "bra" => {
            cx.n(1)?;
            let Operand::Sym(l) = cx.op(0)? else {
                return Err(cx.err("branch target is not a label"));
            };
            let target = syms
                .label(l)
                .ok_or_else(|| cx.err(format!("unknown label `{l}`")))?;
            Op::Bra { target }
        }
        "ret" | "exit" => Op::Exit,
        "bar" | "barrier" => memory::bar(&cx)?,
        "barrier.cluster" => {
            if cx.has("arrive") {
                Op::ClusterArrive
            } else if cx.has("wait") {
                Op::ClusterWait
            } else {
                return Err(cx.err("barrier.cluster needs .arrive or .wait"));
            }
        }
        "mbarrier.init" => {
            cx.n(2)?;
            Op::MbarInit {
                addr: cx.addr(0)?,
                count: cx.val(1)?,
            }
        }
        "mbarrier.arrive" | "mbarrier.arrive_drop" => memory::mbar_arrive(&cx)?,
        "mbarrier.expect_tx" | "mbarrier.complete_tx" => {
            cx.n(2)?;
            Op::MbarTx {
                addr: cx.addr(0)?,
                tx: cx.val(1)?,
                complete: base == "mbarrier.complete_tx",
                cluster: cx.has("shared::cluster"),
            }
        }
        "mbarrier.try_wait" | "mbarrier.test_wait" => {
            cx.n(3)?;
            Op::MbarWait {
                d: cx.dst(0)?,
                addr: cx.addr(1)?,
                arg: cx.val(2)?,
                parity: cx.has("parity"),
                block: base == "mbarrier.try_wait",
            }
        }
        "fence" if cx.has("proxy") && cx.has("async") && !cx.has("global") => Op::FenceProxyAsync,
        "fence" | "membar" | "prefetch" | "prefetchu" | "nanosleep" => Op::Nop,
        // Programmatic dependent launch (PTX ISA §9.7.13, `griddepcontrol`): the emulator runs launches one after
        // another, so every prerequisite grid has completed, its writes visible, before a
        // dependent starts — `wait` returns at once and `launch_dependents` has nothing to
        // release.
        "griddepcontrol" => Op::Nop,
        "shfl.sync" => {
            cx.n(5)?;
            let mode = [
                ("up", ShflMode::Up),
                ("down", ShflMode::Down),
                ("bfly", ShflMode::Bfly),
                ("idx", ShflMode::Idx),
            ]
            .into_iter()
            .find(|(m, _)| cx.has(m))
            .ok_or_else(|| cx.err("no shuffle mode"))?
            .1;
            let (d, p) = match cx.op(0)? {
                Operand::Pair(d, p) => (
                    syms.dst(d, i.line, &cx.text)?,
                    syms.dst(p, i.line, &cx.text)?,
                ),
                o => (syms.dst(o, i.line, &cx.text)?, None),
            };
            collective = Collective::Mask(cx.val(4)?);
            Op::Shfl {
                mode,
                d: d.ok_or_else(|| cx.err("sink destination"))?,
                p,
                a: cx.val(1)?,
                b: cx.val(2)?,
                c: cx.val(3)?,
            }
        }
        "redux.sync" => {
            use super::atom::AtomOp;
            cx.n(3)?;
            let ty = cx.ty()?;
            let op = [
                ("add", AtomOp::Add),
                ("min", AtomOp::Min),
                ("max", AtomOp::Max),
                ("and", AtomOp::And),
                ("or", AtomOp::Or),
                ("xor", AtomOp::Xor),
            ]
            .into_iter()
            .find(|(n, _)| cx.has(n))
            .ok_or_else(|| cx.err("no reduction operation"))?
            .1;
            let ok = match op {
                AtomOp::Add | AtomOp::Min | AtomOp::Max => matches!(ty, Type::U32 | Type::S32),
                _ => ty == Type::B32,
            };
            if !ok {
                return Err(cx.err(format!(
                    "redux.sync of .{ty} (the .f32 forms are not supported yet)"
                )));
            }
            collective = Collective::Mask(cx.val(2)?);
            Op::Redux {
                op,
                ty,
                d: cx.reg(0)?,
                a: cx.val(1)?,
            }
        }
        "vote.sync" => {
            cx.n(3)?;
            let mode = [
                ("all", VoteMode::All),
                ("any", VoteMode::Any),
                ("uni", VoteMode::Uni),
                ("ballot", VoteMode::Ballot),
            ]
            .into_iter()
            .find(|(m, _)| cx.has(m))
            .ok_or_else(|| cx.err("no vote mode"))?
            .1;
            let (a, a_neg) = pred_operand(&cx, 1)?;
            collective = Collective::Mask(cx.val(2)?);
            Op::Vote {
                mode,
                d: cx.reg(0)?,
                a,
                a_neg,
            }
        }
        "elect.sync" => {
            cx.n(2)?;
            let (d, p) = match cx.op(0)? {
                Operand::Pair(d, p) => (
                    syms.dst(d, i.line, &cx.text)?,
                    syms.dst(p, i.line, &cx.text)?,
                ),
                _ => return Err(cx.err("elect.sync needs `d|p`")),
            };
            collective = Collective::Mask(cx.val(1)?);
            Op::Elect { d, p }
        }
        "activemask" => Op::ActiveMask { d: cx.reg(0)? },
        "mapa" => {
            cx.n(3)?;
            if !cx.has("shared::cluster") {
                return Err(cx.err("mapa on generic addresses"));
            }
            Op::Mapa {
                d: cx.reg(0)?,
                a: cx.val(1)?,
                rank: cx.val(2)?,
            }
        }
        "cp.async.bulk.tensor" | "cp.reduce.async.bulk.tensor" => memory::tma(&cx)?,
        "cp.async.bulk.commit_group" => Op::BulkCommit,
        "cp.async.bulk.wait_group" => {
            cx.n(1)?;
            let Val::Imm(n) = cx.val(0)? else {
                return Err(cx.err("wait_group count must be a constant"));
            };
            Op::BulkWait { n: n as u32 }
        }
        "setmaxnreg" => {
            cx.n(1)?;
            let Val::Imm(n) = cx.val(0)? else {
                return Err(cx.err("setmaxnreg count must be a constant"));
            };
            if !(24..=256).contains(&n) || n % 8 != 0 {
                return Err(cx.err(format!(
                    "register count {n} is not a multiple of 8 in 24..=256"
                )));
            }
            let inc = if cx.has("inc") {
                true
            } else if cx.has("dec") {
                false
            } else {
                return Err(cx.err("setmaxnreg needs .inc or .dec"));
            };
            Op::Setmaxnreg {
                inc,
                count: n as u32,
            }
        }
        "wgmma.fence" => Op::WgmmaFence,
        "wgmma.commit_group" => Op::WgmmaCommit,
        "wgmma.wait_group" => {
            cx.n(1)?;
            let Val::Imm(n) = cx.val(0)? else {
                return Err(cx.err("wait_group count must be a constant"));
            };
            Op::WgmmaWait { n: n as u32 }
        }
        "wgmma.mma_async" => mma::wgmma(&cx)?,
        b if b.starts_with("tcgen05") => mma::tcgen05(&cx)?,
        b if b.starts_with("wgmma") => {
            return Err(cx.err("this wgmma instruction is not supported yet"));
        }
        _ => return Err(cx.err("no executor for this instruction")),
    };
    Ok(Inst {
        op,
        guard,
        collective,
        line: i.line,
        check: None,
    })
}

/// A predicate operand, possibly negated (`!%p`).
pub(super) fn pred_operand(cx: &Cx<'_>, k: usize) -> Result<(Val, bool), SimError> {
    match cx.op(k)? {
        Operand::NotReg(r) => Ok((Val::Reg(cx.syms.reg(r, cx.i.line, &cx.text)?), true)),
        _ => Ok((cx.val(k)?, false)),
    }
}

fn mov(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(2)?;
    let b = bits(cx.ty()?);
    // `.b128` (two 64-bit slots): a copy, or a pack/unpack of two 64-bit halves.
    if b == 128 {
        let halves = |k: usize| -> Result<bool, SimError> {
            match cx.op(k)? {
                Operand::Vector(v) if v.len() == 2 => Ok(true),
                Operand::Vector(_) => Err(cx.err("mov.b128 packs or unpacks two 64-bit halves")),
                Operand::Reg(_) => Ok(false),
                _ => Err(cx.err("mov.b128 of a constant")),
            }
        };
        return Ok(match (halves(0)?, halves(1)?) {
            (false, false) => Op::Mov {
                d: cx.reg(0)?,
                a: cx.val(1)?,
                bits: 128,
            },
            (true, false) => Op::Unpack {
                ds: cx
                    .list(0)?
                    .into_iter()
                    .map(|o| cx.syms.dst(o, cx.i.line, &cx.text))
                    .collect::<Result<Vec<_>, _>>()?,
                a: cx.val(1)?,
                bits: 64,
            },
            (false, true) => Op::Pack {
                d: cx.reg(0)?,
                parts: cx
                    .list(1)?
                    .into_iter()
                    .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
                    .collect::<Result<Vec<_>, _>>()?,
                bits: 64,
            },
            (true, true) => return Err(cx.err("mov between two vectors")),
        });
    }
    match (cx.op(0)?, cx.op(1)?) {
        (Operand::Vector(_), _) => {
            let ds = cx
                .list(0)?
                .into_iter()
                .map(|o| cx.syms.dst(o, cx.i.line, &cx.text))
                .collect::<Result<Vec<_>, _>>()?;
            let part = b / ds.len() as u32;
            Ok(Op::Unpack {
                ds,
                a: cx.val(1)?,
                bits: part,
            })
        }
        (_, Operand::Vector(_)) => {
            let parts = cx
                .list(1)?
                .into_iter()
                .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
                .collect::<Result<Vec<_>, _>>()?;
            let part = b / parts.len() as u32;
            Ok(Op::Pack {
                d: cx.reg(0)?,
                parts,
                bits: part,
            })
        }
        _ => Ok(Op::Mov {
            d: cx.reg(0)?,
            a: cx.val(1)?,
            bits: b,
        }),
    }
}

fn binary(cx: &Cx<'_>) -> Result<Op, SimError> {
    let ty = cx.ty()?;
    let base = cx.i.opcode.base.as_str();
    let three = matches!(base, "mad" | "fma");
    cx.n(if three { 4 } else { 3 })?;
    let (d, a, b) = (cx.reg(0)?, cx.val(1)?, cx.val(2)?);
    let c = if three { Some(cx.val(3)?) } else { None };
    if is_float(ty) {
        if !matches!(ty, Type::F32 | Type::F64) {
            return Err(cx.err("16-bit floating-point arithmetic"));
        }
        let nan = cx.has("NaN");
        let op = match base {
            "add" => FOp::Add,
            "sub" => FOp::Sub,
            "mul" => FOp::Mul,
            "mad" | "fma" => FOp::Fma,
            "div" => FOp::Div,
            "min" if nan => FOp::MinNaN,
            "max" if nan => FOp::MaxNaN,
            "min" => FOp::Min,
            "max" => FOp::Max,
            _ => return Err(cx.err("not a floating-point operation")),
        };
        // Directed rounding (§9.7.3 `add`, `sub`, `mul`: `.rnd = {.rn, .rz, .rm, .rp}`) is
        // executed for those three in f32; other directed forms are refused, not guessed.
        let rnd = cx.rnd().unwrap_or(Rnd::Rn);
        if rnd != Rnd::Rn && (ty != Type::F32 || !matches!(op, FOp::Add | FOp::Sub | FOp::Mul)) {
            return Err(cx.err("directed rounding other than of f32 add/sub/mul"));
        }
        if cx.has("xorsign") || (nan && ty != Type::F32) {
            return Err(cx.err("min/max .xorsign, or .NaN of f64"));
        }
        return Ok(Op::Float {
            op,
            ty,
            ftz: cx.has("ftz"),
            sat: cx.has("sat"),
            rnd,
            d,
            a,
            b,
            c: c.unwrap_or(Val::Imm(0)),
        });
    }
    if cx.has("sat") || cx.has("cc") {
        return Err(cx.err("integer .sat/.cc"));
    }
    let (lo, hi, wide) = (cx.has("lo"), cx.has("hi"), cx.has("wide"));
    let op = match base {
        "add" => IntOp::Add,
        "sub" => IntOp::Sub,
        "mul" if hi => IntOp::MulHi,
        "mul" if wide => IntOp::MulWide,
        "mul" if lo => IntOp::MulLo,
        "mad" if hi => IntOp::MadHi,
        "mad" if wide => IntOp::MadWide,
        "mad" if lo => IntOp::MadLo,
        "div" => IntOp::Div,
        "rem" => IntOp::Rem,
        "min" => IntOp::Min,
        "max" => IntOp::Max,
        "and" => IntOp::And,
        "or" => IntOp::Or,
        "xor" => IntOp::Xor,
        "shl" => IntOp::Shl,
        "shr" => IntOp::Shr,
        _ => return Err(cx.err("integer form needs .lo/.hi/.wide")),
    };
    Ok(Op::Int { op, ty, d, a, b, c })
}

fn unary(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(2)?;
    let ty = cx.ty()?;
    let base = cx.i.opcode.base.as_str();
    let (d, a) = (cx.reg(0)?, cx.val(1)?);
    if is_float(ty) {
        if !matches!(ty, Type::F32 | Type::F64) {
            return Err(cx.err("16-bit floating-point arithmetic"));
        }
        let op = match base {
            "neg" => FOp::Neg,
            "abs" => FOp::Abs,
            "rcp" => FOp::Rcp,
            "sqrt" => FOp::Sqrt,
            "rsqrt" => FOp::Rsqrt,
            "ex2" => FOp::Ex2,
            "lg2" => FOp::Lg2,
            "tanh" => FOp::Tanh,
            "sin" => FOp::Sin,
            "cos" => FOp::Cos,
            _ => return Err(cx.err("not a floating-point operation")),
        };
        return Ok(Op::Float {
            op,
            ty,
            ftz: cx.has("ftz"),
            sat: false,
            rnd: Rnd::Rn,
            d,
            a,
            b: Val::Imm(0),
            c: Val::Imm(0),
        });
    }
    let op = match base {
        "not" => IntUn::Not,
        "cnot" => IntUn::Cnot,
        "neg" => IntUn::Neg,
        "abs" => IntUn::Abs,
        "popc" => IntUn::Popc,
        "clz" => IntUn::Clz,
        "brev" => IntUn::Brev,
        _ => return Err(cx.err("not an integer operation")),
    };
    Ok(Op::IntUn { op, ty, d, a })
}

fn setp(cx: &Cx<'_>) -> Result<Op, SimError> {
    let ty = cx.ty()?;
    let m = &cx.i.opcode.modifiers;
    let cmp = m
        .iter()
        .find_map(|m| {
            Some(match m.as_str() {
                "eq" => Cmp::Eq,
                "ne" => Cmp::Ne,
                "lt" | "lo" => Cmp::Lt,
                "le" | "ls" => Cmp::Le,
                "gt" | "hi" => Cmp::Gt,
                "ge" | "hs" => Cmp::Ge,
                "equ" => Cmp::Equ,
                "neu" => Cmp::Neu,
                "ltu" => Cmp::Ltu,
                "leu" => Cmp::Leu,
                "gtu" => Cmp::Gtu,
                "geu" => Cmp::Geu,
                "num" => Cmp::Num,
                "nan" => Cmp::Nan,
                _ => return None,
            })
        })
        .ok_or_else(|| cx.err("no comparison"))?;
    let bool_op = m.iter().find_map(|m| match m.as_str() {
        "and" => Some(BoolOp::And),
        "or" => Some(BoolOp::Or),
        "xor" => Some(BoolOp::Xor),
        _ => None,
    });
    cx.n(if bool_op.is_some() { 4 } else { 3 })?;
    let (p, q) = match cx.op(0)? {
        Operand::Pair(p, q) => (
            cx.syms.dst(p, cx.i.line, &cx.text)?,
            cx.syms.dst(q, cx.i.line, &cx.text)?,
        ),
        o => (cx.syms.dst(o, cx.i.line, &cx.text)?, None),
    };
    let combine = match bool_op {
        Some(b) => {
            let (c, neg) = pred_operand(cx, 3)?;
            Some((b, c, neg))
        }
        None => None,
    };
    Ok(Op::Setp {
        cmp,
        ty,
        ftz: cx.has("ftz"),
        p,
        q,
        a: cx.val(1)?,
        b: cx.val(2)?,
        combine,
    })
}

fn cvt(cx: &Cx<'_>) -> Result<Op, SimError> {
    let tys = cx.types();
    let [dty, sty] = tys[..] else {
        return Err(cx.err("cvt needs a destination and a source type"));
    };
    let rm = cx.i.opcode.modifiers.iter().find_map(|m| rnd(m));
    let mode = CvtMode {
        rnd: rm.map(|r| r.0),
        int: rm.is_some_and(|r| r.1),
        ftz: cx.has("ftz"),
        sat: cx.has("sat"),
        relu: cx.has("relu"),
        satfinite: cx.has("satfinite"),
    };
    if matches!(
        dty,
        Type::F16x2 | Type::Bf16x2 | Type::E4m3x2 | Type::E5m2x2 | Type::E2m1x2
    ) {
        cx.n(3)?;
        if matches!(dty, Type::E4m3x2 | Type::E5m2x2 | Type::E2m1x2) && !mode.satfinite {
            // §9.7.9.21: the FP8 and FP4 destinations take `.satfinite` always.
            return Err(cx.err("cvt to e4m3x2/e5m2x2/e2m1x2 needs .satfinite"));
        }
        if sty != Type::F32 {
            return Err(cx.err("packed conversion from a type other than f32"));
        }
        return Ok(Op::CvtPack {
            dty,
            mode,
            d: cx.reg(0)?,
            a: cx.val(1)?,
            b: cx.val(2)?,
        });
    }
    cx.n(2)?;
    let supported = |t: Type| {
        !matches!(
            t,
            Type::F16x2
                | Type::Bf16x2
                | Type::E4m3x2
                | Type::E5m2x2
                | Type::E2m1x2
                | Type::Tf32
                | Type::Pred
                | Type::B128
        )
    };
    if !supported(dty) || !supported(sty) {
        return Err(cx.err(format!("conversion {dty} from {sty}")));
    }
    Ok(Op::Cvt {
        dty,
        sty,
        mode,
        d: cx.reg(0)?,
        a: cx.val(1)?,
    })
}
