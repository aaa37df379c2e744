//! carry-stage-counters — a loop that steps through a pipeline carries the stage index and
//! the phase bit from one iteration to the next instead of dividing its counter each time.
//!
//! Phase: Tile. Preconditions: check-protocol has read the pipeline ops (it reasons on their
//! iteration counters), memory is planned. Postconditions: every pipeline wait whose counter
//! advances by exactly one per iteration of its innermost loop, with a stage count S that is
//! not a power of two, has become a `let stage = st` and an `mbarrier` wait on the carried
//! stage `st` and parity `ph`; a release of stage `(counter) % m` inside such a loop reads a
//! carried `st` too. Every other pipeline op is left for lower-tile-ops, which derives stage
//! and parity by division (`iter % S`, `(iter / S) & 1`).
//!
//! Why: for S not a power of two the division is a multiply-high/shift/multiply/subtract
//! sequence per K step, on the path from the counter to the full barrier's `try_wait` (ncu
//! of the FP8 GEMMs beside cuBLAS, #29). A power of two divides by a mask and a shift, cheaper
//! than the carried update, so those loops are left as they are.
//!
//! When a counter expression `e` (any `u32` sum of terms) counts as stepping by one:
//! - it holds the loop variable of a `for` with step 1 once, with a plus sign, and every other
//!   term is invariant in the loop (written nowhere in its body): it advances at the end of
//!   the body; its value on entry is `e` with the loop variable replaced by the start;
//! - or it holds once, with a plus sign, a variable whose only write in the loop body is a
//!   statement `v = v + 1` directly in the body (not under an `if`), every other term being
//!   invariant: it advances right after that statement; its value on entry is `e` itself.
//!   This is the persistent kernels' counter that runs on across tiles (`let mut it = …` before
//!   the K loop, `it += 1` in it), whatever it started from.
//!
//! In both forms the terms' constants plus a constant loop start must not be negative, so the
//! `u32` sum never wraps below zero between entry and use (a wait under `if n > 0` on
//! `n - 1` in a loop from 0 keeps the division: its entry value would wrap). Counters are
//! assumed to stay below 2³² (the division's parity assumes it too). A wait in a nested loop
//! belongs to that loop; a loop whose counter advances by another amount, or conditionally,
//! keeps the division.
//!
//! Before / after (S = 3), the consumer K loop of a persistent GEMM:
//! ```text
//! for %24 = 0 to %2 step 1 {              let %30 = %23 % 3         // once per tile
//!   op consumer_wait @pipe iter %23 -> %25  let %31 = %23 / 3 & 1
//!   …                                     for %24 = 0 to %2 step 1 {
//!   %23 = %23 + 1                           let %25 = %30
//! }                                         op mbar_wait @pipe.full[%25] parity %31
//!                                           …
//!                                           %23 = %23 + 1
//!                                           %30 = %30 + 1
//!                                           if %30 == 3 { %30 = 0; %31 = %31 ^ 1 }
//!                                         }
//! ```

use super::Pass;
use super::lower_tile_ops::pipeline_wait;
use super::walk::{Rewriter, rewrite_block_with, rewrite_body_with, visit};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::ir::{BinOp, Block, CmpOp, Expr, Kernel, Op, Operand, ScalarType, Stmt, StmtKind, Var};
use std::collections::HashMap;

/// The pass.
pub struct CarryStageCounters;

impl Pass for CarryStageCounters {
    fn name(&self) -> &'static str {
        "carry-stage-counters"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        rewrite_body_with(k, &mut Loops)
    }
}

/// Visits loops innermost first (a statement's nested blocks are rewritten before it).
struct Loops;

impl Rewriter for Loops {
    fn exit_stmt(&mut self, k: &mut Kernel, s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        carry(k, s)
    }
}

/// Where a counter advances by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Advance {
    /// At the end of the loop body (the loop variable's step).
    End,
    /// Right after the body's statement at this index (`v = v + 1`).
    After(usize),
}

/// A carried `value % modulus` (and `(value / modulus) & 1` where a wait needs it).
struct Counter {
    value: Expr,
    modulus: u32,
    entry: Expr,
    advance: Advance,
    stage: Option<Handle<Var>>,
    phase: Option<Handle<Var>>,
    needs_phase: bool,
}

