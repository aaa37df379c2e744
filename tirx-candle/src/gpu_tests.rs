//! On a GPU (`--features gpu`, an sm_90a device with CUDA 13's libraries): every op against
//! the same computation in candle's own ops in f32, on random inputs with tails in every
//! tiled dimension. Not run by CI (no GPU there); `kernels/bench/device/candle_h200.sh` runs
//! them from a binary built here.

use candle_core::{D, DType, Device, Tensor};

use super::*;

fn gpu() -> Device {
    Device::new_cuda(0).expect("these tests need a CUDA GPU")
}

fn randn(shape: &[usize], dev: &Device, dtype: DType) -> Tensor {
    Tensor::randn(0f32, 1.0, shape, dev)
        .and_then(|t| t.to_dtype(dtype))
        .unwrap()
}

/// Largest |got − want| over (atol + rtol·|want|): ≤ 1 passes.
fn worst(got: &Tensor, want: &Tensor, atol: f32, rtol: f32) -> f32 {
    let g = got.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
    let w = want.to_dtype(DType::F32).unwrap().flatten_all().unwrap();
    let (g, w) = (g.to_vec1::<f32>().unwrap(), w.to_vec1::<f32>().unwrap());
    assert_eq!(g.len(), w.len());
    g.iter()
        .zip(&w)
        .map(|(g, w)| {
            if g.is_finite() {
                (g - w).abs() / (atol + rtol * w.abs())
            } else {
                f32::INFINITY
            }
        })
        .fold(0.0, f32::max)
}

fn f32(t: &Tensor) -> Tensor {
    t.to_dtype(DType::F32).unwrap()
}

#[test]
fn gemm_tn_nn_and_the_fused_epilogue_match_candle() {
    let dev = gpu();
    let (m, n, k) = (300, 264, 136);
    for dtype in [DType::BF16, DType::F16] {
        let a = randn(&[m, k], &dev, dtype);
        let w = randn(&[n, k], &dev, dtype); // [N, K]: `w.t()` runs TN
        let want = f32(&a).matmul(&f32(&w).t().unwrap()).unwrap();
        let tn = gemm(&a, &w.t().unwrap()).unwrap();
        assert_eq!(tn.dims(), &[m, n]);
        let e = worst(&tn, &want, 2e-2, 1e-2);
        assert!(e <= 1.0, "{dtype:?} TN: {e}");
        let b = w.t().unwrap().contiguous().unwrap(); // [K, N] row-major: NN
        let nn = gemm(&a, &b).unwrap();
        let e = worst(&nn, &want, 2e-2, 1e-2);
        assert!(e <= 1.0, "{dtype:?} NN: {e}");
    }
    let a = randn(&[m, k], &dev, DType::BF16);
    let w = randn(&[n, k], &dev, DType::BF16);
    let bias = randn(&[n], &dev, DType::BF16);
    let pre = f32(&a)
        .matmul(&f32(&w).t().unwrap())
        .unwrap()
        .broadcast_add(&f32(&bias))
        .unwrap();
    for (act, want) in [
        (Act::None, pre.clone()),
        (Act::Relu, pre.relu().unwrap()),
        (Act::Gelu, pre.gelu().unwrap()), // candle's `gelu` is the tanh form
        (Act::Silu, pre.silu().unwrap()),
    ] {
        let got = gemm_bias_act(&a, &w.t().unwrap(), &bias, act).unwrap();
        let e = worst(&got, &want, 2e-2, 1e-2);
        assert!(e <= 1.0, "{act:?}: {e}");
    }
}

#[test]
fn gemm_with_a_residual_matches_candle() {
    let dev = gpu();
    // N a multiple of 8: the residual is read (and D written) by TMA.
    let (m, n, k) = (300, 264, 136);
    let a = randn(&[m, k], &dev, DType::BF16);
    let w = randn(&[n, k], &dev, DType::BF16);
    let res = randn(&[m, n], &dev, DType::BF16);
    let want = f32(&a)
        .matmul(&f32(&w).t().unwrap())
        .unwrap()
        .add(&f32(&res))
        .unwrap();
    let tn = gemm_residual(&a, &w.t().unwrap(), &res).unwrap();
    assert_eq!(tn.dims(), &[m, n]);
    let e = worst(&tn, &want, 2e-2, 1e-2);
    assert!(e <= 1.0, "TN + residual: {e}");
    let b = w.t().unwrap().contiguous().unwrap();
    let nn = gemm_residual(&a, &b, &res).unwrap();
    let e = worst(&nn, &want, 2e-2, 1e-2);
    assert!(e <= 1.0, "NN + residual: {e}");
}

