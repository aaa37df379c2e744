//! verify-pair — the CTA pair's agreements (`tcgen05` `cta_group = 2`, PTX ISA §9.7.16.5).
//!
//! Phase: Tile, after verify-scopes. Preconditions: the front end's kernel (its `cta_group = 2`
//! already checked against the cluster size at the user's token). Postconditions: unchanged
//! IR, and:
//! - a kernel that issues a pair MMA commits only with `tcgen05::commit(bar, cta_group = 2)`:
//!   a commit tracks every prior MMA of its thread, and only the pair form multicasts the
//!   arrival to both CTAs' barriers — a `cta_group::1` commit would leave the peer's barrier
//!   waiting for ever (the emulator's deadlock);
//! - a TMEM buffer is allocated and deallocated with the same `cta_group` (§9.7.16.7.1: the
//!   pair's columns are released by both CTAs together), and the accumulator of a pair MMA is
//!   allocated for the pair;
//! - a copy into tensor memory (`tcgen05::cp`) has its buffer's `cta_group`: the pair's
//!   `tcgen05.cp.cta_group::2` fills both CTAs' columns of a pair allocation (§9.7.16.9.2),
//!   a one-CTA copy a one-CTA allocation;
//! - the pair releases its columns only after the peer's last read: a
//!   `tcgen05::dealloc(buf, cta_group = 2)` is preceded by a `cluster_sync()` with nothing but
//!   tcgen05 fences, `relinquish` and other deallocs between them (a scope holding the dealloc
//!   counts from where the scope stands). A CTA barrier (`sync_threads()`, as a one-CTA kernel's
//!   release has) orders only this CTA's reads: the peer's epilogue may still be reading its rows
//!   of the pair's columns, or the even CTA's MMAs writing them (§9.7.16.7.1).
//!
//! The issuing CTA is not checked here: the pair's `tcgen05.mma` and `tcgen05.commit` are
//! lowered under `%cluster_ctarank & 1 == 0`, so only the even CTA's thread of the user's
//! one-thread scope issues them (verify-scopes checks that scope).

use super::Pass;
use crate::arena::Handle;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Buffer, Kernel, Op, Space, Span, Stmt, StmtKind, TileRef};
use crate::passes::walk::visit;

/// The pass.
pub struct VerifyPair;

/// A broken agreement of the CTA pair.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    /// A one-CTA commit in a kernel that issues the pair's MMAs.
    #[error(
        "this kernel issues `tcgen05::mma(..., cta_group = 2)`, so this commit must be `tcgen05::commit(bar, cta_group = 2)`: only the pair's commit multicasts its arrival to the barrier in both CTAs of the pair (a one-CTA commit leaves the peer's barrier waiting for ever)"
    )]
    CommitNotMulticast,
    /// The pair's dealloc without a cluster barrier right before it.
    #[error(
        "the pair's columns of `{buffer}` are released here while the peer CTA may still use them (its epilogue reading its rows, the even CTA's MMAs writing them): write `tcgen05::fence_before(); cluster_sync();` right before this dealloc, after every TMEM access of both CTAs (a CTA barrier such as `sync_threads()` orders this CTA's accesses only)"
    )]
    ReleaseBeforePeer {
        /// The TMEM buffer.
        buffer: String,
    },
    /// `alloc` and `dealloc` (or a pair MMA) of one TMEM buffer disagree on `cta_group`.
    #[error(
        "`{buffer}` is allocated with cta_group = {alloc}, but this {what} uses cta_group = {here}: alloc, dealloc, the pair's MMAs and the copies into one TMEM buffer agree (PTX ISA §9.7.16.7.1; a `tcgen05.cp.cta_group::2` writes both CTAs' columns of the pair's allocation, §9.7.16.9.2)"
    )]
    GroupDisagrees {
        /// The TMEM buffer.
        buffer: String,
        /// The `cta_group` of its `tcgen05::alloc`.
        alloc: u32,
        /// The op that disagrees.
        what: &'static str,
        /// Its `cta_group`.
        here: u32,
    },
}

fn group(pair: bool) -> u32 {
    if pair { 2 } else { 1 }
}

