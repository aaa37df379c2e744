//! Every op's argument checks, from the tensors as candle lays them out ([`Desc`]) to a checked
//! [`Op`] — the problem in the runtime's terms (`TensorMeta`s in the layout the kernels take) —
//! or the first thing wrong with it, naming the argument.
//!
//! Order, the same for every op: element types, layouts (the strides a kernel can read),
//! shapes (agreement between arguments). The device comes before all of them in candle itself
//! (`apply_op*` refuses tensors on different devices) and after them here: a CPU tensor gets
//! these checks first (`cpu_fwd`), then [`Error::NotCuda`], so every refusal is reachable
//! without a GPU. The launch plan (TMA alignment, grid, shared memory) and the choice of kernel
//! come after, from the runtime and the dispatcher, on the real device.
//!
//! Outputs are described as fresh contiguous tensors at address 0; the caller allocates them
//! and sets the address before the launch ([`Op::outputs_mut`]).

use candle_core::DType;
use tirx::abi::ElemType;
use tirx::problem::{Act, BLayout, RowOp};
use tirx::runtime::TensorMeta;

use crate::Error;

/// One tensor as a `CustomOp` sees it: element type, shape and strides (in elements), and the
/// address of its first element (0 on the CPU).
#[derive(Clone, Copy, Debug)]
pub struct Desc<'a> {
    /// candle's element type.
    pub dtype: DType,
    /// Extents, outermost first.
    pub shape: &'a [usize],
    /// Strides in elements, outermost first.
    pub strides: &'a [usize],
    /// Device address of the first element (the layout's start offset included).
    pub addr: u64,
}

impl Desc<'_> {
    pub(crate) fn is_contiguous(&self) -> bool {
        let mut want = 1;
        for (&n, &s) in self.shape.iter().zip(self.strides).rev() {
            if n != 1 && s != want {
                return false;
            }
            want *= n;
        }
        true
    }
}

/// A checked problem.
#[derive(Clone, Debug)]
pub enum Op {
    /// `d = act(a·op(b) + bias)`, or the plain product.
    Gemm {
        /// How B is given: TN (`[N, K]` row-major) or NN (`[K, N]` row-major).
        layout: BLayout,
        /// `[M, K]`.
        a: TensorMeta,
        /// `[N, K]` (TN) or `[K, N]` (NN).
        b: TensorMeta,
        /// `[N]` and its activation: the fused epilogue.
        bias: Option<(TensorMeta, Act)>,
        /// `[M, N]`, added last: `act(a·op(b) + bias) + res`, or `a·op(b) + res` without a
        /// bias (the scaled kernels with C = `res`, α = β = 1).
        res: Option<TensorMeta>,
        /// `[M, N]`, the output.
        d: TensorMeta,
    },
    /// `d = s ⊙ a·bᵀ` in FP8 (`crate::fp8`).
    GemmFp8(crate::fp8::GemmFp8),
    /// A row op over the last dimension.
    Row {
        /// Which.
        op: RowOp,
        /// `[M, N]`.
        x: TensorMeta,
        /// `[N]` (RMSNorm's weight).
        w: Option<TensorMeta>,
        /// `[M, N]`, the output.
        y: TensorMeta,
        /// ε.
        eps: f32,
    },
    /// `y = silu(x)·g` elementwise (a SwiGLU MLP's gate), all `[M, N]`.
    SiluMul {
        /// `[M, N]`, the gate's input.
        x: TensorMeta,
        /// `[M, N]`, what the activated gate multiplies.
        g: TensorMeta,
        /// `[M, N]`, the output.
        y: TensorMeta,
    },
    /// Attention forward on `[q, k, v, o, lse]` in the kernels' layout.
    Attention {
        /// `[B, S, HQ·D]`, `[B, SK, HK·D]` ×2, `[B, S, HQ·D]` (the output), `[B·HQ, S, 1]`
        /// (the log-sum-exp, f32, scratch).
        tensors: [TensorMeta; 5],
        /// Head dimension.
        d: usize,
        /// Causal mask (bottom-right aligned).
        causal: bool,
        /// Softmax scale.
        scale: f32,
    },
}

