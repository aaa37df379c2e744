//! The host side of attention: which artifact runs a problem, and its launch.
//!
//! Choice, from the artifacts' metadata (never their config names): among the catalogue's
//! attention kernels for the device's target, the first artifact whose head dimension `D`,
//! mask `CAUSAL` and element type (Q's) are the problem's. Kernels list their configs fastest
//! first. A problem no artifact takes is a typed error listing every candidate and why it was
//! refused, before any launch; shapes the kernel cannot take (K/V heads that do not divide the
//! query heads, a head dimension that is not the tensors') are refused here too.

use crate::catalogue;
use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, RuntimeError, Target, Tensor, TensorArg};

/// An attention problem as the dispatcher sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionProblem {
    /// Head dimension.
    pub d: usize,
    /// Query and output element type (K and V are the same).
    pub elem: ElemType,
    /// Causal (bottom-right aligned) mask.
    pub causal: bool,
}

/// The artifact that runs `p` on `target`, or why none does.
pub fn choose(
    p: AttentionProblem,
    target: Target,
) -> Result<&'static KernelArtifact, RuntimeError> {
    choose_tile(p, target, None)
}

/// [`choose`] restricted to the artifacts of one tile entry of the configs (`tile = Some("d128_s3")`
/// takes `d128_s3`, `causal_d128_s3`, `f16_d128_s3`, …): for measuring one tile against another.
pub fn choose_tile(
    p: AttentionProblem,
    target: Target,
    tile: Option<&str>,
) -> Result<&'static KernelArtifact, RuntimeError> {
    let mut table = String::new();
    for k in catalogue::all()
        .into_iter()
        .filter(|k| k.name.starts_with("attention"))
    {
        for a in k.artifacts {
            if a.target != target {
                continue;
            }
            let elem = (a.signature)().tensors.first().map(|t| t.elem);
            let of_tile = |t: &str| a.config == t || a.config.ends_with(&format!("_{t}"));
            let why = if tile.is_some_and(|t| !of_tile(t)) {
                format!("not of tile {tile:?}")
            } else if a.int("D") != Some(p.d as i64) {
                format!("head dim {:?}", a.int("D"))
            } else if a.int("CAUSAL") != Some(i64::from(p.causal)) {
                format!("causal = {:?}", a.int("CAUSAL"))
            } else if elem != Some(p.elem) {
                format!("element type {elem:?}")
            } else {
                return Ok(a);
            };
            table += &format!("  {} {}: {why}\n", k.name, a.config);
        }
    }
    Err(RuntimeError::NoKernelFits {
        problem: format!(
            "attention hd {}, {:?}, {} on {}",
            p.d,
            p.elem,
            if p.causal { "causal" } else { "full" },
            target.name()
        ),
        table,
    })
}

/// The outputs of one attention call.
pub struct Outputs<'a, T: tirx::Element> {
    /// O `[B, S, HQ·D]`.
    pub o: &'a mut Tensor<T>,
    /// The log-sum-exp of each row, `[B·HQ, S, 1]` f32 (natural log; −∞ for a row that sees
    /// no key).
    pub lse: &'a mut Tensor<f32>,
}

/// O = softmax(scale·Q·Kᵀ)·V and the LSE: `q` `[B, S, HQ·D]`, `k`, `v` `[B, SK, HK·D]` (torch's
/// `[B, S, H, D]` row-major), `d` the head dimension. Chooses the artifact ([`choose`]) and
/// launches it on the runtime's stream.
#[allow(clippy::too_many_arguments)]
pub fn run<T: tirx::Element>(
    rt: &Runtime,
    q: &Tensor<T>,
    k: &Tensor<T>,
    v: &Tensor<T>,
    out: Outputs<'_, T>,
    d: usize,
    causal: bool,
    scale: f32,
) -> Result<(), RuntimeError> {
    let args = [q.view(), k.view(), v.view(), out.o.view(), out.lse.view()];
    launch(rt, args, d, causal, scale)
}

