//! GPU tests (feature `gpu`; run on the H200, recorded in `docs/perf/`): the shipped kernels
//! on random data against CPU references, odd shapes and tails included, outputs poisoned
//! before each run; and bad launches refused with typed errors before reaching the GPU.

use half::{bf16, f16};
use tirx::abi::ElemType;
use tirx::problem::BLayout;
use tirx::{Runtime, RuntimeError, Target};
use tirx_kernels::catalogue;
use tirx_kernels::copy::family::check_copy;
use tirx_kernels::gemm::check::{self, GEMM_TOL};
use tirx_kernels::gemm::host::{self, GemmLaunch};
use tirx_kernels::gemm::level_08_tma_epi::kernels::gemm_sm90_tma_epi;
use tirx_kernels::gemm::reference::BOperand;
use tirx_kernels::gemm::request::GemmTypes;
use tirx_kernels::reference::{HostElem, Rng, gemm_tn_f64, rel_frobenius};

/// Whether an artifact takes B given N×K (D = A·Bᵀ).
fn tn(a: &tirx::KernelArtifact) -> bool {
    use tirx::problem::{BLayout, Problem};
    matches!(a.problem, Some(Problem::Gemm(g)) if g.b == BLayout::Tn)
}

/// Whether an artifact stores D by TMA (its rows must then be 16-byte aligned).
fn d_by_tma(a: &tirx::KernelArtifact) -> bool {
    (a.signature)()
        .params
        .iter()
        .any(|p| matches!(p, tirx::abi::AbiParam::TensorMap { tensor, .. } if tensor == "d"))
}

/// Every shipped kernel with a plain TN GEMM config for the H200 (what the sweeps below run),
/// found in the catalogue: a kernel added to the GEMM family is swept with no edit here.
fn hopper_plain_tn_gemms() -> Vec<&'static tirx::Kernel> {
    use tirx::problem::{Epilogue, Problem};
    let plain_tn = |a: &tirx::KernelArtifact| {
        a.target == Target::Sm90a
            && tn(a)
            && matches!(a.problem, Some(Problem::Gemm(g)) if g.epilogue == Epilogue::Plain)
    };
    catalogue::all()
        .into_iter()
        .filter(|k| k.artifacts.iter().any(plain_tn))
        .collect()
}

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

#[test]
fn tma_copy_is_bit_exact_on_random_shapes_with_tails() {
    let rt = rt();
    let copies: Vec<&tirx::KernelArtifact> = catalogue::all()
        .into_iter()
        .flat_map(|k| k.artifacts)
        .filter(|a| a.problem == Some(tirx::problem::Problem::Copy))
        .filter(|a| a.target == rt.target().unwrap())
        .collect();
    assert!(!copies.is_empty());
    let mut rng = Rng::new(11);
    let mut shapes = vec![
        (1, 8),
        (64, 64),
        (65, 72),
        (127, 136),
        (1000, 1000),
        (4096, 4104),
    ];
    shapes.extend((0..14).map(|_| (rng.range(1, 700), 8 * rng.range(1, 90))));
    for (i, &(m, n)) in shapes.iter().enumerate() {
        for art in &copies {
            let r = check_copy(&rt, art, (m, n), 100 + i as u64).expect("runs");
            let config = art.config;
            assert!(r.ok, "{config} {m}x{n}: {} elements differ", r.error);
        }
    }
}

