//! Foreign tensors: what a Python object exposing DLPack (`__dlpack__`, `__dlpack_device__`) or
//! `__cuda_array_interface__` says about its memory — address, shape, strides, element type
//! and device — read without linking the library that made it (PyTorch, CuPy, numpy, …).
//!
//! A CUDA `torch.Tensor` on torch's current stream is read from its own fields ([`read_torch`]:
//! the same facts, without DLPack's per-tensor export cost); otherwise DLPack is preferred
//! (PyTorch's bf16 tensors have no `__cuda_array_interface__`): the
//! capsule's `DLManagedTensor` (legacy, `"dltensor"`) or `DLManagedTensorVersioned`
//! (`"dltensor_versioned"`, DLPack ≥ 1.0) is read in place and never consumed, so the
//! capsule's own destructor gives it back to the producer; the caller keeps the Python object
//! alive for the call, so the memory outlives every launch issued with it.
//!
//! Invariants: reading never fails for an odd tensor (another device, an element type tirx has
//! no kernel for, a negative stride) — those are recorded in [`Foreign`] and refused by the
//! op's checks with a message naming the argument; only an object that speaks neither protocol
//! (or speaks it wrongly) is an error here.

use std::ffi::{CStr, c_void};
use std::sync::{Arc, Mutex};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict, PyTuple};
use tirx::abi::ElemType;

use crate::error::BindError;

/// Where a tensor's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// CUDA device memory on this ordinal (DLPack's `kDLCUDA`).
    Cuda(usize),
    /// CUDA device memory on the device that owns the pointer (`__cuda_array_interface__`
    /// does not say which; the driver is asked once a GPU is open).
    CudaPointer,
    /// Anything else: DLPack's device type and id (`kDLCPU` = 1, …).
    Other(i32, i32),
}

impl Place {
    /// In words, for errors (`cpu`, `cuda:1`, `dlpack device type 10 (id 0)`).
    pub fn describe(self) -> String {
        match self {
            Place::Cuda(i) => format!("cuda:{i}"),
            Place::CudaPointer => "cuda".into(),
            Place::Other(1, _) => "cpu".into(),
            Place::Other(3, _) => "pinned host memory (cuda_host)".into(),
            Place::Other(13, i) => format!("CUDA managed memory (device {i})"),
            Place::Other(10, i) => format!("rocm:{i}"),
            Place::Other(t, i) => format!("DLPack device type {t} (id {i})"),
        }
    }
}

/// A tensor as its producer describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Foreign {
    /// Its element type when tirx has one of that name, else the producer's name for it
    /// (`float64`, `int32`, `<i8`).
    pub dtype: Result<ElemType, String>,
    /// Extents, outermost first.
    pub shape: Vec<usize>,
    /// Strides in elements, outermost first (negative ones are kept, and refused later).
    pub strides: Vec<i64>,
    /// Address of element 0 (the producer's byte offset included).
    pub addr: u64,
    /// Where it lives.
    pub place: Place,
}

impl Foreign {
    /// The dtype's name, for errors.
    pub fn dtype_name(&self) -> String {
        match &self.dtype {
            Ok(e) => e.name().to_string(),
            Err(s) => s.clone(),
        }
    }

    /// Whether the tensor is C-contiguous (row-major, no gaps); size-1 dimensions may carry any
    /// stride, as PyTorch leaves them.
    pub fn is_contiguous(&self) -> bool {
        let mut want = 1i64;
        for (&n, &s) in self.shape.iter().zip(&self.strides).rev() {
            if n != 1 && s != want {
                return false;
            }
            want *= n as i64;
        }
        true
    }
}

/// DLPack's `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// DLPack's `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// DLPack's `DLTensor` (dlpack.h; the layout has not changed since DLPack 0.4).
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// DLPack's `DLManagedTensor`: the tensor first, then the producer's context and deleter.
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// DLPack ≥ 1.0's `DLManagedTensorVersioned`: version, context, deleter, flags, then the tensor.
#[repr(C)]
struct DlManagedTensorVersioned {
    version: [u32; 2],
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DlTensor,
}

/// DLPack's `kDLCUDA`.
const KDL_CUDA: i32 = 2;

