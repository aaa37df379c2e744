//! Quantisers to FP8 (OCP E4M3, the `e4m3fn` of torch): bf16 `x` in, `e4m3` `q` and f32
//! scales out, with `x ≈ q · s` — the convention `torch._scaled_mm` reads (row-wise scales)
//! and the DeepSeek-V3 activation recipe (one scale per 1×128 block).
//!
//! - `quant_rowwise`: one scale per row, `s[i] = max(amax(|x[i, :]|) / 448, 2⁻¹²⁶)`, and
//!   `q[i, j] = e4m3(x[i, j] · (1 / s[i]))`;
//! - `quant_block`: one scale per 128 consecutive columns of a row, `s[i, b]` over
//!   `x[i, 128·b .. 128·b + 128]`, scales `[M, cdiv(N, 128)]` row-major;
//! - `quant_mxfp8`: MXFP8 for the Blackwell block-scaled GEMM (`gemm_sm100_mxfp8`): a UE8M0
//!   power of two per 32 elements, written in the GEMM's factor image (its own docs below).
//!
//! The arithmetic of the first two, in f32 and in this order (the CPU reference repeats it
//! bit for bit): `a = amax` (exact: `abs` and `max` do not round), `s = max(a / 448, 2⁻¹²⁶)`
//! (`div.rn.f32`), `r = 1 / s` (`rcp.rn.f32`), `q = e4m3(x · r)` (`mul.f32`, then
//! `cvt.rn.satfinite.e4m3x2.f32`, PTX ISA §9.7.9.21: ties to even, beyond ±448 saturated). 448 is E4M3's largest finite
//! value, so the row's largest element lands on (or rounds to) ±448 and none saturates but by
//! the rounding of `x · r`.
//!
//! The floor 2⁻¹²⁶ (the smallest normal f32) instead of `a / 448` is the guard for a row of
//! zeros (`a = 0`: the scale is 2⁻¹²⁶, every `q` is 0 and `q · s` is exactly the row) and for
//! rows so small that `a / 448` is subnormal, where `1 / s` would overflow to ∞ and turn a 0
//! into NaN. A scale is therefore never 0, never subnormal and `1 / s` is finite. Non-finite
//! inputs are not special-cased: an ∞ makes the row's scale ∞ and its `q` 0 (the ∞ itself NaN);
//! `max.f32` skips NaN, so a NaN element quantises to NaN and leaves the others' scale alone.
//!
//! Layout: a CTA holds its tile in registers, `blocked` (each thread runs of `V = 8`
//! consecutive columns: 16-byte loads of x, 8-byte stores of q), so x is read once and q
//! written once. Columns past `N` load as 0 and add nothing to `amax`; rows past `M` are not
//! stored. `quant_rowwise`'s capacities are the row kernels' ladder; each kernel's shape
//! relations (`N <= C`, the scales' extents) are `static_assert`s the launch planner checks,
//! so a row longer than the config holds or a scale tensor of the wrong shape is a
//! `RuntimeError::ShapeAssert` before any launch.

use tirx::prelude::*;

/// Row-wise E4M3: one f32 scale per row. `s` is the vector `[M]`.
#[tile_kernel(
    target = sm_90a,
    threads = T,
    grid = (cdiv(M, R), 1),
    configs(
        c1k = (T = 128, R = 4, C = 1024, V = 8),
        c2k = (T = 128, R = 2, C = 2048, V = 8),
        c4k = (T = 128, R = 1, C = 4096, V = 8),
        c8k = (T = 256, R = 1, C = 8192, V = 8),
        c16k = (T = 512, R = 1, C = 16384, V = 8),
    ),
)]
pub fn quant_rowwise(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] q: Tensor<e4m3>,
    #[shape(M)] s: Tensor<f32>,
) {
    static_assert(N <= C, "a row fits the config's C columns");
    let t = regs::<f32>([R, C], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, 0));
    let a = reduce_max(abs(t), axis = 1);
    let sc = max(a / 448.0, 1.1754944e-38);
    copy(s.tile(cta.x), sc);
    copy(q.tile(cta.x, 0), t * rcp(sc));
}

/// 1×128-block E4M3 (DeepSeek-V3's activations): one f32 scale per 128 consecutive columns
/// of a row; `s` is `[M, NB]` with `NB = cdiv(N, 128)`. A CTA quantises `R` rows of one
/// block column.
#[tile_kernel(
    target = sm_90a,
    threads = T,
    grid = (cdiv(M, R), cdiv(N, 128)),
    configs(
        r32 = (T = 128, R = 32, V = 8),
        r64 = (T = 256, R = 64, V = 8),
    ),
)]
pub fn quant_block(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] q: Tensor<e4m3>,
    #[shape(M, NB)] s: Tensor<f32>,
) {
    static_assert(NB == cdiv(N, 128), "one scale per 128 columns");
    let t = regs::<f32>([R, 128], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, cta.y));
    let a = reduce_max(abs(t), axis = 1);
    let sc = max(a / 448.0, 1.1754944e-38);
    copy(s.tile(cta.x, cta.y), sc);
    copy(q.tile(cta.x, cta.y), t * rcp(sc));
}

