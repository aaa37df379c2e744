//! `compute @dst = EXPR`: one instruction sequence per register of the destination.
//!
//! Before: `compute @e = (exp2_approx (mul (sub @x @m) (f32 0f3FB8AA3B)))`
//! After (per register `i` of each thread, unrolled): `sub.f32 %a, %x_i, %m_j;`
//! `mul.f32 %b, %a, 0f3FB8AA3B; ex2.approx.ftz.f32 %e_i, %b;` where `j` is the register of the
//! statistic `@m` that register `i` of `@x` broadcasts from (`RegLayout::broadcast_index`).
//!
//! Scalars (kernel arguments, `u32` expressions) are loaded once before the unrolled body;
//! `row`/`col` indices are the thread's origin (computed once) plus the register's constant
//! offset. 16-bit floats are widened exactly (`cvt.f32.bf16`) where arithmetic reads them.
//! PTX used: §9.7.3 (floating point), §9.7.7 (setp, selp), §9.7.9.21 (cvt); `exp2_poly3`'s
//! sequence is in `exp2_poly.rs`.

use super::{
    RegTileError, assignable, frag, frag_values, is_int64, is_packed, layout, origin, reg_type,
    tile_ttype, ttype,
};
use crate::abi::ElemType;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    Buffer, CmpOp, Inst, Operand, RegLayout, ScalarType as T, TBin, TExpr, TType, TUn, Var,
};
use crate::lower::Lower;
use std::collections::HashMap;

/// How an operand tile is read at the destination's register `i`.
#[derive(Clone, Copy)]
pub(super) enum Read {
    /// The same layout: register `i`.
    Same,
    /// A statistic along the axis: register `broadcast_index(axis, i)`.
    Stat(usize),
}

/// A tile expression with its scalars loaded.
pub(super) enum P {
    Tile(Vec<Handle<Var>>, Read, TType),
    Op(Operand, TType),
    /// A `u32` scalar in a register, with its value when the build knows it (a constant).
    Int(Handle<Var>, Option<u32>),
    Index(usize),
    Un(TUn, Box<P>),
    Bin(TBin, Box<P>, Box<P>),
    Fma(Box<P>, Box<P>, Box<P>),
    Cmp(CmpOp, Box<P>, Box<P>),
    Select(Box<P>, Box<P>, Box<P>),
    /// `gather(x, …)`: the tensor's base and extents, and the indices.
    Gather(Box<super::gather::Gather>, Vec<P>),
}

/// Lowers `compute dst = value`.
pub fn lower(lw: &mut Lower, dst: Handle<Buffer>, value: &TExpr) -> Result<(), Diagnostics> {
    let l = layout(lw.k, dst).map_err(|e| lw.error(e))?;
    let ty = ttype(lw.k, value).map_err(|e| lw.error(e))?;
    let elem = lw.k.buffers[dst].elem;
    if !assignable(lw.k, elem, value, ty) {
        return Err(lw.error(RegTileError::Assign {
            dst: lw.k.buffers[dst].name.clone(),
            want: elem.name(),
            got: ty.name(),
        }));
    }
    let p = prepare(lw, dst, &l, value)?;
    let org = uses_index(&p).then(|| origin(lw, &l));
    let out = frag(lw, dst)?;
    let mut memo = Memo::default();
    if is_packed(lw, dst) {
        // Two elements per word. A value that rounds an f32 to the tile's type is evaluated
        // inside the cast and both halves rounded by one `cvt.rn.{bf16,f16}x2.f32`
        // (§9.7.9.21: the first source lands in the upper half).
        let inner = match &p {
            P::Un(TUn::Cast(to), a) if *to == elem => Some(&**a),
            _ => None,
        };
        for (w, d) in out.iter().enumerate() {
            let i = 2 * w as u32;
            if let Some(a) = inner {
                let lo = eval(lw, &l, org, a, i, &mut memo);
                let hi = eval(lw, &l, org, a, i + 1, &mut memo);
                let (lo, hi) = (f32_reg(lw, lo), f32_reg(lw, hi));
                lw.inst(Inst::cvt_rn_pack(elem.name(), *d, hi, lo));
            } else {
                let (lo, _) = eval(lw, &l, org, &p, i, &mut memo);
                let (hi, _) = eval(lw, &l, org, &p, i + 1, &mut memo);
                let (lo, hi) = (b16_reg(lw, lo), b16_reg(lw, hi));
                lw.inst(Inst::pack_b32(*d, lo, hi));
            }
        }
        return Ok(());
    }
    // A tile assigned a gather (`sb_t = gather(sb, nb, k)`) loads every register itself, even
    // where the value is the same in several of them (a statistic's two rows, an index that
    // never varies): a load copied into the other registers makes the copy wait for the load
    // at once (ptxas can coalesce one destination with the loaded register, not two), while a
    // load per register is first waited for where the value is read. Measured: the block
    // FP8 GEMM's weight scale, loaded a K block ahead and copied, stalled its consumers on
    // the load in 9 % of their samples (ncu, H100, 2026-12-06).
    let whole_gather = matches!(p, P::Gather(..));
    for (i, d) in out.iter().enumerate() {
        let (v, t) = if whole_gather {
            eval_at(lw, &l, org, &p, i as u32, &mut memo)
        } else {
            eval(lw, &l, org, &p, i as u32, &mut memo)
        };
        let v = if elem == ElemType::F32 {
            f32_of(lw, v, t)
        } else if elem.is_int64() {
            widen(lw, v, t, tile_ttype(elem))
        } else {
            v
        };
        lw.inst(Inst::mov(reg_type(elem).name(), *d, v));
    }
    Ok(())
}

