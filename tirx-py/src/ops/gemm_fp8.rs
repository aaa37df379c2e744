//! `gemm_fp8(a, b, scale_a, scale_b, …)`'s checks: `torch._scaled_mm`'s D = s ⊙ (a @ b) with
//! `a` `[M, K]` row-major and `b` `[K, N]` the transpose of a row-major `[N, K]` (the only
//! layout the FP8 kernels read: B given N×K), both `torch.float8_e4m3fn` or both
//! `torch.float8_e5m2`, f32 scales in one of three forms, told apart by their shapes:
//!
//! - per-tensor: `scale_a` and `scale_b` of shape `[]` or `[1]` (or Python floats);
//! - row-wise (`torch._scaled_mm`'s form): `scale_a` `[M, 1]`, `scale_b` `[1, N]`;
//! - block-wise (DeepSeek-V3): `scale_a` `[M, cdiv(K, 128)]` (one per 1×128 block of A),
//!   `scale_b` `[cdiv(N, 128), cdiv(K, 128)]` (one per 128×128 block of B), row-major; or
//!   `scale_a` MN-major, strides `(1, M4)` with `M4 = 4·cdiv(M, 4)` — DeepGEMM's TMA-aligned
//!   layout, a `[cdiv(K, 128), M4]` row-major array seen transposed and cut to M columns —
//!   which `gemm_sm90_fp8_block_mn` takes (`Epilogue::ScaleBlocksMn`). Its storage must hold
//!   the whole padded last row (the kernel's TMA box reads up to `M4`: DeepGEMM's
//!   allocation does); a transposed `[KB, M]` with M not a multiple of 4 is refused.
//!
//! Where a shape fits two forms (K ≤ 128 with N = 1) the forms compute the same D; row-wise is
//! taken. K must be a multiple of 16 (A's and B's rows are read by TMA: 16-byte strides).
//! A per-tensor scale given as a tensor is a value the kernels take as a launch parameter, so
//! it must be read on the host: the Python layer checks the call, then reads it (`.item()`),
//! then launches with floats; at launch a one-element scale tensor is refused here.
//! Same order as every op (see the parent module): devices, dtypes, layouts, shapes, options.
//!
//! `use_fast_accum` is `torch._scaled_mm`'s: `False` (the default, as torch's) runs only
//! kernels that promote the tensor core's FP8 partial sums into f32 every 128 of K (torch's
//! numerics: about 1.3e-4 relative error at K = 4096 with an f32 output), `True` any kernel,
//! the fastest first (the tensor core's accumulator over all of K: about 1.3e-3 there).

use tirx::abi::ElemType;
use tirx::runtime::TensorMeta;
use tirx_kernels::gemm::fp8_ref::Fp8Accum;

use super::{Call, Checker, Op, fresh, rows_meta};
use crate::error::BindError;
use crate::tensor::{Foreign, Place};

/// FP8 inputs (A's and B's type, the same).
const FP8: &[ElemType] = &[ElemType::E4m3, ElemType::E5m2];
/// Outputs the Python layer allocates (which pair a kernel takes is the dispatcher's table).
const FP8_OUT: &[ElemType] = &[ElemType::Bf16, ElemType::F16, ElemType::F32];
/// The block of the block-wise form (`gemm/fp8_block.rs`).
const BLOCK: usize = 128;

/// A scale as the Python call gives it: a Python number, or a tensor.
#[derive(Clone, Debug)]
pub enum ScaleArg {
    /// A Python float (per-tensor).
    Value(f32),
    /// A tensor: per-tensor (one element), row-wise or block-wise by its shape.
    Tensor(Foreign),
}

/// The scales of a checked FP8 GEMM.
#[derive(Clone, Debug)]
pub enum Fp8Scales {
    /// `scale_a`, `scale_b`: launch parameters (1.0 where a tensor holds them, for `explain`).
    Tensor(f32, f32),
    /// `sa` [M], `sb` [N] (f32).
    Rows(TensorMeta, TensorMeta),
    /// `sa` [M, KB], `sb` [NB, KB] (f32, row-major).
    Blocks(TensorMeta, TensorMeta),
    /// `sa` [KB, M4] (MN-major: `scale_a` `[M, KB]` with strides `(1, M4)`), `sb` [NB, KB].
    BlocksMn(TensorMeta, TensorMeta),
}

/// A checked FP8 GEMM: D = s ⊙ A·Bᵀ, B given N×K.
#[derive(Clone, Debug)]
pub struct GemmFp8 {
    /// `[M, K]`, E4M3 or E5M2.
    pub a: TensorMeta,
    /// `[N, K]`, A's type.
    pub b: TensorMeta,
    /// The scales.
    pub scales: Fp8Scales,
    /// Whether per-tensor scales were given as tensors (their values not read yet: explain
    /// or check only).
    pub values_on_device: bool,
    /// `[M, N]`.
    pub d: TensorMeta,
    /// How the products accumulate (`use_fast_accum`).
    pub accum: Fp8Accum,
}

