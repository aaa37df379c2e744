//! Counts a barrier phase needs, against what the body provably gives it: arrivals and bytes.
//!
//! An mbarrier phase completes when its pending arrival count and its tx-count both reach
//! zero (PTX ISA §9.7.13.15.1 "Contents of the mbarrier object", §9.7.13.15.13
//! `mbarrier.arrive`, `.expect_tx`). The rules here decide only shapes whose counts are
//! constants of the body:
//!
//! - **Arrivals.** A plain barrier (not a pipeline's) signalled only by `arrive()`, every
//!   arrive outside loops and `if`s (so each runs once, on the constant thread count of its
//!   scopes) and every wait on phase 0: when the threads that arrive are not the declared
//!   `mbarrier(arrivals = a)`, phase 0 never completes (fewer: the wait hangs) or completes
//!   before everyone arrived (more). Reported at the first wait.
//! - **Releases.** A `consumer_release` outside any `if`, on a stage that is the same for all
//!   its threads, arrives once per thread on the stage's empty barrier of each peer CTA,
//!   which expects `consumers × peers`: more threads than `consumers` at one release release
//!   the stage early. Fewer in total — every release site of the pipeline known and in the
//!   same loop as a `consumer_wait` of it, nothing else arriving on its empty barriers —
//!   never complete the phase, and the producer's second acquire of the stage hangs.
//! - **Bytes outside their `if`.** A written `expect_tx` in a block whose loads for that
//!   barrier are all inside an `if` or a nested scope of it: `derive-signals` arms the
//!   barrier again next to those loads, so the bytes are expected twice, or never arrive.
//! - **Multicast issued by some CTAs.** A multicast load counts one box from every CTA of its
//!   mask in each receiver's barrier (`derive-signals`' symmetric contract); a load under an
//!   `if` on `cta_rank` that some CTAs of the mask do not issue (in either branch) leaves
//!   their boxes missing. Decided when the condition is a function of `cta_rank` alone,
//!   evaluated for every rank of the cluster. A barrier the user arms with a written
//!   `expect_tx` is receiver-armed: [`super::multicast`] proves its bytes per rank instead.

use super::ProtocolError;
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{
    BarRef, Barrier, BinOp, Block, CmpOp, Expr, Kernel, Op, Pipeline, Scope, Special, Stmt,
    StmtKind, Var,
};
use crate::passes::walk::visit;
use crate::valid::scope::{ScopeSet, Threads};

/// Threads in a thread set.
pub(super) fn count(t: Threads) -> u32 {
    match t {
        Threads::Cta(n) => n,
        Threads::Warpgroups(n) => 128 * n,
        Threads::Warps(n, _) => 32 * n,
        Threads::ElectPerWarp(n) => n,
        Threads::Single => 1,
    }
}

/// Whole warpgroups in a thread set (`None`: not whole warpgroups, or not one).
fn warpgroups(t: ScopeSet) -> Option<u32> {
    match t.threads {
        Threads::Cta(n) if n % 128 == 0 => Some(n / 128),
        Threads::Warpgroups(n) => Some(n),
        Threads::Warps(n, true) => Some(n / 4),
        _ => None,
    }
}

/// How many threads run a statement, and words for them, from its enclosing statements: the
/// intersection of their scopes, where `leader` is one thread per warpgroup of the set it
/// narrows (`None` when that is not whole warpgroups, or another scope narrows it further).
pub(super) fn thread_count(stack: &[&Stmt], cta: u32) -> Option<(u32, String)> {
    let mut t = ScopeSet::cta(cta);
    let mut leaders = None;
    for s in stack {
        let StmtKind::Scope { scope, .. } = &s.kind else {
            continue;
        };
        match scope {
            _ if leaders.is_some() => return None,
            Scope::Leader => leaders = Some(warpgroups(t)?),
            _ => t = t.enter(scope)?,
        }
    }
    Some(match leaders {
        Some(n) => (n, format!("the leader of each of {n} warpgroup(s)")),
        None => (count(t.threads), t.threads.describe()),
    })
}

/// Whether a statement sits under an `if` (or, with `loops`, a loop) of `stack`.
pub(super) fn under(stack: &[&Stmt], loops: bool) -> bool {
    stack.iter().any(|s| match s.kind {
        StmtKind::If { .. } => true,
        StmtKind::For { .. } | StmtKind::Loop { .. } => loops,
        _ => false,
    })
}

