//! GEMM ladder, levels 4–8: the warp-specialized family, in one `#[tile_module]` so the
//! levels share their pieces instead of copying them.
//!
//! D = A·Bᵀ with A M×K and B N×K row-major (both K-major), FP32 accumulate (and D = A·B with
//! B K×N row-major for the `_nn` kernels). Levels 4 and 5 are BF16 in and out; the others
//! take their element types from the config (`TA` for A and B, `TD`
//! for D): `default` is BF16 → BF16, a config named after one type is that type in and out
//! (`f16`), and `<in>_<out>` names a mix (`bf16_f32`: BF16 in, FP32 out).
//! Every kernel here has the same roles: warpgroup 0 produces (its warp 0's elected thread
//! issues the TMA loads) and gives registers away (`setmaxnreg::dec(40)`); the consumers take
//! them (`setmaxnreg::inc(232)`): from level 5 on, warpgroups 1 and 2, each owning 64 rows of a
//! 128-row tile (`a_s[s][wg]`: the 128-row TMA box is two 64-row halves in shared memory). The roles are disjoint scopes,
//! lowered as one if/else chain, which is what lets ptxas give each branch its own register
//! budget. Each level adds one move:
//!
//! - level 4 `gemm_sm90_ws1`: the roles alone — one producer and one consumer warpgroup
//!   (256 threads) on a 128×128 tile, one CTA per tile;
//! - level 5 `gemm_sm90_2wg`: two consumer warpgroups, one CTA per 128×256 tile;
//! - level 6 `gemm_sm90_ws`: persistent — a grid of one CTA per SM walks the tiles in groups
//!   of GROUP tile rows (L2 reuse); the pipeline counter runs on across tiles;
//! - level 7 `gemm_sm90_cluster`: 2×1 clusters — the two CTAs compute vertically adjacent
//!   tiles that need the same B slab, each loads half of it and multicasts it to both;
//! - level 8 `gemm_sm90_tma_epi`: the epilogue goes through a swizzled staging tile in shared
//!   memory and TMA stores, overlapped with the next tile's MMAs;
//! - `gemm_sm90_pair_n`: level 8 for small outputs — 128×64 tiles in 1×2 clusters along N,
//!   the pair sharing (multicasting) its A panel;
//! - `gemm_sm90_ws_nn` (n64/n128) and `gemm_sm90_tma_epi_nn`: levels 6 and 8 with B given K×N (D = A·B, "NN"). Only B's shared
//!   layout changes: `major = mn` chunks of 64 columns, one `[BK, 64]` TMA box each, read by
//!   wgmma transposed — no copy of B is ever made.
//!
//! Measured on the H200 at 8192³ (`tirx bench gemm --ladder`, each level interleaved with
//! cuBLASLt; `docs/perf/gemm-h200.md`): level 4 566.3 TFLOP/s (0.87×, 2026-11-30), level 5
//! 650.2 (0.96×, 2026-11-30), level 6 658.0 (0.98×), level 7 657.0 (0.98×), level 8 697.3
//! (1.01×, 2026-11-29; 703.2, 1.013× in the 2026-11-30 sweep).

use tirx::prelude::*;

#[tile_module]
pub mod ladder {
    use tirx::prelude::*;

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

