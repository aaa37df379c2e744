//! Block-scaled NVFP4 GEMM on Blackwell (sm_100a): D = (A·sA)·(B·sB)ᵀ with A M×K and B N×K
//! packed FP4 E2M1 (`e2m1x2`, `[M, K / 2]` bytes, the lower K in the low nibble), one UE4M3
//! factor per 16 values of each row of A and of B (NVFP4's recipe; its per-tensor FP32 scale
//! is the caller's to fold into the output), FP32 accumulate in tensor memory, BF16 out —
//! `gemm_sm100_mxfp8`'s warp-specialized structure with FP4 operands.
//!
//! A K tile is one 128-byte swizzle row: 256 values, four `kind::mxf4nvf4.block_scale
//! .scale_vec::4X` MMAs of K = 64 (PTX ISA §9.7.16.10.7, §9.7.16.2.1), each reading four
//! factors a row, so a tile's factors are 16 a row: four cells of 4. The host lays each factor
//! matrix out with `tirx::runtime::scale_image` (`[ceil(rows / 128)·32, ceil(K / 64)·16]`
//! bytes, one `[32, 16]` image per 128 rows and 4 factors), and a stage holds the tile's four
//! cells of A (`[4, BM / 4, 16]`, one TMA box each, box column `4·k + c`) and of B.
//! - warp 0's elected thread loads A, B and the eight factor boxes into the stage (one full
//!   barrier, its bytes derived from the ten boxes);
//! - warp 1's elected thread copies the stage's factors into the stage's TMEM factor tiles
//!   (`tmem::<ue4m3>([BM, 16])`: `tcgen05::cp` issues one `.32x128b.warpx4` per cell and
//!   128 rows), issues the four MMAs — instruction `j` reads cell `j` (the factor address
//!   plus `j·R / 32` columns), data ID 0 — and commits the stage's release; the TMEM factor
//!   tiles are staged like the shared ones (a stage is copied into again only after its MMAs'
//!   commit released it);
//! - warpgroup 1 waits for the last commit and converts the accumulator to BF16.
//!
//! In the catalogue as `gemm(b = tn, epilogue = scale-nv)` (`Epilogue::ScaleFactors`, told by
//! the factor images' UE4M3 type; host entry `gemm::factors::gemm_block_scaled`). Verified without a Blackwell GPU (none was used): the emulator runs both
//! configs against an f64 reference of the same quantised values on odd shapes
//! (`tests/sim_nvfp4.rs`), and ptxas `-arch=sm_100a` assembles them with 0 spills,
//! `UTCOMMA.4X` (four per K tile) and `UTCCP.T.S.4x32dp128bit` (four for A's cells, eight
//! with BN = 256 or four with BN = 128 for B's).

use tirx::prelude::*;

/// Level 4's roles over NVFP4 operands: one CTA per BM×BN tile, STAGES stages of A, B and
/// their factor cells, the factors copied into TMEM by the MMA's thread.
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
pub fn gemm_sm100_nvfp4(
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
    // BK bytes a row: 2·BK FP4 values.
    let a_s = smem::<e2m1x2>([STAGES, BM, BK], swizzle = B128);
    let b_s = smem::<e2m1x2>([STAGES, BN, BK], swizzle = B128);
    // Per stage, 4 cells × (rows / 128) images of 32 × 16 bytes.
    let sfa_s = smem::<ue4m3>([STAGES, 4, BM / 4, 16]);
    let sfb_s = smem::<ue4m3>([STAGES, 4, BN / 4, 16]);
    let acc = tmem::<f32>([BM, BN]);
    let sfa_t = tmem::<ue4m3>([STAGES, BM, 16]);
    let sfb_t = tmem::<ue4m3>([STAGES, BN, 16]);
    let pipe = pipeline::<STAGES>();
    let done = mbarrier();
    let k_tiles = cdiv(KB, BK);
    static_assert(
        BK == 128,
        "an NVFP4 K tile is one 128-byte swizzle row: 256 values, 16 factors a row",
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
                tma::load(sfa_s[s][0], sfa.tile(cta.y, 4 * k), pipe.full(s));
                tma::load(sfa_s[s][1], sfa.tile(cta.y, 4 * k + 1), pipe.full(s));
                tma::load(sfa_s[s][2], sfa.tile(cta.y, 4 * k + 2), pipe.full(s));
                tma::load(sfa_s[s][3], sfa.tile(cta.y, 4 * k + 3), pipe.full(s));
                tma::load(sfb_s[s][0], sfb.tile(cta.x, 4 * k), pipe.full(s));
                tma::load(sfb_s[s][1], sfb.tile(cta.x, 4 * k + 1), pipe.full(s));
                tma::load(sfb_s[s][2], sfb.tile(cta.x, 4 * k + 2), pipe.full(s));
                tma::load(sfb_s[s][3], sfb.tile(cta.x, 4 * k + 3), pipe.full(s));
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
