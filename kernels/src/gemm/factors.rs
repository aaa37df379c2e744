//! The block-scaled GEMM as the host sees it: D = (A·sA)·(B·sB)ᵀ on Blackwell's
//! `tcgen05.mma … .block_scale` (PTX ISA §9.7.16.10.7), `Epilogue::ScaleFactors` — A and B
//! N×K in E4M3 (MXFP8) or packed FP4 (`e2m1x2`, NVFP4 or MXFP4), one factor per 32 (UE8M0,
//! the OCP MX recipe) or 16 (UE4M3, NVFP4) values of each row, the factor matrices laid out
//! as `tirx::runtime::scale_image` writes them (`sfa` [MS, KS], `sfb` [NS, KS]), f32
//! accumulate, D in BF16 (what the shipped kernels write).
//!
//! - The request: [`factor_request`] checks the tensors and builds the [`GemmRequest`] the
//!   dispatcher judges the catalogue with (every `solves = gemm` kernel whose signature
//!   derives `Epilogue::ScaleFactors` of these factors); wrong ranks, types or extents are
//!   typed `RuntimeError`s before anything is chosen.
//! - The host entry: [`gemm_block_scaled`] (choose, then launch by role).
//!
//! K counts `a`'s elements, as for every GEMM request: for packed FP4 one `e2m1x2` is two
//! values, so `a` is [M, K] bytes holding 2·K values and a row has cdiv(2·K, 16) factors
//! ([`factor_cols`]). The recipe is the factors' element type (`Factors::of`), never a name.

use tirx::abi::ElemType;
use tirx::problem::{BLayout, Epilogue, Factors};
use tirx::runtime::{TensorMeta, image_shape};
use tirx::{Element, Runtime, RuntimeError, Tensor};

use super::host::choose_launch;
use super::request::{GemmRequest, GemmTypes};
use crate::dispatch::Choice;
use crate::family;

/// Values one element of `input` holds (2 for packed FP4, else 1).
pub fn values_per_elem(input: ElemType) -> usize {
    if input.is_fp4() { 2 } else { 1 }
}

/// Factors a row of K elements of `input` takes under `factors`: one per
/// [`Factors::vector`] values, the last block possibly partial.
pub fn factor_cols(factors: Factors, input: ElemType, k: usize) -> usize {
    (k * values_per_elem(input)).div_ceil(factors.vector())
}

/// The shapes of `sfa` and `sfb` for an M×N×K problem: `scale_image`'s tensors of M and N
/// rows of [`factor_cols`] factors.
pub fn image_shapes(
    factors: Factors,
    input: ElemType,
    (m, n, k): (usize, usize, usize),
) -> ([usize; 2], [usize; 2]) {
    let cols = factor_cols(factors, input, k);
    (image_shape(m, cols), image_shape(n, cols))
}

/// The tensors of a block-scaled GEMM, by role.
#[derive(Clone, Copy, Debug)]
pub struct FactorTensors<'t> {
    /// A, [M, K] of E4M3 or `e2m1x2`.
    pub a: &'t TensorMeta,
    /// A's factor image.
    pub sfa: &'t TensorMeta,
    /// B, [N, K] of A's type (B given N×K).
    pub b: &'t TensorMeta,
    /// B's factor image.
    pub sfb: &'t TensorMeta,
    /// D, [M, N].
    pub d: &'t TensorMeta,
}

