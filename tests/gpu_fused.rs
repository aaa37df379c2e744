//! GPU tests of the fused-epilogue GEMM (feature `gpu`): every config of
//! `gemm_sm90_bias_act` (bias, ReLU, GELU, SiLU × three tile widths) and of the residual
//! `gemm_sm90_bias_act_res` (D = act(A·Bᵀ + bias) + R) against the f64 reference with the same
//! epilogue, on shapes with tails in M, N and K, D poisoned first; and the host entries
//! `gemm_bias_act` for every activation and `gemm_residual` with and without the bias.

use half::bf16;
use tirx::problem::{Act, Epilogue, Problem};
use tirx::{Runtime, Target};
use tirx_kernels::catalogue;
use tirx_kernels::gemm::check::check_bias;
use tirx_kernels::reference::Rng;

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

#[test]
fn every_fused_epilogue_config_matches_the_f64_reference_with_tails() {
    let rt = rt();
    let mut failures = Vec::new();
    let mut ran = 0;
    // Every sm_90a artifact of the catalogue that solves a GEMM with a bias epilogue.
    let fused = catalogue::all()
        .into_iter()
        .flat_map(|k| k.artifacts)
        .filter(|a| a.target == Target::Sm90a);
    for a in fused {
        let Some(Problem::Gemm(g)) = a.problem else {
            continue;
        };
        // D = act(A·Bᵀ + bias), and with a residual R added after the activation (`check_bias`
        // draws R and adds it to the reference for an artifact that takes `res`).
        let (Epilogue::Bias(act) | Epilogue::BiasResidual(act)) = g.epilogue else {
            continue;
        };
        ran += 1;
        for (i, shape) in [
            (128, 256, 64),
            (200, 264, 136),
            (1000, 1000, 520),
            (2048, 3072, 1024),
        ]
        .into_iter()
        .enumerate()
        {
            match check_bias(&rt, a, act, shape, 30 + i as u64) {
                Ok(r) if r.ok => {}
                Ok(r) => failures.push(format!(
                    "{}/{} {shape:?}: {:.3e}\n{}",
                    a.kernel, a.config, r.error, r.blocks
                )),
                Err(e) => failures.push(format!("{}/{} {shape:?}: {e}", a.kernel, a.config)),
            }
        }
    }
    assert!(
        ran > 0,
        "no fused-epilogue GEMM for sm_90a in the catalogue"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_host_entry_runs_every_activation() {
    let rt = rt();
    let (m, n, k) = (777, 1032, 264);
    let mut rng = Rng::new(5);
    let (ha, hb): (Vec<bf16>, Vec<bf16>) = (rng.values(m * k), rng.values(n * k));
    let hbias: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &[n, k]).unwrap();
    let bias = rt.upload(&hbias, &[n]).unwrap();
    for act in Act::ALL {
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        let choice =
            tirx_kernels::gemm::host::gemm_bias_act(&rt, act, &a, &b, &bias, &mut d).expect("runs");
        rt.synchronize().unwrap();
        let got = rt.download(&d).unwrap();
        let mut want = tirx_kernels::reference::gemm_tn_f64(&ha, &hb, m, n, k);
        tirx_kernels::gemm::reference::apply_epilogue(&mut want, n, &hbias, act);
        let err = tirx_kernels::reference::rel_frobenius(&got, &want);
        assert!(
            err < 1e-2,
            "{act:?} by {}: {err:.3e}",
            choice.artifact.config
        );
    }
}

#[test]
fn the_residual_host_entry_adds_r_with_and_without_the_bias() {
    use tirx::problem::BLayout;
    let rt = rt();
    let (m, n, k) = (777, 1032, 264);
    let mut rng = Rng::new(6);
    let (ha, hb): (Vec<bf16>, Vec<bf16>) = (rng.values(m * k), rng.values(n * k));
    let hbias: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
    let hres: Vec<bf16> = rng.values(m * n);
    let a = rt.upload(&ha, &[m, k]).unwrap();
    let b = rt.upload(&hb, &[n, k]).unwrap();
    let bias = rt.upload(&hbias, &[n]).unwrap();
    let res = rt.upload(&hres, &[m, n]).unwrap();
    for act in [None, Some(Act::Gelu), Some(Act::Silu)] {
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        let fused = act.map(|act| (act, &bias));
        let choice =
            tirx_kernels::gemm::host::gemm_residual(&rt, BLayout::Tn, &a, &b, fused, &res, &mut d)
                .expect("runs");
        rt.synchronize().unwrap();
        let got = rt.download(&d).unwrap();
        let mut want = tirx_kernels::reference::gemm_tn_f64(&ha, &hb, m, n, k);
        if let Some(act) = act {
            tirx_kernels::gemm::reference::apply_epilogue(&mut want, n, &hbias, act);
        }
        tirx_kernels::gemm::reference::add_residual(&mut want, &hres);
        let err = tirx_kernels::reference::rel_frobenius(&got, &want);
        assert!(
            err < 1e-2,
            "{act:?} by {}/{}: {err:.3e}",
            choice.artifact.kernel,
            choice.artifact.config
        );
    }
}
