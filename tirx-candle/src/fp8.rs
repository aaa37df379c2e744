//! The FP8 GEMM over candle tensors: `d = s ⊙ (a @ b)` with `a` `[M, K]` and `b` `[K, N]`
//! (the transpose of a row-major `[N, K]`: `w.t()?`) in `DType::F8E4M3`, f32 scales
//! per-tensor, row-wise or block-wise ([`Fp8Scales`]), `d` bf16 — on the host's choice of an
//! FP8 GEMM (`tirx_kernels::gemm::host::gemm_fp8`'s, through the same request).
//!
//! candle's `CustomOp`s take at most three tensors; the op runs on `(a, b)` and holds the
//! scale tensors itself, reading their storage in `cuda_fwd` (on `a`'s device, checked here).
//! Checks, in every op's order: element types, layouts, shapes (K a multiple of 16: TMA rows
//! of 16-byte strides; the scales' shapes for their form), then the device.
//!
//! Accumulation ([`Fp8Accum`], `torch._scaled_mm`'s `use_fast_accum`): [`gemm_fp8`] promotes
//! the tensor core's FP8 partial sums into f32 every 128 of K, as torch does by default;
//! [`gemm_fp8_accum`] takes the choice (`Fp8Accum::Fast`: any kernel, the fastest first).

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CudaStorage, CustomOp2, DType, Layout, Shape, Storage, Tensor};
use tirx::abi::ElemType;
use tirx::runtime::TensorMeta;
pub use tirx_kernels::gemm::fp8_ref::Fp8Accum;

use crate::Error;
use crate::check::{Desc, Op};

/// The scales of [`gemm_fp8`].
#[derive(Clone, Copy, Debug)]
pub enum Fp8Scales<'t> {
    /// `scale_a`, `scale_b`: d = (scale_a·scale_b)·(a @ b).
    Tensor(f32, f32),
    /// `sa` `[M]` (or `[M, 1]`), `sb` `[N]` (or `[1, N]`), f32 contiguous:
    /// `d[i, j] = sa[i]·sb[j]·(a @ b)[i, j]` (`torch._scaled_mm`'s row-wise form).
    Rows(&'t Tensor, &'t Tensor),
    /// `sa` `[M, cdiv(K, 128)]` (per 1×128 block of `a`), `sb` `[cdiv(N, 128), cdiv(K, 128)]`
    /// (per 128×128 block of the `[N, K]` weight), f32 row-major (DeepSeek-V3's recipe).
    Blocks(&'t Tensor, &'t Tensor),
}

/// The scales of a checked FP8 GEMM, in the kernels' terms.
#[derive(Clone, Debug)]
pub enum Scales {
    /// Launch parameters.
    Tensor(f32, f32),
    /// `sa` [M], `sb` [N].
    Rows(TensorMeta, TensorMeta),
    /// `sa` [M, KB], `sb` [NB, KB].
    Blocks(TensorMeta, TensorMeta),
}

/// A checked FP8 GEMM: d = s ⊙ a·bᵀ with b given N×K.
#[derive(Clone, Debug)]
pub struct GemmFp8 {
    /// `[M, K]` E4M3.
    pub a: TensorMeta,
    /// `[N, K]` E4M3.
    pub b: TensorMeta,
    /// The scales.
    pub scales: Scales,
    /// `[M, N]` bf16, the output.
    pub d: TensorMeta,
    /// How the products accumulate ([`check`] gives `Promoted`; the op sets its own).
    pub accum: Fp8Accum,
}

/// The block of the block-wise form (`gemm/fp8_block.rs`).
const BLOCK: usize = 128;

fn shape(why: String) -> Error {
    Error::Shape {
        op: "gemm_fp8",
        why,
    }
}

fn layout(arg: &str, t: &Desc<'_>, want: &str) -> Error {
    Error::Layout {
        op: "gemm_fp8",
        arg: arg.into(),
        shape: t.shape.to_vec(),
        strides: t.strides.to_vec(),
        want: want.into(),
    }
}

