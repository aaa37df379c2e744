//! `rmsnorm_long` and `layernorm_long` — the norms for rows longer than a register tile holds
//! with the weights beside it (every length up to `CAP`), bf16 in and out, f32 statistics.
//!
//! One CTA per row walks it in chunks of `C` columns twice: the first pass gathers the
//! statistics elementwise (each register sums over the chunks, so no chunk ends in a
//! reduction or a barrier) and reduces once at the end; the second reads the row again with
//! the chunk of `w` (and `b`) and writes y, walking the chunks backwards — the ones read last
//! are the likeliest still in L2 (the CTAs in flight hold a few tens of MB of rows). Registers
//! stay at a few tiles of one chunk, so several rows are in flight per SM.
//!
//! A row of odd length starts 16-byte aligned only every few rows: the chunks walk from the
//! row's first aligned column `h < V` and the `h` columns before it, where there are any, move
//! in a tile of their own clipped by `.within(M, h)` (as in `softmax_long`). The weights and
//! bias are then read at `h + j·C`, misaligned unless `h = 0`, element by element from L1/L2.
//!
//! Issue #32: the first form reduced every chunk (RMSNorm one barrier per chunk, LayerNorm's
//! Chan update two) and read the row forwards twice.
//!
//! LayerNorm's sums are of `x − μ₀`, `μ₀` the first chunk's mean: `σ² = E[(x − μ₀)²] −
//! (E[x] − μ₀)²`. The subtraction cancels only as far as `δ = μ − μ₀` exceeds σ, and it cannot
//! by much: the row's squared deviations include the first chunk's, so `N·σ² ≥ n₀·δ²`, and the
//! relative error of σ² stays within `(1 + N/n₀)` f32 roundings — 129 of them at 1M columns
//! of 8192-column chunks — where `E[x²] − E[x]²` is unbounded.

use tirx::prelude::*;

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(long = (T = 512, C = 8192, V = 8, CAP = 1048576)),
)]
pub fn rmsnorm_long(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    // Chunks from the row's first 16-byte aligned column `h`, then the head before it where
    // there is one (the module's docs); columns outside the tensor or the head's bound read 0.
    let h = min((V - cta.x * N % V) % V, N);
    let n = N - h;
    copy(t, x.at(cta.x, h));
    let mut sq = t * t;
    for j in 1..cdiv(n, C) {
        copy(t, x.at(cta.x, h + j * C));
        sq = fma(t, t, sq);
    }
    if h > 0 {
        copy(t, x.at(cta.x, 0).within(M, h));
        sq = fma(t, t, sq);
    }
    let r = rsqrt_approx(reduce_sum(sq, axis = 1) / cast::<f32>(N) + eps);
    for i in 0..cdiv(n, C) {
        let j = cdiv(n, C) - 1 - i;
        copy(t, x.at(cta.x, h + j * C));
        copy(g, w.at(h + j * C));
        copy(y.at(cta.x, h + j * C), t * r * g);
    }
    if h > 0 {
        copy(t, x.at(cta.x, 0).within(M, h));
        copy(g, w.at(0).within(h));
        copy(y.at(cta.x, 0).within(M, h), t * r * g);
    }
}

#[tile_kernel(
    solves = layernorm,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(long = (T = 512, C = 8192, V = 8, CAP = 1048576)),
)]
pub fn layernorm_long(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(N)] b: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    let h = min((V - cta.x * N % V) % V, N);
    let n = N - h;
    // The shift: the mean of the row's first chunk after the head (columns past `N` read as 0).
    copy(t, x.at(cta.x, h));
    let shift = reduce_sum(t, axis = 1) / cast::<f32>(max(min(n, C), 1));
    let mut s1 = select(col_index(t) < n, t - shift, 0.0);
    let mut s2 = s1 * s1;
    for j in 1..n / C {
        copy(t, x.at(cta.x, h + j * C));
        s1 = s1 + (t - shift);
        s2 = fma(t - shift, t - shift, s2);
    }
    if n % C != 0 && n > C {
        copy(t, x.at(cta.x, h + n / C * C));
        t = select(col_index(t) + n / C * C < n, t - shift, 0.0);
        s1 = s1 + t;
        s2 = fma(t, t, s2);
    }
    if h > 0 {
        copy(t, x.at(cta.x, 0).within(M, h));
        t = select(col_index(t) < h, t - shift, 0.0);
        s1 = s1 + t;
        s2 = fma(t, t, s2);
    }
    let nn = cast::<f32>(N);
    let dm = reduce_sum(s1, axis = 1) / nn;
    let var = max(reduce_sum(s2, axis = 1) / nn - dm * dm, 0.0);
    let mean = shift + dm;
    let r = rsqrt_approx(var + eps);
    for i in 0..cdiv(n, C) {
        let j = cdiv(n, C) - 1 - i;
        copy(t, x.at(cta.x, h + j * C));
        copy(g, w.at(h + j * C));
        t = (t - mean) * r * g;
        copy(g, b.at(h + j * C));
        copy(y.at(cta.x, h + j * C), t + g);
    }
    if h > 0 {
        copy(t, x.at(cta.x, 0).within(M, h));
        copy(g, w.at(0).within(h));
        t = (t - mean) * r * g;
        copy(g, b.at(0).within(h));
        copy(y.at(cta.x, 0).within(M, h), t + g);
    }
}
