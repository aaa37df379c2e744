//! The Blackwell CTA pair's roles under cluster launch control, a tile library shared by the
//! production GEMMs (ladder level 10, `level_10_prod_tcgen05.rs`, and its scaled and fused
//! epilogues, `level_10_epi_tcgen05.rs`): the pair's TMEM and warpgroup 0's TMA, MMA and
//! scheduler warps ([`pair_clc_roles`], the scheduler warp's loop [`clc_scheduler`]), the
//! plain epilogue warpgroup ([`pair_epilogue`]), the epilogue's release of an accumulator stage
//! ([`release_acc`]), the decoding of each scheduler response ([`next_walk`]) and the
//! epilogue warpgroup's release of it ([`release_walk`]), and the staging tile's TMA loads of C
//! or a residual ([`load_staged`]) and TMA stores to D ([`store_staged`]). Each using module names it with
//! `#[tile_module(uses(super::pieces::gemm_pieces, super::pieces_sm100::gemm_pieces_sm100))]`
//! (the pair's TMEM and K loops are `pieces.rs`'s).
//!
//! Invariants the users keep: `clcp` is a one-stage pipeline with four consumers (the TMA,
//! MMA and scheduler warps and the epilogue warpgroup) in both CTAs of the pair
//! (`pipeline::<1>(consumers = 4, peers = 2)`), `resp` its `clc_response()`; the epilogue
//! warpgroup is warpgroup 1 and uses named barrier 1.

use tirx::prelude::*;

#[tile_module(library)]
mod gemm_pieces_sm100 {
    use tirx::prelude::*;

    /// The epilogue warpgroup hands accumulator stage `s` back to the MMA warp once every
    /// thread's TMEM reads are done (`tcgen05.fence::before_thread_sync` then the warpgroup's
    /// barrier, PTX ISA §9.7.16.6.4).
    #[tile_fn]
    fn release_acc(accp: Pipe, s: u32) {
        tcgen05::fence_before();
        named_barrier(1, 128);
        #[scope(leader)]
        {
            accp.consumer_release(s);
        }
    }

    /// What every pair CLC kernel (levels 8–10) does after its declarations, before its
    /// epilogue: checks that the two warpgroups' register counts fit the register file, takes
    /// the pair's TMEM for `acc` (`pair_tmem_acquire`), and runs warpgroup 0 over
    /// `pairs_m × tiles_n` tiles of `cdiv(K, BK)` K steps. Warpgroup 0 (level 9's) gives its
    /// registers away; its TMA warp loads this CTA's halves of every tile's K steps, walk after
    /// walk; the even CTA's MMA warp issues every tile into the accumulator stage the epilogue
    /// freed (the odd CTA's only follows the walks); the scheduler warp of rank 0 asks for the
    /// next walk once every reader of the last response released it, and never again after a
    /// failure.
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
    ) {
        let k_tiles = cdiv(K, BK);
        static_assert(
            128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );
        pair_tmem_acquire(acc);
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
                clc_scheduler(clcp, resp);
            }
        }
    }

    /// The scheduler warp's elected thread (rank 0's asks, both CTAs' follow): it asks for
    /// the next walk once every reader of the last response released it, and never again
    /// after a failure.
    #[tile_fn]
    fn clc_scheduler(clcp: Pipe, resp: Smem) {
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

    /// The production GEMM's epilogue warpgroup (warpgroup 1, level 9's over D's type): it
    /// takes its registers, walks the tiles as warpgroup 0 does, and per tile reads
    /// accumulator stage `s` of `acc` into `r` (`tcgen05.ld`), converts it into the staging
    /// tile `d_s` (`EPI_N`-column blocks, one 128-byte swizzle row wide) and stores it to D
    /// with TMA ([`store_staged`]). `EPI_R == BN`: the whole row at once, the stage released
    /// before staging; `EPI_R == EPI_N`: one staging block at a time through the view `accv`
    /// (`[2 · BN / EPI_N, 128, EPI_N]`, aliasing `acc`), the stage released once all are staged
    /// — a build-time `if`. The last stores are waited for before the warpgroup leaves.
    #[tile_fn]
    fn pair_epilogue(
        d: Global,
        d_s: Smem,
        r: Regs,
        acc: Tmem,
        accv: Tmem,
        accp: Pipe,
        clcp: Pipe,
        resp: Smem,
        pairs_m: u32,
        tiles_n: u32,
    ) {
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
                    if EPI_R == BN {
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
                    } else {
                        // A row of BN f32 is more registers than the thread holds (224): each
                        // staging block in turn, the stage released once all are staged.
                        #[scope(leader)]
                        {
                            tma::wait_group_read(0);
                        }
                        named_barrier(1, 128);
                        for cb in 0..BN / EPI_N {
                            copy(r, accv[s * (BN / EPI_N) + cb]);
                            copy(d_s[cb], r);
                        }
                        release_acc(accp, s);
                    }
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

    /// C (or a residual) into the staging tile `d_s` before the epilogue computes into it:
    /// once the previous tile's stores have read the staging tile
    /// (`cp.async.bulk.wait_group.read 0`, PTX ISA §9.7.9.25.6.2), the leader loads the
    /// `EPI_N`-column blocks of rows `row` (128-row units) from column block `col` with TMA on
    /// `c_bar` — the boxes [`store_staged`] stores, so tails are zero-filled on load and
    /// clipped on store alike. The warpgroup waits on `c_bar` (one phase per tile).
    #[tile_fn]
    fn load_staged(d_s: Smem, c_bar: Bar, c: Global, row: u32, col: u32) {
        #[scope(leader)]
        {
            tma::wait_group_read(0);
            for cb in 0..BN / EPI_N {
                tma::load(d_s[cb], c.tile(row, col + cb), c_bar);
            }
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
