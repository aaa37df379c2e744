//! From a checked [`Op`] over candle's CUDA storage to a launch on candle's stream.
//!
//! - The runtime: one [`Runtime`] per device ordinal for the process (its loaded kernels are
//!   kept), used through [`Runtime::on_borrowed_stream`] on the stream of the candle device
//!   the tensors live on, so tirx's work is ordered with candle's own. Both open the device's
//!   primary context, so candle's allocations are valid in tirx's launches.
//! - Outputs are allocated by candle (`CudaDevice::alloc`) on that stream after the checks,
//!   and handed back as candle storage; attention's log-sum-exp scratch is allocated the same
//!   way and freed (stream-ordered, after the kernel) when dropped.
//! - Events: candle's storages are read (written) through cudarc's pointer guards, so with
//!   cudarc's event tracking the launch waits for an input's last writer, and the read and
//!   write records are taken after the launch (`mark_read`, `mark_written`).
//! - The choice: the host dispatcher's, as the Rust entry points and the Python binding make
//!   it (`tirx-py/src/host.rs`, whose `launch` this follows): `dispatch::choose_remembered`,
//!   then the request's arguments for the chosen artifact, or the split-K plan's two launches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use candle_core::Layout;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use candle_core::cuda_backend::{CudaDevice, CudaStorage, CudaStorageSlice};
use tirx::runtime::TensorMeta;
use tirx::{Runtime, RuntimeError, TensorArg};
use tirx_kernels::attention::request::AttentionRequest;
use tirx_kernels::dispatch::{self, Device, ProblemDef};
use tirx_kernels::gemm::request::{Fp8ScaleArgs, GemmRequest, GemmTypes};
use tirx_kernels::gemm::split;
use tirx_kernels::row_kernels::family::SiluMulRequest;
use tirx_kernels::row_kernels::request::RowRequest;

use tirx::problem::Epilogue;

use crate::Error;
use crate::check::{Desc, Op};
use crate::fp8::{GemmFp8, Scales};

/// Opened devices by ordinal: a runtime (and its loaded kernels) lives for the process.
static RUNTIMES: Mutex<Option<HashMap<usize, Arc<Runtime>>>> = Mutex::new(None);

/// The runtime of `dev`'s GPU, issuing on `dev`'s stream.
fn runtime_for(dev: &CudaDevice) -> Result<Runtime, RuntimeError> {
    let stream = dev.cuda_stream();
    let ordinal = stream.context().ordinal();
    let base = {
        let mut map = RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
        let map = map.get_or_insert_with(HashMap::new);
        match map.get(&ordinal) {
            Some(rt) => rt.clone(),
            None => {
                let rt = Arc::new(Runtime::new(ordinal)?);
                map.insert(ordinal, rt.clone());
                rt
            }
        }
    };
    // SAFETY: `stream` is candle's stream of this device (its primary context), kept alive by
    // `dev` — which the caller's storage holds — while the work issued here is queued on it.
    Ok(unsafe { base.on_borrowed_stream(stream.cu_stream()) })
}

/// The address of `storage`'s element at `layout`'s start offset (the stream waits for the
/// storage's last writer first, when candle tracks events).
pub fn desc<'a>(storage: &CudaStorage, layout: &'a Layout) -> Desc<'a> {
    let stream = storage.device().cuda_stream();
    // Only the types some kernel takes have an address worth reading: the checks refuse the
    // others before it is used.
    let (base, size) = match &storage.slice {
        CudaStorageSlice::BF16(s) => (s.device_ptr(&stream).0, 2),
        CudaStorageSlice::F16(s) => (s.device_ptr(&stream).0, 2),
        CudaStorageSlice::F32(s) => (s.device_ptr(&stream).0, 4),
        CudaStorageSlice::F8E4M3(s) => (s.device_ptr(&stream).0, 1),
        _ => (0, 0),
    };
    Desc {
        dtype: storage.dtype(),
        shape: layout.shape().dims(),
        strides: layout.stride(),
        addr: base + (layout.start_offset() * size) as u64,
    }
}