#[test]
fn hopper_gemms_match_the_f64_reference_on_random_shapes() {
    let rt = rt();
    let kernels = hopper_plain_tn_gemms();
    assert!(
        kernels.len() >= 9,
        "the Hopper GEMM ladder: {}",
        kernels.len()
    );
    for kernel in kernels {
        let name = kernel.name;
        let launch = GemmLaunch::of(kernel);
        let mut rng = Rng::new(12);
        let mut shapes = vec![
            (1, 1, 8),
            (128, 128, 64),
            (129, 257, 72),
            (1000, 1000, 1000),
            (64, 500, 8),
            (1024, 1024, 1024),
            (2000, 2100, 264),
        ];
        shapes
            .extend((0..46).map(|_| (rng.range(1, 600), rng.range(1, 600), 8 * rng.range(1, 80))));
        // Every BF16 → BF16 config (the other types: `every_type_combination_…` below).
        // B given N×K: the TN configs (the `nn` ones run in `nn_gemm_matches_…`).
        let configs = kernel.artifacts.iter().filter(|a| {
            a.target == Target::Sm90a && launch.types(a.config) == Some(GemmTypes::BF16) && tn(a)
        });
        for art in configs {
            let config = art.config;
            for (i, &(m, n, k)) in shapes.iter().enumerate() {
                // A TMA-stored D needs 16-byte rows (N a multiple of 8); the runtime refuses
                // others.
                let n = if d_by_tma(art) { n.div_ceil(8) * 8 } else { n };
                let r =
                    check::check_gemm(&rt, launch, config, m, n, k, 200 + i as u64).expect("runs");
                assert!(
                    r.ok,
                    "{name}/{config} {m}x{n}x{k}: relative error {:.3e}",
                    r.error
                );
            }
        }
    }
}

/// B given K×N (NN), every NN kernel and config: random shapes with tails in M, N and K, D
/// poisoned before each run, against the f64 NN reference. N is a multiple of 8 (B's and D's rows must be 16-byte
/// aligned for TMA); K is any multiple of 8 (A's rows), so K tails inside a 64-row B box occur.
#[test]
fn nn_gemm_matches_the_f64_reference_on_random_shapes() {
    let rt = rt();
    let mut rng = Rng::new(13);
    let mut shapes = vec![
        (1, 8, 8),
        (128, 128, 64),
        (129, 264, 72),
        (256, 256, 64),
        (1000, 1000, 1000),
        (64, 504, 8),
        (1024, 1024, 1024),
        (2000, 2104, 264),
        (300, 4096, 136),
    ];
    shapes.extend((0..40).map(|_| {
        (
            rng.range(1, 700),
            8 * rng.range(1, 90),
            8 * rng.range(1, 80),
        )
    }));
    // Every config of every NN kernel, in its own element types (check_gemm_nn reads them
    // from the config's signature).
    let mut runs = Vec::new();
    use tirx::problem::{BLayout as B, Problem};
    let nn = |a: &tirx::KernelArtifact| matches!(a.problem, Some(Problem::Gemm(g)) if g.b == B::Nn);
    for kernel in catalogue::all() {
        let l = GemmLaunch::of(kernel);
        for a in kernel
            .artifacts
            .iter()
            .filter(|a| a.target == Target::Sm90a && nn(a))
        {
            if a.problem.is_some_and(
                |p| matches!(p, Problem::Gemm(g) if g.epilogue == tirx::problem::Epilogue::Plain),
            ) {
                runs.push((kernel.name, l, a.config));
            }
        }
    }
    assert!(
        runs.len() >= 30,
        "every plain NN config of the shipped kernels: {}",
        runs.len()
    );
    for (name, launch, config) in runs {
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let r =
                check::check_gemm_nn(&rt, launch, config, m, n, k, 400 + i as u64).expect("runs");
            assert!(
                r.ok,
                "{name}/{config} NN {m}x{n}x{k}: relative error {:.3e}\n{}",
                r.error, r.blocks
            );
        }
    }
}

