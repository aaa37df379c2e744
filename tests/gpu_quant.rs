//! GPU tests of the FP8 quantisers (feature `gpu`, issue #29): `quant_rowwise` (every config,
//! each at a width it holds) and `quant_block` on the emulator tests' inputs — magnitudes
//! from 2⁻²⁰ to 2²⁰, a row of zeros, a subnormal-scale row, a huge row, tails of vectors,
//! blocks and rows — with `q` and `s` poisoned, bit for bit against the CPU reference
//! (`tirx_kernels::rows::quant`) and within E4M3's error. The emulator runs the same PTX;
//! this is the hardware's word on `cvt.rn.satfinite.e4m3x2.f32` and the packing. MXFP8's
//! quantiser runs its sm_90a artifact here (the same source as the sm_100a one the Blackwell
//! GEMM's tests feed in the emulator): elements and the factor image bit for bit.

use crate::quant::inputs;
use tirx::{Runtime, e4m3, ue8m0};
use tirx_kernels::row_kernels::quant::mxfp8::quant_mxfp8;
use tirx_kernels::row_kernels::quant::{quant_block, quant_rowwise};
use tirx_kernels::rows::quant::{check_e4m3, mxfp8_image, quantise_mxfp8};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

fn bytes(q: &[e4m3]) -> Vec<u8> {
    q.iter().map(|v| v.0).collect()
}

#[test]
fn rowwise_quantises_like_the_reference() {
    let rt = rt();
    for (i, (config, m, n)) in [
        ("c1k", 45, 1000),
        ("c1k", 13, 1003),
        ("c2k", 9, 1500),
        ("c4k", 33, 4096),
        ("c8k", 7, 5000),
        ("c16k", 5, 16383),
    ]
    .into_iter()
    .enumerate()
    {
        let hx = inputs(m, n, 400 + i as u64);
        let x = rt.upload(&hx, &[m, n]).unwrap();
        let mut q = rt.zeros::<e4m3>(&[m, n]).unwrap();
        let mut s = rt.zeros::<f32>(&[m]).unwrap();
        rt.poison(&mut q).unwrap();
        rt.poison(&mut s).unwrap();
        quant_rowwise::launch(&rt, config, &x, &mut q, &mut s).expect("launches");
        rt.synchronize().unwrap();
        let (hq, hs) = (rt.download(&q).unwrap(), rt.download(&s).unwrap());
        check_e4m3(&hx, (&bytes(&hq), &hs), m, n, n)
            .unwrap_or_else(|e| panic!("quant_rowwise {config} {m}x{n}: {e}"));
    }
}

#[test]
fn block_quantises_like_the_reference() {
    let rt = rt();
    for (i, (config, m, n)) in [
        ("r32", 45, 300),
        ("r32", 71, 259),
        ("r64", 37, 1000),
        ("r64", 129, 7168),
    ]
    .into_iter()
    .enumerate()
    {
        let hx = inputs(m, n, 410 + i as u64);
        let nb = n.div_ceil(128);
        let x = rt.upload(&hx, &[m, n]).unwrap();
        let mut q = rt.zeros::<e4m3>(&[m, n]).unwrap();
        let mut s = rt.zeros::<f32>(&[m, nb]).unwrap();
        rt.poison(&mut q).unwrap();
        rt.poison(&mut s).unwrap();
        quant_block::launch(&rt, config, &x, &mut q, &mut s).expect("launches");
        rt.synchronize().unwrap();
        let (hq, hs) = (rt.download(&q).unwrap(), rt.download(&s).unwrap());
        check_e4m3(&hx, (&bytes(&hq), &hs), m, n, 128)
            .unwrap_or_else(|e| panic!("quant_block {config} {m}x{n}: {e}"));
    }
}

#[test]
fn mxfp8_quantises_into_the_factor_image() {
    let rt = rt();
    for (i, (m, k)) in [(45, 208), (300, 96), (1000, 4096)].into_iter().enumerate() {
        let hx = inputs(m, k, 420 + i as u64);
        let [ms, ks] = [m.div_ceil(128) * 32, k.div_ceil(128) * 16];
        let x = rt.upload(&hx, &[m, k]).unwrap();
        let mut q = rt.zeros::<e4m3>(&[m, k]).unwrap();
        rt.poison(&mut q).unwrap();
        // Zeroed, as the kernel asks: the factors it does not write read 2⁻¹²⁷.
        let mut sf = rt.zeros::<ue8m0>(&[ms, ks]).unwrap();
        quant_mxfp8::launch(&rt, "default", &x, &mut q, &mut sf).expect("launches");
        rt.synchronize().unwrap();
        let (hq, hf) = (rt.download(&q).unwrap(), rt.download(&sf).unwrap());
        let (wq, wf) = quantise_mxfp8(&hx, m, k);
        assert_eq!(bytes(&hq), wq, "mxfp8 {m}x{k}: the elements");
        let want = mxfp8_image(&wf, m, k, ue8m0(0));
        assert_eq!(hf, want, "mxfp8 {m}x{k}: the factor image");
    }
}
