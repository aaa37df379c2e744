//! Tensor memory: the lifecycle of a TMEM buffer, and tcgen05 accumulators read in flight.
//!
//! - **Lifecycle.** A TMEM buffer's columns exist between `tcgen05::alloc` and
//!   `tcgen05::dealloc` (PTX ISA §9.7.16.7.1: the address `tcgen05.alloc` writes is the only
//!   way to name them, and "all of the Tensor Memory that was allocated … must be explicitly
//!   deallocated … before the kernel exits"). Followed through the body as the set of states a
//!   buffer may be in — never allocated, allocated, deallocated — an error is reported only
//!   where every path agrees: a use (an MMA into it, a `tcgen05.ld` copy out of it) where it is
//!   certainly not yet allocated or certainly deallocated, an alloc where it is certainly
//!   allocated, a dealloc where it is certainly not, and an allocation that is certainly still
//!   held at the kernel's end (reported at the alloc).
//! - **Accumulator in flight.** `tcgen05.mma` is asynchronous: its accumulator is complete
//!   when the mbarrier a later `tcgen05.commit` arrives on completes its phase (§9.7.16.10.9,
//!   §9.7.16.10.10 "the mbarrier … tracks the completion of all prior async tcgen05
//!   operations"). A copy out of the accumulator while an MMA into it has no commit after it,
//!   or before any wait on a barrier one of its commits signals (any index of the array; a
//!   pipeline's `consumer_wait` / `producer_acquire` wait on its full / empty barriers), is an
//!   error at the copy.
//!
//! - **A in flight.** An MMA that reads A from tensor memory (`[a-tmem]`, §9.7.16.10.9) reads
//!   it asynchronously too: a copy into that buffer (or into the base of a view of it) under
//!   the same conditions is an error at the copy — P overwritten while the PV MMA reads it.
//!
//! `tcgen05.ld` and its `tcgen05.wait::ld` are one op in the language (the TMEM epilogue
//! copy waits itself), so a register read before `wait::ld` cannot be written.

use super::ProtocolError;
use super::flow::{self, Flow, Sink};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{
    Barrier, Buffer, Completion, Expr, Kernel, Op, Space, Span, Stmt, StmtKind, TileRef, Var,
};
use crate::passes::walk::visit;
use crate::valid::scope::ScopeSet;

/// May be not yet allocated.
const NEVER: u8 = 1;
/// May be allocated.
const LIVE: u8 = 2;
/// May be deallocated.
const FREED: u8 = 4;

/// One TMEM buffer's possible states and the alloc that made it live.
#[derive(Clone, Debug, PartialEq)]
struct Life {
    buf: Handle<Buffer>,
    states: u8,
    alloc: Option<Span>,
    /// When it may be allocated on some paths only: the branch of an `if` (its span, and
    /// whether it is taken) on which it is.
    held: Option<(Span, bool)>,
}

/// Whether the CTA has relinquished its TMEM allocation permit (`tcgen05::relinquish`).
#[derive(Clone, Debug, PartialEq)]
struct Permit {
    /// `NEVER`: may still hold it; `FREED`: may have relinquished it.
    states: u8,
    /// The relinquish, once one is seen.
    at: Option<Span>,
    /// When it may be relinquished on some paths only: the branch that skips it.
    skipped: Option<(Span, bool)>,
}

/// An MMA into `acc` that may be in flight, with the barriers its commits signal so far (in
/// order: an error names the last, the commit after the final MMAs).
#[derive(Clone, Debug, PartialEq)]
struct Flight {
    acc: Handle<Buffer>,
    commits: Vec<Handle<Barrier>>,
    /// The MMA reads `acc` as its A operand (the `[a-tmem]` form) rather than writing it.
    a: bool,
}

#[derive(Clone, Debug, PartialEq)]
struct State {
    /// Every TMEM buffer of the kernel.
    life: Vec<Life>,
    flights: Vec<Flight>,
    permit: Permit,
    /// The branches of the `if`s that enclose this point, outermost first.
    branches: Vec<(Span, bool)>,
}

