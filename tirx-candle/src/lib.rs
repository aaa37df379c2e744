//! tirx kernels over candle's CUDA tensors: `CustomOp`s for attention, GEMM (plain, with a
//! fused bias + activation epilogue, or with a residual added; FP8 with per-tensor, row-wise
//! or block-wise scales: [`gemm_fp8`]), RMSNorm, softmax and a SwiGLU
//! gate (`silu_mul`), launched on the stream of the candle device the tensors live on. The kernels are PTX compiled into this crate at
//! `cargo build` and loaded by the driver: nvcc runs for candle's own kernels only.
//!
//! ```no_run
//! use candle_core::{DType, Device, Tensor};
//!
//! # fn main() -> candle_core::Result<()> {
//! let dev = Device::new_cuda(0)?;
//! let x = Tensor::randn(0f32, 1.0, (256, 512), &dev)?.to_dtype(DType::BF16)?;
//! let w = Tensor::randn(0f32, 1.0, (1024, 512), &dev)?.to_dtype(DType::BF16)?; // [N, K]
//! let y = tirx_candle::gemm(&x, &w.t()?)?; // x @ w.t(): [256, 1024]
//! # let _ = y;
//! # Ok(())
//! # }
//! ```
//!
//! Invariants:
//! - Every misuse is a candle error before anything is allocated or launched: element types,
//!   layouts and shapes ([`check`]), then the device (a CPU tensor is [`Error::NotCuda`] —
//!   after the other checks, so they can be tested without a GPU), then the dispatcher's
//!   refusal when no compiled kernel fits ([`tirx::RuntimeError::NoKernelFits`], with the
//!   table of candidates).
//! - Outputs are candle allocations on candle's stream; every launch goes to that stream.
//! - The ops have no backward pass (`apply_op*_no_bwd`).
//!
//! Built with cudarc's `dynamic-linking` (as candle builds it): see `docs/candle.md` for the
//! build (nvcc for candle's kernels) and `cargo xtask test-candle`.

pub mod check;
pub mod fp8;
mod launch;

use candle_core::backend::BackendStorage;
use candle_core::{
    CpuStorage, CudaStorage, CustomOp1, CustomOp2, CustomOp3, Layout, Shape, Tensor,
};
use tirx::RuntimeError;
use tirx::problem::RowOp;

pub use tirx::problem::Act;

pub use crate::fp8::{Fp8Accum, Fp8Scales, gemm_fp8, gemm_fp8_accum};

use crate::check::{Desc, Op};

/// Why a tirx op refused its arguments or failed to launch. Returned inside a candle error
/// (`candle_core::Error::Wrapped`); its text is the message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The tensors are on the CPU.
    #[error(
        "tirx {op}: the tensors are on the CPU; tirx kernels run on CUDA tensors (move them \
         with `.to_device(&Device::new_cuda(0)?)?`)"
    )]
    NotCuda {
        /// The op.
        op: &'static str,
    },
    /// An element type no kernel of the op takes, or one that disagrees with another argument's.
    #[error("tirx {op}: `{arg}` has dtype {got:?}; {op} takes {want}")]
    Dtype {
        /// The op.
        op: &'static str,
        /// The argument.
        arg: String,
        /// Its type.
        got: candle_core::DType,
        /// What the op takes.
        want: String,
    },
    /// Strides the kernels cannot read.
    #[error("tirx {op}: `{arg}` has shape {shape:?} and strides {strides:?}; {op} needs {want}")]
    Layout {
        /// The op.
        op: &'static str,
        /// The argument.
        arg: String,
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides.
        strides: Vec<usize>,
        /// What the op reads.
        want: String,
    },
    /// Shapes that disagree, or the wrong rank.
    #[error("tirx {op}: {why}")]
    Shape {
        /// The op.
        op: &'static str,
        /// What disagrees.
        why: String,
    },
    /// candle could not allocate an output.
    #[error("tirx: allocating an output: {0}")]
    Alloc(String),
    /// The runtime's refusal: no driver or GPU, no kernel fits (with the table), a launch error.
    #[error("tirx: {0}")]
    Runtime(RuntimeError),
}

impl From<Error> for candle_core::Error {
    fn from(e: Error) -> candle_core::Error {
        candle_core::Error::wrap(e)
    }
}

/// Whether tirx can run on GPU `ordinal`: its name, or why not (no driver, no such GPU) —
/// never a panic. With a stub `libcuda` (the machine has no driver) this is
/// [`RuntimeError::NoDriver`].
pub fn device_name(ordinal: usize) -> Result<String, Error> {
    tirx::Runtime::new(ordinal)
        .map(|rt| rt.name().to_string())
        .map_err(Error::Runtime)
}

