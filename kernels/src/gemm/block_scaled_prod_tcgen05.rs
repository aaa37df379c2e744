//! Block-scaled GEMM on Blackwell (sm_100a) on the production GEMM's structure, one kernel over
//! a format axis: D = (A·sA)·(B·sB)ᵀ with A M×K and B N×K row-major block-scaled operands, FP32
//! accumulate in tensor memory, BF16 out — `gemm_sm100_prod` (ladder level 10: a CTA pair per
//! 256×128 tile with `cta_group::2`, the cluster launch control scheduler walk with the static
//! walk as its fallback, two TMEM accumulator stages, the TMA-store epilogue through the
//! 128B-swizzled staging tile) over `gemm_sm100_mxfp8`'s and `gemm_sm100_nvfp4`'s operands.
//!
//! The format axis (the config names):
//! - `mxfp8`: E4M3 elements (`TA = e4m3`), one UE8M0 factor per 32 of each row (`TS = ue8m0`,
//!   the OCP MX recipe). A K tile is one 128-byte swizzle row of 128 values, four
//!   `tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X` of K = 32 (scale-factor
//!   data IDs 0–3), so its factors are 4 a row: one cell (`SFC = 1`).
//! - `nvfp4`: packed FP4 E2M1 (`TA = e2m1x2`, `[M, K]` bytes, the lower value in the low
//!   nibble), one UE4M3 factor per 16 values (`TS = ue4m3`, NVFP4's recipe; its per-tensor FP32
//!   scale is the caller's to fold into the output). A K tile is one 128-byte swizzle row of
//!   256 values, four `tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X` of
//!   K = 64, each reading four factors a row, so its factors are 16 a row: `SFC = 4` cells,
//!   instruction `j` reading cell `j`.
//!
//! The MMA kind, its K and its scale vector follow from `TA` and `TS` (PTX ISA §9.7.16.10.7,
//! §9.7.16.2.1); K counts `a`'s elements (bytes for `e2m1x2`), as the host's GEMM requests do.
//!
//! What it adds to `gemm_sm100_prod`. Each operand stage carries the K tile's factor images
//! (`tirx::runtime::scale_image`, the layout `tcgen05.cp.32x128b.warpx4` copies, §9.7.16.9.2):
//! `SFC` cells of `[32, 16]` bytes (128 rows × 4 factors; cell `c` is the image's column
//! `SFC·k + c`) for this CTA's 128 rows of A and for all 128 rows of the tile's B, loaded by
//! the TMA warp with `.cta_group::2` onto the even CTA's full barrier (§9.7.9.25.5.1). The even
//! CTA's MMA thread copies both CTAs' factors of the stage into their TMEM factor stage (one
//! `tcgen05.cp.cta_group::2` a cell) and issues the stage's four block-scaled MMAs, each CTA's
//! MMA half reading its own TMEM's factors — CUTLASS's 2-SM placement (SFA per CTA rank like
//! A, SFB whole in each CTA). The roles are `pieces_sm100_scaled.rs`'s
//! [`pair_clc_roles_scaled`]; the scheduler warp and the epilogue are `pieces_sm100.rs`'s
//! (`clc_scheduler`, `pair_epilogue`), shared with `gemm_sm100_prod`.
//!
//! Budgets. TMEM: the two accumulator stages take 2 × 128 columns and each factor tile one
//! allocation of its stages' 4 · SFC columns each (the copy's image puts row `r` in lane
//! `r % 32`, column `r / 32`): `mxfp8`'s seven stages of 4 in 32 columns, 320 of the 512;
//! `nvfp4`'s six of 16 in 128, all 512 (a 256-wide tile's 512 accumulator columns would leave
//! none for the factors, so the tile is 256×128). Shared memory: a stage is 16 KiB of A, 8 KiB
//! of B and 2 × SFC × 512 bytes of factors, D's staging tile 32 KiB: `mxfp8`'s seven stages,
//! 207 KiB, 214,032 bytes with the alignment, barriers and the scheduler's response, and
//! `nvfp4`'s six, 200 KiB, 206,864 bytes, of the 232,448 (227 KiB) a CTA may use (a seventh
//! NVFP4 stage would not fit).
//!
//! In the catalogue as `gemm(b = tn, epilogue = scale-mx)` and `… scale-nv`
//! (`Epilogue::ScaleFactors`, read from `TS`), beside `gemm_sm100_mxfp8` and
//! `gemm_sm100_nvfp4`: the dispatcher takes it over the one-CTA kernels at large shapes (its
//! persistent pair grid), `gemm::factors::gemm_block_scaled` is its host entry, and `tirx sim`
//! reaches it.
//!
//! Verified without a Blackwell GPU (none was used): the emulator against an f64 reference of
//! the same quantised values with tails in M, N and K and more tiles than clusters, under
//! every CLC mode, and factors planted wrong that make exactly the row or column they scale
//! disagree (`tests/sim_mxfp8_prod.rs`); ptxas `-arch=sm_100a` (ptxas 13.5) with 0 spills and
//! the SASS (`tests/assemble.rs`; `tirx check`'s form, `mxfp8`: `224 0 UTCQMMA×4 UTMALDG×4
//! UTMASTG×1 LDTM×4 USETMAXREG×2 SYNCS×80 LDS.128×5 STS.128×16`, `nvfp4`: `224 0 UTCOMMA×4
//! UTMALDG×4 UTMASTG×1 LDTM×4 USETMAXREG×2 SYNCS×78 LDS.128×5 STS.128×16`): the four MMAs are
//! the pair's `UTCQMMA.2CTA` (`UTCOMMA.2CTA.4X`) and the factor copies `UTCCP.T.S.2CTA.
//! 4x32dp128bit`, one for each of A's and B's cells (2, or 8), the two TMA loads beyond
//! `gemm_sm100_prod`'s the factor boxes (the cell loop's one each), the epilogue's `UTMASTG`,
//! `LDTM` and `STS.128` as `gemm_sm100_prod`'s on 256×128 tiles.

