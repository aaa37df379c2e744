//! Phase parity on every path (issue #33 item 1): a `bar.wait(p)` whose parity is a constant
//! of the body, against the phases of `bar` signalled before it.
//!
//! An mbarrier counts completed phases; `mbarrier.try_wait.parity p` returns once the phase of
//! parity `p` has completed, that is while the current (open) phase's parity is not `p`
//! (PTX ISA §9.7.13.15.16). So on a fresh barrier `wait(1)` returns at once and `wait(0)` waits
//! for the first phase; after `h` phases signalled, the wait for the last of them is on parity
//! `(h − 1) % 2`, and one on `h % 2` returns at once while phase `h − 1` is still open (a stale
//! phase) or, once it completed, waits for a phase `h` that nothing before it signals.
//!
//! Three forms are decided, each only when it holds on every path:
//!
//! - **Wrong parity** ([`ProtocolError::ParityMismatch`]): the arrivals on `bar[i]` (a constant
//!   index) signalled before the wait — `arrive()` and `expect_tx` (each of its threads),
//!   `tcgen05::commit` (one arrival; the pair's commit arrives in both CTAs of the pair, so it
//!   counts in each), the expect-tx `derive-signals` put next to TMA loads and
//!   cluster-launch-control requests — are followed as the set of possible totals along every
//!   path; when each total is a whole number `h ≥ 1` of phases (`mbarrier(arrivals = a)`) with
//!   `h % 2 == p`, the wait is wrong on every path. Program order is the real order only
//!   within one thread, so a wait is judged only when one thread runs it and every op that
//!   signals the barrier (in any scope); a barrier that another role signals (a producer warp,
//!   an MMA warp) is followed by the emulator.
//! - **Never signalled** ([`ProtocolError::WaitNeverSignalled`]): `wait(0)` on a barrier that no
//!   op of the kernel signals (at that constant index, or at any run-time one).
//! - **Signalled only behind the wait** ([`ProtocolError::WaitBeforeOwnSignal`]): `wait(0)` on
//!   a barrier every signal of which comes after the wait in the wait's own block: the threads
//!   that would complete phase 0 wait for it first.
//!
//! Pipelines' barriers are left to the counter rules (`order`); waits in loops whose parity the
//! loop does not change are `order`'s `FixedParity`. A loop's arrivals are joined with its
//! entry (it may run zero times), so a wait after a loop that signals is judged only when the
//! loop cannot change its answer.

use super::ProtocolError;
use super::counts::{constant, count};
use super::flow::{self, Flow, Sink};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{BarRef, Barrier, Block, Expr, Kernel, Op, Span, Stmt, StmtKind};
use crate::passes::walk::{children, visit};
use crate::valid::scope::{ScopeSet, Threads};

/// Barriers of larger arrays are not followed per element.
const MAX_ELEMENTS: u32 = 64;
/// Totals kept per element before it is taken as unknown.
const MAX_TOTALS: usize = 16;

/// The threads an op runs on, for deciding whether one thread runs two ops.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Runs {
    /// Every thread of `[lo, hi)`.
    All(u32, u32),
    /// Some of the threads of `[lo, hi)` (one elected per warp, a leader): the same ones for
    /// the same set.
    Picked(ScopeSet),
}

impl Runs {
    fn of(t: ScopeSet) -> Runs {
        if count(t.threads) == t.hi - t.lo {
            Runs::All(t.lo, t.hi)
        } else {
            Runs::Picked(t)
        }
    }

    /// Threads both run, when it is sure some are.
    fn meet(self, other: Runs) -> Option<Runs> {
        match (self, other) {
            (Runs::All(a, b), Runs::All(c, d)) => {
                (a.max(c) < b.min(d)).then_some(Runs::All(a.max(c), b.min(d)))
            }
            (Runs::All(a, b), Runs::Picked(t)) | (Runs::Picked(t), Runs::All(a, b)) => {
                (a <= t.lo && t.hi <= b).then_some(Runs::Picked(t))
            }
            (Runs::Picked(s), Runs::Picked(t)) => (s == t).then_some(Runs::Picked(s)),
        }
    }
}

/// One op that signals a barrier.
struct Site<'k> {
    bar: &'k BarRef,
    threads: ScopeSet,
    /// Arrivals per execution (`None`: not known).
    arrivals: Option<u32>,
    /// What signals, in words.
    what: &'static str,
    /// The statement and its enclosing ones, outermost first.
    chain: Vec<&'k Stmt>,
}

