//! `layernorm` — LayerNorm forward, bf16 in and out, f32 statistics:
//! `y[r, c] = (x[r, c] − μ_r) · rsqrt(σ²_r + eps) · w[c] + b[c]`, σ² the biased variance.
//!
//! One CTA per `R` rows (4 of 1k, 2 of 2k columns, else 1; the weight and bias broadcast over
//! them from their column statistic's layout, as in `rmsnorm.rs`), the rows in registers: the
//! mean first, then the variance of the centred values (two passes over registers, not memory — the numerically sound order, exact where
//! `E[x²] − E[x]²` would cancel), so x is read once and y written once. Columns past `N` read
//! as 0 and are masked out of the centred values before they are squared.
//!
//! Registers as RMSNorm's: two tiles. The row is centred in place (`t` becomes `x − μ`), then
//! scaled in place by `r · w`, and the bias is loaded into the weight's tile — so the row, the
//! weight and the bias are never live together (three tiles held 114 registers at 256 threads,
//! two CTAs of 8k columns per SM; rows resident per SM are what a register kernel's bandwidth
//! follows). Capacities come as the ladder of `softmax.rs`.

use tirx::prelude::*;

#[tile_kernel(
    solves = layernorm,
    target = sm_90a,
    threads = T,
    grid = (cdiv(M, R), 1),
    // At one capacity the host takes the narrower CTA (the dispatcher's tie order, fewer
    // threads first): with its two tiles LayerNorm holds RMSNorm's registers, and RMSNorm's 32
    // values per thread measured faster than 16 (4091 against 3244 GB/s at 32768×8192). The
    // three-tile LayerNorm measured the wider CTAs faster (docs/perf/rows-h200-2026-12-02.md).
    configs(
        c1k = (T = 128, R = 4, C = 1024, V = 8),
        c2k = (T = 128, R = 2, C = 2048, V = 8),
        c4k = (T = 128, R = 1, C = 4096, V = 8),
        c8k = (T = 256, R = 1, C = 8192, V = 8),
        c16k = (T = 512, R = 1, C = 16384, V = 8),
        c4k_t256 = (T = 256, R = 1, C = 4096, V = 8),
        c8k_t512 = (T = 512, R = 1, C = 8192, V = 8),
        c16k_t1024 = (T = 1024, R = 1, C = 16384, V = 8),
        c3k = (T = 128, R = 1, C = 3072, V = 8),
        c5k = (T = 128, R = 1, C = 5120, V = 8),
        c6k = (T = 128, R = 1, C = 6144, V = 8),
        c7k = (T = 128, R = 1, C = 7168, V = 8),
        c10k = (T = 256, R = 1, C = 10240, V = 8),
        c12k = (T = 256, R = 1, C = 12288, V = 8),
        c14k = (T = 256, R = 1, C = 14336, V = 8),
    ),
)]
pub fn layernorm(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(N)] b: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([R, C], layout = blocked(vec = V));
    // The weights, one per column, broadcast over the tile's rows.
    let g = regs::<f32>([1, C], layout = stat(t, axis = 0));
    copy(t, x.tile(cta.x, 0));
    let n = cast::<f32>(N);
    let mean = reduce_sum(t, axis = 1) / n;
    t = select(col_index(t) < N, t - mean, 0.0);
    let var = reduce_sum(t * t, axis = 1) / n;
    let r = rsqrt_approx(var + eps);
    // The weights are loaded after the reductions (whose barriers keep them there), and the
    // bias into the weight's registers once they are used.
    copy(g, w.tile(0));
    t = t * r * g;
    copy(g, b.tile(0));
    copy(y.tile(cta.x, 0), t + g);
}
