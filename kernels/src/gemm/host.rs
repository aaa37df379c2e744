//! The GEMM family's host entries: the host's choice of an artifact through the dispatcher
//! ([`crate::dispatch`] with a [`GemmRequest`]) and its launch by role.
//!
//! GEMMs come in several element-type combinations (each config of a kernel has its own), so a
//! GEMM is launched here generic over the tensors' types: the chosen artifact's signature
//! decides which types it takes, and the runtime refuses others with
//! `RuntimeError::ElemMismatch` before anything runs. Tensors are passed by role (`a`, `b`,
//! `c`, `bias`, `d`), in whatever order the kernel declares them.

use super::fp8_ref::{Fp8Accum, Fp8ScaleMode};
use super::request::{Fp8ScaleArgs, GemmRequest, GemmTypes};
use super::split;
use crate::catalogue::all;
use crate::dispatch::{self, Choice, Device, tune::Cache};
use crate::family;
use tirx::problem::{self, Epilogue};
use tirx::{Element, Kernel, KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};

/// The launch of a GEMM kernel's configs (`d = a·bᵀ` with `b` N×K, `d = a·b` with `b` K×N,
/// or the scaled form) for any element types its configs take; the runtime checks `b`'s
/// shape against the kernel's.
#[derive(Clone, Copy)]
pub struct GemmLaunch {
    /// The kernel's artifacts.
    pub artifacts: &'static [KernelArtifact],
}

impl GemmLaunch {
    /// The launch of `kernel`'s configs.
    pub fn of(kernel: &'static Kernel) -> GemmLaunch {
        GemmLaunch {
            artifacts: kernel.artifacts,
        }
    }

    /// Launches `config` on `rt`'s device. A config compiled for other element types is a
    /// `RuntimeError::ElemMismatch`, returned before launch.
    pub fn launch<A: Element, D: Element>(
        &self,
        rt: &Runtime,
        config: &str,
        a: &Tensor<A>,
        b: &Tensor<A>,
        d: &mut Tensor<D>,
    ) -> Result<(), RuntimeError> {
        let art = tirx::select(self.artifacts, config, rt.target()?)?;
        launch_roles(
            rt,
            art,
            &[("a", a.view()), ("b", b.view()), ("d", d.view())],
            1.0,
            0.0,
        )
    }

    /// Launches `config` of a scaled kernel: D = α·A·op(B) + β·C (C and D in D's type; C is
    /// not read where β = 0).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_scaled<A: Element, D: Element>(
        &self,
        rt: &Runtime,
        config: &str,
        alpha: f32,
        a: &Tensor<A>,
        b: &Tensor<A>,
        beta: f32,
        c: &Tensor<D>,
        d: &mut Tensor<D>,
    ) -> Result<(), RuntimeError> {
        let art = tirx::select(self.artifacts, config, rt.target()?)?;
        let roles = [
            ("a", a.view()),
            ("b", b.view()),
            ("c", c.view()),
            ("d", d.view()),
        ];
        launch_roles(rt, art, &roles, alpha, beta)
    }

    /// The element types `config` takes (from its first compiled target's signature; they do
    /// not depend on the target), or `None` when there is no such config.
    /// A split-K config (`split.rs`) writes f32 partials, and its plan's D is any type a reduce
    /// kernel writes: its types here are its input's and bf16.
    pub fn types(&self, config: &str) -> Option<GemmTypes> {
        let a = self.artifacts.iter().find(|a| a.config == config)?;
        let output = if split::is_partial(a) {
            tirx::abi::ElemType::Bf16
        } else {
            a.elem_of("d")?
        };
        Some(GemmTypes {
            input: a.elem_of("a")?,
            output,
        })
    }
}

/// Launches `art` with its tensors by role and its scalars `alpha`, `beta`
/// ([`crate::family::launch_roles`]); a split-K artifact runs its plan of two launches
/// ([`split::launch_split`]).
pub(crate) fn launch_roles(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    alpha: f32,
    beta: f32,
) -> Result<(), RuntimeError> {
    if split::is_partial(art) {
        return split::launch_split(rt, art, roles, alpha, beta);
    }
    family::launch_roles(rt, art, roles, &[("alpha", alpha), ("beta", beta)])
}

