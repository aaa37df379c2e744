//! A pipeline's writers against the arrivals on its full barrier.
//!
//! `pipeline::<S>(writers = w)` declares that each phase of a stage's full barrier expects
//! the producer's one `arrive.expect_tx` (derived from its TMA loads) and `w` plain arrivals,
//! `pipe.full(s).arrive()`, from the threads that store part of the stage (each releasing its
//! own stores, PTX ISA §9.7.13.15.13 `mbarrier.arrive`); the barrier's count is `1 + w`
//! (§9.7.13.15.1). The rules, each deciding only what the body proves:
//!
//! - **Undeclared writers.** `pipe.full(s).arrive()` on a pipeline with `writers = 0`: the
//!   barrier expects the producer's arrival alone, so any such arrival completes a phase
//!   early (before the bytes land; the producer's own arrival then counts toward the next
//!   phase). Rejected at the arrive, whatever runs it.
//! - **Missing writers.** `writers = w > 0` and no `pipe.full(s).arrive()` anywhere: every
//!   phase waits for `w` arrivals that never come. Rejected at the declaration.
//! - **Writer count.** The threads that run one arrive site are counted from its enclosing
//!   scopes (`warp = 1` is 32, `elect` one a warp, `leader` one a warpgroup) and `if`s whose
//!   condition is a function of the thread index alone (`tid % 32 == 0`, `lane_id < 8`,
//!   `warp_id == 1`), evaluated for every thread of the CTA. A site whose stage is the same
//!   for all its threads arrives that many times on one phase, so more threads than `w` are
//!   rejected at the arrive (also under an `if` the threads agree on: whenever it runs, it
//!   over-arrives). Fewer are rejected only when every site is *exact* — counted, under no
//!   `if` on anything else, with its stage taken by a `producer_acquire` in the same loop (so
//!   it arrives once per use of the stage) — and no combination of the sites' counts makes
//!   `w`: a phase is filled by some of the sites (`fp8_block.rs`: three warps of 32, each
//!   filling every third K block, `writers = 32`; or two warps filling each stage together,
//!   `writers = 64`), which the compiler does not track further.
//!
//! Not decided (accepted here; the emulator checks them when the kernel runs there): an
//! arrive under an `if` on data or on a loop counter (some phases may get it, some not), on
//! a thread-varying stage, or after `elect` under a lane-dependent `if` (which lane `elect.sync`
//! picks is not known); sites that are exact but whose combination per phase depends on the
//! loop structure (a site filling every phase and another every third).

use super::ProtocolError;
use super::counts::{constant, eval_tid, innermost_loop, thread_varying, varies};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{Expr, Kernel, Op, Pipeline, Scope, Span, Stmt, StmtKind, Var};
use crate::passes::walk::visit;
use std::collections::BTreeSet;

/// One `pipe.full(s).arrive()` of a pipeline.
struct Site {
    span: Span,
    /// Threads that run it, when they can be counted (all of them on one phase).
    threads: Option<u32>,
    /// Under an `if` on something other than the thread index: it may not run in a phase.
    conditional: bool,
    /// Its stage is taken by a `producer_acquire` in its own innermost loop: once per use.
    once: bool,
}

/// Who runs a statement.
enum Reach {
    /// Nobody: it is in the branch of an `if` on a constant that is never taken (a config's
    /// constant switching a feature off).
    Never,
    /// This many threads, and whether an `if` on something other than the thread index
    /// encloses it.
    Counted(u32, bool),
    /// Threads that cannot be counted.
    Unknown,
}