    /// [`produce`] with B given K×N (NN): B's shared slab is MN-major, one `[BK, 64]` TMA box
    /// per 64-column chunk; the chunk loop has constant bounds, so its boxes count toward the
    /// stage's one expect-tx.
    #[tile_fn]
    fn produce_nn(
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
            for c in 0..BN / 64 {
                tma::load(b_s[s][c], b.tile(k, (BN / 64) * n + c), pipe.full(s));
            }
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

    /// [`produce_multicast`] with B given K×N (NN): B's shared slab is MN-major,
    /// `[BN / 64 chunks][BK rows][64 columns]`, one `[BK, 64]` TMA box per chunk. This CTA's
    /// half of the slab is its BN / 128 chunks, each multicast to both CTAs; the chunk loop
    /// has constant bounds, so its boxes count toward the stage's one expect-tx. BN must be a
    /// multiple of 128, which a static assertion checks per config (with BN = 192 a third of B
    /// would silently never load).
    #[tile_fn]
    fn produce_multicast_nn(
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
        static_assert(
            BN % 128 == 0,
            "each CTA of the pair loads BN / 128 whole 64-column chunks of B: BN must be a multiple of 128",
        );
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
            for c in 0..BN / 128 {
                let chunk = (BN / 128) * cta_rank + c;
                tma::load(
                    b_s[s][chunk],
                    b.tile(k, (BN / 64) * n + chunk),
                    pipe.full(s),
                    multicast = 3,
                );
            }
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

    /// [`cluster_producer`] for B given K×N: the same role, walking the same tile pairs, with
    /// [`produce_multicast_nn`]'s K loop.
    #[tile_fn]
    fn cluster_producer_nn(
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
                    it = produce_multicast_nn(
                        pipe,
                        it,
                        a_s,
                        b_s,
                        a,
                        b,
                        2 * mp + cta_rank,
                        n,
                        k_tiles,
                    );
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

    /// [`produce_multicast_a`] with B given K×N (NN): the B tile is `BN / 64` MN-major chunks
    /// of 64 columns, one `[BK, 64]` box each, all this CTA's own (A is what the pair shares).
    #[tile_fn]
    fn produce_multicast_a_nn(
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
            for c in 0..BN / 64 {
                tma::load(b_s[s][c], b.tile(k, (BN / 64) * n + c), pipe.full(s));
            }
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

    /// [`cluster_producer_a`] for B given K×N.
    #[tile_fn]
    fn cluster_producer_a_nn(
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
                    it = produce_multicast_a_nn(
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

    /// A consumer warpgroup's K loop of one tile: one wgmma group stays in flight
    /// (`wgmma::wait(1)`), and each stage is released one K step later, once its MMAs are
    /// done; returns the pipeline iteration after the tile.
    #[tile_fn]
    fn consume(pipe: Pipe, it: u32, acc: Regs, a_s: Smem, b_s: Smem, wg: u32, k_tiles: u32) -> u32 {
        let leader = tid % 128 == 0;
        let mut it = it;
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
        it
    }

    /// Level 4: warp specialization — the roles split by warpgroup. Warpgroup 0 produces: it
    /// gives its registers away (`setmaxnreg::dec(40)`) and one elected thread of its warp 0
    /// issues the TMA loads ([`produce`]); warpgroup 1 consumes with the registers it took
    /// (`setmaxnreg::inc(232)`: a 128×128 f32 accumulator is 128 registers a thread), keeps
    /// one wgmma group in flight and releases each stage one K step later. One CTA per
    /// 128×128 tile.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, BN), cdiv(M, BM)),
        configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4)),
    )]
    pub fn gemm_sm90_ws1(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let _ = produce(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
            }
        }
        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(232);
            let leader = tid % 128 == 0;
            for k in 0..k_tiles {
                let s = pipe.consumer_wait(k);
                wgmma::fence();
                wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
                wgmma::commit();
                wgmma::wait(1);
                if k > 0 && leader {
                    pipe.consumer_release((k + STAGES - 1) % STAGES);
                }
            }
            wgmma::wait(0);
            if leader {
                pipe.consumer_release((k_tiles + STAGES - 1) % STAGES);
            }
            copy(d.tile(cta.y, cta.x), acc);
        }
    }

