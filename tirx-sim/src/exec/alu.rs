//! The arithmetic of one lane, on register bits: integer and logic (PTX ISA §9.7.1, §9.7.7),
//! floating point (§9.7.3), comparison and selection (§9.7.5), conversion (§9.7.9).
//!
//! Values are the low `N` bits of a `u64`, `N` the instruction type's width; results are
//! truncated to the destination's width. Floating point follows IEEE 754 round-to-nearest-even
//! (Rust's `f32`/`f64` operations, `mul_add` for the fused `fma`), with the ISA's additions:
//! `.ftz` flushes subnormal inputs and results to zero of the same sign, NaN results are the
//! canonical NaN, `.sat` clamps to [0, 1] (NaN to 0). `add/sub/mul.{rz,rm,rp}.f32` round
//! the exact result once in their direction ([`float_op_directed`]); `min/max.NaN` return NaN
//! when a source is NaN.
//!
//! The `.approx` instructions (`rcp`, `rsqrt`, `ex2`, `lg2`, `tanh`, `sin`, `cos`) are
//! computed exactly: the f64 value of the function rounded once to f32 (the divisions and
//! square roots correctly rounded in f32). The hardware's results differ from these by up
//! to its documented maximum error (e.g. 2 ulp for `ex2.approx.f32`, §9.7.3); a kernel
//! whose output depends on more than that is not bit-identical to the H200 here.
//!
//! Integer division by zero is undefined in the ISA; here it returns all ones (quotient) or
//! the dividend (remainder).

use super::decode::bits;
use super::float::{self, BF16, F16, Rnd, canon, canon64, ftz as flush};
use super::ops::{Cmp, CvtMode, FOp, IntOp, IntUn};
use crate::ptx::Type;

/// The low `w` bits of `v`.
pub(crate) fn mask(v: u64, w: u32) -> u64 {
    if w >= 64 { v } else { v & ((1u64 << w) - 1) }
}

/// `v`'s low `w` bits, sign-extended.
pub(crate) fn sext(v: u64, w: u32) -> i64 {
    if w >= 64 {
        v as i64
    } else {
        let s = 64 - w;
        ((v << s) as i64) >> s
    }
}

fn signed(ty: Type) -> bool {
    matches!(ty, Type::S8 | Type::S16 | Type::S32 | Type::S64)
}

/// An integer, bitwise or predicate operation; returns (bits, result width).
pub(crate) fn int_bin(op: IntOp, ty: Type, a: u64, b: u64, c: u64) -> (u64, u32) {
    let w = bits(ty);
    let s = signed(ty);
    let (ua, ub) = (mask(a, w), mask(b, w));
    let (sa, sb) = (sext(a, w), sext(b, w));
    let wide = |x: u64, y: u64| -> u128 {
        if s {
            (i128::from(sext(x, w)) * i128::from(sext(y, w))) as u128
        } else {
            u128::from(mask(x, w)) * u128::from(mask(y, w))
        }
    };
    let r = match op {
        IntOp::Add => ua.wrapping_add(ub),
        IntOp::Sub => ua.wrapping_sub(ub),
        IntOp::MulLo => ua.wrapping_mul(ub),
        IntOp::MulHi => (wide(a, b) >> w) as u64,
        IntOp::MulWide => return (mask(wide(a, b) as u64, 2 * w), 2 * w),
        IntOp::MadLo => ua.wrapping_mul(ub).wrapping_add(c),
        IntOp::MadHi => ((wide(a, b) >> w) as u64).wrapping_add(c),
        IntOp::MadWide => return (mask((wide(a, b) as u64).wrapping_add(c), 2 * w), 2 * w),
        IntOp::Div if ub == 0 => u64::MAX,
        IntOp::Rem if ub == 0 => ua,
        IntOp::Div if s => sa.wrapping_div(sb) as u64,
        IntOp::Rem if s => sa.wrapping_rem(sb) as u64,
        IntOp::Div => ua / ub,
        IntOp::Rem => ua % ub,
        IntOp::Min if s => sa.min(sb) as u64,
        IntOp::Max if s => sa.max(sb) as u64,
        IntOp::Min => ua.min(ub),
        IntOp::Max => ua.max(ub),
        IntOp::And => ua & ub,
        IntOp::Or => ua | ub,
        IntOp::Xor => ua ^ ub,
        // Shift amounts are unsigned 32-bit; larger than the width clamps (§9.7.7).
        IntOp::Shl => {
            let n = mask(b, 32);
            if n >= u64::from(w) { 0 } else { ua << n }
        }
        IntOp::Shr => {
            let n = mask(b, 32).min(63) as u32;
            if s {
                (sa >> n.min(w - 1)) as u64
            } else if n >= w {
                0
            } else {
                ua >> n
            }
        }
    };
    (mask(r, w), w)
}

