//! The first rules of check-protocol, in one walk: phase parity in loops, proxy fences and
//! missing waits on TMA loads (see the module docs of `check_protocol`).
//!
//! - **Phase parity in loops.** A barrier that completes a phase in every iteration of a loop
//!   (a TMA load, arrive, expect-tx or `tcgen05::commit` signals it inside the loop) has a
//!   parity that alternates with the iterations; a wait inside the loop on a parity that does
//!   not change with the loop waits for a stale phase (it passes at once) or for one that never
//!   comes (it hangs) — PTX ISA §9.7.13.15.16 (`mbarrier.try_wait.parity` waits for the phase
//!   of the given parity). Likewise a pipeline waited or acquired with an iteration counter
//!   that does not change in the loop. "Does not change": every variable the expression reads
//!   is defined outside the loop and not assigned in it; anything else is accepted. A `while`
//!   loop (a `Loop` in this phase) is held to it like a `for`.
//! - **Proxy fences.** Shared memory written by threads (the `thread_load`, `shared_store`,
//!   `stmatrix`, `stmatrix_trans` and `reg_stage` copies: generic-proxy stores) and then read by
//!   the async proxy (a TMA store's source, a wgmma or tcgen05 MMA operand) needs
//!   `fence.proxy.async` between the two (PTX ISA §9.7.13.3 "membar/fence": the async proxy
//!   does not see generic writes otherwise). Tracked through the body in order: a fence clears
//!   every pending write; branches join by union; loops are walked until the set stops growing.
//! - **Missing wait.** A shared buffer a TMA load fills (signalling barrier `b`) read — by a
//!   register-tile copy, a TMA store or an MMA — before any wait on `b` (`b.wait(…)`, or
//!   `consumer_wait` on the pipeline whose full barrier `b` is) is an error: the bytes land
//!   when the barrier's phase completes (§9.7.9.25.5.1, `complete_tx`). Any wait on the
//!   barrier array counts (the stage it picks is a run-time value), in any scope. Likewise a
//!   cluster-launch-control response (`clc::try_cancel` into it, signalling `b`) decoded by
//!   `clc::is_canceled` / `clc::first_cta` before any wait on `b` (PTX ISA §9.7.13.17: the
//!   response is written asynchronously and only the mbarrier tells its completion).

use super::{ProtocolError, changed_in, invariant};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{
    BarRef, Block, Buffer, Completion, CopyVariant, Expr, Kernel, Op, Space, Span, StmtKind,
    TileRef, Var,
};

/// The barrier references a block signals (anywhere inside it).
fn signals(b: &Block, out: &mut Vec<BarRef>) {
    for s in b {
        match &s.kind {
            StmtKind::Op(
                Op::Copy { bar: Some(r), .. }
                | Op::MbarArrive { bar: r }
                | Op::MbarArriveExpectTx { bar: r, .. }
                | Op::Tcgen05Commit { bar: r, .. }
                | Op::ClcTryCancel { bar: r, .. },
            ) => out.push(r.clone()),
            StmtKind::For { body, .. }
            | StmtKind::Loop { body, .. }
            | StmtKind::Scope { body, .. } => signals(body, out),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                signals(then_body, out);
                signals(else_body, out);
            }
            _ => {}
        }
    }
}

/// Whether a loop with these bounds may run more than once (unknown bounds: yes).
pub(super) fn may_repeat(start: &Expr, end: &Expr, step: &Expr) -> bool {
    match (start, end, step) {
        (Expr::Imm(a, _), Expr::Imm(b, _), Expr::Imm(s, _)) if *s > 0 => b - a > *s,
        _ => true,
    }
}

struct Walk<'k> {
    k: &'k Kernel,
    errs: Vec<Diagnostic>,
    report: bool,
}

/// What may be pending at a point of the body.
#[derive(Clone, Debug, Default, PartialEq)]
struct Pending {
    /// Shared buffers written by threads and not yet fenced: (buffer, writing variant).
    unfenced: Vec<(Handle<Buffer>, CopyVariant)>,
    /// Shared buffers a TMA load fills, with the barrier it signals, not yet waited on.
    loading: Vec<(Handle<Buffer>, Handle<crate::ir::Barrier>)>,
}

