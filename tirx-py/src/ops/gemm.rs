//! `gemm(a, b, …)`'s checks: `a @ b` with `a` `[M, K]` and `b` `[K, N]` as PyTorch reads them,
//! B's layout from its strides (row-major → NN; the transpose of a row-major `[N, K]` → TN),
//! and the epilogue from the options (plain; `act(a @ b + bias)`; `alpha·(a @ b) + beta·c`;
//! `act(a @ b + bias) + residual`, or `a @ b + residual` — the scaled form with C = R, α = β = 1).
//! Same order as every op (see the parent module): devices, dtypes, layouts, shapes, options.

use tirx::abi::ElemType;
use tirx::problem::{Act, BLayout};
use tirx::runtime::TensorMeta;

use super::{Call, Checker, HALVES, Op, fresh, rows_meta, torch_name};
use crate::error::BindError;
use crate::tensor::{Foreign, Place};

/// A checked GEMM.
#[derive(Clone, Debug)]
pub struct Gemm {
    /// How B is given: TN (`[N, K]` row-major) or NN (`[K, N]`).
    pub layout: BLayout,
    /// `[M, K]`.
    pub a: TensorMeta,
    /// `[N, K]` or `[K, N]`.
    pub b: TensorMeta,
    /// `[M, N]`, scaled only.
    pub c: Option<TensorMeta>,
    /// `[N]`, the fused epilogue only.
    pub bias: Option<(TensorMeta, Act)>,
    /// `[M, N]`, the residual added after the fused epilogue (`act(a @ b + bias) + res`).
    pub res: Option<TensorMeta>,
    /// `[M, N]`.
    pub d: TensorMeta,
    /// α, β: `Some` for the scaled epilogue.
    pub scaled: Option<(f32, f32)>,
}

/// The GEMM's inputs and options, as the Python call gives them.
pub struct GemmArgs<'a> {
    /// `a` `[M, K]`.
    pub a: &'a Foreign,
    /// `b` `[K, N]`.
    pub b: &'a Foreign,
    /// `c` `[M, N]`.
    pub c: Option<&'a Foreign>,
    /// `bias` `[N]`.
    pub bias: Option<&'a Foreign>,
    /// `activation`: `None`, `"relu"`, `"gelu"` (tanh form), `"silu"`.
    pub activation: Option<&'a str>,
    /// `residual` `[M, N]`, added last.
    pub residual: Option<&'a Foreign>,
    /// α.
    pub alpha: f32,
    /// β.
    pub beta: f32,
    /// The output `[M, N]`, or `None` to explain with `out_dtype`.
    pub out: Option<&'a Foreign>,
    /// The output's dtype when `out` is `None`.
    pub out_dtype: ElemType,
}

const GEMM_OUT: &[ElemType] = &[ElemType::Bf16, ElemType::F16, ElemType::F32];

const B_LAYOUTS: &str =
    "a row-major [K, N], or the transpose of a row-major [N, K] (e.g. `weight.t()`)";

/// `gemm(a, b, …)`.
pub fn gemm(g: &GemmArgs<'_>) -> Result<Call, BindError> {
    let mut ck = Checker::new("gemm");
    ck.device("a", g.a)?;
    ck.device("b", g.b)?;
    for (arg, t) in [
        ("c", g.c),
        ("bias", g.bias),
        ("residual", g.residual),
        ("out", g.out),
    ] {
        if let Some(t) = t {
            ck.device(arg, t)?;
        }
    }
    let (input, output) = dtypes(&ck, g)?;
    ck.rank("a", g.a, &[2], "[M, K]")?;
    ck.rank("b", g.b, &[2], "[K, N]")?;
    let a = rows_meta(input, g.a)
        .ok_or_else(|| ck.not_contiguous("a", g.a, "a unit stride along K (row-major [M, K])"))?;
    let (m, k) = (g.a.shape[0], g.a.shape[1]);
    let (kb, n) = (g.b.shape[0], g.b.shape[1]);
    if kb != k {
        return Err(ck.shape(format!(
            "`a` is [M, K] = {:?} but `b` is [K, N] = {:?}: K disagrees ({k} vs {kb})",
            g.a.shape, g.b.shape
        )));
    }
    let (layout, b) = b_layout(&ck, g.b, input, k, n)?;
    let mn = |arg: &str, t: &Foreign| -> Result<TensorMeta, BindError> {
        ck.rank(arg, t, &[2], "[M, N]")?;
        if t.shape != [m, n] {
            return Err(ck.shape(format!(
                "`{arg}` has shape {:?}; a @ b is [M, N] = [{m}, {n}]",
                t.shape
            )));
        }
        rows_meta(output, t).ok_or_else(|| ck.not_contiguous(arg, t, "a unit stride along N"))
    };
    let d = match g.out {
        Some(o) => mn("out", o)?,
        None => fresh(output, &[m, n]),
    };
    let c = g.c.map(|c| mn("c", c)).transpose()?;
    let residual = g.residual.map(|r| mn("residual", r)).transpose()?;
    let (bias, mut scaled) = epilogue(&ck, g, n, output)?;
    // The residual: after the fused bias epilogue its own tensor; without a bias it is C with
    // α = β = 1 (the scaled kernels compute it).
    let (c, res) = match (residual, &bias) {
        (Some(r), Some(_)) => (c, Some(r)),
        (Some(r), None) if scaled.is_none() => {
            scaled = Some((1.0, 1.0));
            (Some(r), None)
        }
        (Some(_), None) => {
            return Err(BindError::Option {
                op: "gemm",
                why: "`residual` is `c` with alpha = beta = 1: pass one of them, not both".into(),
            });
        }
        (None, _) => (c, None),
    };
    // α without C: the scaled kernels take a C they do not read where β = 0; D stands in.
    let c = scaled.map(|_| c.unwrap_or_else(|| d.clone()));
    Ok(Call {
        place: ck.first.as_ref().map_or(Place::CudaPointer, |f| f.1),
        probe_addr: ck.probe_addr,
        op: Op::Gemm(Gemm {
            layout,
            a,
            b,
            c,
            bias,
            res,
            d,
            scaled,
        }),
    })
}

