//! GEMM, Blackwell: the same pipeline as the Hopper kernel, with `tcgen05.mma` into a TMEM
//! accumulator and a `tcgen05.ld` epilogue.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate in tensor memory, BF16
//! out. Warp 0 allocates the TMEM accumulator (a whole warp), its elected thread produces
//! (TMA into the stage ring); warp 1's elected thread issues the MMAs and commits each stage's
//! empty barrier, then commits `done` once every MMA has been issued; all four warps wait on
//! `done` and read the accumulator back lane by lane (warp w reads lanes 32w…32w+31).
//!
//! Verified without a Blackwell GPU: ptxas `-arch=sm_100a`, and the SASS shows `UTCHMMA`,
//! `UTMALDG`, `LDTM` (`tirx check`).

use tirx::prelude::*;

#[tile_kernel(
    solves = gemm,
    target = sm_100a,
    threads = 128,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 128, BN = 256, BK = 64, STAGES = 4)),
)]
pub fn gemm_sm100(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
    let acc = tmem::<f32>([BM, BN]);
    let pipe = pipeline::<STAGES>();
    let done = mbarrier();
    let m = cta.y;
    let n = cta.x;
    let k_tiles = cdiv(K, BK);

    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();

    // Producer: one elected thread of warp 0.
    #[scope(warp = 0, elect)]
    for k in 0..k_tiles {
        let s = pipe.producer_acquire(k);
        tma::load(a_s[s], a.tile(m, k), pipe.full(s));
        tma::load(b_s[s], b.tile(n, k), pipe.full(s));
    }

    // MMA issuer: one elected thread of warp 1.
    #[scope(warp = 1, elect)]
    {
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(k);
            tcgen05::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            tcgen05::commit(pipe.empty(s));
        }
        tcgen05::commit(done);
    }

    // Epilogue: the whole warpgroup reads TMEM back.
    done.wait(0);
    sync_threads();
    copy(d.tile(m, n), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}