/// SMs of an H100/H200 SXM: the device [`Device::h200`] describes, for choices made without
/// a GPU; the host entries take the device's own count.
pub const H200_SMS: usize = 132;

/// The artifact the host takes for `request` on `device`: the tune cache's fastest accepted
/// one, else the cost model's (see [`crate::dispatch`]); the table of candidates when none fits.
pub fn choose_gemm(device: &Device, request: &GemmRequest) -> Result<Choice, RuntimeError> {
    dispatch::choose(request, &all(), device, Cache::host())
}

/// [`choose_gemm`] for a launch of `request`'s own tensors on `rt`'s device, remembered for
/// the process ([`dispatch::remember`]): a loop of calls on the same shapes judges the
/// catalogue once.
pub fn choose_launch(rt: &Runtime, request: &GemmRequest) -> Result<Choice, RuntimeError> {
    let mut tensors = vec![&request.a, &request.b, &request.d];
    tensors.extend(request.c.as_ref());
    tensors.extend(request.bias.as_ref());
    if let Some((sa, sb)) = &request.row_scales {
        tensors.extend([sa, sb]);
    }
    if let Some((sfa, sfb)) = &request.factors {
        tensors.extend([sfa, sfb]);
    }
    let scalars = [request.scalars.0, request.scalars.1];
    dispatch::choose_remembered(request, &tensors, &scalars, &Device::of(rt)?)
}

/// D = A·op(B) with B in `layout`, or D = α·A·op(B) + β·C when `scaled` is `Some((α, C, β))`,
/// on the artifact the dispatcher chooses for these tensors and this device; returns the
/// choice. α = 1, β = 0 is the plain product (C is not read).
pub fn gemm<A: Element, D: Element>(
    rt: &Runtime,
    layout: problem::BLayout,
    a: &Tensor<A>,
    b: &Tensor<A>,
    scaled: Option<(f32, &Tensor<D>, f32)>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let scaled = scaled.filter(|&(alpha, _, beta)| alpha != 1.0 || beta != 0.0);
    let (av, bv, dv) = (a.view(), b.view(), d.view());
    let cv = scaled.map(|(_, c, _)| c.view());
    let request = GemmRequest::on(
        layout,
        &av,
        &bv,
        scaled
            .zip(cv.as_ref())
            .map(|((alpha, _, beta), c)| (alpha, c, beta)),
        &dv,
    );
    let choice = choose_launch(rt, &request)?;
    let (alpha, beta) = request.scalars;
    let mut roles = vec![("a", av), ("b", bv), ("d", dv)];
    if let Some(c) = cv {
        roles.push(("c", c));
    }
    launch_roles(rt, choice.artifact, &roles, alpha, beta)?;
    Ok(choice)
}

/// D = A·Bᵀ (B given N×K) on the host's choice for the tensors' shapes and types; a
/// combination nothing takes is `RuntimeError::NoKernelFits`, with the table of candidates.
pub fn gemm_auto<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Tn, a, b, None, d)
}

/// D = A·B (B given K×N) on the host's choice ([`gemm_auto`]'s NN counterpart).
pub fn gemm_auto_nn<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Nn, a, b, None, d)
}

/// D = α·A·Bᵀ + β·C (B given N×K) on the host's choice; α = 1, β = 0 is [`gemm_auto`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled<A: Element, D: Element>(
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Tn, a, b, Some((alpha, c, beta)), d)
}

/// [`gemm_scaled`] with B given K×N (D = α·A·B + β·C).
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled_nn<A: Element, D: Element>(
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Nn, a, b, Some((alpha, c, beta)), d)
}