/// A's/B's type (bf16 or f16, the same) and D's (bf16, f16 or f32; `c` and `bias` in it).
fn dtypes(ck: &Checker, g: &GemmArgs<'_>) -> Result<(ElemType, ElemType), BindError> {
    let input = ck.dtype("a", g.a, HALVES)?;
    ck.same_dtype("b", g.b, input, "a")?;
    let output = match g.out {
        Some(o) => ck.dtype("out", o, GEMM_OUT)?,
        None if GEMM_OUT.contains(&g.out_dtype) => g.out_dtype,
        None => {
            return Err(BindError::Option {
                op: "gemm",
                why: format!(
                    "out_dtype {} is not one of bf16, f16, f32",
                    torch_name(g.out_dtype)
                ),
            });
        }
    };
    if let Some(c) = g.c {
        ck.same_dtype("c", c, output, "out")?;
    }
    if let Some(bias) = g.bias {
        ck.same_dtype("bias", bias, output, "out")?;
    }
    if let Some(r) = g.residual {
        ck.same_dtype("residual", r, output, "out")?;
    }
    Ok((input, output))
}

/// B `[K, N]`: row-major → NN (`[K, N]`); the transpose of a row-major `[N, K]` → TN.
fn b_layout(
    ck: &Checker,
    b: &Foreign,
    input: ElemType,
    k: usize,
    n: usize,
) -> Result<(BLayout, TensorMeta), BindError> {
    if b.strides[1] == 1 || n == 1 {
        let meta = rows_meta(input, b).ok_or_else(|| ck.not_contiguous("b", b, B_LAYOUTS))?;
        return Ok((BLayout::Nn, meta));
    }
    if b.strides[0] == 1 && b.strides[1] >= 0 {
        let meta = TensorMeta {
            elem: input,
            shape: vec![n, k],
            strides: vec![b.strides[1] as usize, 1],
            addr: b.addr,
        };
        return Ok((BLayout::Tn, meta));
    }
    Err(ck.not_contiguous("b", b, B_LAYOUTS))
}

/// The fused bias epilogue (`bias` `[N]` and its activation) or the scaled one (α, β).
#[allow(clippy::type_complexity)]
fn epilogue(
    ck: &Checker,
    g: &GemmArgs<'_>,
    n: usize,
    output: ElemType,
) -> Result<(Option<(TensorMeta, Act)>, Option<(f32, f32)>), BindError> {
    let option = |why: String| BindError::Option { op: "gemm", why };
    let act = match g.activation {
        None | Some("none") => None,
        Some("relu") => Some(Act::Relu),
        Some("gelu") | Some("gelu_tanh") => Some(Act::Gelu),
        Some("silu") => Some(Act::Silu),
        Some(other) => {
            return Err(option(format!(
                "activation {other:?} is not one of None, \"relu\", \"gelu\" (tanh form), \"silu\""
            )));
        }
    };
    let scaled = (g.c.is_some() || g.alpha != 1.0 || g.beta != 0.0).then_some((g.alpha, g.beta));
    let bias = match g.bias {
        None if act.is_some() => {
            return Err(option(
                "an activation is fused after a bias: pass `bias=` (a zero vector for none)".into(),
            ));
        }
        None => None,
        Some(_) if scaled.is_some() => {
            return Err(option(
                "no kernel fuses a bias with alpha/beta/c: use one epilogue per call".into(),
            ));
        }
        Some(t) => {
            ck.rank("bias", t, &[1], "[N]")?;
            if t.shape[0] != n || (t.strides[0] != 1 && n > 1) {
                return Err(ck.shape(format!(
                    "`bias` has shape {:?} and strides {:?}; it must be a contiguous [N] = [{n}]",
                    t.shape, t.strides
                )));
            }
            Some((
                TensorMeta::row_major(output, &[n], t.addr),
                act.unwrap_or(Act::None),
            ))
        }
    };
    if g.beta != 0.0 && g.c.is_none() {
        return Err(option(format!(
            "beta = {} scales `c`, but no `c` was given",
            g.beta
        )));
    }
    Ok((bias, scaled))
}
