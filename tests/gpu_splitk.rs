//! GPU tests of split-K (feature `gpu`, issue #32): every config of `gemm_sm90_splitk` run
//! through its plan of two launches (the partial products into an f32 workspace, the
//! fixed-order reduce into D) at the decode shapes of the issue and odd ones, random data, D
//! poisoned first, against the f64 reference within the bounds the other GPU GEMM tests use
//! (`GemmTypes::tolerance`); the scaled epilogue with C read (β ≠ 0) and not read (β = 0, C all
//! NaN); slice counts that do not divide the K tiles through a caller's workspace, bit-identical
//! on a second run (deterministic); the host's choice at decode shapes; and a workspace with an
//! empty slice refused with a typed error before anything runs; the fused bias + activation
//! after the reduce, with and without a residual; the NN plan (`nn` configs, B given K×N) at
//! the same shapes, its scaled epilogue, and the host's choice of it at decode shapes.

use half::bf16;
use tirx::abi::ElemType;
use tirx::problem::{Act, BLayout};
use tirx::{Runtime, RuntimeError, Target};
use tirx_kernels::catalogue;
use tirx_kernels::gemm::check;
use tirx_kernels::gemm::host::{self, GemmLaunch};
use tirx_kernels::gemm::reference::apply_epilogue;
use tirx_kernels::gemm::request::GemmTypes;
use tirx_kernels::gemm::split;
use tirx_kernels::reference::{Rng, gemm_nn_f64, gemm_tn_f64, rel_frobenius};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

fn splitk() -> &'static tirx::Kernel {
    catalogue::find("gemm_sm90_splitk").expect("shipped")
}

/// The decode shapes of issue #32 and odd ones (tails in M, N and K).
const SHAPES: [(usize, usize, usize); 6] = [
    (1, 4096, 4096),
    (16, 4096, 4096),
    (64, 64, 4104),
    (127, 8192, 8192),
    (7, 264, 4104),
    (65, 136, 328),
];

