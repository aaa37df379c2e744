//! The 8-bit floating-point host types `e4m3` and `e5m2` (PTX ISA §5.2.3 "Alternate
//! Floating-Point Data Formats"), for tensors a `tcgen05.mma.kind::f8f6f4` reads: the bits,
//! and conversions from and to `f32` for filling inputs and checking results.
//!
//! - E4M3: 1 sign, 4 exponent (bias 7), 3 fraction bits; subnormals at exponent 0; no
//!   infinity; NaN only at `S.1111.111` (`0x7f`, `0xff`); the largest finite value 448.
//! - E5M2: 1 sign, 5 exponent (bias 15), 2 fraction bits, IEEE-like: infinities at
//!   `S.11111.00`, NaNs above; the largest finite value 57344.
//!
//! `from_f32` rounds to nearest, ties to even, and saturates at the largest finite value
//! (what `cvt.rn.satfinite.e4m3x2.f32` does, §9.7.9.21 "cvt"); NaN stays NaN.

#![allow(non_camel_case_types)]

/// An FP8 E4M3 value, by its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct e4m3(pub u8);

/// An FP8 E5M2 value, by its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct e5m2(pub u8);

/// The shape of a minifloat: fraction bits, exponent bias, largest finite bits (unsigned).
pub(crate) struct Mini {
    pub(crate) frac: i32,
    pub(crate) bias: i32,
    pub(crate) max_bits: u8,
    pub(crate) nan: u8,
}

pub(crate) const E4M3: Mini = Mini {
    frac: 3,
    bias: 7,
    max_bits: 0x7e,
    nan: 0x7f,
};
const E5M2: Mini = Mini {
    frac: 2,
    bias: 15,
    max_bits: 0x7b,
    nan: 0x7f,
};

impl Mini {
    /// The value of the unsigned bits `b` (below the NaN/infinity codes).
    pub(crate) fn value(&self, b: u8) -> f64 {
        let (e, f) = (
            i32::from(b) >> self.frac,
            f64::from(i32::from(b) & ((1 << self.frac) - 1)),
        );
        let one = f64::from(1 << self.frac);
        if e == 0 {
            f * 2f64.powi(1 - self.bias - self.frac)
        } else {
            (one + f) * 2f64.powi(e - self.bias - self.frac)
        }
    }

    /// `x` rounded to nearest (ties to even), saturating.
    pub(crate) fn round(&self, x: f32) -> u8 {
        if x.is_nan() {
            return self.nan;
        }
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = f64::from(x).abs();
        if a >= self.value(self.max_bits) {
            return sign | self.max_bits;
        }
        // The quantum at a's binade (subnormal quantum below the smallest normal).
        let e = if a == 0.0 {
            1 - self.bias
        } else {
            (a.log2().floor() as i32).max(1 - self.bias)
        };
        let q = 2f64.powi(e - self.frac);
        let n = a / q; // exact: a power-of-two scaling
        let mut r = n.floor();
        let rem = n - r;
        if rem > 0.5 || (rem == 0.5 && r % 2.0 == 1.0) {
            r += 1.0;
        }
        let v = r * q;
        // Encode v: find the bits whose value it is (v is representable by construction).
        let mut lo = 0u8;
        let mut hi = self.max_bits;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.value(mid) < v {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        sign | lo
    }
}

impl e4m3 {
    /// The nearest E4M3 to `x` (ties to even, saturating at ±448).
    pub fn from_f32(x: f32) -> e4m3 {
        e4m3(E4M3.round(x))
    }
    /// The exact value.
    pub fn to_f32(self) -> f32 {
        let m = self.0 & 0x7f;
        let v = if m == E4M3.nan {
            f64::NAN
        } else {
            E4M3.value(m)
        };
        (if self.0 & 0x80 != 0 { -v } else { v }) as f32
    }
}

impl e5m2 {
    /// The nearest E5M2 to `x` (ties to even, saturating at ±57344).
    pub fn from_f32(x: f32) -> e5m2 {
        e5m2(E5M2.round(x))
    }
    /// The exact value.
    pub fn to_f32(self) -> f32 {
        let m = self.0 & 0x7f;
        let v = match m {
            0x7c => f64::INFINITY,
            0x7d..=0x7f => f64::NAN,
            _ => E5M2.value(m),
        };
        (if self.0 & 0x80 != 0 { -v } else { v }) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_from_the_definitions() {
        assert_eq!(e4m3(0x38).to_f32(), 1.0);
        assert_eq!(e4m3(0x7e).to_f32(), 448.0);
        assert!(e4m3(0xff).to_f32().is_nan());
        assert_eq!(e4m3(0x01).to_f32(), 2f32.powi(-9));
        assert_eq!(e5m2(0x3c).to_f32(), 1.0);
        assert_eq!(e5m2(0x7b).to_f32(), 57344.0);
        assert!(e5m2(0x7c).to_f32().is_infinite());
        assert_eq!(e5m2(0x84).to_f32(), -(2f32.powi(-14)));
    }

    #[test]
    fn rounding_round_trips_and_ties_to_even() {
        for b in (0..=0x7eu8).chain(0x81..=0xfe) {
            assert_eq!(e4m3::from_f32(e4m3(b).to_f32()), e4m3(b), "{b:#x}");
        }
        for b in (0..0x7cu8).chain(0x81..0xfc) {
            assert_eq!(e5m2::from_f32(e5m2(b).to_f32()), e5m2(b), "{b:#x}");
        }
        assert_eq!(e4m3::from_f32(1.0625), e4m3(0x38)); // tie → even fraction
        assert_eq!(e4m3::from_f32(1.1875), e4m3(0x3a)); // tie → even fraction (up)
        assert_eq!(e4m3::from_f32(1000.0), e4m3(0x7e)); // saturates
        assert_eq!(e5m2::from_f32(-1e6), e5m2(0xfb));
        assert_eq!(e4m3::from_f32(2f32.powi(-11)), e4m3(0)); // below half the least subnormal
    }
}