/// An integer unary operation; returns the bits (`popc`/`clz` give a u32 count).
pub(crate) fn int_un(op: IntUn, ty: Type, a: u64) -> u64 {
    let w = bits(ty);
    let ua = mask(a, w);
    let r = match op {
        IntUn::Not => !ua,
        IntUn::Cnot => u64::from(ua == 0),
        IntUn::Neg => ua.wrapping_neg(),
        IntUn::Abs => sext(a, w).unsigned_abs(),
        IntUn::Popc => return u64::from(ua.count_ones()),
        IntUn::Clz => return u64::from(ua.leading_zeros() - (64 - w)),
        IntUn::Brev => ua.reverse_bits() >> (64 - w),
    };
    mask(r, w)
}

/// Min/max with the ISA's NaN rule: a NaN operand yields the other one.
fn minmax(a: f64, b: f64, max: bool) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            // +0 is larger than −0.
            if a.is_sign_negative() == max { b } else { a }
        }
        _ if (a > b) == max => a,
        _ => b,
    }
}

fn f32_op(op: FOp, ftz: bool, a: f32, b: f32, c: f32) -> f32 {
    let (a, b, c) = if ftz {
        (flush(a), flush(b), flush(c))
    } else {
        (a, b, c)
    };
    let via64 = |f: fn(f64) -> f64| float::f64_to_f32(f(f64::from(a)), Rnd::Rn);
    let r = match op {
        FOp::Add => a + b,
        FOp::Sub => a - b,
        FOp::Mul => a * b,
        FOp::Fma => a.mul_add(b, c),
        FOp::Div => a / b,
        FOp::Min => minmax(f64::from(a), f64::from(b), false) as f32,
        FOp::Max => minmax(f64::from(a), f64::from(b), true) as f32,
        FOp::MinNaN | FOp::MaxNaN if a.is_nan() || b.is_nan() => f32::NAN,
        FOp::MinNaN => minmax(f64::from(a), f64::from(b), false) as f32,
        FOp::MaxNaN => minmax(f64::from(a), f64::from(b), true) as f32,
        FOp::Neg => return -a,
        FOp::Abs => return a.abs(),
        FOp::Rcp => 1.0 / a,
        FOp::Sqrt => a.sqrt(),
        FOp::Rsqrt => via64(|x| 1.0 / x.sqrt()),
        FOp::Ex2 => via64(f64::exp2),
        FOp::Lg2 => via64(f64::log2),
        FOp::Tanh => via64(f64::tanh),
        FOp::Sin => via64(f64::sin),
        FOp::Cos => via64(f64::cos),
    };
    let r = if ftz { flush(r) } else { r };
    canon(r)
}

fn f64_op(op: FOp, a: f64, b: f64, c: f64) -> f64 {
    let r = match op {
        FOp::Add => a + b,
        FOp::Sub => a - b,
        FOp::Mul => a * b,
        FOp::Fma => a.mul_add(b, c),
        FOp::Div => a / b,
        FOp::Min => minmax(a, b, false),
        FOp::Max => minmax(a, b, true),
        FOp::MinNaN | FOp::MaxNaN if a.is_nan() || b.is_nan() => f64::NAN,
        FOp::MinNaN => minmax(a, b, false),
        FOp::MaxNaN => minmax(a, b, true),
        FOp::Neg => return -a,
        FOp::Abs => return a.abs(),
        FOp::Rcp => 1.0 / a,
        FOp::Sqrt => a.sqrt(),
        FOp::Rsqrt => 1.0 / a.sqrt(),
        FOp::Ex2 => a.exp2(),
        FOp::Lg2 => a.log2(),
        FOp::Tanh => a.tanh(),
        FOp::Sin => a.sin(),
        FOp::Cos => a.cos(),
    };
    canon64(r)
}

/// A floating-point operation on f32 or f64 bits.
pub(crate) fn float_op(op: FOp, ty: Type, ftz: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    if ty == Type::F64 {
        let f = |x: u64| f64::from_bits(x);
        let mut r = f64_op(op, f(a), f(b), f(c));
        if sat {
            r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
        }
        return r.to_bits();
    }
    let f = |x: u64| f32::from_bits(x as u32);
    let mut r = f32_op(op, ftz, f(a), f(b), f(c));
    if sat {
        r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
    }
    u64::from(r.to_bits())
}

