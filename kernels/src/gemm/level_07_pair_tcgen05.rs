//! GEMM ladder, level 7 on Blackwell: the CTA pair — level 6's persistent kernel
//! (`gemm_sm100_persistent`) with each 256-row tile computed by the two CTAs of a 2×1 cluster
//! together (`tcgen05.mma.cta_group::2`, PTX ISA §9.7.16.5). D = A·Bᵀ with A M×K and B N×K
//! row-major, BF16 in, FP32 accumulate in tensor memory, BF16 out.
//!
//! What it adds to level 6. The pair's MMA is M = 256 across the two CTAs: each CTA holds its
//! own 128 rows of A and its own half of the tile's N rows of B in its shared memory, and its
//! own 128 rows of D (all N columns) in its TMEM (PTX ISA §9.7.16.5, the pair's operand split;
//! the same split as CUTLASS's 2-SM kernels and ThunderKittens' level 9). No operand is shared
//! between the two CTAs of a 2×1 pair — A's rows and B's rows are each split, so every byte
//! crosses L2 once per pair without a multicast — and a TMA multicast would only pay off in a
//! larger cluster (two pairs sharing A or B). What the pair needs of TMA is the completion: each
//! CTA's producer loads its halves with `tma::load(..., cta_group = 2)` (`.cta_group::2`,
//! §9.7.9.25.5.1), which completes the bytes on the *even* CTA's full barrier, and the compiler
//! arms that barrier in the even CTA with both CTAs' bytes (2 × 32 KiB a stage) while the odd
//! CTA arms nothing. The even CTA's elected thread alone waits, issues the pair's MMAs
//! (`cta_group = 2`: under `%cluster_ctarank & 1 == 0`), and commits with `.multicast::cluster`
//! to the stage's empty barrier in both CTAs (each producer refills its own halves) and, per
//! tile, to both CTAs' `accp.full` (each epilogue reads its own rows). Each epilogue warpgroup
//! hands its accumulator stage back to the even CTA's MMA warp through `accp`'s empty barrier,
//! a pipeline with `peers = 2` (one elected arrival from each CTA, `mapa` + remote arrive).
//! TMEM is allocated and released for the pair (`tcgen05.alloc/dealloc.cta_group::2`), the
//! release after a cluster barrier (checked at build: the peer's last read first).
//!
//! The walk is level 6's, over 256-row pairs of M tiles: the cluster `cta.x / 2` walks units
//! `(pair row, N tile)` with a stride of the cluster count, grouped by GROUP pair rows.
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills, and
//! the SASS (`tirx check`, its `gemm_sm100_pair` lines: default `224 0 UTCHMMA×4 UTMALDG×2
//! LDTM×8 USETMAXREG×2 SYNCS×37`, n128 `224 0 UTCHMMA×4 UTMALDG×2 LDTM×4 USETMAXREG×2
//! SYNCS×41`) shows the 2-CTA forms `UTCHMMA.2CTA` ×4 (the pair's MMAs), `UTCBAR.2CTA.MULTICAST`
//! ×2 (its commits), `UTMALDG.2D.2CTA` ×2 (the pair's loads) and `UTCATOMSWS.2CTA` (the pair's
//! allocation) (`tests/pair_mma.rs`); the emulator runs it against the
//! f64 reference with tails in M, N and K, more pair tiles than clusters (the walk wraps, both
//! accumulator stages reused) and under several schedules (`tests/sim_gemm.rs`).
//!
//! What the compiler knows (`tirx list`, `tirx check`, ptxas 13), beside the published B200
//! kernels with the same move: ThunderKittens' educational level 9 (HazyResearch/ThunderKittens,
//! `kernels/gemm/educational_b200/level_09.cu`: a 2-CTA cluster, each CTA loading its A rows and
//! its half of B, the loads completing on CTA 0's barrier, CTA 0 issuing the pair's MMA; one
//! output block per cluster, two consumer warpgroups of 128 × 256 each):
//!
//! | | default | `n128` | TK educational level 9 |
//! |---|---|---|---|
//! | tile per pair, stages | 256×256×64, 6 | 256×128×64, 8 | 512×256×64 (2 consumers), 4 |
//! | per CTA a stage | A 128×64 + B 128×64: 32 KiB | A 128×64 + B 64×64: 24 KiB | A 2 × 128×64 + B half 128×64: 48 KiB |
//! | threads | 256 | 256 | 384 |
//! | shared memory (stages) | 192 KiB | 192 KiB | 192 KiB + D staging |
//! | TMEM columns | 512 (2 × 256: both accumulator stages) | 256 (2 × 128) | 512 (2 × 256, one per consumer) |
//! | per K step, per CTA | 4 pair MMAs m256n256k16 (half of each per CTA): 128 FLOP/B loaded | m256n128k16: 85.3 FLOP/B | |
//! | registers | 224 at entry; `dec(56)` / `inc(224)` | the same | `decrease_registers<56>` / `increase_registers<224>` |
//! | epilogue | 8 × `tcgen05.ld.32x32b.x32` (`LDTM`) | 4 × | `tcgen05.ld`, shared memory, TMA store |
//!
//! ThunderKittens' B200 levels climb 293 → 731 → 1050 → 1285 → 1540 TFLOP/s (their README);
//! the pair is the step that halves each CTA's B traffic per MMA. Not measured: there is no
//! Blackwell GPU here.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 7 (Blackwell): the CTA pair — 256-row tiles over a 2×1 cluster, the even CTA
    /// issuing the pair's MMAs, the accumulator double-buffered in both CTAs' TMEM. `grid =
    /// (SMS / 2 * 2, 1)`: whole clusters, one CTA per SM. The `n128` config takes 256×128
    /// tiles (256 TMEM columns, eight stages).
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            default = (BM = 256, BN = 256, BK = 64, STAGES = 6, GROUP = 8, REG_ISSUE = 56, REG_EPILOGUE = 224),
            n128 = (BM = 256, BN = 128, BK = 64, STAGES = 8, GROUP = 8, REG_ISSUE = 56, REG_EPILOGUE = 224),
        ),
    )]
    pub fn gemm_sm100_pair(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        // This CTA's halves: its 128 rows of A, its BN / 2 rows of B, its 128 rows of D.
        let a_s = smem::<bf16>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN / 2, BK], swizzle = B128);
        let acc = tmem::<f32>([2, 128, BN]);
        let pipe = pipeline::<STAGES>();
        // The accumulator stages: `full` from the pair's multicast commit, `empty` from one
        // elected thread of each CTA's epilogue (both arrive on both CTAs' barriers).
        let accp = pipeline::<2>(peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        static_assert(
            128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );

        pair_tmem_acquire(acc);

        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(REG_ISSUE);
            // The TMA warp of each CTA: its halves of every tile's K steps, completing on the
            // even CTA's full barrier.
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
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
            }
            // The MMA warp of the even CTA: tile j into accumulator stage j % 2 of both CTAs.
            #[scope(warp = 1, elect)]
            {
                if cta_rank % 2 == 0 {
                    let mut it = 0;
                    let mut j = 0;
                    for _ in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                        let s = accp.producer_acquire(j);
                        tcgen05::fence_after();
                        it = issue_pair(pipe, it, acc, s, a_s, b_s, k_tiles);
                        tcgen05::commit(accp.full(s), cta_group = 2);
                        j += 1;
                    }
                }
            }
        }

        // The epilogue warpgroup of each CTA: its 128 rows of tile j out of stage j % 2.
        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            let mut j = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let s = accp.consumer_wait(j);
                tcgen05::fence_after();
                copy(d.tile(2 * mp + cta_rank, n), acc[s]);
                // Every thread's loads are done (`tcgen05.wait::ld`) and ordered before the
                // warpgroup's barrier; then one thread releases the stage to the even CTA.
                tcgen05::fence_before();
                named_barrier(1, 128);
                #[scope(leader)]
                {
                    accp.consumer_release(s);
                }
                j += 1;
            }
        }

        pair_tmem_release(acc);
    }
}
