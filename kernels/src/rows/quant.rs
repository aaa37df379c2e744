//! The CPU reference of the FP8 quantisers (`crate::row_kernels::quant`) and their checker.
//!
//! [`quantise_e4m3`] repeats the kernels' f32 arithmetic step by step — `a = max |x|`,
//! `s = max(a / 448, 2⁻¹²⁶)`, `r = 1 / s`, `q = e4m3(x · r)` (IEEE f32 operations round to
//! nearest even on the host as `div.rn`/`rcp.rn`/`mul` do on the GPU) — with the host's own
//! E4M3 rounding ([`tirx::e4m3::from_f32`], written from the format, not from the emulator), so
//! a kernel's bytes must equal it exactly. [`check_e4m3`] also checks, in f64, what the bytes
//! mean: `|q·s − x| ≤ 2⁻⁴·|x| + 2⁻¹⁰·s` (half an E4M3 quantum at 3 fraction bits; the
//! subnormal quantum is 2⁻⁹) plus the f32 roundings of `r` and `x·r`, and that no `|q|`
//! exceeds 448. [`quantise_mxfp8`] is MXFP8's (E4M3 elements, a UE8M0 factor per 32),
//! [`quantise_nvfp4`] NVFP4's (E2M1 elements two a byte, a UE4M3 factor per 16).

use half::bf16;
use tirx::{e2m1x2, e4m3, ue4m3, ue8m0};

/// The smallest normal f32, 2⁻¹²⁶: the floor of every scale.
pub const SCALE_FLOOR: f32 = f32::MIN_POSITIVE;

/// The largest finite E4M3 value.
pub const E4M3_MAX: f32 = 448.0;

/// `x` (`m × n` row-major) quantised with one scale per `block` consecutive columns of a row
/// (`block = n` for one per row): the E4M3 bytes `m × n` and the scales `m × cdiv(n, block)`.
pub fn quantise_e4m3(x: &[bf16], m: usize, n: usize, block: usize) -> (Vec<u8>, Vec<f32>) {
    let nb = n.div_ceil(block);
    let mut q = vec![0u8; m * n];
    let mut s = vec![0f32; m * nb];
    for i in 0..m {
        for b in 0..nb {
            let cols = b * block..((b + 1) * block).min(n);
            let a = cols
                .clone()
                .map(|j| x[i * n + j].to_f32().abs())
                .fold(0f32, f32::max);
            let sc = (a / E4M3_MAX).max(SCALE_FLOOR);
            let r = 1.0 / sc;
            s[i * nb + b] = sc;
            for j in cols {
                q[i * n + j] = e4m3::from_f32(x[i * n + j].to_f32() * r).0;
            }
        }
    }
    (q, s)
}

/// `w` (`n × k` row-major, a weight matrix B given N×K) quantised with one scale per
/// `block × block` tile (DeepSeek-V3's 128×128 weight blocks; the edge tiles partial): the
/// E4M3 bytes `n × k` and the scales `cdiv(n, block) × cdiv(k, block)` row-major, by
/// [`quantise_e4m3`]'s arithmetic with the amax over the whole tile.
pub fn quantise_e4m3_tiles(w: &[bf16], n: usize, k: usize, block: usize) -> (Vec<u8>, Vec<f32>) {
    let (nb, kb) = (n.div_ceil(block), k.div_ceil(block));
    let mut q = vec![0u8; n * k];
    let mut s = vec![0f32; nb * kb];
    for bi in 0..nb {
        let rows = bi * block..((bi + 1) * block).min(n);
        for bj in 0..kb {
            let cols = bj * block..((bj + 1) * block).min(k);
            let a = rows
                .clone()
                .flat_map(|i| cols.clone().map(move |j| (i, j)))
                .map(|(i, j)| w[i * k + j].to_f32().abs())
                .fold(0f32, f32::max);
            let sc = (a / E4M3_MAX).max(SCALE_FLOOR);
            let r = 1.0 / sc;
            s[bi * kb + bj] = sc;
            for i in rows.clone() {
                for j in cols.clone() {
                    q[i * k + j] = e4m3::from_f32(w[i * k + j].to_f32() * r).0;
                }
            }
        }
    }
    (q, s)
}

/// Checks a quantiser's output `q`, `s` against [`quantise_e4m3`] (bit for bit) and the
/// f64 error bound; the first mismatch, by position, as the error.
pub fn check_e4m3(
    x: &[bf16],
    (q, s): (&[u8], &[f32]),
    m: usize,
    n: usize,
    block: usize,
) -> Result<(), String> {
    let nb = n.div_ceil(block);
    let (wq, ws) = quantise_e4m3(x, m, n, block);
    for i in 0..m {
        for b in 0..nb {
            let k = i * nb + b;
            if s[k].to_bits() != ws[k].to_bits() {
                return Err(format!("s[{i}][{b}] = {:e}, want {:e}", s[k], ws[k]));
            }
        }
        for j in 0..n {
            let k = i * n + j;
            if q[k] != wq[k] {
                return Err(format!("q[{i}][{j}] = {:#04x}, want {:#04x}", q[k], wq[k]));
            }
            let sc = f64::from(s[i * nb + j / block]);
            let xv = x[k].to_f64();
            let qv = f64::from(e4m3(q[k]).to_f32());
            if qv.abs() > f64::from(E4M3_MAX) {
                return Err(format!("|q[{i}][{j}]| = {qv} > 448"));
            }
            let bound = xv.abs() * (0.0625 + 1e-6) + sc * 2f64.powi(-10) * (1.0 + 1e-6);
            if (qv * sc - xv).abs() > bound {
                return Err(format!(
                    "q[{i}][{j}]·s = {} is {} from x = {xv} (bound {bound})",
                    qv * sc,
                    (qv * sc - xv).abs()
                ));
            }
        }
    }
    Ok(())
}