/// `add/sub/mul.{rz,rm,rp}.f32` (§9.7.3 `add`, `sub`, `mul`): the exact result rounded once
/// in `rnd`. A product of two f32 is exact in f64, so it is rounded from there. A sum is
/// split exactly into `s + e` (Knuth's TwoSum in f64): when `s` is itself an f32 value and
/// `e` is not zero, the exact sum lies just beside `s` and the result steps one f32 away from
/// `s` in `rnd`'s direction (or stays); otherwise `s` and `s + e` lie strictly between the
/// same two f32 values, and rounding `s` decides.
pub(crate) fn float_op_directed(
    op: FOp,
    ty: Type,
    ftz: bool,
    sat: bool,
    rnd: Rnd,
    a: u64,
    b: u64,
) -> u64 {
    debug_assert!(ty == Type::F32 && matches!(op, FOp::Add | FOp::Sub | FOp::Mul));
    let f = |x: u64| {
        let v = f32::from_bits(x as u32);
        f64::from(if ftz { flush(v) } else { v })
    };
    let (a, b) = (f(a), f(b));
    let b = if op == FOp::Sub { -b } else { b };
    let r = if op == FOp::Mul {
        float::f64_to_f32(a * b, rnd)
    } else {
        let s = a + b;
        let bb = s - a;
        let e = (a - (s - bb)) + (b - bb);
        let s32 = s as f32;
        if e == 0.0 || !s.is_finite() || f64::from(s32) != s {
            float::f64_to_f32(s, rnd)
        } else {
            // s ≠ 0 here: a zero sum of two floats is exact.
            let away = match rnd {
                Rnd::Rm => e < 0.0,
                Rnd::Rp => e > 0.0,
                Rnd::Rz => (e < 0.0) == (s > 0.0),
                Rnd::Rn | Rnd::Rna => false,
            };
            if !away {
                s32
            } else {
                // One f32 step in the direction of `e` (bits move away from zero when the
                // step grows the magnitude).
                let grow = (e > 0.0) == (s > 0.0);
                let bits = s32.to_bits();
                f32::from_bits(if grow { bits + 1 } else { bits - 1 })
            }
        }
    };
    let mut r = if ftz { flush(r) } else { r };
    if sat {
        r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
    }
    u64::from(canon(r).to_bits())
}

