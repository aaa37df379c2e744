//! The attention family: O = softmax(scale·Q·Kᵀ [+ causal mask])·V and the LSE per row, as
//! [`crate::family::Family`] sees it.
//!
//! - Problem: `Problem::Attention`; the head dimension and the mask are the config's `D` and
//!   `CAUSAL`.
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

/// The head dimension and the mask of an attention artifact.
fn tile_of(art: &KernelArtifact) -> Result<(usize, bool), RuntimeError> {
    let d = art.int("D").ok_or_else(|| RuntimeError::NoKernelFits {
        problem: format!("attention of `{}/{}`", art.kernel, art.config),
        table: "  its config declares no head dimension `D`\n".into(),
    })?;
    Ok((d as usize, art.int("CAUSAL") == Some(1)))
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
        Ok(Box::new(AttentionRequest::contiguous(
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
        let (d, causal) = tile_of(art).map_err(|e| e.to_string())?;
        let (stats, worst) =
            crate::simulate::attention(art, (m, n.max(1)), run.sms, run.seed, &run.policy)?;
        Ok((
            stats,
            format!("hd {d}, causal {causal}: max |o − ref| {worst:.2e}"),
        ))
    }

    fn error_name(&self) -> &'static str {
        "max error"
    }
}
