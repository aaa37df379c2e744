//! `BindError`: every way a Python call can be refused, as a typed value, and the Python
//! exception each becomes.
//!
//! Invariants: every refusal names the argument (`a`, `weight`, …) as the Python signature
//! spells it, and happens before any launch; the runtime's and the dispatcher's own errors
//! pass through with their messages unchanged (the table of candidates included).
//!
//! Exceptions (all subclasses of `tirx.TirxError`, itself a `RuntimeError`):
//! `ArgumentError` (a tensor or option the op cannot take), `NoGpuError` (no driver, no such
//! device), `NoKernelFitsError` (the dispatcher's table: nothing compiled takes this problem
//! on this device — a Hopper-only op on a Blackwell GPU among them), and `TirxError` itself
//! for everything else the runtime refuses.

use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use tirx::RuntimeError;

create_exception!(
    _tirx,
    TirxError,
    PyRuntimeError,
    "A call tirx refused, or a runtime failure."
);
create_exception!(
    _tirx,
    ArgumentError,
    TirxError,
    "A tensor or option the op cannot take."
);
create_exception!(
    _tirx,
    NoGpuError,
    TirxError,
    "No CUDA driver, or no GPU with that ordinal."
);
create_exception!(
    _tirx,
    NoKernelFitsError,
    TirxError,
    "No compiled kernel takes this problem on this device (the message holds the table)."
);

/// Why a call is refused.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The argument speaks neither DLPack nor `__cuda_array_interface__`.
    #[error(
        "`{arg}` is a {got}, not a tensor: tirx takes objects with `__dlpack__` (torch, numpy, \
         cupy, jax) or `__cuda_array_interface__`"
    )]
    NotATensor {
        /// The argument.
        arg: String,
        /// Its Python type.
        got: String,
    },
    /// The object's protocol answer is malformed.
    #[error("`{arg}`: its {protocol} export failed: {why}")]
    Protocol {
        /// The argument.
        arg: String,
        /// `DLPack` or `__cuda_array_interface__`.
        protocol: &'static str,
        /// What went wrong.
        why: String,
    },
    /// The tensor is not in CUDA device memory.
    #[error("`{arg}` is on {place}; tirx kernels run on CUDA tensors (move it with `.cuda()`)")]
    WrongDevice {
        /// The argument.
        arg: String,
        /// Where it is.
        place: String,
    },
    /// Two tensors of one call are on different GPUs.
    #[error("`{arg}` is on {place} but `{first}` is on {first_place}: one call runs on one GPU")]
    DevicesDisagree {
        /// The argument.
        arg: String,
        /// Where it is.
        place: String,
        /// The first tensor of the call.
        first: String,
        /// Where that one is.
        first_place: String,
    },
    /// An element type the op has no kernel for.
    #[error("`{arg}` has dtype {got}; tirx.{op} takes {want}")]
    Dtype {
        /// The argument.
        arg: String,
        /// Its dtype.
        got: String,
        /// The op.
        op: &'static str,
        /// What it takes, in words.
        want: String,
    },
    /// A layout the op cannot read.
    #[error(
        "`{arg}` (shape {shape:?}, strides {strides:?}) is not contiguous: tirx.{op} needs {want}"
    )]
    NotContiguous {
        /// The argument.
        arg: String,
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<i64>,
        /// The op.
        op: &'static str,
        /// The layout it needs, in words (call `.contiguous()`).
        want: String,
    },
    /// Shapes that disagree, or a rank the op does not take.
    #[error("tirx.{op}: {why}")]
    Shape {
        /// The op.
        op: &'static str,
        /// What disagrees.
        why: String,
    },
    /// An option the op does not take (an unknown activation, a bias with α/β).
    #[error("tirx.{op}: {why}")]
    Option {
        /// The op.
        op: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The runtime's or the dispatcher's refusal, unchanged.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl BindError {
    /// A protocol failure carrying Python's own message.
    pub fn protocol(arg: &str, protocol: &'static str, e: PyErr) -> BindError {
        BindError::Protocol {
            arg: arg.to_string(),
            protocol,
            why: e.to_string(),
        }
    }
}

impl From<BindError> for PyErr {
    fn from(e: BindError) -> PyErr {
        let msg = e.to_string();
        match e {
            BindError::Runtime(RuntimeError::NoDriver(_) | RuntimeError::NoGpu { .. }) => {
                NoGpuError::new_err(msg)
            }
            BindError::Runtime(RuntimeError::NoKernelFits { .. }) => {
                NoKernelFitsError::new_err(msg)
            }
            BindError::Runtime(_) => TirxError::new_err(msg),
            _ => ArgumentError::new_err(msg),
        }
    }
}
