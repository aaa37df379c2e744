//! The host types of block-scaled FP4 (NVFP4 and MXFP4): `e2m1x2`, two FP4 E2M1 values in a
//! byte, and `ue4m3`, NVFP4's block-scale factor (PTX ISA §5.2.3 "Alternate Floating-Point
//! Data Formats").
//!
//! - E2M1: 1 sign, 2 exponent bits (bias 1), 1 fraction bit; no infinity, no NaN; the values
//!   ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}. Two to a byte, the element of the lower index in bits 3-0
//!   and the next in bits 7-4: the ISA's `.e2m1x2` packing (the `cvt` Semantics, §9.7.9.21:
//!   `cvt.rn.satfinite.e2m1x2.f32 d, a, b` writes `b` to `d[3:0]` and `a` to `d[7:4]`, and
//!   `cvt.rn.f16x2.e2m1x2` takes bits 3-0 to the f16x2's lower half, its first element).
//!   `tcgen05.mma.kind::mxf4nvf4` reads K-major rows of such bytes (K = 64 per instruction:
//!   32 bytes of a row).
//! - UE4M3: an unsigned E4M3 (bias 7, 3 fraction bits, `0x7f` NaN, bit 7 clear); the largest
//!   finite value 448. One factor per 16 elements of a row scales NVFP4
//!   (`kind::mxf4nvf4.block_scale.scale_vec::4X`, §9.7.16.10.7).
//!
//! Rounding is to nearest, ties to even, saturating at the largest finite value (what
//! `cvt.rn.satfinite` does).

#![allow(non_camel_case_types)]

use crate::fp8::{E4M3, Mini};

/// Two FP4 E2M1 values packed in one byte, by its bits (element 0 in the low nibble).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct e2m1x2(pub u8);

/// A UE4M3 scale factor (NVFP4's), by its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ue4m3(pub u8);

/// E2M1 as a minifloat: bias 1, 1 fraction bit, the largest finite code 7 (6.0); no NaN
/// (`nan` is never produced: a NaN input saturates to the largest magnitude).
const E2M1: Mini = Mini {
    frac: 1,
    bias: 1,
    max_bits: 0x7,
    nan: 0x7,
};

impl e2m1x2 {
    /// The nearest E2M1 nibble to `x` (ties to even, saturating at ±6).
    pub fn nibble(x: f32) -> u8 {
        let b = E2M1.round(x);
        // `Mini::round` puts the sign at bit 7; an E2M1 nibble keeps it at bit 3.
        (b & 0x7) | ((b >> 4) & 0x8)
    }
    /// The exact value of the E2M1 nibble `n` (its low 4 bits).
    pub fn nibble_value(n: u8) -> f64 {
        let v = E2M1.value(n & 0x7);
        if n & 0x8 != 0 { -v } else { v }
    }
    /// The pair (`lo` the element of the lower index), each rounded to E2M1.
    pub fn from_f32(lo: f32, hi: f32) -> e2m1x2 {
        e2m1x2(e2m1x2::nibble(lo) | (e2m1x2::nibble(hi) << 4))
    }
    /// Packs a row of values two to a byte (an odd length is padded with 0).
    pub fn pack(xs: &[f32]) -> Vec<e2m1x2> {
        xs.chunks(2)
            .map(|p| e2m1x2::from_f32(p[0], p.get(1).copied().unwrap_or(0.0)))
            .collect()
    }
    /// The exact values, the lower index first.
    pub fn to_f64(self) -> [f64; 2] {
        [
            e2m1x2::nibble_value(self.0),
            e2m1x2::nibble_value(self.0 >> 4),
        ]
    }
}

impl ue4m3 {
    /// The nearest UE4M3 to `x` ≥ 0 (ties to even, saturating at 448; negative to 0).
    pub fn from_f32(x: f32) -> ue4m3 {
        ue4m3(E4M3.round(x.max(0.0)) & 0x7f)
    }
    /// The exact value (NaN for `0x7f` and for bytes with bit 7 set, no UE4M3).
    pub fn to_f64(self) -> f64 {
        if self.0 & 0x80 != 0 || self.0 == E4M3.nan {
            f64::NAN
        } else {
            E4M3.value(self.0)
        }
    }
    /// The smallest UE4M3 `s` with `amax / s <= max` (`max` the element format's largest
    /// value, 6 for E2M1): a block's NVFP4 factor, chosen so no element saturates (the
    /// smallest positive factor for an all-zero block).
    pub fn for_block(amax: f64, max: f64) -> ue4m3 {
        (1..=E4M3.max_bits)
            .map(ue4m3)
            .find(|s| amax / s.to_f64() <= max)
            .unwrap_or(ue4m3(E4M3.max_bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2m1_values_and_nibble_order() {
        let all: Vec<f64> = (0..8).map(e2m1x2::nibble_value).collect();
        assert_eq!(all, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(e2m1x2::nibble_value(0xf), -6.0);
        // Element 0 in bits 3-0: 1.0 is code 2, -3.0 code 0xd.
        assert_eq!(e2m1x2::from_f32(1.0, -3.0), e2m1x2(0xd2));
        assert_eq!(e2m1x2(0xd2).to_f64(), [1.0, -3.0]);
        for n in 0..16u8 {
            assert_eq!(e2m1x2::nibble(e2m1x2::nibble_value(n) as f32), n, "{n:#x}");
        }
        assert_eq!(e2m1x2::nibble(5.0), 6); // tie 4 | 6 → even code (4.0)
        assert_eq!(e2m1x2::nibble(100.0), 7); // saturates at 6
        assert_eq!(e2m1x2::nibble(0.2), 0);
        assert_eq!(e2m1x2::pack(&[0.5, 1.5, 2.0]), [e2m1x2(0x31), e2m1x2(0x04)]);
    }

    #[test]
    fn ue4m3_values_and_block_factor() {
        assert_eq!(ue4m3(0x38).to_f64(), 1.0);
        assert_eq!(ue4m3(0x7e).to_f64(), 448.0);
        assert!(ue4m3(0x7f).to_f64().is_nan());
        assert!(ue4m3(0x80).to_f64().is_nan());
        assert_eq!(ue4m3::from_f32(-1.0), ue4m3(0));
        let s = ue4m3::for_block(7.0, 6.0);
        assert!(7.0 / s.to_f64() <= 6.0);
        assert!(7.0 / ue4m3(s.0 - 1).to_f64() > 6.0);
        assert_eq!(ue4m3::for_block(6.0, 6.0), ue4m3(0x38));
    }
}