/// The request of D = (A·sA)·(B·sB)ᵀ on these tensors, or the first thing wrong with them as
/// a typed error: a rank (`RankMismatch`), an operand or factor type that no recipe takes
/// together (`ElemMismatch`: B's type is A's, `sfb`'s is `sfa`'s, and the factors' type must
/// scale A's — UE8M0 E4M3 or `e2m1x2`, UE4M3 `e2m1x2`), or an extent (`ShapeMismatch`: M
/// and K from `a`, N from `d`, the images' from [`image_shapes`]). Whether a kernel takes
/// the combination (NVFP4 and MXFP8 ship; MXFP4 does not) is the dispatcher's table.
pub fn factor_request(t: FactorTensors<'_>) -> Result<GemmRequest, RuntimeError> {
    for (name, meta, shape) in [
        ("a", t.a, "[M, K]"),
        ("b", t.b, "[N, K]"),
        ("sfa", t.sfa, "[MS, KS]"),
        ("sfb", t.sfb, "[NS, KS]"),
        ("d", t.d, "[M, N]"),
    ] {
        if meta.shape.len() != 2 {
            return Err(RuntimeError::RankMismatch {
                tensor: name.into(),
                got: meta.shape.len(),
                expected: 2,
                shape: shape.into(),
            });
        }
    }
    let elem = |tensor: &str, got: ElemType, expected: ElemType| {
        if got == expected {
            Ok(())
        } else {
            Err(RuntimeError::ElemMismatch {
                tensor: tensor.into(),
                got,
                expected,
            })
        }
    };
    let input = t.a.elem;
    if !(input == ElemType::E4m3 || input.is_fp4()) {
        return Err(RuntimeError::ElemMismatch {
            tensor: "a".into(),
            got: input,
            expected: ElemType::E4m3,
        });
    }
    elem("b", t.b.elem, input)?;
    let factors =
        Factors::of(t.sfa.elem)
            .filter(|f| f.takes(input))
            .ok_or(RuntimeError::ElemMismatch {
                tensor: "sfa".into(),
                got: t.sfa.elem,
                expected: if input.is_fp4() {
                    ElemType::Ue4m3
                } else {
                    ElemType::Ue8m0
                },
            })?;
    elem("sfb", t.sfb.elem, t.sfa.elem)?;
    let (m, k, n) = (t.a.shape[0], t.a.shape[1], t.d.shape[1]);
    let (sfa, sfb) = image_shapes(factors, input, (m, n, k));
    let bound = "`a` [M, K] and `d` [M, N]";
    let images = "scale_image of the operand's rows and factors";
    for (name, got, want, symbols, by) in [
        ("d", t.d.shape.as_slice(), [m, n], ["M", "N"], bound),
        ("b", t.b.shape.as_slice(), [n, k], ["N", "K"], bound),
        ("sfa", t.sfa.shape.as_slice(), sfa, ["MS", "KS"], images),
        ("sfb", t.sfb.shape.as_slice(), sfb, ["NS", "KS"], images),
    ] {
        if let Some(dim) = (0..2).find(|&i| got[i] != want[i]) {
            return Err(RuntimeError::ShapeMismatch {
                tensor: name.into(),
                dim,
                symbol: symbols[dim].into(),
                got: got[dim] as u64,
                expected: want[dim] as u64,
                bound_by: by.into(),
            });
        }
    }
    let mut request = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::ScaleFactors(factors),
        GemmTypes {
            input,
            output: t.d.elem,
        },
        (m, n, k),
    );
    request.a = t.a.clone();
    request.b = t.b.clone();
    request.d = t.d.clone();
    request.factors = Some((t.sfa.clone(), t.sfb.clone()));
    Ok(request)
}

/// D = (A·sA)·(B·sB)ᵀ (B given N×K) on the host's choice of a block-scaled GEMM for these
/// tensors and `rt`'s device: `a` and `b` E4M3 with UE8M0 factors (MXFP8) or `e2m1x2` with
/// UE4M3 factors (NVFP4), the factors as `tirx::runtime::scale_image` lays them out. The
/// tensors are checked first ([`factor_request`]: typed errors, nothing chosen); a combination
/// nothing takes — any of them on a Hopper device, whose table names each artifact's
/// target — is `RuntimeError::NoKernelFits`. Returns the choice.
pub fn gemm_block_scaled<A: Element, F: Element, D: Element>(
    rt: &Runtime,
    (a, sfa): (&Tensor<A>, &Tensor<F>),
    (b, sfb): (&Tensor<A>, &Tensor<F>),
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let (av, sfav, bv, sfbv, dv) = (a.view(), sfa.view(), b.view(), sfb.view(), d.view());
    let request = factor_request(FactorTensors {
        a: av.meta(),
        sfa: sfav.meta(),
        b: bv.meta(),
        sfb: sfbv.meta(),
        d: dv.meta(),
    })?;
    let choice = choose_launch(rt, &request)?;
    let roles = [
        ("a", av),
        ("b", bv),
        ("sfa", sfav),
        ("sfb", sfbv),
        ("d", dv),
    ];
    family::launch_roles(rt, choice.artifact, &roles, &[])?;
    Ok(choice)
}

#[cfg(test)]
mod tests;