/// The FP8 GEMM's inputs, as the Python call gives them.
pub struct GemmFp8Args<'a> {
    /// `a` `[M, K]`.
    pub a: &'a Foreign,
    /// `b` `[K, N]` (the transpose of a row-major `[N, K]`).
    pub b: &'a Foreign,
    /// `scale_a`.
    pub scale_a: &'a ScaleArg,
    /// `scale_b`.
    pub scale_b: &'a ScaleArg,
    /// The output `[M, N]`, or `None` to explain with `out_dtype`.
    pub out: Option<&'a Foreign>,
    /// The output's dtype when `out` is `None`.
    pub out_dtype: ElemType,
    /// `torch._scaled_mm`'s `use_fast_accum` (default `false`).
    pub use_fast_accum: bool,
}

const B_LAYOUT: &str = "the transpose of a row-major [N, K] (e.g. `weight.t()`), as \
                        torch._scaled_mm takes it";

/// `gemm_fp8(a, b, scale_a, scale_b, …)`.
pub fn gemm_fp8(g: &GemmFp8Args<'_>) -> Result<Call, BindError> {
    let mut ck = Checker::new("gemm_fp8");
    ck.device("a", g.a)?;
    ck.device("b", g.b)?;
    for (arg, s) in [("scale_a", g.scale_a), ("scale_b", g.scale_b)] {
        if let ScaleArg::Tensor(t) = s {
            ck.device(arg, t)?;
        }
    }
    if let Some(o) = g.out {
        ck.device("out", o)?;
    }
    let input = ck.dtype("a", g.a, FP8)?;
    ck.same_dtype("b", g.b, input, "a")?;
    for (arg, s) in [("scale_a", g.scale_a), ("scale_b", g.scale_b)] {
        if let ScaleArg::Tensor(t) = s {
            ck.dtype(arg, t, &[ElemType::F32])?;
        }
    }
    let output = match g.out {
        Some(o) => ck.dtype("out", o, FP8_OUT)?,
        None if FP8_OUT.contains(&g.out_dtype) => g.out_dtype,
        None => {
            return Err(BindError::Option {
                op: "gemm_fp8",
                why: format!(
                    "out_dtype {} is not one of bfloat16, float16, float32",
                    super::torch_name(g.out_dtype)
                ),
            });
        }
    };
    ck.rank("a", g.a, &[2], "[M, K]")?;
    ck.rank("b", g.b, &[2], "[K, N]")?;
    let a = rows_meta(input, g.a)
        .ok_or_else(|| ck.not_contiguous("a", g.a, "a unit stride along K (row-major [M, K])"))?;
    let (m, k) = (g.a.shape[0], g.a.shape[1]);
    let (kb, n) = (g.b.shape[0], g.b.shape[1]);
    let b = b_meta(&ck, g.b, input, (kb, n))?;
    if kb != k {
        return Err(ck.shape(format!(
            "`a` is [M, K] = {:?} but `b` is [K, N] = {:?}: K disagrees ({k} vs {kb})",
            g.a.shape, g.b.shape
        )));
    }
    if k % 16 != 0 {
        return Err(ck.shape(format!(
            "K = {k} is not a multiple of 16: the FP8 kernels read rows of A and B by TMA \
             (16-byte strides); pad K with zeros"
        )));
    }
    let d = match g.out {
        Some(o) => {
            ck.rank("out", o, &[2], "[M, N]")?;
            if o.shape != [m, n] {
                return Err(ck.shape(format!(
                    "`out` has shape {:?}; a @ b is [M, N] = [{m}, {n}]",
                    o.shape
                )));
            }
            rows_meta(output, o)
                .ok_or_else(|| ck.not_contiguous("out", o, "a unit stride along N"))?
        }
        None => fresh(output, &[m, n]),
    };
    let (scales, values_on_device) = scales(&ck, g.scale_a, g.scale_b, (m, n, k))?;
    Ok(Call {
        place: ck.first.as_ref().map_or(Place::CudaPointer, |f| f.1),
        probe_addr: ck.probe_addr,
        op: Op::GemmFp8(GemmFp8 {
            a,
            b,
            scales,
            values_on_device,
            d,
            accum: Fp8Accum::from_fast_accum(g.use_fast_accum),
        }),
    })
}

