//! GPU tests of the register ↔ shared moves (feature `gpu`): the kernels of `smem_kernels`
//! on tiles with tails, outputs poisoned first, compared exactly (the moves and the
//! arithmetic in them are exact, or round once as the reference does) — and `ldmatrix`
//! feeding wgmma's RS form against the f64 reference.

use crate::smem_kernels::{rs_ldmatrix, smem_matrix, smem_moves};
use half::bf16;
use tirx::Runtime;
use tirx_kernels::reference::{Rng, gemm_tn_f64, rel_frobenius};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// The first index where `got` and `want` differ (bitwise), with both values.
fn first_difference<T: PartialEq + Copy + std::fmt::Debug>(
    got: &[T],
    want: &[T],
) -> Option<(usize, T, T)> {
    got.iter()
        .zip(want)
        .enumerate()
        .find(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| (i, *g, *w))
}

#[test]
fn vector_and_matrix_moves_through_shared_memory_are_exact() {
    let rt = rt();
    for (i, (m, n)) in [(64, 64), (100, 200), (130, 72)].into_iter().enumerate() {
        let mut rng = Rng::new(90 + i as u64);
        let hx: Vec<bf16> = rng.values(m * n);
        let x = rt.upload(&hx, &[m, n]).unwrap();
        let mut y = rt.zeros::<bf16>(&[m, n]).unwrap();
        let mut z = rt.zeros::<f32>(&[m, n]).unwrap();
        rt.poison(&mut y).unwrap();
        rt.poison(&mut z).unwrap();
        smem_moves::launch(&rt, "default", &x, &mut y, &mut z).expect("launches");
        rt.synchronize().unwrap();
        let (gy, gz) = (rt.download(&y).unwrap(), rt.download(&z).unwrap());
        let wz: Vec<f32> = hx.iter().map(|v| v.to_f32() * 2.0 + 1.0).collect();
        let bits = |v: &[bf16]| v.iter().map(|b| b.to_bits()).collect::<Vec<_>>();
        assert_eq!(first_difference(&bits(&gy), &bits(&hx)), None, "y {m}x{n}");
        let fb = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(first_difference(&fb(&gz), &fb(&wz)), None, "z {m}x{n}");

        let mut y = rt.zeros::<bf16>(&[m, n]).unwrap();
        let mut z = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut y).unwrap();
        rt.poison(&mut z).unwrap();
        smem_matrix::launch(&rt, "default", &x, &mut y, &mut z).expect("launches");
        rt.synchronize().unwrap();
        let (gy, gz) = (rt.download(&y).unwrap(), rt.download(&z).unwrap());
        let half: Vec<bf16> = hx
            .iter()
            .map(|v| bf16::from_f32(v.to_f32() * 0.5))
            .collect();
        assert_eq!(
            first_difference(&bits(&gy), &bits(&half)),
            None,
            "matrix y {m}x{n}"
        );
        assert_eq!(
            first_difference(&bits(&gz), &bits(&hx)),
            None,
            "matrix z {m}x{n}"
        );
    }
}

#[test]
fn ldmatrix_feeds_the_rs_form() {
    let rt = rt();
    for (i, (m, n)) in [(64, 64), (128, 192), (100, 72)].into_iter().enumerate() {
        let kk = 64;
        let mut rng = Rng::new(110 + i as u64);
        let (ha, hb): (Vec<bf16>, Vec<bf16>) = (rng.values(m * kk), rng.values(n * kk));
        let a = rt.upload(&ha, &[m, kk]).unwrap();
        let b = rt.upload(&hb, &[n, kk]).unwrap();
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        rs_ldmatrix::launch(&rt, "default", &a, &b, &mut d).expect("launches");
        rt.synchronize().unwrap();
        let got = rt.download(&d).unwrap();
        let err = rel_frobenius(&got, &gemm_tn_f64(&ha, &hb, m, n, kk));
        assert!(err < 1e-2, "{m}x{n}: {err:.3e}");
    }
}
