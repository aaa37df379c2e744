//! The host side of attention: which artifact runs a problem, and its launch.
//!
//! The choice is the one host-side dispatcher's ([`crate::dispatch`]) for an
//! [`AttentionRequest`]: every artifact of the catalogue is judged from its metadata (the
//! problem it solves, its head dimension `D`, mask `CAUSAL`, element type, and whether the
//! runtime would launch it on these tensors), the accepted ones ranked by the tune cache, then
//! the cost model ([`crate::attention::request`]). A problem no artifact takes is a typed
//! error listing every candidate and why it was refused, before any launch; shapes no kernel
//! can take (K/V heads that do not divide the query heads, a head dimension that is not the
//! tensors') are refused before that.

use crate::attention::request::{AttentionRequest, same_tile};
use crate::catalogue;
use crate::dispatch::{self, Choice, Device, tune::Cache};
use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};

/// The artifact the host takes for `request` on `device`, or the table of why none fits.
pub fn choose(request: &AttentionRequest, device: &Device) -> Result<Choice, RuntimeError> {
    dispatch::choose(request, &catalogue::all(), device, Cache::host())
}

/// One artifact per tile of the shipped attention kernels (the first of each set of siblings
/// that differ only in element type and mask, [`same_tile`]): what `--kernel` can force and
/// the GPU tests run one by one.
pub fn tiles() -> Vec<&'static KernelArtifact> {
    let mut out: Vec<&'static KernelArtifact> = Vec::new();
    for k in catalogue::all() {
        for a in k.artifacts {
            if a.problem == Some(tirx::problem::Problem::Attention)
                && !out.iter().any(|t| same_tile(t, a))
            {
                out.push(a);
            }
        }
    }
    out
}

/// The tile a user names (`--kernel d128_ping`): the attention artifact whose config is
/// `name`, exactly; [`AttentionRequest::forced`] then accepts its siblings in every element
/// type and mask.
pub fn tile_named(name: &str) -> Option<&'static KernelArtifact> {
    catalogue::all()
        .into_iter()
        .flat_map(|k| k.artifacts)
        .find(|a| a.problem == Some(tirx::problem::Problem::Attention) && a.config == name)
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
/// launches it on the runtime's stream; returns the choice.
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
) -> Result<Choice, RuntimeError> {
    let args = [q.view(), k.view(), v.view(), out.o.view(), out.lse.view()];
    launch(rt, args, d, causal, scale, None)
}

