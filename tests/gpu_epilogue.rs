//! GPU tests (feature `gpu`; cuBLASLt on `LD_LIBRARY_PATH`, e.g. `/usr/local/cuda/lib64`) of
//! the epilogue bench's baseline: cuBLASLt's fused epilogues against the f64 reference of
//! `gemm::reference`, on shapes with tails; that its GELU is the tanh form; and that plans
//! with and without an epilogue refuse the other's run.

use half::bf16;
use tirx::Runtime;
use tirx_kernels::bench::cublaslt::{CublasLt, LtEpilogue};
use tirx_kernels::bench::epilogue::{BIAS_SCALE, Baseline, b_scale};
use tirx_kernels::gemm::check::GEMM_TOL;
use tirx_kernels::gemm::reference::{Act, gelu_tanh, gemm_epilogue_f64};
use tirx_kernels::reference::{Rng, rel_frobenius};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

fn lt(rt: &Runtime) -> CublasLt {
    CublasLt::new(rt).expect("the gpu feature needs cuBLASLt on LD_LIBRARY_PATH")
}

/// The activation each cuBLASLt epilogue applies after the bias.
fn act_of(e: LtEpilogue) -> Act {
    match e {
        LtEpilogue::Bias => Act::None,
        LtEpilogue::ReluBias => Act::Relu,
        LtEpilogue::GeluBias => Act::Gelu,
    }
}

#[test]
fn cublaslt_epilogues_add_the_bias_per_column_and_match_the_reference() {
    let rt = rt();
    let lt = lt(&rt);
    // M odd; N and K multiples of 8 (cuBLASLt's leading dimensions); N ≠ M, so a bias along
    // the wrong dimension could not even be given.
    for (m, n, k) in [(200, 136, 256), (257, 264, 1000)] {
        let mut rng = Rng::new(5);
        let a: Vec<bf16> = rng.values(m * k);
        let scale = |v: Vec<bf16>, s: f32| -> Vec<bf16> {
            v.into_iter()
                .map(|x| bf16::from_f32(x.to_f32() * s))
                .collect()
        };
        let b = scale(rng.values(n * k), b_scale(k));
        let bias = scale(rng.values(n), BIAS_SCALE);
        let (da, db, dbias) = (
            rt.upload(&a, &[m, k]).unwrap(),
            rt.upload(&b, &[n, k]).unwrap(),
            rt.upload(&bias, &[n]).unwrap(),
        );
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        for e in LtEpilogue::ALL {
            let plan = lt.gemm_epilogue((m, n, k), e).unwrap();
            rt.poison(&mut d).unwrap();
            plan.run_epilogue(&da, &db, &dbias, &mut d).unwrap();
            let got = rt.download(&d).unwrap();
            let want = gemm_epilogue_f64(&a, &b, &bias, (m, n, k), act_of(e));
            let err = rel_frobenius(&got, &want);
            assert!(
                err < GEMM_TOL,
                "{} {m}x{n}x{k}: rel. error {err:.3e}",
                e.name()
            );
            // The check can fail: against the other epilogues' references it is far off.
            for other in LtEpilogue::ALL.into_iter().filter(|&o| o != e) {
                let want = gemm_epilogue_f64(&a, &b, &bias, (m, n, k), act_of(other));
                let err = rel_frobenius(&got, &want);
                assert!(
                    err > 5.0 * GEMM_TOL,
                    "{} vs {}: {err:.3e}",
                    e.name(),
                    other.name()
                );
            }
        }
        // Each of the bench's epilogues has a baseline plan on this shape.
        for act in Act::ALL {
            lt.gemm_epilogue((m, n, k), Baseline::of(act).epilogue)
                .unwrap();
        }
    }
}

/// erf by its Taylor series, exact to ~1e-14 for |z| ≤ 3 (the terms peak near n = z²).
fn erf(z: f64) -> f64 {
    let (mut sum, mut term, mut n) = (0.0, z, 0u32);
    // term_n = (-1)^n z^(2n+1) / n!; the series adds term_n / (2n + 1).
    while term.abs() > 1e-18 {
        sum += term / f64::from(2 * n + 1);
        n += 1;
        term *= -z * z / f64::from(n);
    }
    2.0 / std::f64::consts::PI.sqrt() * sum
}

/// x·Φ(x), GELU without the approximation.
fn gelu_exact(x: f64) -> f64 {
    0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

#[test]
fn erf_series_matches_known_values() {
    assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-14);
    assert!((erf(-2.0) + 0.995_322_265_018_952_7).abs() < 1e-14);
    assert!((gelu_exact(-3.0) + 0.004_049_694_094_890_31).abs() < 1e-14);
}

