//! The one file that knows `tirx-kernels`' host side: a checked [`Op`] becomes the
//! dispatcher's request of its problem family, is judged against the catalogue on a device,
//! and runs on the chosen artifact — the same choice the Rust entry points make.
//!
//! Public items used: `catalogue::all`, `dispatch::{choose, judge, table, Device, ProblemDef,
//! Choice}`, `dispatch::tune::Cache` and the families' request types (`gemm::request`,
//! `row_kernels::request`, `row_kernels::family::SiluMulRequest`, `attention::request`); the
//! launch goes through the runtime (`Runtime::launch_with`) with the tensors in the order the
//! request's [`ProblemDef::arguments`] gives for the chosen artifact; a split-K GEMM artifact's
//! two launches and workspace through `gemm::split::launch_split_for` (an FP8 one's through
//! `gemm::split::launch_fp8_split`).

use tirx::problem::{BLayout, Epilogue, Problem};
use tirx::runtime::TensorMeta;
use tirx::{KernelArtifact, Runtime, RuntimeError, TensorArg};
use tirx_kernels::attention::request::AttentionRequest;
use tirx_kernels::catalogue;
use tirx_kernels::dispatch::tune::Cache;
use tirx_kernels::dispatch::{self, Device, ProblemDef};
use tirx_kernels::gemm::fp8_ref::Fp8Accum;
use tirx_kernels::gemm::request::{Fp8ScaleArgs, GemmRequest, GemmTypes};
use tirx_kernels::gemm::{factors, split};
use tirx_kernels::row_kernels::family::SiluMulRequest;
use tirx_kernels::row_kernels::request::RowRequest;

use crate::chosen;
use crate::ops::{Fp8Scales, Gemm, GemmFp8, Op};
use crate::profile::{self, Phase};

/// A described device by name (`h200`, `b200`), for choices made without one.
pub fn device_named(name: &str) -> Option<Device> {
    match name.to_ascii_lowercase().as_str() {
        "h200" | "h100" | "sm_90a" => Some(Device::h200()),
        "b200" | "sm_100a" => Some(Device::b200()),
        _ => None,
    }
}

/// The dispatcher's request for a checked op.
pub fn request(op: &Op) -> Box<dyn ProblemDef> {
    match op {
        Op::Gemm(g) => Box::new(gemm_request(g)),
        Op::GemmFp8(g) => Box::new(fp8_request(g)),
        Op::BlockScaled(r) => Box::new((**r).clone()),
        Op::Row {
            op,
            x,
            w,
            b,
            y,
            eps,
        } => Box::new(RowRequest {
            op: *op,
            x: x.clone(),
            w: w.clone(),
            b: b.clone(),
            y: y.clone(),
            eps: *eps,
        }),
        Op::SiluMul { x, g, y } => Box::new(SiluMulRequest {
            tensors: [x.clone(), g.clone(), y.clone()],
        }),
        Op::Attention {
            tensors,
            d,
            dv,
            causal,
            scale,
        } => Box::new(AttentionRequest {
            d: *d,
            dv: *dv,
            causal: *causal,
            elem: tensors[0].elem,
            tensors: tensors.clone(),
            scale_log2: scale * std::f32::consts::LOG2_E,
            tile: None,
        }),
    }
}

fn gemm_request(g: &Gemm) -> GemmRequest {
    let (epilogue, bias) = match (&g.bias, g.scaled) {
        (Some((meta, act)), _) if g.res.is_some() => {
            (Epilogue::BiasResidual(*act), Some(meta.clone()))
        }
        (Some((meta, act)), _) => (Epilogue::Bias(*act), Some(meta.clone())),
        (None, Some(_)) => (Epilogue::Scaled, None),
        (None, None) => (Epilogue::Plain, None),
    };
    GemmRequest {
        layout: g.layout,
        epilogue,
        types: GemmTypes {
            input: g.a.elem,
            output: g.d.elem,
        },
        shape: (g.a.shape[0], g.d.shape[1], g.a.shape[1]),
        a: g.a.clone(),
        b: g.b.clone(),
        c: g.c.clone(),
        bias,
        res: g.res.clone(),
        d: g.d.clone(),
        scalars: g.scaled.unwrap_or((1.0, 0.0)),
        row_scales: None,
        factors: None,
        accum: Fp8Accum::Fast,
    }
}

