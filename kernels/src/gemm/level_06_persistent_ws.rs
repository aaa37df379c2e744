//! GEMM, Hopper: warp-specialized, two consumer warpgroups on a 128×256 tile, persistent with
//! grouped rasterization.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate, BF16 out.
//!
//! What it adds over the pipelined kernel:
//! - Roles by warpgroup: warpgroup 0 produces (its warp 0's elected thread issues TMA) and
//!   gives registers away (`setmaxnreg::dec`); warpgroups 1 and 2 consume and take them
//!   (`setmaxnreg::inc`), each owning 64 rows of the 128×256 tile (`a_s[s][wg]`: the TMA box
//!   of 128 rows is two 64-row halves in shared memory).
//! - MMAs overlap: a consumer keeps one wgmma group in flight (`wgmma::wait(1)`) and releases
//!   the stage of the previous K step, not the current one.
//! - Persistent: a grid of one CTA per SM walks the output tiles with a stride of the grid
//!   size; tiles are visited in groups of GROUP rows of tiles so that concurrently running
//!   CTAs share A and B panels in L2. The pipeline's iteration counter runs on across tiles,
//!   so stage and phase stay consistent without any reset.

use tirx::prelude::*;

#[tile_kernel(
    target = sm_90a,
    threads = 384,
    grid = (132, 1),
    configs(
        default = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 8),
        group16 = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 16),
        n128 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8),
        n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8),
    ),
)]
pub fn gemm_sm90_ws(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, 2, 64, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
    let acc = regs::<f32>([64, BN]);
    let pipe = pipeline::<STAGES>(consumers = 2);
    let tiles_m = cdiv(M, BM);
    let tiles_n = cdiv(N, BN);
    let tiles = tiles_m * tiles_n;
    let k_tiles = cdiv(K, BK);
    let group_size = GROUP * tiles_n;

    // Producer warpgroup.
    #[scope(warpgroup = 0)]
    {
        setmaxnreg::dec(40);
        #[scope(warp = 0, elect)]
        {
            let mut it = 0;
            for t in (cta.x..tiles).step_by(ncta.x) {
                let first_m = (t / group_size) * GROUP;
                let rows = min(tiles_m - first_m, GROUP);
                let m = first_m + (t % group_size) % rows;
                let n = (t % group_size) / rows;
                for k in 0..k_tiles {
                    let s = pipe.producer_acquire(it);
                    tma::load(a_s[s], a.tile(m, k), pipe.full(s));
                    tma::load(b_s[s], b.tile(n, k), pipe.full(s));
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
        for t in (cta.x..tiles).step_by(ncta.x) {
            let first_m = (t / group_size) * GROUP;
            let rows = min(tiles_m - first_m, GROUP);
            let m = first_m + (t % group_size) % rows;
            let n = (t % group_size) / rows;
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