fn join(a: &Pending, b: &Pending) -> Pending {
    let mut out = a.clone();
    for x in &b.unfenced {
        if !out.unfenced.iter().any(|y| y.0 == x.0) {
            out.unfenced.push(*x);
        }
    }
    for x in &b.loading {
        if !out.loading.contains(x) {
            out.loading.push(*x);
        }
    }
    out
}

impl Pending {
    fn len(&self) -> usize {
        self.unfenced.len() + self.loading.len()
    }
}

impl Walk<'_> {
    fn push(&mut self, span: Span, e: ProtocolError) {
        if self.report && !self.errs.iter().any(|d| d.span == span) {
            self.errs.push(Diagnostic::new(span, e));
        }
    }

    fn bar_name(&self, r: &BarRef) -> String {
        let name = &self.k.barriers[r.bar].name;
        match &r.index {
            Expr::Imm(0, _) if self.k.barriers[r.bar].count == 1 => name.clone(),
            Expr::Imm(i, _) => format!("{name}[{i}]"),
            _ => name.clone(),
        }
    }

    /// Rule 1 over one loop body: waits inside it (not in nested loops, which are checked on
    /// their own) against the barriers signalled anywhere in it.
    fn parity(&mut self, body: &Block, changed: &[Handle<Var>], signalled: &[BarRef]) {
        for s in body {
            match &s.kind {
                StmtKind::Op(Op::MbarWait { bar, parity }) => {
                    let same = signalled.iter().any(|r| {
                        r.bar == bar.bar
                            && (r.index == bar.index
                                || !matches!(
                                    (&r.index, &bar.index),
                                    (Expr::Imm(..), Expr::Imm(..))
                                ))
                    });
                    if same && invariant(parity, changed) && invariant(&bar.index, changed) {
                        let bar = self.bar_name(bar);
                        self.push(s.span, ProtocolError::FixedParity { bar });
                    }
                }
                StmtKind::Op(
                    op @ (Op::ConsumerWait { pipe, iter, .. }
                    | Op::ProducerAcquire { pipe, iter, .. }),
                ) if invariant(iter, changed) => {
                    let name = if matches!(op, Op::ConsumerWait { .. }) {
                        "consumer_wait"
                    } else {
                        "producer_acquire"
                    };
                    let pipe = self.k.pipelines[*pipe].name.clone();
                    self.push(s.span, ProtocolError::FixedIteration { op: name, pipe });
                }
                StmtKind::Scope { body, .. } => self.parity(body, changed, signalled),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.parity(then_body, changed, signalled);
                    self.parity(else_body, changed, signalled);
                }
                _ => {}
            }
        }
    }

    fn block(&mut self, b: &Block, p: &mut Pending) {
        for s in b {
            match &s.kind {
                StmtKind::Op(op) => self.op(op, s.span, p),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let mut t = p.clone();
                    self.block(then_body, &mut t);
                    let mut e = p.clone();
                    self.block(else_body, &mut e);
                    *p = join(&t, &e);
                }
                StmtKind::Scope { body, .. } => self.block(body, p),
                StmtKind::For {
                    start,
                    end,
                    step,
                    body,
                    var,
                } => {
                    if may_repeat(start, end, step) {
                        let mut changed = vec![*var];
                        changed_in(body, &mut changed);
                        let mut sig = Vec::new();
                        signals(body, &mut sig);
                        self.parity(body, &changed, &sig);
                    }
                    self.looped(body, p);
                }
                StmtKind::Loop { body, .. } => {
                    // In the Tile phase a `Loop` is the user's `while` (wait spin loops are
                    // made later, by lower-sync-ops): it may repeat, so the parity rule holds.
                    let mut changed = Vec::new();
                    changed_in(body, &mut changed);
                    let mut sig = Vec::new();
                    signals(body, &mut sig);
                    self.parity(body, &changed, &sig);
                    self.looped(body, p);
                }
                _ => {}
            }
        }
    }

    /// A loop body for the fence rule: walked from the entry state until the pending set
    /// stops growing (it only grows: at most one more round per buffer), then reported.
    fn looped(&mut self, body: &Block, p: &mut Pending) {
        let report = std::mem::replace(&mut self.report, false);
        let mut entry = p.clone();
        for _ in 0..=self.k.buffers.len() {
            let mut end = entry.clone();
            self.block(body, &mut end);
            let next = join(&entry, &end);
            if next.len() == entry.len() {
                break;
            }
            entry = next;
        }
        self.report = report;
        let mut end = entry.clone();
        self.block(body, &mut end);
        *p = join(&entry, &end);
    }

    fn op(&mut self, op: &Op, span: Span, p: &mut Pending) {
        // A shared view (`alias = base`) is its base's bytes: loads and reads through either
        // are one buffer here (the rules follow whole buffers, not their tiles).
        let shared = |t: &TileRef| match t {
            TileRef::Buf { buf, .. } if self.k.buffers[*buf].space == Space::Shared => {
                Some(self.k.buffers[*buf].alias.unwrap_or(*buf))
            }
            _ => None,
        };
        match op {
            Op::FenceProxyAsync => p.unfenced.clear(),
            // A wait on a barrier covers every load that signals it (any index: the stage a
            // wait picks is a run-time value; accepted rather than guessed).
            Op::MbarWait { bar, .. } => p.loading.retain(|x| x.1 != bar.bar),
            Op::ConsumerWait { pipe, .. } => {
                let full = self.k.pipelines[*pipe].full;
                p.loading.retain(|x| x.1 != full);
            }
            Op::Copy {
                dst,
                src,
                bar,
                variant: Some(v),
                ..
            } => {
                if let Some(b) = shared(src) {
                    self.loaded(span, b, p);
                    if v.completion() == Completion::BulkGroup {
                        self.read(span, b, "a TMA store", p);
                    }
                }
                if v.generic_shared_write()
                    && let Some(b) = shared(dst)
                    && !p.unfenced.iter().any(|x| x.0 == b)
                {
                    p.unfenced.push((b, *v));
                }
                if v.completion() == Completion::TxBytes
                    && let (Some(b), Some(r)) = (shared(dst), bar)
                    && !p.loading.contains(&(b, r.bar))
                {
                    p.loading.push((b, r.bar));
                }
            }
            Op::ClcTryCancel { resp, bar, .. } => {
                if let Some(b) = shared(resp)
                    && !p.loading.contains(&(b, bar.bar))
                {
                    p.loading.push((b, bar.bar));
                }
            }
            Op::ClcIsCanceled { resp, .. } | Op::ClcFirstCta { resp, .. } => {
                if let Some(b) = shared(resp)
                    && let Some((_, bar)) = p.loading.iter().find(|x| x.0 == b)
                {
                    let e = ProtocolError::ResponseBeforeWait {
                        buffer: self.k.buffers[b].name.clone(),
                        bar: self.k.barriers[*bar].name.clone(),
                    };
                    self.push(span, e);
                }
            }
            Op::Mma { a, b, .. } => {
                for t in [a, b] {
                    if let Some(buf) = shared(t) {
                        self.loaded(span, buf, p);
                        self.read(span, buf, "an MMA", p);
                    }
                }
            }
            _ => {}
        }
    }

    /// A read of `b` while a TMA load into it may not have landed.
    fn loaded(&mut self, span: Span, b: Handle<Buffer>, p: &Pending) {
        if let Some((_, bar)) = p.loading.iter().find(|x| x.0 == b) {
            let e = ProtocolError::ReadBeforeWait {
                buffer: self.k.buffers[b].name.clone(),
                bar: self.k.barriers[*bar].name.clone(),
            };
            self.push(span, e);
        }
    }

    fn read(&mut self, span: Span, b: Handle<Buffer>, reader: &'static str, p: &Pending) {
        if let Some((_, writer)) = p.unfenced.iter().find(|x| x.0 == b) {
            let e = ProtocolError::MissingProxyFence {
                buffer: self.k.buffers[b].name.clone(),
                writer: writer.name().to_string(),
                reader,
            };
            self.push(span, e);
        }
    }
}

/// The rules of the first walk (phase parity, proxy fences, missing waits) over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let mut w = Walk {
        k,
        errs: Vec::new(),
        report: true,
    };
    let mut p = Pending::default();
    w.block(&k.body, &mut p);
    w.errs
}