/// The tirx element type of a DLPack dtype, or its name.
fn dl_dtype(t: DlDataType) -> Result<ElemType, String> {
    let kind = match t.code {
        0 => "int",
        1 => "uint",
        2 => "float",
        3 => "opaque",
        4 => "bfloat",
        5 => "complex",
        6 => "bool",
        10 => "float8_e4m3fn",
        12 => "float8_e5m2",
        14 => "float8_e8m0fnu",
        _ => "dtype code ",
    };
    let name = if kind == "dtype code " {
        format!("{kind}{} of {} bits", t.code, t.bits)
    } else if t.code >= 7 {
        // DLPack 1.1's float8 codes carry their width in the name.
        format!("{kind} of {} bits", t.bits)
    } else {
        format!("{kind}{}", t.bits)
    };
    if t.lanes != 1 {
        return Err(format!("{name}x{}", t.lanes));
    }
    match (t.code, t.bits) {
        (2, 16) => Ok(ElemType::F16),
        (2, 32) => Ok(ElemType::F32),
        (4, 16) => Ok(ElemType::Bf16),
        // DLPack 1.1: kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12 (torch ≥ 2.8 exports float8
        // with these codes; older torch refuses float8 in `__dlpack__`, and tirx reads a CUDA
        // torch tensor's dtype from the tensor itself on the current stream: `read_torch`).
        (10, 8) => Ok(ElemType::E4m3),
        (12, 8) => Ok(ElemType::E5m2),
        // kDLFloat8_e8m0fnu: MXFP8's factors.
        (14, 8) => Ok(ElemType::Ue8m0),
        _ => Err(name),
    }
}

/// The tirx element type of an array-interface type string (`<f2`, `<f4`), or the string.
fn typestr_dtype(s: &str) -> Result<ElemType, String> {
    match s {
        "<f2" => Ok(ElemType::F16),
        "<f4" => Ok(ElemType::F32),
        _ => Err(s.to_string()),
    }
}

/// DLPack's `stream` argument for a call launched on `stream` (0 = the legacy default stream,
/// which DLPack numbers 1): the producer makes the data ready on it.
pub fn dlpack_stream(stream: u64) -> i64 {
    if stream == 0 { 1 } else { stream as i64 }
}

/// Reads `obj` (argument `arg` of the call) through DLPack or `__cuda_array_interface__`.
/// `dl_stream` is passed to a CUDA DLPack producer as `__dlpack__(stream=…)`: the stream the
/// call runs on ([`dlpack_stream`]), or −1 (no synchronization) when the call runs on the
/// producer's own current stream (PyTorch's, as the Python layer knows).
pub fn read(obj: &Bound<'_, PyAny>, arg: &str, dl_stream: i64) -> Result<Foreign, BindError> {
    let not_a_tensor = || BindError::NotATensor {
        arg: arg.to_string(),
        got: obj
            .get_type()
            .name()
            .map_or_else(|_| "?".into(), |n| n.to_string()),
    };
    let py = obj.py();
    if dl_stream == -1
        && let Some(f) = read_torch(obj).map_err(|e| BindError::protocol(arg, "torch", e))?
    {
        return Ok(f);
    }
    if let Ok(export) = obj.getattr(intern!(py, "__dlpack__")) {
        return read_dlpack(obj, &export, arg, dl_stream);
    }
    if let Ok(cai) = obj.getattr(intern!(py, "__cuda_array_interface__")) {
        let dict = cai.cast_into::<PyDict>().map_err(|_| BindError::Protocol {
            arg: arg.to_string(),
            protocol: "__cuda_array_interface__",
            why: "it is not a dict".into(),
        })?;
        return read_cai(&dict, arg);
    }
    Err(not_a_tensor())
}

/// `sys.modules`, fetched once (the dict itself is never replaced).
static SYS_MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// What the torch reader looks up in `torch`, kept with the module it came from: its `Tensor`
/// class (`None` for a module named torch without one) and its dtype objects (singletons, so a
/// tensor's dtype is told by identity, without formatting its name). Read again whenever
/// `sys.modules["torch"]` is another object than the one kept (the tests put a stand-in there).
struct TorchSeen {
    module: Py<PyAny>,
    tensor: Option<Py<PyAny>>,
    dtypes: Vec<(Py<PyAny>, ElemType)>,
}

/// The torch reader's view of the module last seen. The lock is held only to compare or
/// swap the pointer, never across a Python call: Python code may release the GIL or call
/// back into tirx, and either would deadlock on a lock held through it.
static TORCH_SEEN: Mutex<Option<Arc<TorchSeen>>> = Mutex::new(None);

