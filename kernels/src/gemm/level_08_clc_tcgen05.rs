//! GEMM ladder, level 8 on Blackwell: cluster launch control — level 7's CTA pair
//! (`gemm_sm100_pair`) with a scheduler warp that steals work from clusters that have not
//! started (`clusterlaunchcontrol.try_cancel`, PTX ISA §9.7.13.17), the static walk as the
//! fallback. D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate in tensor memory,
//! BF16 out.
//!
//! What it adds to level 7. The grid is one cluster per SM pair as before, and cluster `c`
//! owns the static walk `c, c + clusters, …` over the 256-row pair tiles. While the roles work
//! through a walk, warp 2 of each CTA (the scheduler) asks for the next one: the CTA of rank 0
//! issues `clc::try_cancel(resp, clcp.full(0), multicast = true)` (`.multicast::cluster::all`:
//! the response and its 16 bytes land in both CTAs; each CTA's scheduler expects them on its
//! own barrier). If the request cancelled a cluster that had not started, its first CTA's `x`
//! names the walk this cluster runs next (`clc::first_cta`, §9.7.13.18); if it failed, every
//! cluster has started and each role leaves its loop after its walk — a failed request is
//! never followed by another. On a GPU whose clusters all fit at once every request fails and
//! this is level 7; where some clusters wait (a larger grid, other kernels on the SMs), the
//! first to finish takes their walks.
//!
//! The response is read by every role of both CTAs — the producer, the MMA warp (whose odd-CTA
//! thread only follows the walks), the epilogue warpgroup and the scheduler itself (to know
//! whether to go on) — so it lives in a one-stage pipeline `clcp` whose empty barrier counts
//! one release from each of the four readers of each CTA (`consumers = 4, peers = 2`: every
//! release arrives on both CTAs' barriers); rank 0's scheduler waits for all eight before it
//! rewrites both CTAs' responses. (Without the schedulers' releases rank 0 rewrote the odd
//! CTA's response under its scheduler's read: `tirx sim gemm_sm100_tma_epi --clc succeed`
//! caught it.) Each reader fences (`fence::proxy_async()`) before its release: the next
//! response is written through the async proxy.
//!
//! The code: warpgroup 0's TMA, MMA and scheduler warps are the tile library's
//! `pair_clc_roles` (`pieces_sm100.rs`, shared with levels 9 and 10), and the epilogue
//! warpgroup reads each response with its `next_walk` and hands it back with `release_walk`;
//! what this file writes out is the epilogue's thread stores of D.
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills, and
//! the SASS (`tirx check`, its `gemm_sm100_clc` line: `224 0 UTCHMMA×4 UTMALDG×2 LDTM×8
//! USETMAXREG×2 SYNCS×58 LDS.128×4`) shows the pair's forms (`UTCHMMA.2CTA`,
//! `UTCBAR.2CTA.MULTICAST`, `UTMALDG.2D.2CTA`) and the multicast request
//! (`UGETNEXTWORKID.BROADCAST`; `LDS.128` are the roles' reads of the response)
//! (`tests/clc.rs`); the emulator runs it
//! against the f64 reference with its CLC policy making every request fail (each cluster its
//! own walk), succeed (the first cluster takes every walk) and at random, under several
//! schedules (`tests/sim_gemm.rs`).
//!
//! Beside the published B200 kernels: ThunderKittens' B200 GEMMs schedule their tiles with
//! cluster launch control the same way (a scheduler warp's `try_cancel`, the others reading the
//! response; HazyResearch/ThunderKittens, `kernels/gemm/bf16_b200`), and CUTLASS's Blackwell
//! persistent kernels with its CLC tile scheduler. ThunderKittens' educational B200 levels climb
//! 293 → 731 → 1050 → 1285 → 1540 TFLOP/s (their README). Not measured: there is no Blackwell
//! GPU here.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces, super::pieces_sm100::gemm_pieces_sm100))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 8 (Blackwell): level 7's pair with cluster launch control — a scheduler warp
    /// steals the static walks of clusters that have not started. `grid = (SMS / 2 * 2, 1)`.
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            default = (BM = 256, BN = 256, BK = 64, STAGES = 6, GROUP = 8, REG_ISSUE = 56, REG_EPILOGUE = 224),
        ),
    )]
    pub fn gemm_sm100_clc(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN / 2, BK], swizzle = B128);
        let acc = tmem::<f32>([2, 128, BN]);
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        // The scheduler's response, read by the four roles of both CTAs.
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);

        // The pair's TMEM, then warpgroup 0's TMA, MMA and scheduler warps: the scheduler warp
        // of rank 0 asks for the next walk once every reader of the last response released it
        // — the schedulers too, which read it to know whether to go on; after a failed request
        // nobody asks again. The roles are the tile library's (`pieces_sm100.rs`), which
        // level 10 shares.
        pair_clc_roles(
            pipe, accp, clcp, resp, acc, a_s, b_s, a, b, pairs_m, tiles_n,
        );

        // The epilogue warpgroup of each CTA: its 128 rows of every tile of every walk.
        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            let mut j = 0;
            let mut w = cta.x / 2;
            let mut i = 0;
            let mut more = true;
            while more {
                for u in (w..pairs_m * tiles_n).step_by(ncta.x / 2) {
                    let (mp, n) = grouped(u, pairs_m, tiles_n);
                    let s = accp.consumer_wait(j);
                    tcgen05::fence_after();
                    copy(d.tile(2 * mp + cta_rank, n), acc[s]);
                    release_acc(accp, s);
                    j += 1;
                }
                // The response decoded (`next_walk`), then the warpgroup's one release of it
                // once every thread has read it (`release_walk`).
                let (go, nw) = next_walk(clcp, resp, i, w);
                more = go == 1;
                w = nw;
                release_walk(clcp);
                i += 1;
            }
        }

        pair_tmem_release(acc);
    }
}
