//! `layernorm` — LayerNorm forward, bf16 in and out, f32 statistics:
//! `y[r, c] = (x[r, c] − μ_r) · rsqrt(σ²_r + eps) · w[c] + b[c]`, σ² the biased variance.
//!
//! One CTA per row, the row in registers: the mean first, then the variance of the centred
//! values (two passes over registers, not memory — the numerically sound order), so x is read
//! once and y written once. Columns past `N` read as 0 and are masked out of the centred
//! values before they are squared.

use tirx::prelude::*;

#[tile_kernel(
    solves = layernorm,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    // At 4096 and 8192 columns the wider CTAs measured faster (docs/perf/rows-h200-2026-12-02.md):
    // the row cost model prefers them for LayerNorm (`row_kernels/request.rs`), not this order.
    configs(
        c1k = (T = 128, C = 1024, V = 8),
        c2k = (T = 128, C = 2048, V = 8),
        c4k_t256 = (T = 256, C = 4096, V = 8),
        c8k_t512 = (T = 512, C = 8192, V = 8),
        c16k = (T = 512, C = 16384, V = 8),
        c4k = (T = 128, C = 4096, V = 8),
        c8k = (T = 256, C = 8192, V = 8),
        c16k_t1024 = (T = 1024, C = 16384, V = 8),
    ),
)]
pub fn layernorm(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(N)] b: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    let h = regs::<f32>([1, C], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, 0));
    let n = cast::<f32>(N);
    let mean = reduce_sum(t, axis = 1) / n;
    let d = select(col_index(t) < N, t - mean, 0.0);
    let var = reduce_sum(d * d, axis = 1) / n;
    let r = rsqrt_approx(var + eps);
    // The weights are loaded after the reductions (whose barriers keep them there), so their
    // registers are not live while the row's are needed alone.
    copy(g, w.tile(0));
    copy(h, b.tile(0));
    copy(y.tile(cta.x, 0), d * r * g + h);
}
