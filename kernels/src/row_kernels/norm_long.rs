//! `rmsnorm_long` and `layernorm_long` — the norms for rows longer than a register tile holds
//! with the weights beside it (every length up to `CAP`), bf16 in and out, f32 statistics.
//!
//! One CTA per row walks it in chunks of `C` columns twice: the first pass gathers the
//! statistics, the second reads the row again (usually from L2: the CTAs in flight hold a few
//! tens of MB of rows) with the chunk of `w` (and `b`) and writes y. Registers stay at one
//! chunk, so several rows are in flight per SM.
//!
//! LayerNorm's statistics are combined chunk by chunk with Chan et al.'s pairwise update
//! (mean and sum of squared deviations of each chunk about its own mean, then
//! `M2 = M2_a + M2_b + δ²·n_a·n_b / n`), which keeps the variance exact where
//! `E[x²] − E[x]²` would cancel.

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
    copy(t, x.tile(cta.x, 0));
    let mut ss = reduce_sum(t * t, axis = 1);
    for j in 1..cdiv(N, C) {
        copy(t, x.tile(cta.x, j));
        ss += reduce_sum(t * t, axis = 1);
    }
    let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
    for j in 0..cdiv(N, C) {
        copy(t, x.tile(cta.x, j));
        copy(g, w.tile(j));
        copy(y.tile(cta.x, j), t * r * g);
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
    let h = regs::<f32>([1, C], layout = blocked(vec = V));
    // Chunk 0: its count, mean and squared deviations.
    copy(t, x.tile(cta.x, 0));
    let n0 = cast::<f32>(min(N, C));
    let mut mean = reduce_sum(t, axis = 1) / n0;
    let d0 = select(col_index(t) < N, t - mean, 0.0);
    let mut m2 = reduce_sum(d0 * d0, axis = 1);
    for j in 1..cdiv(N, C) {
        copy(t, x.tile(cta.x, j));
        // Columns seen before this chunk, in it, and after it.
        let seen = cast::<f32>(j * C);
        let nb = cast::<f32>(min(N - j * C, C));
        let total = cast::<f32>(min(N, j * C + C));
        let mb = reduce_sum(t, axis = 1) / nb;
        let db = select(col_index(t) + j * C < N, t - mb, 0.0);
        let m2b = reduce_sum(db * db, axis = 1);
        let delta = mb - mean;
        mean = mean + delta * (nb / total);
        m2 = m2 + m2b + delta * delta * (seen * nb / total);
    }
    let r = rsqrt_approx(m2 / cast::<f32>(N) + eps);
    for j in 0..cdiv(N, C) {
        copy(t, x.tile(cta.x, j));
        copy(g, w.tile(j));
        copy(h, b.tile(j));
        copy(y.tile(cta.x, j), (t - mean) * r * g + h);
    }
}