/// D = act(A·Bᵀ + bias) (B given N×K, `bias` a vector [N] in D's type) on the host's choice
/// of a fused-epilogue kernel; a combination nothing takes is `RuntimeError::NoKernelFits`.
pub fn gemm_bias_act<A: Element, D: Element>(
    rt: &Runtime,
    act: problem::Act,
    a: &Tensor<A>,
    b: &Tensor<A>,
    bias: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let (av, bv, biasv, dv) = (a.view(), b.view(), bias.view(), d.view());
    let request = GemmRequest::on_bias(problem::BLayout::Tn, act, &av, &bv, &biasv, &dv);
    let choice = choose_launch(rt, &request)?;
    let roles = [("a", av), ("b", bv), ("bias", biasv), ("d", dv)];
    if split::is_partial(choice.artifact) {
        // The activation is the request's, not the partial artifact's: the plan takes it.
        split::launch_split_for(rt, choice.artifact, &roles, &request)?;
        return Ok(choice);
    }
    launch_roles(rt, choice.artifact, &roles, 1.0, 0.0)?;
    Ok(choice)
}

/// D = act(A·op(B) + bias) + R (`bias` with its activation) or D = A·op(B) + R (`None`: BLAS's
/// β = 1, any scaled kernel) on the host's choice, `res` M×N in D's type; a combination
/// nothing takes is `RuntimeError::NoKernelFits`, with the table of candidates.
pub fn gemm_residual<A: Element, D: Element>(
    rt: &Runtime,
    layout: problem::BLayout,
    a: &Tensor<A>,
    b: &Tensor<A>,
    bias: Option<(problem::Act, &Tensor<D>)>,
    res: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let Some((act, bias)) = bias else {
        return gemm(rt, layout, a, b, Some((1.0, res, 1.0)), d);
    };
    let (av, bv, biasv, resv, dv) = (a.view(), b.view(), bias.view(), res.view(), d.view());
    let request = GemmRequest::on_residual(layout, &av, &bv, Some((act, &biasv)), &resv, &dv);
    let choice = choose_launch(rt, &request)?;
    let roles = [
        ("a", av),
        ("b", bv),
        ("bias", biasv),
        ("res", resv),
        ("d", dv),
    ];
    if split::is_partial(choice.artifact) {
        // The epilogue is the request's: the plan's reduce kernel adds the bias and R.
        split::launch_split_for(rt, choice.artifact, &roles, &request)?;
        return Ok(choice);
    }
    launch_roles(rt, choice.artifact, &roles, 1.0, 0.0)?;
    Ok(choice)
}

/// The scales of an FP8 GEMM ([`gemm_fp8`]).
#[derive(Clone, Copy)]
pub enum Fp8Scaling<'t> {
    /// `scale_a`, `scale_b`: D = (scale_a·scale_b)·A·Bᵀ.
    Tensor(f32, f32),
    /// `sa` [M], `sb` [N] (f32): D = diag(sa)·A·Bᵀ·diag(sb).
    Rows(&'t Tensor<f32>, &'t Tensor<f32>),
    /// `sa` [M, cdiv(K, 128)] (one per 1×128 block of A, what `quant_block` writes), `sb`
    /// [cdiv(N, 128), cdiv(K, 128)] (one per 128×128 block of B), f32, row-major:
    /// D = Σ_kb (A_kb·B_kbᵀ)·sa[:, kb]·sb[n / 128, kb] (`gemm/fp8_block.rs`).
    Blocks(&'t Tensor<f32>, &'t Tensor<f32>),
    /// [`Fp8Scaling::Blocks`] with `sa` MN-major: [cdiv(K, 128), 4·cdiv(M, 4)], each K
    /// block's row scales contiguous (`fp8_ref::mn_major`; torch `_scaled_mm`'s block-wise
    /// `scale_a` layout), `sb` as there (`gemm/fp8_block_mn.rs`).
    BlocksMn(&'t Tensor<f32>, &'t Tensor<f32>),
}