/// The arrivals an op adds to the barrier it names, per execution, and words for it (`None`:
/// it signals without arriving — a TMA load's bytes, a request's response).
fn signal(op: &Op, threads: ScopeSet) -> Option<(&BarRef, Option<u32>, &'static str)> {
    // A leader of several warpgroups is several threads the thread set does not count.
    let n = || {
        (!matches!(threads.threads, Threads::Single) || threads.hi - threads.lo <= 128)
            .then(|| count(threads.threads))
    };
    Some(match op {
        Op::MbarArrive { bar } => (bar, n(), "`arrive()`"),
        Op::MbarArriveExpectTx { bar, .. } => (bar, n(), "`expect_tx` (a TMA load's)"),
        Op::Tcgen05Commit { bar, .. } => (bar, n(), "`tcgen05::commit`"),
        Op::Copy { bar: Some(bar), .. } => (bar, Some(0), "a TMA load"),
        Op::ClcTryCancel { bar, .. } => (bar, Some(0), "`clc::try_cancel`"),
        _ => return None,
    })
}

/// Whether `r` may name element `i` of its array.
fn may_name(k: &Kernel, r: &BarRef, i: i64) -> bool {
    constant(k, &r.index).is_none_or(|j| j == i)
}

/// The possible arrival totals of one barrier element before a point (`None`: unknown).
type Totals = Option<Vec<u32>>;

struct Phases<'k> {
    k: &'k Kernel,
    sites: Vec<Site<'k>>,
    /// First element slot of each barrier array (`None`: not followed).
    base: Vec<Option<usize>>,
}

impl Phases<'_> {
    fn slot(&self, r: &BarRef) -> Option<Result<usize, ()>> {
        let base = self.base[r.bar.index()]?;
        Some(match constant(self.k, &r.index) {
            Some(i) if (0..self.k.barriers[r.bar].count as i64).contains(&i) => {
                Ok(base + i as usize)
            }
            _ => Err(()),
        })
    }

    /// Adds `n` arrivals to a total, folded into `[0, 4a)` keeping the phase's parity and
    /// whether any phase completed.
    fn add(a: u32, t: u32, n: u32) -> u32 {
        let v = t + n;
        if v >= 4 * a { 2 * a + v % (2 * a) } else { v }
    }

    fn judge(
        &self,
        bar: &BarRef,
        parity: &Expr,
        span: Span,
        threads: ScopeSet,
        st: &[Totals],
        out: &mut Sink,
    ) {
        let Some(p) = constant(self.k, parity) else {
            return;
        };
        let Some(Ok(slot)) = self.slot(bar) else {
            return;
        };
        let i = constant(self.k, &bar.index).unwrap_or(0);
        let sites: Vec<&Site> = self
            .sites
            .iter()
            .filter(|s| s.bar.bar == bar.bar && may_name(self.k, s.bar, i))
            .collect();
        // One thread runs the wait and every signal: program order is their order.
        let mut common = Some(Runs::of(threads));
        for s in &sites {
            common = common.and_then(|c| c.meet(Runs::of(s.threads)));
        }
        let (Some(_), Some(totals)) = (common, &st[slot]) else {
            return;
        };
        let a = self.k.barriers[bar.bar].arrivals.max(1);
        // More arrivals at one op than a phase takes is the arrival-count rule's error.
        if sites.iter().any(|s| s.arrivals.is_none_or(|n| n > a)) {
            return;
        }
        let wrong = |t: &u32| t.is_multiple_of(a) && t / a >= 1 && (t / a) as i64 % 2 == p;
        if totals.is_empty() || !totals.iter().all(wrong) {
            return;
        }
        let mut hs: Vec<u32> = totals.iter().map(|t| t / a).collect();
        hs.dedup();
        let phases = hs
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" or ");
        let mut by: Vec<&str> = Vec::new();
        for s in &sites {
            if !by.contains(&s.what) {
                by.push(s.what);
            }
        }
        out.push(
            span,
            ProtocolError::ParityMismatch {
                bar: name(self.k, bar),
                phases,
                want: 1 - p,
                got: p,
                by: by.join(", "),
            },
        );
    }
}