/// [`run`] on launch arguments `[q, k, v, o, lse]` (views of any buffers, e.g. one buffer
/// reshaped per problem by the bench).
pub fn launch(
    rt: &Runtime,
    args: [TensorArg<'_>; 5],
    d: usize,
    causal: bool,
    scale: f32,
) -> Result<(), RuntimeError> {
    launch_tile(rt, args, d, causal, scale, None)
}

/// [`launch`] with the artifact of one tile entry ([`choose_tile`]).
pub fn launch_tile(
    rt: &Runtime,
    args: [TensorArg<'_>; 5],
    d: usize,
    causal: bool,
    scale: f32,
    tile: Option<&str>,
) -> Result<(), RuntimeError> {
    let bad = |why: String| RuntimeError::NoKernelFits {
        problem: format!("attention with {why}"),
        table: String::new(),
    };
    let [qs, ks, vs, os, ls] = [0, 1, 2, 3, 4].map(|i| args[i].meta().shape.clone());
    if qs.len() != 3 || ks.len() != 3 || vs != ks || os != qs {
        return Err(bad(format!(
            "q/o {qs:?}/{os:?} and k/v {ks:?}/{vs:?}: q and o must be [B, S, HQ·D], k and v [B, SK, HK·D]"
        )));
    }
    if d == 0 || qs[2] % d != 0 || ks[2] % d != 0 || qs[0] != ks[0] {
        return Err(bad(format!("head dim {d} over q {qs:?}, k {ks:?}")));
    }
    let (hq, hk) = (qs[2] / d, ks[2] / d);
    if ls != [qs[0] * hq, qs[1], 1] {
        return Err(bad(format!(
            "lse {ls:?}: it must be [B·HQ, S, 1] = {:?}",
            [qs[0] * hq, qs[1], 1]
        )));
    }
    if hk == 0 || hq % hk != 0 {
        return Err(bad(format!(
            "{hq} query heads over {hk} K/V heads (GQA needs HK | HQ)"
        )));
    }
    let a = choose_tile(
        AttentionProblem {
            d,
            elem: args[0].meta().elem,
            causal,
        },
        rt.target()?,
        tile,
    )?;
    let scale_log2 = scale * std::f32::consts::LOG2_E;
    rt.launch_with(a, &args, &[scale_log2])
}

/// `tirx run`'s check of one attention artifact: `(m, n, _)` read as sequence length `m`
/// (queries and keys) and `n` heads, one batch, the config's head dim and mask, bf16 or f16 as
/// the config takes; O and LSE against the f64 reference ([`crate::attention::reference`]).
/// The report's error is the largest |o − ref| (LSE errors count an eighth as much).
pub fn check(
    rt: &Runtime,
    kernel: &'static tirx::Kernel,
    config: &str,
    (m, n, _): (usize, usize, usize),
    seed: u64,
) -> Result<crate::registry::CheckReport, RuntimeError> {
    use crate::attention::reference::{Dims, attention_f64};
    use crate::reference::Rng;
    let art = tirx::select(kernel.artifacts, config, rt.target()?)?;
    let d = art.int("D").unwrap_or(0) as usize;
    let causal = art.int("CAUSAL") == Some(1);
    let dims = Dims {
        b: 1,
        s: m,
        sk: m,
        hq: n.max(1),
        hk: n.max(1),
        d,
    };
    let mut rng = Rng::new(seed);
    let elem = (art.signature)().tensors[0].elem;
    let (err, ok) = match elem {
        ElemType::F16 => check_typed::<half::f16>(rt, art, dims, causal, &mut rng, attention_f64)?,
        _ => check_typed::<half::bf16>(rt, art, dims, causal, &mut rng, attention_f64)?,
    };
    Ok(crate::registry::CheckReport {
        shape: (m, n, d),
        error: err,
        ok,
        blocks: String::new(),
    })
}

type Reference<T> =
    fn(&[T], &[T], &[T], crate::attention::reference::Dims, bool, f64) -> (Vec<f64>, Vec<f64>);

fn check_typed<T: crate::reference::HostElem>(
    rt: &Runtime,
    art: &KernelArtifact,
    dims: crate::attention::reference::Dims,
    causal: bool,
    rng: &mut crate::reference::Rng,
    reference: Reference<T>,
) -> Result<(f64, bool), RuntimeError> {
    let (b, s, h, d) = (dims.b, dims.s, dims.hq, dims.d);
    let hq: Vec<T> = rng.values(b * s * h * d);
    let hk: Vec<T> = rng.values(b * s * h * d);
    let hv: Vec<T> = rng.values(b * s * h * d);
    let q = rt.upload(&hq, &[b, s, h * d])?;
    let k = rt.upload(&hk, &[b, s, h * d])?;
    let v = rt.upload(&hv, &[b, s, h * d])?;
    let mut o = rt.zeros::<T>(&[b, s, h * d])?;
    let mut lse = rt.zeros::<f32>(&[b * h, s, 1])?;
    rt.poison(&mut o)?;
    rt.poison(&mut lse)?;
    let scale = 1.0 / (d as f64).sqrt();
    let scale_log2 = (scale * std::f64::consts::LOG2_E) as f32;
    rt.launch_with(
        art,
        &[q.view(), k.view(), v.view(), o.view(), lse.view()],
        &[scale_log2],
    )?;
    rt.synchronize()?;
    let (got, got_lse) = (rt.download(&o)?, rt.download(&lse)?);
    let (want, want_lse) = reference(&hq, &hk, &hv, dims, causal, scale);
    let mut err = 0.0f64;
    for (g, w) in got.iter().zip(&want) {
        let e = (g.to_f64() - w).abs();
        err = err.max(if e.is_finite() { e } else { f64::INFINITY });
    }
    for (&g, &w) in got_lse.iter().zip(&want_lse) {
        let e = if w == f64::NEG_INFINITY && f64::from(g) == w {
            0.0
        } else {
            (f64::from(g) - w).abs() / 8.0
        };
        err = err.max(if e.is_finite() { e } else { f64::INFINITY });
    }
    Ok((err, err <= 2e-2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_head_dim_mask_and_type_has_an_artifact() {
        for d in [64, 128, 256] {
            for causal in [false, true] {
                for elem in [ElemType::Bf16, ElemType::F16] {
                    let a = choose(AttentionProblem { d, elem, causal }, Target::Sm90a)
                        .unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(a.int("D"), Some(d as i64));
                    assert_eq!(a.int("CAUSAL"), Some(i64::from(causal)));
                }
            }
        }
    }

    #[test]
    fn a_head_dim_no_kernel_takes_is_an_error_listing_the_candidates() {
        let p = AttentionProblem {
            d: 96,
            elem: ElemType::Bf16,
            causal: false,
        };
        let e = choose(p, Target::Sm90a).unwrap_err().to_string();
        assert!(e.contains("attention hd 96"), "{e}");
        assert!(e.contains("head dim Some(128)"), "{e}");
    }
}