/// The FP8 GEMM's request (`GemmRequest::on_fp8`'s, from checked metas): TN, the scales'
/// epilogue, the per-tensor values as the request's scalars.
fn fp8_request(g: &GemmFp8) -> GemmRequest {
    let (epilogue, scalars, row_scales) = match &g.scales {
        Fp8Scales::Tensor(x, y) => (Epilogue::ScaleTensor, (*x, *y), None),
        Fp8Scales::Rows(sa, sb) => (
            Epilogue::ScaleRows,
            (1.0, 1.0),
            Some((sa.clone(), sb.clone())),
        ),
        Fp8Scales::Blocks(sa, sb) => (
            Epilogue::ScaleBlocks,
            (1.0, 1.0),
            Some((sa.clone(), sb.clone())),
        ),
        Fp8Scales::BlocksMn(sa, sb) => (
            Epilogue::ScaleBlocksMn,
            (1.0, 1.0),
            Some((sa.clone(), sb.clone())),
        ),
    };
    GemmRequest {
        layout: BLayout::Tn,
        epilogue,
        types: GemmTypes {
            input: g.a.elem,
            output: g.d.elem,
        },
        shape: (g.a.shape[0], g.d.shape[1], g.a.shape[1]),
        a: g.a.clone(),
        b: g.b.clone(),
        c: None,
        bias: None,
        res: None,
        d: g.d.clone(),
        scalars,
        row_scales,
        factors: None,
        accum: g.accum,
    }
}

/// The block-scaled GEMM's request on these tensors (`factors::factor_request`: a rank, a
/// recipe's types or an image's extent that does not fit is its typed error).
pub fn block_scaled_request(
    a: &TensorMeta,
    b: &TensorMeta,
    sfa: &TensorMeta,
    sfb: &TensorMeta,
    d: &TensorMeta,
) -> Result<GemmRequest, RuntimeError> {
    factors::factor_request(factors::FactorTensors { a, sfa, b, sfb, d })
}

/// What the dispatcher makes of `op` on `device`: the problem, the choice (or why none), and
/// every candidate's verdict.
pub fn explain(op: &Op, device: &Device) -> String {
    let req = request(op);
    let kernels = catalogue::all();
    let verdicts = dispatch::judge(req.as_ref(), &kernels, device);
    let choice = match dispatch::choose(req.as_ref(), &kernels, device, Cache::host()) {
        Ok(c) => format!(
            "chosen: {} ({}, {})",
            c.label(),
            c.artifact.target.name(),
            match c.source {
                dispatch::Source::Measured(us) => format!("measured {us:.1} µs in the tune cache"),
                dispatch::Source::Model => "cost model".to_string(),
            }
        ),
        Err(_) => "chosen: none (no candidate accepts it)".to_string(),
    };
    let relevant: Vec<_> = verdicts
        .into_iter()
        .filter(|v| v.artifact.problem.is_some_and(|p| same_family(p, op)))
        .collect();
    format!(
        "problem: {}\ndevice: {} ({}, {} SMs)\n{choice}\ncandidates:\n{}",
        req.describe(),
        device.name,
        device.target.name(),
        device.limits.sm_count,
        dispatch::table(&relevant)
    )
}

/// Whether an artifact solving `p` belongs in `op`'s explanation: every GEMM (their layouts
/// and epilogues say why they refuse), the same row op, silu_mul, attention.
fn same_family(p: Problem, op: &Op) -> bool {
    match (p, op) {
        (Problem::Gemm(_), Op::Gemm(_) | Op::GemmFp8(_) | Op::BlockScaled(_)) => true,
        (Problem::Row(a), Op::Row { op, .. }) => a == *op,
        (Problem::SiluMul, Op::SiluMul { .. }) => true,
        (Problem::Attention, Op::Attention { .. }) => true,
        _ => false,
    }
}