/// B K×N with N not a multiple of 8: B's rows are not 16-byte aligned, which TMA cannot
/// address; the launcher refuses it before the GPU sees it.
#[test]
fn an_nn_b_with_misaligned_rows_is_a_typed_error() {
    let rt = rt();
    let launch = GemmLaunch::of(catalogue::find("gemm_sm90_tma_epi").unwrap());
    let a = rt.zeros::<bf16>(&[128, 64]).unwrap();
    let b = rt.zeros::<bf16>(&[64, 100]).unwrap();
    let mut d = rt.zeros::<bf16>(&[128, 100]).unwrap();
    let err = launch.launch(&rt, "nn", &a, &b, &mut d).unwrap_err();
    assert!(
        matches!(err, RuntimeError::StrideMisaligned { .. }),
        "{err:?}"
    );
}

#[test]
fn a_k_that_breaks_tma_alignment_is_a_typed_error() {
    let rt = rt();
    let launch = GemmLaunch::of(catalogue::find("gemm_sm90").unwrap());
    let a = rt.zeros::<bf16>(&[64, 100]).unwrap();
    let b = rt.zeros::<bf16>(&[64, 100]).unwrap();
    let mut d = rt.zeros::<bf16>(&[64, 64]).unwrap();
    let err = launch.launch(&rt, "default", &a, &b, &mut d).unwrap_err();
    assert!(
        matches!(err, RuntimeError::StrideMisaligned { .. }),
        "{err:?}"
    );
}

#[test]
fn disagreeing_shapes_are_a_typed_error() {
    let rt = rt();
    let launch = GemmLaunch::of(catalogue::find("gemm_sm90").unwrap());
    let a = rt.zeros::<bf16>(&[64, 64]).unwrap();
    let b = rt.zeros::<bf16>(&[64, 128]).unwrap();
    let mut d = rt.zeros::<bf16>(&[64, 64]).unwrap();
    let err = launch.launch(&rt, "default", &a, &b, &mut d).unwrap_err();
    assert!(matches!(err, RuntimeError::ShapeMismatch { .. }), "{err:?}");
}

#[test]
fn a_blackwell_kernel_is_refused_on_hopper() {
    let rt = rt();
    let launch = GemmLaunch::of(catalogue::find("gemm_sm100").unwrap());
    let a = rt.zeros::<bf16>(&[128, 64]).unwrap();
    let b = rt.zeros::<bf16>(&[128, 64]).unwrap();
    let mut d = rt.zeros::<bf16>(&[128, 128]).unwrap();
    let err = launch.launch(&rt, "default", &a, &b, &mut d).unwrap_err();
    assert!(matches!(err, RuntimeError::NoSuchKernel { .. }), "{err:?}");
}

#[test]
fn the_host_side_choice_runs_a_correct_kernel_for_every_size_class() {
    let rt = rt();
    for (i, &(m, n, k)) in [
        (100, 200, 64),
        (1000, 1000, 1000),
        (1000, 1001, 1000),
        (2000, 1000, 1000),
        (2000, 1001, 1000),
        (2048, 2048, 256),
        (4096, 4096, 128),
        (4095, 4097, 64),
    ]
    .iter()
    .enumerate()
    {
        let mut rng = Rng::new(300 + i as u64);
        let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
        let a = rt.upload(&ha, &[m, k]).unwrap();
        let b = rt.upload(&hb, &[n, k]).unwrap();
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        let choice = host::gemm_auto(&rt, &a, &b, &mut d).expect("runs");
        let got = rt.download(&d).unwrap();
        // Rows sampled to keep the CPU reference short on the large shapes.
        let rows: Vec<usize> = (0..m).step_by((m / 64).max(1)).collect();
        let want = tirx_kernels::reference::gemm_tn_f64(
            &rows
                .iter()
                .flat_map(|&r| ha[r * k..(r + 1) * k].to_vec())
                .collect::<Vec<_>>(),
            &hb,
            rows.len(),
            n,
            k,
        );
        let got: Vec<bf16> = rows
            .iter()
            .flat_map(|&r| got[r * n..(r + 1) * n].to_vec())
            .collect();
        let err = tirx_kernels::reference::rel_frobenius(&got, &want);
        assert!(
            err < GEMM_TOL,
            "{m}x{n}x{k} via {}: {err:.3e}",
            choice.label()
        );
    }
}

