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
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Kernel, Op, StmtKind};
use crate::passes::walk::visit;
use crate::valid::scope::{Threads, threads_of};

/// The pass.
pub struct VerifyScopes;

#[derive(Clone, Copy)]
enum Need {
    Cta,
    Warps,
    Single,
    Warpgroup,
    Warp,
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
        Op::TmemRelinquish => (Need::Warp, "tcgen05::relinquish"),
        _ => return None,
    })
}

fn check(need: Need, t: Threads, what: &str) -> Option<String> {
    let (ok, want) = match need {
        Need::Cta => (
            matches!(t, Threads::Cta(_)),
            "every thread of the CTA: call it outside any scope",
        ),
        Need::Warps => (
            !matches!(t, Threads::Single | Threads::ElectPerWarp(_)),
            "whole warps (a named barrier counts threads by the warp)",
        ),
        Need::Single => (
            t.is_single(),
            "one thread: put it under `#[scope(warp = W, elect)]` or `#[scope(thread = T)]`",
        ),
        Need::Warpgroup => (
            t.is_whole_warpgroups(),
            "whole warpgroups: `#[scope(warpgroup = G)]` or `#[scope(warpgroups = A..B)]` (or a CTA of whole warpgroups)",
        ),
        Need::Warp => (
            t.is_one_warp(),
            "one whole warp: `#[scope(warp = W)]` without `elect`",
        ),
    };
    (!ok).then(|| {
        format!(
            "`{what}` runs here on {}, but it must run on {want}",
            t.describe()
        )
    })
}

fn feature(op: &Op, k: &Kernel) -> Option<String> {
    let t = k.target();
    let tc = matches!(op, Op::Mma { variant: Some(v), .. } if v == "tcgen05")
        || matches!(
            op,
            Op::Tcgen05Commit { .. }
                | Op::TmemAlloc { .. }
                | Op::TmemDealloc { .. }
                | Op::TmemRelinquish
                | Op::Tcgen05FenceBefore
                | Op::Tcgen05FenceAfter
        );
    let wg = matches!(op, Op::Mma { variant: Some(v), .. } if v == "wgmma")
        || matches!(
            op,
            Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } | Op::SetMaxNReg { .. }
        );
    if tc && !t.has_tcgen05() {
        return Some(format!(
            "tcgen05 is not available on {}: it needs sm_100a (use `wgmma` on sm_90a)",
            t.name()
        ));
    }
    if wg && !t.has_wgmma() {
        return Some(format!(
            "wgmma is not available on {}: it needs sm_90a (use `tcgen05` on sm_100a)",
            t.name()
        ));
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