struct Tmem<'k> {
    k: &'k Kernel,
    /// The condition of each `if` a branch label names, when it has the same value wherever
    /// it is evaluated (it reads only variables defined once).
    conds: Vec<(Span, &'k Expr)>,
}

impl Tmem<'_> {
    fn tmem(&self, t: &TileRef) -> Option<Handle<Buffer>> {
        match t {
            // A view's uses are its base's: the same columns, allocated and written once.
            TileRef::Buf { buf, .. } if self.k.buffers[*buf].space == Space::Tmem => {
                Some(self.k.buffers[*buf].alias.unwrap_or(*buf))
            }
            _ => None,
        }
    }

    fn name(&self, b: Handle<Buffer>) -> String {
        self.k.buffers[b].name.clone()
    }

    /// The uses of TMEM buffers an op makes, with words for them.
    fn uses(&self, op: &Op) -> Vec<(Handle<Buffer>, &'static str)> {
        match op {
            // A in TMEM (the `[a-tmem]` form) is read by the MMA as the accumulator is.
            Op::Mma { acc, a, scale, .. } => {
                let scales = scale.iter().flat_map(|sc| {
                    [
                        (&sc.a, "a block-scaled MMA reading scale_a"),
                        (&sc.b, "a block-scaled MMA reading scale_b"),
                    ]
                });
                [(acc, "a tcgen05 MMA"), (a, "a tcgen05 MMA reading A")]
                    .into_iter()
                    .chain(scales)
                    .filter_map(|(t, w)| self.tmem(t).map(|b| (b, w)))
                    .collect()
            }
            Op::Copy { dst, src, .. } => [(src, "a copy out of it"), (dst, "a copy into it")]
                .into_iter()
                .filter_map(|(t, w)| self.tmem(t).map(|b| (b, w)))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn lifecycle(&self, op: &Op, span: Span, st: &mut State, out: &mut Sink) {
        for (buf, what) in self.uses(op) {
            let Some(l) = st.life.iter().find(|l| l.buf == buf) else {
                continue;
            };
            let name = self.name(buf);
            match l.states {
                NEVER => out.push(span, ProtocolError::TmemBeforeAlloc { buffer: name, what }),
                FREED => out.push(span, ProtocolError::TmemAfterDealloc { buffer: name, what }),
                _ => {}
            }
        }
        if let Op::TmemAlloc { buf, .. } | Op::TmemDealloc { buf, .. } = op
            && let Some(base) = self.k.buffers[*buf].alias
        {
            let (buffer, base) = (self.name(*buf), self.name(base));
            out.push(span, ProtocolError::TmemViewAlloc { buffer, base });
            return;
        }
        match op {
            Op::TmemAlloc { buf, .. } => {
                let Some(l) = st.life.iter_mut().find(|l| l.buf == *buf) else {
                    return;
                };
                if l.states == LIVE {
                    out.push(
                        span,
                        ProtocolError::TmemDoubleAlloc {
                            buffer: self.name(*buf),
                        },
                    );
                }
                l.states = LIVE;
                l.alloc = Some(span);
                l.held = None;
            }
            Op::TmemRelinquish { .. } => {
                st.permit = Permit {
                    states: FREED,
                    at: Some(span),
                    skipped: None,
                };
            }
            Op::TmemDealloc { buf, .. } => {
                let Some(l) = st.life.iter_mut().find(|l| l.buf == *buf) else {
                    return;
                };
                let state = match l.states {
                    NEVER => Some("never allocated"),
                    FREED => Some("already deallocated"),
                    _ => None,
                };
                if let Some(state) = state {
                    let buffer = self.name(*buf);
                    out.push(
                        span,
                        ProtocolError::TmemDeallocUnallocated { buffer, state },
                    );
                }
                l.states = FREED;
                l.held = None;
            }
            _ => {}
        }
    }

    fn in_flight(&self, op: &Op, span: Span, st: &mut State, out: &mut Sink) {
        match op {
            Op::Mma {
                acc,
                a,
                variant: Some(v),
                ..
            } if v.completion() == Completion::Tcgen05Commit => {
                let reads_a = self.tmem(a).map(|b| (b, true));
                for (b, a) in self
                    .tmem(acc)
                    .map(|b| (b, false))
                    .into_iter()
                    .chain(reads_a)
                {
                    let f = Flight {
                        acc: b,
                        commits: Vec::new(),
                        a,
                    };
                    if !st.flights.contains(&f) {
                        st.flights.push(f);
                    }
                }
            }
            Op::Tcgen05Commit { bar, .. } => {
                for f in &mut st.flights {
                    if !f.commits.contains(&bar.bar) {
                        f.commits.push(bar.bar);
                    }
                }
                dedup(&mut st.flights);
            }
            Op::MbarWait { bar, .. } => st.flights.retain(|f| !f.commits.contains(&bar.bar)),
            Op::ConsumerWait { pipe, .. } | Op::ProducerAcquire { pipe, .. } => {
                let p = &self.k.pipelines[*pipe];
                let bar = if matches!(op, Op::ConsumerWait { .. }) {
                    p.full
                } else {
                    p.empty
                };
                st.flights.retain(|f| !f.commits.contains(&bar));
            }
            Op::Copy { src, dst, .. } => {
                // A write into an A operand an MMA may still be reading.
                if let Some(b) = self.tmem(dst)
                    && let Some(f) = st.flights.iter().find(|f| f.acc == b && f.a)
                {
                    let own = match dst {
                        TileRef::Buf { buf, .. } if *buf != b => {
                            format!("`{}` (a view of `{}`)", self.name(*buf), self.name(b))
                        }
                        _ => format!("`{}`", self.name(b)),
                    };
                    let e = ProtocolError::TmemAWriteInFlight {
                        buffer: own,
                        until: match f.commits.last() {
                            None => "no `tcgen05::commit` after it signals its end".into(),
                            Some(bar) => format!(
                                "it is done only when `{}` completes, and nothing waits on it \
                                 before this write",
                                self.k.barriers[*bar].name
                            ),
                        },
                    };
                    out.push(span, e);
                }
                let Some(b) = self.tmem(src) else { return };
                let Some(f) = st.flights.iter().find(|f| f.acc == b && !f.a) else {
                    return;
                };
                let buffer = self.name(b);
                let e = match f.commits.last() {
                    None => ProtocolError::TmemReadBeforeCommit { buffer },
                    Some(bar) => ProtocolError::TmemReadBeforeWait {
                        buffer,
                        bar: self.k.barriers[*bar].name.clone(),
                    },
                };
                out.push(span, e);
            }
            _ => {}
        }
    }
}

/// Words for a branch of an `if`.
fn path(taken: bool) -> &'static str {
    if taken { "taken" } else { "not taken" }
}

