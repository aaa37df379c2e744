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

/// The f64 reference of one element `(i, j)` of an FP8 GEMM.
type Reference<'r> = Box<dyn Fn(usize, usize) -> f64 + 'r>;

/// `[rows, cols]` of E4M3, random multiples of 1/8 in [-2, 2] (quantised on the CPU), on the
/// GPU, and the exact values the kernel reads, in f64.
fn fp8_operand(rows: usize, cols: usize, dev: &Device) -> (Tensor, Vec<f64>) {
    // Values k/8 with integer |k| ≤ 16 (at most 4 significant bits, none subnormal) are exact
    // in E4M3, so their f64 values are known without reading the FP8 tensor back: candle
    // 0.10.2's CPU conversion from F8E4M3 (to F32 or F64, through float8 0.7's `to_f16`) never
    // returned here (stop 49, call 3: the test thread spinning, the GPU idle), while the
    // conversion to F8E4M3 is quick.
    let mut state = (rows * 7919 + cols) as u64;
    let exact: Vec<f64> = (0..rows * cols)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 33) as f64 / 8.0 - 2.0
        })
        .collect();
    let f: Vec<f32> = exact.iter().map(|&x| x as f32).collect();
    let q = Tensor::from_vec(f, (rows, cols), &Device::Cpu)
        .and_then(|t| t.to_dtype(DType::F8E4M3))
        .unwrap();
    (q.to_device(dev).unwrap(), exact)
}

/// f32 scales in (0.5, 1.5) on the GPU, and their values.
fn scales_on(shape: &[usize], dev: &Device) -> (Tensor, Vec<f64>) {
    let s = Tensor::rand(0.5f32, 1.5, shape, &Device::Cpu).unwrap();
    let v = s
        .flatten_all()
        .and_then(|t| t.to_vec1::<f32>())
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    (s.to_device(dev).unwrap(), v)
}

/// Every scale form of `gemm_fp8` against a CPU f64 reference of the same E4M3 values, at
/// shapes with tails in M, N and K (K = 400 is 3 full 128-blocks and one of 16).
#[test]
fn gemm_fp8_matches_an_f64_reference_in_every_scale_form() {
    let dev = gpu();
    for (m, n, k) in [(300, 264, 400), (77, 136, 208)] {
        let (a, av) = fp8_operand(m, k, &dev);
        let (w, wv) = fp8_operand(n, k, &dev); // [N, K]: passed as `w.t()`
        let dot = |i: usize, j: usize, ks: std::ops::Range<usize>| -> f64 {
            ks.map(|x| av[i * k + x] * wv[j * k + x]).sum()
        };
        let (kb, nb) = (k.div_ceil(128), n.div_ceil(128));
        let (ra, rav) = scales_on(&[m], &dev);
        let (rb, rbv) = scales_on(&[1, n], &dev);
        let (ba, bav) = scales_on(&[m, kb], &dev);
        let (bb, bbv) = scales_on(&[nb, kb], &dev);
        let forms: [(&str, Fp8Scales<'_>, Reference<'_>); 3] = [
            (
                "tensor",
                Fp8Scales::Tensor(0.5, 1.25),
                Box::new(|i, j| 0.625 * dot(i, j, 0..k)),
            ),
            (
                "rows",
                Fp8Scales::Rows(&ra, &rb),
                Box::new(|i, j| rav[i] * rbv[j] * dot(i, j, 0..k)),
            ),
            (
                "blocks",
                Fp8Scales::Blocks(&ba, &bb),
                Box::new(|i, j| {
                    (0..kb)
                        .map(|b| {
                            let ks = b * 128..((b + 1) * 128).min(k);
                            bav[i * kb + b] * bbv[(j / 128) * kb + b] * dot(i, j, ks)
                        })
                        .sum()
                }),
            ),
        ];
        for (name, scales, reference) in forms {
            // Both accumulations (`gemm_fp8` is `Promoted`, torch's default numerics).
            for accum in [Fp8Accum::Promoted, Fp8Accum::Fast] {
                let got = gemm_fp8_accum(&a, &w.t().unwrap(), scales, accum).unwrap();
                assert_eq!(got.dims(), &[m, n]);
                assert_eq!(got.dtype(), DType::BF16);
                let want: Vec<f32> = (0..m * n).map(|x| reference(x / n, x % n) as f32).collect();
                let want = Tensor::from_vec(want, (m, n), &Device::Cpu).unwrap();
                // One bf16 rounding (2⁻⁸ relative) of sums of |value| ~ √K.
                let e = worst(&got.to_device(&Device::Cpu).unwrap(), &want, 5e-2, 1e-2);
                assert!(e <= 1.0, "{name} {} {m}x{n}x{k}: {e}", accum.name());
            }
        }
    }
}
