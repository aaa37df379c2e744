//! GEMM, Hopper: the persistent warp-specialized kernel on 2×1 clusters with TMA multicast.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate, BF16 out.
//!
//! What it adds over the persistent kernel: the two CTAs of a cluster compute vertically
//! adjacent 128×256 tiles (rows m = 2·mp and 2·mp + 1) that need the same 256×64 slab of B
//! per K step. Each CTA loads half of that slab (`b_s[s][rank]`) and multicasts it to both
//! (`multicast = 0b11`), so B crosses L2 once per cluster instead of once per CTA. The
//! consequences are carried by the language:
//! - each full barrier receives its own A box plus both halves of B: the derived byte count
//!   counts a multicast box once per CTA of the mask;
//! - a stage may be overwritten only once the consumers of both CTAs are done with it: the
//!   pipeline has `peers = 2`, so a release arrives on the empty barrier of each CTA;
//! - barriers are initialised cluster-wide before any multicast, and no CTA exits while its
//!   peer may still write into it (cluster barriers at entry and exit).

use tirx::prelude::*;

#[tile_kernel(
    target = sm_90a,
    threads = 384,
    cluster = (2, 1, 1),
    grid = (CTAS, 1),
    configs(
        default = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 8, CTAS = 132),
        n128 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, CTAS = 132),
    ),
)]
pub fn gemm_sm90_cluster(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, 2, 64, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, 2, BN / 2, BK], swizzle = B128);
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
            copy(d.tile(2 * m + wg, n), acc);
        }
    }
}
