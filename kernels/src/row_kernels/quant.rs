//! Quantisers to FP8 (OCP E4M3, the `e4m3fn` of torch): bf16 `x` in, `e4m3` `q` and f32
//! scales out, with `x ≈ q · s` — the convention `torch._scaled_mm` reads (row-wise scales)
//! and the DeepSeek-V3 activation recipe (one scale per 1×128 block).
//!
//! - `quant_rowwise`: one scale per row, `s[i] = max(amax(|x[i, :]|) / 448, 2⁻¹²⁶)`, and
//!   `q[i, j] = e4m3(x[i, j] · (1 / s[i]))`;
//! - `quant_block`: one scale per 128 consecutive columns of a row, `s[i, b]` over
//!   `x[i, 128·b .. 128·b + 128]`, scales `[M, cdiv(N, 128)]` row-major; `quant_block_mn`
//!   the same scales MN-major, `[cdiv(N, 128), 4·cdiv(M, 4)]` (`gemm_sm90_fp8_block_mn`'s `sa`);
//! - `quant_mxfp8`: MXFP8 for the Blackwell block-scaled GEMM (`gemm_sm100_mxfp8`): a UE8M0
//!   power of two per 32 elements, written in the GEMM's factor image (its own docs below);
//! - `quant_nvfp4`: NVFP4 for `gemm_sm100_nvfp4` (sm_100a): E2M1 elements two a byte and a
//!   UE4M3 factor per 16, in the GEMM's factor image (its own docs below). Verified in the
//!   emulator and by ptxas only; it has not run on a GPU.
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

/// [`quant_block`] writing the scales MN-major: `s` is `[NB, M4]` (`M4 = 4·cdiv(M, 4)`), each
/// 128-column block's row scales contiguous and every block's row 16-byte aligned — the `sa`
/// layout `gemm_sm90_fp8_block_mn` loads by TMA (`Epilogue::ScaleBlocksMn`). The same
/// arithmetic, bit for bit; a CTA's `R` scales go through shared memory: the row statistic
/// stored as an `[R, 1]` column (`st.shared`), read back through a `[1, R]` view of the same
/// bytes by one TMA store into `s`'s row `cta.y` (§9.7.9.25.5.2; clipped at `M4`). The padding
/// columns `M ≤ m < M4` inside the last row tile get the scale of a zero row (2⁻¹²⁶, what rows
/// past `M`, loaded as 0, give); those past the last row tile are not written.
#[tile_kernel(
    target = sm_90a,
    threads = T,
    grid = (cdiv(M, R), cdiv(N, 128)),
    configs(
        r32 = (T = 128, R = 32, V = 8),
        r64 = (T = 256, R = 64, V = 8),
    ),
)]
pub fn quant_block_mn(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] q: Tensor<e4m3>,
    #[shape(NB, M4)] s: Tensor<f32>,
) {
    static_assert(NB == cdiv(N, 128), "one scale per 128 columns");
    static_assert(
        M4 == cdiv(M, 4) * 4,
        "s's rows hold M scales padded to a multiple of 4 (16-byte aligned)",
    );
    let s_col = smem::<f32>([R, 1]);
    let s_row = smem::<f32>([1, R], alias = s_col);
    let t = regs::<f32>([R, 128], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, cta.y));
    let a = reduce_max(abs(t), axis = 1);
    let sc = max(a / 448.0, 1.1754944e-38);
    copy(s_col, sc);
    fence::proxy_async();
    sync_threads();
    #[scope(thread = 0)]
    {
        tma::store(s.tile(cta.y, cta.x), s_row);
        tma::wait_group(0);
    }
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