/// A fresh allocation for `meta` on `dev`'s stream (its address written into `meta`).
fn alloc(dev: &CudaDevice, meta: &mut TensorMeta) -> Result<CudaStorage, Error> {
    let n = meta.shape.iter().product::<usize>().max(1);
    let stream = dev.cuda_stream();
    let candle = |e: candle_core::Error| Error::Alloc(e.to_string());
    // SAFETY: the kernel writes every element before anything reads it.
    let slice = match meta.elem {
        tirx::abi::ElemType::Bf16 => {
            let mut s = unsafe { dev.alloc::<tirx::bf16>(n) }.map_err(candle)?;
            meta.addr = s.device_ptr_mut(&stream).0;
            CudaStorageSlice::BF16(s)
        }
        tirx::abi::ElemType::F16 => {
            let mut s = unsafe { dev.alloc::<tirx::f16>(n) }.map_err(candle)?;
            meta.addr = s.device_ptr_mut(&stream).0;
            CudaStorageSlice::F16(s)
        }
        _ => {
            let mut s = unsafe { dev.alloc::<f32>(n) }.map_err(candle)?;
            meta.addr = s.device_ptr_mut(&stream).0;
            CudaStorageSlice::F32(s)
        }
    };
    Ok(CudaStorage {
        slice,
        device: dev.clone(),
    })
}

/// Allocates `op`'s outputs on `dev`, launches it on `dev`'s stream and returns the first
/// output (the op's result). `inputs`: the storages the op reads.
pub fn run(mut op: Op, dev: &CudaDevice, inputs: &[&CudaStorage]) -> Result<CudaStorage, Error> {
    let rt = runtime_for(dev).map_err(Error::Runtime)?;
    let mut outputs = Vec::new();
    for meta in op.outputs_mut() {
        outputs.push(alloc(dev, meta)?);
    }
    // SAFETY: every address in `op` is candle device memory of this context holding the
    // elements its shape and strides reach (the checks read them from candle's layouts; the
    // outputs were just allocated); the storages outlive the stream-ordered work, since candle
    // frees them on this stream.
    unsafe { launch(&op, &rt) }.map_err(Error::Runtime)?;
    let stream = dev.cuda_stream();
    for s in inputs {
        mark_read(s, &stream);
    }
    for s in &mut outputs {
        mark_written(s, &stream);
    }
    let _scratch = outputs.split_off(1);
    Ok(outputs.remove(0))
}

// The two below: with cudarc's event tracking (on unless candle's user turned it off), taking
// a slice's pointer on a stream records, when the returned guard drops, that the slice was
// read (written) there. Done after the launch, work on another stream that writes (reads) the
// slice then waits for the kernel. The pointer itself is not needed.

/// Records that `storage` was read on `stream`, after the launch.
fn mark_read(storage: &CudaStorage, stream: &CudaStream) {
    match &storage.slice {
        CudaStorageSlice::BF16(s) => drop(s.device_ptr(stream)),
        CudaStorageSlice::F16(s) => drop(s.device_ptr(stream)),
        CudaStorageSlice::F32(s) => drop(s.device_ptr(stream)),
        CudaStorageSlice::F8E4M3(s) => drop(s.device_ptr(stream)),
        _ => {}
    }
}

/// Records that `storage` was written on `stream`, after the launch.
fn mark_written(storage: &mut CudaStorage, stream: &CudaStream) {
    match &mut storage.slice {
        CudaStorageSlice::BF16(s) => drop(s.device_ptr_mut(stream)),
        CudaStorageSlice::F16(s) => drop(s.device_ptr_mut(stream)),
        CudaStorageSlice::F32(s) => drop(s.device_ptr_mut(stream)),
        _ => {}
    }
}