impl Op {
    /// The tensors the op writes, which the caller allocates: the output first, then any
    /// scratch (attention's log-sum-exp).
    pub fn outputs_mut(&mut self) -> Vec<&mut TensorMeta> {
        match self {
            Op::Gemm { d, .. } | Op::GemmFp8(crate::fp8::GemmFp8 { d, .. }) => vec![d],
            Op::Row { y, .. } | Op::SiluMul { y, .. } => vec![y],
            Op::Attention { tensors, .. } => {
                let [_, _, _, o, lse] = tensors;
                vec![o, lse]
            }
        }
    }
}

/// candle's element type in the runtime's terms (`None`: no kernel takes it).
fn elem(d: DType) -> Option<ElemType> {
    match d {
        DType::BF16 => Some(ElemType::Bf16),
        DType::F16 => Some(ElemType::F16),
        DType::F32 => Some(ElemType::F32),
        _ => None,
    }
}

/// The checks of one call: the op's name, for the messages.
struct Checker {
    op: &'static str,
}

impl Checker {
    fn dtype(&self, arg: &str, t: &Desc<'_>, allowed: &[DType]) -> Result<ElemType, Error> {
        match elem(t.dtype) {
            Some(e) if allowed.contains(&t.dtype) => Ok(e),
            _ => Err(Error::Dtype {
                op: self.op,
                arg: arg.into(),
                got: t.dtype,
                want: allowed
                    .iter()
                    .map(|d| format!("{d:?}"))
                    .collect::<Vec<_>>()
                    .join(" or "),
            }),
        }
    }

    fn same_dtype(&self, arg: &str, t: &Desc<'_>, want: DType, other: &str) -> Result<(), Error> {
        if t.dtype == want {
            return Ok(());
        }
        Err(Error::Dtype {
            op: self.op,
            arg: arg.into(),
            got: t.dtype,
            want: format!("{want:?} (the dtype of `{other}`)"),
        })
    }

    fn rank(&self, arg: &str, t: &Desc<'_>, rank: usize, shape: &str) -> Result<(), Error> {
        if t.shape.len() == rank {
            return Ok(());
        }
        Err(self.shape(format!(
            "`{arg}` has shape {:?}; it must be {shape}",
            t.shape
        )))
    }

    fn layout(&self, arg: &str, t: &Desc<'_>, want: &str) -> Error {
        Error::Layout {
            op: self.op,
            arg: arg.into(),
            shape: t.shape.to_vec(),
            strides: t.strides.to_vec(),
            want: want.into(),
        }
    }

    fn shape(&self, why: String) -> Error {
        Error::Shape { op: self.op, why }
    }
}

/// A 2-D view with a unit innermost stride (rows may be padded).
fn rows_meta(e: ElemType, t: &Desc<'_>) -> Option<TensorMeta> {
    let [n0, n1] = t.shape[..] else { return None };
    let [s0, s1] = t.strides[..] else { return None };
    if s1 != 1 && n1 > 1 {
        return None;
    }
    Some(TensorMeta {
        elem: e,
        shape: vec![n0, n1],
        strides: vec![if n0 == 1 { n1.max(1) } else { s0 }, 1],
        addr: t.addr,
    })
}

/// A contiguous tensor flattened to `[rows, last]`.
fn flat_meta(e: ElemType, t: &Desc<'_>) -> Option<TensorMeta> {
    if !t.is_contiguous() || t.shape.is_empty() {
        return None;
    }
    let last = t.shape[t.shape.len() - 1];
    let rows = t.shape[..t.shape.len() - 1].iter().product();
    Some(TensorMeta::row_major(e, &[rows, last], t.addr))
}

const HALVES: &[DType] = &[DType::BF16, DType::F16];

const B_LAYOUTS: &str = "a row-major [K, N], or the transpose of a row-major [N, K] (`w.t()?`)";

