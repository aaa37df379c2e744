//! GEMM, Hopper, level 5: warp specialization with register reallocation and two consumer
//! warpgroups on a 128×256 tile (one CTA per tile).
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate, BF16 out.
//!
//! What it adds over the pipelined kernel (level 3):
//! - roles by warpgroup, with registers moved to where the accumulators are: the producer
//!   warpgroup drops to 40 registers (`setmaxnreg::dec`), the consumers rise to 232
//!   (`setmaxnreg::inc`) — the roles are disjoint scopes, lowered as one if/else chain so
//!   ptxas can budget each branch;
//! - a 128×256 tile split between two consumer warpgroups (`a_s[s][wg]`: the 128-row TMA box
//!   is two 64-row halves), each with a 64×256 accumulator — twice the MMA work per byte of
//!   B loaded than a 128×128 tile;
//! - MMAs overlap the next stage's wait: `wgmma::wait(1)` keeps one group in flight and the
//!   previous K step's stage is released, not the current one.

use tirx::prelude::*;

#[tile_kernel(
    target = sm_90a,
    threads = 384,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 128, BN = 256, BK = 64, STAGES = 4)),
)]
pub fn gemm_sm90_2wg(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, 2, 64, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
    let acc = regs::<f32>([64, BN]);
    let pipe = pipeline::<STAGES>(consumers = 2);
    let m = cta.y;
    let n = cta.x;
    let k_tiles = cdiv(K, BK);

    #[scope(warpgroup = 0)]
    {
        setmaxnreg::dec(40);
        #[scope(warp = 0, elect)]
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(k);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
            tma::load(b_s[s], b.tile(n, k), pipe.full(s));
        }
    }

    #[scope(warpgroups = 1..3)]
    {
        setmaxnreg::inc(232);
        let wg = tid / 128 - 1;
        let leader = tid % 128 == 0;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(k);
            wgmma::fence();
            wgmma::mma(acc, a_s[s][wg], b_s[s], accumulate = k > 0);
            wgmma::commit();
            wgmma::wait(1);
            if k > 0 && leader {
                pipe.consumer_release((k + STAGES - 1) % STAGES);
            }
        }
        wgmma::wait(0);
        copy(d.tile(2 * m + wg, n), acc);
    }
}
