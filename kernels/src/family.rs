//! Problem families: one host-side design for every kind of problem the shipped kernels solve.
//!
//! A family (GEMM, the row ops, attention, copy) lives in one folder beside its kernels
//! (`kernels/src/<family>/family.rs`) and implements [`Family`]: which [`Problem`]s it owns,
//! the request the one dispatcher ([`crate::dispatch`]) judges every artifact against
//! ([`Family::request`]: accept with a cost, or refuse with a typed
//! [`crate::dispatch::Reject`]; ranked by the tune cache, then the cost model), its inputs and
//! f64 reference on a GPU ([`Family::check`], what `tirx run` does) and in the emulator
//! ([`Family::simulate`], what `tirx sim` does), and the shape both use when none is given
//! ([`Family::default_shape`]). The `tirx` tool is generic over families: it finds an
//! artifact's family by the problem the artifact declares ([`of`]), never by a name.
//!
//! Adding a family is one folder (its kernels and its `family.rs`, which `kernels/build.rs`
//! finds and declares) plus one line in [`crate::catalogue::FAMILIES`];
//! `kernels/src/family/tests.rs` defines a throwaway family to prove it, and
//! `catalogue::tests::discovery` runs the build script's discovery on a throwaway folder.
//!
//! Invariants:
//! - Every problem an artifact can declare is owned by exactly one family of
//!   [`crate::catalogue::FAMILIES`] (a unit test checks every shipped artifact).
//! - Tensors go to a kernel by role ([`launch_roles`]): the signature's order decides the
//!   argument order, the role's name the tensor, so a family never relies on parameter order.

use std::borrow::Borrow;

use tirx::problem::Problem;
use tirx::runtime::{DeviceLimits, PreparedLaunch, ScalarArg, TensorMeta};
use tirx::{KernelArtifact, Runtime, RuntimeError, TensorArg};
use tirx_sim::{Device as SimDevice, Policy, Stats};

use crate::dispatch::ProblemDef;

/// A problem's extents as the tool takes them (`--m`, `--n`, `--k`); each family says what
/// they mean (GEMM M×N×K, rows M×N, attention sequence × heads).
pub type Shape = (usize, usize, usize);

/// A problem family's host side.
pub trait Family: Sync {
    /// The family's name (`gemm`, `rows`, `attention`, `copy`), for listings and errors.
    fn name(&self) -> &'static str;

    /// Whether this family owns `problem`.
    fn owns(&self, problem: Problem) -> bool;

    /// The request of `art`'s own problem at `shape` on contiguous tensors: what the
    /// dispatcher judges every artifact against for this problem. `Err` when `shape` makes
    /// no problem of this kind (say, no head dimension).
    fn request(
        &self,
        art: &KernelArtifact,
        shape: Shape,
    ) -> Result<Box<dyn ProblemDef>, RuntimeError>;

    /// The shape `tirx sim` and the tests run `art` at when none is given: odd where the
    /// kernels allow (tails in every tiled dimension), with rows TMA takes (16-byte strides).
    fn default_shape(&self, art: &KernelArtifact) -> Shape;

    /// `tirx run`: runs `art` on `rt`'s GPU on random inputs from `seed` at `shape` (outputs
    /// poisoned first) and compares with the family's f64 reference.
    fn check(
        &self,
        rt: &Runtime,
        art: &'static KernelArtifact,
        shape: Shape,
        seed: u64,
    ) -> Result<CheckReport, RuntimeError>;

    /// `tirx sim`: runs `art` in the emulator on random inputs at `shape` and compares with
    /// the family's f64 reference; the verdict in words on success, the first wrong element
    /// or the emulator's diagnostic otherwise.
    fn simulate(
        &self,
        art: &KernelArtifact,
        shape: Shape,
        run: &SimRun,
    ) -> Result<(Stats, String), String>;

    /// What [`CheckReport::error`] counts, for `tirx run`'s line.
    fn error_name(&self) -> &'static str {
        "rel. error"
    }
}

/// The family that owns `art`'s problem among `families`; `None` for an artifact that
/// declares no problem (or one no family owns).
pub fn of<'f>(families: &[&'f dyn Family], art: &KernelArtifact) -> Option<&'f dyn Family> {
    let problem = art.problem?;
    families.iter().copied().find(|f| f.owns(problem))
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Problem shape (M, N, K; K = 0 where the problem has none).
    pub shape: Shape,
    /// Relative Frobenius error (GEMM), mismatching elements (copy), max error (rows,
    /// attention).
    pub error: f64,
    /// Whether it is within tolerance.
    pub ok: bool,
    /// For a failed check, where it went wrong (a GEMM's wrong 64×64 blocks, a row op's first
    /// wrong element); empty otherwise.
    pub blocks: String,
}

/// One emulator run: the scheduler seed (also the inputs' seed), the emulated device's SM
/// count (`SMS` in a persistent kernel's grid) and the scheduling policy.
#[derive(Clone, Copy, Debug)]
pub struct SimRun {
    /// Scheduler and input seed.
    pub seed: u64,
    /// SMs of the emulated device.
    pub sms: u32,
    /// The policy (`setmaxnreg` pool, cluster-launch-control answers, timeline).
    pub policy: Policy,
}

