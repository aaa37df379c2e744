//! verify-scopes — checks every op against the threads its enclosing scopes select.
//!
//! Phase: Tile, first pass. Preconditions: the front end's kernel. Postconditions: unchanged
//! IR; every op whose scope is fixed by its instruction runs in that scope:
//! - one thread: TMA copies (`tma::load/store`), `tcgen05::mma`, `tcgen05::commit`,
//!   `expect_tx`, TMA commit/wait groups;
//! - one warpgroup: `wgmma::*`;
//! - one whole warp: `tcgen05::alloc/dealloc/relinquish`.
//!
//! Unforced copies and mmas are checked by dispatch, whose candidates each state the scope
//! they need. Also checks target features (tcgen05/wgmma ops on a target without them).

use super::Pass;
use crate::abi::Target;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Kernel, Op, StmtKind};
use crate::passes::walk::visit;
use crate::valid::scope::{ScopeSet, Threads, threads_of};

/// The pass.
pub struct VerifyScopes;

/// The threads an op must run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Every thread of the CTA.
    Cta,
    /// Whole warps.
    Warps,
    /// One thread.
    Single,
    /// Whole warpgroups.
    Warpgroup,
    /// One whole warp.
    Warp,
}

impl Need {
    /// Whether `t` satisfies the need.
    fn holds(self, t: Threads) -> bool {
        match self {
            Need::Cta => matches!(t, Threads::Cta(_)),
            Need::Warps => !matches!(t, Threads::Single | Threads::ElectPerWarp(_)),
            Need::Single => t.is_single(),
            Need::Warpgroup => t.is_whole_warpgroups(),
            Need::Warp => t.is_one_warp(),
        }
    }
    /// Words for error messages: what is needed and how to write it.
    pub fn describe(self) -> &'static str {
        match self {
            Need::Cta => "every thread of the CTA: call it outside any scope",
            Need::Warps => "whole warps (a named barrier counts threads by the warp)",
            Need::Single => {
                "one thread: put it under `#[scope(warp = W, elect)]` or `#[scope(thread = T)]`"
            }
            Need::Warpgroup => {
                "whole warpgroups: `#[scope(warpgroup = G)]` or `#[scope(warpgroups = A..B)]` (or a CTA of whole warpgroups)"
            }
            Need::Warp => "one whole warp: `#[scope(warp = W)]` without `elect`",
        }
    }
}

/// An op in the wrong scope, or on a target without it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// The enclosing scopes select threads the op cannot run on.
    #[error("`{op}` runs here on {}, but it must run on {}", .threads.describe(), .need.describe())]
    Threads {
        /// The op as the user writes it (`tma::load`).
        op: &'static str,
        /// The threads its scopes select.
        threads: Threads,
        /// The threads it needs.
        need: Need,
    },
    /// A nested scope that names none of the threads its enclosing scopes select.
    #[error(
        "this scope selects {inner}, but its enclosing scopes select {outer} (or the CTA has fewer threads): a nested scope is the intersection of the enclosing ones, and this one is empty, so its body would never run. Index within the enclosing threads"
    )]
    EmptyScope {
        /// The scope's own threads.
        inner: String,
        /// What the enclosing scopes leave.
        outer: String,
    },
    /// A tcgen05 op on a target without tcgen05.
    #[error("tcgen05 is not available on {}: it needs sm_100a (use `wgmma` on sm_90a)", .target.name())]
    NoTcgen05 {
        /// The kernel's target.
        target: Target,
    },
    /// A cluster-launch-control op on a target without it.
    #[error("cluster launch control is not available on {}: it needs sm_100a (PTX ISA §9.7.13.17)", .target.name())]
    NoClc {
        /// The kernel's target.
        target: Target,
    },
    /// A wgmma op on a target without wgmma.
    #[error("wgmma is not available on {}: it needs sm_90a (use `tcgen05` on sm_100a)", .target.name())]
    NoWgmma {
        /// The kernel's target.
        target: Target,
    },
}