use tirx::prelude::*;

#[tile_module(uses(
    super::pieces::gemm_pieces,
    super::pieces_sm100::gemm_pieces_sm100,
    super::pieces_sm100_scaled::gemm_pieces_sm100_scaled
))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 10 over block-scaled operands, one config a format. `grid = (SMS / 2 * 2, 1)`.
    /// D's rows must be 16-byte aligned (N a multiple of 8) and A's and B's rows too (K a
    /// multiple of 16 elements: 16 E4M3 values, or 32 FP4 values in 16 bytes).
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(product(
            format(
                mxfp8 = (TA = e4m3, TS = ue8m0, SFC = 1, STAGES = 7),
                nvfp4 = (TA = e2m1x2, TS = ue4m3, SFC = 4, STAGES = 6),
            ),
            with = (BM = 256, BN = 128, BK = 128, GROUP = 8, EPI_N = 64, EPI_R = BN, REG_ISSUE = 56, REG_EPILOGUE = 224),
        )),
    )]
    pub fn gemm_sm100_block_scaled_prod(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(MS, KS)] sfa: Tensor<TS>,
        #[shape(NS, KS)] sfb: Tensor<TS>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        // The factor images are `tirx::runtime::scale_image`'s: 32 rows a 128 rows of the
        // operand, 16 bytes a 4 factors, so a K tile of BK elements is SFC × 16 bytes of them.
        static_assert(
            MS == cdiv(M, 128) * 32,
            "sfa is scale_image's: 32 rows an image of 128 rows of A",
        );
        static_assert(
            NS == cdiv(N, 128) * 32,
            "sfb is scale_image's: 32 rows an image of 128 rows of B",
        );
        static_assert(
            KS == cdiv(K, BK / SFC) * 16,
            "16 bytes (4 factors) an image of BK / SFC elements of K",
        );
        let a_s = smem::<TA>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 2, BK], swizzle = B128);
        // A K tile's factors: SFC cells of [32, 16], 128 rows × 4 factors each.
        let sfa_s = smem::<TS>([STAGES, SFC, 32, 16]);
        let sfb_s = smem::<TS>([STAGES, SFC, BN / 4, 16]);
        let acc = tmem::<f32>([2, 128, BN]);
        let sfa_t = tmem::<TS>([STAGES, 128, 4 * SFC]);
        let sfb_t = tmem::<TS>([STAGES, BN, 4 * SFC]);
        let r = regs::<f32>([128, EPI_R], layout = tmem_32x32b);
        let accv = tmem::<f32>([2 * BN / EPI_R, 128, EPI_R], alias = acc);
        let d_s = smem::<bf16>([BN / EPI_N, 128, EPI_N], swizzle = B128);
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);
        static_assert(
            BK == 128 && (SFC == 1 || SFC == 4),
            "a K tile is one 128-byte swizzle row: 4 factors a row (MXFP8) or 16 (NVFP4)",
        );
        static_assert(
            BN == 128,
            "the pair MMA's B factors are one 128-row image: each CTA loads B's factors whole",
        );
        // TMEM: the accumulator stages and one allocation a factor tile, of at most 8 stages
        // of 4 · SFC columns: 32 · SFC columns (SFC a power of two).
        static_assert(
            STAGES <= 8 && 2 * BN + 2 * 32 * SFC <= 512,
            "the accumulator and factor stages exceed the 512 TMEM columns",
        );
        // Shared memory: the operand and factor stages and D's staging tile within 225 KiB
        // (the 227 a CTA may use less 2 KiB of alignment, barriers and the scheduler's slots).
        static_assert(
            STAGES * ((128 + BN / 2) * BK + 2 * SFC * 512) + 128 * BN * 2 <= 225 * 1024,
            "the operand and factor stages and D's staging tile exceed the shared memory",
        );

        pair_clc_roles_scaled(
            pipe,
            accp,
            clcp,
            resp,
            acc,
            a_s,
            b_s,
            sfa_s,
            sfb_s,
            sfa_t,
            sfb_t,
            a,
            b,
            sfa,
            sfb,
            pairs_m,
            tiles_n,
            cdiv(K, BK),
        );
        pair_epilogue(d, d_s, r, acc, accv, accp, clcp, resp, pairs_m, tiles_n);
        pair_tmem_release_scaled(acc, sfa_t, sfb_t);
    }
}