/// D's rows must be 16-byte aligned for a TMA-stored D: N rounded up to 8 (16-bit) or 4 (f32).
fn tma_n(n: usize, output: ElemType) -> usize {
    let per_16_bytes = 16 / output.bytes() as usize;
    n.div_ceil(per_16_bytes) * per_16_bytes
}

#[test]
fn every_type_combination_matches_the_f64_reference_on_random_shapes() {
    let rt = rt();
    let mut rng = Rng::new(13);
    let mut shapes = vec![
        (1, 1, 8),
        (128, 128, 64),
        (129, 257, 72),
        (64, 500, 8),
        (1000, 1000, 1000),
        (2000, 2100, 264),
    ];
    shapes.extend((0..18).map(|_| (rng.range(1, 500), rng.range(1, 500), 8 * rng.range(1, 60))));
    // Every plain TN config in other types than BF16 -> BF16 (those are covered above), of
    // every Hopper GEMM in the catalogue: the production kernel (TMA-store epilogue), the
    // cluster kernel's f32-output configs, the register-epilogue fallback, and any other.
    let mut covered = Vec::new();
    for kernel in hopper_plain_tn_gemms() {
        let name = kernel.name;
        let launch = GemmLaunch::of(kernel);
        let configs = kernel.artifacts.iter().filter(|a| {
            a.target == Target::Sm90a
                && tn(a)
                && matches!(a.problem, Some(tirx::problem::Problem::Gemm(g))
                    if g.epilogue == tirx::problem::Epilogue::Plain)
        });
        for art in configs {
            let config = art.config;
            let types = launch.types(config).expect("a GEMM signature");
            if types == GemmTypes::BF16 {
                continue;
            }
            covered.push(types);
            for (i, &(m, n, k)) in shapes.iter().enumerate() {
                let n = if d_by_tma(art) {
                    tma_n(n, types.output)
                } else {
                    n
                };
                let r =
                    check::check_gemm(&rt, launch, config, m, n, k, 400 + i as u64).expect("runs");
                assert!(
                    r.ok,
                    "{name}/{config} ({types}) {m}x{n}x{k}: relative error {:.3e} (tolerance {:.0e})",
                    r.error,
                    types.tolerance()
                );
            }
        }
    }
    for types in GemmTypes::ALL.into_iter().filter(|t| *t != GemmTypes::BF16) {
        assert!(covered.contains(&types), "no config runs {types}");
    }
}

/// `gemm_auto` (TN) or `gemm_auto_nn` (NN) in types `A` → `D` on `(m, n, k)`, against the
/// f64 reference on sampled rows.
fn auto_error<A: HostElem, D: HostElem>(
    rt: &Runtime,
    layout: BLayout,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> (f64, String) {
    let mut rng = Rng::new(seed);
    let (ha, hb): (Vec<A>, Vec<A>) = (rng.values(m * k), rng.values(n * k));
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &layout.b_shape(m, n, k)).unwrap();
    let mut d = rt.zeros::<D>(&[m, n]).unwrap();
    rt.poison(&mut d).unwrap();
    let choice = match layout {
        BLayout::Tn => host::gemm_auto(rt, &a, &b, &mut d),
        BLayout::Nn => host::gemm_auto_nn(rt, &a, &b, &mut d),
    }
    .expect("runs");
    let got = rt.download(&d).unwrap();
    let rows: Vec<usize> = (0..m).step_by((m / 64).max(1)).collect();
    let sampled_a: Vec<A> = rows
        .iter()
        .flat_map(|&r| ha[r * k..(r + 1) * k].to_vec())
        .collect();
    let want = layout.reference(&sampled_a, &hb, rows.len(), n, k);
    let got: Vec<D> = rows
        .iter()
        .flat_map(|&r| got[r * n..(r + 1) * n].to_vec())
        .collect();
    (rel_frobenius(&got, &want), choice.label())
}

