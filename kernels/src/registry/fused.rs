//! `tirx run` of the fused-epilogue GEMM: D = act(A·Bᵀ + bias) on random data against the
//! f64 reference with the same epilogue (`crate::bench::epilogue_ref`), D poisoned first.

use super::{CheckReport, GemmTypes, block_map, launch_roles};
use crate::reference::{Rng, gemm_tn_f64, rel_frobenius};
use half::bf16;
use tirx::problem::Act;
use tirx::{Kernel, Runtime, RuntimeError};

/// Checks `kernel`'s `config` (bf16 in and out) on an M×N×K problem.
pub fn check_bias(
    rt: &Runtime,
    kernel: &'static Kernel,
    config: &str,
    act: Act,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let art = tirx::select(kernel.artifacts, config, rt.target()?)?;
    let mut rng = Rng::new(seed);
    let (ha, hb): (Vec<bf16>, Vec<bf16>) = (rng.values(m * k), rng.values(n * k));
    let hbias: Vec<bf16> = (0..n)
        .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
        .collect();
    let a = rt.upload(&ha, &[m, k])?;
    let b = rt.upload(&hb, &[n, k])?;
    let bias = rt.upload(&hbias, &[n])?;
    let mut d = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut d)?;
    let roles = [
        ("a", a.view()),
        ("b", b.view()),
        ("bias", bias.view()),
        ("d", d.view()),
    ];
    launch_roles(rt, art, &roles, 1.0, 0.0)?;
    rt.synchronize()?;
    let got = rt.download(&d)?;
    let mut want = gemm_tn_f64(&ha, &hb, m, n, k);
    crate::bench::epilogue_ref::apply_epilogue(&mut want, n, &hbias, act);
    let err = rel_frobenius(&got, &want);
    let tol = GemmTypes::BF16.tolerance();
    Ok(CheckReport {
        shape: (m, n, k),
        error: err,
        ok: err < tol,
        blocks: if err < tol {
            String::new()
        } else {
            block_map(&got, &want, m, n, tol)
        },
    })
}
