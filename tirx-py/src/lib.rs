//! `tirx._tirx`: the Python extension behind the `tirx` package (pyo3, abi3).
//!
//! Each op (`gemm`, `gemm_fp8`, `gemm_block_scaled`, `row`, `silu_mul`, `attention`) reads its tensors through DLPack or
//! `__cuda_array_interface__` ([`tensor`]), checks them ([`ops`]) — all before any driver call,
//! so every misuse is an exception on a machine without a GPU too — then opens the device the
//! tensors are on (once per process; its primary context, PyTorch's), borrows the caller's
//! stream, and launches the artifact the host dispatcher chooses ([`host`]). With
//! `explain="h200"`/`"b200"` (a described device) or `"this"` (the tensors' GPU) nothing is
//! launched: the choice and every candidate's verdict come back as text.
//!
//! Outputs are allocated by the caller (the package's Python layer, with `torch.empty`, so
//! PyTorch's caching allocator owns them) and passed in.
//!
//! Invariants: nothing here panics on bad input (each refusal is a `BindError`, raised as a
//! `tirx.TirxError` subclass); a launch is issued only on tensors the checks, the runtime's
//! planner and the dispatcher all accepted; the GIL is held throughout, so the Python objects
//! (and their memory) outlive the call, and the launch is queued on the stream before return.

pub mod chosen;
pub mod error;
pub mod host;
#[cfg(test)]
mod host_timing;
pub mod ops;
pub mod profile;
pub mod tensor;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use tirx::abi::ElemType;
use tirx::problem::RowOp;
use tirx::{Runtime, RuntimeError};

use crate::error::BindError;
use crate::ops::Call;
use crate::tensor::{Foreign, Place};

/// Opened devices, a slot per ordinal: a runtime (and its loaded kernels) lives for the
/// process. A slot is set once, so finding an opened device is one atomic load, not a lock and
/// a map lookup per call (issue #32: the runtime phase cost 5.4 µs a call on the H200).
static RUNTIMES: [OnceLock<Arc<Runtime>>; RUNTIME_SLOTS] =
    [const { OnceLock::new() }; RUNTIME_SLOTS];

/// Ordinals with a slot; a device past them (no machine here has 64 GPUs) is opened anew on
/// every call: correct, only slow.
const RUNTIME_SLOTS: usize = 64;

/// Held while a device is opened, so two threads opening one device make one runtime.
static OPENING: Mutex<()> = Mutex::new(());

fn open(ordinal: usize) -> Result<Arc<Runtime>, BindError> {
    let Some(slot) = RUNTIMES.get(ordinal) else {
        return Ok(Arc::new(Runtime::new(ordinal)?));
    };
    if let Some(rt) = slot.get() {
        return Ok(rt.clone());
    }
    let _opening = OPENING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rt) = slot.get() {
        return Ok(rt.clone());
    }
    // A refusal (no driver, no such GPU) is not kept: the next call asks again.
    let rt = Arc::new(Runtime::new(ordinal)?);
    Ok(slot.get_or_init(|| rt).clone())
}

/// The device of a `__cuda_array_interface__` pointer, from the driver.
fn ordinal_of_pointer(addr: u64) -> Result<usize, BindError> {
    use cudarc::driver::sys;
    if !tirx::runtime::driver_present() {
        // Runtime::new's own message for a machine without a driver.
        return Err(Runtime::new(0).err().map_or(
            BindError::Runtime(RuntimeError::NoDriver(
                "libcuda.so could not be loaded".into(),
            )),
            BindError::Runtime,
        ));
    }
    let mut ordinal: i32 = -1;
    // SAFETY: the driver library is loaded (checked above); cuInit is idempotent; the query
    // writes one int and reads no memory at `addr`.
    let r = unsafe {
        sys::cuInit(0).result().and_then(|()| {
            sys::cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                addr,
            )
            .result()
        })
    };
    match r {
        Ok(()) if ordinal >= 0 => Ok(ordinal as usize),
        _ => Err(BindError::WrongDevice {
            arg: "the first tensor".into(),
            place: format!("{addr:#x}, which the driver does not know as device memory"),
        }),
    }
}

thread_local! {
    /// The runtime this thread last launched with: (ordinal, stream, the device's runtime on
    /// that stream). Python code launches on one stream for long stretches, so the next call
    /// usually finds it here instead of wrapping the stream again.
    static ON_STREAM: RefCell<Option<(usize, u64, Arc<Runtime>)>> = const { RefCell::new(None) };
}

