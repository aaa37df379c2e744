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
use crate::ir::{Completion, Expr, Kernel, Op, Span, Stmt, StmtKind};
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
pub(super) fn more_than(start: &Expr, end: &Expr, step: &Expr, n: u32) -> bool {
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
                } if v.completion() == Completion::TxBytes && r.bar == p.full && st[i] == STALE => {
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

/// The refill rule over `k`, and the straight-line prologue rule ([`prologue`]).
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    if k.pipelines.is_empty() {
        return Vec::new();
    }
    let init = vec![FRESH; k.pipelines.len()];
    let mut out = flow::run(k, &mut Refill { k }, init);
    let mut filled: Vec<Filled> = vec![Vec::new(); k.pipelines.len()];
    prologue(k, &k.body, &mut filled, &mut out);
    out
}

/// Loads outside loops that fill a pipeline's stages by constant index (`pipe.full(0)`, …,
/// the prologue before a steady-state loop): the same destination (buffer and constant
/// indices, e.g. `ring[0]`) loaded a second time for a stage with no `producer_acquire` (nor
/// `consumer_wait`, nor a wait on the empty barriers) of the pipeline in between is an error
/// at the second load (`PrologueOverfill`). Several loads into one stage (A and B, the chunks
/// of a tile) are one fill. `filled` holds, per pipeline, the (destination, stage) pairs
/// filled since the last acquire; both branches of an `if` count (union). A loop that touches
/// the pipeline forgets them (its trip count decides; loops are the refill rule's); run-time
/// indices are not judged.
type Filled = Vec<(crate::arena::Handle<crate::ir::Buffer>, Vec<i64>)>;

fn prologue(k: &Kernel, b: &crate::ir::Block, filled: &mut [Filled], out: &mut Vec<Diagnostic>) {
    for s in b {
        match &s.kind {
            StmtKind::Op(op) => {
                for (i, (_, p)) in k.pipelines.iter().enumerate() {
                    match op {
                        Op::ProducerAcquire { pipe, .. } | Op::ConsumerWait { pipe, .. }
                            if pipe.index() == i =>
                        {
                            filled[i].clear()
                        }
                        Op::MbarWait { bar, .. } if bar.bar == p.empty => filled[i].clear(),
                        Op::Copy {
                            dst: crate::ir::TileRef::Buf { buf, index },
                            bar: Some(r),
                            variant: Some(v),
                            ..
                        } if v.completion() == Completion::TxBytes && r.bar == p.full => {
                            let Expr::Imm(c, _) = r.index else { continue };
                            let Some(mut key) = index
                                .iter()
                                .map(|e| match e {
                                    Expr::Imm(x, _) => Some(*x),
                                    _ => None,
                                })
                                .collect::<Option<Vec<i64>>>()
                            else {
                                continue;
                            };
                            key.push(c);
                            if filled[i].iter().any(|(b, x)| b == buf && *x == key) {
                                let e = ProtocolError::PrologueOverfill {
                                    pipe: p.name.clone(),
                                    stages: p.stages,
                                    stage: c,
                                };
                                if !out.iter().any(|d| d.span == s.span) {
                                    out.push(Diagnostic::new(s.span, e));
                                }
                            } else {
                                filled[i].push((*buf, key));
                            }
                        }
                        _ => {}
                    }
                }
            }
            StmtKind::Scope { body, .. } => prologue(k, body, filled, out),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                let mut other = filled.to_vec();
                prologue(k, then_body, filled, out);
                prologue(k, else_body, &mut other, out);
                for (a, b) in filled.iter_mut().zip(other) {
                    for x in b {
                        if !a.contains(&x) {
                            a.push(x);
                        }
                    }
                }
            }
            StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => {
                for (i, (_, p)) in k.pipelines.iter().enumerate() {
                    let mut touches = false;
                    visit(body, &mut |t, _| {
                        if let StmtKind::Op(op) = &t.kind {
                            touches |= match op {
                                Op::ProducerAcquire { pipe, .. }
                                | Op::ConsumerWait { pipe, .. } => pipe.index() == i,
                                Op::MbarWait { bar, .. } => bar.bar == p.empty,
                                Op::Copy { bar: Some(r), .. } => r.bar == p.full,
                                _ => false,
                            };
                        }
                    });
                    if touches {
                        filled[i].clear();
                    }
                }
            }
            _ => {}
        }
    }
}