/// NVFP4 for the Blackwell block-scaled GEMM (`gemm_sm100_nvfp4`): FP4 E2M1 elements, two a
/// byte (`q` is `[M, K / 2]` `e2m1x2` bytes, the lower column in the low nibble), and one
/// UE4M3 factor per 16 consecutive elements of a row, written straight into the image the
/// GEMM's `sfa`/`sfb` is (`tirx::runtime::scale_image`'s layout: `[MS, KS]` =
/// `[cdiv(M, 128)·32, cdiv(K, 64)·16]` bytes, factor `(r, f)` at row `32·(r / 128) + r % 32`,
/// byte `16·(f / 4) + 4·((r / 32) % 4) + f % 4`). sm_100a only: the elements are rounded by
/// `cvt.rn.satfinite.e2m1x2.f32`, which sm_90a lacks. NVFP4's per-tensor f32 scale is the
/// caller's, as it is the GEMM's: this quantises `x` as given (pre-divide it by the
/// per-tensor scale for inputs whose blocks' `amax` exceeds `6·448 = 2688` or falls far
/// below `6·2⁻⁶`, and fold that scale into the product).
///
/// The factor of a block is the smallest UE4M3 value `s` with `amax / s ≤ 6` (so no element
/// saturates; `tirx::ue4m3::for_block`, which the GEMM's tests quantise with), at most 448,
/// from `y = amax / 6` (`div.rn`, which never crosses a UE4M3 value for a bf16 `amax`: the
/// exact quotient differs from one by at least `2⁻⁸·y`):
/// - `y > 2⁻⁶` (UE4M3's normal range): `y` rounded *up* to three fraction bits in its bits,
///   `(bits(y) + 2²⁰ − 1) >> 20`, the exponent rebiased from f32's 127 to E4M3's 7 (−960 on
///   the shifted bits), capped at 448 (byte `0x7e`);
/// - else (subnormal, quanta of 2⁻⁹): `ceil(y · 2⁹)` quanta, `cvt.rzi` of `y · 2⁹` plus one
///   when it was not whole, at least 1 (an all-zero block gets 2⁻⁹: its elements are 0).
///
/// The factor's value `s` is rebuilt from its byte (`(byte + 960) << 20` as f32 bits, or
/// `byte · 2⁻⁹`) and the elements are `e2m1(x · (1 / s))` (`rcp.rn.f32`, `mul.f32`, then the
/// pair's `cvt`: ties to even, beyond ±6 saturated) — the CPU reference
/// (`rows::quant::quantise_nvfp4`) repeats this bit for bit.
///
/// One CTA per 32 rows × 64 columns: four 32 × 16 blocks, all four loaded before any is
/// quantised, each block's 32 factors one column of an image box (byte
/// `16·cta.y + 4·(cta.x % 4) + j`) — the four a 4-byte cell. Factors of rows past `M` inside
/// the last row tile, and of blocks past `K` inside the last 64-column tile, are written as
/// 1 (2⁻⁹: their elements are zeros); image rows past the last row tile are not written —
/// allocate `sf` zeroed. `K` must be even (`q` holds its bytes).
#[tile_module]
pub mod nvfp4 {
    use tirx::prelude::*;

    /// Block `j` (of four) of the CTA's 32 × 64 columns into `t`.
    #[tile_fn]
    fn load_block(t: Regs, x: Global, j: u32) {
        copy(t, x.tile(cta.x, 4 * cta.y + j));
    }

    /// Block `j`'s factor into the image and its elements, divided by the factor, into `q`.
    #[tile_fn]
    fn quantise_block(t: Regs, q: Global, sf: Global, j: u32) {
        let y = reduce_max(abs(t), axis = 1) / 6.0;
        let b = to_bits(y);
        // Normal: y rounded up to three fraction bits, rebiased, at most 448 (0x7e).
        let normal = min((b + 1048575) >> 20, 1086) - 960;
        // Subnormal: ceil(y · 2⁹) quanta of 2⁻⁹, at least one.
        let z = y * 512.0;
        let i = cast::<u32>(z);
        let sub = max(i + select(cast::<f32>(i) < z, 1, 0), 1);
        // 1015021568: the bits of 2⁻⁶.
        let e = select(b > 1015021568, normal, sub);
        copy(sf.at(32 * (cta.x / 4), 16 * cta.y + 4 * (cta.x % 4) + j), e);
        let s = select(
            e >= 8,
            from_bits((e + 960) << 20),
            cast::<f32>(e) * 0.001953125,
        );
        copy(q.tile(cta.x, 4 * cta.y + j), t * rcp(s));
    }

    /// The quantiser (see the module's docs).
    #[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 32), cdiv(K, 64)))]
    pub fn quant_nvfp4(
        #[shape(M, K)] x: Tensor<bf16>,
        #[shape(M, KB)] q: Tensor<e2m1x2>,
        #[shape(MS, KS)] sf: Tensor<ue4m3>,
    ) {
        static_assert(
            2 * KB == K,
            "q holds two values a byte: [M, K / 2] with K even",
        );
        static_assert(
            MS == cdiv(M, 128) * 32 && KS == cdiv(K, 64) * 16,
            "sf is the factor image of x: [cdiv(M, 128)·32, cdiv(K, 64)·16] bytes",
        );
        let t0 = regs::<f32>([32, 16], layout = blocked(vec = 4));
        let t1 = regs::<f32>([32, 16], layout = blocked(vec = 4));
        let t2 = regs::<f32>([32, 16], layout = blocked(vec = 4));
        let t3 = regs::<f32>([32, 16], layout = blocked(vec = 4));
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