pub(super) fn prepare(
    lw: &mut Lower,
    dst: Handle<Buffer>,
    l: &RegLayout,
    e: &TExpr,
) -> Result<P, Diagnostics> {
    let sub = |lw: &mut Lower, x: &TExpr| prepare(lw, dst, l, x).map(Box::new);
    Ok(match e {
        TExpr::Tile(b) => {
            let lb = layout(lw.k, *b).map_err(|e| lw.error(e))?;
            let read = if lb == *l {
                Read::Same
            } else if let Some(a) = (0..2).find(|&a| l.reduce(a).as_ref() == Ok(&lb)) {
                Read::Stat(a)
            } else {
                return Err(lw.error(RegTileError::Layout {
                    tile: lw.k.buffers[*b].name.clone(),
                    dst: lw.k.buffers[dst].name.clone(),
                }));
            };
            P::Tile(
                frag_values(lw, *b)?,
                read,
                tile_ttype(lw.k.buffers[*b].elem),
            )
        }
        TExpr::F32(bits) => P::Op(Operand::F32Bits(*bits), TType::Elem(ElemType::F32)),
        TExpr::Arg(name) => {
            let t = ttype(lw.k, e).map_err(|e| lw.error(e))?;
            let v = lw.scalar_param(name)?;
            P::Op(reg(v), t)
        }
        TExpr::Int(x) => {
            let known = match x {
                crate::ir::Expr::Imm(v, _) => u32::try_from(*v).ok(),
                _ => None,
            };
            let v = lw.let_("s", T::U32, x.clone());
            P::Int(v, known)
        }
        TExpr::Index(a) => P::Index(*a as usize),
        TExpr::Un(f, a) => P::Un(*f, sub(lw, a)?),
        TExpr::Bin(op, a, b) => P::Bin(*op, sub(lw, a)?, sub(lw, b)?),
        TExpr::Fma(a, b, c) => P::Fma(sub(lw, a)?, sub(lw, b)?, sub(lw, c)?),
        TExpr::Cmp(c, a, b) => P::Cmp(*c, sub(lw, a)?, sub(lw, b)?),
        TExpr::Select(c, a, b) => P::Select(sub(lw, c)?, sub(lw, a)?, sub(lw, b)?),
        TExpr::Gather {
            tensor,
            index: texprs,
            oob_zero,
        } => {
            let check = texprs
                .iter()
                .map(|x| !oob_zero && super::gather::reads_data(x, lw.data))
                .collect();
            let g = super::gather::prepare(lw, tensor, check)?;
            let index = texprs;
            let index = index
                .iter()
                .map(|x| prepare(lw, dst, l, x))
                .collect::<Result<_, _>>()?;
            P::Gather(Box::new(g), index)
        }
    })
}