/// The barrier signalled by an op other than `arrive()`, if any.
fn other_signal(op: &Op) -> Option<&BarRef> {
    match op {
        Op::Copy { bar: Some(r), .. }
        | Op::MbarArriveExpectTx { bar: r, .. }
        | Op::Tcgen05Commit { bar: r, .. }
        | Op::ClcTryCancel { bar: r, .. } => Some(r),
        _ => None,
    }
}

fn bar_name(k: &Kernel, bar: Handle<Barrier>, index: i64) -> String {
    let b = &k.barriers[bar];
    if b.count == 1 {
        b.name.clone()
    } else {
        format!("{}[{index}]", b.name)
    }
}

/// The arrival rule for one plain barrier array (see the module docs).
fn arrivals(k: &Kernel, bar: Handle<Barrier>, errs: &mut Vec<Diagnostic>) {
    // (index, threads, words) of each arrive; (index, span) of each wait.
    let mut arrives: Vec<(i64, u32, String)> = Vec::new();
    let mut waits: Vec<(i64, crate::ir::Span)> = Vec::new();
    let mut judged = true;
    visit(&k.body, &mut |s, stack| {
        let StmtKind::Op(op) = &s.kind else { return };
        match op {
            Op::MbarArrive { bar: r } if r.bar == bar => {
                match (&r.index, thread_count(stack, k.sig.threads)) {
                    (Expr::Imm(i, _), Some((n, words))) if !under(stack, true) => {
                        arrives.push((*i, n, words))
                    }
                    _ => judged = false,
                }
            }
            Op::MbarWait { bar: r, parity } if r.bar == bar => match (&r.index, parity) {
                (Expr::Imm(i, _), Expr::Imm(0, _)) => waits.push((*i, s.span)),
                _ => judged = false,
            },
            _ if other_signal(op).is_some_and(|r| r.bar == bar) => judged = false,
            _ => {}
        }
    });
    if !judged {
        return;
    }
    let expected = k.barriers[bar].arrivals;
    let mut seen: Vec<i64> = Vec::new();
    for &(i, span) in &waits {
        if seen.contains(&i) {
            continue;
        }
        seen.push(i);
        let sites: Vec<&(i64, u32, String)> = arrives.iter().filter(|a| a.0 == i).collect();
        let got: u32 = sites.iter().map(|a| a.1).sum();
        if sites.is_empty() || got == expected {
            continue;
        }
        let consequence = if got < expected {
            "phase 0 never completes and this wait hangs"
        } else {
            "phase 0 completes once the first of them have arrived, and this wait can return before the others have (theirs count toward the next phase)"
        };
        let words: Vec<String> = sites
            .iter()
            .map(|(_, n, w)| format!("{n} from `arrive()` in {w}"))
            .collect();
        errs.push(Diagnostic::new(
            span,
            ProtocolError::ArrivalCount {
                bar: bar_name(k, bar, i),
                expected,
                got,
                sites: words.join("; "),
                consequence,
            },
        ));
    }
}

/// Variables whose value may differ between the threads that run them (read from the
/// thread index, or from such a variable).
pub(super) fn thread_varying(k: &Kernel) -> Vec<Handle<Var>> {
    let mut out: Vec<Handle<Var>> = Vec::new();
    loop {
        let before = out.len();
        visit(&k.body, &mut |s, _| {
            if let StmtKind::Let { var, value } | StmtKind::Assign { var, value } = &s.kind
                && !out.contains(var)
                && varies(value, &out)
            {
                out.push(*var);
            }
        });
        if out.len() == before {
            return out;
        }
    }
}

pub(super) fn varies(e: &Expr, vars: &[Handle<Var>]) -> bool {
    match e {
        Expr::Special(Special::TidX | Special::WarpId | Special::LaneId) => true,
        Expr::Var(v) => vars.contains(v),
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::AndP(a, b) => {
            varies(a, vars) || varies(b, vars)
        }
        Expr::Not(a) => varies(a, vars),
        _ => false,
    }
}

/// The innermost loop around a statement, by address (`None`: none).
pub(super) fn innermost_loop(stack: &[&Stmt]) -> Option<*const Stmt> {
    stack
        .iter()
        .rev()
        .find(|s| matches!(s.kind, StmtKind::For { .. } | StmtKind::Loop { .. }))
        .map(|s| *s as *const Stmt)
}

