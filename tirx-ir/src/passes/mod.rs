//! The pass pipeline: one list, read top to bottom.
//!
//! Each pass is one file holding one struct that implements `Pass`. The verifier
//! (`crate::valid::verify`) runs on the input and after every pass; its errors after a pass
//! are compiler bugs and say which pass broke the IR. `TIRX_DUMP=<pass>` (or `all`) prints
//! the IR before and after that pass to stderr.

mod carry_stage_counters;
mod check_grid_dep;
mod check_protocol;
mod check_wgmma_regs;
mod derive_signals;
mod dispatch_ops;
mod flatten_exprs;
mod lower_scopes;
mod lower_sync_ops;
mod lower_tile_ops;
mod plan_memory;
mod plan_reg_tiles;
#[cfg(test)]
mod tests;
mod verify_pair;
mod verify_scopes;
pub(crate) mod walk;

pub use check_grid_dep::{CheckGridDep, GridDepError};
pub use check_protocol::ProtocolError;
pub use derive_signals::SignalError;
pub use plan_memory::MemoryError;
pub use verify_pair::PairError;
pub use verify_scopes::{Need, ScopeError};

use crate::diag::{DiagKind, Diagnostic, Diagnostics};
use crate::ir::Kernel;

/// An error of the pipeline itself: a compiler bug.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PassError {
    /// The verifier rejects the IR a pass produced.
    #[error("internal error: IR invalid after pass `{pass}`: {error}")]
    InvalidAfter {
        /// The pass.
        pass: &'static str,
        /// What the verifier found.
        error: Box<DiagKind>,
    },
}

/// A transformation of one kernel.
pub trait Pass: Sync {
    /// kebab-case name, shown by `tirx explain`.
    fn name(&self) -> &'static str;
    /// Runs the pass; errors carry the user's spans.
    fn run(&self, kernel: &mut Kernel) -> Result<(), Diagnostics>;
}

/// The pipeline, in order.
pub static PIPELINE: &[&dyn Pass] = &[
    // Scope rules are checked on the user's scopes, before any pass rewrites them.
    &verify_scopes::VerifyScopes,
    // The pair's agreements, on the user's ops (before dispatch lowers the MMAs and commits).
    &verify_pair::VerifyPair,
    // Needs the TMA copies as tile ops (their boxes); inserts arrive-expect-tx ops.
    &derive_signals::DeriveSignals,
    // Picks a variant for every copy and mma; everything after relies on `variant` being set.
    &dispatch_ops::DispatchOps,
    // Register tiles an in-flight wgmma writes (accumulators) or reads (A) are not touched
    // before the wait that retires it; needs the variants (which MMAs are wgmma).
    &check_wgmma_regs::CheckWgmmaRegs,
    // The asynchronous protocol (issue #11: parity, fences, waits, bulk groups, TMEM,
    // arrival and byte counts, refills); needs the variants (which copies are generic-proxy
    // stores, TMA stores or loads, which ops read through the async proxy) and the expect-tx
    // ops derive_signals placed (an explicit one outside its loads' `if` is found by them).
    &check_protocol::CheckProtocol,
    // Register-tile ops checked against their tiles and threads; cross-warp reductions get
    // their shared scratch, which plan_memory then places.
    &plan_reg_tiles::PlanRegTiles,
    // Offsets and TMEM columns; needs the variants (which buffers TMA writes decide
    // alignment) and must precede every lowering that computes an address.
    &plan_memory::PlanMemory,
    // Pipeline waits in loops that step by one → waits on a carried stage and phase; after
    // check_protocol, which reasons on the pipeline ops' counters, and before lower_tile_ops,
    // which lowers the rest by division.
    &carry_stage_counters::CarryStageCounters,
    // Tile ops and pipeline ops → sync ops + instructions (phase Tile → Thread).
    &lower_tile_ops::LowerTileOps,
    // Sync ops → instructions; after lower_tile_ops, which emits sync ops of its own.
    &lower_sync_ops::LowerSyncOps,
    // Scopes → guarded blocks; after every lowering that checks or emits scoped code.
    &lower_scopes::LowerScopes,
    // Expressions → instructions on atoms (phase Thread → Ptx); last, since every pass
    // before it writes nested expressions.
    &flatten_exprs::FlattenExprs,
];

/// Verifies `k` after `pass`: the verifier's errors become compiler bugs that name the pass
/// and keep the span of the statement or declaration that broke (a pass's statements inherit
/// the span of the user's statement they came from).
fn verify_after(pass: &dyn Pass, k: &Kernel) -> Result<(), Diagnostics> {
    crate::valid::verify(k).map_err(|errs| {
        errs.into_iter()
            .map(|e| {
                Diagnostic::new(
                    e.span,
                    PassError::InvalidAfter {
                        pass: pass.name(),
                        error: Box::new(e.kind),
                    },
                )
            })
            .collect()
    })
}

/// The IR text after one pass (for `tirx explain`).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Pass name (`"input"` for the front end's output).
    pub pass: &'static str,
    /// The kernel printed after it.
    pub text: String,
}

/// Runs every pass on a `Tile`-phase kernel, returning the `Ptx`-phase kernel and, when
/// `record` is set, the IR after each pass.
pub fn run_pipeline(kernel: Kernel, record: bool) -> Result<(Kernel, Vec<Snapshot>), Diagnostics> {
    run(kernel, record, None)
}

/// Each pass's name and wall time, in pipeline order.
pub type PassTimes = Vec<(&'static str, std::time::Duration)>;

/// [`run_pipeline`] with each pass timed: the wall time of every pass of [`PIPELINE`] in
/// order (the input's verification first, as `verify`), for `tirx time-passes`.
pub fn run_pipeline_timed(kernel: Kernel) -> Result<(Kernel, PassTimes), Diagnostics> {
    let mut times = Vec::with_capacity(PIPELINE.len() + 1);
    let (k, _) = run(kernel, false, Some(&mut times))?;
    Ok((k, times))
}

fn run(
    mut kernel: Kernel,
    record: bool,
    mut times: Option<&mut PassTimes>,
) -> Result<(Kernel, Vec<Snapshot>), Diagnostics> {
    let mut snaps = Vec::new();
    let t0 = std::time::Instant::now();
    // `TIRX_DUMP=<pass>` (or `all`) prints the IR before and after that pass to stderr.
    let dump = std::env::var("TIRX_DUMP").ok();
    let dumps = |name: &str| dump.as_deref().is_some_and(|d| d == name || d == "all");
    crate::valid::verify(&kernel)?;
    if let Some(t) = times.as_deref_mut() {
        t.push(("verify", t0.elapsed()));
    }
    if record {
        snaps.push(Snapshot {
            pass: "input",
            text: kernel.to_string(),
        });
    }
    for pass in PIPELINE {
        if dumps(pass.name()) {
            eprintln!(
                "// ===== {} before {} =====\n{kernel}",
                kernel.sig.entry,
                pass.name()
            );
        }
        let t = std::time::Instant::now();
        pass.run(&mut kernel)?;
        if let Some(times) = times.as_deref_mut() {
            times.push((pass.name(), t.elapsed()));
        }
        if dumps(pass.name()) {
            eprintln!(
                "// ===== {} after {} =====\n{kernel}",
                kernel.sig.entry,
                pass.name()
            );
        }
        verify_after(*pass, &kernel)?;
        if record {
            snaps.push(Snapshot {
                pass: pass.name(),
                text: kernel.to_string(),
            });
        }
    }
    Ok((kernel, snaps))
}