fn dedup(fs: &mut Vec<Flight>) {
    let mut out: Vec<Flight> = Vec::new();
    for f in fs.drain(..) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    *fs = out;
}

impl Flow for Tmem<'_> {
    type State = State;

    fn op(&mut self, op: &Op, span: Span, _: ScopeSet, st: &mut State, out: &mut Sink) {
        self.lifecycle(op, span, st, out);
        self.in_flight(op, span, st, out);
    }

    fn join(&self, a: &State, b: &State) -> State {
        // The branch a state's path took last, where the other's did not.
        let (ta, tb) = (a.branches.last().copied(), b.branches.last().copied());
        let label =
            |in_a: bool, in_b: bool, x: Option<(Span, bool)>, y: Option<(Span, bool)>| match (
                in_a, in_b,
            ) {
                (true, false) => x.or(ta),
                (false, true) => y.or(tb),
                _ => x.or(y),
            };
        let life = a
            .life
            .iter()
            .zip(&b.life)
            .map(|(x, y)| Life {
                buf: x.buf,
                states: x.states | y.states,
                alloc: x.alloc.or(y.alloc),
                held: label(x.states & LIVE != 0, y.states & LIVE != 0, x.held, y.held),
            })
            .collect();
        let mut flights = a.flights.clone();
        flights.extend(b.flights.iter().cloned());
        dedup(&mut flights);
        let (p, q) = (&a.permit, &b.permit);
        let permit = Permit {
            states: p.states | q.states,
            at: p.at.or(q.at),
            skipped: label(
                p.states & NEVER != 0,
                q.states & NEVER != 0,
                p.skipped,
                q.skipped,
            ),
        };
        let common = a
            .branches
            .iter()
            .zip(&b.branches)
            .take_while(|(x, y)| x == y)
            .count();
        let branches = a.branches[..common].to_vec();
        State {
            life,
            flights,
            permit,
            branches,
        }
    }

    fn branch(&mut self, s: &Stmt, taken: bool, st: &mut State) {
        st.branches.push((s.span, taken));
        // A later `if` on the same condition takes the same branch: a state that arose only
        // on the other branch of the earlier one cannot reach this branch.
        let Some(cond) = self.conds.iter().find(|c| c.0 == s.span).map(|c| c.1) else {
            return;
        };
        if s.span == Span::NONE {
            return;
        }
        let other = |l: Option<(Span, bool)>| {
            l.is_some_and(|(at, t)| {
                t != taken && self.conds.iter().any(|c| c.0 == at && c.1 == cond)
            })
        };
        for l in &mut st.life {
            if other(l.held) {
                l.states &= !LIVE;
                l.held = None;
            }
        }
        if other(st.permit.skipped) {
            st.permit.states &= !NEVER;
            st.permit.skipped = None;
        }
    }

    fn finish(&mut self, st: &State, out: &mut Sink) {
        for l in &st.life {
            let Some(span) = l.alloc else { continue };
            let buffer = self.name(l.buf);
            if l.states == LIVE {
                out.push(span, ProtocolError::TmemLeak { buffer });
            } else if l.states & LIVE != 0
                && let Some((at, taken)) = l.held
            {
                let e = ProtocolError::TmemLeakOnPath {
                    buffer: buffer.clone(),
                    path: path(taken),
                };
                let note = format!(
                    "the path that keeps `{buffer}` allocated: where this `if` is {}",
                    path(taken)
                );
                out.push_diag(Diagnostic::new(span, e).with_note(at, note));
            }
        }
        let p = &st.permit;
        if p.states == NEVER | FREED
            && let (Some(span), Some((at, taken))) = (p.at, p.skipped)
        {
            let e = ProtocolError::RelinquishOnPath { path: path(taken) };
            let note = format!(
                "the path that skips `tcgen05::relinquish()`: where this `if` is {}",
                path(taken)
            );
            out.push_diag(Diagnostic::new(span, e).with_note(at, note));
        }
    }
}