impl Flow for Phases<'_> {
    type State = Vec<Totals>;

    fn op(&mut self, op: &Op, span: Span, threads: ScopeSet, st: &mut Vec<Totals>, out: &mut Sink) {
        if let Op::MbarWait { bar, parity } = op {
            self.judge(bar, parity, span, threads, st, out);
            return;
        }
        let Some((bar, n, _)) = signal(op, threads) else {
            return;
        };
        let Some(slot) = self.slot(bar) else { return };
        let a = self.k.barriers[bar.bar].arrivals.max(1);
        match (slot, n) {
            (_, Some(0)) => {}
            (Ok(slot), Some(n)) => {
                if let Some(ts) = &mut st[slot] {
                    for t in ts.iter_mut() {
                        *t = Self::add(a, *t, n);
                    }
                    ts.sort_unstable();
                    ts.dedup();
                }
            }
            // A run-time index (or an unknown count) may add to any element of the array.
            (_, _) => {
                let base = self.base[bar.bar.index()].unwrap_or(0);
                for t in &mut st[base..base + self.k.barriers[bar.bar].count as usize] {
                    *t = None;
                }
            }
        }
    }

    fn join(&self, a: &Vec<Totals>, b: &Vec<Totals>) -> Vec<Totals> {
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                let (x, y) = (x.as_ref()?, y.as_ref()?);
                let mut v: Vec<u32> = x.iter().chain(y).copied().collect();
                v.sort_unstable();
                v.dedup();
                (v.len() <= MAX_TOTALS).then_some(v)
            })
            .collect()
    }
}

/// `bar` or `bar[i]` as written.
fn name(k: &Kernel, r: &BarRef) -> String {
    let b = &k.barriers[r.bar];
    match constant(k, &r.index) {
        Some(i) if b.count > 1 => format!("{}[{i}]", b.name),
        _ => b.name.clone(),
    }
}

/// Whether `r` is a pipeline's full or empty barrier.
fn in_pipeline(k: &Kernel, r: Handle<Barrier>) -> bool {
    k.pipelines.iter().any(|(_, p)| p.full == r || p.empty == r)
}