/// `gemm(a, b)` (`a @ b`, `a` `[M, K]`, `b` `[K, N]`), with `act(a @ b + bias)` when `bias`
/// (`[N]`) is given, and `res` (`[M, N]`) added last when given. The output is `[M, N]` in
/// `a`'s type.
pub fn gemm(
    a: &Desc<'_>,
    b: &Desc<'_>,
    bias: Option<(&Desc<'_>, Act)>,
    res: Option<&Desc<'_>>,
) -> Result<Op, Error> {
    let ck = Checker { op: "gemm" };
    let input = ck.dtype("a", a, HALVES)?;
    ck.same_dtype("b", b, a.dtype, "a")?;
    if let Some((bias, _)) = bias {
        ck.same_dtype("bias", bias, a.dtype, "a")?;
    }
    if let Some(res) = res {
        ck.same_dtype("res", res, a.dtype, "a")?;
    }
    ck.rank("a", a, 2, "[M, K]")?;
    ck.rank("b", b, 2, "[K, N]")?;
    let am = rows_meta(input, a)
        .ok_or_else(|| ck.layout("a", a, "a unit stride along K (row-major [M, K])"))?;
    let (m, k) = (a.shape[0], a.shape[1]);
    let (kb, n) = (b.shape[0], b.shape[1]);
    if kb != k {
        return Err(ck.shape(format!(
            "`a` is [M, K] = {:?} but `b` is [K, N] = {:?}: K disagrees ({k} vs {kb})",
            a.shape, b.shape
        )));
    }
    let (layout, bm) = if b.strides[1] == 1 || n == 1 {
        let meta = rows_meta(input, b).ok_or_else(|| ck.layout("b", b, B_LAYOUTS))?;
        (BLayout::Nn, meta)
    } else if b.strides[0] == 1 || k == 1 {
        let meta = TensorMeta {
            elem: input,
            shape: vec![n, k],
            strides: vec![b.strides[1], 1],
            addr: b.addr,
        };
        (BLayout::Tn, meta)
    } else {
        return Err(ck.layout("b", b, B_LAYOUTS));
    };
    let bias = match bias {
        None => None,
        Some((t, act)) => {
            if t.shape != [n] || !t.is_contiguous() {
                return Err(ck.shape(format!(
                    "`bias` has shape {:?} and strides {:?}; it must be a contiguous [{n}] (N)",
                    t.shape, t.strides
                )));
            }
            Some((TensorMeta::row_major(input, &[n], t.addr), act))
        }
    };
    let res = match res {
        None => None,
        Some(t) => {
            ck.rank("res", t, 2, "[M, N]")?;
            let meta = rows_meta(input, t)
                .ok_or_else(|| ck.layout("res", t, "a unit stride along N (row-major [M, N])"))?;
            if t.shape != [m, n] {
                return Err(ck.shape(format!(
                    "`res` has shape {:?}; a @ b is [M, N] = [{m}, {n}]",
                    t.shape
                )));
            }
            Some(meta)
        }
    };
    Ok(Op::Gemm {
        layout,
        a: am,
        b: bm,
        bias,
        res,
        d: TensorMeta::row_major(input, &[m, n], 0),
    })
}

/// `softmax(x)` or `rms_norm(x, w, eps)` over the last dimension of a contiguous bf16 `x`.
pub fn row(op: RowOp, x: &Desc<'_>, w: Option<&Desc<'_>>, eps: f32) -> Result<Op, Error> {
    let ck = Checker {
        op: match op {
            RowOp::Softmax => "softmax",
            RowOp::RmsNorm => "rms_norm",
            RowOp::LayerNorm => "layer_norm",
        },
    };
    let e = ck.dtype("x", x, &[DType::BF16])?;
    if let Some(w) = w {
        ck.same_dtype("weight", w, x.dtype, "x")?;
    }
    if x.shape.is_empty() {
        return Err(ck.shape("`x` is a scalar; the op works on its last dimension".into()));
    }
    let xm = flat_meta(e, x).ok_or_else(|| ck.layout("x", x, "a contiguous tensor"))?;
    let n = xm.shape[1];
    let wm = match w {
        None => None,
        Some(w) if w.shape != [n] || !w.is_contiguous() => {
            return Err(ck.shape(format!(
                "`weight` has shape {:?} and strides {:?}; it must be a contiguous [{n}] \
                 (x's last dimension)",
                w.shape, w.strides
            )));
        }
        Some(w) => Some(TensorMeta::row_major(e, &[n], w.addr)),
    };
    let y = TensorMeta::row_major(e, &xm.shape, 0);
    Ok(Op::Row {
        op,
        x: xm,
        w: wm,
        y,
        eps,
    })
}

/// `silu_mul(x, g)`: `silu(x)·g` elementwise over contiguous bf16 `x` and `g` of one shape
/// (flattened to `[rows, last]`, as the row ops are).
pub fn silu_mul(x: &Desc<'_>, g: &Desc<'_>) -> Result<Op, Error> {
    let ck = Checker { op: "silu_mul" };
    let e = ck.dtype("x", x, &[DType::BF16])?;
    ck.same_dtype("g", g, x.dtype, "x")?;
    if x.shape.is_empty() {
        return Err(ck.shape("`x` is a scalar; silu_mul takes a tensor".into()));
    }
    let xm = flat_meta(e, x).ok_or_else(|| ck.layout("x", x, "a contiguous tensor"))?;
    let gm = flat_meta(e, g).ok_or_else(|| ck.layout("g", g, "a contiguous tensor"))?;
    if g.shape != x.shape {
        return Err(ck.shape(format!(
            "`g` has shape {:?} but `x` has {:?}: they must agree",
            g.shape, x.shape
        )));
    }
    let y = TensorMeta::row_major(e, &xm.shape, 0);
    Ok(Op::SiluMul { x: xm, g: gm, y })
}

/// `attention(q, k, v)` on flash-attention's `[B, S, H, D]` layout; `scale` `None` is 1/√D.
pub fn attention(
    q: &Desc<'_>,
    k: &Desc<'_>,
    v: &Desc<'_>,
    causal: bool,
    scale: Option<f32>,
) -> Result<Op, Error> {
    let ck = Checker { op: "attention" };
    let e = ck.dtype("q", q, HALVES)?;
    ck.same_dtype("k", k, q.dtype, "q")?;
    ck.same_dtype("v", v, q.dtype, "q")?;
    ck.rank("q", q, 4, "[B, S, HQ, D]")?;
    ck.rank("k", k, 4, "[B, SK, HK, D]")?;
    ck.rank("v", v, 4, "[B, SK, HK, D]")?;
    // [B, S, H, D] with H and D packed → the kernels' [B, S, H·D].
    let packed = |arg: &str, t: &Desc<'_>| -> Result<TensorMeta, Error> {
        let (b, s, h, d) = (t.shape[0], t.shape[1], t.shape[2], t.shape[3]);
        let ok = (t.strides[3] == 1 || d == 1) && (t.strides[2] == d || h == 1);
        if !ok {
            return Err(ck.layout(
                arg,
                t,
                "heads and head dims packed (strides [*, *, D, 1]: flash-attention's \
                 [B, S, H, D]; from [B, H, S, D] use `.transpose(1, 2)?.contiguous()?`)",
            ));
        }
        let s0 = if b == 1 { s * h * d } else { t.strides[0] };
        let s1 = if s == 1 { h * d } else { t.strides[1] };
        Ok(TensorMeta {
            elem: e,
            shape: vec![b, s, h * d],
            strides: vec![s0.max(1), s1.max(1), 1],
            addr: t.addr,
        })
    };
    let (qs, ks) = (q.shape, k.shape);
    if v.shape != ks {
        return Err(ck.shape(format!(
            "`k` is {ks:?} but `v` is {:?}: they must agree",
            v.shape
        )));
    }
    if qs[0] != ks[0] || qs[3] != ks[3] {
        return Err(ck.shape(format!(
            "`q` is [B, S, HQ, D] = {qs:?} but `k` is [B, SK, HK, D] = {ks:?}: B and D must agree"
        )));
    }
    let (b, s, hq, d) = (qs[0], qs[1], qs[2], qs[3]);
    let hk = ks[2];
    if hk == 0 || hq % hk != 0 {
        return Err(ck.shape(format!(
            "{hq} query heads over {hk} K/V heads: grouped-query attention needs HK to divide HQ"
        )));
    }
    let (qm, km, vm) = (packed("q", q)?, packed("k", k)?, packed("v", v)?);
    Ok(Op::Attention {
        tensors: [
            qm,
            km,
            vm,
            TensorMeta::row_major(e, &[b, s, hq * d], 0),
            TensorMeta::row_major(ElemType::F32, &[b * hq, s, 1], 0),
        ],
        d,
        causal,
        scale: scale.unwrap_or(1.0 / (d.max(1) as f32).sqrt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc<'a>(dtype: DType, shape: &'a [usize], strides: &'a [usize]) -> Desc<'a> {
        Desc {
            dtype,
            shape,
            strides,
            addr: 0,
        }
    }

    #[test]
    fn gemm_reads_the_layout_of_b_from_its_strides() {
        let a = desc(DType::BF16, &[64, 32], &[32, 1]);
        let nn = desc(DType::BF16, &[32, 48], &[48, 1]);
        let tn = desc(DType::BF16, &[32, 48], &[1, 32]); // [48, 32] row-major, transposed
        let Op::Gemm { layout, b, d, .. } = gemm(&a, &nn, None, None).unwrap() else {
            panic!()
        };
        assert_eq!(
            (layout, b.shape, d.shape),
            (BLayout::Nn, vec![32, 48], vec![64, 48])
        );
        let Op::Gemm { layout, b, .. } = gemm(&a, &tn, None, None).unwrap() else {
            panic!()
        };
        assert_eq!(
            (layout, b.shape, b.strides),
            (BLayout::Tn, vec![48, 32], vec![32, 1])
        );
        let neither = desc(DType::BF16, &[32, 48], &[96, 2]);
        let e = gemm(&a, &neither, None, None).unwrap_err().to_string();
        assert!(
            e.contains("`b` has shape [32, 48] and strides [96, 2]"),
            "{e}"
        );
    }

    #[test]
    fn gemm_refusals_name_the_argument() {
        let a = desc(DType::BF16, &[64, 32], &[32, 1]);
        let b = desc(DType::BF16, &[32, 48], &[48, 1]);
        let f32a = desc(DType::F32, &[64, 32], &[32, 1]);
        let e = gemm(&f32a, &b, None, None).unwrap_err().to_string();
        assert!(
            e.contains("`a` has dtype F32; gemm takes BF16 or F16"),
            "{e}"
        );
        let f16b = desc(DType::F16, &[32, 48], &[48, 1]);
        let e = gemm(&a, &f16b, None, None).unwrap_err().to_string();
        assert!(
            e.contains("`b` has dtype F16; gemm takes BF16 (the dtype of `a`)"),
            "{e}"
        );
        let k_off = desc(DType::BF16, &[31, 48], &[48, 1]);
        let e = gemm(&a, &k_off, None, None).unwrap_err().to_string();
        assert!(e.contains("K disagrees (32 vs 31)"), "{e}");
        let bias = desc(DType::BF16, &[47], &[1]);
        let e = gemm(&a, &b, Some((&bias, Act::Relu)), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`bias` has shape [47]"), "{e}");
        let at = desc(DType::BF16, &[64, 32], &[1, 64]);
        let e = gemm(&at, &b, None, None).unwrap_err().to_string();
        assert!(e.contains("a unit stride along K"), "{e}");
    }

    #[test]
    fn rows_flatten_contiguous_tensors_and_check_the_weight() {
        let x = desc(DType::BF16, &[2, 3, 40], &[120, 40, 1]);
        let w = desc(DType::BF16, &[40], &[1]);
        let Op::Row {
            x: xm, y, w: wm, ..
        } = row(RowOp::RmsNorm, &x, Some(&w), 1e-6).unwrap()
        else {
            panic!()
        };
        assert_eq!((xm.shape, y.shape), (vec![6, 40], vec![6, 40]));
        assert_eq!(wm.unwrap().shape, vec![40]);
        let w39 = desc(DType::BF16, &[39], &[1]);
        let e = row(RowOp::RmsNorm, &x, Some(&w39), 1e-6)
            .unwrap_err()
            .to_string();
        assert!(e.contains("contiguous [40]"), "{e}");
        let xt = desc(DType::BF16, &[40, 6], &[1, 40]);
        let e = row(RowOp::Softmax, &xt, None, 0.0).unwrap_err().to_string();
        assert!(
            e.contains("softmax: `x` has shape [40, 6] and strides [1, 40]"),
            "{e}"
        );
        let f16 = desc(DType::F16, &[6, 40], &[40, 1]);
        let e = row(RowOp::Softmax, &f16, None, 0.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`x` has dtype F16; softmax takes BF16"), "{e}");
    }

    #[test]
    fn gemm_takes_a_residual_of_the_output_shape() {
        let a = desc(DType::BF16, &[64, 32], &[32, 1]);
        let tn = desc(DType::BF16, &[32, 48], &[1, 32]);
        let res = desc(DType::BF16, &[64, 48], &[48, 1]);
        let Op::Gemm { res: r, d, .. } = gemm(&a, &tn, None, Some(&res)).unwrap() else {
            panic!()
        };
        assert_eq!((r.unwrap().shape, d.shape), (vec![64, 48], vec![64, 48]));
        // Rows of the residual may be padded, as A's.
        let padded = desc(DType::BF16, &[64, 48], &[64, 1]);
        let Op::Gemm { res: r, .. } = gemm(&a, &tn, None, Some(&padded)).unwrap() else {
            panic!()
        };
        assert_eq!(r.unwrap().strides, vec![64, 1]);
        let short = desc(DType::BF16, &[64, 47], &[47, 1]);
        let e = gemm(&a, &tn, None, Some(&short)).unwrap_err().to_string();
        assert!(
            e.contains("`res` has shape [64, 47]; a @ b is [M, N] = [64, 48]"),
            "{e}"
        );
        let f16 = desc(DType::F16, &[64, 48], &[48, 1]);
        let e = gemm(&a, &tn, None, Some(&f16)).unwrap_err().to_string();
        assert!(
            e.contains("`res` has dtype F16; gemm takes BF16 (the dtype of `a`)"),
            "{e}"
        );
        let cols = desc(DType::BF16, &[64, 48], &[1, 64]);
        let e = gemm(&a, &tn, None, Some(&cols)).unwrap_err().to_string();
        assert!(
            e.contains("`res` has shape [64, 48] and strides [1, 64]"),
            "{e}"
        );
        let flat = desc(DType::BF16, &[3072], &[1]);
        let e = gemm(&a, &tn, None, Some(&flat)).unwrap_err().to_string();
        assert!(
            e.contains("`res` has shape [3072]; it must be [M, N]"),
            "{e}"
        );
    }

    #[test]
    fn silu_mul_flattens_two_tensors_of_one_shape() {
        let x = desc(DType::BF16, &[2, 3, 40], &[120, 40, 1]);
        let Op::SiluMul { x: xm, g, y } = silu_mul(&x, &x).unwrap() else {
            panic!()
        };
        assert_eq!(
            (xm.shape, g.shape, y.shape),
            (vec![6, 40], vec![6, 40], vec![6, 40])
        );
        let other = desc(DType::BF16, &[2, 40, 3], &[120, 3, 1]);
        let e = silu_mul(&x, &other).unwrap_err().to_string();
        assert!(
            e.contains("silu_mul: `g` has shape [2, 40, 3] but `x` has [2, 3, 40]"),
            "{e}"
        );
        let f16 = desc(DType::F16, &[2, 3, 40], &[120, 40, 1]);
        let e = silu_mul(&x, &f16).unwrap_err().to_string();
        assert!(
            e.contains("`g` has dtype F16; silu_mul takes BF16 (the dtype of `x`)"),
            "{e}"
        );
        let e = silu_mul(&f16, &f16).unwrap_err().to_string();
        assert!(e.contains("`x` has dtype F16; silu_mul takes BF16"), "{e}");
        let xt = desc(DType::BF16, &[40, 6], &[1, 40]);
        let e = silu_mul(&xt, &xt).unwrap_err().to_string();
        assert!(
            e.contains("`x` has shape [40, 6] and strides [1, 40]"),
            "{e}"
        );
        let e = silu_mul(&desc(DType::BF16, &[], &[]), &desc(DType::BF16, &[], &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`x` is a scalar"), "{e}");
    }

    #[test]
    fn attention_packs_heads_and_checks_grouped_queries() {
        let q = desc(DType::BF16, &[2, 100, 8, 64], &[51200, 512, 64, 1]);
        let kv = desc(DType::BF16, &[2, 80, 2, 64], &[10240, 128, 64, 1]);
        let Op::Attention { tensors, scale, .. } = attention(&q, &kv, &kv, true, None).unwrap()
        else {
            panic!()
        };
        assert_eq!(tensors[0].shape, vec![2, 100, 512]);
        assert_eq!(tensors[1].shape, vec![2, 80, 128]);
        assert_eq!(tensors[4].shape, vec![16, 100, 1]);
        assert!((scale - 0.125).abs() < 1e-7);
        let kv3 = desc(DType::BF16, &[2, 80, 3, 64], &[15360, 192, 64, 1]);
        let e = attention(&q, &kv3, &kv3, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("8 query heads over 3 K/V heads"), "{e}");
        // [B, H, S, D] transposed to [B, S, H, D] without `.contiguous()`.
        let bhsd = desc(DType::BF16, &[2, 100, 8, 64], &[51200, 64, 6400, 1]);
        let e = attention(&bhsd, &kv, &kv, false, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`q` has shape [2, 100, 8, 64] and strides"),
            "{e}"
        );
        assert!(e.contains(".transpose(1, 2)?.contiguous()?"), "{e}");
        let v = desc(DType::F16, &[2, 80, 2, 64], &[10240, 128, 64, 1]);
        let e = attention(&q, &kv, &v, false, None).unwrap_err().to_string();
        assert!(e.contains("`v` has dtype F16"), "{e}");
    }
}
