//! The GEMM ladder's shared pieces, a tile library: the tile walk ([`grouped`]), the
//! producers' K loops and roles (plain, multicasting B's half in a 2×1 cluster, or A's half in
//! a 1×2 pair), the consumers' K loop ([`consume`]) and the epilogue blocks (TMA store of one
//! warpgroup's accumulator, plain or scaled, both ending in [`issue_stores`]; C loaded for the
//! scaled epilogue; the fused bias and activation, [`bias_act`]), and the Blackwell CTA pair's
//! pieces (its TMEM acquire and release, its producer's and MMA issuer's K loops). Each level's
//! file names it with `#[tile_module(uses(super::pieces::gemm_pieces))]`, and the functions
//! are inlined there as if written in that file.
//!
//! Every function here is generic over B's layout: a producer's `tma::load(b_s[s], b.tile(n,
//! k), …)` loads a K-major B in one box and an MN-major B (`#[major(mn)]`, shared tile
//! `major = mn`) in one `[BK, 64]` box per 64-column chunk — the layout decides.

use tirx::prelude::*;

#[tile_module(library)]
mod gemm_pieces {
    use tirx::prelude::*;

    /// Tensor memory for `acc`: allocated by warp 0 (the allocating warp must be whole, PTX
    /// ISA §9.7.16.7.1), the allocation permit given up for the CTAs that follow, and the
    /// address made visible to every thread (`tcgen05.fence::before_thread_sync`, the CTA
    /// barrier, `::after_thread_sync`, §9.7.16.6.4).
    #[tile_fn]
    fn tmem_acquire(acc: Tmem) {
        #[scope(warp = 0)]
        {
            tcgen05::alloc(acc);
            tcgen05::relinquish();
        }
        tcgen05::fence_before();
        sync_threads();
        tcgen05::fence_after();
    }

    /// The reverse of [`tmem_acquire`]: every thread's last TMEM access ordered before the
    /// CTA barrier, then warp 0 — the warp that allocated — frees the columns.
    #[tile_fn]
    fn tmem_release(acc: Tmem) {
        tcgen05::fence_before();
        sync_threads();
        #[scope(warp = 0)]
        {
            tcgen05::dealloc(acc);
        }
    }

    /// Grouped rasterization: unit `u` of `rows_total × tiles_n` units, visited in groups of
    /// GROUP rows so that concurrently running CTAs share operand panels in L2; returns
    /// (row unit, column tile).
    #[tile_fn]
    fn grouped(u: u32, rows_total: u32, tiles_n: u32) -> (u32, u32) {
        let group_size = GROUP * tiles_n;
        let first = (u / group_size) * GROUP;
        let rows = min(rows_total - first, GROUP);
        (first + (u % group_size) % rows, (u % group_size) / rows)
    }