#[test]
fn every_split_k_config_matches_the_f64_reference_at_decode_shapes() {
    let rt = rt();
    let launch = GemmLaunch::of(splitk());
    let mut failures = Vec::new();
    for a in splitk()
        .artifacts
        .iter()
        .filter(|a| a.target == Target::Sm90a)
    {
        // The `nn` configs take B given K×N, checked against the NN reference (N a multiple
        // of 8: every NN kernel reads B by TMA, its rows 16-byte aligned).
        let nn = tirx_kernels::simulate::b_is_k_by_n(a);
        for (i, &(m, n, k)) in SHAPES.iter().enumerate() {
            let checked = if nn {
                check::check_gemm_nn(
                    &rt,
                    launch,
                    a.config,
                    m,
                    n.next_multiple_of(8),
                    k,
                    40 + i as u64,
                )
            } else {
                check::check_gemm(&rt, launch, a.config, m, n, k, 40 + i as u64)
            };
            match checked {
                Ok(r) if r.ok => {}
                Ok(r) => failures.push(format!(
                    "{} {m}x{n}x{k}: {:.3e}\n{}",
                    a.config, r.error, r.blocks
                )),
                Err(e) => failures.push(format!("{} {m}x{n}x{k}: {e}", a.config)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `configs` of `kernel` with the scaled epilogue, B in `layout`, at three shapes (decode,
/// odd M/N/K tails, one row): α with C read (β ≠ 0) and not read (β = 0, C all NaN). Shared
/// by the split-K plans here and the transposed one (`gpu_gemv`).
pub(crate) fn check_scaled_configs(
    kernel: &'static tirx::Kernel,
    layout: BLayout,
    configs: &[&str],
    shapes: [(usize, usize, usize); 3],
    seed: u64,
) {
    let rt = rt();
    let launch = GemmLaunch::of(kernel);
    for &config in configs {
        for (i, &shape) in shapes.iter().enumerate() {
            for (alpha, beta) in [(1.5f32, -0.75f32), (0.5, 0.0)] {
                let r = check::check_gemm_scaled(
                    &rt,
                    launch,
                    layout,
                    config,
                    shape,
                    alpha,
                    beta,
                    seed + i as u64,
                )
                .expect("runs");
                assert!(
                    r.ok,
                    "{config} {layout:?} {shape:?} alpha {alpha} beta {beta}: {:.3e}\n{}",
                    r.error, r.blocks
                );
            }
        }
    }
}

#[test]
fn split_k_scaled_reads_c_only_where_beta_is_not_zero() {
    let shapes = [(16, 4096, 4096), (33, 264, 1000), (1, 8, 136)];
    check_scaled_configs(splitk(), BLayout::Tn, &["default", "n64"], shapes, 60);
}

/// Slices that do not divide the K tiles (65 tiles in 7 and in 64 slices), in the caller's
/// workspace; the same inputs give the same bits twice (the reduce sums in a fixed order).
#[test]
fn caller_workspaces_with_uneven_slices_are_deterministic() {
    let rt = rt();
    let art = &splitk().artifacts[0];
    let (m, n, k) = (16, 4096, 4104);
    let mut rng = Rng::new(77);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &[n, k]).unwrap();
    let want = gemm_tn_f64(&ha, &hb, m, n, k);
    for splits in [7, 64, 2] {
        let mut w = rt.zeros::<f32>(&[splits, m, n]).unwrap();
        rt.poison(&mut w).unwrap();
        let mut runs = Vec::new();
        for _ in 0..2 {
            let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
            rt.poison(&mut d).unwrap();
            let roles = [("a", a.view()), ("b", b.view()), ("d", d.view())];
            split::launch_split_into(&rt, art, &roles, 1.0, 0.0, &mut w).expect("runs");
            rt.synchronize().unwrap();
            runs.push(rt.download(&d).unwrap());
        }
        let err = rel_frobenius(&runs[0], &want);
        assert!(err < GemmTypes::BF16.tolerance(), "S = {splits}: {err:.3e}");
        let bits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&runs[0]),
            bits(&runs[1]),
            "S = {splits}: not deterministic"
        );
    }
}

/// A caller that wraps one stream anew for every call (the Python binding wrapped torch's
/// current stream per call) keeps one workspace for it, not one per call (issue #32: each
/// call allocated, zeroed and kept a fresh workspace), and the plans stay right.
#[test]
fn a_stream_wrapped_anew_for_each_call_keeps_one_workspace() {
    let rt = rt();
    let art = &splitk().artifacts[0];
    let (m, n, k) = (16, 4096, 4096);
    let mut rng = Rng::new(78);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &[n, k]).unwrap();
    let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
    split::release_workspaces();
    for _ in 0..3 {
        // SAFETY: the runtime's own stream, alive for the whole test.
        let on = unsafe { rt.on_borrowed_stream(rt.stream().cu_stream()) };
        rt.poison(&mut d).unwrap();
        let roles = [("a", a.view()), ("b", b.view()), ("d", d.view())];
        split::launch_split(&on, art, &roles, 1.0, 0.0).expect("runs");
        on.synchronize().unwrap();
    }
    assert_eq!(split::kept_workspaces(), 1);
    let err = rel_frobenius(&rt.download(&d).unwrap(), &gemm_tn_f64(&ha, &hb, m, n, k));
    assert!(err < GemmTypes::BF16.tolerance(), "{err:.3e}");
    split::release_workspaces();
}

/// The host's choice at `shapes` with B in `layout` is a split-K plan, and it is right, into
/// bf16 and into f32.
fn check_host_splits(layout: BLayout, shapes: [(usize, usize, usize); 3], seed: u64) {
    let rt = rt();
    let nn = layout == BLayout::Nn;
    for (i, &(m, n, k)) in shapes.iter().enumerate() {
        let mut rng = Rng::new(seed + i as u64);
        let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
        let a = rt.upload(&ha, &[m, k]).unwrap();
        let b = rt.upload(&hb, &if nn { [k, n] } else { [n, k] }).unwrap();
        let want = if nn {
            gemm_nn_f64(&ha, &hb, m, n, k)
        } else {
            gemm_tn_f64(&ha, &hb, m, n, k)
        };
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        let choice = if nn {
            host::gemm_auto_nn(&rt, &a, &b, &mut d)
        } else {
            host::gemm_auto(&rt, &a, &b, &mut d)
        }
        .expect("runs");
        assert!(split::is_partial(choice.artifact), "{}", choice.label());
        let err = rel_frobenius(&rt.download(&d).unwrap(), &want);
        assert!(
            err < GemmTypes::BF16.tolerance(),
            "{layout:?} {m}x{n}x{k}: {err:.3e}"
        );
        let mut d32 = rt.zeros::<f32>(&[m, n]).unwrap();
        rt.poison(&mut d32).unwrap();
        let choice = if nn {
            host::gemm_auto_nn(&rt, &a, &b, &mut d32)
        } else {
            host::gemm_auto(&rt, &a, &b, &mut d32)
        }
        .expect("runs");
        let types = GemmTypes {
            input: ElemType::Bf16,
            output: ElemType::F32,
        };
        let err = rel_frobenius(&rt.download(&d32).unwrap(), &want);
        assert!(
            err < types.tolerance(),
            "{layout:?} {m}x{n}x{k} f32 by {}: {err:.3e}",
            choice.label()
        );
    }
}

/// The host's choice at decode shapes is a split-K plan, and it is right: bf16 → bf16 and
/// bf16 → f32.
#[test]
fn the_host_splits_k_at_decode_shapes() {
    check_host_splits(
        BLayout::Tn,
        [(1, 4096, 4096), (16, 4096, 4096), (64, 64, 4104)],
        90,
    );
}

/// The fused bias + activation at decode shapes: the host's choice splits K and applies the
/// epilogue after the reduce, for every activation.
#[test]
fn the_fused_epilogue_splits_at_decode_shapes() {
    let rt = rt();
    for (i, &(m, n, k)) in [(16, 4096, 4096), (3, 1032, 2056)].iter().enumerate() {
        let mut rng = Rng::new(110 + i as u64);
        let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
        let hbias: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
        let a = rt.upload(&ha, &[m, k]).unwrap();
        let b = rt.upload(&hb, &[n, k]).unwrap();
        let bias = rt.upload(&hbias, &[n]).unwrap();
        for act in Act::ALL {
            let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
            rt.poison(&mut d).unwrap();
            let choice = host::gemm_bias_act(&rt, act, &a, &b, &bias, &mut d).expect("runs");
            assert!(split::is_partial(choice.artifact), "{}", choice.label());
            let got = rt.download(&d).unwrap();
            let mut want = gemm_tn_f64(&ha, &hb, m, n, k);
            apply_epilogue(&mut want, n, &hbias, act);
            let err = rel_frobenius(&got, &want);
            assert!(
                err < GemmTypes::BF16.tolerance(),
                "{m}x{n}x{k} {act:?}: {err:.3e}"
            );
        }
    }
}

/// The fused epilogue with a residual at a decode shape: the host's choice splits K, and the
/// reduce kernel adds the bias, the activation and then R (`splitk_reduce_bias_res`).
#[test]
fn the_residual_epilogue_splits_at_decode_shapes() {
    let rt = rt();
    let (m, n, k) = (16, 4096, 4096);
    let mut rng = Rng::new(120);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let hbias: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
    let hres = rng.bf16s(m * n);
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &[n, k]).unwrap();
    let bias = rt.upload(&hbias, &[n]).unwrap();
    let res = rt.upload(&hres, &[m, n]).unwrap();
    for act in [Act::Gelu, Act::Silu] {
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        let choice =
            host::gemm_residual(&rt, BLayout::Tn, &a, &b, Some((act, &bias)), &res, &mut d)
                .expect("runs");
        assert!(split::is_partial(choice.artifact), "{}", choice.label());
        let got = rt.download(&d).unwrap();
        let mut want = gemm_tn_f64(&ha, &hb, m, n, k);
        apply_epilogue(&mut want, n, &hbias, act);
        tirx_kernels::gemm::reference::add_residual(&mut want, &hres);
        let err = rel_frobenius(&got, &want);
        assert!(err < GemmTypes::BF16.tolerance(), "{act:?}: {err:.3e}");
    }
}

/// A workspace with more slices than K tiles would leave a slice unwritten: a typed error, and
/// D is not touched.
#[test]
fn a_workspace_with_an_empty_slice_is_refused_before_launch() {
    let rt = rt();
    let art = &splitk().artifacts[0];
    let (m, n, k) = (7, 264, 200);
    let a = rt.zeros::<bf16>(&[m, k]).unwrap();
    let b = rt.zeros::<bf16>(&[n, k]).unwrap();
    let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
    rt.poison(&mut d).unwrap();
    let mut w = rt.zeros::<f32>(&[5, m, n]).unwrap();
    let roles = [("a", a.view()), ("b", b.view()), ("d", d.view())];
    let err = split::launch_split_into(&rt, art, &roles, 1.0, 0.0, &mut w).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::NoKernelFits { table, .. } if table.contains("2 ≤ S ≤ 4")),
        "{err}"
    );
    let d = rt.download(&d).unwrap();
    assert!(d.iter().all(|x| x.is_nan()), "D was written");
}

