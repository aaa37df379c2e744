//! Launch planning: checks tensor arguments against a kernel [`Signature`] and the device's
//! limits, and computes everything a launch needs. Pure: no driver calls, so all of it is
//! tested on a machine without a GPU.
//!
//! Preconditions: none on the arguments (every mismatch is an error value). The signature is
//! trusted to come from the tirx compiler; where it breaks its own invariants (an unknown tensor
//! or symbol, a zero cluster) the result is [`RuntimeError::BadSignature`], never a panic.
//!
//! Postconditions of a returned [`LaunchPlan`]:
//! - every shape symbol has one value, agreed on by every tensor that uses it; every fixed
//!   extent (a literal in a tensor's declared shape) is the tensor's extent, and every shape
//!   check (`Signature::checks`, the kernel's `static_assert`s over shape symbols) holds;
//! - every tensor has the declared element type and rank, a contiguous innermost dimension and
//!   no empty dimension; tensors read through TMA pass [`crate::tma::validate_tiled`];
//! - the grid is non-empty and within the device's limits, the cluster divides it, and the
//!   threads and dynamic shared memory fit one block;
//! - `params` and `param_offsets` follow `sig.params` one to one, packed from offset 0 with
//!   [`AbiParam::size_align`] (C struct layout). The launch hands the driver one pointer per
//!   parameter, so the driver's own placement does not have to match (on the H200 it puts a
//!   first 64-aligned descriptor at offset 48: it aligns within its constant bank).

use tirx_ir::abi::{AbiParam, ElemType, Signature, Swizzle};

use crate::error::RuntimeError;
use crate::tma;

/// A tensor argument as plain data: what planning needs to know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMeta {
    /// Element type.
    pub elem: ElemType,
    /// Extents, outermost first.
    pub shape: Vec<usize>,
    /// Strides in elements, outermost first (same length as `shape`).
    pub strides: Vec<usize>,
    /// Device address of element 0.
    pub addr: u64,
}

impl TensorMeta {
    /// A contiguous row-major tensor at `addr`.
    pub fn row_major(elem: ElemType, shape: &[usize], addr: u64) -> TensorMeta {
        TensorMeta {
            elem,
            shape: shape.to_vec(),
            strides: row_major_strides(shape),
            addr,
        }
    }

    /// The same elements with the two outermost dimensions merged: `[P, R, …]` as
    /// `[P·R, …]`, when the outer stride steps over whole rows of the next (`strides[0] =
    /// shape[1]·strides[1]`, as in any contiguous tensor); `None` otherwise or below two
    /// dimensions.
    pub fn merge_outer(&self) -> Option<TensorMeta> {
        let (shape, strides) = (&self.shape, &self.strides);
        if shape.len() < 2 || strides[0] != shape[1].checked_mul(strides[1])? {
            return None;
        }
        let mut meta = self.clone();
        meta.shape.splice(0..2, [shape[0].checked_mul(shape[1])?]);
        meta.strides.remove(0);
        Some(meta)
    }
}

/// Strides in elements of a contiguous row-major tensor of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// The device limits a launch is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Dynamic shared memory one block may opt in to, in bytes.
    pub max_dyn_smem: u32,
    /// Threads per block.
    pub max_threads_per_block: u32,
    /// CTAs per cluster without opting in to non-portable sizes.
    pub max_cluster_size: u32,
    /// Grid extent in CTAs per dimension (x, y, z).
    pub max_grid: [u32; 3],
    /// Streaming multiprocessors: the value of `SMS` in a grid.
    pub sm_count: u32,
}

impl DeviceLimits {
    /// The limits of an H100/H200 SXM: 227 KB opt-in shared memory, 1024 threads, portable
    /// clusters of 8, a grid of (2^31 - 1, 65535, 65535), 132 SMs.
    pub const HOPPER: DeviceLimits = DeviceLimits {
        max_dyn_smem: 227 * 1024,
        max_threads_per_block: 1024,
        max_cluster_size: 8,
        max_grid: [i32::MAX as u32, 65535, 65535],
        sm_count: 132,
    };
}

