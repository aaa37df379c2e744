//! Floating-point formats and rounding, written from IEEE 754-2008 and the PTX ISA's
//! conversion rules (§9.7.9 "cvt", §5.2.2 fundamental types; bf16 is the upper half of
//! an f32: 1 sign, 8 exponent, 7 fraction bits).
//!
//! One routine, [`round_to`], rounds any finite binary value `sig · 2^exp` into a narrower
//! format with a chosen rounding mode, subnormals and overflow included; f16, bf16 and f32
//! targets are instances of it. NaN results are PTX's canonical NaNs (`0x7fff` for the
//! 16-bit formats, `0x7fffffff` for f32), as the ISA specifies for `cvt` and arithmetic.

/// A rounding mode (PTX ISA §9.7.9 "Rounding modifiers": `.rn .rz .rm .rp`, and `.rna`
/// round-to-nearest, ties away from zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rnd {
    /// Nearest, ties to even.
    Rn,
    /// Nearest, ties away from zero.
    Rna,
    /// Towards zero.
    Rz,
    /// Towards −∞.
    Rm,
    /// Towards +∞.
    Rp,
}

/// A binary floating-point format narrower than f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// Fraction (trailing significand) bits.
    pub frac: u32,
    /// Exponent field bits.
    pub exp: u32,
}

/// IEEE binary16.
pub const F16: Format = Format { frac: 10, exp: 5 };
/// bfloat16.
pub const BF16: Format = Format { frac: 7, exp: 8 };
/// IEEE binary32.
pub const F32: Format = Format { frac: 23, exp: 8 };

impl Format {
    fn bias(self) -> i32 {
        (1 << (self.exp - 1)) - 1
    }
    fn width(self) -> u32 {
        1 + self.exp + self.frac
    }
    /// The canonical NaN PTX produces in this format.
    pub fn canonical_nan(self) -> u64 {
        (1u64 << (self.width() - 1)) - 1
    }
    fn inf(self, neg: bool) -> u64 {
        let e = ((1u64 << self.exp) - 1) << self.frac;
        e | (u64::from(neg) << (self.width() - 1))
    }
    fn max_finite(self, neg: bool) -> u64 {
        self.inf(neg) - 1
    }
}

/// Decomposes an f64 into (negative, significand, exponent) with `|x| = sig · 2^exp`, or
/// `None` for an infinity or NaN.
fn split_f64(x: f64) -> Option<(bool, u64, i32)> {
    let b = x.to_bits();
    let neg = b >> 63 != 0;
    let e = ((b >> 52) & 0x7ff) as i32;
    let f = b & ((1 << 52) - 1);
    match e {
        0x7ff => None,
        0 => Some((neg, f, -1074)),
        _ => Some((neg, f | (1 << 52), e - 1075)),
    }
}

/// Rounds `x` (any f64, so every f32 exactly) into `fmt` with `rnd`; returns the bits.
pub fn round_to(x: f64, fmt: Format, rnd: Rnd) -> u64 {
    if x.is_nan() {
        return fmt.canonical_nan();
    }
    let Some((neg, sig, exp)) = split_f64(x) else {
        return fmt.inf(x < 0.0);
    };
    let sign = u64::from(neg) << (fmt.width() - 1);
    if sig == 0 {
        return sign;
    }
    let bias = fmt.bias();
    let emin = 1 - bias; // exponent of the smallest normal
    let msb = 63 - sig.leading_zeros() as i32;
    let log2 = exp + msb;
    // The quantum (weight of the last kept bit) at this magnitude.
    let q_exp = log2.max(emin) - fmt.frac as i32;
    let shift = q_exp - exp;
    let (mut q, up) = if shift <= 0 {
        (sig << (-shift) as u32, false)
    } else {
        let (kept, rem, half) = if shift >= 64 {
            (0, u128::from(sig), 1u128 << (shift.min(127) - 1) as u32)
        } else {
            let s = shift as u32;
            (
                sig >> s,
                u128::from(sig & ((1u64 << s) - 1)),
                1u128 << (s - 1),
            )
        };
        let inexact = rem != 0;
        let up = match rnd {
            Rnd::Rn => rem > half || (rem == half && kept & 1 == 1),
            Rnd::Rna => rem >= half,
            Rnd::Rz => false,
            Rnd::Rm => neg && inexact,
            Rnd::Rp => !neg && inexact,
        };
        (kept, up)
    };
    q += u64::from(up);
    let mut q_exp = q_exp;
    if q >> (fmt.frac + 1) != 0 {
        q >>= 1;
        q_exp += 1;
    }
    if q >> fmt.frac == 0 {
        return sign | q; // subnormal (or zero after rounding)
    }
    let e = q_exp + fmt.frac as i32 + bias;
    if e >= (1 << fmt.exp) - 1 {
        let to_inf = match rnd {
            Rnd::Rn | Rnd::Rna => true,
            Rnd::Rz => false,
            Rnd::Rm => neg,
            Rnd::Rp => !neg,
        };
        return if to_inf {
            fmt.inf(neg)
        } else {
            fmt.max_finite(neg)
        };
    }
    sign | ((e as u64) << fmt.frac) | (q & ((1 << fmt.frac) - 1))
}