/// `setp`'s comparison.
pub(crate) fn compare(cmp: Cmp, ty: Type, ftz: bool, a: u64, b: u64) -> bool {
    if matches!(ty, Type::F32 | Type::F64) {
        let f = |x: u64| {
            if ty == Type::F64 {
                f64::from_bits(x)
            } else {
                let v = f32::from_bits(x as u32);
                f64::from(if ftz { flush(v) } else { v })
            }
        };
        let (x, y) = (f(a), f(b));
        let nan = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => x == y,
            Cmp::Ne => !nan && x != y,
            Cmp::Lt => x < y,
            Cmp::Le => x <= y,
            Cmp::Gt => x > y,
            Cmp::Ge => x >= y,
            Cmp::Equ => nan || x == y,
            Cmp::Neu => nan || x != y,
            Cmp::Ltu => nan || x < y,
            Cmp::Leu => nan || x <= y,
            Cmp::Gtu => nan || x > y,
            Cmp::Geu => nan || x >= y,
            Cmp::Num => !nan,
            Cmp::Nan => nan,
        };
    }
    let w = bits(ty);
    let ord = if signed(ty) {
        sext(a, w).cmp(&sext(b, w))
    } else {
        mask(a, w).cmp(&mask(b, w))
    };
    use std::cmp::Ordering::*;
    match cmp {
        Cmp::Eq | Cmp::Equ => ord == Equal,
        Cmp::Ne | Cmp::Neu => ord != Equal,
        Cmp::Lt | Cmp::Ltu => ord == Less,
        Cmp::Le | Cmp::Leu => ord != Greater,
        Cmp::Gt | Cmp::Gtu => ord == Greater,
        Cmp::Ge | Cmp::Geu => ord != Less,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// A float type's value as f64 (exact).
fn to_f64(ty: Type, v: u64) -> f64 {
    match ty {
        Type::F64 => f64::from_bits(v),
        Type::F32 => f64::from(f32::from_bits(v as u32)),
        Type::F16 => float::decode(mask(v, 16), F16),
        _ => float::decode(mask(v, 16), BF16),
    }
}

/// Rounds `x` into float type `ty` with `rnd`; applies `.satfinite`.
fn from_f64(ty: Type, x: f64, rnd: Rnd, satfinite: bool) -> u64 {
    let x = if satfinite && x.is_infinite() {
        let max = match ty {
            Type::F16 => 65504.0,
            Type::Bf16 => f64::from(f32::from_bits(0x7f7f_0000)),
            Type::F32 => f64::from(f32::MAX),
            _ => f64::MAX,
        };
        max.copysign(x)
    } else {
        x
    };
    match ty {
        Type::F64 => canon64(x).to_bits(),
        Type::F32 => u64::from(canon(float::f64_to_f32(x, rnd)).to_bits()),
        Type::F16 => float::round_to(x, F16, rnd),
        _ => float::round_to(x, BF16, rnd),
    }
}

/// `cvt.mode.dty.sty` of `a`.
pub(crate) fn cvt(dty: Type, sty: Type, m: CvtMode, a: u64) -> u64 {
    let (df, sf) = (super::decode::is_float(dty), super::decode::is_float(sty));
    let rnd = m.rnd.unwrap_or(if df { Rnd::Rn } else { Rnd::Rz });
    if sf {
        let mut x = to_f64(sty, a);
        if m.ftz && sty == Type::F32 {
            x = f64::from(flush(x as f32));
        }
        if df {
            if m.int {
                x = float::round_integral(x, rnd);
            }
            if m.sat {
                x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
            }
            if m.relu && (x < 0.0 || x.is_nan()) {
                x = if x.is_nan() { f64::NAN } else { 0.0 };
            }
            let r = from_f64(dty, x, rnd, m.satfinite);
            if m.ftz && dty == Type::F32 {
                return u64::from(flush(f32::from_bits(r as u32)).to_bits());
            }
            return r;
        }
        // Float to integer: round, then saturate to the destination's range; NaN is 0.
        let w = bits(dty);
        if x.is_nan() {
            return 0;
        }
        let r = float::round_integral(x, rnd);
        return if signed(dty) {
            let lo = -(2f64.powi(w as i32 - 1));
            let hi = 2f64.powi(w as i32 - 1) - 1.0;
            mask(r.clamp(lo, hi) as i64 as u64, w)
        } else {
            let hi = 2f64.powi(w as i32) - 1.0;
            mask(r.clamp(0.0, hi) as u64, w)
        };
    }
    let sw = bits(sty);
    if df {
        let x = if signed(sty) {
            sext(a, sw) as f64
        } else {
            mask(a, sw) as f64
        };
        return from_f64(dty, x, rnd, false);
    }
    // Integer to integer: extend by the source's signedness, then truncate or saturate.
    let dw = bits(dty);
    let v = if signed(sty) {
        i128::from(sext(a, sw))
    } else {
        i128::from(mask(a, sw))
    };
    if m.sat {
        let (lo, hi) = if signed(dty) {
            (-(1i128 << (dw - 1)), (1i128 << (dw - 1)) - 1)
        } else {
            (0, (1i128 << dw) - 1)
        };
        return mask(v.clamp(lo, hi) as u64, dw);
    }
    mask(v as u64, dw)
}

/// `cvt.rn[.relu][.satfinite].{f16x2,bf16x2}.f32 d, a, b`: `a` into the upper half; and
/// `cvt.rn.satfinite[.relu].{e4m3x2,e5m2x2}.f32 d, a, b` (§9.7.9.21), two bytes in 16 bits;
/// `cvt.rn.satfinite[.relu].e2m1x2.f32 d, a, b`, two nibbles in a byte (`a` the upper).
pub(crate) fn cvt_pack(dty: Type, m: CvtMode, a: u64, b: u64) -> u64 {
    if dty == Type::E2m1x2 {
        let one = |v: u64| {
            let mut x = f64::from(f32::from_bits(v as u32));
            if m.relu && x < 0.0 {
                x = 0.0;
            }
            u64::from(float::to_e2m1(x, m.rnd.unwrap_or(Rnd::Rn)))
        };
        return (one(a) << 4) | one(b);
    }
    if matches!(dty, Type::E4m3x2 | Type::E5m2x2) {
        let one = |v: u64| {
            let mut x = f64::from(f32::from_bits(v as u32));
            if m.relu && x < 0.0 {
                x = 0.0;
            }
            let rnd = m.rnd.unwrap_or(Rnd::Rn);
            u64::from(if dty == Type::E4m3x2 {
                float::to_e4m3(x, rnd)
            } else {
                float::to_e5m2(x, rnd)
            })
        };
        return (one(a) << 8) | one(b);
    }
    let one = if dty == Type::F16x2 {
        Type::F16
    } else {
        Type::Bf16
    };
    let hi = cvt(one, Type::F32, m, a);
    let lo = cvt(one, Type::F32, m, b);
    (hi << 16) | lo
}