/// The TMEM rules over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    if !k.buffers.iter().any(|(_, b)| b.space == Space::Tmem) {
        return Vec::new();
    }
    let init = State {
        life: k
            .buffers
            .iter()
            .filter(|(_, b)| b.space == Space::Tmem && b.alias.is_none())
            .map(|(buf, _)| Life {
                buf,
                states: NEVER,
                alloc: None,
                held: None,
            })
            .collect(),
        flights: Vec::new(),
        permit: Permit {
            states: NEVER,
            at: None,
            skipped: None,
        },
        branches: Vec::new(),
    };
    let mut defs: Vec<Handle<Var>> = Vec::new();
    let mut twice: Vec<Handle<Var>> = Vec::new();
    let mut conds = Vec::new();
    visit(&k.body, &mut |s, _| {
        let mut def = |v: Handle<Var>| {
            if defs.contains(&v) {
                twice.push(v);
            } else {
                defs.push(v);
            }
        };
        match &s.kind {
            StmtKind::Let { var, .. }
            | StmtKind::Assign { var, .. }
            | StmtKind::For { var, .. } => def(*var),
            StmtKind::If { cond, .. } => conds.push((s.span, cond)),
            _ => {}
        }
    });
    // Conditions reading a variable assigned again (or a loop's) may change between two `if`s.
    conds.retain(|(_, c)| {
        let mut vs = Vec::new();
        super::vars_of(c, &mut vs);
        vs.iter().all(|v| !twice.contains(v))
    });
    flow::run(k, &mut Tmem { k, conds }, init)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::DiagKind;
    use crate::parse::parse_module;

    fn kernel(body: &str) -> Kernel {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_100a
    target sm_100a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
  buffer @acc: tmem f32 (128, 128):(128, 1) swizzle none
{{
{body}}}
"
        );
        parse_module(&text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .kernels
            .remove(0)
    }

    fn kinds(body: &str) -> Vec<ProtocolError> {
        check(&kernel(body))
            .into_iter()
            .map(|d| match d.kind {
                DiagKind::Protocol(e) => e,
                other => panic!("{other}"),
            })
            .collect()
    }

    const ALLOC: &str = "  scope warp 0..=0 {\n    op tmem_alloc @acc\n  }\n";
    const DEALLOC: &str = "  scope warp 0..=0 {\n    op tmem_dealloc @acc\n  }\n";

    #[test]
    fn alloc_then_dealloc_is_accepted() {
        assert_eq!(kinds(&format!("{ALLOC}{DEALLOC}")), vec![]);
    }

    #[test]
    fn a_missing_or_repeated_dealloc_is_reported() {
        let leak = kinds(ALLOC);
        assert!(
            matches!(&leak[..], [ProtocolError::TmemLeak { .. }]),
            "{leak:?}"
        );
        let twice = kinds(&format!("{ALLOC}{DEALLOC}{DEALLOC}"));
        assert!(
            matches!(
                &twice[..],
                [ProtocolError::TmemDeallocUnallocated {
                    state: "already deallocated",
                    ..
                }]
            ),
            "{twice:?}"
        );
    }

    #[test]
    fn an_alloc_on_one_branch_only_is_not_judged() {
        let body = format!("  if 1:pred {{\n{ALLOC}  }}\n{DEALLOC}");
        assert_eq!(kinds(&body), vec![]);
    }

    #[test]
    fn a_dealloc_some_paths_skip_is_a_leak_on_that_path() {
        let skipped = kinds(&format!("{ALLOC}  if 1:pred {{\n{DEALLOC}  }}\n"));
        assert!(
            matches!(
                &skipped[..],
                [ProtocolError::TmemLeakOnPath {
                    path: "not taken",
                    ..
                }]
            ),
            "{skipped:?}"
        );
        let nested = kinds(&format!(
            "{ALLOC}  if 1:pred {{\n{DEALLOC}  }} else {{\n  if 0:pred {{\n{DEALLOC}  }}\n  }}\n"
        ));
        assert!(
            matches!(&nested[..], [ProtocolError::TmemLeakOnPath { .. }]),
            "{nested:?}"
        );
        let both = format!("{ALLOC}  if 1:pred {{\n{DEALLOC}  }} else {{\n{DEALLOC}  }}\n");
        assert_eq!(kinds(&both), vec![]);
    }

    #[test]
    fn a_relinquish_some_paths_skip_is_reported() {
        let give_up = "  scope warp 0..=0 {\n    op tmem_relinquish\n  }\n";
        let once = kinds(&format!("{ALLOC}  if 1:pred {{\n{give_up}  }}\n{DEALLOC}"));
        assert!(
            matches!(
                &once[..],
                [ProtocolError::RelinquishOnPath { path: "not taken" }]
            ),
            "{once:?}"
        );
        assert_eq!(kinds(&format!("{ALLOC}{give_up}{DEALLOC}")), vec![]);
        assert_eq!(kinds(&format!("{ALLOC}{DEALLOC}")), vec![]);
    }
}