/// MXFP8 (the OCP MX E4M3 format): one UE8M0 factor per 32 consecutive elements of a row,
/// written straight into the image `tcgen05.cp.32x128b.warpx4` copies — the `sfa`/`sfb`
/// tensor `gemm_sm100_mxfp8` loads by TMA (`tirx::runtime::scale_image`'s layout: `[MS, KS]`
/// = `[cdiv(M, 128)·32, cdiv(K, 128)·16]` bytes, factor `(r, f)` at row `32·(r / 128) + r % 32`,
/// byte `16·(f / 4) + 4·((r / 32) % 4) + f % 4`).
///
/// The factor of a block is the smallest power of two `2^e` with `amax / 2^e ≤ 448` (so no
/// element saturates; `ue8m0::for_block`, which the GEMM's tests quantise with), from the
/// bits of `y = amax / 448`: for a normal `y`, `e + 127 = (bits(y) + 2²³ − 1) >> 23` (the
/// exponent field, plus one when any fraction bit is set: `ceil(log2 y)`, and E8M0's bias is
/// f32's, 127); for `y ≤ 2⁻¹²⁷` (a zero or tiny block) the factor is E8M0's smallest, 2⁻¹²⁷
/// (byte 0), and `2⁻¹²⁶` for `y` up to 2⁻¹²⁶. `y`'s rounding (`div.rn`) never crosses a power
/// of two for a bf16 `amax` (8 significant bits against 448 = 7·2⁶), so `e` is exact. The
/// elements are `e4m3(x · 2^−e)`, `2^−e` built from its bits (`(254 − (e + 127)) << 23`):
/// exact scaling, then one rounding.
///
/// The OCP MX v1.0 spec (§6.3, "Converting vectors to MX") derives the shared exponent as
/// `floor(log2 amax) − emax` (emax = 8 for E4M3), which lets up to `512·2^e` in and clamps
/// values above `448·2^e` on conversion; this kernel takes the next power of two instead
/// where that would clamp, as `for_block` does, so quantisation never saturates.
///
/// One CTA per 32 rows × 128 columns: four 32 × 32 blocks, all four loaded before any is
/// quantised (four 16-byte loads in flight a thread), each block's 32 factors one column of
/// an image box, stored by `sf.at(…)` one byte each — the four columns are a 4-byte cell.
/// Factors of rows past `M` inside the last row tile, and of blocks past `K` inside the last
/// 128-column tile, are written as 0 (2⁻¹²⁷: zeros TMA fills past `K` times 2⁻¹²⁷ add
/// nothing); image rows past the last row tile are not written — allocate `sf` zeroed
/// (`rt.zeros`), so the GEMM never reads a poisoned NaN factor.
#[tile_module]
pub mod mxfp8 {
    use tirx::prelude::*;

    /// Block `j` (of four) of the CTA's 32 × 128 columns into `t`.
    #[tile_fn]
    fn load_block(t: Regs, x: Global, j: u32) {
        copy(t, x.tile(cta.x, 4 * cta.y + j));
    }

    /// Block `j`'s factor into the image (byte `4·(cta.x % 4) + j` of cell `cta.y`, rows
    /// `32·(cta.x / 4)` on) and its elements, scaled by the factor's inverse, into `q`.
    #[tile_fn]
    fn quantise_block(t: Regs, q: Global, sf: Global, j: u32) {
        let y = to_bits(reduce_max(abs(t), axis = 1) / 448.0);
        // The biased exponent of the factor: E8M0's bits.
        let e = select(y <= 4194304, 0, (y + 8388607) >> 23);
        copy(sf.at(32 * (cta.x / 4), 16 * cta.y + 4 * (cta.x % 4) + j), e);
        copy(q.tile(cta.x, 4 * cta.y + j), t * from_bits((254 - e) << 23));
    }

    /// The quantiser (see the module's docs).
    #[tile_kernel(
        targets(sm_90a, sm_100a),
        threads = 128,
        grid = (cdiv(M, 32), cdiv(K, 128)),
    )]
    pub fn quant_mxfp8(
        #[shape(M, K)] x: Tensor<bf16>,
        #[shape(M, K)] q: Tensor<e4m3>,
        #[shape(MS, KS)] sf: Tensor<ue8m0>,
    ) {
        static_assert(
            MS == cdiv(M, 128) * 32 && KS == cdiv(K, 128) * 16,
            "sf is the factor image of x: [cdiv(M, 128)·32, cdiv(K, 128)·16] bytes",
        );
        let t0 = regs::<f32>([32, 32], layout = blocked(vec = 8));
        let t1 = regs::<f32>([32, 32], layout = blocked(vec = 8));
        let t2 = regs::<f32>([32, 32], layout = blocked(vec = 8));
        let t3 = regs::<f32>([32, 32], layout = blocked(vec = 8));
        load_block(t0, x, 0);
        load_block(t1, x, 1);
        load_block(t2, x, 2);
        load_block(t3, x, 3);
        quantise_block(t0, q, sf, 0);
        quantise_block(t1, q, sf, 1);
        quantise_block(t2, q, sf, 2);
        quantise_block(t3, q, sf, 3);
    }
}
