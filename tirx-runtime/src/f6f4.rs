//! The host types of `tcgen05.mma.kind::f8f6f4`'s 6- and 4-bit operands (PTX ISA §5.2.3
//! "Alternate Floating-Point Data Formats"): `e3m2` and `e2m3` (FP6) and `e2m1` (FP4), each a
//! byte of the **padded shared-memory image** the kind reads (PTX ISA §9.7.16, "Packing
//! format used for matrix A and B by .kind::mxf8f6f4 in shared memory"; the TMA types
//! `.b6x16_p32` / `.b4x16_p64` of §5.5.1 "Tensor Dimension, Size and Format" name the same
//! groups): each 16 consecutive elements of a row packed contiguously, element `i` in bits
//! `w·i .. w·i + w` of the group's little-endian bytes (`w` = 6 or 4: 12 or 8 bytes), then
//! padding to 16 bytes (zero here). A tensor's last dimension counts elements — one byte of
//! footprint each — and is a multiple of 16.
//!
//! - E3M2: 1 sign, 3 exponent bits (bias 3), 2 fraction bits; no infinity or NaN; the largest
//!   magnitude 28.
//! - E2M3: 1 sign, 2 exponent bits (bias 1), 3 fraction bits; the largest magnitude 7.5.
//! - E2M1: 1 sign, 2 exponent bits (bias 1), 1 fraction bit; ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
//!
//! Rounding is to nearest, ties to even, saturating at the largest magnitude (what
//! `cvt.rn.satfinite` does); a NaN input saturates too (the formats have none).

#![allow(non_camel_case_types)]

use crate::fp8::Mini;

/// A byte of an FP6 E3M2 padded image (16 values in each 16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct e3m2(pub u8);

/// A byte of an FP6 E2M3 padded image (16 values in each 16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct e2m3(pub u8);

/// A byte of an FP4 E2M1 padded image (16 values in the first 8 of each 16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct e2m1(pub u8);

/// One of the padded sub-byte formats: its minifloat and its width.
struct Format {
    mini: Mini,
    bits: u32,
}

const E3M2: Format = Format {
    mini: Mini {
        frac: 2,
        bias: 3,
        max_bits: 0x1f,
        nan: 0x1f,
    },
    bits: 6,
};
const E2M3: Format = Format {
    mini: Mini {
        frac: 3,
        bias: 1,
        max_bits: 0x1f,
        nan: 0x1f,
    },
    bits: 6,
};
const E2M1: Format = Format {
    mini: Mini {
        frac: 1,
        bias: 1,
        max_bits: 0x7,
        nan: 0x7,
    },
    bits: 4,
};

impl Format {
    /// The nearest code to `x` (sign at bit `bits − 1`).
    fn code(&self, x: f32) -> u32 {
        let b = self.mini.round(x);
        // `Mini::round` puts the sign at bit 7.
        u32::from(b & 0x7f) | (u32::from(b >> 7) << (self.bits - 1))
    }
    /// The exact value of the low `bits` of `c`.
    fn value(&self, c: u32) -> f64 {
        let mag = c & ((1 << (self.bits - 1)) - 1);
        let v = self.mini.value(mag as u8);
        if c >> (self.bits - 1) & 1 == 1 { -v } else { v }
    }
    /// The padded image of `xs` (a multiple of 16 values).
    fn pack(&self, xs: &[f32]) -> Vec<u8> {
        assert!(
            xs.len().is_multiple_of(16),
            "a padded f8f6f4 image holds rows of 16-element groups, not {} values",
            xs.len()
        );
        let mut out = vec![0u8; xs.len()];
        for (g, group) in xs.chunks(16).enumerate() {
            let mut bits = 0u128;
            for (i, &x) in group.iter().enumerate() {
                bits |= u128::from(self.code(x)) << (self.bits * i as u32);
            }
            out[g * 16..g * 16 + 16].copy_from_slice(&bits.to_le_bytes());
        }
        out
    }
    /// The exact values of a padded image (16 a group; padding ignored).
    fn unpack(&self, image: &[u8]) -> Vec<f64> {
        image
            .chunks(16)
            .flat_map(|g| {
                let mut b = [0u8; 16];
                b[..g.len()].copy_from_slice(g);
                let bits = u128::from_le_bytes(b);
                (0..16).map(move |i| {
                    self.value((bits >> (self.bits * i)) as u32 & ((1 << self.bits) - 1))
                })
            })
            .collect()
    }
}

