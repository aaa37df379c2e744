//! Block-scaled MXFP8 GEMM on Blackwell (sm_100a): D = (A·sA)·(B·sB)ᵀ with A M×K and B N×K
//! E4M3 row-major, one UE8M0 factor per 32 elements of each row of A and of B (the OCP MX
//! recipe), FP32 accumulate in tensor memory, BF16 out — level 4's warp-specialized structure
//! (`gemm_sm100_ws`) with the factors staged beside the operands.
//!
//! The factors travel as the images `tcgen05.cp.32x128b.warpx4` copies (PTX ISA §9.7.16.9.2):
//! the host lays each factor matrix out with `tirx::runtime::scale_image` as a 2-D `ue8m0`
//! tensor of `[ceil(rows / 128)·32, ceil(K / 128)·16]` bytes, so one TMA box of `[BM / 4, 16]`
//! (`[BN / 4, 16]`) is a K tile's factors of the CTA's rows. Per K tile (128 E4M3 = one
//! 128-byte swizzle row):
//! - warp 0's elected thread loads A, B and both factor images into the stage (one full
//!   barrier, its bytes derived from the four boxes);
//! - warp 1's elected thread copies the stage's factors into the stage's TMEM factor tiles
//!   (`tcgen05::cp`: one `.32x128b.warpx4` per 128 rows, every 32-lane quarter), then issues
//!   the four block-scaled MMAs (`kind::mxf8f6f4.block_scale.scale_vec::1X`, scale-factor data
//!   IDs 0-3, §9.7.16.10.7) that read them — one thread, so the copies are ordered before the
//!   MMAs (§9.7.16.6.5) — and commits the stage's release. The TMEM factor tiles are staged
//!   like the shared ones: a stage is copied into again only after its MMAs' commit released
//!   it (the ISA does not order a `tcgen05.cp` after an earlier `tcgen05.mma` of the thread);
//! - warpgroup 1 waits for the last commit and converts the accumulator to BF16.
//!
//! In the catalogue as `gemm(b = tn, epilogue = scale-mx)` (`Epilogue::ScaleFactors`, told by
//! the factor images' UE8M0 type): the host's `gemm::factors::gemm_block_scaled` chooses it,
//! `tirx sim` runs it against `gemm/factors_ref.rs`'s reference, and the shape assertions
//! hold the images to `scale_image`'s extents at launch.
//!
//! Verified without a Blackwell GPU (none was used): the emulator runs both configs against
//! an f64 reference of the same quantised values on odd shapes (`tests/sim_mxfp8.rs`), and
//! ptxas `-arch=sm_100a` assembles them with 0 spills, `UTCQMMA` (four per K tile) and
//! `UTCCP.T.S.4x32dp128bit` (three per K tile with BN = 256, two with BN = 128).

use tirx::prelude::*;

/// Level 4's roles over MXFP8 operands: one CTA per BM×BN tile, STAGES stages of A, B and
/// their factor images, the factors copied into TMEM by the MMA's thread.
#[tile_kernel(
    solves = gemm,
    target = sm_100a,
    threads = 256,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(
        default = (BM = 128, BN = 256, BK = 128, STAGES = 4, REG_ISSUE = 56, REG_EPILOGUE = 224),
        n128 = (BM = 128, BN = 128, BK = 128, STAGES = 6, REG_ISSUE = 56, REG_EPILOGUE = 224),
    ),
)]
pub fn gemm_sm100_mxfp8(
    #[shape(M, K)] a: Tensor<e4m3>,
    #[shape(N, K)] b: Tensor<e4m3>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    // The factor images are `tirx::runtime::scale_image`'s: 32 rows a 128 rows of the
    // operand, 16 bytes a 4 factors (one per 32 of K).
    static_assert(
        MS == cdiv(M, 128) * 32,
        "sfa is scale_image's: 32 rows an image of 128 rows of A",
    );
    static_assert(
        NS == cdiv(N, 128) * 32,
        "sfb is scale_image's: 32 rows an image of 128 rows of B",
    );
    static_assert(
        KS == cdiv(K, 128) * 16,
        "16 bytes (4 UE8M0 factors) an image of 128 of K",
    );
    let a_s = smem::<e4m3>([STAGES, BM, BK], swizzle = B128);
    let b_s = smem::<e4m3>([STAGES, BN, BK], swizzle = B128);
    // 128 rows × 4 factors per 32 × 16-byte image.
    let sfa_s = smem::<ue8m0>([STAGES, BM / 4, 16]);
    let sfb_s = smem::<ue8m0>([STAGES, BN / 4, 16]);
    let acc = tmem::<f32>([BM, BN]);
    let sfa_t = tmem::<ue8m0>([STAGES, BM, 4]);
    let sfb_t = tmem::<ue8m0>([STAGES, BN, 4]);
    let pipe = pipeline::<STAGES>();
    let done = mbarrier();
    let k_tiles = cdiv(K, BK);
    static_assert(
        BK == 128,
        "an E4M3 K tile is one 128-byte swizzle row: 4 factors a row",
    );
    static_assert(
        128 * REG_ISSUE + 128 * REG_EPILOGUE <= 65536,
        "the warpgroups' setmaxnreg counts exceed the 64K-register file",
    );

    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa_t);
        tcgen05::alloc(sfb_t);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();

    // Warpgroup 0: the TMA warp and the MMA warp (warps 2 and 3 only give registers away).
    #[scope(warpgroup = 0)]
    {
        setmaxnreg::dec(REG_ISSUE);
        #[scope(warp = 0, elect)]
        {
            for k in 0..k_tiles {
                let s = pipe.producer_acquire(k);
                tma::load(a_s[s], a.tile(cta.y, k), pipe.full(s));
                tma::load(b_s[s], b.tile(cta.x, k), pipe.full(s));
                tma::load(sfa_s[s], sfa.tile(cta.y, k), pipe.full(s));
                tma::load(sfb_s[s], sfb.tile(cta.x, k), pipe.full(s));
            }
        }
        #[scope(warp = 1, elect)]
        {
            for k in 0..k_tiles {
                let s = pipe.consumer_wait(k);
                tcgen05::cp(sfa_t[s], sfa_s[s]);
                tcgen05::cp(sfb_t[s], sfb_s[s]);
                tcgen05::mma(
                    acc,
                    a_s[s],
                    b_s[s],
                    accumulate = k > 0,
                    scale_a = sfa_t[s],
                    scale_b = sfb_t[s],
                );
                tcgen05::commit(pipe.empty(s));
            }
            tcgen05::commit(done);
        }
    }

    // Warpgroup 1: the epilogue, `tcgen05.ld` lane by lane, converted to BF16, stored.
    #[scope(warpgroup = 1)]
    {
        setmaxnreg::inc(REG_EPILOGUE);
        done.wait(0);
        tcgen05::fence_after();
        copy(d.tile(cta.y, cta.x), acc);
    }

    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sfa_t);
        tcgen05::dealloc(sfb_t);
    }
}