/// On pre-activations x in [-4, -2.5], where GELU's tanh form and x·Φ(x) differ by 7 to 60
/// bf16 units in the last place, cuBLASLt's `CUBLASLT_EPILOGUE_GELU_BIAS` gives the tanh form.
#[test]
fn cublaslt_gelu_is_the_tanh_form() {
    let rt = rt();
    let lt = lt(&rt);
    // D[i][j] = x_i exactly: A[i][0] = x_i, B[j][0] = 1, zeros elsewhere, no bias.
    let xs: Vec<f32> = (0..96).map(|i| -4.0 + i as f32 / 64.0).collect();
    let (m, n, k) = (xs.len(), 8, 16);
    let mut a = vec![bf16::ZERO; m * k];
    for (i, &x) in xs.iter().enumerate() {
        a[i * k] = bf16::from_f32(x);
    }
    let mut b = vec![bf16::ZERO; n * k];
    for j in 0..n {
        b[j * k] = bf16::ONE;
    }
    let da = rt.upload(&a, &[m, k]).unwrap();
    let db = rt.upload(&b, &[n, k]).unwrap();
    let dbias = rt.zeros::<bf16>(&[n]).unwrap();
    let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
    let plan = lt.gemm_epilogue((m, n, k), LtEpilogue::GeluBias).unwrap();
    rt.poison(&mut d).unwrap();
    plan.run_epilogue(&da, &db, &dbias, &mut d).unwrap();
    let got = rt.download(&d).unwrap();
    let (mut worst_tanh, mut nearer_tanh) = (0.0f64, 0usize);
    for (i, &x) in xs.iter().enumerate() {
        let (tanh, exact) = (gelu_tanh(f64::from(x)), gelu_exact(f64::from(x)));
        // The forms are apart here by far more than bf16 rounding.
        assert!((tanh - exact).abs() > 0.02 * exact.abs(), "x = {x}");
        for j in 0..n {
            let g = got[i * n + j].to_f64();
            worst_tanh = worst_tanh.max((g - tanh).abs() / tanh.abs());
            nearer_tanh += usize::from((g - tanh).abs() < (g - exact).abs());
        }
    }
    eprintln!(
        "cuBLASLt GELU on x in [-4, -2.5]: {nearer_tanh} of {} nearer the tanh form; worst rel. \
         error against it {worst_tanh:.3e}",
        m * n
    );
    assert_eq!(nearer_tanh, m * n, "cuBLASLt's GELU is not the tanh form");
    assert!(worst_tanh < 0.02, "{worst_tanh:.3e}");
}

#[test]
fn plans_refuse_the_other_kind_of_run() {
    let rt = rt();
    let lt = lt(&rt);
    let (m, n, k) = (64, 64, 64);
    let a = rt.zeros::<bf16>(&[m, k]).unwrap();
    let b = rt.zeros::<bf16>(&[n, k]).unwrap();
    let bias = rt.zeros::<bf16>(&[n]).unwrap();
    let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
    let plain = lt
        .gemm(
            (m, n, k),
            tirx::problem::BLayout::Tn,
            tirx_kernels::gemm::request::GemmTypes::BF16,
        )
        .unwrap();
    let fused = lt.gemm_epilogue((m, n, k), LtEpilogue::Bias).unwrap();
    let err = plain.run_epilogue(&a, &b, &bias, &mut d).unwrap_err();
    assert!(err.to_string().contains("no epilogue"), "{err}");
    let err = fused.run(&a, &b, &mut d).unwrap_err();
    assert!(err.to_string().contains("CUBLASLT_EPILOGUE_BIAS"), "{err}");
    let long = rt.zeros::<bf16>(&[n + 8]).unwrap();
    let err = fused.run_epilogue(&a, &b, &long, &mut d).unwrap_err();
    assert!(err.to_string().contains("bias is [72]"), "{err}");
    fused.run_epilogue(&a, &b, &bias, &mut d).unwrap();
    rt.synchronize().unwrap();
}

/// The whole bench on one small shape, with cuBLASLt standing in for ours: a launch that
/// computes the epilogue passes every check; one that computes another epilogue is caught.
#[test]
fn the_bench_passes_a_right_launch_and_catches_a_wrong_one() {
    use tirx::{RuntimeError, Tensor};
    use tirx_kernels::bench::epilogue::epilogue_report;
    use tirx_kernels::bench::report::Failure;
    let rt = rt();
    let lt = lt(&rt);
    let shape = (512, 256, 1024);
    let dir = std::env::temp_dir();
    for (act, stand_in, right) in [
        (Act::Gelu, LtEpilogue::GeluBias, true),
        (Act::None, LtEpilogue::ReluBias, false),
        // SiLU: checked through the host's SiLU of cuBLASLt's bias-only output.
        (Act::Silu, LtEpilogue::Bias, false),
    ] {
        let plan = lt.gemm_epilogue(shape, stand_in).unwrap();
        let ours = |_rt: &Runtime,
                    a: &Tensor<bf16>,
                    b: &Tensor<bf16>,
                    bias: &Tensor<bf16>,
                    d: &mut Tensor<bf16>|
         -> Result<(), RuntimeError> {
            plan.run_epilogue(a, b, bias, d)
                .map_err(|e| RuntimeError::NoKernelFits {
                    problem: e.to_string(),
                    table: String::new(),
                })
        };
        let json = dir.join(format!("tirx-epilogue-test-{}.json", act.epilogue_name()));
        let r = epilogue_report(
            &rt,
            act,
            "stand-in",
            &ours,
            Some(vec![shape]),
            Some(&json),
            None,
        )
        .unwrap();
        let row = &r.report.rows[0];
        let c = &row.candidates[0];
        assert!(row.cublas.is_some() && c.timing.is_some(), "{row:?}");
        assert!(row.cublas_err_vs_ref.unwrap() < GEMM_TOL, "{row:?}");
        assert_eq!(row.ok(), right, "{act:?}: {row:?}");
        assert_eq!(
            matches!(c.failure, Some(Failure::Wrong(_))),
            !right,
            "{row:?}"
        );
        let text = std::fs::read_to_string(&json).unwrap();
        let file = tirx_kernels::bench::json::EpilogueReportJson::parse(&text).unwrap();
        assert_eq!(file.epilogue, act.epilogue_name());
        assert!(json.with_extension("svg").exists());
    }
}