/// Chooses the artifact for `op` on `rt`'s device and launches it on `rt`'s stream; returns
/// the choice's label (`kernel/config`).
///
/// # Safety
/// Every tensor address in `op` must be device memory of `rt`'s context holding every element
/// its shape and strides reach, alive until the launched work is done.
pub unsafe fn launch(op: &Op, rt: &Runtime) -> Result<String, RuntimeError> {
    let (req, artifact) = profile::time(Phase::Choose, || choose(op, rt))?;
    profile::time(Phase::Launch, || {
        // A split-K artifact is a plan of two launches with a workspace: the GEMM host runs it.
        if let Op::Gemm(g) = op
            && split::is_partial(artifact)
        {
            // SAFETY: the caller's promise, for each tensor of the op.
            let arg = |m: &TensorMeta| unsafe { TensorArg::from_raw(rt, m.clone()) };
            let mut roles = vec![("a", arg(&g.a)), ("b", arg(&g.b)), ("d", arg(&g.d))];
            roles.extend(g.c.as_ref().map(|c| ("c", arg(c))));
            roles.extend(g.bias.as_ref().map(|(b, _)| ("bias", arg(b))));
            return split::launch_split_for(rt, artifact, &roles, &gemm_request(g));
        }
        if let Op::GemmFp8(g) = op
            && split::is_partial(artifact)
        {
            // The FP8 split-K plan (`fp8_splitk.rs`): its reduce applies the scales.
            // SAFETY: the caller's promise, for each tensor of the op.
            let arg = |m: &TensorMeta| unsafe { TensorArg::from_raw(rt, m.clone()) };
            let roles = [("a", arg(&g.a)), ("b", arg(&g.b)), ("d", arg(&g.d))];
            let vectors = match &g.scales {
                Fp8Scales::Rows(sa, sb)
                | Fp8Scales::Blocks(sa, sb)
                | Fp8Scales::BlocksMn(sa, sb) => Some((arg(sa), arg(sb))),
                Fp8Scales::Tensor(..) => None,
            };
            let scales = match (&g.scales, &vectors) {
                (Fp8Scales::Rows(..), Some((sa, sb))) => Fp8ScaleArgs::Rows(sa, sb),
                (Fp8Scales::Blocks(..), Some((sa, sb))) => Fp8ScaleArgs::Blocks(sa, sb),
                (Fp8Scales::BlocksMn(..), Some((sa, sb))) => Fp8ScaleArgs::BlocksMn(sa, sb),
                (Fp8Scales::Tensor(x, y), _) => Fp8ScaleArgs::Tensor(*x, *y),
                _ => unreachable!("vectors are present exactly for the row and block forms"),
            };
            return split::launch_fp8_split(rt, artifact, &roles, scales);
        }
        let (tensors, scalars) = req.arguments(artifact);
        let args: Vec<TensorArg<'_>> = tensors
            .into_iter()
            // SAFETY: the caller's promise, for each tensor of the op.
            .map(|m| unsafe { TensorArg::from_raw(rt, m) })
            .collect();
        rt.launch_with(artifact, &args, &scalars)
    })?;
    Ok(format!("{}/{}", artifact.kernel, artifact.config))
}

/// The request for `op` and the artifact chosen for it on `rt`'s device: this thread's kept
/// choice for the call's words ([`chosen`]), else the dispatcher's (remembered for the process
/// by `dispatch::choose_remembered`: the same layouts judge the catalogue once).
fn choose(
    op: &Op,
    rt: &Runtime,
) -> Result<(Box<dyn ProblemDef>, &'static KernelArtifact), RuntimeError> {
    let req = request(op);
    let ordinal = rt.context().ordinal();
    if let Some(artifact) = chosen::get(op, ordinal) {
        return Ok((req, artifact));
    }
    let all_metas = metas(op);
    let tensors: Vec<&TensorMeta> = all_metas.iter().collect();
    let choice = dispatch::choose_remembered(req.as_ref(), &tensors, &[], &Device::of(rt)?)?;
    chosen::keep(op, ordinal, choice.artifact);
    Ok((req, choice.artifact))
}