pub(super) fn uses_index(p: &P) -> bool {
    match p {
        P::Index(_) => true,
        P::Tile(..) | P::Op(..) | P::Int(..) => false,
        P::Un(_, a) => uses_index(a),
        P::Bin(_, a, b) | P::Cmp(_, a, b) => uses_index(a) || uses_index(b),
        P::Fma(a, b, c) | P::Select(a, b, c) => uses_index(a) || uses_index(b) || uses_index(c),
        P::Gather(_, index) => index.iter().any(uses_index),
    }
}

/// `v` as an f32 operand (16-bit floats widened exactly).
pub(super) fn f32_of(lw: &mut Lower, v: Operand, t: TType) -> Operand {
    match (t, v) {
        (TType::Elem(h @ (ElemType::Bf16 | ElemType::F16)), Operand::Reg(r)) => {
            let d = lw.var("w", T::F32);
            lw.inst(Inst::cvt_f32_from(h.name(), d, r));
            reg(d)
        }
        (_, v) => v,
    }
}

/// A value as an f32 register: 16-bit floats widened, integers converted (rounded to
/// nearest), immediates moved.
pub(super) fn f32_reg(lw: &mut Lower, (v, t): (Operand, TType)) -> Handle<Var> {
    let v = match t {
        TType::U32 | TType::I32 | TType::I64 | TType::U64 => int_to_f32(lw, v, t),
        _ => f32_of(lw, v, t),
    };
    match v {
        Operand::Reg(r) => r,
        other => {
            let r = tmp(lw, T::F32);
            lw.inst(Inst::mov("f32", r, other));
            r
        }
    }
}

/// An integer as f32, rounded to nearest: `cvt.rn.f32.{u32,s32,u64,s64}` (§9.7.9.21).
fn int_to_f32(lw: &mut Lower, v: Operand, t: TType) -> Operand {
    let d = tmp(lw, T::F32);
    lw.inst(Inst::cvt(&format!("rn.f32.{}", int_suffix(t)), d, v));
    reg(d)
}

/// The PTX type suffix of integer values of type `t` (`s32`, `u32`, `s64`, `u64`).
fn int_suffix(t: TType) -> &'static str {
    match t {
        TType::I32 => "s32",
        TType::I64 => "s64",
        TType::U64 => "u64",
        _ => "u32",
    }
}

/// The register type of integer values of type `t`.
fn int_reg(t: TType) -> T {
    match t {
        TType::I32 => T::S32,
        TType::I64 => T::S64,
        TType::U64 => T::U64,
        _ => T::U32,
    }
}

/// The result type of integer arithmetic on `ta` and `tb`: the 64-bit or `i32` type when
/// either is one (the type rules let a `u32` meet another type only as an index expression),
/// else `u32`.
fn int_result(ta: TType, tb: TType) -> TType {
    for t in [TType::I64, TType::U64, TType::I32] {
        if ta == t || tb == t {
            return t;
        }
    }
    TType::U32
}

/// A 32-bit integer value as the 64-bit type `to` (unchanged when it is not 32-bit or `to`
/// is not 64-bit): an `i32`, or an index expression next to an `i64`, sign-extended
/// (`cvt.s64.s32`, so an `i32` argument of −1 stays −1), a `u32` next to a `u64`
/// zero-extended (`cvt.u64.u32`, §9.7.9.21).
fn widen(lw: &mut Lower, v: Operand, from: TType, to: TType) -> Operand {
    if !is_int64(to) || is_int64(from) || !matches!(from, TType::I32 | TType::U32) {
        return v;
    }
    let signed = from == TType::I32 || to == TType::I64;
    let d = tmp(lw, int_reg(to));
    let cv = if signed { "s64.s32" } else { "u64.u32" };
    lw.inst(Inst::cvt(cv, d, v));
    reg(d)
}

