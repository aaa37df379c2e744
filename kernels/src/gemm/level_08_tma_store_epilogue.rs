//! GEMM, Hopper, level 8: the epilogue through shared memory and TMA stores, overlapped
//! with the next tile's main loop.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate, BF16 out.
//!
//! What it adds over the cluster kernel (level 7): a consumer warpgroup no longer writes its
//! 64×256 tile to global memory itself. It converts the accumulator into a 128B-swizzled
//! staging tile in shared memory (`copy(d_s[wg], acc)`: conflict-free `st.shared`), fences
//! the generic proxy against the async one, and its leader hands the four 64×64 column blocks
//! to the TMA engine (`tma::store`), which clips the tile at the tensor's edge. The warpgroup
//! goes straight on to the next tile's MMAs while the stores drain; before it overwrites the
//! staging tile next time, the leader waits only until the previous stores have *read* it
//! (`tma::wait_group_read(0)`). Two named barriers (one per consumer warpgroup, ids 1 and 2)
//! order the warpgroup's threads around the staging tile without stopping the other roles.
//! The staging tiles cost 64 KB of shared memory, so the ring has three stages, not four.

use tirx::prelude::*;

#[tile_kernel(
    target = sm_90a,
    threads = 384,
    cluster = (2, 1, 1),
    grid = (CTAS, 1),
    configs(default = (BM = 128, BN = 256, BK = 64, STAGES = 3, GROUP = 8, CTAS = 132)),
)]
pub fn gemm_sm90_tma_epi(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, 2, 64, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, 2, BN / 2, BK], swizzle = B128);
    let d_s = smem::<bf16>([2, BN / 64, 64, 64], swizzle = B128);
    let acc = regs::<f32>([64, BN]);
    let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
    let pairs_m = cdiv(cdiv(M, BM), 2);
    let tiles_n = cdiv(N, BN);
    let units = pairs_m * tiles_n;
    let k_tiles = cdiv(K, BK);
    let group_size = GROUP * tiles_n;
    let rank = cta_rank;
    let cluster_id = cta.x / 2;
    let clusters = ncta.x / 2;

    // Producer warpgroup.
    #[scope(warpgroup = 0)]
    {
        setmaxnreg::dec(40);
        #[scope(warp = 0, elect)]
        {
            let mut it = 0;
            for u in (cluster_id..units).step_by(clusters) {
                let first = (u / group_size) * GROUP;
                let rows = min(pairs_m - first, GROUP);
                let m = 2 * (first + (u % group_size) % rows) + rank;
                let n = (u % group_size) / rows;
                for k in 0..k_tiles {
                    let s = pipe.producer_acquire(it);
                    tma::load(a_s[s], a.tile(m, k), pipe.full(s));
                    tma::load(
                        b_s[s][rank],
                        b.tile(2 * n + rank, k),
                        pipe.full(s),
                        multicast = 3,
                    );
                    it += 1;
                }
            }
        }
    }

    // Two consumer warpgroups, 64 rows each.
    #[scope(warpgroups = 1..3)]
    {
        setmaxnreg::inc(232);
        let wg = tid / 128 - 1;
        let leader = tid % 128 == 0;
        let mut it = 0;
        for u in (cluster_id..units).step_by(clusters) {
            let first = (u / group_size) * GROUP;
            let rows = min(pairs_m - first, GROUP);
            let m = 2 * (first + (u % group_size) % rows) + rank;
            let n = (u % group_size) / rows;
            for k in 0..k_tiles {
                let s = pipe.consumer_wait(it);
                wgmma::fence();
                wgmma::mma(acc, a_s[s][wg], b_s[s], accumulate = k > 0);
                wgmma::commit();
                wgmma::wait(1);
                if k > 0 && leader {
                    pipe.consumer_release((it + STAGES - 1) % STAGES);
                }
                it += 1;
            }
            wgmma::wait(0);
            if leader {
                pipe.consumer_release((it + STAGES - 1) % STAGES);
            }
            // Epilogue: stage, then hand to the TMA engine.
            #[scope(leader)]
            {
                tma::wait_group_read(0);
            }
            named_barrier(wg + 1, 128);
            copy(d_s[wg], acc);
            fence::proxy_async();
            named_barrier(wg + 1, 128);
            #[scope(leader)]
            {
                for cb in 0..BN / 64 {
                    tma::store(d.tile(2 * m + wg, n * (BN / 64) + cb), d_s[wg][cb]);
                }
                tma::commit_group();
            }
        }
        #[scope(leader)]
        {
            tma::wait_group(0);
        }
    }
}