/// The block that holds `s`, given its enclosing statements.
fn block_of<'k>(k: &'k Kernel, s: &Stmt, stack: &[&'k Stmt]) -> &'k Block {
    match stack.last() {
        None => &k.body,
        Some(parent) => children(parent)
            .find(|b| b.as_ptr_range().contains(&(s as *const Stmt)))
            .unwrap_or(&k.body),
    }
}

/// The signal sites of `k`'s plain barriers, and the forms decided by structure alone (never
/// signalled; signalled only behind the wait).
fn sites(k: &Kernel) -> (Vec<Site<'_>>, Vec<Diagnostic>) {
    let mut sites = Vec::new();
    let mut waits: Vec<(&Stmt, &BarRef, &Expr, &Block)> = Vec::new();
    visit(&k.body, &mut |s, stack| {
        let StmtKind::Op(op) = &s.kind else { return };
        if let Op::MbarWait { bar, parity } = op {
            if !in_pipeline(k, bar.bar) {
                waits.push((s, bar, parity, block_of(k, s, stack)));
            }
            return;
        }
        let mut threads = ScopeSet::cta(k.sig.threads);
        for t in stack {
            if let StmtKind::Scope { scope, .. } = &t.kind {
                threads = threads.enter(scope).unwrap_or(ScopeSet {
                    threads: threads.threads.enter(scope),
                    ..threads
                });
            }
        }
        if let Some((bar, arrivals, what)) = signal(op, threads) {
            let mut chain = stack.to_vec();
            chain.push(s);
            sites.push(Site {
                bar,
                threads,
                arrivals,
                what,
                chain,
            });
        }
    });
    let mut errs = Vec::new();
    for (w, bar, parity, block) in waits {
        if constant(k, parity) != Some(0) {
            continue;
        }
        let i = constant(k, &bar.index);
        let mine: Vec<&Site> = sites
            .iter()
            .filter(|s| s.bar.bar == bar.bar && i.is_none_or(|i| may_name(k, s.bar, i)))
            .collect();
        let at = block
            .iter()
            .position(|x| std::ptr::eq(x, w))
            .unwrap_or(usize::MAX);
        let behind = |s: &&Site| {
            s.chain.iter().any(|x| {
                block.as_ptr_range().contains(&(*x as *const Stmt))
                    && block
                        .iter()
                        .position(|y| std::ptr::eq(y, *x))
                        .is_some_and(|j| j > at)
            })
        };
        let bar_name = name(k, bar);
        if mine.is_empty() {
            errs.push(Diagnostic::new(
                w.span,
                ProtocolError::WaitNeverSignalled { bar: bar_name },
            ));
        } else if i.is_some() && mine.iter().all(behind) {
            let what = mine[0].what;
            errs.push(Diagnostic::new(
                w.span,
                ProtocolError::WaitBeforeOwnSignal {
                    bar: bar_name,
                    what,
                },
            ));
        }
    }
    (sites, errs)
}

/// The phase-parity rules of every path over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let (sites, mut errs) = sites(k);
    if sites.is_empty() && errs.is_empty() {
        return errs;
    }
    let mut base = Vec::new();
    let mut slots = 0;
    for (b, bar) in k.barriers.iter() {
        if bar.count <= MAX_ELEMENTS && !in_pipeline(k, b) {
            base.push(Some(slots));
            slots += bar.count as usize;
        } else {
            base.push(None);
        }
    }
    let mut rule = Phases { k, sites, base };
    for d in flow::run(k, &mut rule, vec![Some(vec![0]); slots]) {
        if !errs.iter().any(|e| e.span == d.span) {
            errs.push(d);
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::DiagKind;
    use crate::parse::parse_module;

    /// A 256-thread kernel with the one-arrival barrier `@bar` and `body`.
    fn kinds(body: &str) -> Vec<ProtocolError> {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 256
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
  barrier @bar: count 2 arrivals 1
{{
{body}}}
"
        );
        let k = parse_module(&text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .kernels
            .remove(0);
        check(&k)
            .into_iter()
            .map(|d| match d.kind {
                DiagKind::Protocol(e) => e,
                other => panic!("{other}"),
            })
            .collect()
    }

    const ARRIVE: &str = "  scope thread 0 {\n    op mbar_arrive @bar[0:u32]\n  }\n";

    fn wait(p: u32) -> String {
        format!("  op mbar_wait @bar[0:u32] parity {p}:u32\n")
    }

    #[test]
    fn the_parity_follows_the_phases_before_the_wait() {
        assert_eq!(kinds(&format!("{ARRIVE}{}", wait(0))), vec![]);
        assert_eq!(
            kinds(&format!("{ARRIVE}{}{ARRIVE}{}", wait(0), wait(1))),
            vec![]
        );
        let one = kinds(&format!("{ARRIVE}{}", wait(1)));
        assert!(
            matches!(
                &one[..],
                [ProtocolError::ParityMismatch {
                    want: 0,
                    got: 1,
                    ..
                }]
            ),
            "{one:?}"
        );
        let same = kinds(&format!("{ARRIVE}{}{ARRIVE}{}", wait(0), wait(0)));
        assert!(
            matches!(
                &same[..],
                [ProtocolError::ParityMismatch {
                    want: 1,
                    got: 0,
                    ..
                }]
            ),
            "{same:?}"
        );
    }

    #[test]
    fn a_branch_counts_on_every_path() {
        let both = format!(
            "  if 1:pred {{\n{ARRIVE}  }} else {{\n{ARRIVE}  }}\n{}",
            wait(1)
        );
        assert_eq!(kinds(&both).len(), 1);
        let one = format!("  if 1:pred {{\n{ARRIVE}  }}\n{}", wait(1));
        assert_eq!(kinds(&one), vec![]);
    }

    #[test]
    fn another_roles_signal_is_not_judged() {
        let body = format!(
            "  scope warpgroup 1..=1 {{\n{}  }}\n  scope warpgroup 0..=0 {{\n{}  }}\n",
            ARRIVE.replace("thread 0", "thread 128"),
            wait(1)
        );
        assert_eq!(kinds(&body), vec![]);
    }

    #[test]
    fn a_barrier_nothing_signals_first_hangs_its_wait() {
        let never = kinds(&wait(0));
        assert!(
            matches!(&never[..], [ProtocolError::WaitNeverSignalled { .. }]),
            "{never:?}"
        );
        // The other element is signalled, not this one.
        let other = kinds(&format!("  op mbar_arrive @bar[1:u32]\n{}", wait(0)));
        assert!(matches!(
            &other[..],
            [ProtocolError::WaitNeverSignalled { .. }]
        ));
        let behind = kinds(&format!("{}{ARRIVE}", wait(0)));
        assert!(
            matches!(&behind[..], [ProtocolError::WaitBeforeOwnSignal { .. }]),
            "{behind:?}"
        );
        // A barrier that starts out free: parity 1 returns at once.
        assert_eq!(kinds(&format!("{}{ARRIVE}", wait(1))), vec![]);
    }
}
