//! GEMM, Hopper: TMA loads + a multi-stage mbarrier pipeline + wgmma.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major (both K-major), BF16 in, FP32 accumulate in
//! registers, BF16 out. One CTA computes a BM×BN tile of D.
//!
//! Roles: warp 0's elected thread is the producer — for each K tile it acquires a free stage
//! (waiting on that stage's empty barrier) and issues the two TMA loads, whose bytes the
//! compiler derives for the full barrier. Warpgroup 1 is the consumer — it waits for a full
//! stage, issues wgmma over it, waits for the MMAs, and releases the stage. Stage and phase
//! parity come from the iteration counter through the pipeline construct.
//!
//! Tails: TMA zero-fills out-of-bounds rows of A/B and columns past K, so partial tiles
//! contribute zeros; the epilogue skips stores outside M×N.
//!
//! Measured (H200, 8192³, `tirx bench gemm --ladder`, interleaved with cuBLASLt): 498.6
//! TFLOP/s, 0.73× (2026-11-29) and 500.3, 0.72× (2026-11-30) — below level 2, whose 32 KB of
//! shared memory let three CTAs share an SM and hide each other's latency, while these four
//! 32 KB stages leave room for one CTA per SM, whose consumer still waits for every wgmma
//! (`docs/perf/gemm-h200.md`). Level 4 (`gemm_sm90_ws1`) gives the roles their own
//! warpgroups and registers, and keeps one wgmma group in flight.

use tirx::prelude::*;

#[tile_kernel(
    solves = gemm,
    target = sm_90a,
    threads = 256,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4)),
)]
pub fn gemm_sm90(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
    let acc = regs::<f32>([BM, BN]);
    let pipe = pipeline::<STAGES>(consumers = 1);
    let m = cta.y;
    let n = cta.x;
    let k_tiles = cdiv(K, BK);

    // Producer: one elected thread of warp 0.
    #[scope(warp = 0, elect)]
    for k in 0..k_tiles {
        let s = pipe.producer_acquire(k);
        tma::load(a_s[s], a.tile(m, k), pipe.full(s));
        tma::load(b_s[s], b.tile(n, k), pipe.full(s));
    }

    // Consumer: warpgroup 1 multiplies, then stores its fragment.
    #[scope(warpgroup = 1)]
    {
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(k);
            wgmma::fence();
            wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            wgmma::commit();
            wgmma::wait(0);
            #[scope(thread = 128)]
            {
                pipe.consumer_release(s);
            }
        }
        copy(d.tile(m, n), acc);
    }
}
