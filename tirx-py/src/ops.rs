//! The Python ops' argument checks: from the tensors as their producers describe them
//! ([`Foreign`]) to a checked [`Call`] — the problem in the runtime's terms (`TensorMeta`s in
//! the layout the kernels take), or the first thing wrong with it, naming the argument.
//!
//! Order of the checks, the same for every op, so a test can reach each one without a GPU:
//! device (CUDA, one GPU for the whole call), element type, layout (the strides a kernel can
//! read), shapes (agreement between arguments), options. The launch plan (TMA alignment, the
//! grid, shared memory) and the choice of kernel come after, from the runtime and the
//! dispatcher, on the real device.
//!
//! Layouts follow PyTorch: `gemm(a, b)` is `a @ b` with `a` `[M, K]` and `b` `[K, N]` — a
//! row-major `b` runs the NN kernels, the transpose of a row-major `[N, K]` (a Linear's
//! `weight.t()`) the TN kernels; `gemm_fp8` is `torch._scaled_mm`'s `a @ b` (TN only); `attention` takes flash-attention's `[B, S, H, D]`; the row
//! ops work on the last dimension.
//!
//! Outputs are `None` only when a call is explained rather than launched: then they are
//! described as contiguous tensors at a 256-byte aligned address, as a fresh PyTorch
//! allocation would be.

use tirx::abi::ElemType;
use tirx::problem::RowOp;
use tirx::runtime::TensorMeta;

use crate::error::BindError;
use crate::tensor::{Foreign, Place};

/// One checked call: which op, on which device, with which tensors.
#[derive(Clone, Debug)]
pub struct Call {
    /// The GPU the tensors are on (`CudaPointer`: ask the driver).
    pub place: Place,
    /// The address the driver is asked about when `place` is `CudaPointer`.
    pub probe_addr: u64,
    /// The problem.
    pub op: Op,
}

/// A problem, in the runtime's terms.
#[derive(Clone, Debug)]
pub enum Op {
    /// D = act(A·op(B) + bias), or α·A·op(B) + β·C.
    Gemm(Gemm),
    /// D = s ⊙ A·Bᵀ in FP8, per-tensor, row-wise or block-wise scales.
    GemmFp8(GemmFp8),
    /// Blackwell's block-scaled D = (A·sA)·(B·sB)ᵀ (MXFP8, NVFP4): the host's request, checked
    /// by `factors::factor_request`.
    BlockScaled(Box<tirx_kernels::gemm::request::GemmRequest>),
    /// A row op; `w`, `b` present as the op takes them.
    Row {
        /// Which.
        op: RowOp,
        /// `x` `[M, N]`.
        x: TensorMeta,
        /// `w` `[N]`.
        w: Option<TensorMeta>,
        /// `b` `[N]`.
        b: Option<TensorMeta>,
        /// `y` `[M, N]`.
        y: TensorMeta,
        /// ε.
        eps: f32,
    },
    /// `y = silu(x)·g`, all `[M, N]`.
    SiluMul {
        /// x.
        x: TensorMeta,
        /// g.
        g: TensorMeta,
        /// y.
        y: TensorMeta,
    },
    /// Attention forward on `[q, k, v, o, lse]` in the kernels' layout.
    Attention {
        /// `[B, S, HQ·D]`, `[B, SK, HK·D]`, `[B, SK, HK·DV]`, `[B, S, HQ·DV]`, `[B·HQ, S, 1]`.
        tensors: [TensorMeta; 5],
        /// Head dimension of Q and K (`D`).
        d: usize,
        /// Head dimension of V and O (`DV`; `D` but for MLA-style shapes such as (192, 128)).
        dv: usize,
        /// Causal mask.
        causal: bool,
        /// Softmax scale.
        scale: f32,
    },
}

const HALVES: &[ElemType] = &[ElemType::Bf16, ElemType::F16];
const BF16: &[ElemType] = &[ElemType::Bf16];

/// What the checks of one call have seen so far: the op, and the first tensor's device.
struct Checker {
    op: &'static str,
    first: Option<(String, Place)>,
    probe_addr: u64,
}

impl Checker {
    fn new(op: &'static str) -> Checker {
        Checker {
            op,
            first: None,
            probe_addr: 0,
        }
    }