/// torch's dtype names of the element types tirx has (the names `str(dtype)` gives, less
/// `torch.`).
const TORCH_DTYPES: [(&str, ElemType); 7] = [
    ("bfloat16", ElemType::Bf16),
    ("float16", ElemType::F16),
    ("float32", ElemType::F32),
    ("float8_e4m3fn", ElemType::E4m3),
    ("float8_e5m2", ElemType::E5m2),
    ("float8_e8m0fnu", ElemType::Ue8m0),
    ("float4_e2m1fn_x2", ElemType::E2m1x2),
];

impl TorchSeen {
    /// What is kept for `module`, read from it if another module was seen last.
    fn kept(module: &Bound<'_, PyAny>) -> Arc<TorchSeen> {
        let lock = || TORCH_SEEN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(seen) = lock().as_ref().filter(|s| s.module.is(module)) {
            return seen.clone();
        }
        let fresh = Arc::new(TorchSeen::of(module));
        let old = lock().replace(fresh.clone());
        // Dropped without the lock: releasing the old module's objects may run Python code.
        drop(old);
        fresh
    }

    fn of(module: &Bound<'_, PyAny>) -> TorchSeen {
        let py = module.py();
        let dtypes = TORCH_DTYPES
            .iter()
            .filter_map(|&(name, e)| Some((module.getattr(name).ok()?.unbind(), e)))
            .collect();
        TorchSeen {
            module: module.clone().unbind(),
            tensor: module
                .getattr(intern!(py, "Tensor"))
                .ok()
                .map(Bound::unbind),
            dtypes,
        }
    }
}

/// The tirx element type of a torch dtype object, or torch's name for it: by identity with the
/// kept dtype objects, else by its name (`str(dtype)`).
fn torch_dtype(
    dtype: &Bound<'_, PyAny>,
    kept: &[(Py<PyAny>, ElemType)],
) -> PyResult<Result<ElemType, String>> {
    if let Some(&(_, e)) = kept.iter().find(|(d, _)| d.is(dtype)) {
        return Ok(Ok(e));
    }
    let name: String = dtype.str()?.extract()?;
    let name = name.trim_start_matches("torch.");
    Ok(TORCH_DTYPES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, e)| e)
        .ok_or_else(|| name.to_string()))
}

/// A tuple of ints (torch's `shape` and `stride()`) read in place; any other sequence through
/// PyO3's generic extraction.
fn ints(seq: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    match seq.cast::<PyTuple>() {
        Ok(t) => t.iter().map(|x| x.extract::<i64>()).collect(),
        Err(_) => seq.extract(),
    }
}

/// A CUDA `torch.Tensor` read from its own fields (`data_ptr()`, `shape`, `stride()`,
/// `dtype`, `get_device()`) — for a call on torch's current stream only (`dl_stream` −1), where
/// DLPack's export has nothing to synchronize and would only add its cost (about 5 µs per
/// tensor on the H200, `kernels/bench/host_overhead.py`). `None` when `obj` is not such a
/// tensor (torch not imported, another class, not on a CUDA device, or a lazy negation or
/// conjugation view, which DLPack's export refuses with torch's own message): DLPack reads it.
///
/// Eight Python calls a tensor (issue #32): the class is checked by identity first (a
/// subclass, `nn.Parameter`, by `isinstance`), the dtype by identity with torch's dtype
/// objects, and `shape`/`stride()` read as tuples in place.
fn read_torch(obj: &Bound<'_, PyAny>) -> PyResult<Option<Foreign>> {
    let py = obj.py();
    let modules = SYS_MODULES
        .get_or_try_init(py, || -> PyResult<Py<PyDict>> {
            Ok(py
                .import(intern!(py, "sys"))?
                .getattr(intern!(py, "modules"))?
                .cast_into::<PyDict>()?
                .unbind())
        })?
        .bind(py);
    let Some(torch) = modules.get_item(intern!(py, "torch"))? else {
        return Ok(None);
    };
    let seen = TorchSeen::kept(&torch);
    let Some(class) = seen.tensor.as_ref().map(|c| c.bind(py)) else {
        return Ok(None);
    };
    if !(obj.get_type().is(class) || obj.is_instance(class)?)
        || !obj.getattr(intern!(py, "is_cuda"))?.is_truthy()?
        || obj.call_method0(intern!(py, "is_neg"))?.is_truthy()?
        || obj.call_method0(intern!(py, "is_conj"))?.is_truthy()?
    {
        return Ok(None);
    }
    let shape = ints(&obj.getattr(intern!(py, "shape"))?)?;
    let shape: Vec<usize> = shape.into_iter().map(|n| n.max(0) as usize).collect();
    let strides = ints(&obj.call_method0(intern!(py, "stride"))?)?;
    let addr: u64 = obj.call_method0(intern!(py, "data_ptr"))?.extract()?;
    let ordinal: i64 = obj.call_method0(intern!(py, "get_device"))?.extract()?;
    let dtype = torch_dtype(&obj.getattr(intern!(py, "dtype"))?, &seen.dtypes)?;
    Ok(Some(Foreign {
        dtype,
        shape,
        strides,
        addr,
        place: Place::Cuda(ordinal.max(0) as usize),
    }))
}