/// Every tensor of the op (the choice's key).
pub(crate) fn metas(op: &Op) -> Vec<TensorMeta> {
    match op {
        Op::Gemm(g) => {
            let mut v = vec![g.a.clone(), g.b.clone(), g.d.clone()];
            v.extend(g.c.clone());
            v.extend(g.bias.as_ref().map(|b| b.0.clone()));
            v.extend(g.res.clone());
            v
        }
        Op::GemmFp8(g) => {
            let mut v = vec![g.a.clone(), g.b.clone(), g.d.clone()];
            if let Fp8Scales::Rows(sa, sb)
            | Fp8Scales::Blocks(sa, sb)
            | Fp8Scales::BlocksMn(sa, sb) = &g.scales
            {
                v.extend([sa.clone(), sb.clone()]);
            }
            v
        }
        Op::BlockScaled(r) => {
            let mut v = vec![r.a.clone(), r.b.clone(), r.d.clone()];
            v.extend(
                r.factors
                    .iter()
                    .flat_map(|(sa, sb)| [sa.clone(), sb.clone()]),
            );
            v
        }
        Op::Row { x, w, b, y, .. } => {
            let mut v = vec![x.clone(), y.clone()];
            v.extend(w.clone());
            v.extend(b.clone());
            v
        }
        Op::SiluMul { x, g, y } => vec![x.clone(), g.clone(), y.clone()],
        Op::Attention { tensors, .. } => tensors.to_vec(),
    }
}