/// D = s ⊙ A·Bᵀ with A and B in an FP8 type (E4M3 or E5M2; B given N×K) and per-tensor,
/// row-wise or block-wise scales, on the host's choice of an FP8 GEMM (`gemm/fp8.rs`,
/// `fp8_pingpong.rs`, `fp8_block.rs`, or the split-K plan of `fp8_splitk.rs` where the cost
/// model splits K); a combination nothing takes is `RuntimeError::NoKernelFits`, with the
/// table of candidates. Scale tensors of another shape than the scales' form needs
/// ([`Fp8ScaleMode::shapes`]) are `RuntimeError::ShapeMismatch` before anything is chosen.
/// `accum` is `torch._scaled_mm`'s `use_fast_accum` ([`Fp8Accum`]): `Promoted` (torch's
/// default, its numerics) runs only kernels that promote into f32 every 128 of K, `Fast` any.
pub fn gemm_fp8<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    scales: Fp8Scaling<'_>,
    accum: Fp8Accum,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let (av, bv, dv) = (a.view(), b.view(), d.view());
    let vectors = match scales {
        Fp8Scaling::Rows(sa, sb) => Some((Fp8ScaleMode::Rows, sa, sb)),
        Fp8Scaling::Blocks(sa, sb) => Some((Fp8ScaleMode::Blocks, sa, sb)),
        Fp8Scaling::BlocksMn(sa, sb) => Some((Fp8ScaleMode::BlocksMn, sa, sb)),
        Fp8Scaling::Tensor(..) => None,
    };
    if let Some((mode, sa, sb)) = vectors {
        let dim = |s: &[usize], i: usize| s.get(i).copied().unwrap_or(0);
        let shape = (dim(a.shape(), 0), dim(d.shape(), 1), dim(a.shape(), 1));
        let ((want_a, want_b), (sym_a, sym_b)) = (mode.shapes(shape), mode.symbols());
        scale_shape("sa", sa.shape(), (&want_a, sym_a))?;
        scale_shape("sb", sb.shape(), (&want_b, sym_b))?;
    }
    let views = vectors.map(|(mode, sa, sb)| (mode, sa.view(), sb.view()));
    let (x, y) = match scales {
        Fp8Scaling::Tensor(x, y) => (x, y),
        Fp8Scaling::Rows(..) | Fp8Scaling::Blocks(..) | Fp8Scaling::BlocksMn(..) => (1.0, 1.0),
    };
    let args = match &views {
        Some((Fp8ScaleMode::Blocks, sa, sb)) => Fp8ScaleArgs::Blocks(sa, sb),
        Some((Fp8ScaleMode::BlocksMn, sa, sb)) => Fp8ScaleArgs::BlocksMn(sa, sb),
        Some((_, sa, sb)) => Fp8ScaleArgs::Rows(sa, sb),
        None => Fp8ScaleArgs::Tensor(x, y),
    };
    let request = GemmRequest::on_fp8(&av, &bv, args, &dv).with_accum(accum);
    let choice = choose_launch(rt, &request)?;
    if split::is_partial(choice.artifact) {
        // The FP8 split-K plan (`fp8_splitk.rs`): the reduce applies the scales.
        let roles = [("a", av.clone()), ("b", bv.clone()), ("d", dv.clone())];
        split::launch_fp8_split(rt, choice.artifact, &roles, args)?;
        return Ok(choice);
    }
    let mut roles = vec![("a", av), ("b", bv), ("d", dv)];
    if let Some((_, sa, sb)) = views {
        roles.extend([("sa", sa), ("sb", sb)]);
    }
    family::launch_roles(
        rt,
        choice.artifact,
        &roles,
        &[("scale_a", x), ("scale_b", y)],
    )?;
    Ok(choice)
}

