//! GEMM, Hopper, level 2: TMA loads, one stage, synchronous.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate in registers, BF16 out;
//! one warpgroup per 128×128 tile.
//!
//! What it adds over a thread-copied tile: the copy engine moves each K tile of A and B into
//! 128B-swizzled shared memory (one thread issues it; the barrier's expected bytes are derived
//! from the two boxes), so no thread spends instructions on addresses or loads. What it lacks,
//! and the next level adds: everything is still in lockstep — the warpgroup waits for the
//! load, then for the MMAs, then for every thread before the next load may overwrite the tile.
//! The barrier is reused every iteration, so its phase parity alternates: `k % 2`.
//!
//! Measured (H200, 8192³, `tirx bench gemm --ladder`, 2026-11-29, interleaved with cuBLASLt):
//! 578.4 TFLOP/s, 0.83× cuBLASLt. Details: `docs/perf/gemm-h200.md`.

use tirx::prelude::*;

#[tile_kernel(
    solves = gemm,
    target = sm_90a,
    threads = 128,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 128, BN = 128, BK = 64)),
)]
pub fn gemm_sm90_tma(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([BM, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN, BK], swizzle = B128);
    let acc = regs::<f32>([BM, BN]);
    let bar = mbarrier();
    let m = cta.y;
    let n = cta.x;

    for k in 0..cdiv(K, BK) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(m, k), bar);
            tma::load(b_s, b.tile(n, k), bar);
        }
        bar.wait(k % 2);
        wgmma::fence();
        wgmma::mma(acc, a_s, b_s, accumulate = k > 0);
        wgmma::commit();
        wgmma::wait(0);
        // Every thread is done with the tiles before thread 0 overwrites them.
        sync_threads();
    }
    copy(d.tile(m, n), acc);
}