/// Who runs a statement under `stack`: its scopes intersected, and its `if`s on the thread
/// index evaluated for every thread of the CTA.
fn reach(k: &Kernel, stack: &[&Stmt], s: &Stmt, varying: &[Handle<Var>]) -> Reach {
    let mut on: Vec<bool> = vec![true; k.sig.threads as usize];
    let mut elected = false;
    let mut conditional = false;
    for (i, st) in stack.iter().enumerate() {
        let child: &Stmt = stack.get(i + 1).copied().unwrap_or(s);
        match &st.kind {
            StmtKind::Scope { scope, .. } => match scope {
                Scope::Cta => {}
                Scope::Warpgroup(a, b) => keep(&mut on, |t| (*a..=*b).contains(&(t / 128))),
                Scope::Warp(a, b) => keep(&mut on, |t| (*a..=*b).contains(&(t / 32))),
                Scope::Thread(n) => keep(&mut on, |t| t == *n),
                Scope::Leader if !elected => keep(&mut on, |t| t % 128 == 0),
                Scope::Elect if !elected => {
                    // One thread of each warp that has any (which one is unknown: the first
                    // stands for it, so later lane-dependent `if`s are not counted).
                    let mut seen = BTreeSet::new();
                    for (t, v) in on.iter_mut().enumerate() {
                        *v = *v && seen.insert(t / 32);
                    }
                    elected = true;
                }
                _ => return Reach::Unknown,
            },
            StmtKind::If {
                cond, then_body, ..
            } => {
                let taken = then_body.iter().any(|x| std::ptr::eq(x, child));
                if let Some(c) = constant(k, cond) {
                    if (c != 0) != taken {
                        return Reach::Never;
                    }
                } else if !varies(cond, varying) {
                    conditional = true;
                } else if elected {
                    return Reach::Unknown;
                } else {
                    for (t, v) in on.iter_mut().enumerate() {
                        if *v {
                            let Some(c) = eval_tid(k, cond, t as i64) else {
                                return Reach::Unknown;
                            };
                            *v = (c != 0) == taken;
                        }
                    }
                }
            }
            StmtKind::For {
                start, end, step, ..
            } if [start, end, step].iter().any(|e| varies(e, varying)) => return Reach::Unknown,
            _ => {}
        }
    }
    Reach::Counted(on.iter().filter(|v| **v).count() as u32, conditional)
}

fn keep(on: &mut [bool], f: impl Fn(u32) -> bool) {
    for (t, v) in on.iter_mut().enumerate() {
        *v = *v && f(t as u32);
    }
}

/// Whether `stage` is a variable a `producer_acquire` of `pipe` defines in the loop `lp`.
fn acquired_in(k: &Kernel, pipe: Handle<Pipeline>, stage: &Expr, lp: Option<*const Stmt>) -> bool {
    let Expr::Var(v) = stage else { return false };
    let mut found = false;
    visit(&k.body, &mut |s, stack| {
        if let StmtKind::Op(Op::ProducerAcquire { pipe: q, stage, .. }) = &s.kind {
            found |= *q == pipe && stage == v && innermost_loop(stack) == lp;
        }
    });
    found
}

/// The arrive sites of `pipe`'s full barrier.
fn sites(k: &Kernel, pipe: Handle<Pipeline>, varying: &[Handle<Var>]) -> Vec<Site> {
    let full = k.pipelines[pipe].full;
    let mut out = Vec::new();
    visit(&k.body, &mut |s, stack| {
        let StmtKind::Op(Op::MbarArrive { bar }) = &s.kind else {
            return;
        };
        if bar.bar != full {
            return;
        }
        let counted = match reach(k, stack, s, varying) {
            Reach::Never | Reach::Counted(0, _) => return,
            Reach::Counted(..) if varies(&bar.index, varying) => None,
            Reach::Counted(n, conditional) => Some((n, conditional)),
            Reach::Unknown => None,
        };
        out.push(Site {
            span: s.span,
            threads: counted.map(|c| c.0),
            conditional: counted.is_none_or(|c| c.1),
            once: acquired_in(k, pipe, &bar.index, innermost_loop(stack)),
        });
    });
    out
}

/// Whether some non-empty combination of `counts` sums to `w`.
fn reachable(counts: &[u32], w: u32) -> bool {
    let mut sums: BTreeSet<u32> = BTreeSet::new();
    for &c in counts {
        let next: Vec<u32> = sums.iter().map(|s| s + c).filter(|s| *s <= w).collect();
        sums.extend(next);
        if c <= w {
            sums.insert(c);
        }
    }
    sums.contains(&w)
}