/// The runtime for `call`'s device, on `stream`.
fn runtime_for(call: &Call, stream: u64) -> Result<Arc<Runtime>, BindError> {
    let ordinal = match call.place {
        Place::Cuda(i) => i,
        _ => ordinal_of_pointer(call.probe_addr)?,
    };
    let kept = ON_STREAM.with_borrow(|k| match k {
        Some((o, s, rt)) if (*o, *s) == (ordinal, stream) => Some(rt.clone()),
        _ => None,
    });
    if let Some(rt) = kept {
        return Ok(rt);
    }
    let base = open(ordinal)?;
    // SAFETY: `stream` is the caller's current stream on this device (the Python layer passes
    // torch's current stream, or 0 for the legacy default stream), alive for the call; the
    // work issued on it is ordered with the caller's own. The runtime kept for the next call
    // issues nothing until a call passes the same stream handle on the same device again,
    // whose caller makes the same promise for it then (a borrowed stream is never destroyed
    // by its wrapper).
    let rt = Arc::new(unsafe {
        base.on_borrowed_stream(stream as usize as cudarc::driver::sys::CUstream)
    });
    ON_STREAM.set(Some((ordinal, stream, rt.clone())));
    Ok(rt)
}

/// The thread's current CUDA context, put back when dropped: opening a device and launching
/// bind its primary context to the thread, and the CUDA runtime (PyTorch) reads its current
/// device from that context — a call on `cuda:1` must not leave `cuda:1` current for the
/// torch code after it.
struct RestoreContext(Option<cudarc::driver::sys::CUcontext>);

