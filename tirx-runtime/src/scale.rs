//! The block-scale factor host type `ue8m0` (PTX ISA §5.2.3 "Alternate Floating-Point Data
//! Formats", the unsigned 8-bit exponent `.ue8m0`): no sign, no fraction, the value
//! 2^(e − 127) for `e` in 0..=254, `0xff` NaN. Block-scaled MMAs (`tcgen05.mma
//! .kind::mxf8f6f4.block_scale`, §9.7.16.10.7) multiply each 32-element block of A's rows and
//! B's columns by one such factor (the OCP MX formats' E8M0 scale).
//!
//! [`scale_image`] lays a matrix of factors out as the kernels read them: the 512-byte
//! images `tcgen05.cp.32x128b.warpx4` copies (§9.7.16.9.2), one per 128 rows × 4 factors.

#![allow(non_camel_case_types)]

/// A UE8M0 scale factor, by its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ue8m0(pub u8);

impl ue8m0 {
    /// The factor 2^`exp` (`exp` in −127..=127).
    pub fn pow2(exp: i32) -> ue8m0 {
        ue8m0((exp.clamp(-127, 127) + 127) as u8)
    }
    /// The exact value (NaN for `0xff`).
    pub fn to_f64(self) -> f64 {
        if self.0 == 0xff {
            f64::NAN
        } else {
            2f64.powi(i32::from(self.0) - 127)
        }
    }
    /// The smallest power of two 2^e with `amax / 2^e <= max` (`max` the largest finite value
    /// of the element format, 448 for E4M3): the OCP MX scale of a block whose largest
    /// magnitude is `amax` (2^−127 for an all-zero block).
    pub fn for_block(amax: f64, max: f64) -> ue8m0 {
        if amax <= 0.0 || !amax.is_finite() {
            return ue8m0(0);
        }
        let mut e = (amax / max).log2().ceil() as i32;
        // The log can be off by one ulp at a power of two.
        while e > -127 && amax / 2f64.powi(e - 1) <= max {
            e -= 1;
        }
        while amax / 2f64.powi(e) > max {
            e += 1;
        }
        ue8m0::pow2(e)
    }
}

/// The shared-memory image of one scale tile: `rows` (a multiple of 128) × 4 factors, as
/// `[rows / 4, 16]` bytes, factor `(r, f)` at byte `16·(32·(r / 128) + r % 32) + 4·((r / 32) %
/// 4) + f` — 128-row blocks one after another, each the 32 rows × 16 bytes that
/// `tcgen05.cp.32x128b.warpx4` copies into every 32-lane quarter of tensor memory, where the
/// MMA reads row `r`'s factor `f` at lane `r % 32`, column `r / 32`, byte `f` (PTX ISA
/// §9.7.16.10.7 and its scale-factor figures for `scale_vec::1X`).
pub fn image_offset(r: usize, f: usize) -> usize {
    16 * (32 * (r / 128) + r % 32) + 4 * ((r / 32) % 4) + f
}

/// The shape of [`scale_image`]'s tensor for `rows` × `cols` factors: `[ceil(rows / 128) · 32,
/// ceil(cols / 4) · 16]` (what a host checks a factor image against before a launch).
pub fn image_shape(rows: usize, cols: usize) -> [usize; 2] {
    [rows.div_ceil(128) * 32, cols.div_ceil(4) * 16]
}

/// A matrix of factors (`ue8m0`, or NVFP4's `ue4m3`), `rows` × `cols` (row-major, one per
/// 32 — NVFP4: 16 — elements of a row of the operand), as the 2-D tensor a kernel loads by
/// TMA: `[ceil(rows / 128) · 32, ceil(cols / 4) · 16]` bytes, each 32 × 16 box one 128 × 4
/// image ([`image_offset`]); a K tile needing more than 4 factors a row (FP4: 8 or 16) loads
/// the boxes of consecutive columns, one per cell. Factors past `rows` or `cols` are `fill`.
/// Returns the bytes and their shape.
pub fn scale_image<T: Copy>(
    factors: &[T],
    rows: usize,
    cols: usize,
    fill: T,
) -> (Vec<T>, [usize; 2]) {
    let shape = image_shape(rows, cols);
    let mut out = vec![fill; shape[0] * shape[1]];
    for r in 0..rows {
        for c in 0..cols {
            // Block (r / 128, c / 4) at rows 32·(r / 128), bytes 16·(c / 4) of the tensor.
            let o = image_offset(r % 128, c % 4);
            let (row, byte) = (32 * (r / 128) + o / 16, 16 * (c / 4) + o % 16);
            out[row * shape[1] + byte] = factors[r * cols + c];
        }
    }
    (out, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_block_scales() {
        assert_eq!(ue8m0(127).to_f64(), 1.0);
        assert_eq!(ue8m0(0).to_f64(), 2f64.powi(-127));
        assert!(ue8m0(0xff).to_f64().is_nan());
        assert_eq!(ue8m0::pow2(-3), ue8m0(124));
        // amax 448 fits E4M3 unscaled; 449 needs 2; 100 fits at 2^-2 (100·4 = 400 ≤ 448).
        assert_eq!(ue8m0::for_block(448.0, 448.0), ue8m0(127));
        assert_eq!(ue8m0::for_block(449.0, 448.0), ue8m0(128));
        assert_eq!(ue8m0::for_block(100.0, 448.0), ue8m0(125));
    }

    #[test]
    fn the_image_is_the_copy_shape() {
        // Row 37's factor 2: lane 5, column 1, byte 2 → byte 16·5 + 4 + 2.
        assert_eq!(image_offset(37, 2), 86);
        assert_eq!(image_offset(127, 3), 16 * 31 + 12 + 3);
        assert_eq!(image_offset(128, 0), 512);
        let f: Vec<ue8m0> = (0..130 * 5).map(|i| ue8m0(i as u8)).collect();
        let (img, shape) = scale_image(&f, 130, 5, ue8m0(127));
        assert_eq!(shape, [64, 32]);
        // (129, 4): block (1, 1), row 32 + 1, byte 16 + 0·4 + 0.
        assert_eq!(img[33 * 32 + 16], f[129 * 5 + 4]);
        assert_eq!(img[33 * 32 + 17], ue8m0(127));
    }
}