/// One kernel parameter's value, in `Signature::params` order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlannedParam {
    /// A TMA descriptor still to be encoded (it needs the driver) for tensor `tensor`.
    TensorMap {
        /// Index of the tensor in the argument list.
        tensor: usize,
        /// Box extents, innermost first.
        box_dims: Vec<u32>,
        /// Swizzle.
        swizzle: Swizzle,
    },
    /// A base address.
    Pointer(u64),
    /// A stride in elements.
    Stride(u64),
    /// A shape symbol's value.
    Dim(u32),
    /// A 32-bit scalar argument (`f32`, `i32`, `u32`), as its bits.
    Scalar(u32),
    /// A 64-bit scalar argument (`i64`, `u64`), as its bits.
    Scalar64(u64),
}

/// Everything a launch needs, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// Grid in CTAs.
    pub grid: [u32; 3],
    /// Block in threads.
    pub block: [u32; 3],
    /// Cluster in CTAs.
    pub cluster: [u32; 3],
    /// Dynamic shared memory in bytes.
    pub smem_bytes: u32,
    /// Parameter values, in signature order.
    pub params: Vec<PlannedParam>,
    /// Byte offset of each parameter in the parameter buffer.
    pub param_offsets: Vec<usize>,
    /// Size of the parameter buffer in bytes.
    pub param_bytes: usize,
    /// Value of every shape symbol, in the order first bound.
    pub symbols: Vec<(String, u64)>,
}

/// Checks `args` against `sig` and `limits` and plans the launch. See the module docs for what
/// a returned plan guarantees.
pub fn plan_launch(
    sig: &Signature,
    args: &[TensorMeta],
    limits: &DeviceLimits,
) -> Result<LaunchPlan, RuntimeError> {
    plan_launch_with(sig, args, &[], limits)
}

/// One scalar argument's value, typed: an `f32`, or an integer for an `i32`/`u32`/`i64`/
/// `u64` scalar parameter (`n: i32` in the kernel's signature).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarArg {
    /// For an `f32` parameter.
    F32(f32),
    /// For an `i32` parameter.
    I32(i32),
    /// For a `u32` parameter.
    U32(u32),
    /// For an `i64` parameter.
    I64(i64),
    /// For a `u64` parameter.
    U64(u64),
}

impl ScalarArg {
    /// The type it is for.
    pub fn elem(self) -> ElemType {
        match self {
            ScalarArg::F32(_) => ElemType::F32,
            ScalarArg::I32(_) => ElemType::I32,
            ScalarArg::U32(_) => ElemType::U32,
            ScalarArg::I64(_) => ElemType::I64,
            ScalarArg::U64(_) => ElemType::U64,
        }
    }
    /// Its 32 bits, as a 32-bit parameter holds them (the low 32 of a 64-bit value).
    pub fn bits(self) -> u32 {
        self.bits64() as u32
    }
    /// Its bits, zero-extended to 64 (a 64-bit parameter holds all of them).
    pub fn bits64(self) -> u64 {
        match self {
            ScalarArg::F32(v) => u64::from(v.to_bits()),
            ScalarArg::I32(v) => u64::from(v as u32),
            ScalarArg::U32(v) => u64::from(v),
            ScalarArg::I64(v) => v as u64,
            ScalarArg::U64(v) => v,
        }
    }
}

impl From<f32> for ScalarArg {
    fn from(v: f32) -> ScalarArg {
        ScalarArg::F32(v)
    }
}
impl From<i32> for ScalarArg {
    fn from(v: i32) -> ScalarArg {
        ScalarArg::I32(v)
    }
}
impl From<u32> for ScalarArg {
    fn from(v: u32) -> ScalarArg {
        ScalarArg::U32(v)
    }
}
impl From<i64> for ScalarArg {
    fn from(v: i64) -> ScalarArg {
        ScalarArg::I64(v)
    }
}
impl From<u64> for ScalarArg {
    fn from(v: u64) -> ScalarArg {
        ScalarArg::U64(v)
    }
}

/// [`plan_launch`] for a kernel that also takes `f32` scalar arguments: `scalars` in the
/// signature's order (`Signature::scalars`); a different count is a typed error, and so is a
/// kernel whose scalar is an integer ([`plan_launch_args`] passes those).
pub fn plan_launch_with(
    sig: &Signature,
    args: &[TensorMeta],
    scalars: &[f32],
    limits: &DeviceLimits,
) -> Result<LaunchPlan, RuntimeError> {
    let scalars: Vec<ScalarArg> = scalars.iter().map(|&v| ScalarArg::F32(v)).collect();
    plan_launch_args(sig, args, &scalars, limits)
}

