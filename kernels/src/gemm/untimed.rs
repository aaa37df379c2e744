//! Configs not yet timed on a GPU, and the cost model with its guard on them lifted.
//!
//! A config whose constants say `UNTIMED = 1` has never run on a GPU. The GEMM cost model
//! (`request.rs`) is fitted to measured kernels and checked against their times
//! (`dispatch::measured`); on a config no run has timed it would rank a guess, and it can
//! rank one first (issue #32: `gemm_sm90_t/n80` at 160×4096×4096 before stop 59 timed it,
//! `gemm_sm90_t/nn_n112` at NN 208×4096×4096 before stop 59's call 3 did; both were then
//! the fastest config there, as predicted).
//! So [`GemmRequest::cost`](crate::dispatch::ProblemDef::cost) refuses it
//! (`Reject::Unranked`, [`UNTIMED_REASON`]) and the host never chooses it. It still runs by
//! name (`tirx run`, `tirx bench gemm --kernel`), and `tirx bench gemm --all` times it beside
//! the ranked configs: the bench ranks its candidates with [`WithUntimed`], the request with
//! the guard lifted, which is also how a test states what the model would choose once the
//! config is timed. The run that first times a config removes its constant (or keeps it, with
//! the measurement's reason, where the model would choose it wrongly).
//!
//! The guard reads a config constant, never a kernel's or config's name: any GEMM kernel's
//! config may carry it. No shipped GEMM config carries it since stop 61 (`n80`/`n112` and
//! their NN forms were timed at stop 59, the odd-block tiles `n72`…`n120` and their NN forms at
//! stop 60, `gemm_sm90_t`'s B-multicasting clusters `m2n72`…`m2n128` at stop 61), but for
//! `gemm_sm90_fp8_block_mn_dbl` (timed at stop 61, slower than `gemm_sm90_fp8_block_mn`: kept
//! out of the host's choice so); the tests of the guard mark shipped configs untimed with
//! [`marked_untimed`].

use tirx::abi::ConfigValue;
use tirx::runtime::TensorMeta;
use tirx::{Kernel, KernelArtifact};

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

/// `kernel` with its configs named in `configs` marked untimed (`UNTIMED = 1` added to their
/// constants; every target's artifact), leaked for the process: a shipped kernel as it was
/// before the run that first timed those configs, so that the tests of the guard (here, in
/// `dispatch` and in `tirx bench gemm --all`) exercise it on real artifacts.
pub fn marked_untimed(kernel: &'static Kernel, configs: &[&str]) -> &'static Kernel {
    let artifacts: Vec<KernelArtifact> = kernel
        .artifacts
        .iter()
        .map(|a| {
            let mut a = *a;
            if configs.contains(&a.config) {
                let mut consts = a.consts.to_vec();
                consts.push(("UNTIMED", ConfigValue::Int(1)));
                a.consts = Box::leak(consts.into_boxed_slice());
            }
            a
        })
        .collect();
    Box::leak(Box::new(Kernel {
        name: kernel.name,
        artifacts: Box::leak(artifacts.into_boxed_slice()),
        pruned: kernel.pruned,
    }))
}

/// The catalogue with `gemm_sm90_t`'s two-row-block NN tiles (`nn_n72`, `nn_n80`, `nn_n88`,
/// `nn_n104`, `nn_n112`, `nn_n120`, bf16 and f16) marked untimed ([`marked_untimed`]): the
/// catalogue's NN choices as they were before stop 59's call 3 timed `nn_n80`/`nn_n112` (the
/// others were added later, untimed, and first timed at stop 60).
pub fn catalogue_with_untimed_nn_tiles() -> Vec<&'static Kernel> {
    crate::catalogue::all()
        .into_iter()
        .map(|k| {
            if k.name == "gemm_sm90_t" {
                marked_untimed(
                    k,
                    &[
                        "nn_n72",
                        "nn_n80",
                        "nn_n88",
                        "nn_n104",
                        "nn_n112",
                        "nn_n120",
                        "nn_f16_n72",
                        "nn_f16_n80",
                        "nn_f16_n88",
                        "nn_f16_n104",
                        "nn_f16_n112",
                        "nn_f16_n120",
                    ],
                )
            } else {
                k
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mark is the constant: no config of `gemm_sm90_t` carries it since stop 61 timed the
    /// B-multicasting cluster tiles (`CL = 2`, the `m2*` configs; the odd-block tiles, BN = 72,
    /// 88, 104 and 120, were timed at stop 60); a marked one is untimed and otherwise the same
    /// artifact (its other constants, its PTX).
    #[test]
    fn marking_a_config_untimed_adds_only_the_constant() {
        let t = crate::catalogue::find("gemm_sm90_t").expect("shipped");
        let marked = marked_untimed(t, &["nn_n80"]);
        assert!(t.artifacts.iter().all(|a| !is_untimed(a)));
        assert_eq!(marked.artifacts.len(), t.artifacts.len());
        for (a, b) in t.artifacts.iter().zip(marked.artifacts) {
            assert_eq!(
                is_untimed(b),
                b.config == "nn_n80" || is_untimed(a),
                "{}",
                b.config
            );
            assert_eq!((a.config, a.ptx), (b.config, b.ptx));
            assert_eq!(a.int("BN"), b.int("BN"));
        }
    }
}
