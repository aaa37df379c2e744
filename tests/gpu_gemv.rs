//! GPU tests of the transposed decode split-K plan (feature `gpu`, issue #32):
//! `gemm_sm90_splitk_t` (B's rows on the MMA's 64-row side, A's few rows on its 16-column
//! side, each slice's product stored as [N, M]) and its transposing reduce
//! `splitk_reduce_t`. Every config at the decode shapes of the issue and odd ones (M = 1, 3,
//! 16 and past one 16-row block; N and K odd or not multiples of the tiles and the vectors),
//! random data, D poisoned first, against the f64 reference within the bounds of the other
//! GPU GEMM tests (`GemmTypes::tolerance`); α applied with C not read (β = 0, C all NaN) and
//! β·C with C read; the fused bias and every activation, and a residual after them, through
//! the host's entry points (which take this plan); slice counts that do not
//! divide the K tiles through a caller's [S, N, M] workspace, bit-identical on a second run
//! (deterministic); and the host's choice at M ≤ 16 decode shapes is this plan, and right.
//! Each test runs both layouts: TN (B given N×K) and NN (B given K×N, the `nn` configs,
//! whose MMA reads B as its A operand MN-major; N a multiple of 8, as for every NN kernel).

use half::bf16;
use tirx::problem::{Act, BLayout, Problem};
use tirx::{KernelArtifact, Runtime, RuntimeError, Target};
use tirx_kernels::catalogue;
use tirx_kernels::gemm::check;
use tirx_kernels::gemm::host::{self, GemmLaunch};
use tirx_kernels::gemm::reference::{add_residual, apply_epilogue};
use tirx_kernels::gemm::request::GemmTypes;
use tirx_kernels::gemm::split;
use tirx_kernels::reference::{Rng, gemm_nn_f64, gemm_tn_f64, rel_frobenius};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

fn transposed() -> &'static tirx::Kernel {
    catalogue::find("gemm_sm90_splitk_t").expect("shipped")
}

/// The layout of B an artifact takes.
fn layout_of(art: &KernelArtifact) -> BLayout {
    match art.problem {
        Some(Problem::Gemm(g)) => g.b,
        _ => panic!("{}/{} solves no GEMM", art.kernel, art.config),
    }
}

/// B (`n × k` of `hb`'s values) uploaded in `layout`: N×K for TN, K×N for NN (the same
/// values: `hb` is read as B given K×N for NN), and the f64 reference of A·op(B).
fn b_and_reference(
    rt: &Runtime,
    layout: BLayout,
    (ha, hb): (&[bf16], &[bf16]),
    (m, n, k): (usize, usize, usize),
) -> (tirx::Tensor<bf16>, Vec<f64>) {
    match layout {
        BLayout::Tn => (
            rt.upload(hb, &[n, k]).unwrap(),
            gemm_tn_f64(ha, hb, m, n, k),
        ),
        BLayout::Nn => (
            rt.upload(hb, &[k, n]).unwrap(),
            gemm_nn_f64(ha, hb, m, n, k),
        ),
    }
}

/// Decode shapes of issue #32 and odd ones (the NN configs skip those whose N is not a
/// multiple of 8).
const SHAPES: [(usize, usize, usize); 8] = [
    (1, 4096, 4096),
    (16, 4096, 4096),
    (3, 4097, 4104),
    (1, 8192, 8192),
    (64, 64, 4104),
    (17, 200, 1000),
    (1, 8, 136),
    (5, 131, 328),
];