/// The dispatcher's request for a checked op.
fn request(op: &Op) -> Box<dyn ProblemDef> {
    match op {
        Op::Gemm { .. } => Box::new(gemm_request(op)),
        Op::GemmFp8(g) => Box::new(fp8_request(g)),
        Op::Row { op, x, w, y, eps } => Box::new(RowRequest {
            op: *op,
            x: x.clone(),
            w: w.clone(),
            b: None,
            y: y.clone(),
            eps: *eps,
        }),
        Op::SiluMul { x, g, y } => Box::new(SiluMulRequest {
            tensors: [x.clone(), g.clone(), y.clone()],
        }),
        Op::Attention {
            tensors,
            d,
            causal,
            scale,
        } => Box::new(AttentionRequest {
            d: *d,
            dv: *d,
            causal: *causal,
            elem: tensors[0].elem,
            tensors: tensors.clone(),
            scale_log2: scale * std::f32::consts::LOG2_E,
            tile: None,
        }),
    }
}

fn gemm_request(op: &Op) -> GemmRequest {
    let Op::Gemm {
        layout,
        a,
        b,
        bias,
        res,
        d,
    } = op
    else {
        unreachable!("gemm_request of a GEMM only")
    };
    // The residual after a bias is its own tensor (`BiasResidual`); without one it is C of the
    // scaled epilogue with α = β = 1, as tirx's Python binding asks for it.
    let (epilogue, bias, c, res, scalars) = match (bias, res) {
        (Some((meta, act)), Some(r)) => (
            Epilogue::BiasResidual(*act),
            Some(meta.clone()),
            None,
            Some(r.clone()),
            (1.0, 0.0),
        ),
        (Some((meta, act)), None) => (
            Epilogue::Bias(*act),
            Some(meta.clone()),
            None,
            None,
            (1.0, 0.0),
        ),
        (None, Some(r)) => (Epilogue::Scaled, None, Some(r.clone()), None, (1.0, 1.0)),
        (None, None) => (Epilogue::Plain, None, None, None, (1.0, 0.0)),
    };
    GemmRequest {
        layout: *layout,
        epilogue,
        types: GemmTypes {
            input: a.elem,
            output: d.elem,
        },
        shape: (a.shape[0], d.shape[1], a.shape[1]),
        a: a.clone(),
        b: b.clone(),
        c,
        bias,
        res,
        d: d.clone(),
        scalars,
        row_scales: None,
        factors: None,
        accum: tirx_kernels::gemm::fp8_ref::Fp8Accum::Fast,
    }
}

/// The FP8 GEMM's request (`GemmRequest::on_fp8`'s, from checked metas).
fn fp8_request(g: &GemmFp8) -> GemmRequest {
    let (epilogue, scalars, row_scales) = match &g.scales {
        Scales::Tensor(x, y) => (Epilogue::ScaleTensor, (*x, *y), None),
        Scales::Rows(sa, sb) => (
            Epilogue::ScaleRows,
            (1.0, 1.0),
            Some((sa.clone(), sb.clone())),
        ),
        Scales::Blocks(sa, sb) => (
            Epilogue::ScaleBlocks,
            (1.0, 1.0),
            Some((sa.clone(), sb.clone())),
        ),
    };
    GemmRequest {
        layout: tirx::problem::BLayout::Tn,
        epilogue,
        types: GemmTypes {
            input: g.a.elem,
            output: g.d.elem,
        },
        shape: (g.a.shape[0], g.d.shape[1], g.a.shape[1]),
        a: g.a.clone(),
        b: g.b.clone(),
        c: None,
        bias: None,
        res: None,
        d: g.d.clone(),
        scalars,
        row_scales,
        factors: None,
        accum: g.accum,
    }
}