/// A 64-bit shift count as the `.u32` count `shl`/`shr` take (§9.7.8.7, §9.7.8.8): its low
/// 32 bits (`cvt.u32.u64`); a count of 64 or more there shifts every bit out (`>>` of an
/// `i64` fills with the sign).
fn shift_count(lw: &mut Lower, v: Operand, t: TType) -> Operand {
    if !is_int64(t) {
        return v;
    }
    let d = tmp(lw, T::U32);
    lw.inst(Inst::cvt("u32.u64", d, v));
    reg(d)
}

/// The PTX instruction of integer `op` on values of type `t` (`ta` the left operand's,
/// which picks the shift: arithmetic for `i32`/`i64`, logical for `u32`/`u64`).
fn int_op(op: TBin, t: TType, ta: TType) -> String {
    let s = int_suffix(t);
    let b = if is_int64(t) { "b64" } else { "b32" };
    match op {
        TBin::Add => format!("add.{s}"),
        TBin::Sub => format!("sub.{s}"),
        TBin::Mul => format!("mul.lo.{s}"),
        TBin::Div => format!("div.{s}"),
        TBin::Rem => format!("rem.{s}"),
        TBin::Min => format!("min.{s}"),
        TBin::Max => format!("max.{s}"),
        TBin::Shl => format!("shl.{b}"),
        TBin::Shr => format!("shr.{}", int_suffix(ta)),
        TBin::BitAnd => format!("and.{b}"),
        TBin::BitOr => format!("or.{b}"),
        TBin::BitXor => format!("xor.{b}"),
        TBin::And | TBin::Or => unreachable!("predicates are not integers"),
    }
}

/// A 16-bit value as a `b16` register.
fn b16_reg(lw: &mut Lower, v: Operand) -> Handle<Var> {
    match v {
        Operand::Reg(r) => r,
        other => {
            let r = tmp(lw, T::B16);
            lw.inst(Inst::mov("b16", r, other));
            r
        }
    }
}

fn tmp(lw: &mut Lower, t: T) -> Handle<Var> {
    lw.var("v", t)
}

/// What a subexpression's value depends on, across the destination's registers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Varies {
    /// Nothing per register: scalars and constants only.
    Never,
    /// Only statistics along this axis: one value per statistic register.
    Stat(usize),
    /// Each register.
    Always,
}

fn varies(l: &RegLayout, p: &P) -> Varies {
    let join = |a: Varies, b: Varies| match (a, b) {
        (Varies::Never, x) | (x, Varies::Never) => x,
        (Varies::Stat(x), Varies::Stat(y)) if x == y => Varies::Stat(x),
        _ => Varies::Always,
    };
    match p {
        P::Tile(_, Read::Same, _) => Varies::Always,
        // A row index is the same along a row: it broadcasts like a row statistic (reduced
        // along axis 1), a column index like a column statistic — when no value mode moves
        // along both axes at once.
        P::Index(a)
            if l.values
                .iter()
                .all(|m| m.stride[0] == 0 || m.stride[1] == 0) =>
        {
            Varies::Stat(1 - *a)
        }
        P::Index(_) => Varies::Always,
        P::Tile(_, Read::Stat(a), _) => Varies::Stat(*a),
        P::Op(..) | P::Int(..) => Varies::Never,
        P::Un(_, a) => varies(l, a),
        P::Bin(_, a, b) | P::Cmp(_, a, b) => join(varies(l, a), varies(l, b)),
        P::Fma(a, b, c) | P::Select(a, b, c) => {
            join(join(varies(l, a), varies(l, b)), varies(l, c))
        }
        P::Gather(_, index) => index
            .iter()
            .fold(Varies::Never, |v, x| join(v, varies(l, x))),
    }
}

/// Values of broadcast subexpressions already computed in this op, by (node, statistic
/// register): `acc * rcp(l)` computes `rcp(l)` once per row, not once per element.
#[derive(Default)]
pub(super) struct Memo(HashMap<(usize, u32), (Operand, TType)>);