/// What the loop's body writes, and how the loop steps.
struct LoopFacts {
    /// The `for` loop's variable, when its step is 1 (with its start).
    unit_var: Option<(Handle<Var>, Expr)>,
    /// The `for` loop's variable, any step.
    loop_var: Option<Handle<Var>>,
    /// Writes of each variable anywhere in the body.
    writes: HashMap<Handle<Var>, usize>,
    /// Variables incremented by one directly in the body (and written nowhere else in it),
    /// with the index of that statement.
    increments: HashMap<Handle<Var>, usize>,
}

fn carry(k: &mut Kernel, mut s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
    let (facts, body) = match &mut s.kind {
        StmtKind::For {
            var,
            start,
            step,
            body,
            ..
        } => {
            let unit = matches!(step, Expr::Imm(1, _)).then(|| (*var, start.clone()));
            (LoopFacts::of(k, body, Some(*var), unit), body)
        }
        StmtKind::Loop { body, .. } => (LoopFacts::of(k, body, None, None), body),
        _ => return Ok(vec![s]),
    };
    let mut counters = find_counters(k, body, &facts);
    if counters.is_empty() {
        return Ok(vec![s]);
    }
    let mut entry = Vec::new();
    for c in &mut counters {
        let st = k.new_var("stage", ScalarType::U32);
        let m = Expr::u32(c.modulus);
        entry.push(Stmt::new(StmtKind::Let {
            var: st,
            value: Expr::bin(BinOp::Rem, c.entry.clone(), m.clone()),
        }));
        c.stage = Some(st);
        if c.needs_phase {
            let ph = k.new_var("phase", ScalarType::U32);
            let div = Expr::bin(BinOp::Div, c.entry.clone(), m);
            entry.push(Stmt::new(StmtKind::Let {
                var: ph,
                value: Expr::bin(BinOp::And, div, Expr::u32(1)),
            }));
            c.phase = Some(ph);
        }
    }
    insert_advances(body, &counters);
    let taken = std::mem::take(body);
    *body = rewrite_block_with(
        k,
        taken,
        &mut Sites {
            counters: &counters,
        },
    )?;
    entry.push(s);
    Ok(entry)
}

impl LoopFacts {
    fn of(
        k: &Kernel,
        body: &Block,
        loop_var: Option<Handle<Var>>,
        unit_var: Option<(Handle<Var>, Expr)>,
    ) -> LoopFacts {
        let mut writes: HashMap<Handle<Var>, usize> = HashMap::new();
        visit(body, &mut |s, _| {
            for v in written(s) {
                *writes.entry(v).or_default() += 1;
            }
        });
        let mut increments = HashMap::new();
        for (i, s) in body.iter().enumerate() {
            if let StmtKind::Assign { var, value } = &s.kind
                && k.vars[*var].ty == ScalarType::U32
                && writes.get(var) == Some(&1)
                && Some(*var) != loop_var
                && is_increment(*var, value)
            {
                increments.insert(*var, i);
            }
        }
        let unit_var = unit_var.filter(|(v, _)| !writes.contains_key(v));
        LoopFacts {
            unit_var,
            loop_var,
            writes,
            increments,
        }
    }

    /// How `e` advances by one per iteration, and its value on entry to the loop.
    fn classify(&self, k: &Kernel, e: &Expr) -> Option<(Expr, Advance)> {
        let mut terms = Vec::new();
        linear(e, true, &mut terms);
        let mut konst: i64 = 0;
        let mut advance = None;
        for (plus, t) in terms {
            match t {
                Expr::Imm(c, ScalarType::U32) => konst += if plus { *c } else { -*c },
                Expr::Var(v) if self.unit_var.as_ref().is_some_and(|(u, _)| u == v) => {
                    if !plus || advance.is_some() {
                        return None;
                    }
                    advance = Some(Advance::End);
                }
                Expr::Var(v) if self.increments.contains_key(v) => {
                    if !plus || advance.is_some() {
                        return None;
                    }
                    advance = Some(Advance::After(self.increments[v]));
                }
                t => {
                    if !plus || !self.invariant(k, t) {
                        return None;
                    }
                }
            }
        }
        let advance = advance?;
        let entry = match (advance, &self.unit_var) {
            (Advance::End, Some((v, start))) => {
                if let Expr::Imm(c, _) = start {
                    konst += c;
                }
                substitute(e, *v, start)
            }
            _ => e.clone(),
        };
        (konst >= 0).then_some((entry, advance))
    }

