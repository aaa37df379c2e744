//! GEMM ladder, level 6 on Blackwell: persistent tiles with the accumulator double-buffered in
//! tensor memory — level 4's roles (`gemm_sm100_ws`) kept for the whole kernel, a grid of one
//! CTA per SM walking the output tiles, and two accumulators in TMEM so that the epilogue of
//! one tile overlaps the MMAs of the next. D = A·Bᵀ with A M×K and B N×K row-major, BF16 in,
//! FP32 accumulate, BF16 out.
//!
//! What it adds to level 4: `acc = tmem::<f32>([2, BM, BN])` is two accumulator stages side by
//! side in TMEM columns (2 × 256 = all 512 columns at BN = 256; 2 × 128 at BN = 128), each with
//! its own pair of barriers: the MMA warp waits on `acc_empty[s]`, issues the tile's MMAs into
//! `acc[s]` and commits `acc_full[s]` (`tcgen05.commit`: it completes when those MMAs are
//! done); the epilogue warpgroup waits on `acc_full[s]`, reads `acc[s]` (`tcgen05.ld` and its
//! `tcgen05.wait::ld`), and all 128 of its threads arrive on `acc_empty[s]`. Stage and parity
//! follow from the CTA's tile count `j`: stage `j % 2`, round `j / 2`. The producer's
//! pipeline counter runs on across tiles, as on Hopper's level 6. The walk is static
//! (`cta.x`, stepping by the grid size) in groups of GROUP tile rows ([`grouped`], L2 reuse).
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills, and
//! the SASS (`tirx check`, its `gemm_sm100_persistent` lines: default `224 0 UTCHMMA×4
//! UTMALDG×2 LDTM×8 USETMAXREG×2 SYNCS×22`, n128 `224 0 UTCHMMA×4 UTMALDG×2 LDTM×4
//! USETMAXREG×2 SYNCS×26`) shows `UTCHMMA`, `UTMALDG`, `LDTM` and `USETMAXREG`; the emulator
//! runs it against the f64 reference with more tiles than CTAs, so the walk wraps and both
//! accumulator stages are reused (`tests/sim_gemm.rs`).
//!
//! What the compiler knows (`tirx list`, `tirx check`, ptxas 13), beside a published B200
//! kernel: ThunderKittens' educational level 9 (HazyResearch/ThunderKittens,
//! `kernels/gemm/educational_b200/level_09.cu`, 2-CTA MMA and two consumer warpgroups, each
//! with its own TMEM accumulator; not persistent, one output block per cluster):
//!
//! | | default | `n128` | TK educational level 9 |
//! |---|---|---|---|
//! | tile, stages | 128×256×64, 4 | 128×128×64, 6 | 128×256×64 per consumer, 4; cluster of 2 |
//! | threads | 256 | 256 | 384 |
//! | shared memory (stages) | 192 KiB | 192 KiB | A 2 × 16 KiB + B half 16 KiB per stage, D staging |
//! | TMEM columns | 512 (2 × 256: both accumulator stages) | 256 (2 × 128) | 512 (2 × 256, one per consumer) |
//! | per K step | TMA 48 KiB, 4 MMAs m128n256k16: 85.3 FLOP/B | 32 KiB, 4 MMAs m128n128k16: 64 FLOP/B | |
//! | registers | 224 at entry; `dec(56)` / `inc(224)` | the same | `decrease_registers<56>` / `increase_registers<224>` |
//! | epilogue | 8 × `tcgen05.ld.32x32b.x32` (`LDTM`) | 4 × | `tcgen05.ld`, shared memory, TMA store |
//!
//! Not measured: there is no Blackwell GPU here.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 6 (Blackwell): persistent, the accumulator double-buffered in TMEM. `grid =
    /// (SMS, 1)`: the launcher reads the device's SM count; a CTA with no tile left skips
    /// every loop. The `n128` config takes 128×128 tiles (256 TMEM columns, six stages).
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        grid = (SMS, 1),
        configs(
            default = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 8, REG_ISSUE = 56, REG_EPILOGUE = 224),
            n128 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, REG_ISSUE = 56, REG_EPILOGUE = 224),
        ),
    )]
    pub fn gemm_sm100_persistent(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = tmem::<f32>([2, BM, BN]);
        let pipe = pipeline::<STAGES>();
        let acc_full = mbarrier(count = 2);
        let acc_empty = mbarrier(count = 2, arrivals = 128);
        let tiles_m = cdiv(M, BM);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        static_assert(
            128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );

        tmem_acquire(acc);

        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(REG_ISSUE);
            // The TMA warp: every tile's K steps into the stage ring.
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                    let (m, n) = grouped(t, tiles_m, tiles_n);
                    it = produce(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
                }
            }
            // The MMA warp: tile j into accumulator stage j % 2, once the epilogue freed it.
            #[scope(warp = 1, elect)]
            {
                let mut it = 0;
                let mut j = 0;
                for _ in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                    let s = j % 2;
                    // Round r waits for the epilogue's release of round r − 1; round 0 passes
                    // at once (parity 1 names the phase before the barrier's first).
                    acc_empty[s].wait((j / 2 + 1) % 2);
                    tcgen05::fence_after();
                    it = issue_stage(pipe, it, acc, s, a_s, b_s, k_tiles);
                    tcgen05::commit(acc_full[s]);
                    j += 1;
                }
            }
        }

        // The epilogue warpgroup: tile j out of accumulator stage j % 2, then release it.
        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            let mut j = 0;
            for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                let (m, n) = grouped(t, tiles_m, tiles_n);
                let s = j % 2;
                acc_full[s].wait((j / 2) % 2);
                tcgen05::fence_after();
                copy(d.tile(m, n), acc[s]);
                // The copy ends with `tcgen05.wait::ld`: this thread's loads are done, and the
                // fence orders them before the arrive that lets the MMA warp overwrite them
                // (PTX ISA §9.7.16.6.4).
                tcgen05::fence_before();
                acc_empty[s].arrive();
                j += 1;
            }
        }

        tmem_release(acc);
    }

    /// The MMA issuer's K loop of one tile into accumulator stage `stage`: each stage of the
    /// ring released by the `tcgen05.commit` of its MMAs. Returns the pipeline iteration after
    /// the tile.
    #[tile_fn]
    fn issue_stage(
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
            tcgen05::mma(acc[stage], a_s[s], b_s[s], accumulate = k > 0);
            tcgen05::commit(pipe.empty(s));
            it += 1;
        }
        it
    }
}
