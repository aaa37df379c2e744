//! A forward walk of a kernel body in program order, shared by the rules of check-protocol
//! that follow a state through the body (bulk groups of TMA stores, the TMEM lifecycle,
//! pipeline stages) and by `check-wgmma-registers` (wgmma groups in flight).
//!
//! A rule is a [`Flow`]: a state, what each op does to it, and how two paths join. The walk
//! gives every op the state that may hold before it and the threads that run it (the
//! intersection of the enclosing scopes). Branches join; a loop body is walked from its entry
//! state joined with its own end state until that stops changing (the states of the rules
//! are finite, and the walk gives up after [`ROUNDS`] rounds), with reporting off, then once
//! more with reporting on; the state after a loop is the join of its entry (a `for` may run
//! zero times) and its end.
//!
//! Program order across scopes is an approximation of the real order (two roles run at the
//! same time): a rule must only report what is wrong in every order the threads can take, so
//! the rules report reads and writes that nothing orders, and never rely on an op of one
//! role having happened before an op of another.

use crate::arena::Handle;
use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Block, Kernel, Op, Span, Stmt, StmtKind, Var};
use crate::valid::scope::ScopeSet;

/// Rounds a loop body is walked towards its fixed point before the walk stops trying.
const ROUNDS: usize = 32;

/// Where a rule's diagnostics go: kept only while reporting, one per span.
pub(in crate::passes) struct Sink {
    report: bool,
    errs: Vec<Diagnostic>,
}

impl Sink {
    /// Reports `d` (ignored while a loop is walked towards its fixed point).
    pub(in crate::passes) fn push_diag(&mut self, d: Diagnostic) {
        if self.report && !self.errs.iter().any(|e| e.span == d.span) {
            self.errs.push(d);
        }
    }

    /// Reports `e` at `span` (ignored while a loop is walked towards its fixed point).
    pub(in crate::passes) fn push(&mut self, span: Span, e: impl Into<DiagKind>) {
        if self.report && !self.errs.iter().any(|d| d.span == span) {
            self.errs.push(Diagnostic::new(span, e));
        }
    }
}

/// One rule's state and transfer functions (see the module docs).
pub(in crate::passes) trait Flow {
    /// What may hold at a point of the body.
    type State: Clone + PartialEq;
    /// An op run by the threads `threads`.
    fn op(&mut self, op: &Op, span: Span, threads: ScopeSet, st: &mut Self::State, out: &mut Sink);
    /// The state after either of two paths.
    fn join(&self, a: &Self::State, b: &Self::State) -> Self::State;
    /// `var` takes a new value (a `let`, an assignment, a loop's induction variable, a
    /// pipeline stage).
    fn define(&mut self, _var: Handle<Var>, _st: &mut Self::State) {}
    /// The start of one branch of the `if` `s` (`taken`: its then-branch).
    fn branch(&mut self, _s: &Stmt, _taken: bool, _st: &mut Self::State) {}
    /// The start of one iteration of the `for` loop `s`.
    fn iterate(&mut self, _s: &Stmt, _st: &mut Self::State) {}
    /// The end of the kernel body.
    fn finish(&mut self, _st: &Self::State, _out: &mut Sink) {}
}

/// Walks `k`'s body with `flow` from the state `init`; returns its diagnostics.
pub(in crate::passes) fn run<F: Flow>(k: &Kernel, flow: &mut F, init: F::State) -> Vec<Diagnostic> {
    let mut w = Walker {
        flow,
        out: Sink {
            report: true,
            errs: Vec::new(),
        },
    };
    let mut st = init;
    w.block(&k.body, ScopeSet::cta(k.sig.threads), &mut st);
    w.flow.finish(&st, &mut w.out);
    w.out.errs
}

struct Walker<'f, F: Flow> {
    flow: &'f mut F,
    out: Sink,
}

impl<F: Flow> Walker<'_, F> {
    fn block(&mut self, b: &Block, threads: ScopeSet, st: &mut F::State) {
        for s in b {
            match &s.kind {
                StmtKind::Op(op) => {
                    self.flow.op(op, s.span, threads, st, &mut self.out);
                    if let Op::ProducerAcquire { stage, .. } | Op::ConsumerWait { stage, .. } = op {
                        self.flow.define(*stage, st);
                    }
                }
                StmtKind::Let { var, .. } | StmtKind::Assign { var, .. } => {
                    self.flow.define(*var, st)
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let mut t = st.clone();
                    self.flow.branch(s, true, &mut t);
                    self.block(then_body, threads, &mut t);
                    let mut e = st.clone();
                    self.flow.branch(s, false, &mut e);
                    self.block(else_body, threads, &mut e);
                    *st = self.flow.join(&t, &e);
                }
                StmtKind::Scope { scope, body } => {
                    // An empty intersection is `verify-scopes`' error; keep the inner set.
                    let inner = threads.enter(scope).unwrap_or(ScopeSet {
                        threads: threads.threads.enter(scope),
                        ..threads
                    });
                    self.block(body, inner, st)
                }
                StmtKind::For { var, body, .. } => self.looped(s, Some(*var), body, threads, st),
                StmtKind::Loop { body, .. } => self.looped(s, None, body, threads, st),
                StmtKind::Inst(_) => {}
            }
        }
    }

    /// One iteration of a loop body from `st`.
    fn round(
        &mut self,
        s: &Stmt,
        var: Option<Handle<Var>>,
        body: &Block,
        threads: ScopeSet,
        st: &mut F::State,
    ) {
        if let Some(v) = var {
            self.flow.iterate(s, st);
            self.flow.define(v, st);
        }
        self.block(body, threads, st);
    }

    fn looped(
        &mut self,
        s: &Stmt,
        var: Option<Handle<Var>>,
        body: &Block,
        threads: ScopeSet,
        st: &mut F::State,
    ) {
        let report = std::mem::replace(&mut self.out.report, false);
        let mut entry = st.clone();
        for _ in 0..ROUNDS {
            let mut end = entry.clone();
            self.round(s, var, body, threads, &mut end);
            let next = self.flow.join(&entry, &end);
            if next == entry {
                break;
            }
            entry = next;
        }
        self.out.report = report;
        let mut end = entry.clone();
        self.round(s, var, body, threads, &mut end);
        *st = self.flow.join(&entry, &end);
    }
}
