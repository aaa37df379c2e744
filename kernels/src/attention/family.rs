//! The attention family: O = softmax(scale·Q·Kᵀ [+ causal mask])·V and the LSE per row, as
//! [`crate::family::Family`] sees it.
//!
//! - Problem: `Problem::Attention`; the head dimensions and the mask are the config's `D_QK`
//!   and `D_V` (Q/K and V/O; or `D` for both) and `CAUSAL` ([`head_dims`]).
//! - Request: [`AttentionRequest`] (`request.rs`: acceptance and the cost model).
//! - Reference: `reference.rs` (f64 O and LSE).
//! - Host entries and launch: `host.rs`.
//!
//! Shapes: `(m, n, _)` is `m` queries and keys over `n` heads, one batch. Default 130 over 2
//! heads: a tail in both the query tile and the key block.

use tirx::problem::Problem;
use tirx::{KernelArtifact, Runtime, RuntimeError};
use tirx_sim::Stats;

use super::request::{AttentionRequest, Dims};
use crate::dispatch::ProblemDef;
use crate::family::{CheckReport, Family, Shape, SimRun};

/// The attention family.
pub struct Attention;

/// The head dimensions `(Q/K, V/O)` of an attention artifact: its config's `D_QK` and `D_V`
/// (a kernel whose two head dims may differ, `attention_sm100`), or `D` for both (the Hopper
/// kernels); `None` if it declares neither.
pub fn head_dims(art: &KernelArtifact) -> Option<(usize, usize)> {
    let dims = match (art.int("D_QK"), art.int("D_V"), art.int("D")) {
        (Some(qk), Some(v), _) => (qk, v),
        (None, None, Some(d)) => (d, d),
        _ => return None,
    };
    Some((dims.0.max(0) as usize, dims.1.max(0) as usize))
}

/// The head dimensions and the mask of an attention artifact.
fn tile_of(art: &KernelArtifact) -> Result<((usize, usize), bool), RuntimeError> {
    let d = head_dims(art).ok_or_else(|| RuntimeError::NoKernelFits {
        problem: format!("attention of `{}/{}`", art.kernel, art.config),
        table: "  its config declares no head dimension (`D`, or `D_QK` and `D_V`)\n".into(),
    })?;
    Ok((d, art.int("CAUSAL") == Some(1)))
}

impl Family for Attention {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn owns(&self, problem: Problem) -> bool {
        problem == Problem::Attention
    }

    fn request(
        &self,
        art: &KernelArtifact,
        (m, n, _): Shape,
    ) -> Result<Box<dyn ProblemDef>, RuntimeError> {
        let (d, causal) = tile_of(art)?;
        let elem = art.elem_of("q").unwrap_or(tirx::abi::ElemType::Bf16);
        let h = n.max(1);
        let dims = Dims {
            b: 1,
            s: m,
            sk: m,
            hq: h,
            hk: h,
        };
        Ok(Box::new(AttentionRequest::contiguous_split(
            dims, d, elem, causal,
        )?))
    }

    fn default_shape(&self, _art: &KernelArtifact) -> Shape {
        (130, 2, 0)
    }

    fn check(
        &self,
        rt: &Runtime,
        art: &'static KernelArtifact,
        shape: Shape,
        seed: u64,
    ) -> Result<CheckReport, RuntimeError> {
        super::host::check(rt, art, shape, seed)
    }

    fn simulate(
        &self,
        art: &KernelArtifact,
        (m, n, _): Shape,
        run: &SimRun,
    ) -> Result<(Stats, String), String> {
        let ((d, dv), causal) = tile_of(art).map_err(|e| e.to_string())?;
        let (stats, worst) =
            crate::simulate::attention(art, (m, n.max(1)), run.sms, run.seed, &run.policy)?;
        let hd = if d == dv {
            d.to_string()
        } else {
            format!("{d}/{dv}")
        };
        Ok((
            stats,
            format!("hd {hd}, causal {causal}: max |o − ref| {worst:.2e}"),
        ))
    }

    fn error_name(&self) -> &'static str {
        "max error"
    }
}