/// Register `i`'s value of `p`. A subexpression that reads only statistics (and scalars) is
/// evaluated once per statistic register and reused by every register it broadcasts to.
pub(super) fn eval(
    lw: &mut Lower,
    l: &RegLayout,
    org: Option<[Handle<Var>; 2]>,
    p: &P,
    i: u32,
    memo: &mut Memo,
) -> (Operand, TType) {
    let key = match (p, varies(l, p)) {
        (P::Tile(..) | P::Op(..) | P::Int(..), _) | (_, Varies::Always) => None,
        (_, Varies::Never) => Some(0),
        (_, Varies::Stat(a)) => Some(l.broadcast_index(a, i)),
    };
    let Some(j) = key else {
        return eval_at(lw, l, org, p, i, memo);
    };
    let node = (p as *const P as usize, j);
    if let Some(v) = memo.0.get(&node) {
        return v.clone();
    }
    let v = eval_at(lw, l, org, p, i, memo);
    memo.0.insert(node, v.clone());
    v
}

fn eval_at(
    lw: &mut Lower,
    l: &RegLayout,
    org: Option<[Handle<Var>; 2]>,
    p: &P,
    i: u32,
    memo: &mut Memo,
) -> (Operand, TType) {
    let f32t = TType::Elem(ElemType::F32);
    match p {
        P::Tile(regs, read, t) => {
            let j = match read {
                Read::Same => i,
                Read::Stat(a) => l.broadcast_index(*a, i),
            };
            (reg(regs[j as usize]), *t)
        }
        P::Op(o, t) => (o.clone(), *t),
        P::Int(v, _) => (reg(*v), TType::U32),
        P::Index(a) => {
            let [r, c] = org.expect("origin computed for index tiles");
            let base = if *a == 0 { r } else { c };
            let d = tmp(lw, T::U32);
            let off = l.value_coord(i)[*a] as i64;
            lw.inst(Inst::binary("add.u32", d, reg(base), Operand::Imm(off)));
            (reg(d), TType::U32)
        }
        P::Un(TUn::Not, a) => {
            let (v, _) = eval(lw, l, org, a, i, memo);
            let d = tmp(lw, T::Pred);
            lw.inst(Inst::unary("not.pred", d, v));
            (reg(d), TType::Pred)
        }
        P::Un(TUn::Cast(to), a) => {
            let (v, t) = eval(lw, l, org, a, i, memo);
            let int = matches!(t, TType::U32 | TType::I32 | TType::I64 | TType::U64);
            match (t, *to) {
                (TType::Elem(from), to) if from == to => (v, t),
                // Between integers of one width (`i32` ↔ `u32`, `i64` ↔ `u64`): the same bits.
                (_, to) if int && to.is_int() && is_int64(t) == to.is_int64() => {
                    (v, tile_ttype(to))
                }
                // 32 → 64 bits: extended by the source's signedness; 64 → 32: the low 32
                // bits (`cvt.u32.u64` chops, §9.7.9.21) — Rust's `as` both ways.
                (_, to) if int && to.is_int() => {
                    let tt = tile_ttype(to);
                    let d = tmp(lw, int_reg(tt));
                    let cv = match (t, to.is_int64()) {
                        (TType::I32, true) => "s64.s32",
                        (_, true) => "u64.u32",
                        (_, false) => "u32.u64",
                    };
                    lw.inst(Inst::cvt(cv, d, v));
                    (reg(d), tt)
                }
                _ if int => (int_to_f32(lw, v, t), f32t),
                // Truncation toward zero, NaN to 0, saturating (§9.7.9.21 `cvt.rzi`): Rust's
                // `as`.
                (_, to) if to.is_int() => {
                    let src = f32_of(lw, v, t);
                    let tt = tile_ttype(to);
                    let d = tmp(lw, int_reg(tt));
                    lw.inst(Inst::cvt(&format!("rzi.{}.f32", int_suffix(tt)), d, src));
                    (reg(d), tt)
                }
                (_, ElemType::F32) => (f32_of(lw, v, t), f32t),
                (_, half) => {
                    let src = f32_reg(lw, (v, t));
                    let d = tmp(lw, T::B16);
                    lw.inst(Inst::cvt_rn_f32_to(half.name(), d, src));
                    (reg(d), TType::Elem(half))
                }
            }
        }
        // The same 32 bits in a register of the other type (§9.7.9.1 mov: `.b32` moves between
        // any 32-bit registers).
        P::Un(TUn::ToBits, a) => {
            let (v, t) = eval(lw, l, org, a, i, memo);
            let v = f32_of(lw, v, t);
            let d = tmp(lw, T::U32);
            lw.inst(Inst::mov("b32", d, v));
            (reg(d), TType::U32)
        }
        P::Un(TUn::FromBits, a) => {
            let (v, _) = eval(lw, l, org, a, i, memo);
            let d = tmp(lw, T::F32);
            lw.inst(Inst::mov("b32", d, v));
            (reg(d), f32t)
        }
        P::Un(TUn::Exp2Poly3, a) => {
            let (v, t) = eval(lw, l, org, a, i, memo);
            let v = f32_of(lw, v, t);
            (reg(super::exp2_poly::lower(lw, v)), f32t)
        }
        P::Un(f, a) => {
            let (v, t) = eval(lw, l, org, a, i, memo);
            if matches!(t, TType::I32 | TType::I64) {
                // `neg.s32` / `abs.s32` (§9.7.1.6, §9.7.1.5; the type rules allow no other).
                let d = tmp(lw, int_reg(t));
                let o = if *f == TUn::Neg { "neg" } else { "abs" };
                lw.inst(Inst::unary(&format!("{o}.{}", int_suffix(t)), d, v));
                return (reg(d), t);
            }
            let v = f32_of(lw, v, t);
            let op = match f {
                TUn::Neg => "neg.f32",
                TUn::Abs => "abs.f32",
                TUn::Exp2Approx => "ex2.approx.ftz.f32",
                TUn::Log2Approx => "lg2.approx.ftz.f32",
                TUn::RsqrtApprox => "rsqrt.approx.ftz.f32",
                TUn::RcpApprox => "rcp.approx.ftz.f32",
                TUn::Rcp => "rcp.rn.f32",
                TUn::Sqrt => "sqrt.rn.f32",
                TUn::TanhApprox => "tanh.approx.f32",
                TUn::Not | TUn::Cast(_) | TUn::Exp2Poly3 | TUn::ToBits | TUn::FromBits => {
                    unreachable!("handled above")
                }
            };
            let d = tmp(lw, T::F32);
            lw.inst(Inst::unary(op, d, v));
            (reg(d), f32t)
        }
        // An index quotient the same for every thread ([`index_quotient`]): a constant, so a
        // comparison with it is a `setp` against an immediate and no column index is kept.
        P::Bin(TBin::Div, a, _) if matches!(**a, P::Index(_)) && known_u32(l, p, i).is_some() => {
            let k = known_u32(l, p, i).expect("known");
            let d = tmp(lw, T::U32);
            lw.inst(Inst::mov("u32", d, Operand::Imm(i64::from(k))));
            (reg(d), TType::U32)
        }
        P::Bin(op, a, b) => {
            let (va, ta) = eval(lw, l, org, a, i, memo);
            let (vb, tb) = eval(lw, l, org, b, i, memo);
            if ta == TType::Pred {
                let d = tmp(lw, T::Pred);
                let o = if *op == TBin::And {
                    "and.pred"
                } else {
                    "or.pred"
                };
                lw.inst(Inst::binary(o, d, va, vb));
                return (reg(d), TType::Pred);
            }
            if matches!(ta, TType::U32 | TType::I32 | TType::I64 | TType::U64) {
                let (tt, va, vb) = if matches!(op, TBin::Shl | TBin::Shr) {
                    (ta, va, shift_count(lw, vb, tb))
                } else {
                    let tt = int_result(ta, tb);
                    (tt, widen(lw, va, ta, tt), widen(lw, vb, tb, tt))
                };
                let d = tmp(lw, int_reg(tt));
                lw.inst(Inst::binary(&int_op(*op, tt, ta), d, va, vb));
                return (reg(d), tt);
            }
            let (va, vb) = (f32_of(lw, va, ta), f32_of(lw, vb, tb));
            let o = match op {
                TBin::Add => "add.f32",
                TBin::Sub => "sub.f32",
                TBin::Mul => "mul.f32",
                TBin::Div => "div.rn.f32",
                TBin::Min => "min.f32",
                TBin::Max => "max.f32",
                _ => unreachable!("the type rules take only the above on floats"),
            };
            let d = tmp(lw, T::F32);
            lw.inst(Inst::binary(o, d, va, vb));
            (reg(d), f32t)
        }
        P::Fma(a, b, c) => {
            let mut ops = Vec::new();
            for x in [a, b, c] {
                let (v, t) = eval(lw, l, org, x, i, memo);
                ops.push(f32_of(lw, v, t));
            }
            let [a, b, c]: [Operand; 3] = ops.try_into().expect("three operands");
            let d = tmp(lw, T::F32);
            lw.inst(Inst::fma_f32(d, a, b, c));
            (reg(d), f32t)
        }
        P::Cmp(c, a, b) => {
            let (va, ta) = eval(lw, l, org, a, i, memo);
            let (vb, tb) = eval(lw, l, org, b, i, memo);
            let kind = match (ta, tb) {
                (TType::U32 | TType::I32 | TType::I64 | TType::U64, _) => int_result(ta, tb),
                _ => f32t,
            };
            let (va, vb) = if kind == f32t {
                (f32_of(lw, va, ta), f32_of(lw, vb, tb))
            } else {
                (widen(lw, va, ta, kind), widen(lw, vb, tb, kind))
            };
            let d = tmp(lw, T::Pred);
            let (cmp, ty) = match kind {
                TType::U32 | TType::U64 => (cmp_name(*c, false), int_suffix(kind)),
                // Signed integers: `setp.lt.s32` (§9.7.7.1: lt/le/gt/ge order signed values).
                TType::I32 | TType::I64 => {
                    (cmp_name(*c, true).trim_end_matches('u'), int_suffix(kind))
                }
                _ => (cmp_name(*c, true), "f32"),
            };
            lw.inst(Inst::setp(cmp, ty, d, va, vb));
            (reg(d), TType::Pred)
        }
        // A condition the build knows at this register (`col_index(t) < 96` in a layout whose
        // threads all hold the same columns) selects its side here: only that side is
        // computed — a column range of a thread-per-row tile sent to `exp2_poly3`, the rest
        // to `exp2_approx`.
        P::Select(c, a, b) if known_pred(l, c, i).is_some() => {
            let side = if known_pred(l, c, i) == Some(true) {
                a
            } else {
                b
            };
            eval(lw, l, org, side, i, memo)
        }
        P::Select(c, a, b) => {
            let (vc, _) = eval(lw, l, org, c, i, memo);
            let (va, ta) = eval(lw, l, org, a, i, memo);
            let (vb, tb) = eval(lw, l, org, b, i, memo);
            let Operand::Reg(pc) = vc else {
                unreachable!("predicates are registers")
            };
            let int = matches!(ta, TType::U32 | TType::I32 | TType::I64 | TType::U64);
            let it = int_result(ta, tb);
            let (va, vb, ty, rt, t) = if int && it != TType::U32 {
                let (va, vb) = (widen(lw, va, ta, it), widen(lw, vb, tb, it));
                (va, vb, int_suffix(it), int_reg(it), it)
            } else if ta == tb && ta != f32t {
                let (name, rt) = match ta {
                    TType::U32 => ("u32", T::U32),
                    TType::Pred => ("pred", T::Pred),
                    _ => ("b16", reg_type(ElemType::Bf16)),
                };
                (va, vb, name, rt, ta)
            } else {
                (f32_of(lw, va, ta), f32_of(lw, vb, tb), "f32", T::F32, f32t)
            };
            let d = tmp(lw, rt);
            if ty == "pred" {
                // selp has no .pred form: (c && a) || (!c && b).
                let (x, y, nc) = (tmp(lw, T::Pred), tmp(lw, T::Pred), tmp(lw, T::Pred));
                lw.inst(Inst::binary("and.pred", x, reg(pc), va));
                lw.inst(Inst::unary("not.pred", nc, reg(pc)));
                lw.inst(Inst::binary("and.pred", y, reg(nc), vb));
                lw.inst(Inst::binary("or.pred", d, reg(x), reg(y)));
            } else {
                lw.inst(Inst::selp(ty, d, va, vb, pc));
            }
            (reg(d), t)
        }
        P::Gather(g, index) => {
            let ix: Vec<Operand> = index
                .iter()
                .map(|x| eval(lw, l, org, x, i, memo).0)
                .collect();
            super::gather::load(lw, g, &ix)
        }
    }
}