macro_rules! padded_type {
    ($t:ident, $f:expr) => {
        impl $t {
            /// The nearest code to `x` (ties to even, saturating), sign in the top bit.
            pub fn code(x: f32) -> u32 {
                $f.code(x)
            }
            /// The exact value of a code.
            pub fn value(code: u32) -> f64 {
                $f.value(code)
            }
            /// The padded image of a row (or rows) of values, a multiple of 16 of them: 16
            /// bytes per 16 values.
            pub fn pack(xs: &[f32]) -> Vec<$t> {
                $f.pack(xs).into_iter().map($t).collect()
            }
            /// The exact values of a padded image (16 per 16 bytes).
            pub fn unpack(image: &[$t]) -> Vec<f64> {
                let bytes: Vec<u8> = image.iter().map(|b| b.0).collect();
                $f.unpack(&bytes)
            }
        }
    };
}

padded_type!(e3m2, E3M2);
padded_type!(e2m3, E2M3);
padded_type!(e2m1, E2M1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_the_formats() {
        // E3M2: the largest 28 = 1.75 · 2^4 (code 0x1f); the least subnormal 0.0625.
        assert_eq!(e3m2::value(0x1f), 28.0);
        assert_eq!(e3m2::value(0x01), 0.0625);
        assert_eq!(e3m2::value(0x20 | 0x0c), -1.0);
        // E2M3: the largest 7.5 = 1.875 · 2^2; 1.0 is 0b001_000; the least subnormal 0.125.
        assert_eq!(e2m3::value(0x1f), 7.5);
        assert_eq!(e2m3::value(0x08), 1.0);
        assert_eq!(e2m3::value(0x01), 0.125);
        let e2m1s: Vec<f64> = (0..8).map(e2m1::value).collect();
        assert_eq!(e2m1s, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(e2m1::value(0xf), -6.0);
        for c in 0..64 {
            assert_eq!(e3m2::code(e3m2::value(c) as f32), c, "e3m2 {c:#x}");
            assert_eq!(e2m3::code(e2m3::value(c) as f32), c, "e2m3 {c:#x}");
        }
        assert_eq!(e3m2::code(100.0), 0x1f); // saturates
        assert_eq!(e2m3::code(-9.0), 0x3f);
    }

    #[test]
    fn the_padded_image() {
        // 16 E2M1 values: 0.5 (1), 1 (2), …: nibble i at bits 4i of the first 8 bytes.
        let xs: Vec<f32> = (0..16).map(|i| [0.5, 1.0][i % 2]).collect();
        let img = e2m1::pack(&xs);
        assert_eq!(img.len(), 16);
        assert!(img[..8].iter().all(|b| b.0 == 0x21), "{img:?}");
        assert!(img[8..].iter().all(|b| b.0 == 0));
        // E3M2: element 1 = 1.0 (0x0c) at bits 6-11: byte 0 bits 6-7 = 0, byte 1 = 0x03.
        let mut ys = vec![0.0f32; 16];
        ys[1] = 1.0;
        let img = e3m2::pack(&ys);
        assert_eq!((img[0].0, img[1].0), (0x00, 0x03));
        assert!(img[12..].iter().all(|b| b.0 == 0), "4 bytes of padding");
        let zs: Vec<f32> = (0..32).map(|i| i as f32 / 4.0 - 4.0).collect();
        let back = e2m3::unpack(&e2m3::pack(&zs));
        for (z, b) in zs.iter().zip(&back) {
            assert_eq!(e2m3::value(e2m3::code(*z)), *b);
        }
    }
}
