//! GPU test of wgmma's RS form (A from registers, feature `gpu`): A loaded into a bf16
//! register tile in the fragment layout, B by TMA, D = A·Bᵀ against the f64 reference; and
//! the attention pattern, an SS product converted to bf16 in registers and fed as A to a
//! second, RS product.

use crate::rs_kernels::{rs_chain, rs_gemm};
use half::bf16;
use tirx::Runtime;
use tirx_kernels::reference::{Rng, gemm_tn_f64, rel_frobenius};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

#[test]
fn wgmma_with_a_from_registers_matches_the_reference() {
    let rt = rt();
    for (i, (m, n)) in [(64, 64), (128, 192), (100, 72)].into_iter().enumerate() {
        let kk = 64;
        let mut rng = Rng::new(60 + i as u64);
        let (ha, hb): (Vec<bf16>, Vec<bf16>) = (rng.values(m * kk), rng.values(n * kk));
        let a = rt.upload(&ha, &[m, kk]).unwrap();
        let b = rt.upload(&hb, &[n, kk]).unwrap();
        let mut d = rt.zeros::<bf16>(&[m, n]).unwrap();
        rt.poison(&mut d).unwrap();
        rs_gemm::launch(&rt, "default", &a, &b, &mut d).expect("launches");
        rt.synchronize().unwrap();
        let got = rt.download(&d).unwrap();
        let err = rel_frobenius(&got, &gemm_tn_f64(&ha, &hb, m, n, kk));
        assert!(err < 1e-2, "{m}x{n}: {err:.3e}");
    }
}

#[test]
fn an_accumulator_converted_in_registers_feeds_the_next_mma() {
    let rt = rt();
    let (m, j, n, kk) = (128, 64, 64, 64);
    let mut rng = Rng::new(70);
    let hq: Vec<bf16> = rng.values(m * kk);
    let hk: Vec<bf16> = rng.values(j * kk);
    let hv: Vec<bf16> = rng.values(n * j);
    let q = rt.upload(&hq, &[m, kk]).unwrap();
    let k = rt.upload(&hk, &[j, kk]).unwrap();
    let v = rt.upload(&hv, &[n, j]).unwrap();
    let mut o = rt.zeros::<bf16>(&[m, n]).unwrap();
    rt.poison(&mut o).unwrap();
    rs_chain::launch(&rt, "default", &q, &k, &v, &mut o).expect("launches");
    rt.synchronize().unwrap();
    let got = rt.download(&o).unwrap();
    // The reference rounds S to bf16 as the kernel does.
    let s: Vec<bf16> = gemm_tn_f64(&hq, &hk, m, j, kk)
        .into_iter()
        .map(bf16::from_f64)
        .collect();
    let err = rel_frobenius(&got, &gemm_tn_f64(&s, &hv, m, n, j));
    assert!(err < 1e-2, "{err:.3e}");
}
