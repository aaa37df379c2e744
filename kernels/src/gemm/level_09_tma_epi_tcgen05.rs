//! GEMM ladder, level 9 on Blackwell: the TMA-store epilogue — level 8's CTA pair with cluster
//! launch control (`gemm_sm100_clc`), its epilogue storing D through swizzled shared memory with
//! TMA instead of thread stores, overlapped with the next tile's MMAs. D = A·Bᵀ with A M×K and B
//! N×K row-major, BF16 in, FP32 accumulate in tensor memory, BF16 out.
//!
//! What it adds to level 8. Each epilogue thread loads its row of the accumulator stage into
//! registers (`copy(r, acc[s])`, `r: regs::<f32>([128, BN], layout = tmem_32x32b)`:
//! `tcgen05.ld.32x32b` and its `tcgen05.wait::ld`, §9.7.16.8.3) and hands the stage back to the
//! MMA warp at once, so the next tile's MMAs run into it while this tile is still being stored.
//! The registers then go, rounded to bf16, into a staging tile of 64-column blocks with the
//! 128-byte swizzle (`d_s: smem::<bf16>([BN / 64, 128, 64], swizzle = B128)`, `st.shared`
//! at the swizzled addresses TMA reads, PTX ISA §5.5.7), and after `fence::proxy_async()` and
//! the warpgroup's barrier one thread stores each block with TMA (`cp.async.bulk.tensor` to
//! global, §9.7.9.25.5.1; out-of-bounds rows and columns are not written, so the tails need no
//! code) without waiting for it: before the next tile overwrites the staging tile, that thread
//! waits until the previous stores have read it (`cp.async.bulk.wait_group.read 0`,
//! §9.7.9.25.6.2). One config, 256×128 tiles: a 128-column row of f32 is 128 registers a thread,
//! which the epilogue's 224 hold (a 256-column row would not).
//!
//! The code: level 8's roles (`pair_clc_roles`, `next_walk`, `release_walk` of
//! `pieces_sm100.rs`) and the tile library's `store_staged` for the fenced TMA stores of the
//! staging tile's `EPI_N = 64`-column blocks; this file writes out the epilogue's walk, the
//! accumulator's early release and the staging copy. Its PTX is level 10's `default` config's
//! (`gemm_sm100_prod`), but for the kernel's name.
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills, and
//! the SASS (`tirx check`, its `gemm_sm100_tma_epi` line: `224 0 UTCHMMA×4 UTMALDG×2 UTMASTG×1
//! LDTM×4 USETMAXREG×2 SYNCS×58 LDS.128×4 STS.128×16`) shows the TMA store (`UTMASTG`, in the
//! loop over the two 64-column boxes) and the swizzled staging stores (`STS.128`) beside the
//! pair's forms and the cluster launch control request
//! (`tests/clc.rs`); the emulator runs it against the f64 reference with every CLC mode under
//! several schedules, with tails in M, N and K (`tests/sim_gemm.rs`).
//!
//! Beside the published B200 kernels: ThunderKittens' educational level 8 (epilogue pipelining:
//! TMEM → registers → shared memory → TMA store, the store overlapped with the next tile) and
//! level 9 (HazyResearch/ThunderKittens, `kernels/gemm/educational_b200/level_08.cu`,
//! `level_09.cu`: `tcgen05.ld` into registers, shared-memory D tiles of 128 × 32 in a ring of
//! two, `store_async` with `store_async_read_wait` before reuse); CUTLASS's Blackwell epilogues
//! store through shared memory with TMA the same way. ThunderKittens' educational B200 levels
//! climb 293 → 731 → 1050 → 1285 → 1540 TFLOP/s (their README). Not measured: there is no
//! Blackwell GPU here.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces, super::pieces_sm100::gemm_pieces_sm100))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 9 (Blackwell): level 8's pair with cluster launch control, D stored through a
    /// swizzled shared-memory tile by TMA while the next tile's MMAs run. `grid = (SMS / 2 * 2,
    /// 1)`.
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            default = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224),
        ),
    )]
    pub fn gemm_sm100_tma_epi(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN / 2, BK], swizzle = B128);
        let acc = tmem::<f32>([2, 128, BN]);
        // The epilogue's row of the accumulator, and D's staging tile in 64-column TMA boxes.
        let r = regs::<f32>([128, BN], layout = tmem_32x32b);
        let d_s = smem::<bf16>([BN / EPI_N, 128, EPI_N], swizzle = B128);
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

        // The epilogue warpgroup of each CTA: its 128 rows of every tile of every walk, stored
        // by TMA; the last stores are waited for before the kernel ends.
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
                    copy(r, acc[s]);
                    // The row is in registers (`tcgen05.wait::ld`): the stage goes back to the
                    // MMA warp, whose next tile runs while this one is stored.
                    tcgen05::fence_before();
                    named_barrier(1, 128);
                    #[scope(leader)]
                    {
                        accp.consumer_release(s);
                        // The previous tile's stores have read the staging tile.
                        tma::wait_group_read(0);
                    }
                    named_barrier(1, 128);
                    copy(d_s, r);
                    // Fenced against the async proxy, the warpgroup's barrier, the leader's TMA
                    // stores in one bulk group (`store_staged`).
                    store_staged(d, d_s, 2 * mp + cta_rank, n * (BN / EPI_N));
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
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }

        pair_tmem_release(acc);
    }
}
