//! The CPU side of a Python call's host path, timed without a GPU (issue #32): the phases
//! `_tirx._host_profile` splits a call into, less the driver's calls and the Python
//! attribute reads, for the two calls `kernels/bench/host_overhead.py` measures on the H200
//! (`tirx.softmax(x, out=y)` on x [64, 4096] bf16; `tirx.gemm(a, wt.t(), out=d)` on a
//! [64, 1024] and wt [1024, 1024]).
//!
//! `cargo test --release -p tirx-py host_path -- --ignored --nocapture` prints the median ns
//! of each piece, the way each phase ran before (the dispatcher's remembered choice, cudarc's
//! driver probe) beside the way it runs now (this thread's kept choice, the probe kept).

use std::hint::black_box;
use std::time::Instant;

use tirx::abi::ElemType;
use tirx::problem::RowOp;
use tirx::runtime::TensorMeta;
use tirx_kernels::dispatch::{self, Device};

use crate::chosen;
use crate::host;
use crate::ops::{self, Call, GemmArgs, GemmFp8Args, ScaleArg};
use crate::tensor::{Foreign, Place};

/// The median over 21 batches of `n` calls of `f`, in ns per call.
fn median_ns(n: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..n.min(1000) {
        f();
    }
    let mut batches: Vec<f64> = (0..21)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

/// A CUDA bf16 tensor on GPU 0 with these strides (the checks never read the memory).
fn foreign(shape: &[usize], strides: &[i64], addr: u64) -> Foreign {
    Foreign {
        dtype: Ok(ElemType::Bf16),
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        addr,
        place: Place::Cuda(0),
    }
}

fn softmax_call(x: &Foreign, y: &Foreign) -> Call {
    ops::row(RowOp::Softmax, x, None, None, Some(y), 1e-6).unwrap()
}

fn gemm_call(a: &Foreign, b: &Foreign, d: &Foreign) -> Call {
    ops::gemm(&GemmArgs {
        a,
        b,
        c: None,
        bias: None,
        activation: None,
        residual: None,
        alpha: 1.0,
        beta: 0.0,
        out: Some(d),
        out_dtype: ElemType::Bf16,
    })
    .unwrap()
}

/// The choice as every call made it before: the request, the op's tensors, the device's
/// description and `choose_remembered` (its text key, its lock).
fn choose_remembered(call: &Call) -> &'static tirx::KernelArtifact {
    let req = host::request(&call.op);
    let metas = host::metas(&call.op);
    let tensors: Vec<&TensorMeta> = metas.iter().collect();
    let device = Device::h200();
    dispatch::choose_remembered(req.as_ref(), &tensors, &[], &device)
        .unwrap()
        .artifact
}

/// The choice as a repeated call makes it now: the request (the launch needs it) and this
/// thread's kept choice.
fn choose_kept(call: &Call) -> &'static tirx::KernelArtifact {
    let req = host::request(&call.op);
    black_box(&req);
    chosen::get(&call.op, 0).unwrap()
}

fn time_call(name: &str, check: impl Fn() -> Call) {
    let call = check();
    let artifact = choose_remembered(&call);
    chosen::keep(&call.op, 0, artifact);
    assert!(std::ptr::eq(choose_kept(&call), artifact));
    let check_ns = median_ns(20_000, || {
        black_box(check());
    });
    let before = median_ns(20_000, || {
        black_box(choose_remembered(&call));
    });
    let after = median_ns(20_000, || {
        black_box(choose_kept(&call));
    });
    let req = host::request(&call.op);
    let args = median_ns(20_000, || {
        black_box(req.arguments(artifact));
    });
    println!(
        "{name}: check {check_ns:.0} ns; choose {before:.0} ns before (choose_remembered), \
         {after:.0} ns now (kept choice); launch arguments {args:.0} ns ({}/{})",
        artifact.kernel, artifact.config
    );
}

