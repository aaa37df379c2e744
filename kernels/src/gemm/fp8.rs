//! FP8 GEMMs for Hopper: D = (s_a·s_b)·A·Bᵀ with E4M3 (or E5M2) inputs, f32 accumulation in
//! registers, and the scales applied in the epilogue — per tensor (`scale_a`, `scale_b` f32
//! scalars) or row-wise, the `torch._scaled_mm` row-wise form (`sa` [M, 1]: one scale per row
//! of A; `sb` [N]: one per row of B, i.e. per column of D). BF16, FP16 or FP32 outputs.
//!
//! The structure is the production GEMM's (level 8, `level_08_tma_epi.rs`): a producer
//! warpgroup multicasting B halves in a 2×1 cluster, two consumer warpgroups of 64 rows each,
//! a persistent grouped tile walk and the overlapped TMA-store epilogue — all from
//! `gemm/pieces.rs`. What differs is the operand type: an 8-bit row of a shared tile is 128
//! elements (one 128-byte swizzle span), so BK = 128 and each K tile is four
//! `wgmma.mma_async.m64nNk32.f32.e4m3.e4m3` per 64-row slice (PTX ISA §9.7.15.5.2) — the same
//! bytes per stage as the 16-bit ladder's BK = 64, twice the products. Both operands are
//! K-major (the FP8 wgmma has no transpose), so B is given N×K only.
//!
//! Accumulation, the config constant `PROMOTE` (`fp8_ref::Fp8Accum` on the host):
//! - `PROMOTE = 0` (the fast configs): the wgmma chain accumulates the whole K extent in its
//!   f32 registers, as cuBLASLt's `CUBLASLT_MATMUL_DESC_FAST_ACCUM` (`torch._scaled_mm`'s
//!   `use_fast_accum=True`) does; on the H100/H200 the tensor core's FP8 adder keeps fewer
//!   bits than f32 (about 14 per the DeepSeek-V3 report, §3.3.2): relative error 1.3e-3 at
//!   K = 4096 with an f32 output.
//! - `PROMOTE = 128` (the `promoted*` configs, issue #29; torch's default numerics, 1.3e-4
//!   there): each K tile's four k32 wgmmas accumulate into a fresh f32 fragment `part`, and
//!   after `wgmma.wait_group 0` the warpgroup adds it into `acc` (`pieces.rs`'s
//!   `consume_promoted`: 64 `add.f32` a thread a K tile), CUTLASS's "mma promotion interval"
//!   of 4 MMAs, DeepSeek-V3's N_C = 128. Two 64×128 fragments a thread (128 registers) fit
//!   the 232 that `setmaxnreg` gives a consumer; a 64×256 one twice (256) does not, so the
//!   promoted configs are the 128×128 tile only, and the ping-pong kernels
//!   (`fp8_pingpong.rs`, 128 accumulator registers a warpgroup) have none. The warpgroup
//!   waits for its K tile's MMAs before adding them (no group stays in flight across the
//!   promotion, as in `fp8_block.rs`'s `gemm_sm90_fp8_block`), so the tensor core is fed by
//!   the other consumer warpgroup meanwhile; 16-bit outputs keep six stages (the staging tile
//!   is 32 KB), f32 five. Predicted 0.7–0.8 of the fast 128×256 configs at large shapes,
//!   from `gemm_sm90_fp8_block/default`'s measurement (the same tile and loop, plus scale
//!   loads); measured on an H100 (stop 51, `docs/perf/h100-2026-12-06-stop51.md`), row-wise
//!   8192³ at 1173.9 TFLOP/s, 0.91 of the fast 128×256's 1288.0 and 0.987 of cuBLASLt with
//!   `FAST_ACCUM = 0` (the host's charge: `request::PROMOTED`).
//!
//! Tails: TMA zero-fills A's and B's boxes past M, N and K (zeros add nothing) and clips D's
//! stores; the scale vectors are loaded by guarded register loads (0 past the edge, never
//! stored). K must make A's and B's rows 16-byte aligned (K a multiple of 16), D's rows too.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// D = (scale_a·scale_b)·A·Bᵀ, A M×K and B N×K in `TA` (E4M3 or E5M2), D in `TD`. The
    /// two scales are multiplied once per thread and the accumulator scaled in registers
    /// before it is converted into the staging tile.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = e4m3, TD = bf16), f16 = (TA = e4m3, TD = f16), e5m2 = (TA = e5m2, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5)),
                with = (BM = 128, BK = 128, GROUP = 8, EPI_N = 64, PROMOTE = 0),
            ),
            product(
                types(f32 = (TA = e4m3, TD = f32)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32, PROMOTE = 0),
            ),
            // 224 KB of shared memory: 32 KB a stage (A and B), and a staging tile of 16 KB a
            // byte of TD, so six stages for 16-bit outputs and five for f32.
            product(
                accum(promoted = (PROMOTE = 128)),
                types(
                    default = (TA = e4m3, TD = bf16),
                    f16 = (TA = e4m3, TD = f16),
                    e5m2 = (TA = e5m2, TD = bf16),
                    f32 = (TA = e4m3, TD = f32),
                ),
                with = (
                    BM = 128, BK = 128, GROUP = 8, BN = 128,
                    STAGES = (224 - 16 * size_of(TD)) / 32, EPI_N = 128 / size_of(TD),
                ),
            ),
        ),
    )]
    pub fn gemm_sm90_fp8(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
        scale_a: f32,
        scale_b: f32,
    ) {
        static_assert(
            PROMOTE == 0 || PROMOTE == BK,
            "a promotion interval of one K tile",
        );
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let part = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        tensor_scaled_consumers(
            pipe, acc, part, a_s, b_s, d_s, d, scale_a, scale_b, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_fp8`]: level 8's with `acc · (s_a·s_b)` between
    /// the K loop and the store.
    #[tile_fn]
    fn tensor_scaled_consumers(
        pipe: Pipe,
        acc: Regs,
        part: Regs,
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
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                it = consume_accum(pipe, it, acc, part, a_s, b_s, wg, k_tiles);
                acc = acc * scale;
                let row = 2 * (2 * mp + cta_rank) + wg;
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// D = diag(sa)·A·Bᵀ·diag(sb): the row-wise scales of `torch._scaled_mm`, `sa` [M, 1] f32
    /// (one per row of A) and `sb` [N] f32 (one per row of B, a column of D). Each tile's
    /// scales are loaded into registers before its K loop — `sb`'s columns in the layout of
    /// the accumulator's column statistic, `sa`'s rows in that of its row statistic, so each
    /// thread holds exactly the scales of the elements it holds — and their latency hides
    /// behind the MMAs; after the loop each element is multiplied by its row's and its
    /// column's scale.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = e4m3, TD = bf16), f16 = (TA = e4m3, TD = f16), e5m2 = (TA = e5m2, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5)),
                with = (BM = 128, BK = 128, GROUP = 8, EPI_N = 64, PROMOTE = 0),
            ),
            product(
                types(f32 = (TA = e4m3, TD = f32)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32, PROMOTE = 0),
            ),
            // 224 KB of shared memory: 32 KB a stage (A and B), and a staging tile of 16 KB a
            // byte of TD, so six stages for 16-bit outputs and five for f32.
            product(
                accum(promoted = (PROMOTE = 128)),
                types(
                    default = (TA = e4m3, TD = bf16),
                    f16 = (TA = e4m3, TD = f16),
                    e5m2 = (TA = e5m2, TD = bf16),
                    f32 = (TA = e4m3, TD = f32),
                ),
                with = (
                    BM = 128, BK = 128, GROUP = 8, BN = 128,
                    STAGES = (224 - 16 * size_of(TD)) / 32, EPI_N = 128 / size_of(TD),
                ),
            ),
        ),
    )]
    pub fn gemm_sm90_fp8_rowwise(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M)] sa: Tensor<f32>,
        #[shape(N)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        static_assert(
            PROMOTE == 0 || PROMOTE == BK,
            "a promotion interval of one K tile",
        );
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let part = regs::<f32>([64, BN]);
        let sa_t = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sb_t = regs::<f32>([1, BN], layout = stat(acc, axis = 0));
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        row_scaled_consumers(
            pipe, acc, part, sa_t, sb_t, a_s, b_s, d_s, d, sa, sb, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_fp8_rowwise`]: level 8's, with the tile's row
    /// and column scales loaded before the K loop and applied after it.
    #[tile_fn]
    fn row_scaled_consumers(
        pipe: Pipe,
        acc: Regs,
        part: Regs,
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
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                copy(sa_t, sa.tile(row));
                copy(sb_t, sb.tile(n));
                it = consume_accum(pipe, it, acc, part, a_s, b_s, wg, k_tiles);
                acc = acc * sa_t * sb_t;
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// A consumer warpgroup's K loop of one tile, as the config accumulates: with the
    /// tensor core's FP8 accumulator over the whole K extent (`PROMOTE = 0`: `pieces.rs`'s
    /// [`consume`], one wgmma group in flight), or promoted into `acc` in f32 after every
    /// K tile (`PROMOTE = BK`: [`consume_promoted`], `part` holding one K tile's products).
    #[tile_fn]
    fn consume_accum(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part: Regs,
        a_s: Smem,
        b_s: Smem,
        wg: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        if PROMOTE == 0 {
            it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
        } else {
            it = consume_promoted(pipe, it, acc, part, a_s, b_s, wg, k_tiles);
        }
        it
    }
}