#[test]
fn silu_mul_matches_candle() {
    let dev = gpu();
    let x = randn(&[3, 37, 1000], &dev, DType::BF16);
    let g = randn(&[3, 37, 1000], &dev, DType::BF16);
    let want = f32(&x).silu().unwrap().mul(&f32(&g)).unwrap();
    let got = silu_mul(&x, &g).unwrap();
    assert_eq!(got.dims(), x.dims());
    // One bf16 rounding of the product (2⁻⁸ relative) plus the exponential's few ulps.
    let e = worst(&got, &want, 1e-3, 1e-2);
    assert!(e <= 1.0, "silu_mul: {e}");
}

#[test]
fn attention_matches_candle_with_grouped_queries_and_the_causal_mask() {
    let dev = gpu();
    let (b, s, sk, hq, hk, d) = (2, 200, 200, 8, 2, 128);
    let q = randn(&[b, s, hq, d], &dev, DType::BF16);
    let k = randn(&[b, sk, hk, d], &dev, DType::BF16);
    let v = randn(&[b, sk, hk, d], &dev, DType::BF16);
    let heads = |t: &Tensor, h: usize| {
        let t = f32(t).transpose(1, 2).unwrap(); // [B, H, SK, D]
        let t = t
            .unsqueeze(2)
            .unwrap()
            .repeat((1, 1, hq / h, 1, 1))
            .unwrap();
        t.reshape((b, hq, sk, d)).unwrap().contiguous().unwrap()
    };
    let qf = f32(&q).transpose(1, 2).unwrap().contiguous().unwrap();
    let (kf, vf) = (heads(&k, hk), heads(&v, hk));
    for causal in [false, true] {
        let scores = (qf.matmul(&kf.t().unwrap()).unwrap() / (d as f64).sqrt()).unwrap();
        let scores = if causal {
            // Bottom-right aligned: query i sees keys j ≤ i + (SK − S).
            let mask: Vec<f32> = (0..s * sk)
                .map(|x| {
                    if x % sk > x / sk + (sk - s) {
                        f32::NEG_INFINITY
                    } else {
                        0.0
                    }
                })
                .collect();
            let mask = Tensor::from_vec(mask, (s, sk), &dev).unwrap();
            scores.broadcast_add(&mask).unwrap()
        } else {
            scores
        };
        let max = scores.max_keepdim(D::Minus1).unwrap();
        let p = scores.broadcast_sub(&max).unwrap().exp().unwrap();
        let p = p.broadcast_div(&p.sum_keepdim(D::Minus1).unwrap()).unwrap();
        let want = p.matmul(&vf).unwrap().transpose(1, 2).unwrap();
        let got = attention(&q, &k, &v, causal, None).unwrap();
        assert_eq!(got.dims(), &[b, s, hq, d]);
        let e = worst(&got, &want, 1e-2, 2e-2);
        assert!(e <= 1.0, "causal {causal}: {e}");
    }
}

#[test]
fn rms_norm_and_softmax_match_candle() {
    let dev = gpu();
    let x = randn(&[3, 37, 1000], &dev, DType::BF16);
    let w = randn(&[1000], &dev, DType::BF16);
    let xf = f32(&x);
    let ms = xf.sqr().unwrap().mean_keepdim(D::Minus1).unwrap();
    let want = xf
        .broadcast_div(&(ms + 1e-6).unwrap().sqrt().unwrap())
        .unwrap()
        .broadcast_mul(&f32(&w))
        .unwrap();
    let got = rms_norm(&x, &w, 1e-6).unwrap();
    assert_eq!(got.dims(), x.dims());
    let e = worst(&got, &want, 1e-2, 1e-2);
    assert!(e <= 1.0, "rms_norm: {e}");
    let max = xf.max_keepdim(D::Minus1).unwrap();
    let p = xf.broadcast_sub(&max).unwrap().exp().unwrap();
    let want = p.broadcast_div(&p.sum_keepdim(D::Minus1).unwrap()).unwrap();
    let got = softmax(&x).unwrap();
    let e = worst(&got, &want, 1e-4, 1e-2);
    assert!(e <= 1.0, "softmax: {e}");
}
