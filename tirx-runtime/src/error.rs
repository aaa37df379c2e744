//! `RuntimeError`: every way loading, checking or launching a kernel can fail, as a typed value.
//!
//! Invariants:
//! - Nothing in this crate panics on a machine without a driver or a GPU; it returns
//!   [`RuntimeError::NoDriver`] or [`RuntimeError::NoGpu`].
//! - Argument errors name the tensor (the user's parameter name), the dimension (outermost = 0)
//!   and, where one is involved, the shape symbol, so the message points at the call site's mistake.
//! - Driver failures keep the driver's code ([`RuntimeError::Driver`]); a PTX load failure also
//!   keeps the JIT's own log ([`RuntimeError::ModuleLoad`]).

use cudarc::driver::{DriverError, sys};
use tirx_ir::abi::{ElemType, Swizzle, Target};

/// An error of the tirx runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The CUDA driver library (`libcuda.so`) could not be found or loaded.
    #[error("no CUDA driver: {0}")]
    NoDriver(String),

    /// The driver is present but there is no GPU with this ordinal.
    #[error("no GPU with ordinal {ordinal}: the driver reports {found} device(s)")]
    NoGpu {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        found: usize,
    },

    /// The device is not one tirx targets, or not the one the kernel was compiled for.
    #[error("{}", unsupported_device(*cc, *want))]
    UnsupportedDevice {
        /// The device's compute capability.
        cc: (i32, i32),
        /// The target the kernel was compiled for, when a kernel was involved.
        want: Option<Target>,
    },

    /// A tensor's extent disagrees with its shape symbol's value (bound earlier or fixed).
    #[error(
        "tensor `{tensor}` dim {dim} (`{symbol}`) is {got}, but `{symbol}` = {expected} (from {bound_by})"
    )]
    ShapeMismatch {
        /// The tensor whose extent disagrees.
        tensor: String,
        /// Dimension index, outermost = 0.
        dim: usize,
        /// The shape symbol of that dimension.
        symbol: String,
        /// The tensor's extent.
        got: u64,
        /// The symbol's value.
        expected: u64,
        /// Where the value came from: "`a` dim 0" or "the signature".
        bound_by: String,
    },

    /// A tensor's extent is not the fixed one its declaration gives (`#[shape(M, 1)]`,
    /// `#[shape(M, 2 * HALF)]` with the config's constants folded).
    #[error("tensor `{tensor}` dim {dim} is {got}, but the kernel fixes it at {expected}")]
    FixedExtent {
        /// The tensor whose extent differs.
        tensor: String,
        /// Dimension index, outermost = 0.
        dim: usize,
        /// The fixed extent.
        expected: u64,
        /// The tensor's extent.
        got: u64,
    },

    /// A kernel's `static_assert` over shape symbols does not hold for these tensors.
    #[error("`{entry}` needs `{assertion}`, which does not hold with {values}")]
    ShapeAssert {
        /// The entry point.
        entry: String,
        /// The assertion as the user wrote it (`D % 64 == 0`).
        assertion: String,
        /// The values of the shape symbols it mentions (`D = 96`), and why it could not be
        /// evaluated where that is the reason (`a difference is negative`).
        values: String,
    },

    /// A scalar argument of another type than the kernel declares (an `f32` for an `i32`
    /// parameter, a `u32` for an `i32`, …); checked before any launch.
    #[error("`{entry}`'s scalar argument `{name}` is {expected}, but a {got} was passed")]
    ScalarType {
        /// The entry point.
        entry: String,
        /// The scalar parameter.
        name: String,
        /// Its declared type (`f32`, `i32`, `u32`).
        expected: &'static str,
        /// The type of the value passed.
        got: &'static str,
    },
    /// The launch passed a different number of scalar arguments than the kernel takes.
    #[error("`{entry}` takes {expected} scalar argument(s) ({names}), but {got} were passed")]
    ScalarCount {
        /// The entry point.
        entry: String,
        /// Scalars passed.
        got: usize,
        /// Scalars the kernel takes.
        expected: usize,
        /// Their names, in order.
        names: String,
    },

    /// A tensor's element type is not the declared one.
    #[error("tensor `{tensor}` has element type {}, but the kernel takes {}", got.name(), expected.name())]
    ElemMismatch {
        /// The tensor.
        tensor: String,
        /// The argument's element type.
        got: ElemType,
        /// The declared element type.
        expected: ElemType,
    },

    /// A tensor has the wrong number of dimensions.
    #[error("tensor `{tensor}` has rank {got}, but the kernel takes rank {expected} ({shape})")]
    RankMismatch {
        /// The tensor.
        tensor: String,
        /// The argument's rank.
        got: usize,
        /// The declared rank.
        expected: usize,
        /// The declared shape, e.g. `[M, K]`.
        shape: String,
    },

    /// A TMA tensor's stride is not a multiple of 16 bytes.
    #[error(
        "tensor `{tensor}` dim {dim} has a stride of {stride_bytes} bytes; TMA needs a multiple of 16 \
         (pad the rows to a multiple of 16 bytes)"
    )]
    StrideMisaligned {
        /// The tensor.
        tensor: String,
        /// Dimension index, outermost = 0.
        dim: usize,
        /// The stride in bytes.
        stride_bytes: u64,
    },

    /// A tensor's base address is not aligned enough.
    #[error("tensor `{tensor}` starts at {addr:#x}, which is not {align}-byte aligned")]
    BaseMisaligned {
        /// The tensor.
        tensor: String,
        /// The base address.
        addr: u64,
        /// The alignment required (16 for TMA, the element size otherwise).
        align: u64,
    },

    /// A tensor's innermost dimension is not contiguous.
    #[error(
        "tensor `{tensor}` has innermost stride {stride}; tirx kernels need it to be 1 (row-major)"
    )]
    NotContiguous {
        /// The tensor.
        tensor: String,
        /// The innermost stride, in elements.
        stride: u64,
    },

    /// A tensor has an extent of 0, so there is nothing to compute.
    #[error("tensor `{tensor}` dim {dim} (`{symbol}`) is 0: empty problem")]
    EmptyProblem {
        /// The tensor.
        tensor: String,
        /// Dimension index, outermost = 0.
        dim: usize,
        /// The shape symbol of that dimension.
        symbol: String,
    },

    /// The grid evaluated to zero CTAs in some dimension.
    #[error("the grid {grid:?} is empty")]
    EmptyGrid {
        /// The evaluated grid.
        grid: [u64; 3],
    },

    /// The grid is larger than the device allows in some dimension.
    #[error("grid dim {dim} is {value} CTAs; the device allows at most {limit}")]
    GridTooLarge {
        /// 0 = x, 1 = y, 2 = z.
        dim: usize,
        /// The evaluated extent.
        value: u64,
        /// The device limit.
        limit: u64,
    },

    /// A shape symbol passed as a `u32` kernel parameter does not fit.
    #[error("`{symbol}` = {value} does not fit the kernel's 32-bit parameter")]
    DimTooLarge {
        /// The symbol.
        symbol: String,
        /// Its value.
        value: u64,
    },

    /// The kernel needs more dynamic shared memory than the device gives one block.
    #[error(
        "the kernel needs {need} bytes of dynamic shared memory; the device allows {limit} per block"
    )]
    SmemTooLarge {
        /// Bytes the kernel declares.
        need: u32,
        /// The device's opt-in limit.
        limit: u32,
    },

    /// The kernel needs more threads per block than the device allows.
    #[error("the kernel needs {threads} threads per block; the device allows {limit}")]
    TooManyThreads {
        /// Threads per CTA.
        threads: u32,
        /// The device limit.
        limit: u32,
    },

    /// The cluster does not tile the grid (the driver would answer `CUDA_ERROR_INVALID_CLUSTER_SIZE`).
    #[error("cluster {cluster:?} does not divide grid {grid:?} in dim {dim}")]
    ClusterDoesNotDivideGrid {
        /// The evaluated grid.
        grid: [u32; 3],
        /// The cluster shape.
        cluster: [u32; 3],
        /// The first dimension that does not divide (0 = x).
        dim: usize,
    },

    /// The cluster has more CTAs than a portable cluster may.
    #[error("cluster {cluster:?} has {size} CTAs; at most {limit} are allowed")]
    ClusterTooLarge {
        /// The cluster shape.
        cluster: [u32; 3],
        /// Its CTA count.
        size: u32,
        /// The limit.
        limit: u32,
    },

    /// A TMA box (or the tensor it reads) breaks a rule of `cuTensorMapEncodeTiled`.
    #[error("TMA descriptor for tensor `{tensor}`: {reason}")]
    TmaBox {
        /// The tensor.
        tensor: String,
        /// Which rule, with the numbers.
        reason: TmaReason,
    },

    /// The driver's JIT rejected the PTX.
    #[error("loading PTX for `{entry}` failed with {code:?}:\n{log}")]
    ModuleLoad {
        /// The entry the module was loaded for.
        entry: String,
        /// The driver's code.
        code: sys::CUresult,
        /// The JIT's error log (empty if the driver wrote none).
        log: String,
    },

    /// The number of tensor arguments is not the number the kernel declares.
    #[error("`{entry}` takes {expected} tensor(s) ({names}), but {got} were passed")]
    ArgCount {
        /// The entry.
        entry: String,
        /// Arguments passed.
        got: usize,
        /// Tensors declared.
        expected: usize,
        /// The declared names, comma separated.
        names: String,
    },

    /// A tensor argument lives in another CUDA context than this runtime's.
    #[error("tensor `{tensor}` was allocated by another runtime (another CUDA context)")]
    WrongContext {
        /// The tensor.
        tensor: String,
    },

    /// Host data or a view does not fit the shape and strides asked for.
    #[error("{what}: needs {need} elements, has {have}")]
    BufferTooSmall {
        /// What was being built.
        what: String,
        /// Elements the shape and strides reach.
        need: usize,
        /// Elements available.
        have: usize,
    },

    /// Strides given for a shape do not have one entry per dimension.
    #[error("strides {strides:?} do not match shape {shape:?}: give one stride per dimension")]
    LayoutMismatch {
        /// The shape.
        shape: Vec<usize>,
        /// The strides.
        strides: Vec<usize>,
    },

    /// The signature breaks one of its own invariants (a compiler bug, not a user error).
    #[error("invalid signature for `{entry}`: {reason}")]
    BadSignature {
        /// The entry.
        entry: String,
        /// What is wrong.
        reason: String,
    },

    /// No compiled variant matches the configuration and target asked for.
    #[error("{}", no_such_kernel(kernel, config, *target, available))]
    NoSuchKernel {
        /// The kernel's name.
        kernel: String,
        /// The configuration asked for.
        config: String,
        /// The target asked for.
        target: Target,
        /// Every (config, target) compiled.
        available: Vec<(String, Target)>,
    },

    /// The host-side dispatcher found no artifact that fits the problem; `table` lists every
    /// candidate with why it was refused (one line each), like the compile-time dispatcher.
    #[error("no kernel fits {problem}; the candidates:\n{table}")]
    NoKernelFits {
        /// The problem asked for (`gemm tn plain, bf16 -> bf16, 1000x1000x1000`).
        problem: String,
        /// One line per candidate artifact: kernel/config, target, and why it was refused.
        table: String,
    },

    /// A CUDA driver call failed.
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
}

