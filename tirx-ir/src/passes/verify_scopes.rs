//! verify-scopes — checks every op against the threads its enclosing scopes select.
//!
//! Phase: Tile, first pass. Preconditions: the front end's kernel. Postconditions: unchanged
//! IR; every op whose scope is fixed by its instruction runs in that scope (for a forced
//! copy or mma, the variant's `issuer()`):
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
use crate::ir::{Expr, Issuer, Kernel, Op, StmtKind, TensorCore};
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
            Need::Warps => {
                "whole warps: a warp, warpgroup or CTA scope, not one thread or `elect` (named barriers count threads by the warp; `vote.sync` takes all 32 lanes)"
            }
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
    /// More threads execute a `named_barrier` than it counts.
    #[error(
        "`named_barrier({id}, {count})` runs here on {reach} threads ({range}), more than the {count} it counts: each phase completes after {count} arrivals, so the rest start the next phase. Count every thread that reaches it ({reach} or more)"
    )]
    NamedBarrierOverfull {
        /// Barrier id.
        id: i64,
        /// Its thread count.
        count: u32,
        /// Threads of the scope executing it.
        reach: u32,
        /// Those threads, in words.
        range: String,
    },
    /// Fewer threads can ever reach a named barrier id than its count.
    #[error(
        "`named_barrier({id}, {count})` counts {count} threads, but only {reach} threads ({ranges}) ever execute barrier {id} (syncing or arriving): it can never complete"
    )]
    NamedBarrierUnreachable {
        /// Barrier id.
        id: i64,
        /// Its thread count.
        count: u32,
        /// The threads of every scope that executes this id, in all.
        reach: u32,
        /// Those scopes' thread ranges, in words.
        ranges: String,
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

/// The scope a forced variant's instruction fixes, and the op's word for the message.
fn issued(issuer: Issuer, word: &'static str) -> (Need, &'static str) {
    match issuer {
        Issuer::Thread => (Need::Single, word),
        Issuer::Warpgroup => (Need::Warpgroup, word),
    }
}

fn need(op: &Op) -> Option<(Need, &'static str)> {
    Some(match op {
        Op::Copy {
            variant: Some(v), ..
        } => issued(v.issuer()?, v.word()),
        Op::Mma {
            variant: Some(v), ..
        } => issued(v.issuer(), v.word()),
        Op::Tcgen05Commit { .. } => (Need::Single, "tcgen05::commit"),
        Op::Tcgen05Shift { .. } => (Need::Single, "tcgen05::shift"),
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
        // `vote.sync` with a full member mask: all 32 lanes of each warp (PTX ISA §9.7.13
        // "vote.sync"); an `if` inside the scope may still split a warp, which the emulator
        // diagnoses at run time.
        Op::WarpVote { kind, .. } => (
            Need::Warps,
            match kind {
                crate::ir::VoteKind::Any => "warp_any",
                crate::ir::VoteKind::All => "warp_all",
                crate::ir::VoteKind::Ballot => "warp_ballot",
            },
        ),
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
    let core = match op {
        Op::Mma {
            variant: Some(v), ..
        } => Some(v.tensor_core()),
        _ => None,
    };
    let tc = core == Some(TensorCore::Tcgen05)
        || matches!(
            op,
            Op::Tcgen05Commit { .. }
                | Op::Tcgen05Shift { .. }
                | Op::TmemAlloc { .. }
                | Op::TmemDealloc { .. }
                | Op::TmemRelinquish { .. }
                | Op::Tcgen05FenceBefore
                | Op::Tcgen05FenceAfter
        );
    // `setmaxnreg` is not a wgmma feature: both targets have it (PTX ISA §9.7.19.6, target
    // notes: sm_90a, and sm_100a among the later arch-specific targets; ptxas -arch=sm_100a
    // assembles it to `USETMAXREG`), so it is checked for its scope only.
    let wg = core == Some(TensorCore::Wgmma)
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
        // Named barriers with a constant id: (id, count, threads [lo, hi), span) per op.
        let mut named: Vec<Named> = Vec::new();
        // A named barrier whose id is known only at run time may be any id: then who reaches
        // a constant id is not known either.
        let mut dynamic_id = false;
        visit(&k.body, &mut |s, stack| {
            if let StmtKind::Op(Op::NamedBarrier { id, threads, .. }) = &s.kind {
                // Under an `if` fewer threads than the scope's may run it.
                let guarded = stack.iter().any(|p| matches!(p.kind, StmtKind::If { .. }));
                match (id, scope_set(stack, k.sig.threads)) {
                    (Expr::Imm(id, _), Some(set)) => {
                        named.push((*id, *threads, (set.lo, set.hi), guarded, s.span));
                    }
                    (Expr::Imm(..), None) => {}
                    _ => dynamic_id = true,
                }
            }
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
        errs.extend(named_barrier_counts(&named, !dynamic_id));
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

/// The thread range the enclosing scopes of a statement leave (`None` when empty: reported
/// as an empty scope).
fn scope_set(stack: &[&crate::ir::Stmt], cta: u32) -> Option<ScopeSet> {
    let mut set = ScopeSet::cta(cta);
    for p in stack {
        if let StmtKind::Scope { scope, .. } = &p.kind {
            set = set.enter(scope)?;
        }
    }
    Some(set)
}

/// A named barrier with a constant id: id, count, the thread range of its scopes, whether an
/// `if` encloses it, its span.
type Named = (i64, u32, (u32, u32), bool, crate::ir::Span);

/// Each named barrier's count against the threads that execute it (issue #33 item 4): a
/// scope with more threads than the count over-arrives (unless an `if` may narrow it); all the scopes executing an id,
/// together, with fewer threads than a count never complete it (checked only when every
/// named barrier's id is a constant). The scopes are upper bounds (a condition inside one can
/// only lower who arrives), so both errors are certain.
fn named_barrier_counts(named: &[Named], all_ids_known: bool) -> Vec<Diagnostic> {
    let mut errs = Vec::new();
    for &(id, count, (lo, hi), guarded, span) in named {
        if !guarded && hi - lo > count {
            let range = ScopeSet {
                threads: Threads::Cta(hi - lo),
                lo,
                hi,
            }
            .describe();
            errs.push(Diagnostic::new(
                span,
                ScopeError::NamedBarrierOverfull {
                    id,
                    count,
                    reach: hi - lo,
                    range,
                },
            ));
        }
    }
    if !all_ids_known {
        return errs;
    }
    let mut ids: Vec<i64> = named.iter().map(|n| n.0).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let mut ranges: Vec<(u32, u32)> = named.iter().filter(|n| n.0 == id).map(|n| n.2).collect();
        ranges.sort_unstable();
        ranges.dedup();
        // The union's size.
        let (mut reach, mut end) = (0u32, 0u32);
        for &(lo, hi) in &ranges {
            let lo = lo.max(end);
            if hi > lo {
                reach += hi - lo;
                end = hi;
            }
        }
        let words: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}..{b}")).collect();
        for &(nid, count, _, _, span) in named {
            if nid == id && reach < count {
                errs.push(Diagnostic::new(
                    span,
                    ScopeError::NamedBarrierUnreachable {
                        id,
                        count,
                        reach,
                        ranges: format!("threads {}", words.join(", ")),
                    },
                ));
            }
        }
    }
    errs
}