#[test]
fn the_host_side_choice_is_correct_for_every_type_combination() {
    let rt = rt();
    // Every size class of the cost model: 128×64 alone and in pairs, 128×128, 128×256,
    // and N not TMA-aligned.
    let shapes = [
        (100, 200, 64),
        (1000, 1000, 1000),
        (2000, 1000, 1000),
        (1000, 1002, 256),
        (4096, 4096, 128),
        (2048, 4100, 64),
    ];
    // NN takes N a multiple of 8 only (B's rows), so the unaligned-N shapes are TN's alone.
    let runs = shapes.iter().map(|&s| (BLayout::Tn, s)).chain(
        shapes
            .iter()
            .filter(|s| s.1 % 8 == 0)
            .map(|&s| (BLayout::Nn, s)),
    );
    let runs: Vec<_> = runs.collect();
    for types in GemmTypes::ALL {
        for (i, &(layout, shape)) in runs.iter().enumerate() {
            let seed = 500 + i as u64;
            use ElemType::{Bf16, F16, F32};
            let (err, choice) = match (types.input, types.output) {
                (Bf16, Bf16) => auto_error::<bf16, bf16>(&rt, layout, shape, seed),
                (Bf16, F16) => auto_error::<bf16, f16>(&rt, layout, shape, seed),
                (Bf16, F32) => auto_error::<bf16, f32>(&rt, layout, shape, seed),
                (F16, Bf16) => auto_error::<f16, bf16>(&rt, layout, shape, seed),
                (F16, F16) => auto_error::<f16, f16>(&rt, layout, shape, seed),
                (F16, F32) => auto_error::<f16, f32>(&rt, layout, shape, seed),
                _ => unreachable!("not shipped"),
            };
            let (m, n, k) = shape;
            assert!(
                err < types.tolerance(),
                "{types} {layout:?} {m}x{n}x{k} via {choice}: {err:.3e}"
            );
        }
    }
}

#[test]
fn the_typed_launcher_runs_its_configs_types_and_refuses_others() {
    let rt = rt();
    let (m, n, k) = (256, 512, 128);
    let mut rng = Rng::new(600);
    let (ha, hb): (Vec<f16>, Vec<f16>) = (rng.values(m * k), rng.values(n * k));
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &[n, k]).unwrap();
    let mut d = rt.zeros::<f32>(&[m, n]).unwrap();
    rt.poison(&mut d).unwrap();
    gemm_sm90_tma_epi::launch(&rt, "f16_f32", &a, &b, &mut d).expect("runs");
    let got = rt.download(&d).unwrap();
    let err = rel_frobenius(&got, &gemm_tn_f64(&ha, &hb, m, n, k));
    assert!(err < 1e-4, "{err:.3e}");
    // The same tensors to the f16 -> f16 config: refused at `d` before launch.
    let err = gemm_sm90_tma_epi::launch(&rt, "f16", &a, &b, &mut d).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::ElemMismatch { tensor, .. } if tensor == "d"),
        "{err:?}"
    );
    // f32 inputs: no GEMM takes them; a typed error from the host-side choice.
    let a32 = rt.zeros::<f32>(&[m, k]).unwrap();
    let b32 = rt.zeros::<f32>(&[n, k]).unwrap();
    let err = host::gemm_auto(&rt, &a32, &b32, &mut d).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::NoKernelFits { problem, .. } if problem.contains("f32 -> f32")),
        "{err:?}"
    );
}