    /// On CUDA, on the call's one GPU.
    fn device(&mut self, arg: &str, t: &Foreign) -> Result<(), BindError> {
        if let Place::Other(..) = t.place {
            return Err(BindError::WrongDevice {
                arg: arg.into(),
                place: t.place.describe(),
            });
        }
        match &self.first {
            None => {
                self.first = Some((arg.to_string(), t.place));
                self.probe_addr = t.addr;
            }
            Some((first, place)) => {
                let agree = match (*place, t.place) {
                    (Place::Cuda(i), Place::Cuda(j)) => i == j,
                    _ => true,
                };
                if !agree {
                    return Err(BindError::DevicesDisagree {
                        arg: arg.into(),
                        place: t.place.describe(),
                        first: first.clone(),
                        first_place: place.describe(),
                    });
                }
                // A known ordinal beats an unknown one.
                if *place == Place::CudaPointer && matches!(t.place, Place::Cuda(_)) {
                    self.first = Some((arg.to_string(), t.place));
                }
            }
        }
        Ok(())
    }

    /// One of `allowed`.
    fn dtype(&self, arg: &str, t: &Foreign, allowed: &[ElemType]) -> Result<ElemType, BindError> {
        match t.dtype {
            Ok(e) if allowed.contains(&e) => Ok(e),
            _ => Err(BindError::Dtype {
                arg: arg.into(),
                got: torch_name_of(t),
                op: self.op,
                want: allowed
                    .iter()
                    .map(|&e| torch_name(e))
                    .collect::<Vec<_>>()
                    .join(" or "),
            }),
        }
    }

    /// The same dtype as `other`'s `want`.
    fn same_dtype(
        &self,
        arg: &str,
        t: &Foreign,
        want: ElemType,
        other: &str,
    ) -> Result<(), BindError> {
        match t.dtype {
            Ok(e) if e == want => Ok(()),
            _ => Err(BindError::Dtype {
                arg: arg.into(),
                got: torch_name_of(t),
                op: self.op,
                want: format!("{} (the dtype of `{other}`)", torch_name(want)),
            }),
        }
    }

    fn rank(&self, arg: &str, t: &Foreign, ranks: &[usize], shape: &str) -> Result<(), BindError> {
        if ranks.contains(&t.shape.len()) {
            return Ok(());
        }
        Err(BindError::Shape {
            op: self.op,
            why: format!("`{arg}` has shape {:?}; it must be {shape}", t.shape),
        })
    }

    fn not_contiguous(&self, arg: &str, t: &Foreign, want: &str) -> BindError {
        BindError::NotContiguous {
            arg: arg.into(),
            shape: t.shape.clone(),
            strides: t.strides.clone(),
            op: self.op,
            want: want.into(),
        }
    }

    fn shape(&self, why: String) -> BindError {
        BindError::Shape { op: self.op, why }
    }
}

/// PyTorch's name of an element type (`torch.bfloat16`).
pub fn torch_name(e: ElemType) -> String {
    match e {
        ElemType::Bf16 => "torch.bfloat16".into(),
        ElemType::F16 => "torch.float16".into(),
        ElemType::F32 => "torch.float32".into(),
        ElemType::E4m3 => "torch.float8_e4m3fn".into(),
        ElemType::E5m2 => "torch.float8_e5m2".into(),
        ElemType::Ue8m0 => "torch.float8_e8m0fnu".into(),
        ElemType::E2m1x2 => "torch.float4_e2m1fn_x2".into(),
        // The padded FP6/FP4 images have no torch dtype: their bytes travel as uint8.
        ElemType::E3m2 | ElemType::E2m3 | ElemType::E2m1 => "torch.uint8".into(),
        // torch has no UE4M3 dtype; its NVFP4 factors are float8_e4m3fn with the sign clear.
        ElemType::Ue4m3 => "torch.float8_e4m3fn".into(),
        ElemType::I32 => "torch.int32".into(),
        ElemType::I8 => "torch.int8".into(),
        ElemType::U8 => "torch.uint8".into(),
        ElemType::U32 => "torch.uint32".into(),
        ElemType::I64 => "torch.int64".into(),
        ElemType::U64 => "torch.uint64".into(),
    }
}