#[test]
fn every_transposed_config_matches_the_f64_reference() {
    let rt = rt();
    let launch = GemmLaunch::of(transposed());
    let mut failures = Vec::new();
    for a in transposed()
        .artifacts
        .iter()
        .filter(|a| a.target == Target::Sm90a)
    {
        let layout = layout_of(a);
        for (i, &(m, n, k)) in SHAPES.iter().enumerate() {
            let check = match layout {
                BLayout::Tn => check::check_gemm,
                BLayout::Nn if n % 8 == 0 => check::check_gemm_nn,
                BLayout::Nn => continue,
            };
            match check(&rt, launch, a.config, m, n, k, 140 + i as u64) {
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

/// The scaled epilogue after the transposed partial: α with C not read (β = 0, C all NaN),
/// and α, β·C with C read (`splitk_reduce_t_scaled`), into bf16 and f32; TN and NN.
#[test]
fn transposed_plan_scaled_reads_c_only_where_beta_is_not_zero() {
    let shapes = [(16, 4096, 4096), (3, 264, 1000), (1, 8, 136)];
    for (layout, configs) in [
        (BLayout::Tn, ["m16", "m16_s10"]),
        (BLayout::Nn, ["nn_m16", "nn_m16_s10"]),
    ] {
        super::gpu_splitk::check_scaled_configs(transposed(), layout, &configs, shapes, 160);
    }
}

/// The fused bias + activation and the residual at decode shapes: the host's choice is the
/// transposed plan, and the transposing reduce applies the epilogue right; TN (bias and
/// activation alone, and with R) and NN (with R: the host's fused entry point without R is TN).
#[test]
fn the_host_takes_the_transposed_plan_for_fused_epilogues() {
    let rt = rt();
    for (i, &(m, n, k)) in [(16, 4096, 4096), (3, 4104, 4104)].iter().enumerate() {
        let mut rng = Rng::new(180 + i as u64);
        let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
        let hbias: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
        let hres = rng.bf16s(m * n);
        let a = rt.upload(&ha, &[m, k]).unwrap();
        let bias = rt.upload(&hbias, &[n]).unwrap();
        let res = rt.upload(&hres, &[m, n]).unwrap();
        for layout in [BLayout::Tn, BLayout::Nn] {
            let (b, product) = b_and_reference(&rt, layout, (&ha, &hb), (m, n, k));
            for act in Act::ALL {
                let mut want = product.clone();
                apply_epilogue(&mut want, n, &hbias, act);
                let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
                if layout == BLayout::Tn {
                    rt.poison(&mut d).unwrap();
                    let choice =
                        host::gemm_bias_act(&rt, act, &a, &b, &bias, &mut d).expect("runs");
                    assert!(split::is_transposed(choice.artifact), "{}", choice.label());
                    let err = rel_frobenius(&rt.download(&d).unwrap(), &want);
                    assert!(
                        err < GemmTypes::BF16.tolerance(),
                        "{m}x{n}x{k} {act:?}: {err:.3e}"
                    );
                }
                add_residual(&mut want, &hres);
                rt.poison(&mut d).unwrap();
                let choice =
                    host::gemm_residual(&rt, layout, &a, &b, Some((act, &bias)), &res, &mut d)
                        .expect("runs");
                assert!(split::is_transposed(choice.artifact), "{}", choice.label());
                assert_eq!(layout_of(choice.artifact), layout, "{}", choice.label());
                let err = rel_frobenius(&rt.download(&d).unwrap(), &want);
                assert!(
                    err < GemmTypes::BF16.tolerance(),
                    "{layout:?} {m}x{n}x{k} {act:?} + R: {err:.3e}"
                );
            }
        }
    }
}

/// Slices that do not divide the K tiles (65 tiles in 7 and in 64 slices) in the caller's
/// [S, N, M] workspace; the same inputs give the same bits twice (fixed-order reduce); TN and
/// NN.
#[test]
fn transposed_caller_workspaces_are_deterministic() {
    for config in ["m16", "nn_m16"] {
        caller_workspaces_are_deterministic(config);
    }
}

fn caller_workspaces_are_deterministic(config: &str) {
    let rt = rt();
    let art = transposed()
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == config)
        .expect("the config");
    let (m, n, k) = (3, 4096, 4104);
    let mut rng = Rng::new(177);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let (b, want) = b_and_reference(&rt, layout_of(art), (&ha, &hb), (m, n, k));
    for splits in [7, 64, 2] {
        let mut w = rt.zeros::<f32>(&[splits, n, m]).unwrap();
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
        assert!(
            err < GemmTypes::BF16.tolerance(),
            "{config} S = {splits}: {err:.3e}"
        );
        let bits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&runs[0]),
            bits(&runs[1]),
            "{config} S = {splits}: not deterministic"
        );
    }
    // A workspace in the untransposed orientation is refused before launch.
    let mut w = rt.zeros::<f32>(&[2, m, n]).unwrap();
    let d = rt.zeros::<bf16>(&[m, n]).unwrap();
    let roles = [("a", a.view()), ("b", b.view()), ("d", d.view())];
    let err = split::launch_split_into(&rt, art, &roles, 1.0, 0.0, &mut w).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::NoKernelFits { table, .. } if table.contains(&format!("[S, {n}, {m}]"))),
        "{err}"
    );
}

/// The host's choice at M ≤ 16 decode shapes is the transposed plan of the request's layout
/// (the `nn` configs for B given K×N), and it is right.
#[test]
fn the_host_takes_the_transposed_plan_at_decode_shapes() {
    let rt = rt();
    for (i, &(m, n, k)) in [
        (1, 4096, 4096),
        (16, 4096, 4096),
        (1, 8192, 8192),
        (8, 4096, 14336),
    ]
    .iter()
    .enumerate()
    {
        let mut rng = Rng::new(190 + i as u64);
        let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
        let a = rt.upload(&ha, &[m, k]).unwrap();
        for layout in [BLayout::Tn, BLayout::Nn] {
            let (b, want) = b_and_reference(&rt, layout, (&ha, &hb), (m, n, k));
            let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
            rt.poison(&mut d).unwrap();
            let choice = host::gemm(&rt, layout, &a, &b, None, &mut d).expect("runs");
            assert!(
                split::is_transposed(choice.artifact) && layout_of(choice.artifact) == layout,
                "{layout:?} {m}x{n}x{k}: {}",
                choice.label()
            );
            let err = rel_frobenius(&rt.download(&d).unwrap(), &want);
            assert!(
                err < GemmTypes::BF16.tolerance(),
                "{layout:?} {m}x{n}x{k}: {err:.3e}"
            );
        }
    }
}