#[test]
#[ignore = "timing: cargo test --release -p tirx-py host_path -- --ignored --nocapture"]
fn host_path_timing() {
    const ADDR: u64 = 0x7f00_0000_0000;
    let probe_before = median_ns(200, || {
        // SAFETY: only tries `dlopen` on the candidate library names.
        black_box(unsafe { cudarc::driver::sys::is_culib_present() });
    });
    let probe_now = median_ns(200_000, || {
        black_box(tirx::runtime::driver_present());
    });
    println!(
        "driver probe (every call's context save): {probe_before:.0} ns before \
         (is_culib_present), {probe_now:.1} ns now (kept); driver present: {}",
        tirx::runtime::driver_present()
    );
    let x = foreign(&[64, 4096], &[4096, 1], ADDR);
    let y = foreign(&[64, 4096], &[4096, 1], ADDR + (1 << 20));
    time_call("softmax x [64, 4096]", || softmax_call(&x, &y));
    let a = foreign(&[64, 1024], &[1024, 1], ADDR);
    let b = foreign(&[1024, 1024], &[1, 1024], ADDR + (1 << 20)); // wt.t()
    let d = foreign(&[64, 1024], &[1024, 1], ADDR + (4 << 20));
    time_call("gemm a [64, 1024] · wt.t() [1024, 1024]", || {
        gemm_call(&a, &b, &d)
    });
}

/// A kept choice is found only for the same words: another layout, another address
/// alignment class, another device or another option asks the dispatcher again.
#[test]
fn kept_choices_answer_only_their_own_words() {
    const ADDR: u64 = 0x7f00_0000_0000;
    let x = foreign(&[8, 1000], &[1000, 1], ADDR);
    let y = foreign(&[8, 1000], &[1000, 1], ADDR + 4096);
    let call = softmax_call(&x, &y);
    let artifact = choose_remembered(&call);
    chosen::keep(&call.op, 0, artifact);
    assert!(std::ptr::eq(chosen::get(&call.op, 0).unwrap(), artifact));
    // Another buffer at the same alignment: the same choice.
    let y2 = foreign(&[8, 1000], &[1000, 1], ADDR + 8192);
    assert!(chosen::get(&softmax_call(&x, &y2).op, 0).is_some());
    // Another device, alignment, shape, op or ε: not kept.
    assert!(chosen::get(&call.op, 1).is_none());
    let odd = foreign(&[8, 1000], &[1000, 1], ADDR + 2);
    assert!(chosen::get(&softmax_call(&x, &odd).op, 0).is_none());
    let wider = foreign(&[8, 1024], &[1024, 1], ADDR);
    assert!(chosen::get(&softmax_call(&wider, &wider).op, 0).is_none());
    let w = foreign(&[1000], &[1], ADDR);
    let rms = ops::row(RowOp::RmsNorm, &x, Some(&w), None, Some(&y), 1e-6).unwrap();
    assert!(chosen::get(&rms.op, 0).is_none());
    let eps = ops::row(RowOp::Softmax, &x, None, None, Some(&y), 1e-5).unwrap();
    assert!(chosen::get(&eps.op, 0).is_none());
}

/// The FP8 GEMM's choice is kept by its words too: the accumulation (`use_fast_accum`), the
/// scales' form and per-tensor values, and each tensor's layout; another of any asks again.
#[test]
fn kept_fp8_choices_answer_only_their_own_words() {
    const ADDR: u64 = 0x7f00_0000_0000;
    let fp8 = |shape: &[usize], strides: &[i64], addr: u64| Foreign {
        dtype: Ok(ElemType::E4m3),
        ..foreign(shape, strides, addr)
    };
    let a = fp8(&[256, 512], &[512, 1], ADDR);
    let b = fp8(&[512, 384], &[1, 512], ADDR + (1 << 20)); // w.t(), w [384, 512]
    let d = foreign(&[256, 384], &[384, 1], ADDR + (2 << 20));
    let call = |sa: f32, fast: bool, d: &Foreign| {
        ops::gemm_fp8(&GemmFp8Args {
            a: &a,
            b: &b,
            scale_a: &ScaleArg::Value(sa),
            scale_b: &ScaleArg::Value(0.5),
            out: Some(d),
            out_dtype: ElemType::Bf16,
            use_fast_accum: fast,
        })
        .unwrap()
    };
    let promoted = call(2.0, false, &d);
    let artifact = choose_remembered(&promoted);
    chosen::keep(&promoted.op, 0, artifact);
    assert!(std::ptr::eq(
        chosen::get(&call(2.0, false, &d).op, 0).unwrap(),
        artifact
    ));
    // use_fast_accum, another scale, another output layout: not kept.
    assert!(chosen::get(&call(2.0, true, &d).op, 0).is_none());
    assert!(chosen::get(&call(3.0, false, &d).op, 0).is_none());
    let d_f32 = Foreign {
        dtype: Ok(ElemType::F32),
        ..foreign(&[256, 384], &[384, 1], ADDR + (2 << 20))
    };
    assert!(chosen::get(&call(2.0, false, &d_f32).op, 0).is_none());
}
