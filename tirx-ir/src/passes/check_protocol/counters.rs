//! Pipeline counters advance by exactly one per use (issue #33 item 2).
//!
//! A pipeline derives the stage (`k % S`) and the phase parity (`(k / S) % 2`) of a
//! `consumer_wait(k)` / `producer_acquire(k)` from its counter, so each use of one role must
//! take the next value: a counter that skips a value takes a stage out of turn (its barrier's
//! phase is not the one waited for), one that repeats a value waits on a phase already passed
//! (PTX ISA §9.7.13.15.16: the wait returns at once on a stale phase). `order`'s
//! `FixedIteration` catches a counter the loop does not change; here, per loop that may
//! repeat and per pipeline and op, over the uses directly in its body (not in nested loops)
//! by one thread set (uses in disjoint scopes are separate roles, each its own sequence), with
//! counters of the form `a·v + c` for one variable `v`:
//!
//! - **Stride** (`CounterStride`): `v` advances by `d` per iteration (the loop's step, or one
//!   unconditional `v += d` in the body), so the counters advance by `a·d`; with `u` uses per
//!   iteration, none under an `if`, `a·d` must be `u`, and the uses' offsets `c` must be
//!   consecutive in program order (`k`, `k + 1`).
//! - **Skipped increment** (`CounterSkipped`): the body's one `v += d` is under an `if`, while
//!   the uses are not: the iterations that skip it take the same counter again.
//! - **Reset per outer iteration** (`CounterReset`): `v` is the loop's own induction variable
//!   (or a variable defined in the enclosing loop and advanced here) starting from the same
//!   value in every iteration of an enclosing loop that may repeat (a persistent kernel's tile
//!   loop): each tile starts the pipeline over at the first stage and parity 0 while the
//!   barriers continue — unless the inner loop's constant trip count is a multiple of `2·S`.
//!
//! Not decided (accepted): counters of two variables (`it + n`), uses under `if`s, the
//! counters' continuity from one loop to the next, and a role's uses spread over several
//! loops.

use super::order::may_repeat;
use super::{ProtocolError, changed_in, invariant};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{BinOp, Block, Expr, Kernel, Op, Pipeline, Stmt, StmtKind, Var};
use crate::passes::walk::visit;
use crate::valid::scope::ScopeSet;

/// `a·v + c` (`v`: `None` for a constant).
type Linear = (Option<Handle<Var>>, i64, i64);