fn dtype(arg: &str, t: &Desc<'_>, want: DType) -> Result<(), Error> {
    if t.dtype == want {
        return Ok(());
    }
    Err(Error::Dtype {
        op: "gemm_fp8",
        arg: arg.into(),
        got: t.dtype,
        want: format!("{want:?}"),
    })
}

/// The scale tensors' descriptions, by form (`None` per-tensor).
pub enum ScaleDescs<'a> {
    /// Per-tensor values.
    Tensor(f32, f32),
    /// Row-wise `sa`, `sb`.
    Rows(Desc<'a>, Desc<'a>),
    /// Block-wise `sa`, `sb`.
    Blocks(Desc<'a>, Desc<'a>),
}

/// The checks of `gemm_fp8(a, b, scales)`: the problem, or the first thing wrong, naming the
/// argument.
pub fn check(a: &Desc<'_>, b: &Desc<'_>, scales: &ScaleDescs<'_>) -> Result<GemmFp8, Error> {
    dtype("a", a, DType::F8E4M3)?;
    dtype("b", b, DType::F8E4M3)?;
    if let ScaleDescs::Rows(sa, sb) | ScaleDescs::Blocks(sa, sb) = scales {
        dtype("sa", sa, DType::F32)?;
        dtype("sb", sb, DType::F32)?;
    }
    for (arg, t, want) in [("a", a, "[M, K]"), ("b", b, "[K, N]")] {
        if t.shape.len() != 2 {
            return Err(shape(format!(
                "`{arg}` has shape {:?}; it must be {want}",
                t.shape
            )));
        }
    }
    let (m, k) = (a.shape[0], a.shape[1]);
    let (kb, n) = (b.shape[0], b.shape[1]);
    if a.strides[1] != 1 && k > 1 {
        return Err(layout("a", a, "a unit stride along K (row-major [M, K])"));
    }
    if !(b.strides[0] == 1 || kb == 1) {
        return Err(layout(
            "b",
            b,
            "the transpose of a row-major [N, K] (`w.t()?`): the FP8 kernels read B as N×K",
        ));
    }
    if kb != k {
        return Err(shape(format!(
            "`a` is [M, K] = {:?} but `b` is [K, N] = {:?}: K disagrees ({k} vs {kb})",
            a.shape, b.shape
        )));
    }
    if k % 16 != 0 {
        return Err(shape(format!(
            "K = {k} is not a multiple of 16: the FP8 kernels read rows of A and B by TMA \
             (16-byte strides); pad K with zeros"
        )));
    }
    let am = TensorMeta {
        elem: ElemType::E4m3,
        shape: vec![m, k],
        strides: vec![if m == 1 { k.max(1) } else { a.strides[0] }, 1],
        addr: a.addr,
    };
    let bm = TensorMeta {
        elem: ElemType::E4m3,
        shape: vec![n, k],
        strides: vec![if n == 1 { k.max(1) } else { b.strides[1] }, 1],
        addr: b.addr,
    };
    Ok(GemmFp8 {
        a: am,
        b: bm,
        scales: scale_metas(scales, (m, n, k))?,
        d: TensorMeta::row_major(ElemType::Bf16, &[m, n], 0),
        accum: Fp8Accum::Promoted,
    })
}

