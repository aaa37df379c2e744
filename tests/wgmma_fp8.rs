//! Hopper FP8 `wgmma` (PTX ISA §9.7.15.5.2, the `.e4m3`/`.e5m2` forms `.m64nNk32`): `e4m3` /
//! `e5m2` shared tiles (A and B may differ), both K-major — the 8-bit forms have no transpose
//! operands — f32 accumulation in registers. A small GEMM D = A·Bᵀ per type pair, one 64×BN
//! tile per CTA, K in tiles of 128 (one 128-byte swizzle row), written with the same macro as
//! the shipped kernels, run in the emulator against an f64 reference of the same FP8 values,
//! with tails in M, N and K; its PTX assembled by ptxas for sm_90a with the FP8 GMMA in the
//! SASS.

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_ptx::tools::{find_ptxas, tool_for_test};

use super::kinds::fp8_gemm_is_exact_in_the_emulator;

/// D = A·Bᵀ with FP8 operands on sm_90a: A M×K of `TA`, B N×K of `TB`, f32 D.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (cdiv(M, 64), cdiv(N, BN)),
    configs(
        e4m3 = (TA = e4m3, TB = e4m3, BN = 64),
        e5m2 = (TA = e5m2, TB = e5m2, BN = 32),
        mixed = (TA = e4m3, TB = e5m2, BN = 64),
    ),
)]
pub fn wgmma_fp8(
    #[shape(M, K)] a: Tensor<TA>,
    #[shape(N, K)] b: Tensor<TB>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<TA>([64, 128], swizzle = B128);
    let b_s = smem::<TB>([BN, 128], swizzle = B128);
    let acc = regs::<f32>([64, BN]);
    let full = mbarrier();
    for k in 0..cdiv(K, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        wgmma::fence();
        // 8-bit operands: m64nNk32, four instructions per 128-wide K tile.
        wgmma::mma(acc, a_s, b_s, accumulate = k > 0);
        wgmma::commit();
        wgmma::wait(0);
        sync_threads();
    }
    copy(d.tile(cta.x, cta.y), acc);
}

const PAIRS: [(tirx::abi::ElemType, tirx::abi::ElemType); 3] = {
    use tirx::abi::ElemType::{E4m3, E5m2};
    [(E4m3, E4m3), (E5m2, E5m2), (E4m3, E5m2)]
};

#[test]
fn fp8_operands_issue_m64nnk32_without_transpose_operands() {
    for (art, (ta, tb)) in wgmma_fp8::KERNEL.artifacts.iter().zip(PAIRS) {
        let bn = if art.config == "e5m2" { 32 } else { 64 };
        let want = format!(
            "wgmma.mma_async.sync.aligned.m64n{bn}k32.f32.{}.{}",
            ta.name(),
            tb.name()
        );
        let mmas: Vec<&str> = art
            .ptx
            .lines()
            .filter(|l| l.contains("wgmma.mma_async"))
            .collect();
        assert_eq!(mmas.len(), 4, "{}: {mmas:#?}", art.config);
        for l in &mmas {
            assert!(l.contains(&want), "{}: {l}", art.config);
            // `d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b`: no imm-trans operands.
            assert!(l.trim_end().ends_with(", 1, 1;"), "{}: {l}", art.config);
        }
    }
}

#[test]
fn the_fp8_wgmma_gemms_match_the_reference_in_the_emulator() {
    // Tails: M 72 (64 + 8), N 72 (BN + 8, or 2·32 + 8), K 208 (128 + 80; TMA rows need a
    // multiple of 16 bytes).
    for (ci, (ta, tb)) in PAIRS.into_iter().enumerate() {
        let art = &wgmma_fp8::KERNEL.artifacts[ci];
        // One f32 rounding per k32 step.
        let shapes = [(64, 64, 128), (72, 72, 208)];
        fp8_gemm_is_exact_in_the_emulator(art, (ta, tb), &shapes, 11 + ci as u64, 5, -21);
    }
}

#[test]
fn the_fp8_wgmma_gemms_assemble_with_the_fp8_gmma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for art in wgmma_fp8::KERNEL.artifacts {
        let c = check_artifact("wgmma_fp8", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0);
        // ptxas prints the FP8 wgmma as QGMMA (the 16-bit ones as HGMMA).
        assert!(
            c.sass.get("QGMMA").copied().unwrap_or(0) >= 4,
            "{}: {:?}",
            art.config,
            c.sass
        );
    }
}
