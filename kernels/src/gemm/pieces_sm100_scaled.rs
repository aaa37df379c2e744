//! The Blackwell CTA pair's roles for block-scaled operands (MXFP8, NVFP4), a tile library
//! for the block-scaled production GEMM (`block_scaled_prod_tcgen05.rs`, both its formats):
//! `pieces_sm100.rs`'s [`pair_clc_roles`] with each stage carrying the operands' factor
//! images beside A and B ([`pair_clc_roles_scaled`]), and the pair's TMEM taken and freed with
//! the factor tiles ([`pair_tmem_acquire_scaled`], [`pair_tmem_release_scaled`]). The
//! scheduler warp and the epilogue are `pieces_sm100.rs`'s unchanged. A using module names
//! all three libraries: `#[tile_module(uses(super::pieces::gemm_pieces,
//! super::pieces_sm100::gemm_pieces_sm100, super::pieces_sm100_scaled::gemm_pieces_sm100_scaled))]`.
//!
//! The factors' placement is CUTLASS's 2-SM block-scaled mainloop
//! (`sm100_blockscaled_mma_warpspecialized.hpp`; `tests/pair_block_scale.rs` runs it on one
//! tile): each CTA loads the factors of its own 128 rows of A and those of all the tile's BN
//! rows of B (the pair MMA reads B's factors for every N from each CTA's own TMEM), and the
//! even CTA's MMA thread copies both CTAs' factors into their TMEM (`tcgen05.cp.cta_group::2`,
//! PTX ISA §9.7.16.9.2) before the stage's block-scaled MMAs (§9.7.16.10.7) — one thread,
//! so the copies are ordered before the MMAs that read them (§9.7.16.6.5).
//!
//! Invariants the users keep, beyond `pieces_sm100.rs`'s: a K tile's factors are `SFC` cells
//! of `[32, 16]` (one `tcgen05.cp.32x128b.warpx4` image: 128 rows × 4 factors), so the
//! shared factor tiles are `[STAGES, SFC, 32, 16]` (A's: this CTA's 128 rows; B's: BN = 128
//! rows) and the TMEM ones `[STAGES, 128, 4 · SFC]`, staged with the operand pipeline `pipe`:
//! a TMEM factor stage is copied into again only after the commit of the MMAs that read it
//! released the shared stage (the ISA orders no `tcgen05.cp` after an earlier `tcgen05.mma`
//! of the thread).

use tirx::prelude::*;

#[tile_module(library)]
mod gemm_pieces_sm100_scaled {
    use tirx::prelude::*;

    /// The pair's TMEM for the accumulator and both factor tiles: warp 0 of each CTA
    /// allocates the same columns (`cta_group::2`), gives up the permit, and the addresses
    /// are made visible to every thread of both CTAs.
    #[tile_fn]
    fn pair_tmem_acquire_scaled(acc: Tmem, sfa_t: Tmem, sfb_t: Tmem) {
        #[scope(warp = 0)]
        {
            tcgen05::alloc(acc, cta_group = 2);
            tcgen05::alloc(sfa_t, cta_group = 2);
            tcgen05::alloc(sfb_t, cta_group = 2);
            tcgen05::relinquish(cta_group = 2);
        }
        tcgen05::fence_before();
        cluster_sync();
        tcgen05::fence_after();
    }

    /// The pair's release of the three: every TMEM access of both CTAs ordered before the
    /// cluster barrier, then warp 0 of each CTA frees the columns together.
    #[tile_fn]
    fn pair_tmem_release_scaled(acc: Tmem, sfa_t: Tmem, sfb_t: Tmem) {
        tcgen05::fence_before();
        cluster_sync();
        #[scope(warp = 0)]
        {
            tcgen05::dealloc(acc, cta_group = 2);
            tcgen05::dealloc(sfa_t, cta_group = 2);
            tcgen05::dealloc(sfb_t, cta_group = 2);
        }
    }