fn torch_name_of(t: &Foreign) -> String {
    match t.dtype {
        Ok(e) => torch_name(e),
        Err(ref s) => s.clone(),
    }
}

/// A 2-D view with a unit innermost stride (rows may be padded), as a meta.
fn rows_meta(e: ElemType, t: &Foreign) -> Option<TensorMeta> {
    let [n0, n1] = t.shape[..] else { return None };
    let [s0, s1] = t.strides[..] else { return None };
    if (s1 != 1 && n1 > 1) || s0 < 0 {
        return None;
    }
    Some(TensorMeta {
        elem: e,
        shape: vec![n0, n1],
        strides: vec![if n0 == 1 { n1.max(1) } else { s0 as usize }, 1],
        addr: t.addr,
    })
}

/// A contiguous tensor flattened to `[rows, last]`.
fn flat_meta(e: ElemType, t: &Foreign) -> Option<TensorMeta> {
    if !t.is_contiguous() {
        return None;
    }
    let last = t.shape.last().copied().unwrap_or(1);
    let rows = t.shape.iter().rev().skip(1).product();
    Some(TensorMeta {
        elem: e,
        shape: vec![rows, last],
        strides: vec![last, 1],
        addr: t.addr,
    })
}

/// The output described as a fresh contiguous allocation (explain without tensors).
fn fresh(e: ElemType, shape: &[usize]) -> TensorMeta {
    TensorMeta::row_major(e, shape, 0)
}

/// `softmax(x)`, `rms_norm(x, weight)`, `layer_norm(x, weight, bias)` over the last dimension.
pub fn row(
    op: RowOp,
    x: &Foreign,
    w: Option<&Foreign>,
    b: Option<&Foreign>,
    out: Option<&Foreign>,
    eps: f32,
) -> Result<Call, BindError> {
    let name = match op {
        RowOp::Softmax => "softmax",
        RowOp::RmsNorm => "rms_norm",
        RowOp::LayerNorm => "layer_norm",
    };
    let mut ck = Checker::new(name);
    ck.device("x", x)?;
    for (arg, t) in [("weight", w), ("bias", b), ("out", out)] {
        if let Some(t) = t {
            ck.device(arg, t)?;
        }
    }
    ck.dtype("x", x, BF16)?;
    for (arg, t) in [("weight", w), ("bias", b), ("out", out)] {
        if let Some(t) = t {
            ck.same_dtype(arg, t, ElemType::Bf16, "x")?;
        }
    }
    if x.shape.is_empty() {
        return Err(ck.shape("`x` is a scalar; the op works on its last dimension".into()));
    }
    let xm = if x.shape.len() == 2 {
        rows_meta(ElemType::Bf16, x)
    } else {
        flat_meta(ElemType::Bf16, x)
    }
    .ok_or_else(|| {
        ck.not_contiguous(
            "x",
            x,
            "a contiguous tensor (2-D: a unit stride along the row)",
        )
    })?;
    let n = xm.shape[1];
    let vector = |arg: &str, t: Option<&Foreign>| -> Result<Option<TensorMeta>, BindError> {
        let Some(t) = t else { return Ok(None) };
        if t.shape != [n] || !t.is_contiguous() {
            return Err(ck.shape(format!(
                "`{arg}` has shape {:?} and strides {:?}; it must be a contiguous [{n}] (x's last dimension)",
                t.shape, t.strides
            )));
        }
        Ok(Some(TensorMeta::row_major(ElemType::Bf16, &[n], t.addr)))
    };
    let (wm, bm) = (vector("weight", w)?, vector("bias", b)?);
    if op.takes_weight() && wm.is_none() {
        return Err(BindError::Option {
            op: name,
            why: "needs `weight`".into(),
        });
    }
    if op.takes_bias() && bm.is_none() {
        return Err(BindError::Option {
            op: name,
            why: "needs `bias`".into(),
        });
    }
    let y = match out {
        None => fresh(ElemType::Bf16, &xm.shape),
        Some(o) => {
            if o.shape != x.shape {
                return Err(ck.shape(format!(
                    "`out` has shape {:?}; x has {:?}",
                    o.shape, x.shape
                )));
            }
            let m = if o.shape.len() == 2 {
                rows_meta(ElemType::Bf16, o)
            } else {
                flat_meta(ElemType::Bf16, o)
            };
            m.ok_or_else(|| ck.not_contiguous("out", o, "a contiguous tensor"))?
        }
    };
    Ok(Call {
        place: ck.first.as_ref().map_or(Place::CudaPointer, |f| f.1),
        probe_addr: ck.probe_addr,
        op: Op::Row {
            op,
            x: xm,
            w: wm,
            b: bm,
            y,
            eps,
        },
    })
}

