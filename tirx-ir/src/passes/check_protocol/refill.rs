//! Pipeline stages refilled without being acquired.
//!
//! A pipeline's producer may fill a stage only after the stage's consumers released it:
//! `producer_acquire(k)` waits on the stage's empty barrier (the first round passes at once)
//! — PTX ISA §9.7.13.15.16 (the wait), §9.7.9.25.5.1 (the TMA load that overwrites the stage).
//! A TMA load that signals a pipeline's full barrier, in a loop whose iterations take
//! different stages (the barrier's index reads something the loop changes) and that may run
//! more rounds than the pipeline has stages, reached in an iteration where no
//! `producer_acquire` of that pipeline (nor a wait on its empty barriers) came first — on
//! every path — is an error at the load: from the second round on, it overwrites a stage the
//! consumer may still read.
//!
//! Loads before any such loop (a prologue filling the first round) and loops that fill each
//! stage at most once are accepted; so are an acquire on some paths only, and a load after a
//! `consumer_wait` of the same pipeline (a consumer refilling the stage it holds: whether it
//! is the only reader is not known here).

use super::flow::{self, Flow, Sink};
use super::{ProtocolError, changed_in, invariant};
use crate::diag::Diagnostic;
use crate::ir::{Expr, Kernel, Op, Span, Stmt, StmtKind};
use crate::passes::walk::visit;
use crate::valid::scope::ScopeSet;

/// No round of the loop has begun since the stage was last taken, or ever.
const FRESH: u8 = 1;
/// Acquired in this iteration.
const HELD: u8 = 2;
/// A new round began and the stage was not acquired since.
const STALE: u8 = 4;

struct Refill<'k> {
    k: &'k Kernel,
}

/// Whether a loop with these bounds may run more than `n` iterations (unknown: yes).
fn more_than(start: &Expr, end: &Expr, step: &Expr, n: u32) -> bool {
    match (start, end, step) {
        (Expr::Imm(a, _), Expr::Imm(b, _), Expr::Imm(s, _)) if *s > 0 => {
            (b - a + s - 1) / s > n as i64
        }
        _ => true,
    }
}

impl Flow for Refill<'_> {
    /// Per pipeline (in arena order), the states its stages may be in.
    type State = Vec<u8>;

    fn op(&mut self, op: &Op, span: Span, _: ScopeSet, st: &mut Vec<u8>, out: &mut Sink) {
        for (i, (_, p)) in self.k.pipelines.iter().enumerate() {
            match op {
                // A consumer refilling the stage it holds itself is not judged either.
                Op::ProducerAcquire { pipe, .. } | Op::ConsumerWait { pipe, .. }
                    if pipe.index() == i =>
                {
                    st[i] = HELD
                }
                Op::MbarWait { bar, .. } if bar.bar == p.empty => st[i] = HELD,
                Op::Copy {
                    bar: Some(r),
                    variant: Some(v),
                    ..
                } if v == "tma_load" && r.bar == p.full && st[i] == STALE => {
                    let (pipe, stages) = (p.name.clone(), p.stages);
                    out.push(span, ProtocolError::RefillWithoutAcquire { pipe, stages });
                }
                _ => {}
            }
        }
    }

    fn join(&self, a: &Vec<u8>, b: &Vec<u8>) -> Vec<u8> {
        a.iter().zip(b).map(|(x, y)| x | y).collect()
    }

    fn iterate(&mut self, s: &Stmt, st: &mut Vec<u8>) {
        let StmtKind::For {
            var,
            start,
            end,
            step,
            body,
        } = &s.kind
        else {
            return;
        };
        let mut changed = vec![*var];
        changed_in(body, &mut changed);
        for (i, (_, p)) in self.k.pipelines.iter().enumerate() {
            if !more_than(start, end, step, p.stages) {
                continue;
            }
            let mut refills = false;
            visit(body, &mut |t, _| {
                if let StmtKind::Op(Op::Copy { bar: Some(r), .. }) = &t.kind
                    && r.bar == p.full
                    && !invariant(&r.index, &changed)
                {
                    refills = true;
                }
            });
            if refills {
                st[i] = STALE;
            }
        }
    }
}

/// The refill rule over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    if k.pipelines.is_empty() {
        return Vec::new();
    }
    let init = vec![FRESH; k.pipelines.len()];
    flow::run(k, &mut Refill { k }, init)
}
