//! GEMM, Hopper, level 1: synchronous tiles copied by the threads, wgmma.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate in registers, BF16 out;
//! one warpgroup per 128×128 tile. The baseline every later level improves on: correct, and
//! slow.
//!
//! For each K tile, every thread loads its share of the A and B tiles from global memory and
//! stores it into 128B-swizzled shared memory (`copy` without a barrier dispatches to
//! `thread_load`, which zero-fills rows and columns past the tensor and writes the same
//! swizzle TMA would); the warpgroup then multiplies the tiles with wgmma. The stores are
//! generic-proxy writes and the tensor core reads through the async proxy, so each thread
//! fences (`fence::proxy_async`) before the barrier that lets the MMA start.
//!
//! What it lacks, and the next level (TMA) adds: the threads spend instructions on every
//! element — addresses, bounds checks, a 2-byte load and a store each — and wait for each load
//! before issuing the MMA. Level 2 hands the copy to the TMA engine: one thread issues two
//! bulk copies, the hardware swizzles and zero-fills, and an mbarrier says when the bytes are in.
//!
//! Measured (H200, 8192³, `tirx bench gemm --ladder`, 2026-11-29, interleaved with cuBLASLt):
//! 173.9 TFLOP/s, 0.22× cuBLASLt. Details: `docs/perf/gemm-h200.md`.

use tirx::prelude::*;

#[tile_kernel(
    solves = gemm,
    target = sm_90a,
    threads = 128,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 128, BN = 128, BK = 64)),
)]
pub fn gemm_sm90_sync(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([BM, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN, BK], swizzle = B128);
    let acc = regs::<f32>([BM, BN]);
    let m = cta.y;
    let n = cta.x;

    for k in 0..cdiv(K, BK) {
        copy(a_s, a.tile(m, k));
        copy(b_s, b.tile(n, k));
        // Generic-proxy stores, read next by the tensor core (async proxy): fence, then wait
        // for every thread's stores.
        fence::proxy_async();
        sync_threads();
        wgmma::fence();
        wgmma::mma(acc, a_s, b_s, accumulate = k > 0);
        wgmma::commit();
        wgmma::wait(0);
        // Every thread is done with the tiles before any thread overwrites them.
        sync_threads();
    }
    copy(d.tile(m, n), acc);
}
