//! GEMM ladder, level 4: warp specialization — the roles split by warpgroup, one producer
//! warpgroup giving its registers away and one consumer warpgroup taking them, one CTA per
//! 128×128 tile. BF16 in and out, D = A·Bᵀ (A M×K, B N×K, both K-major).
//!
//! Measured on the H200 at 8192³ (`tirx bench gemm --ladder`, interleaved with cuBLASLt,
//! `docs/perf/gemm-h200.md`): 566.3 TFLOP/s, 0.87× (2026-11-30).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 4: warp specialization — the roles split by warpgroup. Warpgroup 0 produces: it
    /// gives its registers away (`setmaxnreg::dec(40)`) and one elected thread of its warp 0
    /// issues the TMA loads ([`produce`]); warpgroup 1 consumes with the registers it took
    /// (`setmaxnreg::inc(232)`: a 128×128 f32 accumulator is 128 registers a thread), keeps
    /// one wgmma group in flight and releases each stage one K step later. One CTA per
    /// 128×128 tile.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, BN), cdiv(M, BM)),
        configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4)),
    )]
    pub fn gemm_sm90_ws1(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let _ = produce(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
            }
        }
        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(232);
            let leader = tid % 128 == 0;
            for k in 0..k_tiles {
                let s = pipe.consumer_wait(k);
                wgmma::fence();
                wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
                wgmma::commit();
                wgmma::wait(1);
                if k > 0 && leader {
                    pipe.consumer_release((k + STAGES - 1) % STAGES);
                }
            }
            wgmma::wait(0);
            if leader {
                pipe.consumer_release((k_tiles + STAGES - 1) % STAGES);
            }
            copy(d.tile(cta.y, cta.x), acc);
        }
    }
}