/// The scales' metas for their form, or the shape or layout that does not fit it.
fn scale_metas(scales: &ScaleDescs<'_>, (m, n, k): (usize, usize, usize)) -> Result<Scales, Error> {
    let f32_meta =
        |t: &Desc<'_>, shape: &[usize]| TensorMeta::row_major(ElemType::F32, shape, t.addr);
    let contiguous = |arg: &str, t: &Desc<'_>| {
        if t.is_contiguous() {
            Ok(())
        } else {
            Err(layout(arg, t, "a contiguous tensor"))
        }
    };
    match scales {
        ScaleDescs::Tensor(x, y) => Ok(Scales::Tensor(*x, *y)),
        ScaleDescs::Rows(sa, sb) => {
            let ok_a = sa.shape == [m] || sa.shape == [m, 1];
            let ok_b = sb.shape == [n] || sb.shape == [1, n];
            if !(ok_a && ok_b) {
                return Err(shape(format!(
                    "row-wise scales: `sa` has shape {:?} and `sb` {:?}; they must be [M] = \
                     [{m}] (or [{m}, 1]) and [N] = [{n}] (or [1, {n}])",
                    sa.shape, sb.shape
                )));
            }
            contiguous("sa", sa)?;
            contiguous("sb", sb)?;
            Ok(Scales::Rows(f32_meta(sa, &[m]), f32_meta(sb, &[n])))
        }
        ScaleDescs::Blocks(sa, sb) => {
            let (kb, nb) = (k.div_ceil(BLOCK), n.div_ceil(BLOCK));
            if sa.shape != [m, kb] || sb.shape != [nb, kb] {
                return Err(shape(format!(
                    "block-wise scales: `sa` has shape {:?} and `sb` {:?}; they must be \
                     [M, cdiv(K, 128)] = [{m}, {kb}] and [cdiv(N, 128), cdiv(K, 128)] = \
                     [{nb}, {kb}]",
                    sa.shape, sb.shape
                )));
            }
            contiguous("sa", sa)?;
            contiguous("sb", sb)?;
            Ok(Scales::Blocks(
                f32_meta(sa, &[m, kb]),
                f32_meta(sb, &[nb, kb]),
            ))
        }
    }
}

/// `s ⊙ (a @ b)` in FP8: `a` `[M, K]` and `b` `[K, N]` (`w.t()?` of a row-major `[N, K]`
/// weight) in `DType::F8E4M3`, K a multiple of 16, the scales per-tensor, row-wise or
/// block-wise ([`Fp8Scales`]); returns `[M, N]` bf16. Promoted accumulation, torch's default
/// numerics ([`gemm_fp8_accum`] with `Fp8Accum::Promoted`).
pub fn gemm_fp8(a: &Tensor, b: &Tensor, scales: Fp8Scales<'_>) -> candle_core::Result<Tensor> {
    gemm_fp8_accum(a, b, scales, Fp8Accum::Promoted)
}

/// [`gemm_fp8`] with the accumulation chosen: `Fp8Accum::Fast` is `torch._scaled_mm`'s
/// `use_fast_accum=True` (any kernel, the fastest first; the tensor core's FP8 accumulator
/// may run over all of K), `Promoted` its default.
pub fn gemm_fp8_accum(
    a: &Tensor,
    b: &Tensor,
    scales: Fp8Scales<'_>,
    accum: Fp8Accum,
) -> candle_core::Result<Tensor> {
    let op = GemmFp8Op {
        accum,
        scales: match scales {
            Fp8Scales::Tensor(x, y) => Held::Tensor(x, y),
            Fp8Scales::Rows(sa, sb) => Held::Rows(sa.clone(), sb.clone()),
            Fp8Scales::Blocks(sa, sb) => Held::Blocks(sa.clone(), sb.clone()),
        },
    };
    a.apply_op2_no_bwd(b, &op)
}

/// The scales the op holds (candle tensors are cheap handles).
enum Held {
    Tensor(f32, f32),
    Rows(Tensor, Tensor),
    Blocks(Tensor, Tensor),
}

/// The op of [`gemm_fp8`].
struct GemmFp8Op {
    scales: Held,
    accum: Fp8Accum,
}

impl GemmFp8Op {
    /// The held scale tensors (row-wise or block-wise), and whether they are block-wise.
    fn tensors(&self) -> Option<(&Tensor, &Tensor, bool)> {
        match &self.scales {
            Held::Tensor(..) => None,
            Held::Rows(sa, sb) => Some((sa, sb, false)),
            Held::Blocks(sa, sb) => Some((sa, sb, true)),
        }
    }