/// [`plan_launch`] with typed scalar arguments, in the signature's order: a count or a type
/// that differs from the signature's (`Signature::scalar_types`) is a typed error
/// ([`RuntimeError::ScalarCount`], [`RuntimeError::ScalarType`]), before anything else.
pub fn plan_launch_args(
    sig: &Signature,
    args: &[TensorMeta],
    scalars: &[ScalarArg],
    limits: &DeviceLimits,
) -> Result<LaunchPlan, RuntimeError> {
    if scalars.len() != sig.scalars.len() {
        return Err(RuntimeError::ScalarCount {
            entry: sig.entry.clone(),
            got: scalars.len(),
            expected: sig.scalars.len(),
            names: sig.scalars.join(", "),
        });
    }
    check_scalars(sig, scalars)?;
    if args.len() != sig.tensors.len() {
        let names: Vec<&str> = sig.tensors.iter().map(|t| t.name.as_str()).collect();
        return Err(RuntimeError::ArgCount {
            entry: sig.entry.clone(),
            got: args.len(),
            expected: sig.tensors.len(),
            names: names.join(", "),
        });
    }
    let bindings = check_tensors(sig, args)?;
    check_shapes(sig, &bindings)?;
    check_tma_params(sig, args)?;
    let grid = eval_grid(sig, &bindings, limits)?;
    check_block(sig, &grid, limits)?;
    let params = plan_params(sig, args, scalars, &bindings)?;
    let (param_offsets, param_bytes) = layout_params(sig);
    Ok(LaunchPlan {
        grid,
        block: [sig.threads, 1, 1],
        cluster: sig.cluster,
        smem_bytes: sig.smem_bytes,
        params,
        param_offsets,
        param_bytes,
        symbols: bindings.into_iter().map(|b| (b.symbol, b.value)).collect(),
    })
}

/// Byte offsets of `sig`'s parameters packed in order with their alignments from offset 0,
/// and the total size (C struct layout).
pub fn layout_params(sig: &Signature) -> (Vec<usize>, usize) {
    let params = &sig.params;
    let mut offsets = Vec::with_capacity(params.len());
    let mut end = 0usize;
    for p in params {
        let (size, align) = p.size_align(sig);
        let offset = end.next_multiple_of(align);
        offsets.push(offset);
        end = offset + size;
    }
    (offsets, end)
}

/// A shape symbol's value and the first tensor dimension that gave it.
struct Binding {
    symbol: String,
    value: u64,
    bound_by: String,
}

fn lookup(bindings: &[Binding], symbol: &str) -> Option<u64> {
    bindings
        .iter()
        .find(|b| b.symbol == symbol)
        .map(|b| b.value)
}

/// Element type, rank, shape binding, emptiness, contiguity and (for non-TMA tensors) base
/// alignment of every tensor, in argument order.
fn check_tensors(sig: &Signature, args: &[TensorMeta]) -> Result<Vec<Binding>, RuntimeError> {
    let mut bindings: Vec<Binding> = Vec::new();
    for (decl, meta) in sig.tensors.iter().zip(args) {
        let tensor = decl.name.clone();
        if meta.elem != decl.elem {
            return Err(RuntimeError::ElemMismatch {
                tensor,
                got: meta.elem,
                expected: decl.elem,
            });
        }
        if meta.shape.len() != decl.shape.len() || meta.strides.len() != meta.shape.len() {
            return Err(RuntimeError::RankMismatch {
                tensor,
                got: meta.shape.len(),
                expected: decl.shape.len(),
                shape: format!("[{}]", decl.shape.join(", ")),
            });
        }
        for (dim, (symbol, &extent)) in decl.shape.iter().zip(&meta.shape).enumerate() {
            let got = extent as u64;
            // A literal in the shape (`#[shape(M, 64)]`) is a fixed extent; a name binds once.
            if let Ok(expected) = symbol.parse::<u64>() {
                if expected != got {
                    return Err(RuntimeError::FixedExtent {
                        tensor,
                        dim,
                        expected,
                        got,
                    });
                }
                continue;
            }
            let known = bindings
                .iter()
                .find(|b| &b.symbol == symbol)
                .map(|b| (b.value, b.bound_by.clone()));
            match known {
                Some((expected, _)) if expected == got => {}
                Some((expected, bound_by)) => {
                    return Err(RuntimeError::ShapeMismatch {
                        tensor,
                        dim,
                        symbol: symbol.clone(),
                        got,
                        expected,
                        bound_by,
                    });
                }
                None => bindings.push(Binding {
                    symbol: symbol.clone(),
                    value: got,
                    bound_by: format!("`{}` dim {dim}", decl.name),
                }),
            }
            if extent == 0 {
                return Err(RuntimeError::EmptyProblem {
                    tensor,
                    dim,
                    symbol: symbol.clone(),
                });
            }
        }
        if let Some(&inner) = meta.strides.last()
            && inner != 1
        {
            return Err(RuntimeError::NotContiguous {
                tensor,
                stride: inner as u64,
            });
        }
        let elem_bytes = u64::from(meta.elem.bytes());
        if !meta.addr.is_multiple_of(elem_bytes) {
            return Err(RuntimeError::BaseMisaligned {
                tensor,
                addr: meta.addr,
                align: elem_bytes,
            });
        }
    }
    Ok(bindings)
}

