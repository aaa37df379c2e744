//! `softmax_cluster`, `rmsnorm_cluster` — long rows split over the CTAs of a cluster, each
//! CTA holding `C` columns of the row in registers, the statistics combined across the
//! cluster through distributed shared memory (`reduce_… (…, across = cluster)`).
//!
//! A 32k-column row in one CTA's registers is half the SM's register file: one CTA per SM,
//! and nothing loads while it reduces and stores (measured: 25% occupancy, 0.75× QuACK). Split
//! over a cluster of `CS` CTAs, each holds `32768 / CS` columns — the register footprint of
//! the 8k kernel, which runs at 98% of the copy roof — so several CTAs of different rows
//! share an SM and their phases interleave. The cost is one exchange per statistic: each CTA
//! pushes its value into every CTA with `st.async` and waits on its own mbarrier (the push
//! form of `across = cluster`, no cluster barrier per statistic; measured below with the
//! earlier pull form, one cluster barrier per statistic).
//! Columns past `N` are masked in the loads (0) and, for softmax, in the max (−∞); CTA
//! `cta_rank` holds columns `[cta_rank·C, (cta_rank + 1)·C)` of row `cta.x / CS`.
//!
//! Measured on the H200 (`docs/perf/rows-h200-2026-12-02b.md`): correct on every length
//! (`gpu_rows`), but slower than the staged kernels at 8192×32768 — softmax 2837 GB/s (x4),
//! RMSNorm 2877 (x8), against 3561 and 3518 staged; ncu (softmax x4): 50% theoretical
//! occupancy, 48% achieved, DRAM 52%, cluster occupancy 12% — each CTA waits twice for the
//! slowest of its peers. The host never takes them while a faster kernel of the same capacity
//! is listed before them; they stay as the shipped user of cross-cluster reductions.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(
        x4 = (T = 256, CS = 4, C = 8192, V = 8, CAP = 32768),
        x8 = (T = 128, CS = 8, C = 4096, V = 8, CAP = 32768),
    ),
)]
pub fn softmax_cluster(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    copy(t, x.tile(cta.x / CS, cta_rank));
    let v = select(col_index(t) + cta_rank * C < N, t, f32::NEG_INFINITY);
    let nml = reduce_max(v, axis = 1, across = cluster) * -1.442695;
    let e = exp2_approx(fma(v, 1.442695, nml));
    let s = reduce_sum(e, axis = 1, across = cluster);
    copy(y.tile(cta.x / CS, cta_rank), e * rcp_approx(s));
}

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(
        x4 = (T = 256, CS = 4, C = 8192, V = 8, CAP = 32768),
        x8 = (T = 128, CS = 8, C = 4096, V = 8, CAP = 32768),
    ),
)]
pub fn rmsnorm_cluster(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    copy(t, x.tile(cta.x / CS, cta_rank));
    let ss = reduce_sum(t * t, axis = 1, across = cluster);
    let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
    copy(g, w.tile(cta_rank));
    copy(y.tile(cta.x / CS, cta_rank), t * r * g);
}