    /// The scale descriptions, from `desc` of each held tensor's storage and layout.
    fn descs<'a>(&self, sa: Desc<'a>, sb: Desc<'a>, blocks: bool) -> ScaleDescs<'a> {
        if blocks {
            ScaleDescs::Blocks(sa, sb)
        } else {
            ScaleDescs::Rows(sa, sb)
        }
    }
}

fn cpu_scale_desc<'a>(s: &Storage, l: &'a Layout) -> Desc<'a> {
    Desc {
        dtype: s.dtype(),
        shape: l.shape().dims(),
        strides: l.stride(),
        addr: 0,
    }
}

impl CustomOp2 for GemmFp8Op {
    fn name(&self) -> &'static str {
        "tirx-gemm-fp8"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (a, b) = (crate::cpu_desc(s1, l1), crate::cpu_desc(s2, l2));
        match (&self.scales, self.tensors()) {
            (Held::Tensor(x, y), _) => check(&a, &b, &ScaleDescs::Tensor(*x, *y))?,
            (_, Some((sa, sb, blocks))) => {
                let ((ga, la), (gb, lb)) = (sa.storage_and_layout(), sb.storage_and_layout());
                let descs = self.descs(cpu_scale_desc(&ga, la), cpu_scale_desc(&gb, lb), blocks);
                check(&a, &b, &descs)?
            }
            _ => unreachable!("tensors are held for the row and block forms"),
        };
        Err(Error::NotCuda { op: "gemm_fp8" }.into())
    }

    fn cuda_fwd(
        &self,
        s1: &CudaStorage,
        l1: &Layout,
        s2: &CudaStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let (a, b) = (crate::launch::desc(s1, l1), crate::launch::desc(s2, l2));
        let Some((sa, sb, blocks)) = self.tensors() else {
            let Held::Tensor(x, y) = self.scales else {
                unreachable!("no tensors: per-tensor")
            };
            let g = GemmFp8 {
                accum: self.accum,
                ..check(&a, &b, &ScaleDescs::Tensor(x, y))?
            };
            let shape = Shape::from(g.d.shape.clone());
            let out = crate::launch::run(Op::GemmFp8(g), s1.device(), &[s1, s2])?;
            return Ok((out, shape));
        };
        let ((ga, la), (gb, lb)) = (sa.storage_and_layout(), sb.storage_and_layout());
        let (Storage::Cuda(ca), Storage::Cuda(cb)) = (&*ga, &*gb) else {
            // Checked as on the CPU (shapes first), then the device.
            let descs = self.descs(cpu_scale_desc(&ga, la), cpu_scale_desc(&gb, lb), blocks);
            check(&a, &b, &descs)?;
            return Err(Error::Shape {
                op: "gemm_fp8",
                why: "the scales are not on the GPU of `a` (move them with `.to_device(a.device())?`)"
                    .into(),
            }
            .into());
        };
        use candle_core::backend::BackendDevice;
        for (arg, c) in [("sa", ca), ("sb", cb)] {
            if !c.device().same_device(s1.device()) {
                return Err(Error::Shape {
                    op: "gemm_fp8",
                    why: format!("`{arg}` is on another GPU than `a`: one call runs on one GPU"),
                }
                .into());
            }
        }
        let descs = self.descs(
            crate::launch::desc(ca, la),
            crate::launch::desc(cb, lb),
            blocks,
        );
        let g = GemmFp8 {
            accum: self.accum,
            ..check(&a, &b, &descs)?
        };
        let shape = Shape::from(g.d.shape.clone());
        let out = crate::launch::run(Op::GemmFp8(g), s1.device(), &[s1, s2, ca, cb])?;
        Ok((out, shape))
    }
}
