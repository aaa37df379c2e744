//! Quantisers to FP8 (OCP E4M3, the `e4m3fn` of torch): bf16 `x` in, `e4m3` `q` and f32
//! scales out, with `x ≈ q · s` — the convention `torch._scaled_mm` reads (row-wise scales)
//! and the DeepSeek-V3 activation recipe (one scale per 1×128 block).
//!
//! - `quant_rowwise`: one scale per row, `s[i] = max(amax(|x[i, :]|) / 448, 2⁻¹²⁶)`, and
//!   `q[i, j] = e4m3(x[i, j] · (1 / s[i]))`;
//! - `quant_block`: one scale per 128 consecutive columns of a row, `s[i, b]` over
//!   `x[i, 128·b .. 128·b + 128]`, scales `[M, cdiv(N, 128)]` row-major.
//!
//! The arithmetic, in f32 and in this order (the CPU reference repeats it bit for bit):
//! `a = amax` (exact: `abs` and `max` do not round), `s = max(a / 448, 2⁻¹²⁶)` (`div.rn.f32`),
//! `r = 1 / s` (`rcp.rn.f32`), `q = e4m3(x · r)` (`mul.f32`, then `cvt.rn.satfinite.e4m3x2.f32`,
//! PTX ISA §9.7.9.21: ties to even, beyond ±448 saturated). 448 is E4M3's largest finite
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
//! stored. `quant_rowwise`'s capacities are the row kernels' ladder (`C` at least `N`).

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
    let t = regs::<f32>([R, 128], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, cta.y));
    let a = reduce_max(abs(t), axis = 1);
    let sc = max(a / 448.0, 1.1754944e-38);
    copy(s.tile(cta.x, cta.y), sc);
    copy(q.tile(cta.x, cta.y), t * rcp(sc));
}