fn need(op: &Op) -> Option<(Need, &'static str)> {
    Some(match op {
        Op::Copy {
            variant: Some(v), ..
        } if v == "tma_load" => (Need::Single, "tma::load"),
        Op::Copy {
            variant: Some(v), ..
        } if v == "tma_store" => (Need::Single, "tma::store"),
        Op::Mma {
            variant: Some(v), ..
        } if v == "tcgen05" => (Need::Single, "tcgen05::mma"),
        Op::Mma {
            variant: Some(v), ..
        } if v == "wgmma" => (Need::Warpgroup, "wgmma::mma"),
        Op::Tcgen05Commit { .. } => (Need::Single, "tcgen05::commit"),
        // One request per response: a second thread's request would answer into the same
        // 16 bytes and add 16 more to the barrier's phase (PTX ISA §9.7.13.17).
        Op::ClcTryCancel { .. } => (Need::Single, "clc::try_cancel"),
        Op::MbarArriveExpectTx { .. } => (Need::Single, "expect_tx"),
        Op::TmaCommitGroup => (Need::Single, "tma::commit_group"),
        Op::TmaWaitGroup { .. } => (Need::Single, "tma::wait_group"),
        Op::WgmmaFence => (Need::Warpgroup, "wgmma::fence"),
        Op::WgmmaCommit => (Need::Warpgroup, "wgmma::commit"),
        Op::WgmmaWait { .. } => (Need::Warpgroup, "wgmma::wait"),
        Op::SetMaxNReg { .. } => (Need::Warpgroup, "setmaxnreg"),
        Op::ClusterSync => (Need::Cta, "cluster_sync"),
        Op::NamedBarrier { .. } => (Need::Warps, "named_barrier"),
        Op::TmemAlloc { .. } => (Need::Warp, "tcgen05::alloc"),
        Op::TmemDealloc { .. } => (Need::Warp, "tcgen05::dealloc"),
        Op::TmemRelinquish { .. } => (Need::Warp, "tcgen05::relinquish"),
        _ => return None,
    })
}

fn check(need: Need, threads: Threads, op: &'static str) -> Option<ScopeError> {
    (!need.holds(threads)).then_some(ScopeError::Threads { op, threads, need })
}

fn feature(op: &Op, k: &Kernel) -> Option<ScopeError> {
    let t = k.target();
    let tc = matches!(op, Op::Mma { variant: Some(v), .. } if v == "tcgen05")
        || matches!(
            op,
            Op::Tcgen05Commit { .. }
                | Op::TmemAlloc { .. }
                | Op::TmemDealloc { .. }
                | Op::TmemRelinquish { .. }
                | Op::Tcgen05FenceBefore
                | Op::Tcgen05FenceAfter
        );
    // `setmaxnreg` is not a wgmma feature: both targets have it (PTX ISA §9.7.19.6, target
    // notes: sm_90a, and sm_100a among the later arch-specific targets; ptxas -arch=sm_100a
    // assembles it to `USETMAXREG`), so it is checked for its scope only.
    let wg = matches!(op, Op::Mma { variant: Some(v), .. } if v == "wgmma")
        || matches!(op, Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. });
    // Cluster launch control is sm_100 and later (PTX ISA §9.7.13.17/18, target notes).
    let clc = matches!(
        op,
        Op::ClcTryCancel { .. } | Op::ClcIsCanceled { .. } | Op::ClcFirstCta { .. }
    );
    if clc && !t.has_tcgen05() {
        return Some(ScopeError::NoClc { target: t });
    }
    if tc && !t.has_tcgen05() {
        return Some(ScopeError::NoTcgen05 { target: t });
    }
    if wg && !t.has_wgmma() {
        return Some(ScopeError::NoWgmma { target: t });
    }
    None
}

impl Pass for VerifyScopes {
    fn name(&self) -> &'static str {
        "verify-scopes"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        visit(&k.body, &mut |s, stack| {
            if let StmtKind::Scope { scope, .. } = &s.kind {
                // The enclosing scopes' intersection, then this one.
                let mut set = ScopeSet::cta(k.sig.threads);
                for p in stack {
                    if let StmtKind::Scope { scope, .. } = &p.kind {
                        match set.enter(scope) {
                            Some(n) => set = n,
                            None => return,
                        }
                    }
                }
                if set.enter(scope).is_none() {
                    let own = ScopeSet::cta(u32::MAX).enter(scope);
                    let inner = own.map_or_else(|| "no threads".into(), |o| o.describe());
                    errs.push(Diagnostic::new(
                        s.span,
                        ScopeError::EmptyScope {
                            inner,
                            outer: set.describe(),
                        },
                    ));
                }
                return;
            }
            let StmtKind::Op(op) = &s.kind else { return };
            if let Some(msg) = feature(op, k) {
                errs.push(Diagnostic::new(s.span, msg));
                return;
            }
            if let Some((n, what)) = need(op)
                && let Some(msg) = check(n, threads_of(stack, k.sig.threads), what)
            {
                errs.push(Diagnostic::new(s.span, msg));
            }
        });
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