/// The release rules for one pipeline (see the module docs).
fn releases(
    k: &Kernel,
    pipe: Handle<Pipeline>,
    varying: &[Handle<Var>],
    errs: &mut Vec<Diagnostic>,
) {
    let p = &k.pipelines[pipe];
    // The empty barrier expects `consumers × peers` arrivals.
    let consumers = k.barriers[p.empty].arrivals / p.peers.max(1);
    // (span, thread count, words, innermost loop) of each release.
    let mut sites: Vec<(crate::ir::Span, u32, String, Option<*const Stmt>)> = Vec::new();
    let mut wait_loops: Vec<Option<*const Stmt>> = Vec::new();
    let mut total_known = true;
    visit(&k.body, &mut |s, stack| {
        let StmtKind::Op(op) = &s.kind else { return };
        match op {
            Op::ConsumerRelease { pipe: q, stage } if *q == pipe => {
                match thread_count(stack, k.sig.threads) {
                    Some((n, words)) if !under(stack, false) && !varies(stage, varying) => {
                        sites.push((s.span, n, words, innermost_loop(stack)))
                    }
                    _ => total_known = false,
                }
            }
            Op::ConsumerWait { pipe: q, .. } if *q == pipe => {
                wait_loops.push(innermost_loop(stack))
            }
            Op::MbarArrive { bar: r } if r.bar == p.empty => total_known = false,
            _ if other_signal(op).is_some_and(|r| r.bar == p.empty) => total_known = false,
            _ => {}
        }
    });
    for (span, threads, scope, _) in &sites {
        let (span, threads, scope) = (*span, *threads, scope.clone());
        if threads > consumers {
            errs.push(Diagnostic::new(
                span,
                ProtocolError::ReleaseCount {
                    threads,
                    scope,
                    expected: consumers * p.peers,
                    consumers,
                    peers: p.peers,
                    consequence: "the stage is released before every consumer is done with it (and the extra arrivals release its next round early), so the producer may refill it while it is read",
                    fix: "Release from one thread per consumer (`#[scope(leader)]` in a warpgroup, or `#[scope(thread = N)]`), or declare the pipeline with that many consumers",
                },
            ));
            return;
        }
    }
    let same_loop = sites.iter().all(|s| wait_loops.contains(&s.3));
    let total: u32 = sites.iter().map(|s| s.1).sum();
    if total_known && same_loop && !sites.is_empty() && total < consumers {
        errs.push(Diagnostic::new(
            sites[0].0,
            ProtocolError::ReleaseCount {
                threads: total,
                scope: if sites.len() == 1 {
                    sites[0].2.clone()
                } else {
                    format!("{} release sites", sites.len())
                },
                expected: consumers * p.peers,
                consumers,
                peers: p.peers,
                consequence: "each use of a stage gets fewer releases than its phase needs, so the phase never completes and the producer's next `producer_acquire` of the stage hangs",
                fix: "Release once from each consumer, or declare the pipeline with fewer consumers",
            },
        ));
    }
}

/// The expect-tx rule over one block and, recursively, every block inside it.
fn expect_outside(k: &Kernel, b: &Block, armed: &[BarRef], errs: &mut Vec<Diagnostic>) {
    for s in b {
        if let StmtKind::Op(Op::MbarArriveExpectTx { bar, .. }) = &s.kind
            && !armed.contains(bar)
            && !loads_directly(b, bar)
            && let Some(place) = nested_loads(b, bar)
        {
            let name = k.barriers[bar.bar].name.clone();
            errs.push(Diagnostic::new(
                s.span,
                ProtocolError::ExpectTxOutsideLoads { bar: name, place },
            ));
        }
        for inner in children(s) {
            expect_outside(k, inner, armed, errs);
        }
    }
}

/// The blocks directly inside a statement.
fn children(s: &Stmt) -> Vec<&Block> {
    match &s.kind {
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => vec![then_body, else_body],
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => {
            vec![body]
        }
        _ => Vec::new(),
    }
}

fn is_load_for(s: &Stmt, bar: &BarRef) -> bool {
    matches!(
        &s.kind,
        StmtKind::Op(Op::Copy { bar: Some(r), .. } | Op::ClcTryCancel { bar: r, .. }) if r == bar
    )
}

/// Whether `b` loads for `bar` itself: at its top level, or in a loop at its top level (a
/// loop's loads are the enclosing block's phase, or a phase per iteration).
fn loads_directly(b: &Block, bar: &BarRef) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => {
            let mut found = false;
            visit(body, &mut |t, _| found |= is_load_for(t, bar));
            found
        }
        _ => is_load_for(s, bar),
    })
}

/// Where `b`'s loads for `bar` are when they are only inside its `if`s or scopes.
fn nested_loads(b: &Block, bar: &BarRef) -> Option<&'static str> {
    b.iter().find_map(|s| {
        let place = match s.kind {
            StmtKind::If { .. } => "the `if`",
            StmtKind::Scope { .. } => "the nested scope",
            _ => return None,
        };
        let mut found = false;
        for inner in children(s) {
            visit(inner, &mut |t, _| found |= is_load_for(t, bar));
        }
        found.then_some(place)
    })
}