/// `x` (`m × k` row-major) quantised to MXFP8: the E4M3 bytes `m × k` and the factors
/// `m × cdiv(k, 32)` (row-major), each the smallest power of two `2^e` with `amax / 2^e ≤ 448`
/// ([`tirx::ue8m0::for_block`], written from the OCP MX recipe independently of the kernel's
/// bit arithmetic), the elements `e4m3(x · 2^−e)` (exact scaling, one rounding).
pub fn quantise_mxfp8(x: &[bf16], m: usize, k: usize) -> (Vec<u8>, Vec<ue8m0>) {
    let kb = k.div_ceil(32);
    let mut q = vec![0u8; m * k];
    let mut f = vec![ue8m0(0); m * kb];
    for r in 0..m {
        for b in 0..kb {
            let cols = b * 32..(b * 32 + 32).min(k);
            let amax = cols
                .clone()
                .map(|c| x[r * k + c].to_f64().abs())
                .fold(0.0, f64::max);
            let s = ue8m0::for_block(amax, f64::from(E4M3_MAX));
            f[r * kb + b] = s;
            for c in cols {
                q[r * k + c] = e4m3::from_f32((x[r * k + c].to_f64() / s.to_f64()) as f32).0;
            }
        }
    }
    (q, f)
}

/// The factor image `quant_mxfp8` leaves for `m × k` input whose factors (`m × cdiv(k, 32)`,
/// from [`quantise_mxfp8`]) are `factors`: `scale_image`'s layout, the factors of the rows and
/// blocks its grid covers (32-row tiles, 128-column tiles: past `m` or `k` inside them, 0)
/// written, every other byte `fill` (what the tensor held before).
pub fn mxfp8_image(factors: &[ue8m0], m: usize, k: usize, fill: ue8m0) -> Vec<ue8m0> {
    let (kb, rows, cols) = (k.div_ceil(32), m.div_ceil(32) * 32, k.div_ceil(128) * 4);
    let mut f = vec![ue8m0(0); rows * cols];
    for r in 0..m {
        f[r * cols..r * cols + kb].copy_from_slice(&factors[r * kb..(r + 1) * kb]);
    }
    tirx::runtime::scale_image(&f, rows, cols, fill).0
}

/// `x` (`m × k` row-major, `k` even) quantised to NVFP4 without a per-tensor scale: the
/// `e2m1x2` bytes `m × k / 2` (the lower column in the low nibble) and the factors
/// `m × cdiv(k, 16)` (row-major), each the smallest UE4M3 `s` with `amax / s ≤ 6`
/// ([`ue4m3::for_block`], a search over the codes in f64, independent of the kernel's bit
/// arithmetic), the elements `e2m1(x · r)` with `r = 1 / s` in f32 (the kernel's `rcp.rn`
/// and `mul`) rounded by the host's E2M1 ([`e2m1x2::from_f32`]).
pub fn quantise_nvfp4(x: &[bf16], m: usize, k: usize) -> (Vec<u8>, Vec<ue4m3>) {
    let kb = k.div_ceil(16);
    let mut q = vec![0u8; m * k / 2];
    let mut f = vec![ue4m3(0); m * kb];
    for r in 0..m {
        for b in 0..kb {
            let cols = b * 16..(b * 16 + 16).min(k);
            let amax = cols
                .clone()
                .map(|c| x[r * k + c].to_f64().abs())
                .fold(0.0, f64::max);
            let s = ue4m3::for_block(amax, 6.0);
            f[r * kb + b] = s;
            let rcp = 1.0 / s.to_f64() as f32;
            for c in cols.step_by(2) {
                let v = |c: usize| x[r * k + c].to_f32() * rcp;
                q[(r * k + c) / 2] = e2m1x2::from_f32(v(c), v(c + 1)).0;
            }
        }
    }
    (q, f)
}

/// The factor image `quant_nvfp4` leaves for `m × k` input whose factors (`m × cdiv(k, 16)`,
/// from [`quantise_nvfp4`]) are `factors`: `scale_image`'s layout, the factors of the rows
/// and blocks its grid covers (32-row tiles, 64-column tiles: past `m` or `k` inside them,
/// the all-zero block's 2⁻⁹, byte 1) written, every other byte `fill`.
pub fn nvfp4_image(factors: &[ue4m3], m: usize, k: usize, fill: ue4m3) -> Vec<ue4m3> {
    let (kb, rows, cols) = (k.div_ceil(16), m.div_ceil(32) * 32, k.div_ceil(64) * 4);
    let mut f = vec![ue4m3(1); rows * cols];
    for r in 0..m {
        f[r * cols..r * cols + kb].copy_from_slice(&factors[r * kb..(r + 1) * kb]);
    }
    tirx::runtime::scale_image(&f, rows, cols, fill).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_scales_rows_onto_448_and_floors_zero_rows() {
        let x: Vec<bf16> = [0.5f32, -2.0, 1.0, 0.0, 0.0, 0.0]
            .iter()
            .map(|v| bf16::from_f32(*v))
            .collect();
        let (q, s) = quantise_e4m3(&x, 2, 3, 3);
        assert_eq!(s, vec![2.0 / 448.0, SCALE_FLOOR]);
        // -2.0 is the row's amax: −448 (0xfe); 1.0 is 224 (0x76), 0.5 is 112 (0x6e).
        assert_eq!(q, vec![0x6e, 0xfe, 0x76, 0, 0, 0]);
        assert!(check_e4m3(&x, (&q, &s), 2, 3, 3).is_ok());
        let mut bad = q.clone();
        bad[2] ^= 1;
        assert!(check_e4m3(&x, (&bad, &s), 2, 3, 3).is_err());
    }
}
