//! `softmax_staged`, `rmsnorm_staged` — the row kernels for long rows, the row staged in
//! shared memory by TMA (bf16 in and out, f32 statistics).
//!
//! A row held in registers costs 4 bytes of register file per column: a 32k-column row is
//! half an SM's registers, so one CTA runs per SM and nothing loads while it reduces and
//! stores (measured: 25% occupancy, DRAM at 52% of peak). Here one thread issues the whole row
//! as TMA boxes of 256 columns, each chunk of `K` columns onto a barrier of its own (`K / 256`
//! boxes counted as one phase), so the row is in flight at once and lands as bf16 — 2 bytes per
//! column of shared memory — and the threads walk it in register chunks of `K` columns: the
//! first pass waits for each chunk as it reaches it (it starts while the rest of the row is in
//! flight), and each pass over the row reads shared memory (`ld.shared.v4.b32`), not DRAM. With
//! one barrier for the whole row, `softmax_staged_cluster` (the same passes) ran 4096×65536 at
//! 2272 GB/s (`x2`) and 8192×32768 at 2246 (`h2`) on the H100; with a barrier per chunk, 2401
//! (+5.7 %) and 2467 (+9.8 %) (docs/perf/2026-12-06-stop52.md, forced side by side); on the
//! H200, the host's choice at 8192×32768 (`softmax_staged`) 3498 → 3671 GB/s. With 64 KB per
//! 32k row, three CTAs share an SM and one's TMA overlaps another's passes. Columns past `N`
//! are zero-filled by TMA and masked.
//!
//! Softmax: a pass for the elementwise running max, one reduction; a pass for the sum of
//! `exp2(x·log2e − m·log2e)` (one `fma` and one `ex2` per element), one reduction; a pass
//! writing `exp(x − m) / s`. Only the first chunk and the ragged last one are masked.
//! RMSNorm: a pass for the elementwise sum of squares, one reduction; a pass writing
//! `x · r · w` (w from L2). Each statistic costs one cross-warp reduction, not one per chunk.
//!
//! Measured on the H200 (`docs/perf/rows-h200-2026-12-02b.md`), 8192×32768: softmax 3561
//! GB/s (0.865× QuACK; the register kernel 3082), RMSNorm 3518 (0.856×; `rmsnorm_long`
//! 3343). The first version of the softmax (every chunk masked, `(x − m)·log2e`) ran at 3089
//! (ncu: 75% occupancy, DRAM 46%, SM 67% — issue-bound in its three passes); unmasked middle
//! chunks and one `fma` per exponent gave the rest. A persistent, double-buffered form (one
//! CTA per SM prefetching its next row) was slower (1791 GB/s: one CTA's 16 warps hide
//! neither the 128-box TMA burst nor the passes' latency) and is not shipped.
//!
//! Only 32k capacities ship: at 8k and 16k the register kernels were faster in the same
//! measurement (softmax 4129 vs 2866 GB/s at 32768×8192 with the first version of these
//! passes). The host prefers these to the register kernels at 32k by its row cost model.
//!
//! The tensor maps need 16-byte aligned rows (`N` a multiple of 8 for bf16); the host takes
//! another kernel when the launch planner refuses the tensors — for an odd row past 16k
//! columns `staged_odd.rs`, which stages it through `x`'s flat view.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(
        s32k_t256 = (T = 256, CAP = 32768, K = 4096, V = 8),
        s32k = (T = 512, CAP = 32768, K = 4096, V = 8),
    ),
)]
pub fn softmax_staged(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
    // One barrier per chunk of `K` columns: the first pass starts on chunk 0 while the
    // rest of the row is in flight.
    let full = mbarrier(count = CAP / K);
    #[scope(thread = 0)]
    {
        for c in 0..CAP / K {
            for q in 0..K / 256 {
                tma::load(xs[c][q], x.tile(cta.x, c * (K / 256) + q), full[c]);
            }
        }
    }
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    // Only the first chunk and the ragged last one are masked.
    full[0].wait(0);
    copy(t, xs[0]);
    let mut mx = select(col_index(t) < N, t, f32::NEG_INFINITY);
    for j in 1..N / K {
        full[j].wait(0);
        copy(t, xs[j]);
        mx = max(mx, t);
    }
    if N % K != 0 && N > K {
        full[N / K].wait(0);
        copy(t, xs[N / K]);
        mx = max(
            mx,
            select(col_index(t) + N / K * K < N, t, f32::NEG_INFINITY),
        );
    }
    // The boxes past the row land too (zero-filled) before the CTA may leave.
    for j in max(cdiv(N, K), 1)..CAP / K {
        full[j].wait(0);
    }
    // exp(x − m) = exp2(x·log2e − m·log2e): one fma and one ex2 per element.
    let nml = reduce_max(mx, axis = 1) * -1.442695;
    copy(t, xs[0]);
    let mut se = select(col_index(t) < N, exp2_approx(fma(t, 1.442695, nml)), 0.0);
    for j in 1..N / K {
        copy(t, xs[j]);
        se += exp2_approx(fma(t, 1.442695, nml));
    }
    if N % K != 0 && N > K {
        copy(t, xs[N / K]);
        se += select(
            col_index(t) + N / K * K < N,
            exp2_approx(fma(t, 1.442695, nml)),
            0.0,
        );
    }
    let inv = rcp_approx(reduce_sum(se, axis = 1));
    for j in 0..cdiv(N, K) {
        copy(t, xs[j]);
        copy(y.tile(cta.x, j), exp2_approx(fma(t, 1.442695, nml)) * inv);
    }
}

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(
        s32k = (T = 512, CAP = 32768, K = 4096, V = 8),
        s32k_t256 = (T = 256, CAP = 32768, K = 4096, V = 8),
    ),
)]
pub fn rmsnorm_staged(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
    // One barrier per chunk of `K` columns: the first pass starts on chunk 0 while the
    // rest of the row is in flight.
    let full = mbarrier(count = CAP / K);
    #[scope(thread = 0)]
    {
        for c in 0..CAP / K {
            for q in 0..K / 256 {
                tma::load(xs[c][q], x.tile(cta.x, c * (K / 256) + q), full[c]);
            }
        }
    }
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    let g = regs::<f32>([1, K], layout = blocked(vec = V));
    full[0].wait(0);
    copy(t, xs[0]);
    let mut sq = t * t;
    for j in 1..cdiv(N, K) {
        full[j].wait(0);
        copy(t, xs[j]);
        sq = fma(t, t, sq);
    }
    // The boxes past the row land too (zero-filled) before the CTA may leave.
    for j in max(cdiv(N, K), 1)..CAP / K {
        full[j].wait(0);
    }
    let r = rsqrt_approx(reduce_sum(sq, axis = 1) / cast::<f32>(N) + eps);
    for j in 0..cdiv(N, K) {
        copy(t, xs[j]);
        copy(g, w.tile(j));
        copy(y.tile(cta.x, j), t * r * g);
    }
}
