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
//! Tiles for small N: the `n64*` configs (TN) are 256×64 pair tiles — each CTA 128×64, its
//! half of B 32 rows — for problems whose N leaves most of a 128-column tile empty. A stage is
//! 16 KiB of A and 4 KiB of B, so eight stages (160 KiB) plus D's staging tile (16 KiB, or
//! 32 KiB for an f32 D) fit the 227 KiB; the accumulator is 2 × 64 TMEM columns and the
//! epilogue's row 64 registers. The pair MMA's M = 256, N = 64 is one of `cta_group::2`'s shapes
//! (PTX ISA §9.7.16.10.1, the valid M × N of `.kind::f16`).
//!
//! Tiles for large M and N: the `n256*` configs (TN, and `nn_n256*` for a K×N B, whose
//! 128-column half a CTA loads as two 64-wide MN-major boxes — the language splits the box at
//! the 128-byte swizzle row) are 256×256 pair tiles — each CTA 128×256 of D, its half of B 128
//! rows; M = 256, N = 256 is the widest `cta_group::2` shape
//! of `.kind::f16` (§9.7.16.10.1; levels 7 and 8 issue it too). The two accumulator stages take 2 × 256 = 512 TMEM columns,
//! all a CTA has. A row of 256 f32 is more registers than the epilogue's 224, so the epilogue
//! reads the accumulator one staging block at a time (`EPI_R = EPI_N` columns through the
//! view `accv`, as the fused-epilogue kernels do) and releases the stage once every block is
//! staged; the other configs (`EPI_R = BN`) read the whole row at once and release it before
//! staging (a build-time `if`: their SASS is unchanged, their PTX renumbers its registers and
//! branches once on the constant). Shared memory decides the
//! stages: one is 16 KiB of A and 16 KiB of B, D's staging tile 64 KiB (128 KiB for an f32
//! D), so `STAGES = (225 KiB − staging) / 32 KiB` = 5 (3 for an f32 D) — 224 KiB plus 2064
//! bytes of alignment, barriers, the TMEM slot and the scheduler's response, within the 227
//! KiB; a `static_assert` keeps every config within that budget. The host's cost model
//! chooses them at large M and N (8192³, 8192 × 28672 × 4096: half the waves of the 256×128
//! tiles at full efficiency), the 256×128 tiles at 4096³ (7 waves of 128 columns against 4
//! of 256).
//!
//! The roles are the tile library `pieces_sm100.rs`: warpgroup 0's TMA, MMA and scheduler warps
//! (`pair_clc_roles`), shared with the scaled and fused-epilogue kernels of
//! `level_10_epi_tcgen05.rs`, and the epilogue warpgroup's walk over the CLC responses
//! (`pair_epilogue`), shared with the block-scaled production GEMM
//! (`block_scaled_prod_tcgen05.rs`, whose warpgroup 0 is `pieces_sm100_scaled.rs`'s).
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills for
//! every config (`tests/assemble.rs`), and the SASS (`tirx check`, its `gemm_sm100_prod`
//! lines: `224 0 UTCHMMA×4 UTMALDG×2 UTMASTG×1 LDTM×4 USETMAXREG×2 SYNCS×58 LDS.128×4
//! STS.128×16` for every 16-bit D, TN and NN alike — level 9's — and `STS.128×32` for an f32
//! D, twice the staging bytes; `224 0 UTCHMMA×4 UTMALDG×2 UTMASTG×1 LDTM×2 USETMAXREG×2
//! SYNCS×62 LDS.128×4 STS.128×8` for the `n64` tiles, `STS.128×16` with an f32 D; `224 0
//! UTCHMMA×4 UTMALDG×2 UTMASTG×1 LDTM×2 USETMAXREG×2 SYNCS×56 LDS.128×4 STS.128×8` for the
//! `n256` tiles, TN and NN alike, `LDTM×1 … SYNCS×52` with an f32 D: the block loop's one load
//! of 64 or 32 columns), and the
//! emulator against the f64 reference on shapes with tails in M, N and K and more tiles than
//! clusters, TN and NN, 16-bit and f32 outputs, under every CLC mode, the `n64` tiles on
//! M = 300, N = 72, K = 136, the `n256` tiles (TN and NN) on M = 300, N = 520, K = 136
//! (`tests/sim_gemm_sm100.rs`); 100 seeded schedules a config and CLC
//! mode with
//! `tirx sim gemm_sm100_prod --m 300 --n 264 --k 136 --sms 4 --schedules 100 --clc random`
//! (`docs/emulator.md` records the runs).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces, super::pieces_sm100::gemm_pieces_sm100))]
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
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 128 / size_of(TD), EPI_R = BN, REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 128 / size_of(TD), EPI_R = BN, REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
            product(
                tile(n64 = (BN = 64, STAGES = 8)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f32 = (TA = bf16, TD = f32)),
                with = (BM = 256, BK = 64, GROUP = 8, EPI_N = 128 / size_of(TD), EPI_R = BN, REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                tile(n256 = (BN = 256)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f32 = (TA = bf16, TD = f32)),
                with = (BM = 256, BK = 64, STAGES = (225 * 1024 - 128 * BN * size_of(TD)) / ((128 + BN / 2) * BK * size_of(TA)), GROUP = 8, EPI_N = 128 / size_of(TD), EPI_R = EPI_N, REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                tile(n256 = (BN = 256)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f32 = (TA = bf16, TD = f32)),
                with = (BM = 256, BK = 64, STAGES = (225 * 1024 - 128 * BN * size_of(TD)) / ((128 + BN / 2) * BK * size_of(TA)), GROUP = 8, EPI_N = 128 / size_of(TD), EPI_R = EPI_N, REG_ISSUE = 56, REG_EPILOGUE = 224),
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
        // The epilogue's registers: EPI_R columns of the accumulator at a time (the whole
        // row, or one staging block of the wide tiles through the view `accv`).
        let r = regs::<f32>([128, EPI_R], layout = tmem_32x32b);
        let accv = tmem::<f32>([2 * BN / EPI_R, 128, EPI_R], alias = acc);
        let d_s = smem::<TD>([BN / EPI_N, 128, EPI_N], swizzle = B128);
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);
        // Shared memory: the operand stages (A's 128 rows and B's BN / 2, BK wide, 16-bit) and
        // D's staging tile (128 × BN of D) within 225 KiB — the 227 KiB a CTA may use less
        // 2 KiB for the swizzled tiles' 1 KiB alignment, the barriers, the TMEM slot and the
        // scheduler's response (2064 bytes in all).
        static_assert(
            EPI_R == BN || EPI_R == EPI_N,
            "the epilogue reads the whole row or one staging block at a time",
        );
        static_assert(
            STAGES * (128 + BN / 2) * BK * 2 + 128 * BN * (128 / EPI_N) <= 225 * 1024,
            "the operand stages and D's staging tile exceed the shared memory",
        );

        pair_clc_roles(
            pipe, accp, clcp, resp, acc, a_s, b_s, a, b, pairs_m, tiles_n,
        );

        // The epilogue warpgroup: level 9's, over D's type.
        pair_epilogue(d, d_s, r, acc, accv, accp, clcp, resp, pairs_m, tiles_n);

        pair_tmem_release(acc);
    }
}