/// B `[K, N]` as the transpose of a row-major `[N, K]`: the `[N, K]` meta.
fn b_meta(
    ck: &Checker,
    b: &Foreign,
    input: ElemType,
    (k, n): (usize, usize),
) -> Result<TensorMeta, BindError> {
    if (b.strides[0] == 1 || k == 1) && b.strides[1] >= 0 && (b.strides[1] as usize >= k || n == 1)
    {
        return Ok(TensorMeta {
            elem: input,
            shape: vec![n, k],
            strides: vec![
                if n == 1 {
                    k.max(1)
                } else {
                    b.strides[1] as usize
                },
                1,
            ],
            addr: b.addr,
        });
    }
    Err(ck.not_contiguous("b", b, B_LAYOUT))
}

/// The form of the scales, from their shapes (see the module header), and whether per-tensor
/// values still sit in tensors.
fn scales(
    ck: &Checker,
    sa: &ScaleArg,
    sb: &ScaleArg,
    (m, n, k): (usize, usize, usize),
) -> Result<(Fp8Scales, bool), BindError> {
    let one = |s: &ScaleArg| match s {
        ScaleArg::Value(v) => Some((*v, false)),
        ScaleArg::Tensor(t) if t.shape.is_empty() || t.shape == [1] => Some((1.0, true)),
        ScaleArg::Tensor(_) => None,
    };
    if let (Some((x, dx)), Some((y, dy))) = (one(sa), one(sb)) {
        return Ok((Fp8Scales::Tensor(x, y), dx || dy));
    }
    let (ScaleArg::Tensor(ta), ScaleArg::Tensor(tb)) = (sa, sb) else {
        return Err(ck.shape(
            "one scale is a number and the other a tensor of more than one element: both \
             per-tensor, or both row-wise / block-wise tensors"
                .into(),
        ));
    };
    let (kb, nb) = (k.div_ceil(BLOCK), n.div_ceil(BLOCK));
    if ta.shape == [m, 1] && tb.shape == [1, n] {
        // [M, 1] and [1, N] read as vectors: unit steps along M and N.
        let unit = |t: &Foreign, dim: usize, len: usize| t.strides[dim] == 1 || len == 1;
        if !unit(ta, 0, m) {
            return Err(ck.not_contiguous("scale_a", ta, "a contiguous [M, 1]"));
        }
        if !unit(tb, 1, n) {
            return Err(ck.not_contiguous("scale_b", tb, "a contiguous [1, N]"));
        }
        return Ok((
            Fp8Scales::Rows(
                TensorMeta::row_major(ElemType::F32, &[m], ta.addr),
                TensorMeta::row_major(ElemType::F32, &[n], tb.addr),
            ),
            false,
        ));
    }
    // MN-major `scale_a` (DeepGEMM's layout): unit steps along M, rows M4 apart. A contiguous
    // tensor is the row-major form (checked first: with one K block both read the same).
    let m4 = m.div_ceil(4) * 4;
    let mn_major = |t: &Foreign| {
        !t.is_contiguous() && (t.strides[0] == 1 || m == 1) && t.strides[1] == m4 as i64
    };
    if ta.shape == [m, kb] && tb.shape == [nb, kb] && mn_major(ta) {
        if !tb.is_contiguous() {
            return Err(ck.not_contiguous(
                "scale_b",
                tb,
                "a contiguous (row-major) block-scale matrix",
            ));
        }
        return Ok((
            Fp8Scales::BlocksMn(
                TensorMeta::row_major(ElemType::F32, &[kb, m4], ta.addr),
                TensorMeta::row_major(ElemType::F32, &[nb, kb], tb.addr),
            ),
            false,
        ));
    }
    if ta.shape == [m, kb] && tb.shape == [nb, kb] {
        for (arg, t) in [("scale_a", ta), ("scale_b", tb)] {
            if !t.is_contiguous() {
                return Err(ck.not_contiguous(
                    arg,
                    t,
                    "a contiguous (row-major) block-scale matrix, or for `scale_a` an \
                     MN-major one (strides (1, 4·cdiv(M, 4)))",
                ));
            }
        }
        return Ok((
            Fp8Scales::Blocks(
                TensorMeta::row_major(ElemType::F32, &[m, kb], ta.addr),
                TensorMeta::row_major(ElemType::F32, &[nb, kb], tb.addr),
            ),
            false,
        ));
    }
    Err(ck.shape(format!(
        "`scale_a` has shape {:?} and `scale_b` {:?}; for [M, N, K] = [{m}, {n}, {k}] they must \
         be per-tensor ([] or [1] each), row-wise ([{m}, 1] and [1, {n}]) or block-wise \
         ([{m}, {kb}] and [{nb}, {kb}]: [M, cdiv(K, 128)] and [cdiv(N, 128), cdiv(K, 128)])",
        ta.shape, tb.shape
    )))
}