/// One compiled artifact, for `tirx.list_kernels()`.
pub struct Listed {
    /// Kernel name.
    pub kernel: &'static str,
    /// Config name.
    pub config: &'static str,
    /// Target (`sm_90a`).
    pub target: &'static str,
    /// What it solves (`gemm(b = tn, epilogue = plain)`), if declared.
    pub problem: Option<String>,
    /// Its config entries, as text.
    pub consts: Vec<(&'static str, String)>,
}

/// Every compiled artifact of the catalogue.
pub fn list() -> Vec<Listed> {
    catalogue::all()
        .into_iter()
        .flat_map(|k| k.artifacts)
        .map(|a| Listed {
            kernel: a.kernel,
            config: a.config,
            target: a.target.name(),
            problem: a.problem.map(|p| p.to_string()),
            consts: a
                .consts
                .iter()
                .map(|(n, v)| (*n, format!("{v:?}")))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tirx::abi::ElemType;

    fn bf16(shape: &[usize]) -> TensorMeta {
        TensorMeta::row_major(ElemType::Bf16, shape, 0)
    }

    #[test]
    fn silu_mul_is_chosen_by_tile_cover() {
        let op = Op::SiluMul {
            x: bf16(&[64, 4096]),
            g: bf16(&[64, 4096]),
            y: bf16(&[64, 4096]),
        };
        let text = explain(&op, &Device::h200());
        assert!(text.contains("chosen: silu_mul/"), "{text}");
        assert!(
            !text.contains("gemm"),
            "other families are left out:\n{text}"
        );
    }

    #[test]
    fn a_residual_after_a_bias_is_its_own_epilogue_on_both_targets() {
        let (m, n, k) = (300, 264, 136);
        let op = Op::Gemm(Gemm {
            layout: tirx::problem::BLayout::Tn,
            a: bf16(&[m, k]),
            b: bf16(&[n, k]),
            c: None,
            bias: Some((bf16(&[n]), tirx::problem::Act::Gelu)),
            res: Some(bf16(&[m, n])),
            d: bf16(&[m, n]),
            scaled: None,
        });
        let h = explain(&op, &Device::h200());
        assert!(h.contains("gemm tn bias-gelu-residual"), "{h}");
        assert!(h.contains("chosen: gemm_sm90_bias_act_res/gelu"), "{h}");
        let b = explain(&op, &Device::b200());
        assert!(b.contains("chosen: gemm_sm100_bias_act_res/gelu"), "{b}");
    }

    /// `use_fast_accum` (issue #29): the promoted request (torch's default) is its own problem
    /// in the explanation, chooses a promoted config and refuses the fast ones by name of
    /// their accumulation; the fast request chooses a fast config.
    #[test]
    fn the_fp8_accumulation_is_the_callers_choice() {
        let (m, n, k) = (256, 512, 1024);
        let e4m3 = |shape: &[usize]| TensorMeta::row_major(ElemType::E4m3, shape, 0);
        let op = |accum| {
            Op::GemmFp8(GemmFp8 {
                a: e4m3(&[m, k]),
                b: e4m3(&[n, k]),
                scales: Fp8Scales::Tensor(0.5, 2.0),
                values_on_device: false,
                d: bf16(&[m, n]),
                accum,
            })
        };
        let promoted = explain(&op(Fp8Accum::Promoted), &Device::h200());
        assert!(
            promoted.contains("gemm tn scale-tensor promoted,"),
            "{promoted}"
        );
        assert!(promoted.contains("/promoted"), "{promoted}");
        assert!(
            promoted.contains("accumulates on the tensor core over all of K"),
            "{promoted}"
        );
        let fast = explain(&op(Fp8Accum::Fast), &Device::h200());
        let chosen = fast
            .lines()
            .find(|l| l.starts_with("chosen:"))
            .unwrap_or("");
        assert!(!chosen.contains("promoted"), "{fast}");
    }

    #[test]
    fn hopper_only_ops_on_a_b200_are_refused_by_target() {
        let op = Op::Row {
            op: tirx::problem::RowOp::Softmax,
            x: bf16(&[8, 1000]),
            w: None,
            b: None,
            y: bf16(&[8, 1000]),
            eps: 0.0,
        };
        let h = explain(&op, &Device::h200());
        assert!(h.contains("chosen: softmax"), "{h}");
        let b = explain(&op, &Device::b200());
        assert!(b.contains("chosen: none"), "{b}");
        assert!(b.contains("refused: compiled for sm_90a"), "{b}");
        let err = dispatch::choose(
            request(&op).as_ref(),
            &catalogue::all(),
            &Device::b200(),
            Cache::host(),
        )
        .unwrap_err();
        assert!(matches!(err, RuntimeError::NoKernelFits { .. }));
    }

    /// Q/K head dim 192 with V/O 128 (`v`'s own head dim): the Blackwell tile takes it; on
    /// the H200 no kernel does, and the refusal says the Hopper kernels have one head dim.
    #[test]
    fn split_head_dims_reach_the_blackwell_tile_and_are_refused_on_hopper() {
        // Contiguous bf16 on GPU 0 (the checks never read the memory).
        let foreign = |shape: &[usize]| {
            let mut strides = vec![1i64; shape.len()];
            for i in (0..shape.len() - 1).rev() {
                strides[i] = strides[i + 1] * shape[i + 1] as i64;
            }
            crate::tensor::Foreign {
                dtype: Ok(ElemType::Bf16),
                shape: shape.to_vec(),
                strides,
                addr: 0x7f00_0000_0000,
                place: crate::tensor::Place::Cuda(0),
            }
        };
        let (q, k, v) = (
            foreign(&[1, 1000, 16, 192]),
            foreign(&[1, 1000, 16, 192]),
            foreign(&[1, 1000, 16, 128]),
        );
        let call = crate::ops::attention(&crate::ops::AttentionArgs {
            q: &q,
            k: &k,
            v: &v,
            out: None,
            lse: None,
            causal: true,
            scale: None,
        })
        .unwrap();
        let b = explain(&call.op, &Device::b200());
        assert!(b.contains("attention causal hd 192/128"), "{b}");
        assert!(
            b.contains("chosen: attention_sm100/causal_fa4_d192_128"),
            "{b}"
        );
        let h = explain(&call.op, &Device::h200());
        assert!(h.contains("chosen: none"), "{h}");
        let err = dispatch::choose(
            request(&call.op).as_ref(),
            &catalogue::all(),
            &Device::h200(),
            Cache::host(),
        )
        .unwrap_err();
        assert!(matches!(err, RuntimeError::NoKernelFits { .. }));
        // What `tirx.NoKernelFitsError` carries.
        let msg = err.to_string();
        assert!(
            msg.contains("has one head dim `D` for Q·Kᵀ and P·V, not Q/K 192 with V/O 128"),
            "{msg}"
        );
    }

    #[test]
    fn list_has_every_family() {
        let all = list();
        for p in ["gemm(", "softmax", "silu_mul", "attention"] {
            assert!(
                all.iter()
                    .any(|l| l.problem.as_deref().is_some_and(|s| s.starts_with(p))),
                "{p}"
            );
        }
    }
}