    /// The producer's K loop of one tile: A rows `m` and B rows `n` (tile units); returns the
    /// pipeline iteration after the tile.
    #[tile_fn]
    fn produce(
        pipe: Pipe,
        it: u32,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        m: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
            tma::load(b_s[s], b.tile(n, k), pipe.full(s));
            it += 1;
        }
        it
    }

    /// The producer's K loop of one tile in a 2×1 cluster: this CTA's half of the B slab is
    /// multicast to both CTAs (the full barrier counts both halves).
    #[tile_fn]
    fn produce_multicast(
        pipe: Pipe,
        it: u32,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        m: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
            tma::load(
                b_s[s][cta_rank],
                b.tile(2 * n + cta_rank, k),
                pipe.full(s),
                multicast = 3,
            );
            it += 1;
        }
        it
    }

    /// The producer warpgroup of a persistent 2×1-cluster kernel: gives its registers away,
    /// then its warp 0's elected thread walks this cluster's tile pairs (row pair `mp`, this
    /// CTA's row `2·mp + rank`) and loads each one's K steps, multicasting B halves.
    #[tile_fn]
    fn cluster_producer(
        pipe: Pipe,
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
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                    let (mp, n) = grouped(u, pairs_m, tiles_n);
                    it = produce_multicast(pipe, it, a_s, b_s, a, b, 2 * mp + cta_rank, n, k_tiles);
                }
            }
        }
    }

    /// The producer's K loop of one tile in a 1×2 cluster (pairs along N): the two CTAs
    /// compute horizontally adjacent tiles that need the same A panel; each loads one 64-row
    /// half of it and multicasts it to both (the full barrier counts both halves).
    #[tile_fn]
    fn produce_multicast_a(
        pipe: Pipe,
        it: u32,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        m: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(
                a_s[s][cta_rank],
                a.tile(2 * m + cta_rank, k),
                pipe.full(s),
                multicast = 3,
            );
            tma::load(b_s[s], b.tile(n, k), pipe.full(s));
            it += 1;
        }
        it
    }

    /// The producer warpgroup of a persistent cluster kernel whose pairs run along N: this
    /// CTA computes column tile `2·np + rank` of row tile `m`, and shares the A panel.
    #[tile_fn]
    fn cluster_producer_a(
        pipe: Pipe,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        tiles_m: u32,
        pairs_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for u in (cta.x / 2..tiles_m * pairs_n).step_by(ncta.x / 2) {
                    let (m, np) = grouped(u, tiles_m, pairs_n);
                    it = produce_multicast_a(
                        pipe,
                        it,
                        a_s,
                        b_s,
                        a,
                        b,
                        m,
                        2 * np + cta_rank,
                        k_tiles,
                    );
                }
            }
        }
    }

    /// The TMA-store epilogue of one warpgroup's 64×BN accumulator: D rows `row` (64-row
    /// units), columns from `col` (EPI_N-column units: the staging blocks are 64 × EPI_N, one
    /// 128-byte swizzle row wide — 64 columns of a 16-bit D, 32 of an f32 D). The leader first waits until the previous
    /// tile's stores have read the staging tile; the warpgroup converts the accumulator into
    /// it, fences the generic proxy against the async one, and the leader issues the stores
    /// without waiting for them.
    #[tile_fn]
    fn store_tile(d: Global, d_s: Smem, acc: Regs, wg: u32, row: u32, col: u32) {
        #[scope(leader)]
        {
            tma::wait_group_read(0);
        }
        named_barrier(wg + 1, 128);
        copy(d_s[wg], acc);
        issue_stores(d, d_s, wg, row, col);
    }

    /// The end of a TMA-store epilogue, once the warpgroup has written its tile into `d_s[wg]`:
    /// fence the generic proxy against the async one, sync the warpgroup, and the leader
    /// issues the stores of D rows `row` (64-row units), columns from `col` (EPI_N-column
    /// units), without waiting for them.
    #[tile_fn]
    fn issue_stores(d: Global, d_s: Smem, wg: u32, row: u32, col: u32) {
        fence::proxy_async();
        named_barrier(wg + 1, 128);
        #[scope(leader)]
        {
            for cb in 0..BN / EPI_N {
                tma::store(d.tile(row, col + cb), d_s[wg][cb]);
            }
            tma::commit_group();
        }
    }

    /// The TMA-store epilogue of a ping-pong consumer warpgroup: the two consumer
    /// warpgroups own alternate tiles and share one staging tile `d_s` (`[BN / EPI_N, BM,
    /// EPI_N]`), used by turns. Warpgroup `wg` waits for its turn (named barrier `3 + wg`,
    /// 128 threads syncing and the other warpgroup's 128 arriving), converts `acc` into
    /// `d_s`, issues the stores of D rows `row` (BM-row units) and columns from `col`, waits
    /// until they have read `d_s`, and — when the other warpgroup has another tile (`more`) —
    /// passes it the turn without waiting (`named_barrier_arrive`; warp 0 arrives only after
    /// its leader's wait, so the barrier completes after it). The first turn is given by
    /// [`first_turn`].
    #[tile_fn]
    fn store_tile_turn(d: Global, d_s: Smem, acc: Regs, wg: u32, row: u32, col: u32, more: bool) {
        named_barrier(3 + wg, 256);
        copy(d_s, acc);
        fence::proxy_async();
        named_barrier(wg + 1, 128);
        #[scope(leader)]
        {
            for cb in 0..BN / EPI_N {
                tma::store(d.tile(row, col + cb), d_s[cb]);
            }
            tma::commit_group();
            tma::wait_group_read(0);
        }
        if more {
            named_barrier_arrive(3 + (wg + 1) % 2, 256);
        }
    }

    /// The first turns of [`consume_turn`] and [`store_tile_turn`]: warpgroup 1 gives both
    /// to warpgroup 0, when warpgroup 0 has a tile (`any`).
    #[tile_fn]
    fn first_turn(wg: u32, any: bool) {
        if wg == 1 && any {
            named_barrier_arrive(5, 256);
            named_barrier_arrive(3, 256);
        }
    }

    /// The K loop of a ping-pong consumer warpgroup `wg`: as [`consume`] (A from `a_s[s][0]`),
    /// in turns with the other consumer warpgroup. The warpgroup waits for its turn (named
    /// barrier `5 + wg`, 128 threads syncing and the other's 128 arriving) and, once its last
    /// full-barrier wait has passed and its last MMAs are issued, passes the turn when the
    /// other has another tile (`more`).
    ///
    /// The turns are what make the parity waits sound. A wait names an iteration's phase by
    /// its parity only, which cannot tell it from the phase two before (PTX ISA §9.7.13.15.16:
    /// `phaseParity` names the current or the immediately preceding phase): waiting for
    /// iteration `i` of stage `i % STAGES` is right only once iteration `i − STAGES` has
    /// landed. Within a tile the warpgroup's own previous wait guarantees that; at a tile's
    /// first `STAGES` K steps those iterations are the other warpgroup's (the counter skips
    /// its `k_tiles ≥ STAGES` steps), and only its turn says they have landed. Without it
    /// warpgroup 1's first wait (iteration `k_tiles`, parity `k_tiles / STAGES % 2`) passes on
    /// tile 0's phase, its early releases let the producer refill stages still being read
    /// and arrive on a full barrier whose phase has no arrival left (the H200 fault, #29).
    #[tile_fn]
    fn consume_turn(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        wg: u32,
        k_tiles: u32,
        more: bool,
    ) -> u32 {
        named_barrier(5 + wg, 256);
        let leader = tid % 128 == 0;
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            mma_stage(acc, a_s, b_s, s, 0, k, false);
            wgmma::wait(1);
            if k > 0 && leader {
                pipe.consumer_release((it + STAGES - 1) % STAGES);
            }
            it += 1;
        }
        if more {
            named_barrier_arrive(5 + (wg + 1) % 2, 256);
        }
        wgmma::wait(0);
        if leader {
            pipe.consumer_release((it + STAGES - 1) % STAGES);
        }
        it
    }

    /// A consumer warpgroup's K loop of one tile: one wgmma group stays in flight
    /// (`wgmma::wait(1)`), and each stage is released one K step later, once its MMAs are
    /// done; returns the pipeline iteration after the tile.
    #[tile_fn]
    fn consume(pipe: Pipe, it: u32, acc: Regs, a_s: Smem, b_s: Smem, wg: u32, k_tiles: u32) -> u32 {
        let leader = tid % 128 == 0;
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            mma_stage(acc, a_s, b_s, s, wg, k, false);
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
        it
    }

    /// One K step of a consumer warpgroup's loop, on the stage `s` it has waited for: the
    /// wgmma group of its A rows `a_s[s][wg]` by all of `b_s[s]` into `acc`, between a fence
    /// and a commit (`wgmma.fence`, `wgmma.mma_async`, `wgmma.commit_group`: PTX ISA
    /// §9.7.15.7.1, §9.7.15.5.2, §9.7.15.7.3). The products add to `acc` from the second K
    /// step on (`k > 0`); with `fresh` every K step starts from zero (scale-d = 0: the
    /// promoted accumulation's fragment). The waits and releases around it differ between the
    /// loops (one group in flight and each stage released a step later, or none and released
    /// at once), so they stay there.
    #[tile_fn]
    fn mma_stage(acc: Regs, a_s: Smem, b_s: Smem, s: u32, wg: u32, k: u32, fresh: bool) {
        wgmma::fence();
        wgmma::mma(acc, a_s[s][wg], b_s[s], accumulate = k > 0 && !fresh);
        wgmma::commit();
    }

    /// A consumer warpgroup's K loop of one tile with **promoted** accumulation (the FP8
    /// GEMMs' `PROMOTE = BK` configs): each K tile's wgmmas accumulate into a fresh f32
    /// fragment `part` (scale-d = 0 on the first of them, PTX ISA §9.7.15.5.2), and once they
    /// are done (`wgmma::wait(0)`) the tile's stage is released and `acc += part` runs on the
    /// FMA pipe — one `add.f32` a register a K tile. The tensor core's FP8 adder, which keeps
    /// fewer bits than f32, then only sums one K tile's products (BK = 128: CUTLASS's "mma
    /// promotion interval" of four k32 MMAs) before they reach full f32. `acc` is zeroed here;
    /// returns the pipeline iteration after the tile. The warpgroup has no MMAs queued across
    /// its wait and promotion; the other consumer warpgroup's keep the tensor core busy then.
    #[tile_fn]
    fn consume_promoted(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part: Regs,
        a_s: Smem,
        b_s: Smem,
        wg: u32,
        k_tiles: u32,
    ) -> u32 {
        let leader = tid % 128 == 0;
        let mut it = it;
        acc = 0.0;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            mma_stage(part, a_s, b_s, s, wg, k, true);
            wgmma::wait(0);
            if leader {
                pipe.consumer_release(s);
            }
            acc = acc + part;
            it += 1;
        }
        it
    }

    /// The first half of the scaled epilogue, issued before a tile's K loop so that C arrives
    /// while the MMAs run: once the previous tile's stores have read the staging tile, the
    /// leader loads C's blocks (row block `row`, column blocks from `col`) into `d_s[wg]`,
    /// counted by `c_bar[wg]`.
    #[tile_fn]
    fn load_c(d_s: Smem, c_bar: Bar, c: Global, wg: u32, row: u32, col: u32) {
        #[scope(leader)]
        {
            tma::wait_group_read(0);
            for cb in 0..BN / EPI_N {
                tma::load(d_s[wg][cb], c.tile(row, col + cb), c_bar[wg]);
            }
        }
    }

    /// The second half, after the K loop: wait for C (phase `tile % 2` of `c_bar[wg]`), turn
    /// each staged value into `α·acc + β·C` in place, and store the blocks with TMA.
    #[tile_fn]
    fn store_scaled(
        d_s: Smem,
        acc: Regs,
        c_bar: Bar,
        d: Global,
        alpha: f32,
        beta: f32,
        wg: u32,
        row: u32,
        col: u32,
        tile: u32,
    ) {
        c_bar[wg].wait(tile % 2);
        copy(d_s[wg], acc, alpha = alpha, beta = beta);
        issue_stores(d, d_s, wg, row, col);
    }

    /// The fused epilogue's arithmetic on an accumulator tile `acc` in registers (a Hopper
    /// warpgroup's fragment, or a block of a Blackwell accumulator read from TMEM): the bias
    /// `bias_t` (the column statistic of `acc`'s layout, `stat(acc, axis = 0)`) added, then the
    /// activation of the config constant `ACT` in place — 0 none, 1 ReLU, 2 GELU (tanh form,
    /// `tanh.approx`, PTX ISA §9.7.3.23), 3 SiLU (`x · 1/(1 + 2^(−x·log2 e))`, `ex2.approx`
    /// and `rcp.approx`, §9.7.3.21, §9.7.3.16).
    #[tile_fn]
    fn bias_act(acc: Regs, bias_t: Regs) {
        acc = acc + bias_t;
        if ACT == 1 {
            acc = max(acc, 0.0);
        }
        if ACT == 2 {
            acc = 0.5 * acc * (1.0 + tanh_approx(0.7978846 * (acc + 0.044715 * acc * acc * acc)));
        }
        if ACT == 3 {
            acc = acc * rcp_approx(1.0 + exp2_approx(acc * -1.442695));
        }
    }

    /// The pair's TMEM: warp 0 of each CTA allocates the same columns (`cta_group::2`), gives
    /// up the permit, and the address is made visible to every thread of both CTAs.
    #[tile_fn]
    fn pair_tmem_acquire(acc: Tmem) {
        #[scope(warp = 0)]
        {
            tcgen05::alloc(acc, cta_group = 2);
            tcgen05::relinquish(cta_group = 2);
        }
        tcgen05::fence_before();
        cluster_sync();
        tcgen05::fence_after();
    }

    /// The pair's release: every TMEM access of both CTAs ordered before the cluster barrier
    /// (the peer's last read first), then warp 0 of each CTA frees the columns together.
    #[tile_fn]
    fn pair_tmem_release(acc: Tmem) {
        tcgen05::fence_before();
        cluster_sync();
        #[scope(warp = 0)]
        {
            tcgen05::dealloc(acc, cta_group = 2);
        }
    }

    /// The producer's K loop of one tile for the pair: this CTA's A rows `m` (128-row units)
    /// and B rows `n` (BN / 2-row units), each box completing on the even CTA's full barrier.
    #[tile_fn]
    fn produce_pair(
        pipe: Pipe,
        it: u32,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        m: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s), cta_group = 2);
            tma::load(b_s[s], b.tile(n, k), pipe.full(s), cta_group = 2);
            it += 1;
        }
        it
    }

    /// The even CTA's K loop of one tile into accumulator stage `stage` of both CTAs: each
    /// stage of the ring released in both CTAs by the pair's multicast commit.
    #[tile_fn]
    fn issue_pair(
        pipe: Pipe,
        it: u32,
        acc: Tmem,
        stage: u32,
        a_s: Smem,
        b_s: Smem,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            tcgen05::mma(
                acc[stage],
                a_s[s],
                b_s[s],
                accumulate = k > 0,
                cta_group = 2,
            );
            tcgen05::commit(pipe.empty(s), cta_group = 2);
            it += 1;
        }
        it
    }
}