/// `silu_mul(x, g)`: `silu(x)·g` elementwise, x and g of one shape.
pub fn silu_mul(x: &Foreign, g: &Foreign, out: Option<&Foreign>) -> Result<Call, BindError> {
    let mut ck = Checker::new("silu_mul");
    ck.device("x", x)?;
    ck.device("g", g)?;
    if let Some(o) = out {
        ck.device("out", o)?;
    }
    ck.dtype("x", x, BF16)?;
    ck.same_dtype("g", g, ElemType::Bf16, "x")?;
    if let Some(o) = out {
        ck.same_dtype("out", o, ElemType::Bf16, "x")?;
    }
    if g.shape != x.shape {
        return Err(ck.shape(format!("`g` has shape {:?}; x has {:?}", g.shape, x.shape)));
    }
    if x.shape.is_empty() {
        return Err(ck.shape("`x` is a scalar".into()));
    }
    let flat = |arg: &str, t: &Foreign| {
        flat_meta(ElemType::Bf16, t).ok_or_else(|| ck.not_contiguous(arg, t, "a contiguous tensor"))
    };
    let (xm, gm) = (flat("x", x)?, flat("g", g)?);
    let y = match out {
        None => fresh(ElemType::Bf16, &xm.shape),
        Some(o) if o.shape != x.shape => {
            return Err(ck.shape(format!(
                "`out` has shape {:?}; x has {:?}",
                o.shape, x.shape
            )));
        }
        Some(o) => flat("out", o)?,
    };
    Ok(Call {
        place: ck.first.as_ref().map_or(Place::CudaPointer, |f| f.1),
        probe_addr: ck.probe_addr,
        op: Op::SiluMul { x: xm, g: gm, y },
    })
}

/// The attention call's tensors, as the Python call gives them.
pub struct AttentionArgs<'a> {
    /// `[B, S, HQ, D]`.
    pub q: &'a Foreign,
    /// `[B, SK, HK, D]`.
    pub k: &'a Foreign,
    /// `[B, SK, HK, DV]`: V's head dim is its own (`DV`, the output's too).
    pub v: &'a Foreign,
    /// `[B, S, HQ, DV]`, or `None` to explain.
    pub out: Option<&'a Foreign>,
    /// `[B, HQ, S]` f32, or `None` to explain.
    pub lse: Option<&'a Foreign>,
    /// Causal (bottom-right aligned).
    pub causal: bool,
    /// Softmax scale; `None`: 1/√D.
    pub scale: Option<f32>,
}

