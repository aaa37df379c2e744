//! The FP8 GEMMs of `fp8.rs` (per-tensor and row-wise scales) with a **ping-pong** consumer
//! schedule: each consumer warpgroup owns whole tiles, and the two take alternate tiles of the
//! persistent walk, so one warpgroup's epilogue (scale, convert, stage, TMA store) runs while
//! the other's MMAs keep the tensor core busy.
//!
//! In `fp8.rs`'s cooperative schedule the two consumer warpgroups split one 128×BN tile into
//! two 64-row halves: they finish the tile together and run its epilogue together, and the
//! tensor core idles for every epilogue (measured on the H200: tensor pipe 90% busy at 8192³,
//! cuBLAS's kernel 97%). Here a tile is 64×256 — one warpgroup's m64n256 accumulator, 128 f32
//! registers a thread, the same registers as the cooperative tile's half — and the cluster's
//! tiles `j = 0, 1, 2, …` (in the order the producer loads them) alternate: warpgroup `w`
//! takes the tiles with `j % 2 == w`. This is the schedule CUTLASS calls "pingpong"
//! (`KernelTmaWarpSpecializedPingpong`); the code here is the language's own pieces.
//!
//! - **One consumer per stage.** Each stage of the ring holds one K step of one tile, so it is
//!   released by one warpgroup in each CTA of the pair (`consumers = 1, peers = 2`). Warpgroup
//!   `w`'s pipeline counter starts at `w · k_tiles` (the first `k_tiles` steps are tile 0's)
//!   and, after each of its tiles, skips the `k_tiles` steps of the other's.
//! - **K loops by turns.** The two warpgroups' K loops alternate strictly, as CUTLASS's
//!   ordering barrier makes them (`pieces.rs`'s `consume_turn`: named barriers 5 and 6, a
//!   warpgroup passing the turn once its last full-barrier wait has passed and its last MMAs
//!   are issued). This is needed for correctness, not only for speed: a full-barrier wait
//!   names its phase by parity, so warpgroup `w`'s first wait of a tile (iteration `i`, the
//!   other's `k_tiles` steps skipped) is right only once iteration `i − STAGES` has landed —
//!   with `k_tiles ≥ STAGES` an iteration of the other's tile, which only its turn vouches
//!   for. Without the turns, warpgroup 1's first wait passed on tile 0's phase (the H200
//!   fault at 2048×3000×1024, K = 8 steps of 4 stages: an unspecified launch failure at the
//!   producer's `arrive.expect_tx`). The turn passes before the warpgroup waits for its
//!   last MMAs, so the other's first MMAs queue right behind them.
//! - **Epilogues by turns, one staging tile.** The epilogues alternate too (each comes after
//!   its warpgroup's MMAs), so the two share one staging tile `d_s` (32 KB) by turns
//!   (`pieces.rs`'s `store_tile_turn`: named barriers 3 and 4, each 128 threads syncing and
//!   the other warpgroup's 128 arriving). A warpgroup waits until its stores have read `d_s`
//!   before passing the turn — off the tensor core's path, since the other warpgroup is in
//!   its MMAs then — and passes it only when the other has another tile, so no arrival is
//!   left unmatched at exit.
//! - **Stages.** Default: a 64×256 tile, a stage is A's 64×128 (8 KB) and B's 256×128
//!   (32 KB) E4M3, four stages (160 KB) + `d_s` = 192 of the 227 KB (a fifth stage does not
//!   fit). `m128`: a 128×128 tile a warpgroup (the tile of cuBLAS's H200 kernel): the same 128
//!   accumulator registers as two m64n128 wgmmas a K step, half the column scales; a stage
//!   is 16 + 16 KB, six stages (192 KB) + `d_s` = 224 KB — the same producer lead in time as
//!   the cooperative default's three 48 KB stages. Four is a power of two (the stage and
//!   parity of a counter are a mask and a shift); six is not (TODO(#29): a running
//!   stage/phase counter).
//! - The producer, the K loop, the tile walk and the epilogue are `gemm/pieces.rs`'s, as in
//!   `fp8.rs`: a 2×1 cluster multicasting B's halves, A's rows `2·mp + rank` (BM-row units).
//!
//! Tails, scales and accumulation as in `fp8.rs`.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// D = (scale_a·scale_b)·A·Bᵀ as `fp8.rs`'s `gemm_sm90_fp8`, with the ping-pong
    /// schedule. A stage holds A as one BM-row slice (`a_s[s][0]`, the operand `consume`
    /// reads).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(product(
            types(default = (TA = e4m3, TD = bf16), f16 = (TA = e4m3, TD = f16), e5m2 = (TA = e5m2, TD = bf16)),
            tile(default = (BM = 64, BN = 256, STAGES = 4), m128 = (BM = 128, BN = 128, STAGES = 6)),
            with = (BK = 128, GROUP = 8, EPI_N = 64, PINGPONG = 1),
        )),
    )]
    pub fn gemm_sm90_fp8_pingpong(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
        scale_a: f32,
        scale_b: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 1, BM, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([BN / EPI_N, BM, EPI_N], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        tensor_scaled_pingpong(
            pipe, acc, a_s, b_s, d_s, d, scale_a, scale_b, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumers of [`gemm_sm90_fp8_pingpong`]: warpgroup `wg` walks every other tile of
    /// the cluster's walk, from its `wg`-th, skips the other's K steps in the pipeline, and
    /// runs its K loops and epilogues in turns with the other.
    #[tile_fn]
    fn tensor_scaled_pingpong(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        scale_a: f32,
        scale_b: f32,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let scale = scale_a * scale_b;
            let units = pairs_m * tiles_n;
            let step = ncta.x / 2;
            first_turn(wg, cta.x / 2 < units);
            let mut it = wg * k_tiles;
            for u in (cta.x / 2 + wg * step..units).step_by(2 * step) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                it = consume_turn(pipe, it, acc, a_s, b_s, wg, k_tiles, u + step < units);
                it += k_tiles;
                acc = acc * scale;
                let col = n * (BN / EPI_N);
                store_tile_turn(d, d_s, acc, wg, 2 * mp + cta_rank, col, u + step < units);
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// D = diag(sa)·A·Bᵀ·diag(sb) as `fp8.rs`'s `gemm_sm90_fp8_rowwise`, with the ping-pong
    /// schedule.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(product(
            types(default = (TA = e4m3, TD = bf16), f16 = (TA = e4m3, TD = f16), e5m2 = (TA = e5m2, TD = bf16)),
            tile(default = (BM = 64, BN = 256, STAGES = 4), m128 = (BM = 128, BN = 128, STAGES = 6)),
            with = (BK = 128, GROUP = 8, EPI_N = 64, PINGPONG = 1),
        )),
    )]
    pub fn gemm_sm90_fp8_rowwise_pingpong(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M)] sa: Tensor<f32>,
        #[shape(N)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 1, BM, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([BN / EPI_N, BM, EPI_N], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let sa_t = regs::<f32>([BM, 1], layout = stat(acc, axis = 1));
        let sb_t = regs::<f32>([1, BN], layout = stat(acc, axis = 0));
        let pipe = pipeline::<STAGES>(consumers = 1, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        row_scaled_pingpong(
            pipe, acc, sa_t, sb_t, a_s, b_s, d_s, d, sa, sb, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumers of [`gemm_sm90_fp8_rowwise_pingpong`]: as [`tensor_scaled_pingpong`],
    /// with each tile's row and column scales loaded before its K loop (their latency hides
    /// behind the MMAs) and applied after it.
    #[tile_fn]
    fn row_scaled_pingpong(
        pipe: Pipe,
        acc: Regs,
        sa_t: Regs,
        sb_t: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        sa: Global,
        sb: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let units = pairs_m * tiles_n;
            let step = ncta.x / 2;
            first_turn(wg, cta.x / 2 < units);
            let mut it = wg * k_tiles;
            for u in (cta.x / 2 + wg * step..units).step_by(2 * step) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * mp + cta_rank;
                copy(sa_t, sa.tile(row));
                copy(sb_t, sb.tile(n));
                it = consume_turn(pipe, it, acc, a_s, b_s, wg, k_tiles, u + step < units);
                it += k_tiles;
                acc = acc * sa_t * sb_t;
                store_tile_turn(d, d_s, acc, wg, row, n * (BN / EPI_N), u + step < units);
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}