/// The typed refusal of an FP8 scale tensor `name` of shape `got` where its form needs `want`
/// (dimensions named `symbols`): the rank, or the first dimension that differs, as
/// `RuntimeError::RankMismatch` / `ShapeMismatch`.
pub fn scale_shape(
    name: &str,
    got: &[usize],
    (want, symbols): (&[usize], &[&str]),
) -> Result<(), RuntimeError> {
    if got.len() != want.len() {
        return Err(RuntimeError::RankMismatch {
            tensor: name.into(),
            got: got.len(),
            expected: want.len(),
            shape: format!("[{}]", symbols.join(", ")),
        });
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(dim) => Err(RuntimeError::ShapeMismatch {
            tensor: name.into(),
            dim,
            symbol: symbols.get(dim).copied().unwrap_or("?").into(),
            got: got[dim] as u64,
            expected: want[dim] as u64,
            bound_by: "the FP8 scales' form (`a`, `b` and `d`'s M, N, K)".into(),
        }),
    }
}

/// The choice for a GEMM given by its problem alone (contiguous tensors), on `device`:
/// what `tirx bench gemm` measures by default and `tirx tune` compares with.
pub fn choose_gemm_for(
    device: &Device,
    layout: problem::BLayout,
    epilogue: Epilogue,
    types: GemmTypes,
    shape: (usize, usize, usize),
) -> Result<Choice, RuntimeError> {
    choose_gemm(
        device,
        &GemmRequest::contiguous(layout, epilogue, types, shape),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FP8 scale tensors of the wrong shape are typed errors before any choice or launch:
    /// block scales of 3 K blocks where K = 400 takes 4 (`ShapeMismatch` naming `KB`), a
    /// row-wise vector given as a matrix (`RankMismatch`).
    #[test]
    fn fp8_scales_of_the_wrong_shape_are_typed_errors() {
        let shape = (200, 264, 400);
        let (sa, sb) = Fp8ScaleMode::Blocks.shapes(shape);
        assert_eq!((sa.as_slice(), sb.as_slice()), (&[200, 4][..], &[3, 4][..]));
        let (sym_a, sym_b) = Fp8ScaleMode::Blocks.symbols();
        assert!(scale_shape("sa", &[200, 4], (&sa, sym_a)).is_ok());
        match scale_shape("sa", &[200, 3], (&sa, sym_a)) {
            Err(RuntimeError::ShapeMismatch {
                tensor,
                dim: 1,
                symbol,
                got: 3,
                expected: 4,
                ..
            }) => assert_eq!((tensor.as_str(), symbol.as_str()), ("sa", "KB")),
            other => panic!("{other:?}"),
        }
        match scale_shape("sb", &[2, 4], (&sb, sym_b)) {
            Err(RuntimeError::ShapeMismatch { dim: 0, symbol, .. }) => assert_eq!(symbol, "NB"),
            other => panic!("{other:?}"),
        }
        let (rows_a, _) = Fp8ScaleMode::Rows.shapes(shape);
        let (sym_rows, _) = Fp8ScaleMode::Rows.symbols();
        assert!(matches!(
            scale_shape("sa", &[200, 1], (&rows_a, sym_rows)),
            Err(RuntimeError::RankMismatch {
                got: 2,
                expected: 1,
                ..
            })
        ));
        // MN-major block scales: `sa` [KB, M4], M4 = M rounded up to 4 (201 → 204); an
        // unpadded [KB, M] is refused on `M4`, the row-major form on `KB`.
        let (mn_a, _) = Fp8ScaleMode::BlocksMn.shapes((201, 264, 400));
        let (sym_mn, _) = Fp8ScaleMode::BlocksMn.symbols();
        assert_eq!(mn_a, [4, 204]);
        assert!(scale_shape("sa", &[4, 204], (&mn_a, sym_mn)).is_ok());
        for (got, dim, want) in [([4, 201], 1, "M4"), ([201, 4], 0, "KB")] {
            match scale_shape("sa", &got, (&mn_a, sym_mn)) {
                Err(RuntimeError::ShapeMismatch { dim: d, symbol, .. }) => {
                    assert_eq!((d, symbol.as_str()), (dim, want));
                }
                other => panic!("{got:?}: {other:?}"),
            }
        }
    }
}
