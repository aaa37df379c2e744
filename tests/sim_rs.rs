//! The emulator (`tirx-sim`, issue #10) running wgmma's RS form (A from registers, PTX ISA
//! §9.7.15.5.1.1.1): the two kernels of `rs_kernels.rs` — `rs_gemm` (A loaded into a bf16
//! register tile, B by TMA) and `rs_chain` (attention's pattern: an SS product converted to
//! bf16 in registers and fed as A to an RS product) — against the f64 reference, as
//! `gpu_rs.rs` runs them on the H200.
//!
//! Bounds, per element: `rs_gemm` as `sim_gemm.rs` (the f32 accumulation-order error
//! `(K + 2)·2⁻²³·Σ|a·b|` plus half a bf16 ulp); `rs_chain` against the reference that rounds
//! S to bf16 (as `gpu_rs.rs` does), widened by how far the kernel's own bf16(S) can be from
//! that one (S's accumulation error, and the two roundings on either side of it).

use half::bf16;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_sim::{Device, Stats};

use super::rs_kernels::{rs_chain, rs_gemm};
use super::sim_exec::{report, sim_launch};

/// f32 accumulation-order error of a K-term dot product of magnitude `mag`.
fn acc(k: usize, mag: f64) -> f64 {
    (k as f64 + 2.0) * mag / 8_388_608.0
}

/// `D = A·Bᵀ`, A [m, k] and B [n, k] as f64.
fn tn(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut d, mut mag) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                let x = a[i * k + p] * b[j * k + p];
                d[i * n + j] += x;
                mag[i * n + j] += x.abs();
            }
        }
    }
    (d, mag)
}

fn f64s(v: &[bf16]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// The first element of `got` outside `want ± bound`, as a message.
fn check(got: &[bf16], want: &[f64], bound: &[f64], n: usize) -> Result<(), String> {
    for (i, ((g, w), b)) in got.iter().zip(want).zip(bound).enumerate() {
        let g = g.to_f64();
        if (g - w).abs() > *b || g.is_nan() {
            return Err(format!(
                "({}, {}): {g} vs {w:.6e} (bound {b:.2e})",
                i / n,
                i % n
            ));
        }
    }
    Ok(())
}

fn rs_gemm_case(m: usize, n: usize, seed: u64) -> Result<Stats, String> {
    let kk = 64;
    let art = &rs_gemm::KERNEL.artifacts[0];
    let mut rng = Rng::new(seed);
    let (ha, hb) = (rng.bf16s(m * kk), rng.bf16s(n * kk));
    let mut dev = Device::new();
    let a = upload(&mut dev, &ha, &[m, kk]);
    let b = upload(&mut dev, &hb, &[n, kk]);
    let d = upload(&mut dev, &[], &[m, n]);
    let stats =
        sim_launch(art, &mut dev, &[a, b, d.clone()], &[], seed).map_err(|e| e.to_string())?;
    let (want, mag) = tn(&f64s(&ha), &f64s(&hb), m, n, kk);
    let bound: Vec<f64> = want
        .iter()
        .zip(&mag)
        .map(|(w, g)| (w.abs() + acc(kk, *g)) / 256.0 + acc(kk, *g) + 1e-30)
        .collect();
    check(&download(&dev, &d), &want, &bound, n)?;
    Ok(stats)
}

#[test]
fn rs_gemm_matches_the_reference() {
    let mut runs = Vec::new();
    for (m, n, seed) in [(64, 64, 1), (100, 72, 2), (128, 192, 3)] {
        runs.push(rs_gemm_case(m, n, seed).unwrap_or_else(|e| panic!("rs_gemm {m}x{n}: {e}")));
    }
    report("rs_gemm", &runs);
}

#[test]
fn rs_chain_matches_the_reference_with_s_rounded_to_bf16() {
    let (j, n, kk) = (64, 64, 64);
    let art = &rs_chain::KERNEL.artifacts[0];
    let mut runs = Vec::new();
    for (m, seed) in [(128, 70), (100, 71)] {
        let mut rng = Rng::new(seed);
        let (hq, hk, hv) = (rng.bf16s(m * kk), rng.bf16s(j * kk), rng.bf16s(n * j));
        let mut dev = Device::new();
        let q = upload(&mut dev, &hq, &[m, kk]);
        let k = upload(&mut dev, &hk, &[j, kk]);
        let v = upload(&mut dev, &hv, &[n, j]);
        let o = upload(&mut dev, &[], &[m, n]);
        let stats = sim_launch(art, &mut dev, &[q, k, v, o.clone()], &[], seed)
            .unwrap_or_else(|e| panic!("rs_chain {m}: {e}"));
        runs.push(stats);
        let (s, smag) = tn(&f64s(&hq), &f64s(&hk), m, j, kk);
        let p: Vec<f64> = s.iter().map(|&x| bf16::from_f64(x).to_f64()).collect();
        // How far the kernel's bf16(S) can be from the reference's bf16(S_exact).
        let dp: Vec<f64> = s
            .iter()
            .zip(&smag)
            .map(|(x, g)| acc(kk, *g) + (2.0 * x.abs() + acc(kk, *g)) / 256.0)
            .collect();
        let hv = f64s(&hv);
        let (want, mag) = tn(&p, &hv, m, n, j);
        let mut bound = vec![0.0; m * n];
        for r in 0..m {
            for c in 0..n {
                let spread: f64 = (0..j).map(|x| dp[r * j + x] * hv[c * j + x].abs()).sum();
                let e = acc(j, mag[r * n + c]) + spread;
                bound[r * n + c] = (want[r * n + c].abs() + e) / 256.0 + e + 1e-30;
            }
        }
        check(&download(&dev, &o), &want, &bound, n)
            .unwrap_or_else(|e| panic!("rs_chain {m}: {e}"));
    }
    report("rs_chain", &runs);
}