/// The kernel's `static_assert`s over shape symbols, in declaration order: the first that does
/// not hold is the error, with the values of the symbols it mentions.
fn check_shapes(sig: &Signature, bindings: &[Binding]) -> Result<(), RuntimeError> {
    for check in &sig.checks {
        let holds = check.holds(&|s| lookup(bindings, s));
        if holds == Some(true) {
            continue;
        }
        let mut values: Vec<String> = Vec::new();
        for s in check.lhs.symbols().into_iter().chain(check.rhs.symbols()) {
            let v = format!(
                "{s} = {}",
                lookup(bindings, s).map_or("?".to_string(), |v| v.to_string())
            );
            if !values.contains(&v) {
                values.push(v);
            }
        }
        if values.is_empty() {
            values.push("no shape symbol".into());
        }
        let mut values = values.join(", ");
        if holds.is_none() {
            values.push_str(
                " (a side cannot be evaluated: a negative difference, a division by zero or an overflow)",
            );
        }
        return Err(RuntimeError::ShapeAssert {
            entry: sig.entry.clone(),
            assertion: check.text.clone(),
            values,
        });
    }
    Ok(())
}

fn tensor_index(sig: &Signature, name: &str) -> Result<usize, RuntimeError> {
    sig.tensors
        .iter()
        .position(|t| t.name == name)
        .ok_or_else(|| RuntimeError::BadSignature {
            entry: sig.entry.clone(),
            reason: format!("a parameter names tensor `{name}`, which is not declared"),
        })
}

/// The TMA rules (16-byte base and strides, box limits) for every tensor read by a descriptor.
fn check_tma_params(sig: &Signature, args: &[TensorMeta]) -> Result<(), RuntimeError> {
    for p in &sig.params {
        if let AbiParam::TensorMap {
            tensor,
            box_dims,
            swizzle,
        } = p
        {
            let i = tensor_index(sig, tensor)?;
            tma::validate_tiled(tensor, &args[i], box_dims, *swizzle)?;
        }
    }
    Ok(())
}

fn eval_grid(
    sig: &Signature,
    bindings: &[Binding],
    limits: &DeviceLimits,
) -> Result<[u32; 3], RuntimeError> {
    let mut grid = [0u64; 3];
    for (g, expr) in grid.iter_mut().zip(&sig.grid) {
        let sms = u64::from(limits.sm_count);
        *g = expr.eval(sms, &|s| lookup(bindings, s)).ok_or_else(|| RuntimeError::BadSignature {
            entry: sig.entry.clone(),
            reason: format!(
                "grid expression `{expr}` uses a symbol no tensor binds, divides by zero or overflows"
            ),
        })?;
    }
    if grid.contains(&0) {
        return Err(RuntimeError::EmptyGrid { grid });
    }
    let mut out = [0u32; 3];
    for dim in 0..3 {
        let limit = u64::from(limits.max_grid[dim]);
        if grid[dim] > limit {
            return Err(RuntimeError::GridTooLarge {
                dim,
                value: grid[dim],
                limit,
            });
        }
        out[dim] = grid[dim] as u32;
    }
    Ok(out)
}