/// A CPU tensor's description (address 0: the checks do not read it).
fn cpu_desc<'a>(s: &CpuStorage, l: &'a Layout) -> Desc<'a> {
    Desc {
        dtype: s.dtype(),
        shape: l.shape().dims(),
        strides: l.stride(),
        addr: 0,
    }
}

/// The output's shape as candle sees it.
fn out_shape(op: &Op, first: &Layout) -> Shape {
    match op {
        Op::Gemm { d, .. } | Op::GemmFp8(fp8::GemmFp8 { d, .. }) => Shape::from(d.shape.clone()),
        // Row ops and attention keep the first input's shape.
        Op::Row { .. } | Op::SiluMul { .. } | Op::Attention { .. } => first.shape().clone(),
    }
}

/// Run a checked op on the device of `inputs[0]`, whose layout is `first`.
fn cuda_run(
    op: Op,
    inputs: &[&CudaStorage],
    first: &Layout,
) -> candle_core::Result<(CudaStorage, Shape)> {
    let shape = out_shape(&op, first);
    let out = launch::run(op, inputs[0].device(), inputs)?;
    Ok((out, shape))
}

/// `a @ b` with `a` `[M, K]` and `b` `[K, N]` (bf16 or f16, one type), into a fresh `[M, N]` of
/// that type. A row-major `b` runs the NN kernels; `w.t()?` of a row-major `[N, K]` (a linear
/// layer's weight) the TN kernels. Rows of `a` may be padded (unit stride along K).
pub fn gemm(a: &Tensor, b: &Tensor) -> candle_core::Result<Tensor> {
    a.apply_op2_no_bwd(b, &Gemm)
}

/// `act(a @ b + bias)` with `bias` `[N]` in `a`'s type: [`gemm`] with the fused epilogue
/// (the TN kernels: pass `w.t()?`). `Act::None` adds the bias only; GELU is its tanh form.
pub fn gemm_bias_act(
    a: &Tensor,
    b: &Tensor,
    bias: &Tensor,
    act: Act,
) -> candle_core::Result<Tensor> {
    a.apply_op3_no_bwd(b, bias, &GemmBiasAct { act })
}

/// `a @ b + res` with `res` `[M, N]` in `a`'s type (a transformer block's residual after its
/// output projection or MLP): [`gemm`] with the residual added in f32 before the output is
/// rounded, in one kernel (the scaled epilogue with C = `res`, α = β = 1; TN or NN as for
/// [`gemm`]). Rows of `res` may be padded (unit stride along N).
pub fn gemm_residual(a: &Tensor, b: &Tensor, res: &Tensor) -> candle_core::Result<Tensor> {
    a.apply_op3_no_bwd(b, res, &GemmResidual)
}

/// `softmax(q·kᵀ·scale)·v` on flash-attention's layout: `q` `[B, S, HQ, D]`, `k` and `v`
/// `[B, SK, HK, D]` (bf16 or f16, heads and head dims packed), HK dividing HQ (grouped-query
/// attention); `causal` is bottom-right aligned; `scale` `None` is 1/√D. Returns
/// `[B, S, HQ, D]`.
pub fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
    scale: Option<f32>,
) -> candle_core::Result<Tensor> {
    q.apply_op3_no_bwd(k, v, &Attention { causal, scale })
}

/// `x / sqrt(mean(x²) + eps) · weight` over the last dimension of a contiguous bf16 `x`;
/// `weight` `[N]`.
pub fn rms_norm(x: &Tensor, weight: &Tensor, eps: f32) -> candle_core::Result<Tensor> {
    x.apply_op2_no_bwd(weight, &RmsNorm { eps })
}

/// Softmax over the last dimension of a contiguous bf16 `x`.
pub fn softmax(x: &Tensor) -> candle_core::Result<Tensor> {
    x.apply_op1_no_bwd(&Softmax)
}

/// `silu(x)·g` elementwise (the gate of a SwiGLU MLP), `x` and `g` contiguous bf16 of one
/// shape.
pub fn silu_mul(x: &Tensor, g: &Tensor) -> candle_core::Result<Tensor> {
    x.apply_op2_no_bwd(g, &SiluMul)
}

/// The op of [`gemm`].
pub struct Gemm;