/// The TMEM buffer a tile reference names (a view's base).
fn tmem_base(k: &Kernel, t: &TileRef) -> Option<Handle<Buffer>> {
    match t {
        TileRef::Buf { buf, .. } => Some(k.buffers[*buf].alias.unwrap_or(*buf)),
        _ => None,
    }
}

impl Pass for VerifyPair {
    fn name(&self) -> &'static str {
        "verify-pair"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        // First the allocations' groups and whether any MMA is the pair's.
        let mut allocs: Vec<(Handle<Buffer>, bool)> = Vec::new();
        let mut pair_mma = false;
        visit(&k.body, &mut |s, _| match &s.kind {
            StmtKind::Op(Op::TmemAlloc { buf, pair }) => allocs.push((*buf, *pair)),
            StmtKind::Op(Op::Mma { pair: true, .. }) => pair_mma = true,
            _ => {}
        });
        let mut errs = Vec::new();
        let mut disagree = |buf: Handle<Buffer>, what, pair: bool, span: Span| {
            if let Some(&(_, a)) = allocs.iter().find(|(b, _)| *b == buf)
                && a != pair
            {
                let e = PairError::GroupDisagrees {
                    buffer: k.buffers[buf].name.clone(),
                    alloc: group(a),
                    what,
                    here: group(pair),
                };
                errs.push(Diagnostic::new(span, e));
            }
        };
        let mut commits = Vec::new();
        visit(&k.body, &mut |s, _| match &s.kind {
            StmtKind::Op(Op::TmemDealloc { buf, pair }) => {
                disagree(*buf, "tcgen05::dealloc", *pair, s.span);
            }
            // The accumulator and, in the `[a-tmem]` form, A: both the pair's TMEM.
            StmtKind::Op(Op::Mma {
                acc, a, pair: true, ..
            }) => {
                for t in [acc, a] {
                    if let Some(b) = tmem_base(k, t) {
                        disagree(b, "tcgen05::mma", true, s.span);
                    }
                }
            }
            // A shared → TMEM copy is `tcgen05.cp`, whose `cta_group` is its buffer's.
            StmtKind::Op(Op::Copy {
                dst,
                src: TileRef::Buf { buf: sb, .. },
                pair,
                ..
            }) if k.buffers[*sb].space == Space::Shared => {
                if let Some(b) = tmem_base(k, dst) {
                    disagree(b, "tcgen05::cp", *pair, s.span);
                }
            }
            StmtKind::Op(Op::Tcgen05Commit { pair: false, .. }) if pair_mma => {
                commits.push(Diagnostic::new(s.span, PairError::CommitNotMulticast));
            }
            _ => {}
        });
        errs.extend(commits);
        release_after_peer(k, &k.body, true, &mut errs);
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

/// Statements that may stand between the cluster barrier and the pair's dealloc: tcgen05
/// fences, `relinquish`, deallocs, and scopes of only those.
fn trivial(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Op(
            Op::Tcgen05FenceBefore
            | Op::Tcgen05FenceAfter
            | Op::TmemRelinquish { .. }
            | Op::TmemDealloc { .. },
        ) => true,
        StmtKind::Scope { body, .. } => body.iter().all(trivial),
        _ => false,
    }
}

/// Reports every pair dealloc in `block` not preceded by a cluster barrier (see the module
/// docs); `ok`: whether the block starts right after one.
fn release_after_peer(k: &Kernel, block: &[Stmt], ok: bool, errs: &mut Diagnostics) {
    let mut ok = ok;
    for s in block {
        match &s.kind {
            StmtKind::Op(Op::ClusterSync) => ok = true,
            StmtKind::Op(Op::TmemDealloc { buf, pair: true }) if !ok => {
                errs.push(Diagnostic::new(
                    s.span,
                    PairError::ReleaseBeforePeer {
                        buffer: k.buffers[*buf].name.clone(),
                    },
                ));
            }
            StmtKind::Scope { body, .. } => {
                release_after_peer(k, body, ok, errs);
                ok = ok && trivial(s);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                release_after_peer(k, then_body, false, errs);
                release_after_peer(k, else_body, false, errs);
                ok = false;
            }
            StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => {
                release_after_peer(k, body, false, errs);
                ok = false;
            }
            _ => ok = ok && trivial(s),
        }
    }
}
