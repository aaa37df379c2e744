//! GEMM ladder, level 10 on Blackwell: the production GEMM a B200 user calls — level 9's CTA
//! pair (256×128 tiles, `cta_group::2`, TMA multicast of the shared operand), its cluster
//! launch control scheduler and its TMA-store epilogue, as config products over what the
//! problem gives: BF16/FP16 in, BF16/FP16/FP32 out, B given N×K (TN, `MB = k`) or K×N (NN,
//! `MB = mn`). D = A·op(B), any M, N, K (TMA zero-fills the loads' tails and clips the stores').
//!
//! What it adds to level 9. Types: `TA` (A and B) and `TD` (D) are config constants; the MMA
//! is `tcgen05.mma.cta_group::2.kind::f16` for both 16-bit inputs (PTX ISA §9.7.16.10.9, the
//! instruction descriptor's A/B type field, §9.7.16.4.2). NN: `b` is declared `#[major(MB)]`
//! and its shared tile `major = MB`, so with `MB = mn` each CTA's `[BN / 2, BK]` half of B is
//! one `[BK, 64]` TMA box, and the MMA reads it through the MN-major SW128 descriptor with the
//! transpose-B bit (§9.7.16.4.1) — a layout, never a copy. Output: the staging tile's blocks
//! are one 128-byte swizzle row wide, `EPI_N = 128 / size_of(TD)` columns (64 of a 16-bit D,
//! 32 of an f32 D), so an f32 D stages 64 KiB: 6 × 24 KiB of operand stages + 64 KiB = 208 KiB
//! of the 227 KiB.
//!
//! The roles (TMA, MMA and scheduler warps; the epilogue warpgroup's walk over the CLC
//! responses) are tile functions here, shared with the scaled and fused-epilogue kernels of
//! `level_10_epi_tcgen05.rs`.
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills for
//! every config (`tests/assemble.rs`; `tirx check gemm_sm100_prod`: `UTCHMMA`, `UTMALDG`,
//! `UTMASTG`, `LDTM`, `USETMAXREG`), and the emulator against the f64 reference on shapes with
//! tails in M, N and K and more tiles than clusters, TN and NN, 16-bit and f32 outputs
//! (`tests/sim_gemm.rs`).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 10 (Blackwell): level 9 over types and B's layout. `grid = (SMS / 2 * 2, 1)`.
    /// D's rows must be 16-byte aligned (N a multiple of 8, or of 4 for f32): the runtime
    /// refuses others.
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 128 / size_of(TD), REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 128 / size_of(TD), REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
        ),
    )]
    pub fn gemm_sm100_prod(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 2, BK], swizzle = B128, major = MB);
        let acc = tmem::<f32>([2, 128, BN]);
        let r = regs::<f32>([128, BN], layout = tmem_32x32b);
        let d_s = smem::<TD>([BN / EPI_N, 128, EPI_N], swizzle = B128);
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        static_assert(
            128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );

        pair_tmem_acquire(acc);
        pair_clc_roles(
            pipe, accp, clcp, resp, acc, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles,
        );

        // The epilogue warpgroup: level 9's, over D's type.
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
                    // The row is in registers: the stage goes back to the MMA warp at once.
                    tcgen05::fence_before();
                    named_barrier(1, 128);
                    #[scope(leader)]
                    {
                        accp.consumer_release(s);
                        tma::wait_group_read(0);
                    }
                    named_barrier(1, 128);
                    copy(d_s, r);
                    store_staged(d, d_s, 2 * mp + cta_rank, n * (BN / EPI_N));
                    j += 1;
                }
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

    /// Warpgroup 0 of the pair's CLC kernels (level 9's): it gives its registers away; its
    /// TMA warp loads this CTA's halves of every tile's K steps, walk after walk; the even
    /// CTA's MMA warp issues every tile into the accumulator stage the epilogue freed (the odd
    /// CTA's only follows the walks); the scheduler warp of rank 0 asks for the next walk
    /// once every reader of the last response released it, and never again after a failure.
    #[tile_fn]
    fn pair_clc_roles(
        pipe: Pipe,
        accp: Pipe,
        clcp: Pipe,
        resp: Smem,
        acc: Tmem,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(REG_ISSUE);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                let mut w = cta.x / 2;
                let mut i = 0;
                let mut more = true;
                while more {
                    for u in (w..pairs_m * tiles_n).step_by(ncta.x / 2) {
                        let (mp, n) = grouped(u, pairs_m, tiles_n);
                        it = produce_pair(
                            pipe,
                            it,
                            a_s,
                            b_s,
                            a,
                            b,
                            2 * mp + cta_rank,
                            2 * n + cta_rank,
                            k_tiles,
                        );
                    }
                    let (go, nw) = next_walk(clcp, resp, i, w);
                    more = go == 1;
                    w = nw;
                    clcp.consumer_release(0);
                    i += 1;
                }
            }
            #[scope(warp = 1, elect)]
            {
                let mut it = 0;
                let mut j = 0;
                let mut w = cta.x / 2;
                let mut i = 0;
                let mut more = true;
                while more {
                    if cta_rank % 2 == 0 {
                        for _ in (w..pairs_m * tiles_n).step_by(ncta.x / 2) {
                            let s = accp.producer_acquire(j);
                            tcgen05::fence_after();
                            it = issue_pair(pipe, it, acc, s, a_s, b_s, k_tiles);
                            tcgen05::commit(accp.full(s), cta_group = 2);
                            j += 1;
                        }
                    }
                    let (go, nw) = next_walk(clcp, resp, i, w);
                    more = go == 1;
                    w = nw;
                    clcp.consumer_release(0);
                    i += 1;
                }
            }
            #[scope(warp = 2, elect)]
            {
                let mut i = 0;
                let mut more = true;
                while more {
                    let s = clcp.producer_acquire(i);
                    clc::try_cancel(resp, clcp.full(s), multicast = true);
                    let (go, _) = next_walk(clcp, resp, i, 0);
                    more = go == 1;
                    clcp.consumer_release(0);
                    i += 1;
                }
            }
        }
    }

    /// Response `i` of the scheduler, waited for: `(1, w')` when it cancelled a cluster
    /// (whose static walk starts at pair `w'`), `(0, w)` when it failed. Every read of the
    /// response is fenced (`fence.proxy.async`) before the reader releases it, since the next
    /// request rewrites it through the async proxy.
    #[tile_fn]
    fn next_walk(clcp: Pipe, resp: Smem, i: u32, w: u32) -> (u32, u32) {
        let s = clcp.consumer_wait(i);
        let mut go = 0;
        let mut nw = w;
        let ok = clc::is_canceled(resp);
        if ok {
            let cx = clc::first_cta(resp);
            go = 1;
            nw = cx / 2;
        }
        fence::proxy_async();
        (go, nw)
    }

    /// The epilogue warpgroup's one release of the response (the pipeline's one stage), after
    /// every thread has read it.
    #[tile_fn]
    fn release_walk(clcp: Pipe) {
        named_barrier(1, 128);
        #[scope(leader)]
        {
            clcp.consumer_release(0);
        }
    }

    /// The staged tile to D: after the generic proxy's writes are fenced against the async
    /// proxy and the warpgroup's barrier, the leader stores each `EPI_N`-column block of rows
    /// `row` (128-row units) from column block `col` with TMA, in one bulk group it does not
    /// wait for.
    #[tile_fn]
    fn store_staged(d: Global, d_s: Smem, row: u32, col: u32) {
        fence::proxy_async();
        named_barrier(1, 128);
        #[scope(leader)]
        {
            for cb in 0..BN / EPI_N {
                tma::store(d.tile(row, col + cb), d_s[cb]);
            }
            tma::commit_group();
        }
    }
}