/// The value of `e`, when it is a constant of the body (literals, config constants folded by
/// the front end, variables defined once by such a value).
pub(super) fn constant(k: &Kernel, e: &Expr) -> Option<i64> {
    eval(k, e, None, None, None, 0)
}

/// The value of `e` in the CTA of cluster rank `rank`, when it depends on nothing else.
pub(crate) fn eval_rank(k: &Kernel, e: &Expr, rank: i64) -> Option<i64> {
    eval(k, e, Some(rank), None, None, 0)
}

/// The value of `e` in the thread of CTA-linear index `tid` (`%tid.x`; its warp and lane
/// follow), when it depends on nothing else: a guard such as `tid % 32 == 0`.
pub(super) fn eval_tid(k: &Kernel, e: &Expr, tid: i64) -> Option<i64> {
    eval(k, e, None, Some(tid), None, 0)
}

/// The value of `e` with the loop variable `var` at `at`, when it depends on nothing else: a
/// barrier index of a counted loop's iteration (`derive-signals`).
pub(crate) fn eval_at(k: &Kernel, e: &Expr, var: Handle<Var>, at: i64) -> Option<i64> {
    eval(k, e, None, None, Some((var, at)), 0)
}

/// The value of `e` in the CTA of cluster rank `rank` and the thread `tid` (any: `None`), with
/// the loop variable of `at` at its value, when it depends on nothing else.
fn eval(
    k: &Kernel,
    e: &Expr,
    rank: Option<i64>,
    tid: Option<i64>,
    at: Option<(Handle<Var>, i64)>,
    depth: u32,
) -> Option<i64> {
    let go = |e: &Expr| eval(k, e, rank, tid, at, depth);
    Some(match e {
        Expr::Imm(v, _) => *v,
        Expr::Special(Special::ClusterCtaRank) => rank?,
        Expr::Special(Special::TidX) => tid?,
        Expr::Special(Special::WarpId) => tid? / 32,
        Expr::Special(Special::LaneId) => tid? % 32,
        Expr::Var(v) if at.is_some_and(|(w, _)| w == *v) => at?.1,
        Expr::Var(v) if depth < 8 => eval(k, single_def(k, *v)?, rank, tid, at, depth + 1)?,
        Expr::Bin(op, a, b) => {
            let (a, b) = (go(a)?, go(b)?);
            match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::Div if b != 0 => a / b,
                BinOp::Rem if b != 0 => a % b,
                BinOp::And => a & b,
                BinOp::Or => a | b,
                BinOp::Xor => a ^ b,
                BinOp::Min => a.min(b),
                BinOp::Max => a.max(b),
                _ => return None,
            }
        }
        Expr::Cmp(op, a, b) => {
            let (a, b) = (go(a)?, go(b)?);
            i64::from(match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
            })
        }
        Expr::Not(a) => i64::from(go(a)? == 0),
        Expr::AndP(a, b) => i64::from(go(a)? != 0 && go(b)? != 0),
        _ => return None,
    })
}

/// The value of a variable defined once (one `let`, never assigned).
fn single_def(k: &Kernel, v: Handle<Var>) -> Option<&Expr> {
    let mut defs: Vec<Option<&Expr>> = Vec::new();
    visit(&k.body, &mut |s, _| match &s.kind {
        StmtKind::Let { var, value } if *var == v => defs.push(Some(value)),
        StmtKind::Assign { var, .. } | StmtKind::For { var, .. } if *var == v => defs.push(None),
        StmtKind::Op(Op::ConsumerWait { stage, .. } | Op::ProducerAcquire { stage, .. })
            if *stage == v =>
        {
            defs.push(None)
        }
        _ => {}
    });
    match defs.as_slice() {
        [Some(e)] => Some(e),
        _ => None,
    }
}

/// Multicast loads of one branch (not under a further `if`): (bar, mask, span).
fn multicasts(b: &Block) -> Vec<(&BarRef, i64, crate::ir::Span)> {
    let mut out = Vec::new();
    visit(b, &mut |s, stack| {
        if let StmtKind::Op(Op::Copy {
            bar: Some(r),
            multicast: Some(Expr::Imm(mask, _)),
            ..
        }) = &s.kind
            && !under(stack, false)
        {
            out.push((r, *mask, s.span));
        }
    });
    out
}