    /// Whether a `u32` term has one value throughout the loop.
    fn invariant(&self, k: &Kernel, t: &Expr) -> bool {
        let mut ok = true;
        vars_of(t, &mut |v| {
            ok &= k.vars[v].ty == ScalarType::U32
                && Some(v) != self.loop_var
                && !self.writes.contains_key(&v)
        });
        ok && matches!(
            t,
            Expr::Var(_) | Expr::Dim(_) | Expr::Special(_) | Expr::Bin(..)
        )
    }
}

/// `v + 1` or `1 + v`.
fn is_increment(v: Handle<Var>, value: &Expr) -> bool {
    let Expr::Bin(BinOp::Add, a, b) = value else {
        return false;
    };
    matches!(
        (a.as_ref(), b.as_ref()),
        (Expr::Var(x), Expr::Imm(1, _)) | (Expr::Imm(1, _), Expr::Var(x)) if *x == v
    )
}

/// The variables a statement (not its nested blocks) writes.
fn written(s: &Stmt) -> Vec<Handle<Var>> {
    match &s.kind {
        StmtKind::Let { var, .. } | StmtKind::Assign { var, .. } | StmtKind::For { var, .. } => {
            vec![*var]
        }
        StmtKind::Op(
            Op::ProducerAcquire { stage, .. }
            | Op::ConsumerWait { stage, .. }
            | Op::LoadScalar { dst: stage, .. }
            | Op::ClcIsCanceled { dst: stage, .. },
        ) => vec![*stage],
        StmtKind::Op(Op::ClcFirstCta { dsts, .. }) => dsts.clone(),
        StmtKind::Inst(i) => i
            .dsts
            .iter()
            .filter_map(|d| match d {
                Operand::Reg(v) | Operand::NotReg(v) => Some(*v),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The terms of a sum of `+` and `-`, with their signs.
fn linear<'e>(e: &'e Expr, plus: bool, out: &mut Vec<(bool, &'e Expr)>) {
    match e {
        Expr::Bin(BinOp::Add, a, b) => {
            linear(a, plus, out);
            linear(b, plus, out);
        }
        Expr::Bin(BinOp::Sub, a, b) => {
            linear(a, plus, out);
            linear(b, !plus, out);
        }
        _ => out.push((plus, e)),
    }
}

fn vars_of(e: &Expr, f: &mut dyn FnMut(Handle<Var>)) {
    match e {
        Expr::Var(v) => f(*v),
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::AndP(a, b) => {
            vars_of(a, f);
            vars_of(b, f);
        }
        Expr::Not(a) => vars_of(a, f),
        Expr::Imm(..) | Expr::Dim(_) | Expr::Special(_) => {}
    }
}

fn substitute(e: &Expr, v: Handle<Var>, by: &Expr) -> Expr {
    match e {
        Expr::Var(x) if *x == v => by.clone(),
        Expr::Bin(op, a, b) => Expr::bin(*op, substitute(a, v, by), substitute(b, v, by)),
        Expr::Cmp(op, a, b) => Expr::cmp(*op, substitute(a, v, by), substitute(b, v, by)),
        Expr::Not(a) => Expr::Not(Box::new(substitute(a, v, by))),
        Expr::AndP(a, b) => Expr::AndP(
            Box::new(substitute(a, v, by)),
            Box::new(substitute(b, v, by)),
        ),
        _ => e.clone(),
    }
}

/// A site's counter: a pipeline wait's iteration (with its parity) or a release's `x % m`.
fn site(k: &Kernel, op: &Op) -> Option<(Expr, u32, bool)> {
    match op {
        Op::ProducerAcquire { pipe, iter, .. } | Op::ConsumerWait { pipe, iter, .. } => {
            Some((iter.clone(), k.pipelines[*pipe].stages, true))
        }
        Op::ConsumerRelease {
            stage: Expr::Bin(BinOp::Rem, x, m),
            ..
        } => match m.as_ref() {
            Expr::Imm(m, ScalarType::U32) if *m > 0 => Some((x.as_ref().clone(), *m as u32, false)),
            _ => None,
        },
        _ => None,
    }
    .filter(|(_, m, _)| !m.is_power_of_two())
}

/// The counters the ops of `body` (outside nested loops) can carry.
fn find_counters(k: &Kernel, body: &Block, facts: &LoopFacts) -> Vec<Counter> {
    let mut counters: Vec<Counter> = Vec::new();
    visit(body, &mut |s, stack| {
        let StmtKind::Op(op) = &s.kind else { return };
        let nested = stack
            .iter()
            .any(|e| matches!(e.kind, StmtKind::For { .. } | StmtKind::Loop { .. }));
        let Some((value, modulus, phase)) = site(k, op).filter(|_| !nested) else {
            return;
        };
        if let Some(c) = counters
            .iter_mut()
            .find(|c| c.value == value && c.modulus == modulus)
        {
            c.needs_phase |= phase;
        } else if let Some((entry, advance)) = facts.classify(k, &value) {
            counters.push(Counter {
                value,
                modulus,
                entry,
                advance,
                stage: None,
                phase: None,
                needs_phase: phase,
            });
        }
    });
    counters
}

/// `st = st + 1; if st == m { st = 0; ph = ph ^ 1 }`, after each counter's advance.
fn insert_advances(body: &mut Block, counters: &[Counter]) {
    let mut at: Vec<(usize, Vec<Stmt>)> = Vec::new();
    for c in counters {
        let (Some(st), m) = (c.stage, Expr::u32(c.modulus)) else {
            continue;
        };
        let mut wrap = vec![Stmt::new(StmtKind::Assign {
            var: st,
            value: Expr::u32(0),
        })];
        if let Some(ph) = c.phase {
            wrap.push(Stmt::new(StmtKind::Assign {
                var: ph,
                value: Expr::bin(BinOp::Xor, Expr::Var(ph), Expr::u32(1)),
            }));
        }
        let stmts = vec![
            Stmt::new(StmtKind::Assign {
                var: st,
                value: Expr::bin(BinOp::Add, Expr::Var(st), Expr::u32(1)),
            }),
            Stmt::new(StmtKind::If {
                cond: Expr::cmp(CmpOp::Eq, Expr::Var(st), m),
                then_body: wrap,
                else_body: Vec::new(),
            }),
        ];
        let i = match c.advance {
            Advance::End => body.len(),
            Advance::After(i) => i + 1,
        };
        at.push((i, stmts));
    }
    // From the back, so the earlier indices stay valid (a stable sort of the reversed list
    // keeps the counters' order at one point).
    at.reverse();
    at.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
    for (i, stmts) in at {
        body.splice(i..i, stmts);
    }
}

/// Rewrites the sites of the carried counters (outside nested loops).
struct Sites<'c> {
    counters: &'c [Counter],
}

impl Sites<'_> {
    fn find(&self, value: &Expr, modulus: u32) -> Option<&Counter> {
        self.counters
            .iter()
            .find(|c| c.value == *value && c.modulus == modulus)
    }
}

impl Rewriter for Sites<'_> {
    fn descend(&mut self, _k: &Kernel, s: &Stmt) -> bool {
        !matches!(s.kind, StmtKind::For { .. } | StmtKind::Loop { .. })
    }
    fn exit_stmt(&mut self, k: &mut Kernel, mut s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        let StmtKind::Op(op) = &mut s.kind else {
            return Ok(vec![s]);
        };
        let Some((value, modulus, _)) = site(k, op) else {
            return Ok(vec![s]);
        };
        let Some(c) = self.find(&value, modulus) else {
            return Ok(vec![s]);
        };
        let (Some(st), span) = (c.stage, s.span) else {
            return Ok(vec![s]);
        };
        let producer = matches!(op, Op::ProducerAcquire { .. });
        match op {
            Op::ProducerAcquire { pipe, stage, .. } | Op::ConsumerWait { pipe, stage, .. } => {
                let Some(ph) = c.phase else {
                    return Ok(vec![s]);
                };
                let kinds = pipeline_wait(k, *pipe, producer, *stage, Expr::Var(st), Expr::Var(ph));
                Ok(kinds.into_iter().map(|kind| Stmt::at(kind, span)).collect())
            }
            Op::ConsumerRelease { stage, .. } => {
                *stage = Expr::Var(st);
                Ok(vec![s])
            }
            _ => Ok(vec![s]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_module;

    /// A kernel of one thread over a pipeline of `stages`, `%0` the trip count, `%1` a loop
    /// variable, `%2` a counter, `%3` a stage: the pass's output, printed.
    fn carried(stages: u32, body: &str) -> String {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 32
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  var %0: u32 \"n\"
  var %1: u32 \"j\"
  var %2: u32 \"it\"
  var %3: u32 \"s\"
  var %4: u32 \"k\"
  barrier @pipe.full: count {stages} arrivals 1
  barrier @pipe.empty: count {stages} arrivals 1
  pipeline @pipe: stages {stages} full @pipe.full empty @pipe.empty
{{
  let %0 = dim K
  let %2 = dim M
{body}}}
"
        );
        let mut k = parse_module(&text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .kernels
            .remove(0);
        CarryStageCounters.run(&mut k).expect("runs");
        k.to_string()
    }

    /// Whether the pass carried the loop's wait (no pipeline op left, one wrap test).
    fn is_carried(out: &str) -> bool {
        !out.contains("consumer_wait") && out.contains("mbar_wait") && out.contains("== 3:u32")
    }

    #[test]
    fn a_loop_from_one_waiting_on_the_previous_iteration_is_carried() {
        let out = carried(
            3,
            "  for %1 = 1:u32 to %0 step 1:u32 {
    op consumer_wait @pipe iter %1 - 1:u32 -> %3
    op consumer_release @pipe stage (%1 + 2:u32) % 3:u32
  }
",
        );
        assert!(is_carried(&out), "{out}");
        // Entry values from the start: (1 − 1) % 3 and (1 + 2) % 3, once, before the loop.
        assert!(out.contains("(1:u32 - 1:u32) % 3:u32"), "{out}");
        assert!(out.contains("(1:u32 + 2:u32) % 3:u32"), "{out}");
        assert!(
            !out.contains("stage (%1"),
            "the release is carried too:\n{out}"
        );
    }

    #[test]
    fn a_counter_running_on_across_an_outer_loop_is_carried_from_its_value() {
        let out = carried(
            3,
            "  for %1 = 0:u32 to 4:u32 step 1:u32 {
    for %4 = 0:u32 to %0 step 1:u32 {
      op producer_acquire @pipe iter %2 -> %3
      %2 = %2 + 1:u32
    }
  }
",
        );
        assert!(!out.contains("producer_acquire"), "{out}");
        assert!(
            out.contains("%2 % 3:u32") && out.contains("%2 / 3:u32 & 1:u32"),
            "{out}"
        );
    }

    #[test]
    fn counters_that_do_not_step_by_one_every_iteration_keep_the_division() {
        let kept = [
            // Under `if n > 0` from 0: the entry value would wrap below zero.
            "  for %1 = 0:u32 to %0 step 1:u32 {
    if %1 > 0:u32 {
      op consumer_wait @pipe iter %1 - 1:u32 -> %3
    }
  }
",
            // An increment under an `if`.
            "  for %1 = 0:u32 to %0 step 1:u32 {
    op consumer_wait @pipe iter %2 -> %3
    if %1 > 0:u32 {
      %2 = %2 + 1:u32
    }
  }
",
            // A step of two.
            "  for %1 = 0:u32 to %0 step 1:u32 {
    op consumer_wait @pipe iter %2 -> %3
    %2 = %2 + 2:u32
  }
",
            "  for %1 = 0:u32 to %0 step 2:u32 {
    op consumer_wait @pipe iter %1 -> %3
  }
",
            // A wait outside any loop.
            "  op consumer_wait @pipe iter %2 -> %3
",
        ];
        for body in kept {
            let out = carried(3, body);
            assert!(out.contains("consumer_wait"), "{body}\n{out}");
            assert!(!out.contains("== 3:u32"), "{body}\n{out}");
        }
        // A power of two divides by a mask and a shift: left as it is.
        let out = carried(
            4,
            "  for %1 = 0:u32 to %0 step 1:u32 {
    op consumer_wait @pipe iter %1 -> %3
  }
",
        );
        assert!(out.contains("consumer_wait"), "{out}");
    }
}