    /// Level 5: warp specialization with register reallocation and two consumer warpgroups
    /// on a 128×256 tile; one CTA per tile.
    #[tile_kernel(
        solves = gemm,
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
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let _ = produce(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
            }
        }
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let _ = consume(pipe, 0, acc, a_s, b_s, wg, k_tiles);
            copy(d.tile(2 * cta.y + wg, cta.x), acc);
        }
    }

    /// Level 6: persistent — one CTA per SM walks the output tiles with grouped
    /// rasterization; the pipeline's iteration counter runs on across tiles, so stage and
    /// phase stay consistent without a reset. `grid = (SMS, 1)`: the launcher reads the
    /// device's SM count (the cluster kernels below take it rounded down to whole clusters,
    /// `SMS / 2 * 2`).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        grid = (SMS, 1),
        configs(
            default = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 8, TA = bf16, TD = bf16),
            group16 = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 16, TA = bf16, TD = bf16),
            n128 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = bf16, TD = bf16),
            n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8, TA = bf16, TD = bf16),
            // The other element types, 128×128 tiles: the fallback of every type combination
            // when the TMA-store kernel does not apply (D's rows not 16-byte aligned, or
            // fewer tiles than half a wave).
            f16 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = f16, TD = f16),
            bf16_f16 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = bf16, TD = f16),
            f16_bf16 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = f16, TD = bf16),
            bf16_f32 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = bf16, TD = f32),
            f16_f32 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = f16, TD = f32),
            f16_n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8, TA = f16, TD = f16),
            bf16_f16_n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8, TA = bf16, TD = f16),
            f16_bf16_n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8, TA = f16, TD = bf16),
            bf16_f32_n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8, TA = bf16, TD = f32),
            f16_f32_n64 = (BM = 128, BN = 64, BK = 64, STAGES = 8, GROUP = 8, TA = f16, TD = f32),
        ),
    )]
    pub fn gemm_sm90_ws(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2);
        let tiles_m = cdiv(M, BM);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                    let (m, n) = grouped(t, tiles_m, tiles_n);
                    it = produce(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
                }
            }
        }
        ws_consumers(pipe, acc, a_s, b_s, d, tiles_m, tiles_n, k_tiles);
    }

    /// Level 6 with B given K×N ("NN"), for shapes too small for the cluster kernels: B's
    /// shared slab is MN-major (`[BN / 64, BK, 64]` per stage, `major = mn`), loaded one
    /// `[BK, 64]` box per chunk ([`produce_nn`]); the consumers are level 6's. N must be a
    /// multiple of 8 (B's rows 16-byte aligned for TMA).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        grid = (SMS, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(n128 = (BN = 128, STAGES = 6), n64 = (BN = 64, STAGES = 8)),
                with = (BM = 128, BK = 64, GROUP = 8),
            ),
        ),
    )]
    pub fn gemm_sm90_ws_nn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(K, N)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 64, BK, 64], swizzle = B128, major = mn);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2);
        let tiles_m = cdiv(M, BM);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                    let (m, n) = grouped(t, tiles_m, tiles_n);
                    it = produce_nn(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
                }
            }
        }
        ws_consumers(pipe, acc, a_s, b_s, d, tiles_m, tiles_n, k_tiles);
    }

    /// The consumer warpgroups of level 6: the same tile walk as the producer, each tile's K
    /// loop, then the accumulator stored from registers.
    #[tile_fn]
    fn ws_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d: Global,
        tiles_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                let (m, n) = grouped(t, tiles_m, tiles_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                copy(d.tile(2 * m + wg, n), acc);
            }
        }
    }

    /// Level 7: 2×1 clusters with TMA multicast — B crosses L2 once per cluster. A stage may
    /// be overwritten only once the consumers of both CTAs released it (`peers = 2`), and
    /// barriers are initialised cluster-wide before any multicast (the compiler adds the
    /// cluster barriers at entry and exit).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            n128 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = bf16, TD = bf16),
            product(
                types(default = (TA = bf16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(default = (BN = 256, STAGES = 4), n192 = (BN = 192, STAGES = 5)),
                with = (BM = 128, BK = 64, GROUP = 8),
            ),
        ),
    )]
    pub fn gemm_sm90_cluster(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        cluster_consumers(pipe, acc, a_s, b_s, d, pairs_m, tiles_n, k_tiles);
    }

    /// Level 7 with B given K×N (NN): level 7's NN producer, the same consumers. Shipped for
    /// an f32 D, whose register epilogue keeps 128×256 tiles (the TMA-store NN kernel's f32
    /// configs are 128×128), and BF16 → BF16.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 256, STAGES = 4),
            ),
        ),
    )]
    pub fn gemm_sm90_cluster_nn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(K, N)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 64, BK, 64], swizzle = B128, major = mn);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer_nn(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        cluster_consumers(pipe, acc, a_s, b_s, d, pairs_m, tiles_n, k_tiles);
    }

    /// The consumer warpgroups of level 7: the cluster's tile walk (pairs of M tiles), each
    /// tile's K loop, then the accumulator stored from registers.
    #[tile_fn]
    fn cluster_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                copy(d.tile(2 * (2 * mp + cta_rank) + wg, n), acc);
            }
        }
    }

    /// Level 8: the epilogue through shared memory and TMA stores, overlapped with the next
    /// tile. A consumer warpgroup converts its accumulator into a 128B-swizzled staging tile
    /// (`copy(d_s[wg], acc)`: conflict-free `st.shared`), fences the generic proxy against the
    /// async one, and its leader hands the 64×64 column blocks to the TMA engine, which clips
    /// them at the tensor's edge; the warpgroup goes straight on to the next tile's MMAs.
    /// Before overwriting the staging tile, the leader waits only until the previous stores
    /// have read it. Named barriers 1 and 2 order each warpgroup's threads around the staging
    /// tile without stopping the other roles. A staging block is one 128-byte swizzle row wide:
    /// EPI_N = 64 columns of a 16-bit D, 32 of an f32 D. With a 16-bit D the staging tiles take
    /// 64 KB, so three stages of 128×256; an f32 D would need 128 KB of staging at BN = 256,
    /// which leaves too little for the pipeline, so f32 configs use 128×128 tiles (64 KB of
    /// staging, five 32 KB stages: 224 KB of the 227 KB).
    /// D's rows must be 16-byte aligned (N a multiple of 8, or of 4 for f32): the runtime
    /// refuses others.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5), n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
            product(
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_tma_epi(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        tma_epi_consumers(pipe, acc, a_s, b_s, d_s, d, pairs_m, tiles_n, k_tiles);
    }

    /// Level 8 with B given K×N ("NN": `b` row-major K×N, so N is contiguous): the same
    /// kernel but for B's shared slab, which is MN-major — `[BN / 64, BK, 64]` per stage,
    /// declared `major = mn`, filled by one `[BK, 64]` TMA box per 64-column chunk and read by
    /// `wgmma` with `imm-trans-b = 1`. Transposition is a layout change, never a copy. N must
    /// be a multiple of 8 (B's and D's rows 16-byte aligned: the runtime refuses others).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 256, STAGES = 3, EPI_N = 64),
            ),
            product(
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_tma_epi_nn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(K, N)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 64, BK, 64], swizzle = B128, major = mn);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer_nn(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        tma_epi_consumers(pipe, acc, a_s, b_s, d_s, d, pairs_m, tiles_n, k_tiles);
    }

    /// The consumer warpgroups of level 8: each K loop of a tile pair, then the accumulator
    /// through the swizzled staging tile `d_s[wg]` and TMA stores of its 64×64 column blocks,
    /// overlapped with the next tile (see [`gemm_sm90_tma_epi`]).
    #[tile_fn]
    fn tma_epi_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                let row = 2 * (2 * mp + cta_rank) + wg;
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// Level 8 for few tiles: 128×64 tiles in 1×2 clusters along N — the two CTAs of a
    /// cluster compute horizontally adjacent tiles, each loads one half of their common A
    /// panel and multicasts it, so a CTA reads 128 operand rows per K step instead of 192;
    /// the epilogue is level 8's. Small outputs (about one wave of 128×64 tiles) are
    /// operand-supply bound, which is what this cuts.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 64, STAGES = 8, EPI_N = 128 / size_of(TD)),
            ),
        ),
    )]
    pub fn gemm_sm90_pair_n(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let tiles_m = cdiv(M, BM);
        let pairs_n = cdiv(cdiv(N, BN), 2);
        let k_tiles = cdiv(K, BK);
        cluster_producer_a(pipe, a_s, b_s, a, b, tiles_m, pairs_n, k_tiles);
        pair_n_consumers(pipe, acc, a_s, b_s, d_s, d, tiles_m, pairs_n, k_tiles);
    }

    /// The consumer warpgroups of [`gemm_sm90_pair_n`] (and its NN twin): the producer's tile
    /// walk (pairs along N), each tile's K loop, then level 8's epilogue.
    #[tile_fn]
    fn pair_n_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        tiles_m: u32,
        pairs_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for u in (cta.x / 2..tiles_m * pairs_n).step_by(ncta.x / 2) {
                let (m, np) = grouped(u, tiles_m, pairs_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                store_tile(
                    d,
                    d_s,
                    acc,
                    wg,
                    2 * m + wg,
                    (2 * np + cta_rank) * (BN / EPI_N),
                );
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// [`gemm_sm90_pair_n`] with B given K×N (NN): B's 64-column tile is one MN-major chunk.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 64, STAGES = 8, EPI_N = 128 / size_of(TD)),
            ),
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_pair_n_nn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(K, N)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 64, BK, 64], swizzle = B128, major = mn);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let tiles_m = cdiv(M, BM);
        let pairs_n = cdiv(cdiv(N, BN), 2);
        let k_tiles = cdiv(K, BK);
        cluster_producer_a_nn(pipe, a_s, b_s, a, b, tiles_m, pairs_n, k_tiles);
        pair_n_consumers(pipe, acc, a_s, b_s, d_s, d, tiles_m, pairs_n, k_tiles);
    }
    /// Level 8 with the BLAS epilogue, D = α·A·Bᵀ + β·C (`alpha`, `beta` scalar arguments, C
    /// M×N in D's type). Per tile, before its K loop, a consumer warpgroup's leader loads C's
    /// blocks into the staging tile with TMA (the same boxes the stores use, so tails are
    /// clipped and zero-filled the same way), so they arrive while the MMAs run; after the K
    /// loop the warpgroup waits for them on its own barrier (`c_bar[wg]`, one phase per tile),
    /// and `copy(d_s[wg], acc, alpha = alpha, beta = beta)` turns each staged C value into
    /// `α·acc + β·C` in place before the TMA stores. Where β is
    /// 0, C is loaded but never read (it may hold NaN), as BLAS specifies; the host sends
    /// β = 0, α = 1 to `gemm_sm90_tma_epi` instead.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5), n64 = (BN = 64, STAGES = 8)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
            product(
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(default = (BN = 128, STAGES = 5), n64 = (BN = 64, STAGES = 7)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_tma_epi_abc(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let c_bar = mbarrier(count = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        abc_consumers(
            pipe, acc, a_s, b_s, d_s, c_bar, c, d, alpha, beta, pairs_m, tiles_n, k_tiles,
        );
    }

    /// [`gemm_sm90_tma_epi_abc`] with B given K×N (NN): level 8's NN producer, the same
    /// consumers.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
            product(
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_tma_epi_abc_nn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(K, N)] b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 64, BK, 64], swizzle = B128, major = mn);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let c_bar = mbarrier(count = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer_nn(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        abc_consumers(
            pipe, acc, a_s, b_s, d_s, c_bar, c, d, alpha, beta, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_tma_epi_abc`] (and its NN twin): each tile's
    /// K loop, C's blocks loaded into the staging tile, `α·acc + β·C` in place, TMA stores.
    #[tile_fn]
    fn abc_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        c_bar: Bar,
        c: Global,
        d: Global,
        alpha: f32,
        beta: f32,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            let mut tile = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                let col = n * (BN / EPI_N);
                load_c(d_s, c_bar, c, wg, row, col);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                store_scaled(d_s, acc, c_bar, d, alpha, beta, wg, row, col, tile);
                tile += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
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

    /// [`gemm_sm90_pair_n`] with the BLAS epilogue of [`gemm_sm90_tma_epi_abc`], D = α·A·Bᵀ +
    /// β·C: 128×64 tiles in 1×2 clusters sharing A, for outputs of about one wave of them.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 64, STAGES = 8, EPI_N = 128 / size_of(TD)),
            ),
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_pair_n_abc(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let c_bar = mbarrier(count = 2);
        let tiles_m = cdiv(M, BM);
        let pairs_n = cdiv(cdiv(N, BN), 2);
        let k_tiles = cdiv(K, BK);
        cluster_producer_a(pipe, a_s, b_s, a, b, tiles_m, pairs_n, k_tiles);
        pair_n_abc_consumers(
            pipe, acc, a_s, b_s, d_s, c_bar, c, d, alpha, beta, tiles_m, pairs_n, k_tiles,
        );
    }

    /// [`gemm_sm90_pair_n_abc`] with B given K×N (NN).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 64, STAGES = 8, EPI_N = 128 / size_of(TD)),
            ),
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_pair_n_abc_nn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(K, N)] b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 64, BK, 64], swizzle = B128, major = mn);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let c_bar = mbarrier(count = 2);
        let tiles_m = cdiv(M, BM);
        let pairs_n = cdiv(cdiv(N, BN), 2);
        let k_tiles = cdiv(K, BK);
        cluster_producer_a_nn(pipe, a_s, b_s, a, b, tiles_m, pairs_n, k_tiles);
        pair_n_abc_consumers(
            pipe, acc, a_s, b_s, d_s, c_bar, c, d, alpha, beta, tiles_m, pairs_n, k_tiles,
        );
    }

    /// The consumer warpgroups of the pair-N scaled kernels: [`pair_n_consumers`]' tile walk
    /// with the scaled epilogue ([`load_c`] before each K loop, [`store_scaled`] after).
    #[tile_fn]
    fn pair_n_abc_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        c_bar: Bar,
        c: Global,
        d: Global,
        alpha: f32,
        beta: f32,
        tiles_m: u32,
        pairs_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            let mut tile = 0;
            for u in (cta.x / 2..tiles_m * pairs_n).step_by(ncta.x / 2) {
                let (m, np) = grouped(u, tiles_m, pairs_n);
                let row = 2 * m + wg;
                let col = (2 * np + cta_rank) * (BN / EPI_N);
                load_c(d_s, c_bar, c, wg, row, col);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                store_scaled(d_s, acc, c_bar, d, alpha, beta, wg, row, col, tile);
                tile += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}

pub use ladder::*;