/// `x` rounded to OCP FP8 E4M3 (the `e4m3fn` of the OCP 8-bit float spec: bias 7, no
/// infinity, S.1111.111 the only NaN, largest finite 448) with `.satfinite` (PTX ISA
/// §9.7.9.21: beyond ±448, infinities included, gives ±448; NaN gives 0x7f).
///
/// E4M3 is rounded as a 5-bit-exponent format (bias 15) of `x · 2⁻⁸`: the two share their
/// quanta at every magnitude below 2⁹ (the smallest normal 2⁻⁶ of E4M3 is 2⁻¹⁴ of the wider
/// one, subnormals included), so the 9-bit result's low eight bits are E4M3's whenever it
/// does not saturate.
pub fn to_e4m3(x: f64, rnd: Rnd) -> u8 {
    if x.is_nan() {
        return 0x7f;
    }
    let wide = round_to(x * 2f64.powi(-8), Format { frac: 3, exp: 5 }, rnd);
    let neg = (wide >> 8) & 1 == 1;
    let mag = (wide & 0xff).min(0x7e) as u8;
    (u8::from(neg) << 7) | mag
}

/// `x` rounded to OCP FP8 E5M2 (IEEE-like: bias 15, infinities, largest finite 57344) with
/// `.satfinite`: out of range, infinities included, gives the largest finite; NaN 0x7f.
pub fn to_e5m2(x: f64, rnd: Rnd) -> u8 {
    if x.is_nan() {
        return 0x7f;
    }
    let b = round_to(x, Format { frac: 2, exp: 5 }, rnd) as u8;
    if b & 0x7f >= 0x7c {
        (b & 0x80) | 0x7b
    } else {
        b
    }
}

/// `x` rounded to OCP FP4 E2M1 (bias 1, one fraction bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and
/// their negatives; no infinity, no NaN) with `.satfinite` (§9.7.9.21: beyond ±6, infinities
/// included, gives ±6), in the low four bits.
///
/// E2M1 is rounded as a 5-bit-exponent format (bias 15) of `x · 2⁻¹⁴`: E2M1's smallest normal
/// 1 is the wider format's 2⁻¹⁴ and both have one fraction bit, so their quanta agree at every
/// magnitude below 8 (the subnormal 0.5 included) and the result's low three bits are E2M1's
/// whenever it does not saturate. E2M1 has no NaN; the ISA does not say what a NaN source
/// gives, and this takes +6 (0x7), the positive largest value — not checked on hardware.
pub fn to_e2m1(x: f64, rnd: Rnd) -> u8 {
    if x.is_nan() {
        return 0x7;
    }
    let wide = round_to(x * 2f64.powi(-14), Format { frac: 1, exp: 5 }, rnd);
    let neg = (wide >> 6) & 1 == 1;
    let mag = (wide & 0x3f).min(0x7) as u8;
    (u8::from(neg) << 3) | mag
}

/// Decodes a value of `fmt` (f16 or bf16 bits) exactly into an f64.
pub fn decode(bits: u64, fmt: Format) -> f64 {
    let neg = bits >> (fmt.width() - 1) & 1 == 1;
    let e = ((bits >> fmt.frac) & ((1 << fmt.exp) - 1)) as i32;
    let f = bits & ((1 << fmt.frac) - 1);
    let mag = if e == (1 << fmt.exp) - 1 {
        if f == 0 { f64::INFINITY } else { f64::NAN }
    } else if e == 0 {
        f as f64 * 2f64.powi(1 - fmt.bias() - fmt.frac as i32)
    } else {
        (f | (1 << fmt.frac)) as f64 * 2f64.powi(e - fmt.bias() - fmt.frac as i32)
    };
    if neg { -mag } else { mag }
}

/// f32 → bf16 bits with `rnd`.
pub fn f32_to_bf16(x: f32, rnd: Rnd) -> u16 {
    round_to(f64::from(x), BF16, rnd) as u16
}

/// f32 → f16 bits with `rnd`.
pub fn f32_to_f16(x: f32, rnd: Rnd) -> u16 {
    round_to(f64::from(x), F16, rnd) as u16
}

/// bf16 bits → f32 (exact).
pub fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// f16 bits → f32 (exact).
pub fn f16_to_f32(b: u16) -> f32 {
    decode(u64::from(b), F16) as f32
}

/// f64 → f32 with `rnd`.
pub fn f64_to_f32(x: f64, rnd: Rnd) -> f32 {
    f32::from_bits(round_to(x, F32, rnd) as u32)
}

/// Whether `x` is subnormal.
pub fn is_subnormal(x: f32) -> bool {
    x != 0.0 && x.abs() < f32::MIN_POSITIVE
}

/// `.ftz`: a subnormal f32 becomes a zero of its sign (PTX ISA §9.7.3 "Floating-Point
/// Instructions": subnormal inputs and results flushed to sign-preserving zero).
pub fn ftz(x: f32) -> f32 {
    if is_subnormal(x) {
        if x.is_sign_negative() { -0.0 } else { 0.0 }
    } else {
        x
    }
}

/// An f32 result with a NaN replaced by the canonical NaN `0x7fffffff`.
pub fn canon(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(0x7fff_ffff)
    } else {
        x
    }
}

/// An f64 result with a NaN replaced by the canonical NaN.
pub fn canon64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(0x7fff_ffff_ffff_ffff)
    } else {
        x
    }
}

/// Rounds `x` to an integral value with `rnd` (`cvt.rni/rzi/rmi/rpi` between floats, and
/// before a float-to-integer conversion).
pub fn round_integral(x: f64, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rn => {
            let r = x.round();
            // `round` ties away from zero; move a tie back to the even neighbour.
            if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                r - x.signum()
            } else {
                r
            }
        }
        Rnd::Rna => x.round(),
        Rnd::Rz => x.trunc(),
        Rnd::Rm => x.floor(),
        Rnd::Rp => x.ceil(),
    }
}
