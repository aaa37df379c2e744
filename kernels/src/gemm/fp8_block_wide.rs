//! The block-scaled FP8 GEMM (`fp8_block.rs`, the DeepSeek-V3 recipe: one f32 scale per
//! 1×128 block of A, one per 128×128 block of B) with N tiles wider than a weight block:
//!
//! D[m, n] = Σ_kb (A_kb · B_kbᵀ)[m, n] · sa[m, kb] · sb[n / 128, kb]
//!
//! When: `gemm_sm90_fp8_block`'s 128×128 tile gives each K block's four m64n128k32 wgmmas
//! little MMA work per shared-memory byte and per barrier round trip (measured 0.68–0.74× of
//! cuBLASLt's block-scaled GEMM on the H100, while the row-wise `fp8.rs` at 128×256 matches
//! cuBLASLt). DeepGEMM's Hopper FP8 GEMM (`deep_gemm/include/deep_gemm/fp8_gemm.cuh`) runs
//! this recipe with N tiles of 16…256 columns, e.g. 160 or 192.
//!
//! Before: a 128×BN tile (BN > 128) whose columns `n0 .. n0 + BN` (n0 = BN·n) straddle one
//! weight-block boundary: `128 % (BN − 128) == 0` (the `static_assert`) makes the tile's
//! offset in its first weight block, at most `128 − gcd(BN, 128)`, leave room for at most
//! two blocks — BN = 192 starts at offset 0 or 64 (blocks `nb, nb + 1` split at column 128
//! or 64), BN = 160 at 0, 32, 64 or 96. After: each accumulator column promoted with the
//! scale of its own weight block: per K block two weight scales `sb[nb, kb]`, `sb[nb + 1, kb]`
//! (`gather`, guarded: 0 past NB, where every column is past N and clipped), two combined
//! row scales `sc0 = sa·sb0`, `sc1 = sa·sb1` in the accumulator's row-statistic layout, and
//!
//! acc = fma(part, select(col_index(acc) / 8 < split / 8, sc0, sc1), acc)
//!
//! with `split = 128 − n0 % 128` — per register the 8-column group it holds chooses between
//! the two, as DeepGEMM's promotion chooses per 8-column group between its "former" and
//! "latter" scale (its `num_former_iters`). A tile within one block has `split ≥ BN` and
//! takes `sc0` everywhere; BN a multiple of 8 makes `split` one too. `col_index(acc) / 8` is
//! the same in every thread of the wgmma fragment, so the build knows it at each register
//! (`regtile::compute`'s index quotient, a constant) and the choice is a `setp` of that
//! constant against the uniform `split / 8` and a `selp` per group and row (PTX ISA
//! §9.7.7.1, §9.7.7.3) ahead of the `fma.rn.f32`s. Written `col_index(acc) < split`, the
//! comparison needs each register's column (thread origin + constant): ptxas kept the 48
//! column indices of a 192-wide tile live across the K loop and spilled 128 bytes.
//!
//! The rest is `fp8_block.rs`'s default schedule: a producer warpgroup multicasting B halves
//! (BN / 2 rows each) in a 2×1 cluster, two 64-row consumer warpgroups each issuing a K
//! block's four `wgmma.mma_async.m64nBNk32.f32.e4m3.e4m3` (PTX ISA §9.7.15.5.2) into a
//! fresh `part`, `wgmma.wait_group 0`, the stage released, the promotion; scales loaded one
//! K block ahead; the persistent grouped tile walk and the TMA-store epilogue of
//! `gemm/pieces.rs`. Tails as in `fp8_block.rs` (TMA zero-fill, guarded scale loads, clipped
//! stores; K a multiple of 16).
//!
//! Configs (E4M3 in, BF16 out, BM = 128, BK = 128, GROUP = 8):
//! - `default`: BN = 192, 4 stages of 40 KB (16 KB of A, 24 KB of B) and a 48 KB staging
//!   tile: 208 KB. A tile at n0 = 192·n starts at offset 0 or 64 of its block.
//! - `n160`: BN = 160, 5 stages of 36 KB and a 40 KB staging tile: 220 KB. Offsets 0, 32,
//!   64, 96.
//!
//! The staging tile is stored in boxes of 64 rows × 32 columns (EPI_N = 32, which divides
//! both widths) under the 64-byte swizzle, the span of a 32-column bf16 row. The first
//! version staged `n160` in 64-byte rows under the 128-byte swizzle: the TMA unit lays such
//! a box's rows 128 bytes apart, so each box covered twice its bytes and the second consumer
//! warpgroup's last box ran past the allocation (H100, compute-sanitizer: "Out-of-range
//! shared or local address" at the `UTMASTG`, 2026-12-06). The compiler now refuses a box
//! narrower than its swizzle's span (`dispatch/copy`'s `tma_box`) and the emulator's tensor
//! map does too, so neither can pass such a tile again.
//!
//! Registers: a consumer thread holds `acc` and `part`, BN / 2 f32 each (m64nBN: BN / 2
//! registers a thread), plus five 2-register row statistics; `setmaxnreg` gives consumers
//! 232 (the producer 40; ptxas reports the launch's 168 for 384 threads). BN = 256 would need
//! 256 for the two tiles alone, so the widest config is BN = 192.
//!
//! `tirx check` (ptxas 13.5 `-arch=sm_90a`, 2026-12-06): both configs 0 spills, no
//! `pipeline_losses`; `default` consumers reach R221 (222 of 232), `n160` R214; SASS
//! `QGMMA.64x192x32.F32.E4M3.E4M3` ×4 (`n160`: `QGMMA.64x160x32` ×4), and the promotion
//! BN / 2 `FFMA` and BN / 4 `FSEL` a thread and K block (96 and 48; 80 and 40), the group
//! predicates `UISETP` on the uniform datapath. `tests/sim_fp8_block.rs` asserts these and
//! runs both configs in the emulator at every tile alignment.
//!
//! **Measured** (H100, 2026-12-06, `docs/perf/h100-2026-12-06-stop48.md`, cuBLASLt 13.1 in the
//! same process; every config checked against the f64 reference, compute-sanitizer clean):
//!
//! | shape | `fp8_block/default` | `wide/default` (192) | `wide/n160` | cuBLASLt |
//! |---|---|---|---|---|
//! | 4096³ | 874.9 | 767.0 | 733.2 | 1162.4 |
//! | 8192³ | 889.8 | 893.1 | 805.2 | 1281.8 |
//! | 4096×7168×16384 | 900.9 | 839.5 | 844.3 | 1303.4 |
//! | 4096×2112×7168 | 752.5 | 800.2 | 688.3 | 1036.0 |
//!
//! The prediction (+15–20 % at the large shapes) was wrong: the wider tile is level at 8192³,
//! 7–12 % slower at 4096³ and 4096×7168×16384, and ahead (+6 %) only at 4096×2112×7168, where
//! the 128-wide grid's last wave is partial. Fewer barrier round trips a FLOP did not move the
//! kernel, so they are not what holds the block-scaled GEMM at 0.70–0.77 of cuBLASLt (ncu on
//! the 128-wide kernel: SM throughput ~51 %, no eligible warp ~59 %). The host's cost model
//! keeps the 128-wide tile first (`gemm/request.rs`, `BLOCK_STRADDLE`); `tirx tune` finds the
//! wide one where it wins.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// D = Σ_kb (A_kb·B_kbᵀ)·sa[:, kb]·sb[n / 128, kb] (the module's docs) with a 128×BN tile
    /// straddling up to two weight blocks: A M×K and B N×K in E4M3, `sa` [M, KB] and `sb`
    /// [NB, KB] f32, D in `TD`.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(product(
            types(default = (TA = e4m3, TD = bf16)),
            tile(default = (BN = 192, STAGES = 4), n160 = (BN = 160, STAGES = 5)),
            with = (BM = 128, BK = 128, GROUP = 8, EPI_N = 32),
        )),
    )]
    pub fn gemm_sm90_fp8_block_wide(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, KB)] sa: Tensor<f32>,
        #[shape(NB, KB)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        static_assert(KB == cdiv(K, 128), "one scale per 128 columns of K");
        static_assert(NB == cdiv(N, 128), "one weight scale per 128 rows of B");
        static_assert(BK == 128, "a K tile is one scale block");
        static_assert(BN > 128 && BN <= 256, "a wide N tile");
        static_assert(
            128 % (BN - 128) == 0,
            "an N tile spans at most two weight blocks",
        );
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B64);
        let acc = regs::<f32>([64, BN]);
        let part = regs::<f32>([64, BN]);
        let sa_t = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sb0 = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sb1 = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sc0 = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sc1 = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        wide_consumers(
            pipe, acc, part, sa_t, sb0, sb1, sc0, sc1, a_s, b_s, d_s, d, sa, sb, pairs_m, tiles_n,
            k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_fp8_block_wide`]: `fp8_block.rs`'s, with the
    /// K loop of [`consume_wide`].
    #[tile_fn]
    fn wide_consumers(
        pipe: Pipe,
        acc: Regs,
        part: Regs,
        sa_t: Regs,
        sb0: Regs,
        sb1: Regs,
        sc0: Regs,
        sc1: Regs,
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
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                it = consume_wide(
                    pipe, it, acc, part, sa_t, sb0, sb1, sc0, sc1, a_s, b_s, sa, sb, wg, row, n,
                    k_tiles,
                );
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// A consumer warpgroup's K loop of one tile (D rows `row`, 64-row units; columns `n`,
    /// BN-column units, in weight blocks `nb` and `nb + 1` split at tile column `split`): per
    /// K block, the two combined scales, its wgmmas into a fresh `part`, the wait, the stage
    /// released, and each column promoted with its own block's scale; returns the pipeline
    /// iteration after the tile.
    #[tile_fn]
    fn consume_wide(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part: Regs,
        sa_t: Regs,
        sb0: Regs,
        sb1: Regs,
        sc0: Regs,
        sc1: Regs,
        a_s: Smem,
        b_s: Smem,
        sa: Global,
        sb: Global,
        wg: u32,
        row: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let leader = tid % 128 == 0;
        let nb = n * BN / 128;
        let split = 128 - n * BN % 128;
        let mut it = it;
        acc = 0.0;
        // One K block ahead, as in `fp8_block.rs`: past the last block they read 0, unused.
        copy(sa_t, sa.tile(row, 0));
        sb0 = gather(sb, nb, 0);
        sb1 = gather(sb, nb + 1, 0);
        for k in 0..k_tiles {
            sc0 = sa_t * sb0;
            sc1 = sa_t * sb1;
            copy(sa_t, sa.tile(row, k + 1));
            sb0 = gather(sb, nb, k + 1);
            sb1 = gather(sb, nb + 1, k + 1);
            let s = pipe.consumer_wait(it);
            wgmma::fence();
            wgmma::mma(part, a_s[s][wg], b_s[s], accumulate = false);
            wgmma::commit();
            wgmma::wait(0);
            if leader {
                pipe.consumer_release(s);
            }
            acc = fma(part, select(col_index(acc) / 8 < split / 8, sc0, sc1), acc);
            it += 1;
        }
        it
    }
}
