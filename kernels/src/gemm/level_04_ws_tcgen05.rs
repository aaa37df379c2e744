//! GEMM ladder, level 4 on Blackwell: warp specialization — level 3's tcgen05 pipeline
//! (`gemm_sm100`) with its roles split by warp and its registers split by warpgroup, one CTA per
//! 128×256 tile. D = A·Bᵀ with A M×K and B N×K row-major, BF16 in, FP32 accumulate in tensor
//! memory, BF16 out.
//!
//! What it adds to level 3: the epilogue is a warpgroup of its own. Warp 0's elected thread
//! produces (TMA into the stage ring), warp 1's elected thread issues the MMAs, and the four
//! warps of warpgroup 1 wait for the accumulator and read it back with `tcgen05.ld` (warp
//! `4 + q` reads TMEM lanes `32q…32q+31`, the only lanes it may access: PTX ISA §9.7.16.8.1).
//! Warpgroup 0 (the TMA warp, the MMA warp and two idle warps) gives registers away, warpgroup 1
//! takes them (`setmaxnreg`, PTX ISA §9.7.19.6: the same count from all four warps of a
//! warpgroup, which is why the roles are grouped by warpgroup and the CTA has 256 threads
//! rather than the six warps the roles need).
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills, and
//! the SASS (`tirx check`, its `gemm_sm100_ws` line: `224 0 UTCHMMA×4 UTMALDG×2 LDTM×8
//! USETMAXREG×2 SYNCS×16`) shows `UTCHMMA` (the MMAs), `UTMALDG` (the TMA loads), `LDTM`
//! (`tcgen05.ld`) and `USETMAXREG` (`setmaxnreg`: `.DEALLOC.CTAPOOL` for the `dec`, `.TRY`
//! for the `inc`); the emulator runs it against the f64 reference (`tests/sim_gemm.rs`).
//!
//! What the compiler knows (`tirx list`, `tirx check`, ptxas 13), beside a published B200
//! kernel of the same kind, ThunderKittens' educational level 7 (HazyResearch/ThunderKittens,
//! `kernels/gemm/educational_b200/level_07.cu`: warp 0 loads, warp 1 issues, all four warps
//! read TMEM and store through shared memory and TMA):
//!
//! | | `gemm_sm100_ws` default | TK educational level 7 |
//! |---|---|---|
//! | tile, stages | 128×256×64, 4 | 128×128×64, 3 |
//! | threads | 256 (TMA warp, MMA warp, 2 idle; epilogue warpgroup) | 128 |
//! | shared memory | 192 KiB of stages (198 656 B with barriers and alignment slack) | 3 × 32 KiB + 32 KiB D staging |
//! | TMEM columns | 256 | 128 |
//! | per K step | TMA 48 KiB; 4 × `tcgen05.mma` m128n256k16, 12 KiB of operands each: 85.3 FLOP per byte loaded | 32 KiB; 64 FLOP per byte |
//! | registers | 224 at entry; warpgroup 0 `dec(56)`, warpgroup 1 `inc(224)`: 128·56 + 128·224 = 35 840 ≤ 256·224 ≤ 65 536 | no `setmaxnreg` |
//! | epilogue | 8 × `tcgen05.ld.32x32b.x32` a thread (`LDTM`), bf16 `st.global` | `tcgen05.ld`, shared memory, TMA store |
//!
//! ptxas launches the CTA at 224 registers a thread (the largest count the kernel asks for),
//! so the epilogue's `inc(224)` confirms its count and warpgroup 0's `dec(56)` returns the
//! rest to the CTA's pool; with 256 threads the 64K file would allow more. Not measured: there
//! is no Blackwell GPU here.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 4 (Blackwell): warp specialization with a TMEM epilogue warpgroup. One CTA per
    /// BM×BN tile; the MMA warp commits `done` after its last MMA and the epilogue warpgroup
    /// waits on it, so a tile's TMA loads and MMAs overlap and its epilogue follows them (the
    /// persistent level overlaps the epilogue with the next tile's MMAs).
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        grid = (cdiv(N, BN), cdiv(M, BM)),
        configs(default = (BM = 128, BN = 256, BK = 64, STAGES = 4, REG_ISSUE = 56, REG_EPILOGUE = 224)),
    )]
    pub fn gemm_sm100_ws(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = tmem::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>();
        let done = mbarrier();
        let k_tiles = cdiv(K, BK);
        // setmaxnreg moves registers within what the CTA was launched with (PTX ISA
        // §9.7.19.6): both warpgroups' counts together must fit in the 64K-register file.
        static_assert(
            128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );

        tmem_acquire(acc);

        // Warpgroup 0: the TMA warp and the MMA warp (warps 2 and 3 only give registers away).
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(REG_ISSUE);
            #[scope(warp = 0, elect)]
            {
                let _ = produce(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
            }
            #[scope(warp = 1, elect)]
            {
                for k in 0..k_tiles {
                    let s = pipe.consumer_wait(k);
                    tcgen05::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
                    tcgen05::commit(pipe.empty(s));
                }
                tcgen05::commit(done);
            }
        }

        // Warpgroup 1: the epilogue, `tcgen05.ld` lane by lane, converted, stored.
        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            done.wait(0);
            tcgen05::fence_after();
            copy(d.tile(cta.y, cta.x), acc);
        }

        tmem_release(acc);
    }
}