impl SimRun {
    /// One schedule of `seed` on an H200's SM count, default policy.
    pub fn seeded(seed: u64) -> SimRun {
        SimRun {
            seed,
            sms: DeviceLimits::HOPPER.sm_count,
            policy: Policy::default(),
        }
    }

    /// Plans `art`'s launch on `tensors` and `scalars` as the runtime does on an H200 of
    /// `self.sms` SMs and runs it in the emulator.
    pub fn launch(
        &self,
        art: &KernelArtifact,
        dev: &mut SimDevice,
        tensors: &[TensorMeta],
        scalars: &[f32],
    ) -> Result<Stats, String> {
        crate::simulate::launch_with(
            art.ptx,
            art.sig(),
            dev,
            (tensors, scalars),
            self.seed,
            &DeviceLimits {
                sm_count: self.sms,
                ..DeviceLimits::HOPPER
            },
            &self.policy,
        )
        .map_err(|e| e.to_string())
    }
}

/// The tensors and scalars of `art`'s signature, in its parameter order, taken by role from
/// `tensors` and `scalars` (`(role, value)`); a role the kernel does not take is left out.
/// A tensor or scalar the kernel takes that is not among them is a typed error naming it.
pub fn by_role<T: Clone>(
    art: &KernelArtifact,
    tensors: &[(&str, T)],
    scalars: &[(&str, f32)],
) -> Result<(Vec<T>, Vec<f32>), RuntimeError> {
    let (ts, ss) = in_role_order::<T, T, f32>(art, tensors, scalars, |v| v)?;
    Ok((ts.into_iter().cloned().collect(), ss))
}

/// [`by_role`] without cloning the tensors: references to them, in the signature's order, and
/// each scalar as `scalar` makes it (a launch's path takes this: every clone of a tensor
/// argument is two allocations).
fn in_role_order<'t, T: Borrow<U>, U: ?Sized, S>(
    art: &KernelArtifact,
    tensors: &'t [(&str, T)],
    scalars: &[(&str, f32)],
    scalar: impl Fn(f32) -> S,
) -> Result<(Vec<&'t U>, Vec<S>), RuntimeError> {
    let sig = art.sig();
    let missing = |what: &str, role: &str| RuntimeError::NoKernelFits {
        problem: format!("`{}/{}` takes the {what} `{role}`", art.kernel, art.config),
        table: "  which this problem does not have\n".into(),
    };
    let ts = sig
        .tensors
        .iter()
        .map(|t| {
            tensors
                .iter()
                .find(|(r, _)| *r == t.name)
                .map(|(_, v)| v.borrow())
                .ok_or_else(|| missing("tensor", &t.name))
        })
        .collect::<Result<_, _>>()?;
    let ss = sig
        .scalars
        .iter()
        .map(|s| {
            scalars
                .iter()
                .find(|(r, _)| r == s)
                .map(|(_, v)| scalar(*v))
                .ok_or_else(|| missing("scalar", s))
        })
        .collect::<Result<_, _>>()?;
    Ok((ts, ss))
}

/// Launches `art` on `rt` with its tensors and scalars by role ([`by_role`]); the tensors are
/// arguments or references to them (`R` is `TensorArg` or `&TensorArg`).
pub fn launch_roles<'a, R: Borrow<TensorArg<'a>>>(
    rt: &'a Runtime,
    art: &KernelArtifact,
    tensors: &[(&str, R)],
    scalars: &[(&str, f32)],
) -> Result<(), RuntimeError> {
    prepare_roles(rt, art, tensors, scalars)?.submit()
}

/// [`launch_roles`]'s checks alone (`Runtime::check_args`): a plan of several launches checks
/// the later ones before it queues the first.
pub fn check_roles<'a, R: Borrow<TensorArg<'a>>>(
    rt: &Runtime,
    art: &KernelArtifact,
    tensors: &[(&str, R)],
    scalars: &[(&str, f32)],
) -> Result<(), RuntimeError> {
    let (ts, ss) = in_role_order::<R, TensorArg<'a>, _>(art, tensors, scalars, ScalarArg::F32)?;
    rt.check_refs(art, &ts, &ss)
}

/// [`launch_roles`] prepared, not queued (`Runtime::prepare_args`).
pub fn prepare_roles<'a, R: Borrow<TensorArg<'a>>>(
    rt: &'a Runtime,
    art: &KernelArtifact,
    tensors: &[(&str, R)],
    scalars: &[(&str, f32)],
) -> Result<PreparedLaunch<'a>, RuntimeError> {
    let (ts, ss) = in_role_order::<R, TensorArg<'a>, _>(art, tensors, scalars, ScalarArg::F32)?;
    rt.prepare_refs(art, &ts, &ss)
}

#[cfg(test)]
mod tests;