/// D = α·A·op(B) + β·C: every config of every scaled kernel (`gemm_sm90_tma_epi_abc`,
/// `gemm_sm90_pair_n_abc` with B N×K, their `_nn` twins with B K×N) on random shapes with tails, for α, β with β ≠ 0 (C
/// random) and β = 0 (C all NaN, which must not be read), D poisoned, against the f64
/// reference; and the host entries `gemm_scaled`/`gemm_scaled_nn` (which take the plain
/// kernels for α = 1, β = 0) on every tile class.
#[test]
fn scaled_gemm_matches_the_f64_reference() {
    let rt = rt();
    let mut rng = Rng::new(21);
    let mut shapes = vec![
        (1, 8, 8),
        (129, 264, 72),
        (300, 520, 136),
        (1000, 1000, 1000),
    ];
    shapes.extend((0..10).map(|_| {
        (
            rng.range(1, 600),
            8 * rng.range(1, 70),
            8 * rng.range(1, 60),
        )
    }));
    use tirx::problem::{Epilogue, Problem};
    // Every config of every scaled kernel compiled for this GPU, each in its own layout (the
    // sm_100a scaled kernels are the emulator's: tests/sim_gemm_sm100.rs).
    let target = rt.target().unwrap();
    let scaled = catalogue::all()
        .into_iter()
        .flat_map(|k| {
            k.artifacts.iter().filter_map(move |a| match a.problem {
                Some(Problem::Gemm(g)) if g.epilogue == Epilogue::Scaled && a.target == target => {
                    Some((k.name, a.config, GemmLaunch::of(k), g.b))
                }
                _ => None,
            })
        })
        .collect::<Vec<_>>();
    assert!(scaled.len() >= 40, "the scaled configs of both layouts");
    for (name, config, launch, layout) in scaled {
        {
            for (i, &shape) in shapes.iter().enumerate() {
                for (alpha, beta) in [(1.5f32, -0.75f32), (0.5, 0.0), (-2.0, 1.0)] {
                    let seed = 600 + i as u64;
                    let r = check::check_gemm_scaled(
                        &rt, launch, layout, config, shape, alpha, beta, seed,
                    )
                    .expect("runs");
                    let (m, n, k) = shape;
                    assert!(
                        r.ok,
                        "{name}/{config} {m}x{n}x{k} alpha {alpha} beta {beta}: {:.3e}\n{}",
                        r.error, r.blocks
                    );
                }
            }
        }
    }
    // Every size class of the cost model: 128×64, 128×128, 128×256.
    let entries = [
        (100, 200, 64),
        (1000, 1000, 1000),
        (2000, 1000, 1000),
        (2048, 2048, 128),
    ];
    for layout in [BLayout::Tn, BLayout::Nn] {
        for (i, &(m, n, k)) in entries.iter().enumerate() {
            for (alpha, beta) in [(1.0f32, 0.0f32), (2.0, 0.5)] {
                let mut rng = Rng::new(700 + i as u64);
                let (ha, hb, hc) = (rng.bf16s(m * k), rng.bf16s(n * k), rng.bf16s(m * n));
                let a = rt.upload(&ha, &[m, k]).unwrap();
                let b = rt.upload(&hb, &layout.b_shape(m, n, k)).unwrap();
                let c = rt.upload(&hc, &[m, n]).unwrap();
                let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
                rt.poison(&mut d).unwrap();
                match layout {
                    BLayout::Tn => host::gemm_scaled(&rt, alpha, &a, &b, beta, &c, &mut d),
                    BLayout::Nn => host::gemm_scaled_nn(&rt, alpha, &a, &b, beta, &c, &mut d),
                }
                .expect("runs");
                let got = rt.download(&d).unwrap();
                let want: Vec<f64> = layout
                    .reference(&ha, &hb, m, n, k)
                    .iter()
                    .zip(&hc)
                    .map(|(ab, cv)| f64::from(alpha) * ab + f64::from(beta) * cv.to_f64())
                    .collect();
                let err = rel_frobenius(&got, &want);
                assert!(
                    err < GEMM_TOL,
                    "{layout:?} {m}x{n}x{k} {alpha} {beta}: {err:.3e}"
                );
            }
        }
    }
}
