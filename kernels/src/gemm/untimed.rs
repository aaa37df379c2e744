//! Configs not yet timed on a GPU, and the cost model with its guard on them lifted.
//!
//! A config whose constants say `UNTIMED = 1` has never run on a GPU. The GEMM cost model
//! (`request.rs`) is fitted to measured kernels and checked against their times
//! (`dispatch::measured`); on a config no run has timed it would rank a guess, and it can
//! rank one first (issue #32: `gemm_sm90_t/n80` at 160×4096×4096 before stop 59 timed it;
//! `gemm_sm90_t/nn_n112` at NN 208×4096×4096, `dispatch::transposed`).
//! So [`GemmRequest::cost`](crate::dispatch::ProblemDef::cost) refuses it
//! (`Reject::Unranked`, [`UNTIMED_REASON`]) and the host never chooses it. It still runs by
//! name (`tirx run`, `tirx bench gemm --kernel`), and `tirx bench gemm --all` times it beside
//! the ranked configs: the bench ranks its candidates with [`WithUntimed`], the request with
//! the guard lifted, which is also how a test states what the model would choose once the
//! config is timed. The run that first times a config removes its constant (or keeps it, with
//! the measurement's reason, where the model would choose it wrongly).
//!
//! The guard reads a config constant, never a kernel's or config's name: any GEMM kernel's
//! config may carry it.

use tirx::KernelArtifact;
use tirx::runtime::TensorMeta;

use super::request::GemmRequest;
use crate::dispatch::tune::Key;
use crate::dispatch::{Device, ProblemDef, Reject};

/// Why a config that has not been timed is not ranked ([`is_untimed`], this file's header).
pub const UNTIMED_REASON: &str = "not yet timed on a GPU (config constant `UNTIMED = 1`): the \
     cost model ranks only configs it was checked against; it runs by name, and \
     `tirx bench gemm --all` times it";

/// Whether `art`'s config has not been timed on a GPU (its config constant `UNTIMED = 1`):
/// the cost model does not rank it (this file's header).
pub fn is_untimed(art: &KernelArtifact) -> bool {
    art.int("UNTIMED") == Some(1)
}

/// A GEMM request judged with the untimed guard lifted: the cost model ranks the configs
/// that say `UNTIMED = 1` as it would once they are timed (everything else is the
/// request's). `tirx bench gemm --all` ranks its candidates with it, so that a new config is
/// timed before the host may choose it; a test states with it what the model would choose.
#[derive(Clone, Copy, Debug)]
pub struct WithUntimed<'r>(pub &'r GemmRequest);

impl ProblemDef for WithUntimed<'_> {
    fn describe(&self) -> String {
        self.0.describe()
    }

    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        self.0.solves(artifact)
    }

    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>) {
        self.0.arguments(artifact)
    }

    fn cost(&self, artifact: &KernelArtifact, device: &Device) -> Result<f64, Reject> {
        self.0.model_cost(artifact, device)
    }

    fn cache_key(&self, device: &Device) -> Key {
        self.0.cache_key(device)
    }
}
