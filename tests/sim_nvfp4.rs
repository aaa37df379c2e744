//! The block-scaled NVFP4 GEMM (`gemm_sm100_nvfp4`, `kernels/src/gemm/nvfp4_tcgen05.rs`) in
//! the emulator: both configs on an odd shape (tails in M, N and K) against an f64 reference
//! of the block-scaled product of the same quantised values (E2M1 elements, one UE4M3 factor
//! per 16 of a row), with the BF16 output's rounding; its SASS from ptxas for sm_100a; and the
//! FP4 kernels' IR through the text form. There is no Blackwell GPU here: nothing claims it
//! ran on one.

use tirx_kernels::check::check_artifact;
use tirx_kernels::gemm::nvfp4_tcgen05::gemm_sm100_nvfp4;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::block_scale_fp4::{Fp4, Fp4Problem};
use super::sim_exec::sim_launch;

#[test]
fn the_nvfp4_gemm_matches_the_block_scaled_reference_in_the_emulator() {
    use tirx::abi::ElemType::Bf16;
    // M 200 (128 + 72), N 264 (2 × 128 + 8), K 416 (256 + 160: a partial K tile).
    let (m, n, k) = (200, 264, 416);
    for (i, art) in gemm_sm100_nvfp4::KERNEL.artifacts.iter().enumerate() {
        let p = Fp4Problem::new(Fp4::Nv, (m, n, k), 31 + i as u64);
        let mut dev = Device::new();
        let mut t = p.upload(&mut dev);
        // D in BF16, poisoned (NaN).
        t[4] = tirx_kernels::simulate::put(&mut dev, &vec![0xff; m * n * 2], Bf16, &[m, n]);
        // Two schedules; D is rewritten whole by each.
        for seed in [5, 6] {
            sim_launch(art, &mut dev, &t, &[], seed)
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", art.config));
        }
        let got = tirx_kernels::simulate::decode(&dev.read(t[4].addr, m * n * 2).unwrap(), Bf16);
        let mut nonzero = 0;
        for r in 0..m {
            for c in 0..n {
                let (want, mag) = p.want(r, c);
                let g = got[r * n + c];
                // One f32 rounding per instruction, then BF16's (2⁻⁹ relative).
                let tol = want.abs() * 2f64.powi(-8) + mag * 2f64.powi(-20) + 1e-30;
                assert!(
                    (g - want).abs() <= tol,
                    "{} D[{r}][{c}] = {g}, want {want} (±{tol})",
                    art.config
                );
                nonzero += usize::from(want.abs() > tol);
            }
        }
        assert!(
            nonzero > m * n / 2,
            "{}: the reference is mostly zero",
            art.config
        );
    }
}

#[test]
fn the_nvfp4_gemm_assembles_with_fp4_mmas_and_factor_copies() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for art in gemm_sm100_nvfp4::KERNEL.artifacts {
        let c = check_artifact("gemm_sm100_nvfp4", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0, "{}", art.config);
        assert_eq!(
            c.sass.get("UTCOMMA.4X").copied(),
            Some(4),
            "{}: {:?}",
            art.config,
            c.sass
        );
        // A's factors: 4 cells × 1 block of 128 rows; B's: 4 cells × BN / 128 blocks.
        let cps = if art.config == "default" { 12 } else { 8 };
        assert_eq!(
            c.sass.get("UTCCP").copied(),
            Some(cps),
            "{}: {:?}",
            art.config,
            c.sass
        );
    }
}

/// The text form carries `e2m1x2` and `ue4m3` buffers and tensors and the FP4 block-scaled
/// MMA: the IR of this kernel and of the language tests' parses back to the same text after
/// every pass and recompiles to the PTX the macro emitted.
#[test]
fn the_fp4_kernels_round_trip_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let arts = gemm_sm100_nvfp4::KERNEL
        .artifacts
        .iter()
        .chain(super::block_scale_fp4::nvfp4_mma::KERNEL.artifacts)
        .chain(super::block_scale_fp4::mxfp4_mma::KERNEL.artifacts);
    for art in arts {
        assert!(
            art.ir.contains("e2m1x2") && art.ir.contains(" scale "),
            "{}",
            art.config
        );
        let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{}: {e}", art.config));
        assert_eq!(m.to_string(), art.ir);
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
        for s in &snaps {
            let again = parse_module(&s.text).unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
            assert_eq!(again.to_string(), s.text, "after {}", s.pass);
        }
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
    }
}