fn read_dlpack(
    obj: &Bound<'_, PyAny>,
    export: &Bound<'_, PyAny>,
    arg: &str,
    dl_stream: i64,
) -> Result<Foreign, BindError> {
    let py = obj.py();
    let err = |e: PyErr| BindError::protocol(arg, "DLPack", e);
    // Ask where it lives first: a tensor on another device is refused without exporting it.
    if let Ok(device) = obj.getattr(intern!(py, "__dlpack_device__")) {
        let dev: (i32, i32) = device.call0().and_then(|d| d.extract()).map_err(err)?;
        if dev.0 != KDL_CUDA {
            return Ok(Foreign {
                dtype: Err("?".into()),
                shape: vec![],
                strides: vec![],
                addr: 0,
                place: Place::Other(dev.0, dev.1),
            });
        }
    }
    let kwargs = PyDict::new(py);
    kwargs
        .set_item(intern!(py, "stream"), dl_stream)
        .map_err(err)?;
    let capsule = export
        .call(PyTuple::empty(py), Some(&kwargs))
        .map_err(err)?;
    let capsule = capsule
        .cast_into::<PyCapsule>()
        .map_err(|_| BindError::Protocol {
            arg: arg.to_string(),
            protocol: "DLPack",
            why: "`__dlpack__()` did not return a capsule".into(),
        })?;
    const LEGACY: &CStr = c"dltensor";
    const VERSIONED: &CStr = c"dltensor_versioned";
    if let Ok(p) = capsule.pointer_checked(Some(LEGACY)) {
        // SAFETY: a capsule named "dltensor" holds a DLManagedTensor (DLPack's contract),
        // alive while the capsule is (we hold it) and not consumed by us.
        let t = unsafe { &(*p.as_ptr().cast::<DlManagedTensor>()).dl_tensor };
        return Ok(unsafe { read_dl_tensor(t) });
    }
    if let Ok(p) = capsule.pointer_checked(Some(VERSIONED)) {
        // SAFETY: as above, for DLPack ≥ 1.0's versioned struct; its major version 1 keeps
        // this layout.
        let m = unsafe { &*p.as_ptr().cast::<DlManagedTensorVersioned>() };
        if m.version[0] != 1 {
            return Err(BindError::Protocol {
                arg: arg.to_string(),
                protocol: "DLPack",
                why: format!(
                    "DLPack version {}.{} is not 1.x",
                    m.version[0], m.version[1]
                ),
            });
        }
        return Ok(unsafe { read_dl_tensor(&m.dl_tensor) });
    }
    Err(BindError::Protocol {
        arg: arg.to_string(),
        protocol: "DLPack",
        why: "the capsule is neither \"dltensor\" nor \"dltensor_versioned\" (already consumed?)"
            .into(),
    })
}

/// # Safety
/// `t` must be a valid `DLTensor`: `shape` (and `strides`, unless null) point at `ndim` values.
unsafe fn read_dl_tensor(t: &DlTensor) -> Foreign {
    let ndim = t.ndim.max(0) as usize;
    let shape: Vec<i64> = if ndim == 0 || t.shape.is_null() {
        vec![]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }.to_vec()
    };
    let shape: Vec<usize> = shape.iter().map(|&n| n.max(0) as usize).collect();
    let strides = if t.strides.is_null() || ndim == 0 {
        compact_strides(&shape)
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(t.strides, ndim) }.to_vec()
    };
    let place = match t.device.device_type {
        KDL_CUDA => Place::Cuda(t.device.device_id.max(0) as usize),
        other => Place::Other(other, t.device.device_id),
    };
    Foreign {
        dtype: dl_dtype(t.dtype),
        shape,
        strides,
        addr: (t.data as u64).wrapping_add(t.byte_offset),
        place,
    }
}

