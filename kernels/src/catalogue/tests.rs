//! The catalogue's kernels as the host sees them.

use super::*;
use crate::gemm::host::GemmLaunch;
use tirx::problem;

/// Every shipped artifact declares what it solves (one kernel may solve a problem in several
/// layouts: its `nn` configs take B given K×N), and every GEMM config takes a shipped type
/// combination (the host entries and the bench build inputs from these).
#[test]
fn every_kernel_declares_its_problem_and_types() {
    for k in all() {
        let kind = |p: problem::Problem| std::mem::discriminant(&p);
        let first = k
            .problem()
            .unwrap_or_else(|| panic!("{} declares no problem", k.name));
        for a in k.artifacts {
            let problem = a
                .problem
                .unwrap_or_else(|| panic!("{}/{} declares no problem", k.name, a.config));
            assert_eq!(
                kind(problem),
                kind(first),
                "{}/{}: one kind per kernel",
                k.name,
                a.config
            );
            if let problem::Problem::Gemm(g) = problem {
                let t = GemmLaunch::of(k).types(a.config).expect("a, d tensors");
                // The FP8 GEMMs (8-bit A and B, scales in the epilogue: their own problems in
                // the GEMM family, `gemm::check::check_fp8`, `bench::fp8`); every other GEMM
                // takes a shipped 16-bit combination.
                let fp8 = t.input.is_fp8()
                    && matches!(
                        g.epilogue,
                        problem::Epilogue::ScaleTensor | problem::Epilogue::ScaleRows
                    );
                assert!(t.is_shipped() || fp8, "{}/{}: {t}", k.name, a.config);
                assert!(
                    a.int("BM").is_some() && a.int("BN").is_some(),
                    "{}/{}",
                    k.name,
                    a.config
                );
                // The `nn` configs, and only they, take B given K×N.
                let nn = a.config == "nn" || a.config.starts_with("nn_");
                assert_eq!(g.b == problem::BLayout::Nn, nn, "{}/{}", k.name, a.config);
            }
        }
    }
}

/// Names are unique: `tirx run NAME` and the tune cache find kernels by them.
#[test]
fn kernel_names_are_unique() {
    let names: Vec<&str> = all().iter().map(|k| k.name).collect();
    for n in &names {
        assert_eq!(names.iter().filter(|m| *m == n).count(), 1, "{n}");
    }
    assert!(find("gemm_sm90_tma_epi").is_some());
    assert!(find("no_such_kernel").is_none());
}