/// What a phase gets from the arrive sites, against `writers`.
#[derive(Clone, Copy)]
enum Miscount {
    /// One site over-arrives.
    TooMany,
    /// All of them together under-arrive.
    TooFew,
    /// Neither, but no combination of them is exact.
    NoCombination,
}

fn count_error(pipe: &str, writers: u32, sites: String, m: Miscount, fix: String) -> ProtocolError {
    ProtocolError::WriterCount {
        pipe: pipe.to_string(),
        writers,
        sites,
        consequence: match m {
            Miscount::TooMany => {
                "the phase completes before the producer's bytes and the other writers' stores are in, so a consumer's `consumer_wait` returns on a stage still being filled (the extra arrivals count toward the next phase)"
            }
            Miscount::TooFew => "no phase ever completes, and the consumers' `consumer_wait` hangs",
            Miscount::NoCombination => {
                "a phase gets other than its arrivals: with fewer it never completes and the consumers' `consumer_wait` hangs, with more it completes before the stage is filled"
            }
        },
        fix,
    }
}

/// The writer rules for one pipeline (see the module docs).
fn check_pipe(
    k: &Kernel,
    pipe: Handle<Pipeline>,
    varying: &[Handle<Var>],
    errs: &mut Vec<Diagnostic>,
) {
    let p = &k.pipelines[pipe];
    let writers = k.barriers[p.full].arrivals.saturating_sub(1);
    let sites = sites(k, pipe, varying);
    if writers == 0 {
        for s in &sites {
            let (by, n) = match s.threads {
                Some(n) => (format!(" from {n} thread(s)"), n.to_string()),
                None => (String::new(), "N".to_string()),
            };
            let err = ProtocolError::WritersUndeclared {
                pipe: p.name.clone(),
                by,
                n,
            };
            errs.push(Diagnostic::new(s.span, err));
        }
        return;
    }
    if sites.is_empty() {
        let err = ProtocolError::WritersMissing {
            pipe: p.name.clone(),
            writers,
        };
        errs.push(Diagnostic::new(p.span, err));
        return;
    }
    for s in &sites {
        if let Some(n) = s.threads.filter(|n| *n > writers) {
            let words =
                format!("this arrive runs on {n} thread(s), each an arrival on the same phase");
            let fix = format!(
                "Declare `writers = {n}`, or arrive from {writers} thread(s) (narrow the scope or the `if` around the arrive)"
            );
            errs.push(Diagnostic::new(
                s.span,
                count_error(&p.name, writers, words, Miscount::TooMany, fix),
            ));
            return;
        }
    }
    let exact: Option<Vec<u32>> = sites
        .iter()
        .map(|s| s.threads.filter(|_| s.once && !s.conditional))
        .collect();
    let Some(counts) = exact else { return };
    if reachable(&counts, writers) {
        return;
    }
    let m = if counts.iter().sum::<u32>() < writers {
        Miscount::TooFew
    } else {
        Miscount::NoCombination
    };
    let (words, fix) = if let [n] = counts[..] {
        (
            format!(
                "this arrive, once per use of a stage (its `producer_acquire` is in the same loop), runs on {n} thread(s)"
            ),
            format!("Declare `writers = {n}`, or arrive from all {writers} writer thread(s)"),
        )
    } else {
        let list: Vec<String> = counts.iter().map(u32::to_string).collect();
        (
            format!(
                "its {} arrive sites, each once per use of a stage, run on {} thread(s), and no combination of them makes {writers}",
                counts.len(),
                list.join(", ")
            ),
            "Declare `writers` as the threads that arrive on one phase, or arrive from that many"
                .to_string(),
        )
    };
    errs.push(Diagnostic::new(
        sites[0].span,
        count_error(&p.name, writers, words, m, fix),
    ));
}

/// The writer rules over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let mut errs = Vec::new();
    let varying = thread_varying(k);
    for (pipe, _) in k.pipelines.iter() {
        check_pipe(k, pipe, &varying, &mut errs);
    }
    errs
}