impl RestoreContext {
    fn save() -> RestoreContext {
        use cudarc::driver::sys;
        if !tirx::runtime::driver_present() {
            return RestoreContext(None);
        }
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the driver library is loaded; the call writes one handle (or fails before
        // cuInit, leaving null: no context was current).
        let _ = unsafe { sys::cuCtxGetCurrent(&mut ctx) };
        RestoreContext(Some(ctx))
    }
}

impl Drop for RestoreContext {
    fn drop(&mut self) {
        use cudarc::driver::sys;
        let Some(saved) = self.0 else { return };
        let mut now: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the driver library is loaded (`save` found it); writes one handle. Asking
        // is cheaper than setting: a launch on torch's device leaves its context current.
        let _ = unsafe { sys::cuCtxGetCurrent(&mut now) };
        if now != saved {
            // SAFETY: `saved` was current on this thread when saved (or null); setting it
            // back only changes this thread's binding.
            let _ = unsafe { sys::cuCtxSetCurrent(saved) };
        }
    }
}

/// Launches `call`, or explains it on the described device `explain` names.
fn finish(call: Call, stream: u64, explain: Option<&str>) -> Result<String, BindError> {
    let _restore = profile::time(profile::Phase::Runtime, || {
        matches!(explain, None | Some("this")).then(RestoreContext::save)
    });
    match explain {
        // The Python layer checks a call before it allocates the outputs.
        Some("check") => Ok(String::new()),
        Some("this") => {
            let rt = runtime_for(&call, stream)?;
            Ok(host::explain(
                &call.op,
                &tirx_kernels::dispatch::Device::of(&rt)?,
            ))
        }
        Some(name) => match host::device_named(name) {
            Some(d) => Ok(host::explain(&call.op, &d)),
            None => Err(BindError::Option {
                op: "explain",
                why: format!("device {name:?} is not one of \"this\", \"h200\", \"b200\""),
            }),
        },
        None => {
            let rt = profile::time(profile::Phase::Runtime, || runtime_for(&call, stream))?;
            // SAFETY: every address in `call` came from a tensor protocol describing device
            // memory of the device `rt` is on, held alive by the caller (the GIL is held and
            // the Python objects are borrowed for the call); the checks, the planner and the
            // dispatcher accepted the shapes and strides.
            Ok(unsafe { host::launch(&call.op, &rt)? })
        }
    }
}

fn read(obj: &Bound<'_, PyAny>, arg: &str, dl_stream: i64) -> Result<Foreign, BindError> {
    profile::time(profile::Phase::Read, || tensor::read(obj, arg, dl_stream))
}

fn read_opt(
    obj: Option<&Bound<'_, PyAny>>,
    arg: &str,
    dl_stream: i64,
) -> Result<Option<Foreign>, BindError> {
    obj.filter(|o| !o.is_none())
        .map(|o| read(o, arg, dl_stream))
        .transpose()
}

/// The `stream=` DLPack producers get: `dlpack_stream` when the caller says (−1: the call runs
/// on the producer's current stream, nothing to synchronize), else the launch stream's.
fn dl(stream: u64, dlpack_stream: Option<i64>) -> i64 {
    dlpack_stream.unwrap_or_else(|| tensor::dlpack_stream(stream))
}

/// A launch writes into the caller's `out`: refused without one, unless the call only
/// explains its choice.
fn need_out(op: &'static str, has_out: bool, explain: Option<&str>) -> Result<(), BindError> {
    if has_out || explain.is_some() {
        return Ok(());
    }
    Err(BindError::Option {
        op,
        why: "`out` is required to launch".into(),
    })
}

fn dtype_named(op: &'static str, s: &str) -> Result<ElemType, BindError> {
    match s.trim_start_matches("torch.") {
        "bfloat16" | "bf16" => Ok(ElemType::Bf16),
        "float16" | "half" | "f16" => Ok(ElemType::F16),
        "float32" | "float" | "f32" => Ok(ElemType::F32),
        other => Err(BindError::Option {
            op,
            why: format!("out_dtype {other:?} is not one of bfloat16, float16, float32"),
        }),
    }
}

/// `out = act(a @ b + bias) [+ residual]` or `alpha·(a @ b) + beta·c`; returns the chosen `kernel/config`
/// (or the explanation).
#[pyfunction]
#[pyo3(signature = (a, b, out=None, *, c=None, bias=None, activation=None, residual=None, alpha=1.0, beta=0.0, out_dtype=None, stream=0, dlpack_stream=None, explain=None))]
#[allow(clippy::too_many_arguments)]
fn gemm(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    c: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    activation: Option<&str>,
    residual: Option<&Bound<'_, PyAny>>,
    alpha: f32,
    beta: f32,
    out_dtype: Option<&str>,
    stream: u64,
    dlpack_stream: Option<i64>,
    explain: Option<&str>,
) -> PyResult<String> {
    let ds = dl(stream, dlpack_stream);
    let (a, b) = (read(a, "a", ds)?, read(b, "b", ds)?);
    let (c, bias) = (read_opt(c, "c", ds)?, read_opt(bias, "bias", ds)?);
    let residual = read_opt(residual, "residual", ds)?;
    let out = read_opt(out, "out", ds)?;
    let out_dtype = match out_dtype {
        Some(s) => dtype_named("gemm", s)?,
        None => a.dtype.clone().unwrap_or(ElemType::Bf16),
    };
    need_out("gemm", out.is_some(), explain)?;
    let call = profile::time(profile::Phase::Check, || {
        ops::gemm(&ops::GemmArgs {
            a: &a,
            b: &b,
            c: c.as_ref(),
            bias: bias.as_ref(),
            activation,
            residual: residual.as_ref(),
            alpha,
            beta,
            out: out.as_ref(),
            out_dtype,
        })
    })?;
    Ok(finish(call, stream, explain)?)
}

/// A scale argument of `gemm_fp8`: a Python number (per-tensor), else a tensor. A number is
/// told apart by its type, not by `float(x)`, which a one-element CUDA tensor would answer
/// by synchronizing the device.
fn read_scale(
    obj: &Bound<'_, PyAny>,
    arg: &str,
    dl_stream: i64,
) -> Result<ops::ScaleArg, BindError> {
    use pyo3::types::{PyFloat, PyInt};
    if obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>() {
        let v: f64 = obj
            .extract()
            .map_err(|e| BindError::protocol(arg, "float", e))?;
        return Ok(ops::ScaleArg::Value(v as f32));
    }
    Ok(ops::ScaleArg::Tensor(read(obj, arg, dl_stream)?))
}

/// `out = s ⊙ (a @ b)` in FP8 (`torch._scaled_mm`'s form): `a` `[M, K]`, `b` `[K, N]` the
/// transpose of a row-major `[N, K]`, float8_e4m3fn or float8_e5m2; scales per-tensor,
/// row-wise or block-wise (`ops::gemm_fp8`); `use_fast_accum` as torch's (default false:
/// promoted accumulation). Returns the chosen `kernel/config` (or the explanation).
#[pyfunction]
#[pyo3(signature = (a, b, scale_a, scale_b, out=None, *, out_dtype=None, use_fast_accum=false, stream=0, dlpack_stream=None, explain=None))]
#[allow(clippy::too_many_arguments)]
fn gemm_fp8(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    scale_a: &Bound<'_, PyAny>,
    scale_b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    out_dtype: Option<&str>,
    use_fast_accum: bool,
    stream: u64,
    dlpack_stream: Option<i64>,
    explain: Option<&str>,
) -> PyResult<String> {
    let ds = dl(stream, dlpack_stream);
    let (a, b) = (read(a, "a", ds)?, read(b, "b", ds)?);
    let sa = read_scale(scale_a, "scale_a", ds)?;
    let sb = read_scale(scale_b, "scale_b", ds)?;
    let out = read_opt(out, "out", ds)?;
    let out_dtype = match out_dtype {
        Some(s) => dtype_named("gemm_fp8", s)?,
        None => ElemType::Bf16,
    };
    need_out("gemm_fp8", out.is_some(), explain)?;
    let call = profile::time(profile::Phase::Check, || {
        ops::gemm_fp8(&ops::GemmFp8Args {
            a: &a,
            b: &b,
            scale_a: &sa,
            scale_b: &sb,
            out: out.as_ref(),
            out_dtype,
            use_fast_accum,
        })
    })?;
    if let ops::Op::GemmFp8(g) = &call.op
        && g.values_on_device
        && explain.is_none()
    {
        return Err(BindError::Option {
            op: "gemm_fp8",
            why: "per-tensor scales are launch parameters: pass them as floats (tirx.gemm_fp8 reads one-element scale tensors with `.item()`)"
                .into(),
        }
        .into());
    }
    Ok(finish(call, stream, explain)?)
}

/// Blackwell's block-scaled `out = (a·sfa) @ (b·sfb)` (MXFP8: float8_e4m3fn with
/// float8_e8m0fnu factors; NVFP4: float4_e2m1fn_x2 with UE4M3 factors as float8_e4m3fn), the
/// factor images in `scale_image`'s layout (`ops::gemm_block_scaled`). Returns the chosen
/// `kernel/config` (or the explanation); on a Hopper GPU, `NoKernelFitsError` naming sm_100a.
#[pyfunction]
#[pyo3(signature = (a, b, sfa, sfb, out=None, *, out_dtype=None, stream=0, dlpack_stream=None, explain=None))]
#[allow(clippy::too_many_arguments)]
fn gemm_block_scaled(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    sfa: &Bound<'_, PyAny>,
    sfb: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    out_dtype: Option<&str>,
    stream: u64,
    dlpack_stream: Option<i64>,
    explain: Option<&str>,
) -> PyResult<String> {
    let ds = dl(stream, dlpack_stream);
    let (a, b) = (read(a, "a", ds)?, read(b, "b", ds)?);
    let (sfa, sfb) = (read(sfa, "sfa", ds)?, read(sfb, "sfb", ds)?);
    let out = read_opt(out, "out", ds)?;
    let out_dtype = match out_dtype {
        Some(s) => dtype_named("gemm_block_scaled", s)?,
        None => ElemType::Bf16,
    };
    need_out("gemm_block_scaled", out.is_some(), explain)?;
    let call = profile::time(profile::Phase::Check, || {
        ops::gemm_block_scaled(&ops::BlockScaledArgs {
            a: &a,
            b: &b,
            sfa: &sfa,
            sfb: &sfb,
            out: out.as_ref(),
            out_dtype,
        })
    })?;
    Ok(finish(call, stream, explain)?)
}

/// A row op over the last dimension: `op` is `softmax`, `rms_norm` or `layer_norm`.
#[pyfunction]
#[pyo3(signature = (op, x, out=None, *, weight=None, bias=None, eps=1e-6, stream=0, dlpack_stream=None, explain=None))]
#[allow(clippy::too_many_arguments)]
fn row(
    op: &str,
    x: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    weight: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    eps: f32,
    stream: u64,
    dlpack_stream: Option<i64>,
    explain: Option<&str>,
) -> PyResult<String> {
    let ds = dl(stream, dlpack_stream);
    let op = match op {
        "softmax" => RowOp::Softmax,
        "rms_norm" | "rmsnorm" => RowOp::RmsNorm,
        "layer_norm" | "layernorm" => RowOp::LayerNorm,
        other => {
            return Err(BindError::Option {
                op: "row",
                why: format!("{other:?} is not softmax, rms_norm or layer_norm"),
            }
            .into());
        }
    };
    let x = read(x, "x", ds)?;
    let (w, b) = (read_opt(weight, "weight", ds)?, read_opt(bias, "bias", ds)?);
    let out = read_opt(out, "out", ds)?;
    need_out("row", out.is_some(), explain)?;
    let call = profile::time(profile::Phase::Check, || {
        ops::row(op, &x, w.as_ref(), b.as_ref(), out.as_ref(), eps)
    })?;
    Ok(finish(call, stream, explain)?)
}

/// `out = silu(x)·g`.
#[pyfunction]
#[pyo3(signature = (x, g, out=None, *, stream=0, dlpack_stream=None, explain=None))]
fn silu_mul(
    x: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    stream: u64,
    dlpack_stream: Option<i64>,
    explain: Option<&str>,
) -> PyResult<String> {
    let ds = dl(stream, dlpack_stream);
    let (x, g) = (read(x, "x", ds)?, read(g, "g", ds)?);
    let out = read_opt(out, "out", ds)?;
    need_out("silu_mul", out.is_some(), explain)?;
    let call = profile::time(profile::Phase::Check, || {
        ops::silu_mul(&x, &g, out.as_ref())
    })?;
    Ok(finish(call, stream, explain)?)
}

/// Attention forward on `[B, S, H, D]` tensors into `out` and `lse` (`[B, HQ, S]` f32).
#[pyfunction]
#[pyo3(signature = (q, k, v, out=None, lse=None, *, causal=false, scale=None, stream=0, dlpack_stream=None, explain=None))]
#[allow(clippy::too_many_arguments)]
fn attention(
    q: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    lse: Option<&Bound<'_, PyAny>>,
    causal: bool,
    scale: Option<f32>,
    stream: u64,
    dlpack_stream: Option<i64>,
    explain: Option<&str>,
) -> PyResult<String> {
    let ds = dl(stream, dlpack_stream);
    let (q, k, v) = (read(q, "q", ds)?, read(k, "k", ds)?, read(v, "v", ds)?);
    let (out, lse) = (read_opt(out, "out", ds)?, read_opt(lse, "lse", ds)?);
    if (out.is_none() || lse.is_none()) && explain.is_none() {
        return Err(BindError::Option {
            op: "attention",
            why: "`out` and `lse` are required to launch".into(),
        }
        .into());
    }
    let call = profile::time(profile::Phase::Check, || {
        ops::attention(&ops::AttentionArgs {
            q: &q,
            k: &k,
            v: &v,
            out: out.as_ref(),
            lse: lse.as_ref(),
            causal,
            scale,
        })
    })?;
    Ok(finish(call, stream, explain)?)
}

/// Every compiled artifact: `kernel`, `config`, `target`, `problem`, `consts`.
#[pyfunction]
fn list_kernels(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    host::list()
        .into_iter()
        .map(|l| {
            let d = PyDict::new(py);
            d.set_item("kernel", l.kernel)?;
            d.set_item("config", l.config)?;
            d.set_item("target", l.target)?;
            d.set_item("problem", l.problem)?;
            d.set_item("consts", l.consts.into_iter().collect::<HashMap<_, _>>())?;
            Ok(d)
        })
        .collect()
}

/// Whether a GPU tirx runs on is here: `(True, "NVIDIA H200 (sm_90a)")`, or `(False, why)`.
#[pyfunction]
#[pyo3(signature = (ordinal=0))]
fn device(ordinal: usize) -> (bool, String) {
    let _restore = RestoreContext::save();
    match open(ordinal) {
        Ok(rt) => match rt.target() {
            Ok(t) => (true, format!("{} ({})", rt.name(), t.name())),
            Err(e) => (false, e.to_string()),
        },
        Err(e) => (false, e.to_string()),
    }
}

/// Turns the per-phase host timing on or off ([`profile`]) and returns what was gathered
/// since the last call: `[(phase, calls, total_ns)]`.
#[pyfunction]
fn _host_profile(on: bool) -> Vec<(&'static str, u64, u64)> {
    profile::take(on)
}

/// The extension module.
#[pymodule]
fn _tirx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TirxError", py.get_type::<error::TirxError>())?;
    m.add("ArgumentError", py.get_type::<error::ArgumentError>())?;
    m.add("NoGpuError", py.get_type::<error::NoGpuError>())?;
    m.add(
        "NoKernelFitsError",
        py.get_type::<error::NoKernelFitsError>(),
    )?;
    m.add_function(wrap_pyfunction!(gemm, m)?)?;
    m.add_function(wrap_pyfunction!(gemm_fp8, m)?)?;
    m.add_function(wrap_pyfunction!(gemm_block_scaled, m)?)?;
    m.add_function(wrap_pyfunction!(row, m)?)?;
    m.add_function(wrap_pyfunction!(silu_mul, m)?)?;
    m.add_function(wrap_pyfunction!(attention, m)?)?;
    m.add_function(wrap_pyfunction!(list_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(device, m)?)?;
    m.add_function(wrap_pyfunction!(_host_profile, m)?)?;
    Ok(())
}