/// Threads, cluster shape and shared memory.
fn check_block(
    sig: &Signature,
    grid: &[u32; 3],
    limits: &DeviceLimits,
) -> Result<(), RuntimeError> {
    let bad = |reason: String| RuntimeError::BadSignature {
        entry: sig.entry.clone(),
        reason,
    };
    if sig.threads == 0 {
        return Err(bad("0 threads per block".into()));
    }
    if sig.threads > limits.max_threads_per_block {
        return Err(RuntimeError::TooManyThreads {
            threads: sig.threads,
            limit: limits.max_threads_per_block,
        });
    }
    let cluster = sig.cluster;
    if cluster.contains(&0) {
        return Err(bad(format!("cluster {cluster:?} has a zero dimension")));
    }
    let size = cluster.iter().map(|&c| u64::from(c)).product::<u64>();
    if size > u64::from(limits.max_cluster_size) {
        return Err(RuntimeError::ClusterTooLarge {
            cluster,
            size: size.min(u64::from(u32::MAX)) as u32,
            limit: limits.max_cluster_size,
        });
    }
    if let Some(dim) = (0..3).find(|&d| !grid[d].is_multiple_of(cluster[d])) {
        return Err(RuntimeError::ClusterDoesNotDivideGrid {
            grid: *grid,
            cluster,
            dim,
        });
    }
    if sig.smem_bytes > limits.max_dyn_smem {
        return Err(RuntimeError::SmemTooLarge {
            need: sig.smem_bytes,
            limit: limits.max_dyn_smem,
        });
    }
    Ok(())
}

/// Each scalar's type against the signature's (a signature without types takes `f32`s).
fn check_scalars(sig: &Signature, scalars: &[ScalarArg]) -> Result<(), RuntimeError> {
    for (i, (name, v)) in sig.scalars.iter().zip(scalars).enumerate() {
        let want = sig.scalar_types.get(i).copied().unwrap_or(ElemType::F32);
        if v.elem() != want {
            return Err(RuntimeError::ScalarType {
                entry: sig.entry.clone(),
                name: name.clone(),
                expected: want.name(),
                got: v.elem().name(),
            });
        }
    }
    Ok(())
}

fn plan_params(
    sig: &Signature,
    args: &[TensorMeta],
    scalars: &[ScalarArg],
    bindings: &[Binding],
) -> Result<Vec<PlannedParam>, RuntimeError> {
    let bad = |reason: String| RuntimeError::BadSignature {
        entry: sig.entry.clone(),
        reason,
    };
    sig.params
        .iter()
        .map(|p| {
            Ok(match p {
                AbiParam::TensorMap {
                    tensor,
                    box_dims,
                    swizzle,
                } => PlannedParam::TensorMap {
                    tensor: tensor_index(sig, tensor)?,
                    box_dims: box_dims.clone(),
                    swizzle: *swizzle,
                },
                AbiParam::Pointer { tensor } => {
                    PlannedParam::Pointer(args[tensor_index(sig, tensor)?].addr)
                }
                AbiParam::Stride { tensor, dim } => {
                    let meta = &args[tensor_index(sig, tensor)?];
                    let stride = meta.strides.get(*dim).ok_or_else(|| {
                        bad(format!(
                            "stride of `{tensor}` dim {dim}, but `{tensor}` has rank {}",
                            meta.strides.len()
                        ))
                    })?;
                    PlannedParam::Stride(*stride as u64)
                }
                AbiParam::Dim { symbol } => {
                    let value = lookup(bindings, symbol)
                        .or_else(|| symbol.parse().ok())
                        .ok_or_else(|| {
                            bad(format!("parameter `{symbol}` is no tensor's shape symbol"))
                        })?;
                    let v = u32::try_from(value).map_err(|_| RuntimeError::DimTooLarge {
                        symbol: symbol.clone(),
                        value,
                    })?;
                    PlannedParam::Dim(v)
                }
                AbiParam::Scalar { name } => {
                    let i =
                        sig.scalars.iter().position(|s| s == name).ok_or_else(|| {
                            bad(format!("parameter `{name}` is no scalar argument"))
                        })?;
                    let v = scalars[i];
                    if v.elem().is_int64() {
                        PlannedParam::Scalar64(v.bits64())
                    } else {
                        PlannedParam::Scalar(v.bits())
                    }
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