fn ranks(bits: i64) -> String {
    let v: Vec<String> = (0..63)
        .filter(|r| bits >> r & 1 == 1)
        .map(|r| r.to_string())
        .collect();
    v.join(", ")
}

/// The multicast rule for one `if` (see the module docs).
fn multicast_if(
    k: &Kernel,
    armed: &[BarRef],
    cond: &Expr,
    then_body: &Block,
    else_body: &Block,
    errs: &mut Vec<Diagnostic>,
) {
    let size: i64 = k.sig.cluster.iter().map(|&c| c as i64).product();
    if size <= 1 {
        return;
    }
    let mut then_ranks = 0i64;
    for r in 0..size.min(16) {
        match eval(k, cond, Some(r), None, None, 0) {
            Some(0) => {}
            Some(_) => then_ranks |= 1 << r,
            None => return,
        }
    }
    let all = (1i64 << size.min(16)) - 1;
    let branches = [
        (then_body, else_body, then_ranks),
        (else_body, then_body, all & !then_ranks),
    ];
    for (body, other, issuers) in branches {
        let theirs = multicasts(other);
        for (bar, mask, span) in multicasts(body) {
            if armed.contains(bar) {
                continue;
            }
            let mut covered = issuers;
            if theirs.iter().any(|(b, m, _)| *b == bar && *m == mask) {
                covered |= all & !issuers;
            }
            let missing = mask & !covered;
            if missing != 0 {
                errs.push(Diagnostic::new(
                    span,
                    ProtocolError::MulticastNotSymmetric {
                        bar: k.barriers[bar.bar].name.clone(),
                        receivers: ranks(mask),
                        mask,
                        boxes: mask.count_ones(),
                        issuers: ranks(issuers & mask),
                        missing: ranks(missing),
                    },
                ));
            }
        }
    }
}

/// The counting rules over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let mut errs = Vec::new();
    let piped: Vec<Handle<Barrier>> = k
        .pipelines
        .iter()
        .flat_map(|(_, p)| [p.full, p.empty])
        .collect();
    for (bar, _) in k.barriers.iter() {
        if !piped.contains(&bar) {
            arrivals(k, bar, &mut errs);
        }
    }
    let varying = thread_varying(k);
    for (pipe, _) in k.pipelines.iter() {
        releases(k, pipe, &varying, &mut errs);
    }
    // Receiver-armed multicast barriers: their bytes are `multicast`'s per-rank proof.
    let armed = crate::passes::derive_signals::receiver_armed(k);
    expect_outside(k, &k.body, &armed, &mut errs);
    visit(&k.body, &mut |s, _| {
        if let StmtKind::If {
            cond,
            then_body,
            else_body,
        } = &s.kind
        {
            multicast_if(k, &armed, cond, then_body, else_body, &mut errs);
        }
    });
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_module;

    /// A 384-thread kernel with the barrier `@done` of `arrivals` and `body`.
    fn kernel(arrivals: u32, body: &str) -> Kernel {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 384
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
  barrier @done: count 1 arrivals {arrivals}
{{
{body}}}
"
        );
        parse_module(&text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .kernels
            .remove(0)
    }

    const WARP_ARRIVES: &str = "  scope warp 0..=0 {
    op mbar_arrive @done[0:u32]
  }
  op mbar_wait @done[0:u32] parity 0:u32
";

    #[test]
    fn one_warp_arriving_on_a_barrier_of_128_is_counted_32() {
        let errs = check(&kernel(128, WARP_ARRIVES));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(matches!(
            &errs[0].kind,
            crate::diag::DiagKind::Protocol(ProtocolError::ArrivalCount {
                expected: 128,
                got: 32,
                ..
            })
        ));
        assert!(check(&kernel(32, WARP_ARRIVES)).is_empty());
    }

    #[test]
    fn a_leader_is_one_thread_per_warpgroup() {
        let body = "  scope warpgroup 1..=2 {
    scope leader {
      op mbar_arrive @done[0:u32]
    }
  }
  op mbar_wait @done[0:u32] parity 0:u32
";
        assert!(check(&kernel(2, body)).is_empty());
        assert_eq!(check(&kernel(1, body)).len(), 1);
    }

    #[test]
    fn arrivals_in_a_branch_or_a_later_phase_are_not_judged() {
        let branch = "  if 1:pred {
    op mbar_arrive @done[0:u32]
  }
  op mbar_wait @done[0:u32] parity 0:u32
";
        assert!(check(&kernel(128, branch)).is_empty());
        let later = "  op mbar_arrive @done[0:u32]
  op mbar_wait @done[0:u32] parity 1:u32
";
        assert!(check(&kernel(1, later)).is_empty());
    }
}