fn linear(e: &Expr) -> Option<Linear> {
    Some(match e {
        Expr::Imm(c, _) => (None, 0, *c),
        Expr::Var(v) => (Some(*v), 1, 0),
        Expr::Bin(op, x, y) => {
            let ((vx, ax, cx), (vy, ay, cy)) = (linear(x)?, linear(y)?);
            match op {
                BinOp::Add | BinOp::Sub if vx.is_none() || vy.is_none() || vx == vy => {
                    let s = if *op == BinOp::Add { 1 } else { -1 };
                    (vx.or(vy), ax + s * ay, cx + s * cy)
                }
                BinOp::Mul if vx.is_none() => (vy, cx * ay, cx * cy),
                BinOp::Mul if vy.is_none() => (vx, cy * ax, cy * cx),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// One `consumer_wait` / `producer_acquire`, with where it stands.
struct Use<'k> {
    stmt: &'k Stmt,
    pipe: Handle<Pipeline>,
    op: &'static str,
    iter: &'k Expr,
    threads: ScopeSet,
    /// Enclosing statements, outermost first.
    stack: Vec<&'k Stmt>,
}

/// The innermost loop in `stack`, and the statements inside it.
fn innermost<'k>(stack: &[&'k Stmt]) -> Option<(usize, &'k Stmt)> {
    stack
        .iter()
        .enumerate()
        .rev()
        .find(|(_, s)| matches!(s.kind, StmtKind::For { .. } | StmtKind::Loop { .. }))
        .map(|(i, s)| (i, *s))
}

fn body(s: &Stmt) -> &Block {
    const EMPTY: &Block = &Vec::new();
    match &s.kind {
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => body,
        _ => EMPTY,
    }
}

fn threads_of(k: &Kernel, stack: &[&Stmt]) -> ScopeSet {
    let mut t = ScopeSet::cta(k.sig.threads);
    for s in stack {
        if let StmtKind::Scope { scope, .. } = &s.kind {
            t = t.enter(scope).unwrap_or(ScopeSet {
                threads: t.threads.enter(scope),
                ..t
            });
        }
    }
    t
}

/// How `v` advances per iteration of `l`: (`d`, the `if` that guards its one increment).
fn advance(l: &Stmt, v: Handle<Var>) -> Option<(i64, Option<&Stmt>)> {
    if let StmtKind::For { var, step, .. } = &l.kind
        && *var == v
    {
        return match step {
            Expr::Imm(s, _) => Some((*s, None)),
            _ => None,
        };
    }
    let mut incs = Vec::new();
    let mut other = false;
    visit(body(l), &mut |s, stack| match &s.kind {
        StmtKind::Assign { var, value } if *var == v => {
            let d = match linear(value) {
                Some((Some(w), 1, d)) if w == v => Some(d),
                _ => None,
            };
            let nested = stack
                .iter()
                .any(|t| matches!(t.kind, StmtKind::For { .. } | StmtKind::Loop { .. }));
            match d {
                Some(d) if !nested => incs.push((
                    d,
                    stack
                        .iter()
                        .rev()
                        .find(|t| matches!(t.kind, StmtKind::If { .. }))
                        .copied(),
                )),
                _ => other = true,
            }
        }
        StmtKind::Let { var, .. } | StmtKind::For { var, .. } if *var == v => other = true,
        _ => {}
    });
    match (other, incs.as_slice()) {
        (false, [one]) => Some(*one),
        _ => None,
    }
}

/// The uses of one loop body of one pipeline and op, by one role.
fn judge(k: &Kernel, l: &Stmt, uses: &[&Use], out: &mut Vec<Diagnostic>) {
    let Some(forms) = uses
        .iter()
        .map(|u| linear(u.iter))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let Some(v) = forms[0].0 else { return };
    if forms.iter().any(|f| f.0 != Some(v) || f.1 != forms[0].1) {
        return;
    }
    let a = forms[0].1;
    let Some((d, guard)) = advance(l, v) else {
        return;
    };
    let loop_at = stack_len(uses[0], l);
    let conditional = |u: &Use| {
        u.stack[loop_at + 1..]
            .iter()
            .any(|s| matches!(s.kind, StmtKind::If { .. }))
    };
    if uses.iter().any(|u| conditional(u)) {
        return;
    }
    let (first, u) = (uses[0], uses.len() as i64);
    let pipe = k.pipelines[first.pipe].name.clone();
    let var = k.vars[v].name.clone();
    if guard.is_some() {
        out.push(Diagnostic::new(
            first.stmt.span,
            ProtocolError::CounterSkipped {
                op: first.op,
                pipe,
                var,
            },
        ));
        return;
    }
    let consecutive = forms.windows(2).all(|w| w[1].2 == w[0].2 + 1);
    if a * d != u || !consecutive {
        out.push(Diagnostic::new(
            first.stmt.span,
            ProtocolError::CounterStride {
                op: first.op,
                pipe,
                var,
                advance: a * d,
                uses: u,
            },
        ));
    }
}

/// The index of `l` in `u`'s enclosing statements.
fn stack_len(u: &Use, l: &Stmt) -> usize {
    u.stack
        .iter()
        .position(|s| std::ptr::eq(*s, l))
        .unwrap_or(0)
}

/// The reset rule for one use in its innermost loop `l` (index `at` of its stack).
fn reset(k: &Kernel, u: &Use, at: usize, out: &mut Vec<Diagnostic>) {
    let Some((Some(v), a, _)) = linear(u.iter) else {
        return;
    };
    let Some((_, outer)) = innermost(&u.stack[..at]) else {
        return;
    };
    if a == 0 {
        return;
    }
    let repeats = match &outer.kind {
        StmtKind::For {
            start, end, step, ..
        } => may_repeat(start, end, step),
        _ => true,
    };
    let mut changed = Vec::new();
    if let StmtKind::For { var, .. } = &outer.kind {
        changed.push(*var);
    }
    changed_in(body(outer), &mut changed);
    let l = u.stack[at];
    let restarts = match &l.kind {
        StmtKind::For { var, start, .. } if *var == v => invariant(start, &changed),
        _ => {
            let mut init = None;
            visit(body(outer), &mut |s, _| {
                if let StmtKind::Let { var, value } = &s.kind
                    && *var == v
                {
                    init = Some(value);
                }
            });
            init.is_some_and(|e| invariant(e, &changed)) && advance(l, v).is_some()
        }
    };
    let stages = k.pipelines[u.pipe].stages as i64;
    let whole_rounds = match &l.kind {
        StmtKind::For {
            start: Expr::Imm(s, _),
            end: Expr::Imm(e, _),
            step: Expr::Imm(d, _),
            ..
        } if *d > 0 => ((e - s) / d * a.abs()) % (2 * stages) == 0,
        _ => false,
    };
    if repeats && restarts && !whole_rounds {
        out.push(Diagnostic::new(
            u.stmt.span,
            ProtocolError::CounterReset {
                op: u.op,
                pipe: k.pipelines[u.pipe].name.clone(),
                var: k.vars[v].name.clone(),
            },
        ));
    }
}

/// The counter rules over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    if k.pipelines.iter().next().is_none() {
        return Vec::new();
    }
    let mut uses = Vec::new();
    visit(&k.body, &mut |s, stack| {
        let (pipe, op, iter) = match &s.kind {
            StmtKind::Op(Op::ConsumerWait { pipe, iter, .. }) => (*pipe, "consumer_wait", iter),
            StmtKind::Op(Op::ProducerAcquire { pipe, iter, .. }) => {
                (*pipe, "producer_acquire", iter)
            }
            _ => return,
        };
        uses.push(Use {
            stmt: s,
            pipe,
            op,
            iter,
            threads: threads_of(k, stack),
            stack: stack.to_vec(),
        });
    });
    let mut out = Vec::new();
    let mut done: Vec<usize> = Vec::new();
    for (i, u) in uses.iter().enumerate() {
        let Some((at, l)) = innermost(&u.stack) else {
            continue;
        };
        reset(k, u, at, &mut out);
        if done.contains(&i) {
            continue;
        }
        if let StmtKind::For {
            start, end, step, ..
        } = &l.kind
            && !may_repeat(start, end, step)
        {
            continue;
        }
        // The uses of this pipeline and op directly in the same loop.
        let group: Vec<(usize, &Use)> = uses
            .iter()
            .enumerate()
            .filter(|(_, w)| {
                w.pipe == u.pipe
                    && w.op == u.op
                    && innermost(&w.stack).is_some_and(|(_, m)| std::ptr::eq(m, l))
            })
            .collect();
        done.extend(group.iter().map(|g| g.0));
        let same = group.iter().all(|(_, w)| w.threads == u.threads);
        let disjoint = group
            .iter()
            .enumerate()
            .all(|(x, (_, w))| group[x + 1..].iter().all(|(_, z)| w.hi_lo_disjoint(z)));
        if same {
            let g: Vec<&Use> = group.iter().map(|g| g.1).collect();
            judge(k, l, &g, &mut out);
        } else if disjoint {
            for (_, w) in &group {
                judge(k, l, &[w], &mut out);
            }
        }
    }
    out
}

impl Use<'_> {
    fn hi_lo_disjoint(&self, o: &Use) -> bool {
        self.threads.hi <= o.threads.lo || o.threads.hi <= self.threads.lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(i: usize) -> Expr {
        Expr::Var(Handle::from_index(i))
    }

    #[test]
    fn counters_are_read_as_one_variable_times_a_constant_plus_a_constant() {
        let two_k_plus_one = Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Mul, Expr::u32(2), var(3)),
            Expr::u32(1),
        );
        assert_eq!(
            linear(&two_k_plus_one),
            Some((Some(Handle::from_index(3)), 2, 1))
        );
        let minus_one = Expr::bin(BinOp::Sub, var(3), Expr::u32(1));
        assert_eq!(
            linear(&minus_one),
            Some((Some(Handle::from_index(3)), 1, -1))
        );
        // Two variables (`it + n`) are not judged.
        assert_eq!(linear(&Expr::bin(BinOp::Add, var(3), var(4))), None);
        assert_eq!(linear(&Expr::bin(BinOp::Rem, var(3), Expr::u32(2))), None);
    }
}