/// `p`'s `u32` value at register `i` when the build knows it: an index along an axis no
/// thread mode of the layout moves (so every thread's origin there is 0 and the index is the
/// register's own coordinate: `col_index` of `tmem_32x32b`), a constant, and sums,
/// differences, products, minima and maxima of those (`None` on overflow).
fn known_u32(l: &RegLayout, p: &P, i: u32) -> Option<u32> {
    match p {
        P::Index(a) if l.threads.iter().all(|m| m.stride[*a] == 0) => Some(l.value_coord(i)[*a]),
        P::Int(_, v) => *v,
        P::Bin(TBin::Div, a, b) if known_u32(l, b, i).is_some_and(|d| d > 0) => {
            let d = known_u32(l, b, i)?;
            known_u32(l, a, i)
                .map(|x| x / d)
                .or_else(|| index_quotient(l, a, d, i))
        }
        P::Bin(op, a, b) => {
            let (x, y) = (known_u32(l, a, i)?, known_u32(l, b, i)?);
            match op {
                TBin::Add => x.checked_add(y),
                TBin::Sub => x.checked_sub(y),
                TBin::Mul => x.checked_mul(y),
                TBin::Min => Some(x.min(y)),
                TBin::Max => Some(x.max(y)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `col_index(t) / d` (or `row_index`) at register `i` when every thread's origin along the
/// axis stays inside the register's `d`-aligned group: the wgmma accumulator fragment's
/// `col_index(t) / 8` is its 8-column group (the threads' origins reach columns 0..6, a
/// register sits at column 0 or 1 of its group), the same for every thread.
fn index_quotient(l: &RegLayout, p: &P, d: u32, i: u32) -> Option<u32> {
    let P::Index(a) = p else { return None };
    let v = l.value_coord(i)[*a];
    let reach: u32 = l.threads.iter().map(|m| m.stride[*a] * (m.size - 1)).sum();
    (v % d + reach < d).then_some(v / d)
}

/// `p`'s truth at register `i` when the build knows it: comparisons of known `u32` values
/// ([`known_u32`]), and `!`, `&&`, `||` of known predicates.
fn known_pred(l: &RegLayout, p: &P, i: u32) -> Option<bool> {
    match p {
        P::Cmp(c, a, b) => {
            let (x, y) = (known_u32(l, a, i)?, known_u32(l, b, i)?);
            Some(match c {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
            })
        }
        P::Un(TUn::Not, a) => known_pred(l, a, i).map(|v| !v),
        P::Bin(TBin::And, a, b) => Some(known_pred(l, a, i)? && known_pred(l, b, i)?),
        P::Bin(TBin::Or, a, b) => Some(known_pred(l, a, i)? || known_pred(l, b, i)?),
        _ => None,
    }
}

/// The `setp` comparison: ordered for floats (false when either side is NaN, like C's).
fn cmp_name(c: CmpOp, float: bool) -> &'static str {
    match (c, float) {
        (CmpOp::Eq, _) => "eq",
        (CmpOp::Ne, true) => "neu",
        (CmpOp::Ne, false) => "ne",
        (CmpOp::Lt, true) => "lt",
        (CmpOp::Lt, false) => "lo",
        (CmpOp::Le, true) => "le",
        (CmpOp::Le, false) => "ls",
        (CmpOp::Gt, true) => "gt",
        (CmpOp::Gt, false) => "hi",
        (CmpOp::Ge, true) => "ge",
        (CmpOp::Ge, false) => "hs",
    }
}

#[cfg(test)]
#[path = "compute_tests.rs"]
mod tests;