/// [`run`] on launch arguments `[q, k, v, o, lse]` (views of any buffers, e.g. one buffer
/// reshaped per problem by the bench), with `tile` forcing one tile ([`tiles`],
/// [`tile_named`]) or `None` for the dispatcher's choice.
pub fn launch(
    rt: &Runtime,
    args: [TensorArg<'_>; 5],
    d: usize,
    causal: bool,
    scale: f32,
    tile: Option<&'static KernelArtifact>,
) -> Result<Choice, RuntimeError> {
    let mut request = AttentionRequest::on(&args, d, causal, scale)?;
    request.tile = tile;
    let choice = choose(&request, &Device::of(rt)?)?;
    let [q, k, v, o, lse] = args;
    let roles = [("q", q), ("k", k), ("v", v), ("o", o), ("lse", lse)];
    let scalars = [("scale_log2", request.scale_log2)];
    crate::family::launch_roles(rt, choice.artifact, &roles, &scalars)?;
    Ok(choice)
}

/// `tirx run`'s check of one attention artifact: `(m, n, _)` read as sequence length `m`
/// (queries and keys) and `n` heads, one batch, the config's head dim and mask, bf16 or f16 as
/// the config takes; O and LSE against the f64 reference ([`crate::attention::reference`]).
/// The report's error is the largest |o − ref| (LSE errors count an eighth as much).
pub fn check(
    rt: &Runtime,
    art: &KernelArtifact,
    (m, n, _): (usize, usize, usize),
    seed: u64,
) -> Result<crate::family::CheckReport, RuntimeError> {
    use crate::attention::reference::{Dims, attention_f64};
    use crate::reference::Rng;
    let (d, dv) = crate::attention::family::head_dims(art).unwrap_or((0, 0));
    let causal = art.int("CAUSAL") == Some(1);
    let dims = Dims {
        b: 1,
        s: m,
        sk: m,
        hq: n.max(1),
        hk: n.max(1),
        d,
        dv,
    };
    let mut rng = Rng::new(seed);
    let elem = art.sig().tensors[0].elem;
    let (err, ok) = match elem {
        ElemType::F16 => check_typed::<half::f16>(rt, art, dims, causal, &mut rng, attention_f64)?,
        _ => check_typed::<half::bf16>(rt, art, dims, causal, &mut rng, attention_f64)?,
    };
    Ok(crate::family::CheckReport {
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
    let (b, s, h, d, dv) = (dims.b, dims.s, dims.hq, dims.d, dims.dv);
    let hq: Vec<T> = rng.values(b * s * h * d);
    let hk: Vec<T> = rng.values(b * s * h * d);
    let hv: Vec<T> = rng.values(b * s * h * dv);
    let q = rt.upload(&hq, &[b, s, h * d])?;
    let k = rt.upload(&hk, &[b, s, h * d])?;
    let v = rt.upload(&hv, &[b, s, h * dv])?;
    let mut o = rt.zeros::<T>(&[b, s, h * dv])?;
    let mut lse = rt.zeros::<f32>(&[b * h, s, 1])?;
    rt.poison(&mut o)?;
    rt.poison(&mut lse)?;
    let scale = 1.0 / (d as f64).sqrt();
    let scale_log2 = (scale * std::f64::consts::LOG2_E) as f32;
    let roles = [
        ("q", q.view()),
        ("k", k.view()),
        ("v", v.view()),
        ("o", o.view()),
        ("lse", lse.view()),
    ];
    crate::family::launch_roles(rt, art, &roles, &[("scale_log2", scale_log2)])?;
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
    use crate::attention::family::head_dims;
    use crate::attention::request::Dims;
    use crate::dispatch::ProblemDef;

    /// The bench's sweep shape: 16k tokens, heads × head dim 2048, four query heads per K/V
    /// head.
    fn request(d: usize, elem: ElemType, causal: bool, s: usize) -> AttentionRequest {
        let hq = 2048 / d;
        let dims = Dims {
            b: (16384 / s).max(1),
            s,
            sk: s,
            hq,
            hk: hq / 4,
        };
        AttentionRequest::contiguous(dims, d, elem, causal).expect("a valid request")
    }

    #[test]
    fn every_head_dim_mask_and_type_has_an_artifact() {
        for d in [64, 128, 256] {
            for causal in [false, true] {
                for elem in [ElemType::Bf16, ElemType::F16] {
                    for s in [1, 1000, 8192] {
                        let c = choose(&request(d, elem, causal, s), &Device::h200())
                            .unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(c.artifact.int("D"), Some(d as i64));
                        assert_eq!(c.artifact.int("CAUSAL"), Some(i64::from(causal)));
                        assert_eq!(c.artifact.elem_of("q"), Some(elem));
                    }
                }
            }
        }
    }

    /// On a Blackwell device (a B200 described, nothing launched: there is none here) the
    /// dispatcher routes every head dim, mask and type `attention_sm100` has to it, and refuses
    /// the Hopper tiles by target; a head dim it lacks is the table of every candidate.
    #[test]
    fn blackwell_problems_go_to_the_blackwell_kernel() {
        let dev = Device::b200();
        for d in [64, 128] {
            for causal in [false, true] {
                for elem in [ElemType::Bf16, ElemType::F16] {
                    for s in [100, 2048] {
                        let c = choose(&request(d, elem, causal, s), &dev).unwrap();
                        assert_eq!(c.artifact.kernel, "attention_sm100", "{}", c.label());
                        assert_eq!(head_dims(c.artifact), Some((d, d)));
                        assert_eq!(c.artifact.int("CAUSAL"), Some(i64::from(causal)));
                        assert_eq!(c.artifact.elem_of("q"), Some(elem));
                    }
                }
            }
        }
        let e = choose(&request(256, ElemType::Bf16, false, 1024), &dev)
            .unwrap_err()
            .to_string();
        assert!(e.contains("attention_sm100/fa4_d128"), "{e}");
        assert!(e.contains("compiled for sm_90a"), "{e}");
        // Q/K head dim 192 with V/O 128 (MLA): the split tile, in every type and mask.
        for causal in [false, true] {
            for elem in [ElemType::Bf16, ElemType::F16] {
                let c = choose(&mla(elem, causal), &dev).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(c.artifact.kernel, "attention_sm100", "{}", c.label());
                assert_eq!(head_dims(c.artifact), Some((192, 128)), "{}", c.label());
                assert_eq!(c.artifact.int("CAUSAL"), Some(i64::from(causal)));
                assert_eq!(c.artifact.elem_of("q"), Some(elem));
            }
        }
        // And a Hopper device never takes the Blackwell kernel.
        let c = choose(&request(128, ElemType::Bf16, false, 2048), &Device::h200()).unwrap();
        assert_eq!(c.artifact.target, tirx::Target::Sm90a, "{}", c.label());
    }

    /// 16k tokens of MLA-shaped attention: Q/K head dim 192, V/O 128, 16 heads, no GQA.
    fn mla(elem: ElemType, causal: bool) -> AttentionRequest {
        let dims = Dims {
            b: 4,
            s: 4096,
            sk: 4096,
            hq: 16,
            hk: 16,
        };
        AttentionRequest::contiguous_split(dims, (192, 128), elem, causal).expect("a valid request")
    }

    /// The Hopper kernels have one head dim `D`: a Q/K head dim of 192 with a V/O one of 128 is
    /// refused by each of them with that reason (not a head-dim mismatch), and the request's
    /// V/O head dim is read from the tensors.
    #[test]
    fn hopper_refuses_a_v_head_dim_other_than_the_qk_one() {
        let r = mla(ElemType::Bf16, false);
        assert_eq!((r.d, r.dv), (192, 128));
        let e = choose(&r, &Device::h200()).unwrap_err().to_string();
        assert!(e.contains("attention full hd 192/128"), "{e}");
        assert!(
            e.contains("has one head dim `D` for Q·Kᵀ and P·V, not Q/K 192 with V/O 128"),
            "{e}"
        );
        assert!(e.contains("attention_sm90/d128"), "{e}");
        assert!(e.contains("attention_sm90_persistent/d128_sms"), "{e}");
        // The Blackwell tile is refused there by its target only.
        assert!(e.contains("attention_sm100/fa4_d192_128"), "{e}");
        let hopper = catalogue::all()
            .into_iter()
            .flat_map(|k| k.artifacts)
            .filter(|a| a.target == tirx::Target::Sm90a);
        for a in hopper.filter(|a| a.problem == Some(tirx::problem::Problem::Attention)) {
            assert_eq!(
                r.solves(a),
                Err(crate::dispatch::Reject::OneHeadDim { qk: 192, v: 128 }),
                "{}/{}",
                a.kernel,
                a.config
            );
        }
    }

    /// V and O of a width no single V head dim explains are refused before the choice.
    #[test]
    fn a_v_or_o_of_the_wrong_width_is_refused_before_the_choice() {
        let dims = Dims {
            b: 1,
            s: 64,
            sk: 64,
            hq: 4,
            hk: 2,
        };
        let good = AttentionRequest::contiguous_split(dims, (192, 128), ElemType::Bf16, false)
            .expect("valid");
        let mut t = good.tensors.clone();
        t[3] = tirx::runtime::TensorMeta::row_major(ElemType::Bf16, &[1, 64, 4 * 192], 0);
        let e = AttentionRequest::of(t, 192, false, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("o [1, 64, 768]"), "{e}");
        assert!(e.contains("o [B, S, HQ·DV] for one V head dim"), "{e}");
        let mut t = good.tensors.clone();
        t[2] = tirx::runtime::TensorMeta::row_major(ElemType::Bf16, &[1, 64, 255], 0);
        let e = AttentionRequest::of(t, 192, false, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("v [1, 64, 255]"), "{e}");
        assert!(e.contains("v must be [B, SK, HK·DV]"), "{e}");
    }

    #[test]
    fn a_head_dim_no_kernel_takes_is_an_error_listing_the_candidates() {
        let dims = Dims {
            b: 1,
            s: 100,
            sk: 100,
            hq: 4,
            hk: 2,
        };
        let r = AttentionRequest::contiguous(dims, 96, ElemType::Bf16, false).unwrap();
        let e = choose(&r, &Device::h200()).unwrap_err().to_string();
        assert!(e.contains("attention full hd 96"), "{e}");
        assert!(e.contains("attention_sm90/d128"), "{e}");
        assert!(e.contains("solves attention hd 128 full"), "{e}");
        assert!(e.contains("solves gemm"), "{e}");
    }

    #[test]
    fn shapes_no_kernel_takes_are_refused_before_the_choice() {
        let dims = Dims {
            b: 1,
            s: 64,
            sk: 64,
            hq: 3,
            hk: 2,
        };
        let e = AttentionRequest::contiguous(dims, 64, ElemType::Bf16, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 query heads over 2 K/V heads"), "{e}");
    }

    /// On the bench's sweep: the persistent hd 128 tile takes the hd 128 problems, unmasked
    /// and causal (its overlapped prologue is cheaper at every length, and its walk of pairs
    /// of query tiles keeps the causal tiles balanced), the three-warpgroup tile the unmasked
    /// hd 64 ones and the long causal ones, the persistent hd 64 tile the short causal ones,
    /// ping-pong none.
    #[test]
    fn the_cost_model_ranks_tiles_by_what_they_are() {
        let dev = Device::h200();
        let label = |d, causal, s| {
            let c = choose(&request(d, ElemType::Bf16, causal, s), &dev).unwrap();
            c.label()
        };
        for s in [512, 2048, 8192] {
            assert_eq!(
                label(128, false, s),
                "attention_sm90_persistent/d128_sms",
                "s {s}"
            );
            assert_eq!(
                label(128, true, s),
                "attention_sm90_persistent/causal_d128_sms",
                "s {s}"
            );
            assert_eq!(label(64, false, s), "attention_sm90/d64_w3", "s {s}");
            let causal_d64 = if s < 8192 {
                "attention_sm90_persistent/causal_d64_sms"
            } else {
                "attention_sm90/causal_d64_w3"
            };
            assert_eq!(label(64, true, s), causal_d64, "s {s}");
        }
    }

    #[test]
    fn a_forced_tile_takes_its_siblings_in_every_type_and_mask() {
        let ping = tile_named("d128_ping").expect("the ping-pong tile");
        assert!(tiles().iter().any(|t| std::ptr::eq(*t, ping)));
        for causal in [false, true] {
            for elem in [ElemType::Bf16, ElemType::F16] {
                let r = request(128, elem, causal, 1000).forced(ping);
                let c = choose(&r, &Device::h200()).unwrap();
                assert!(same_tile(c.artifact, ping), "{}", c.label());
                assert_eq!(c.artifact.int("PING"), Some(1));
            }
        }
        let r = request(64, ElemType::Bf16, false, 1000).forced(ping);
        let e = choose(&r, &Device::h200()).unwrap_err().to_string();
        assert!(
            e.contains("another tile than the forced attention_sm90/d128_ping"),
            "{e}"
        );
    }
}