/// CPU microseconds per call of `call`, the median of `rounds` batches of `per` calls queued
/// without waiting (the stream synchronised between batches, so the launch queue never
/// fills), after a warm-up batch.
fn host_us(rt: &Runtime, rounds: usize, per: usize, mut call: impl FnMut()) -> f64 {
    let mut batch = |t: &mut Vec<f64>| {
        let started = std::time::Instant::now();
        (0..per).for_each(|_| call());
        t.push(started.elapsed().as_secs_f64() * 1e6 / per as f64);
        rt.synchronize().unwrap();
    };
    batch(&mut Vec::new());
    let mut t = Vec::new();
    (0..rounds).for_each(|_| batch(&mut t));
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// A split-K plan's host path costs about its two launches: a decode step calls the same
/// GEMM on the same buffers every token, and on an idle GPU host time in front of the
/// kernels is the step's time (stop 46 measured split-K at 1×4096×4096 at 0.53× cuBLASLt
/// that way, with the kernels alone at 0.95×; the plan then took 4.5–5.2 plain launches'
/// host time, rebuilding its artifacts' signatures about eight times a call). Prints the
/// host path's parts — one plain launch, the split-K plan forced, the host's choice (the
/// dispatcher's remembered choice in front of the plan) — beside the GPU time per plan run
/// over back-to-back runs (which equals the host's where the host is slower).
#[test]
fn a_split_k_plan_queues_in_about_the_host_time_of_its_two_launches() {
    let rt = rt();
    let (m, n, k) = (1, 4096, 4096);
    let mut rng = Rng::new(7);
    let a = rt.upload(&rng.bf16s(m * k), &[m, k]).unwrap();
    let b = rt.upload(&rng.bf16s(n * k), &[n, k]).unwrap();
    let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
    let choice = host::gemm_auto(&rt, &a, &b, &mut d).expect("runs");
    assert!(split::is_partial(choice.artifact), "{}", choice.label());
    let config = choice.artifact.config;
    let plain = GemmLaunch::of(catalogue::find("gemm_sm90_ws").expect("shipped"));
    let plan = GemmLaunch::of(catalogue::find(choice.artifact.kernel).expect("shipped"));
    let us_plain = host_us(&rt, 9, 100, || {
        plain.launch(&rt, "n64", &a, &b, &mut d).unwrap()
    });
    println!("host µs per call of one plain launch: {us_plain:.1}");
    // The same launch prepared and dropped, not queued: everything before `cuLaunchKernelEx`
    // (the rest of a plain launch is the driver's; issue #32 asks which side the time is on).
    let art = tirx::select(plain.artifacts, "n64", rt.target().unwrap()).unwrap();
    let us_prepare = host_us(&rt, 9, 100, || {
        let roles = [("a", a.view()), ("b", b.view()), ("d", d.view())];
        let scalars = [("alpha", 1.0), ("beta", 0.0)];
        let launch = tirx_kernels::family::prepare_roles(&rt, art, &roles, &scalars).unwrap();
        std::hint::black_box(launch.params().bytes().len());
    });
    println!(
        "of which before the driver (prepared, not queued): {us_prepare:.2}; in \
         cuLaunchKernelEx and the context check: {:.2}",
        us_plain - us_prepare
    );
    let us_plan = host_us(&rt, 9, 100, || {
        plan.launch(&rt, config, &a, &b, &mut d).unwrap()
    });
    let us_host = host_us(&rt, 9, 100, || {
        host::gemm_auto(&rt, &a, &b, &mut d).unwrap();
    });
    let gpu_us = 1e3
        * f64::from(
            rt.bench_ms(10, 200, || plan.launch(&rt, config, &a, &b, &mut d))
                .unwrap(),
        );
    println!(
        "host µs per call at {m}x{n}x{k}: one plain launch {us_plain:.1}, the split-K plan \
         ({config}) {us_plan:.1}, the host's choice {us_host:.1}; GPU µs per plan run {gpu_us:.1}"
    );
    // Measured on an H100 (2026-12-06): 2.4–2.7 plain launches after `KernelArtifact::sig`,
    // 4.5–5.2 before.
    assert!(
        us_plan < 3.5 * us_plain,
        "the split-K plan takes {us_plan:.1} µs of host time, {:.1} plain launches of {us_plain:.1} µs",
        us_plan / us_plain
    );
}

/// The NN plan's scaled epilogue with C read (β ≠ 0) and not read (β = 0, C all NaN).
#[test]
fn split_k_nn_scaled_reads_c_only_where_beta_is_not_zero() {
    let shapes = [(16, 4096, 4096), (33, 264, 1000), (1, 8, 136)];
    check_scaled_configs(splitk(), BLayout::Nn, &["nn", "nn_n64"], shapes, 160);
}

/// The host's choice for D = A·B (B given K×N) at decode shapes is the NN split-K plan, and it
/// is right.
#[test]
fn the_host_splits_k_for_nn_at_decode_shapes() {
    check_host_splits(
        BLayout::Nn,
        [(1, 4096, 4096), (16, 4096, 4096), (64, 8192, 8192)],
        190,
    );
}