    /// [`pair_clc_roles`] over block-scaled operands: the pair's TMEM with the factor tiles,
    /// warpgroup 0's TMA warp loading each K step's A, B and factor cells
    /// ([`produce_pair_scaled`]), the even CTA's MMA warp copying the factors and issuing the
    /// block-scaled MMAs ([`issue_pair_scaled`]), the scheduler warp ([`clc_scheduler`]).
    /// `k_tiles` K steps a tile (the caller's `cdiv(K, BK)` over its K in bytes).
    #[tile_fn]
    fn pair_clc_roles_scaled(
        pipe: Pipe,
        accp: Pipe,
        clcp: Pipe,
        resp: Smem,
        acc: Tmem,
        a_s: Smem,
        b_s: Smem,
        sfa_s: Smem,
        sfb_s: Smem,
        sfa_t: Tmem,
        sfb_t: Tmem,
        a: Global,
        b: Global,
        sfa: Global,
        sfb: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        static_assert(
            128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );
        pair_tmem_acquire_scaled(acc, sfa_t, sfb_t);
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
                        it = produce_pair_scaled(
                            pipe, it, a_s, b_s, sfa_s, sfb_s, a, b, sfa, sfb, mp, n, k_tiles,
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
                            it = issue_pair_scaled(
                                pipe, it, acc, s, a_s, b_s, sfa_s, sfb_s, sfa_t, sfb_t, k_tiles,
                            );
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

    /// The producer's K loop of pair tile `(mp, n)` (256-row pair `mp`, BN-column tile `n`):
    /// this CTA's 128 rows of A, its BN / 2 rows of B, the `SFC` factor cells of its rows of A
    /// and of all BN rows of B, every box completing on the even CTA's full barrier
    /// (`.cta_group::2`, PTX ISA §9.7.9.25.5.1) — so the even CTA's MMA thread knows both
    /// CTAs' stages, factors included, have landed before it copies them.
    #[tile_fn]
    fn produce_pair_scaled(
        pipe: Pipe,
        it: u32,
        a_s: Smem,
        b_s: Smem,
        sfa_s: Smem,
        sfb_s: Smem,
        a: Global,
        b: Global,
        sfa: Global,
        sfb: Global,
        mp: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(
                a_s[s],
                a.tile(2 * mp + cta_rank, k),
                pipe.full(s),
                cta_group = 2,
            );
            tma::load(
                b_s[s],
                b.tile(2 * n + cta_rank, k),
                pipe.full(s),
                cta_group = 2,
            );
            for c in 0..SFC {
                tma::load(
                    sfa_s[s][c],
                    sfa.tile(2 * mp + cta_rank, SFC * k + c),
                    pipe.full(s),
                    cta_group = 2,
                );
                tma::load(
                    sfb_s[s][c],
                    sfb.tile(n, SFC * k + c),
                    pipe.full(s),
                    cta_group = 2,
                );
            }
            it += 1;
        }
        it
    }

    /// The even CTA's K loop of one tile into accumulator stage `stage` of both CTAs: per K
    /// step, both CTAs' factor cells of the stage into their TMEM factor stage
    /// (`tcgen05.cp.cta_group::2`), the block-scaled MMAs reading them, and the stage
    /// released in both CTAs by the pair's multicast commit.
    #[tile_fn]
    fn issue_pair_scaled(
        pipe: Pipe,
        it: u32,
        acc: Tmem,
        stage: u32,
        a_s: Smem,
        b_s: Smem,
        sfa_s: Smem,
        sfb_s: Smem,
        sfa_t: Tmem,
        sfb_t: Tmem,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            tcgen05::cp(sfa_t[s], sfa_s[s], cta_group = 2);
            tcgen05::cp(sfb_t[s], sfb_s[s], cta_group = 2);
            tcgen05::mma(
                acc[stage],
                a_s[s],
                b_s[s],
                accumulate = k > 0,
                scale_a = sfa_t[s],
                scale_b = sfb_t[s],
                cta_group = 2,
            );
            tcgen05::commit(pipe.empty(s), cta_group = 2);
            it += 1;
        }
        it
    }
}