/// Which rule of `cuTensorMapEncodeTiled` a TMA box breaks (CUDA Driver API, §6.30).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TmaReason {
    /// Tensor rank outside 1..=5.
    #[error("rank {rank} is outside 1..=5")]
    Rank {
        /// The tensor's rank.
        rank: usize,
    },
    /// The box has another rank than the tensor.
    #[error("the box has {box_rank} dims but the tensor has rank {rank}")]
    BoxRank {
        /// Box rank.
        box_rank: usize,
        /// Tensor rank.
        rank: usize,
    },
    /// A box extent of 0 or over 256.
    #[error("box dim {dim} (innermost = 0) is {extent}; it must be in 1..=256")]
    BoxExtent {
        /// Box dimension, innermost first.
        dim: usize,
        /// Its extent.
        extent: u32,
    },
    /// The innermost box row is not a multiple of 16 bytes.
    #[error("the inner box row is {bytes} bytes; it must be a multiple of 16")]
    InnerBoxNotMultipleOf16 {
        /// Bytes of one box row.
        bytes: u32,
    },
    /// The innermost box row is wider than the swizzle span.
    #[error("the inner box row is {bytes} bytes, wider than the {} swizzle span of {span} bytes", swizzle.name())]
    InnerBoxExceedsSwizzle {
        /// Bytes of one box row.
        bytes: u32,
        /// The swizzle.
        swizzle: Swizzle,
        /// Its span.
        span: u32,
    },
    /// A global extent of 0 or over 2^32.
    #[error("dim {dim} (outermost = 0) is {extent}; TMA needs 1..=2^32")]
    Extent {
        /// Dimension, outermost = 0.
        dim: usize,
        /// Its extent.
        extent: u64,
    },
    /// A global stride at or over 2^40 bytes.
    #[error(
        "dim {dim} (outermost = 0) has a stride of {stride_bytes} bytes; TMA allows less than 2^40"
    )]
    StrideTooLarge {
        /// Dimension, outermost = 0.
        dim: usize,
        /// Stride in bytes.
        stride_bytes: u64,
    },
}

fn unsupported_device(cc: (i32, i32), want: Option<Target>) -> String {
    let (major, minor) = cc;
    match want {
        Some(t) => format!(
            "the kernel was compiled for {} but the device has compute capability {major}.{minor}",
            t.name()
        ),
        None => format!(
            "the device has compute capability {major}.{minor}; tirx targets sm_90a (9.0) and sm_100a (10.0)"
        ),
    }
}

fn no_such_kernel(
    kernel: &str,
    config: &str,
    target: Target,
    available: &[(String, Target)],
) -> String {
    let mut s = format!(
        "`{kernel}` has no variant for config `{config}` on {}; compiled:",
        target.name()
    );
    if available.is_empty() {
        s.push_str(" none");
    }
    for (c, t) in available {
        s.push_str(&format!("\n  config `{c}` on {}", t.name()));
    }
    s
}