impl CustomOp2 for Gemm {
    fn name(&self) -> &'static str {
        "tirx-gemm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        check::gemm(&cpu_desc(s1, l1), &cpu_desc(s2, l2), None, None)?;
        Err(Error::NotCuda { op: "gemm" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let op = check::gemm(&launch::desc(s1, l1), &launch::desc(s2, l2), None, None)?;
        cuda_run(op, &[s1, s2], l1)
    }
}

/// The op of [`gemm_bias_act`].
pub struct GemmBiasAct {
    /// The activation after the bias.
    pub act: Act,
}

impl CustomOp3 for GemmBiasAct {
    fn name(&self) -> &'static str {
        "tirx-gemm-bias-act"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let bias = cpu_desc(s3, l3);
        check::gemm(
            &cpu_desc(s1, l1),
            &cpu_desc(s2, l2),
            Some((&bias, self.act)),
            None,
        )?;
        Err(Error::NotCuda { op: "gemm" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
        s3: &CudaStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let bias = launch::desc(s3, l3);
        let op = check::gemm(
            &launch::desc(s1, l1),
            &launch::desc(s2, l2),
            Some((&bias, self.act)),
            None,
        )?;
        cuda_run(op, &[s1, s2, s3], l1)
    }
}

/// The op of [`gemm_residual`].
pub struct GemmResidual;

impl CustomOp3 for GemmResidual {
    fn name(&self) -> &'static str {
        "tirx-gemm-residual"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let res = cpu_desc(s3, l3);
        check::gemm(&cpu_desc(s1, l1), &cpu_desc(s2, l2), None, Some(&res))?;
        Err(Error::NotCuda { op: "gemm" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
        s3: &CudaStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let res = launch::desc(s3, l3);
        let op = check::gemm(
            &launch::desc(s1, l1),
            &launch::desc(s2, l2),
            None,
            Some(&res),
        )?;
        cuda_run(op, &[s1, s2, s3], l1)
    }
}

/// The op of [`attention`].
pub struct Attention {
    /// Causal mask, bottom-right aligned.
    pub causal: bool,
    /// Softmax scale; `None`: 1/√D.
    pub scale: Option<f32>,
}

impl CustomOp3 for Attention {
    fn name(&self) -> &'static str {
        "tirx-attention"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (q, k, v) = (cpu_desc(s1, l1), cpu_desc(s2, l2), cpu_desc(s3, l3));
        check::attention(&q, &k, &v, self.causal, self.scale)?;
        Err(Error::NotCuda { op: "attention" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
        s3: &CudaStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let (q, k, v) = (
            launch::desc(s1, l1),
            launch::desc(s2, l2),
            launch::desc(s3, l3),
        );
        let op = check::attention(&q, &k, &v, self.causal, self.scale)?;
        cuda_run(op, &[s1, s2, s3], l1)
    }
}

/// The op of [`rms_norm`].
pub struct RmsNorm {
    /// ε.
    pub eps: f32,
}

impl CustomOp2 for RmsNorm {
    fn name(&self) -> &'static str {
        "tirx-rms-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let w = cpu_desc(s2, l2);
        check::row(RowOp::RmsNorm, &cpu_desc(s1, l1), Some(&w), self.eps)?;
        Err(Error::NotCuda { op: "rms_norm" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let w = launch::desc(s2, l2);
        let op = check::row(RowOp::RmsNorm, &launch::desc(s1, l1), Some(&w), self.eps)?;
        cuda_run(op, &[s1, s2], l1)
    }
}

/// The op of [`softmax`].
pub struct Softmax;

impl CustomOp1 for Softmax {
    fn name(&self) -> &'static str {
        "tirx-softmax"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        check::row(RowOp::Softmax, &cpu_desc(s, l), None, 0.0)?;
        Err(Error::NotCuda { op: "softmax" }.into())
    }

    fn cuda_fwd(&self, s: &CudaStorage, l: &Layout) -> candle_core::Result<(CudaStorage, Shape)> {
        let op = check::row(RowOp::Softmax, &launch::desc(s, l), None, 0.0)?;
        cuda_run(op, &[s], l)
    }
}

/// The op of [`silu_mul`].
pub struct SiluMul;

impl CustomOp2 for SiluMul {
    fn name(&self) -> &'static str {
        "tirx-silu-mul"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        check::silu_mul(&cpu_desc(s1, l1), &cpu_desc(s2, l2))?;
        Err(Error::NotCuda { op: "silu_mul" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let op = check::silu_mul(&launch::desc(s1, l1), &launch::desc(s2, l2))?;
        cuda_run(op, &[s1, s2], l1)
    }
}

#[cfg(all(test, feature = "gpu"))]
mod gpu_tests;
#[cfg(test)]
mod tests;

/// `docs/candle.md`, whose example is compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../docs/candle.md")]
pub struct CandleMd;
