//! The ops through candle's API without a GPU: every refusal reaches the caller as a candle
//! error naming the argument (CPU tensors get the checks, then `NotCuda`), and asking for a
//! GPU on a machine without one is an error, not a panic.

use candle_core::{DType, Device, Tensor};

use super::*;

fn t(shape: &[usize], dtype: DType) -> Tensor {
    Tensor::zeros(shape, dtype, &Device::Cpu).unwrap()
}

fn err(r: candle_core::Result<Tensor>) -> String {
    match r {
        Ok(t) => panic!("expected a refusal, got a tensor of shape {:?}", t.shape()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn well_formed_cpu_calls_pass_the_checks_then_ask_for_cuda() {
    let bf = DType::BF16;
    let (x, w) = (t(&[64, 32], bf), t(&[48, 32], bf));
    let e = err(gemm(&x, &w.t().unwrap()));
    assert!(e.contains("tirx gemm: the tensors are on the CPU"), "{e}");
    let e = err(gemm_bias_act(&x, &w.t().unwrap(), &t(&[48], bf), Act::Gelu));
    assert!(e.contains("tirx gemm: the tensors are on the CPU"), "{e}");
    let (q, kv) = (t(&[1, 16, 4, 64], bf), t(&[1, 16, 2, 64], bf));
    let e = err(attention(&q, &kv, &kv, true, None));
    assert!(
        e.contains("tirx attention: the tensors are on the CPU"),
        "{e}"
    );
    let e = err(rms_norm(&t(&[3, 5, 32], bf), &t(&[32], bf), 1e-6));
    assert!(
        e.contains("tirx rms_norm: the tensors are on the CPU"),
        "{e}"
    );
    let e = err(softmax(&t(&[7, 100], bf)));
    assert!(
        e.contains("tirx softmax: the tensors are on the CPU"),
        "{e}"
    );
    let e = err(gemm_residual(&x, &w.t().unwrap(), &t(&[64, 48], bf)));
    assert!(e.contains("tirx gemm: the tensors are on the CPU"), "{e}");
    let e = err(silu_mul(&t(&[3, 5, 32], bf), &t(&[3, 5, 32], bf)));
    assert!(
        e.contains("tirx silu_mul: the tensors are on the CPU"),
        "{e}"
    );
}

#[test]
fn misuse_is_a_candle_error_naming_the_argument() {
    let bf = DType::BF16;
    let x = t(&[64, 32], bf);
    let e = err(gemm(&x, &t(&[32, 48], DType::F32)));
    assert!(
        e.contains("`b` has dtype F32; gemm takes BF16 (the dtype of `a`)"),
        "{e}"
    );
    let e = err(gemm(&x, &t(&[33, 48], bf)));
    assert!(e.contains("K disagrees (32 vs 33)"), "{e}");
    let e = err(gemm(&t(&[64, 32], DType::F32), &t(&[32, 48], DType::F32)));
    assert!(
        e.contains("`a` has dtype F32; gemm takes BF16 or F16"),
        "{e}"
    );
    let e = err(gemm_bias_act(
        &x,
        &t(&[32, 48], bf),
        &t(&[32], bf),
        Act::Relu,
    ));
    assert!(e.contains("`bias` has shape [32]"), "{e}");
    // [B, H, S, D] → [B, S, H, D] by a transpose alone leaves the heads unpacked.
    let q = t(&[1, 4, 16, 64], bf).transpose(1, 2).unwrap();
    let kv = t(&[1, 16, 2, 64], bf);
    let e = err(attention(&q, &kv, &kv, false, None));
    assert!(
        e.contains("`q` has shape [1, 16, 4, 64] and strides [4096, 64, 1024, 1]"),
        "{e}"
    );
    let kv3 = t(&[1, 16, 3, 64], bf);
    let e = err(attention(&t(&[1, 16, 4, 64], bf), &kv3, &kv3, false, None));
    assert!(e.contains("4 query heads over 3 K/V heads"), "{e}");
    let e = err(attention(&t(&[16, 4, 64], bf), &kv, &kv, false, None));
    assert!(
        e.contains("`q` has shape [16, 4, 64]; it must be [B, S, HQ, D]"),
        "{e}"
    );
    let e = err(rms_norm(&t(&[8, 32], bf), &t(&[16], bf), 1e-6));
    assert!(e.contains("`weight` has shape [16]"), "{e}");
    let e = err(softmax(&t(&[32, 8], bf).t().unwrap()));
    assert!(
        e.contains("`x` has shape [8, 32] and strides [1, 8]; softmax needs a contiguous"),
        "{e}"
    );
    let e = err(softmax(&t(&[8, 32], DType::F32)));
    assert!(e.contains("`x` has dtype F32; softmax takes BF16"), "{e}");
    let e = err(gemm_residual(&x, &t(&[32, 48], bf), &t(&[48, 64], bf)));
    assert!(
        e.contains("`res` has shape [48, 64]; a @ b is [M, N] = [64, 48]"),
        "{e}"
    );
    let e = err(silu_mul(&t(&[8, 32], bf), &t(&[8, 33], bf)));
    assert!(
        e.contains("`g` has shape [8, 33] but `x` has [8, 32]"),
        "{e}"
    );
}

#[test]
fn candle_refuses_tensors_on_different_devices_before_the_op() {
    // On a machine without a GPU the CUDA device itself is the error (no panic).
    if let Ok(gpu) = Device::new_cuda(0) {
        let a = t(&[64, 32], DType::BF16);
        let b = Tensor::zeros((32, 48), DType::BF16, &gpu).unwrap();
        let e = err(gemm(&a, &b));
        assert!(e.contains("device mismatch"), "{e}");
    }
}

#[test]
fn without_a_gpu_asking_for_one_is_an_error_not_a_panic() {
    match device_name(0) {
        Ok(name) => println!("GPU 0: {name}"),
        Err(e) => {
            let text = e.to_string();
            assert!(matches!(e, Error::Runtime(_)), "{text}");
            println!("{text}");
        }
    }
    // An ordinal beyond any machine's devices.
    assert!(device_name(1 << 20).is_err());
}

#[test]
fn gemm_fp8_checks_its_arguments_then_asks_for_cuda() {
    let f8 = DType::F8E4M3;
    let (m, n, k) = (64, 48, 256);
    let (x, w) = (t(&[m, k], f8), t(&[n, k], f8));
    let wt = w.t().unwrap();
    let (ra, rb) = (t(&[m], DType::F32), t(&[1, n], DType::F32));
    let (ba, bb) = (t(&[m, 2], DType::F32), t(&[1, 2], DType::F32));
    for scales in [
        Fp8Scales::Tensor(0.5, 2.0),
        Fp8Scales::Rows(&ra, &rb),
        Fp8Scales::Blocks(&ba, &bb),
    ] {
        let e = err(gemm_fp8(&x, &wt, scales));
        assert!(
            e.contains("tirx gemm_fp8: the tensors are on the CPU"),
            "{e}"
        );
    }
    let one = Fp8Scales::Tensor(1.0, 1.0);
    let e = err(gemm_fp8(&t(&[m, k], DType::BF16), &wt, one));
    assert!(
        e.contains("`a` has dtype BF16; gemm_fp8 takes F8E4M3"),
        "{e}"
    );
    let e = err(gemm_fp8(&x, &t(&[k, n], f8), one));
    assert!(e.contains("the FP8 kernels read B as N×K"), "{e}");
    let e = err(gemm_fp8(&x, &t(&[n, 128], f8).t().unwrap(), one));
    assert!(e.contains("K disagrees (256 vs 128)"), "{e}");
    let e = err(gemm_fp8(
        &t(&[m, 40], f8),
        &t(&[n, 40], f8).t().unwrap(),
        one,
    ));
    assert!(e.contains("K = 40 is not a multiple of 16"), "{e}");
    let e = err(gemm_fp8(
        &x,
        &wt,
        Fp8Scales::Rows(&ra, &t(&[n, 1], DType::F32)),
    ));
    assert!(
        e.contains("row-wise scales: `sa` has shape [64] and `sb` [48, 1]"),
        "{e}"
    );
    let e = err(gemm_fp8(
        &x,
        &wt,
        Fp8Scales::Blocks(&ba, &t(&[2, 2], DType::F32)),
    ));
    assert!(e.contains("[cdiv(N, 128), cdiv(K, 128)] = [1, 2]"), "{e}");
    let e = err(gemm_fp8(
        &x,
        &wt,
        Fp8Scales::Rows(&t(&[m], DType::BF16), &rb),
    ));
    assert!(e.contains("`sa` has dtype BF16; gemm_fp8 takes F32"), "{e}");
}