/// Every tensor of the op (the remembered choice's key).
fn metas(op: &Op) -> Vec<TensorMeta> {
    match op {
        Op::Gemm {
            a, b, bias, res, d, ..
        } => {
            let mut v = vec![a.clone(), b.clone(), d.clone()];
            v.extend(bias.as_ref().map(|b| b.0.clone()));
            v.extend(res.clone());
            v
        }
        Op::GemmFp8(g) => {
            let mut v = vec![g.a.clone(), g.b.clone(), g.d.clone()];
            if let Scales::Rows(sa, sb) | Scales::Blocks(sa, sb) = &g.scales {
                v.extend([sa.clone(), sb.clone()]);
            }
            v
        }
        Op::SiluMul { x, g, y } => vec![x.clone(), g.clone(), y.clone()],
        Op::Row { x, w, y, .. } => {
            let mut v = vec![x.clone(), y.clone()];
            v.extend(w.clone());
            v
        }
        Op::Attention { tensors, .. } => tensors.to_vec(),
    }
}

/// Chooses the artifact for `op` on `rt`'s device and launches it on `rt`'s stream.
///
/// # Safety
/// Every tensor address in `op` must be device memory of `rt`'s context holding every element
/// its shape and strides reach, alive until the launched work is done.
unsafe fn launch(op: &Op, rt: &Runtime) -> Result<(), RuntimeError> {
    let req = request(op);
    let all = metas(op);
    let tensors: Vec<&TensorMeta> = all.iter().collect();
    let choice = dispatch::choose_remembered(req.as_ref(), &tensors, &[], &Device::of(rt)?)?;
    let artifact = choice.artifact;
    if let Op::Gemm { .. } = op
        && split::is_partial(artifact)
    {
        // A split-K artifact is a plan of two launches with a workspace: the GEMM host runs it,
        // with the tensors by the roles of the request (the residual as `c` or `res`).
        let g = gemm_request(op);
        // SAFETY: the caller's promise, for each tensor of the op.
        let arg = |m: &TensorMeta| unsafe { TensorArg::from_raw(rt, m.clone()) };
        let mut roles = vec![("a", arg(&g.a)), ("b", arg(&g.b)), ("d", arg(&g.d))];
        roles.extend(g.c.as_ref().map(|m| ("c", arg(m))));
        roles.extend(g.bias.as_ref().map(|m| ("bias", arg(m))));
        roles.extend(g.res.as_ref().map(|m| ("res", arg(m))));
        return split::launch_split_for(rt, artifact, &roles, &g);
    }
    if let Op::GemmFp8(g) = op
        && split::is_partial(artifact)
    {
        // The FP8 split-K plan (`fp8_splitk.rs`): its reduce applies the scales.
        // SAFETY: the caller's promise, for each tensor of the op.
        let arg = |m: &TensorMeta| unsafe { TensorArg::from_raw(rt, m.clone()) };
        let roles = [("a", arg(&g.a)), ("b", arg(&g.b)), ("d", arg(&g.d))];
        let vectors = match &g.scales {
            Scales::Rows(sa, sb) | Scales::Blocks(sa, sb) => Some((arg(sa), arg(sb))),
            Scales::Tensor(..) => None,
        };
        let scales = match (&g.scales, &vectors) {
            (Scales::Rows(..), Some((sa, sb))) => Fp8ScaleArgs::Rows(sa, sb),
            (Scales::Blocks(..), Some((sa, sb))) => Fp8ScaleArgs::Blocks(sa, sb),
            (Scales::Tensor(x, y), _) => Fp8ScaleArgs::Tensor(*x, *y),
            _ => unreachable!("vectors are present exactly for the row and block forms"),
        };
        return split::launch_fp8_split(rt, artifact, &roles, scales);
    }
    let (tensors, scalars) = req.arguments(artifact);
    let args: Vec<TensorArg<'_>> = tensors
        .into_iter()
        // SAFETY: the caller's promise, for each tensor of the op.
        .map(|m| unsafe { TensorArg::from_raw(rt, m) })
        .collect();
    rt.launch_with(artifact, &args, &scalars)
}