fn compact_strides(shape: &[usize]) -> Vec<i64> {
    let mut out = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * shape[i + 1] as i64;
    }
    out
}

fn read_cai(d: &Bound<'_, PyDict>, arg: &str) -> Result<Foreign, BindError> {
    let bad = |why: String| BindError::Protocol {
        arg: arg.to_string(),
        protocol: "__cuda_array_interface__",
        why,
    };
    let get = |key: &str| -> Result<Option<Bound<'_, PyAny>>, BindError> {
        d.get_item(key).map_err(|e| bad(e.to_string()))
    };
    let shape: Vec<usize> = get("shape")?
        .ok_or_else(|| bad("no \"shape\"".into()))?
        .extract()
        .map_err(|_| bad("\"shape\" is not a tuple of non-negative ints".into()))?;
    let typestr: String = get("typestr")?
        .ok_or_else(|| bad("no \"typestr\"".into()))?
        .extract()
        .map_err(|_| bad("\"typestr\" is not a string".into()))?;
    let (ptr, _readonly): (u64, bool) = get("data")?
        .ok_or_else(|| bad("no \"data\"".into()))?
        .extract()
        .map_err(|_| bad("\"data\" is not (pointer, read-only)".into()))?;
    let dtype = typestr_dtype(&typestr);
    let item = typestr[2..].parse::<i64>().unwrap_or(1).max(1);
    let strides = match get("strides")? {
        Some(s) if !s.is_none() => {
            let bytes: Vec<i64> = s
                .extract()
                .map_err(|_| bad("\"strides\" is not a tuple of ints".into()))?;
            if bytes.len() != shape.len() {
                return Err(bad(format!(
                    "{} strides for {} dimensions",
                    bytes.len(),
                    shape.len()
                )));
            }
            if let Some(b) = bytes.iter().find(|&&b| b % item != 0) {
                return Err(bad(format!(
                    "a stride of {b} bytes is not a whole number of {item}-byte elements"
                )));
            }
            bytes.iter().map(|b| b / item).collect()
        }
        _ => compact_strides(&shape),
    };
    Ok(Foreign {
        dtype,
        shape,
        strides,
        addr: ptr,
        place: Place::CudaPointer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dlpack_dtypes() {
        let t = |code, bits, lanes| dl_dtype(DlDataType { code, bits, lanes });
        assert_eq!(t(4, 16, 1), Ok(ElemType::Bf16));
        assert_eq!(t(2, 16, 1), Ok(ElemType::F16));
        assert_eq!(t(2, 32, 1), Ok(ElemType::F32));
        assert_eq!(t(2, 64, 1), Err("float64".into()));
        assert_eq!(t(0, 32, 1), Err("int32".into()));
        assert_eq!(t(2, 16, 2), Err("float16x2".into()));
        assert_eq!(t(10, 8, 1), Ok(ElemType::E4m3));
        assert_eq!(t(12, 8, 1), Ok(ElemType::E5m2));
        assert_eq!(t(11, 8, 1), Err("dtype code 11 of 8 bits".into()));
        assert_eq!(typestr_dtype("<f2"), Ok(ElemType::F16));
        assert_eq!(typestr_dtype("<i8"), Err("<i8".into()));
    }

    #[test]
    fn contiguity_ignores_unit_dims() {
        let f = |shape: &[usize], strides: &[i64]| Foreign {
            dtype: Ok(ElemType::Bf16),
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            addr: 0,
            place: Place::Cuda(0),
        };
        assert!(f(&[4, 6], &[6, 1]).is_contiguous());
        assert!(f(&[4, 1, 6], &[6, 99, 1]).is_contiguous());
        assert!(!f(&[4, 6], &[8, 1]).is_contiguous());
        assert!(!f(&[4, 6], &[1, 4]).is_contiguous());
        assert_eq!(compact_strides(&[2, 3, 4]), vec![12, 4, 1]);
    }
}
