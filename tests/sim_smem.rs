//! The emulator running the register ↔ shared moves of `smem_kernels` — `ldmatrix` and
//! `stmatrix` of the wgmma fragment (row-major and swizzled TMA column chunks) and `ldmatrix`
//! feeding wgmma's RS form — against the same exact and f64 references as `gpu_smem.rs` on
//! the H200, on tiles with tails and outputs poisoned first.

use half::bf16;
use tirx_kernels::reference::{Rng, gemm_tn_f64, rel_frobenius};
use tirx_kernels::simulate::{download, upload};
use tirx_sim::Device;

use super::sim_exec::sim_launch;
use super::smem_kernels::{rs_ldmatrix, smem_matrix, smem_moves};

fn bits(v: &[bf16]) -> Vec<u16> {
    v.iter().map(|b| b.to_bits()).collect()
}

/// The first index where two bf16 vectors differ bitwise.
fn first_difference(got: &[bf16], want: &[bf16]) -> Option<(usize, bf16, bf16)> {
    let (g, w) = (bits(got), bits(want));
    (0..g.len())
        .find(|&i| g[i] != w[i])
        .map(|i| (i, got[i], want[i]))
}

#[test]
fn stmatrix_and_ldmatrix_moves_are_exact_in_the_emulator() {
    for (i, (m, n)) in [(64, 128), (100, 200)].into_iter().enumerate() {
        let mut rng = Rng::new(190 + i as u64);
        let hx = rng.bf16s(m * n);
        let mut dev = Device::new();
        let x = upload(&mut dev, &hx, &[m, n]);
        let y = upload(&mut dev, &[], &[m, n]);
        let z = upload(&mut dev, &[], &[m, n]);
        let art = &smem_matrix::KERNEL.artifacts[0];
        sim_launch(art, &mut dev, &[x, y.clone(), z.clone()], &[], i as u64).unwrap();
        let half: Vec<bf16> = hx
            .iter()
            .map(|v| bf16::from_f32(v.to_f32() * 0.5))
            .collect();
        assert_eq!(
            first_difference(&download(&dev, &y), &half),
            None,
            "y {m}x{n}"
        );
        assert_eq!(
            first_difference(&download(&dev, &z), &hx),
            None,
            "z {m}x{n}"
        );
    }
}

#[test]
fn ldmatrix_of_a_tma_tile_is_exact_in_the_emulator() {
    // smem_moves' y = x goes through `ldmatrix` of the swizzled TMA tile.
    let (m, n) = (100, 72);
    let hx = Rng::new(195).bf16s(m * n);
    let mut dev = Device::new();
    let x = upload(&mut dev, &hx, &[m, n]);
    let y = upload(&mut dev, &[], &[m, n]);
    let z = tirx_kernels::simulate::put(
        &mut dev,
        &vec![0xff; m * n * 4],
        tirx::runtime::ElemType::F32,
        &[m, n],
    );
    let art = &smem_moves::KERNEL.artifacts[0];
    sim_launch(art, &mut dev, &[x, y.clone(), z], &[], 3).unwrap();
    assert_eq!(first_difference(&download(&dev, &y), &hx), None);
}

#[test]
fn ldmatrix_feeds_the_rs_form_in_the_emulator() {
    for (i, (m, n)) in [(64, 64), (100, 72)].into_iter().enumerate() {
        let kk = 64;
        let mut rng = Rng::new(210 + i as u64);
        let (ha, hb) = (rng.bf16s(m * kk), rng.bf16s(n * kk));
        let mut dev = Device::new();
        let a = upload(&mut dev, &ha, &[m, kk]);
        let b = upload(&mut dev, &hb, &[n, kk]);
        let d = upload(&mut dev, &[], &[m, n]);
        let art = &rs_ldmatrix::KERNEL.artifacts[0];
        sim_launch(art, &mut dev, &[a, b, d.clone()], &[], i as u64).unwrap();
        let err = rel_frobenius(&download(&dev, &d), &gemm_tn_f64(&ha, &hb, m, n, kk));
        assert!(err < 1e-2, "{m}x{n}: {err:.3e}");
    }
}