/// `attention(q, k, v, …)` on flash-attention's `[B, S, H, D]` layout. V's head dim `DV`
/// (and O's) is read from `v`; which (D, DV) pairs a kernel serves is the dispatcher's
/// business (the Hopper kernels take D = DV only: `Reject::OneHeadDim`), so a pair no kernel
/// serves is refused by it, with its table, on the device.
pub fn attention(g: &AttentionArgs<'_>) -> Result<Call, BindError> {
    let mut ck = Checker::new("attention");
    for (arg, t) in [
        ("q", Some(g.q)),
        ("k", Some(g.k)),
        ("v", Some(g.v)),
        ("out", g.out),
        ("lse", g.lse),
    ] {
        if let Some(t) = t {
            ck.device(arg, t)?;
        }
    }
    let e = ck.dtype("q", g.q, HALVES)?;
    ck.same_dtype("k", g.k, e, "q")?;
    ck.same_dtype("v", g.v, e, "q")?;
    if let Some(o) = g.out {
        ck.same_dtype("out", o, e, "q")?;
    }
    if let Some(l) = g.lse {
        ck.dtype("lse", l, &[ElemType::F32])?;
    }
    ck.rank("q", g.q, &[4], "[B, S, HQ, D]")?;
    ck.rank("k", g.k, &[4], "[B, SK, HK, D]")?;
    ck.rank("v", g.v, &[4], "[B, SK, HK, DV]")?;
    // [B, S, H, D] with H and D packed → the kernels' [B, S, H·D].
    let packed = |arg: &str, t: &Foreign| -> Result<TensorMeta, BindError> {
        let (h, d) = (t.shape[2], t.shape[3]);
        let ok = (t.strides[3] == 1 || d == 1)
            && (t.strides[2] == d as i64 || h == 1)
            && t.strides[0] >= 0
            && t.strides[1] >= 0;
        if !ok {
            return Err(ck.not_contiguous(
                arg,
                t,
                "heads and head dims packed (strides [*, *, D, 1]: flash-attention's [B, S, H, D]; \
                 from SDPA's [B, H, S, D] use `.transpose(1, 2).contiguous()`)",
            ));
        }
        let (b, s) = (t.shape[0], t.shape[1]);
        let s0 = if b == 1 {
            s * h * d
        } else {
            t.strides[0] as usize
        };
        let s1 = if s == 1 { h * d } else { t.strides[1] as usize };
        Ok(TensorMeta {
            elem: e,
            shape: vec![b, s, h * d],
            strides: vec![s0.max(1), s1.max(1), 1],
            addr: t.addr,
        })
    };
    let (qs, ks, vs) = (&g.q.shape, &g.k.shape, &g.v.shape);
    if vs[..3] != ks[..3] {
        return Err(ck.shape(format!(
            "`k` is [B, SK, HK, D] = {ks:?} but `v` is [B, SK, HK, DV] = {vs:?}: B, SK and HK \
             must agree"
        )));
    }
    if qs[0] != ks[0] || qs[3] != ks[3] {
        return Err(ck.shape(format!(
            "`q` is [B, S, HQ, D] = {qs:?} but `k` is [B, SK, HK, D] = {ks:?}: B and D must agree"
        )));
    }
    let (b, s, hq, d, dv) = (qs[0], qs[1], qs[2], qs[3], vs[3]);
    let hk = ks[2];
    if hk == 0 || hq % hk != 0 {
        return Err(ck.shape(format!(
            "{hq} query heads over {hk} K/V heads: grouped-query attention needs HK to divide HQ"
        )));
    }
    let (qm, km, vm) = (packed("q", g.q)?, packed("k", g.k)?, packed("v", g.v)?);
    let om = match g.out {
        None => fresh(e, &[b, s, hq * dv]),
        Some(o) if o.shape != [b, s, hq, dv] => {
            return Err(ck.shape(format!(
                "`out` has shape {:?}; it must be [B, S, HQ, DV] = [{b}, {s}, {hq}, {dv}] (q's \
                 B, S, HQ and v's head dim)",
                o.shape
            )));
        }
        Some(o) => packed("out", o)?,
    };
    let lm = match g.lse {
        None => fresh(ElemType::F32, &[b * hq, s, 1]),
        Some(l) if l.shape != [b, hq, s] => {
            return Err(ck.shape(format!(
                "`lse` has shape {:?}; it must be [B, HQ, S] = [{b}, {hq}, {s}]",
                l.shape
            )));
        }
        Some(l) if !l.is_contiguous() => {
            return Err(ck.not_contiguous("lse", l, "a contiguous [B, HQ, S]"));
        }
        Some(l) => TensorMeta::row_major(ElemType::F32, &[b * hq, s, 1], l.addr),
    };
    let scale = g.scale.unwrap_or(1.0 / (d.max(1) as f32).sqrt());
    Ok(Call {
        place: ck.first.as_ref().map_or(Place::CudaPointer, |f| f.1),
        probe_addr: ck.probe_addr,
        op: Op::Attention {
            tensors: [qm, km, vm, om, lm],
            d,
            dv,
            causal: g.causal,
            scale,
        },
    })
}

mod gemm;
mod gemm_block_scaled;
mod gemm_fp8;
#[cfg(test)]
mod tests;

pub use self::gemm::{Gemm, GemmArgs, gemm};
pub use self::gemm_block_scaled::{BlockScaledArgs, gemm_block_scaled};
pub use self::gemm_fp8::{Fp8Scales, GemmFp8, GemmFp8Args, ScaleArg, gemm_fp8};
