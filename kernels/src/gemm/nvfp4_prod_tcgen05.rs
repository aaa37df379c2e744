//! Block-scaled NVFP4 GEMM on Blackwell (sm_100a) on the production GEMM's structure:
//! D = (A·sA)·(B·sB)ᵀ with A M×K and B N×K packed FP4 E2M1 (`e2m1x2`, `[M, K / 2]` bytes, the
//! lower K in the low nibble), one UE4M3 factor per 16 values of each row (NVFP4's recipe; its
//! per-tensor FP32 scale is the caller's to fold into the output), FP32 accumulate in tensor
//! memory, BF16 out — `gemm_sm100_mxfp8_prod` (`mxfp8_prod_tcgen05.rs`: `gemm_sm100_prod`'s CTA
//! pair, CLC walk, two TMEM accumulator stages and TMA-store epilogue) over
//! `gemm_sm100_nvfp4`'s operands.
//!
//! What it changes from `gemm_sm100_mxfp8_prod`: a K tile is one 128-byte swizzle row of 256
//! values, four `tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X` of K = 64
//! (PTX ISA §9.7.16.10.7, §9.7.16.2.1), each reading four factors a row, so a K tile's factors
//! are 16 a row: `SFC = 4` cells of `[32, 16]` bytes (`tirx::runtime::scale_image`'s boxes,
//! column `4·k + c`), A's for this CTA's 128 rows and B's for all 128 rows of the tile, each
//! loaded by the TMA warp with `.cta_group::2` onto the even CTA's full barrier
//! (§9.7.9.25.5.1) and copied by the even CTA's MMA thread into its TMEM factor stage
//! (`tmem::<ue4m3>([STAGES, 128, 16])`, one `tcgen05.cp.cta_group::2.32x128b.warpx4` per cell,
//! §9.7.16.9.2); instruction `j` reads cell `j`. The roles are the same tile functions
//! (`pieces_sm100_scaled.rs`'s `pair_clc_roles_scaled`, `pieces_sm100.rs`'s `pair_epilogue`),
//! over K in bytes (`cdiv(KB, BK)` K tiles).
//!
//! Budgets. TMEM: 2 × 128 accumulator columns, and each factor tile's six stages of 16 columns
//! (four cells of 4: 16 UE4M3 a row) 96 columns, one 128-column allocation: all 512 columns.
//! Shared memory: a stage is 16 KiB of A, 8 KiB of B and 2 × 2 KiB of factor cells, D's
//! staging tile 32 KiB: six stages, 200 KiB, 206,864 bytes with the alignment, barriers and the
//! scheduler's response, of the 232,448 (227 KiB) a CTA may use (a seventh stage would not fit).
//!
//! In the catalogue as `gemm(b = tn, epilogue = scale-nv)` (`Epilogue::ScaleFactors`), beside
//! `gemm_sm100_nvfp4`: the dispatcher takes it over the one-CTA kernel at large shapes (its persistent
//! pair grid), `gemm::factors::gemm_block_scaled` is its host entry, and `tirx sim` reaches it.
//!
//! Verified without a Blackwell GPU (none was used): the emulator against an f64 reference of
//! the same quantised values with tails in M, N and K and more tiles than clusters, under
//! every CLC mode, and factors planted wrong that make exactly the row or column they scale
//! disagree (`tests/sim_mxfp8_prod.rs`); ptxas `-arch=sm_100a` (ptxas 13.5) with 0 spills
//! and the SASS (`tests/assemble.rs`; `tirx check`'s form: `224 0 UTCOMMA×4 UTMALDG×4
//! UTMASTG×1 LDTM×4 USETMAXREG×2 SYNCS×78 LDS.128×5 STS.128×16`): the four MMAs are the pair's
//! `UTCOMMA.2CTA.4X` and the factor copies eight `UTCCP.T.S.2CTA.4x32dp128bit` (four cells of
//! A's and of B's), the factor cells' TMA loads one `UTMALDG` each for A's and B's (the cell
//! loop), the epilogue as `gemm_sm100_mxfp8_prod`'s.

use tirx::prelude::*;

#[tile_module(uses(
    super::pieces::gemm_pieces,
    super::pieces_sm100::gemm_pieces_sm100,
    super::pieces_sm100_scaled::gemm_pieces_sm100_scaled
))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 10 over NVFP4 operands. `grid = (SMS / 2 * 2, 1)`. D's rows must be 16-byte
    /// aligned (N a multiple of 8) and K a multiple of 32 (A's and B's rows 16-byte aligned).
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            default = (BM = 256, BN = 128, BK = 128, SFC = 4, STAGES = 6, GROUP = 8, EPI_N = 64, EPI_R = BN, REG_ISSUE = 56, REG_EPILOGUE = 224),
        ),
    )]
    pub fn gemm_sm100_nvfp4_prod(
        #[shape(M, KB)] a: Tensor<e2m1x2>,
        #[shape(N, KB)] b: Tensor<e2m1x2>,
        #[shape(MS, KS)] sfa: Tensor<ue4m3>,
        #[shape(NS, KS)] sfb: Tensor<ue4m3>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        // The factor images are `tirx::runtime::scale_image`'s: 32 rows a 128 rows of the
        // operand, 16 bytes a 4 factors (one per 16 values, 8 bytes, of K).
        static_assert(
            MS == cdiv(M, 128) * 32,
            "sfa is scale_image's: 32 rows an image of 128 rows of A",
        );
        static_assert(
            NS == cdiv(N, 128) * 32,
            "sfb is scale_image's: 32 rows an image of 128 rows of B",
        );
        static_assert(
            KS == cdiv(KB, 32) * 16,
            "16 bytes (4 UE4M3 factors) an image of 32 bytes (64 values) of K",
        );
        let a_s = smem::<e2m1x2>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<e2m1x2>([STAGES, BN / 2, BK], swizzle = B128);
        // A K tile's factors: SFC = 4 cells of [32, 16], 128 rows × 4 UE4M3 each.
        let sfa_s = smem::<ue4m3>([STAGES, SFC, 32, 16]);
        let sfb_s = smem::<ue4m3>([STAGES, SFC, BN / 4, 16]);
        let acc = tmem::<f32>([2, 128, BN]);
        let sfa_t = tmem::<ue4m3>([STAGES, 128, 4 * SFC]);
        let sfb_t = tmem::<ue4m3>([STAGES, BN, 4 * SFC]);
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
            BK == 128 && SFC == 4,
            "an NVFP4 K tile is one 128-byte swizzle row: 256 values, 16 factors a row",
        );
        static_assert(
            BN == 128,
            "the pair MMA's B factors are one 128-row image: each CTA loads B's factors whole",
        );
        // TMEM: the accumulator stages and one 128-column allocation a factor tile (4 columns
        // a cell and stage).
        static_assert(
            4 * SFC * STAGES <= 128 && 2 * BN + 2 * 128 <= 512,
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
            cdiv(KB, BK),
        );
        pair_epilogue(d, d_s, r, acc, accv, accp, clcp, resp, pairs_m, tiles_n);
        pair_tmem_release_scaled(acc, sfa_t, sfb_t);
    }
}
