//! derive-signals — the completion-signal contract for TMA loads: the bytes a barrier
//! expects are the sum of the boxes that signal it in one phase.
//!
//! Phase: Tile. Preconditions: TMA loads are `Op::Copy` from a global tile into a shared
//! buffer with `bar: Some(..)`. Postconditions: in every block, the loads that signal the
//! same barrier reference form one phase, and an `MbarArriveExpectTx { bytes: Some(sum) }`
//! stands before the first of them. A user-written `expect_tx(n)` for that barrier in the same
//! block is kept and checked against the sum instead (error at the user's line if it
//! differs). The tx-count of an mbarrier phase is limited to 2^20 - 1 bytes (PTX ISA
//! §9.7.13.15.1 "Contents of the mbarrier object"). A cluster-launch-control request
//! (`clc::try_cancel`) signals its barrier like a load of 16 bytes (PTX ISA §9.7.13.17: the
//! response is 16 bytes, completed by complete-tx of the bytes stored), also in its multicast
//! form: there each CTA's barrier receives its own copy of the response, and each CTA's issuing
//! thread expects it (the op itself is issued by rank 0 only). A load multicast to a mask of n CTAs
//! counts n times: the contract is that every CTA of the mask issues its own slice to the
//! same barrier offset (symmetric multicast), so each barrier receives n boxes per phase.
//!
//! A multicast barrier the user arms with a written `expect_tx(n)` outside the block of its
//! loads is *receiver-armed* ([`receiver_armed`]): each receiving CTA sets its own
//! expectation, and the loads may be issued by one CTA
//! (`if cta_rank == 0 { tma::load(.., multicast = M) }`). This pass derives
//! nothing for such a barrier; `check-protocol` proves per receiving rank that the bytes
//! expected are the bytes every issuer whose mask includes it sends (its `multicast` rule).
//!
//! The CTA pair's load (`tma::load(..., cta_group = 2)`, PTX ISA §9.7.9.25.5.1 `.cta_group::2`)
//! lands in the issuing CTA and completes its bytes on the barrier at the same offset in the
//! pair's even CTA: with both CTAs running the same loads, the even CTA's barrier receives each
//! box twice per phase and the odd CTA's none. So the expect-tx factor is per receiving CTA:
//! the derived expect-tx counts a pair load twice and runs in the even CTA only (under
//! `%cluster_ctarank & 1 == 0`); the odd CTA does not arrive on its own barrier, which nothing
//! signals. A barrier is signalled by pair loads or by plain ones, not both, and its bytes are
//! never written by hand (`expect_tx`), since no one count is right for both CTAs.
//! The pair's load multicast to other pairs (`multicast = M, cta_group = 2`,
//! `.multicast::cluster.cta_group::2`): every CTA of `M` receives the box and counts it on its
//! own pair's even CTA's barrier. `M` is evaluated for every rank (a function of `cta_rank`);
//! when every rank's mask holds the rank, not its peer, and the same number `c` of CTAs, each
//! receiver gets `c` boxes a phase and the even CTA's arm counts the load `2c` times.
//!
//! Each block with loads for a barrier reference gets its own expect-tx, which is an arrival.
//! A thread that loads for one barrier phase both in a block and in an `if` or scope nested in
//! it (or in two sibling scopes) would arrive more often than the barrier expects, and the phase
//! would complete before the bytes are in: rejected at the nested load, unless the barrier
//! was declared with that many arrivals (`mbarrier(arrivals = n)`). Loads in the two branches
//! of one `if` are one arrival: only one branch runs.
//!
//! A `for` loop with constant bounds whose body is only loads signalling barrier references
//! the loop does not change (and plain statements, scalar loads among them: a `gather` of the
//! block-table entry each box reads) is one phase spread over its iterations
//! (`for c in 0..BN / 64 { tma::load(b_s[s][c], b.tile(k, c), pipe.full(s)) }`): its boxes
//! count trip-count times toward the enclosing block's sum, and its body gets no expect-tx of
//! its own. A nest of such loops is one phase as well (Q's boxes per warpgroup and per column
//! chunk: `for w in 0..NWG { for c in 0..D / 64 { … } }`).

use super::Pass;
use super::walk::{Rewriter, rewrite_body_with, visit};
use crate::arena::Handle;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{BarRef, Block, Expr, Kernel, Op, Span, Stmt, StmtKind, TileRef, Var};

/// The pass.
pub struct DeriveSignals;

/// The most bytes one mbarrier phase counts.
pub const TX_LIMIT: u64 = (1 << 20) - 1;

/// A broken completion-signal contract.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignalError {
    /// A multicast load whose mask is not known at build time.
    #[error(
        "the multicast mask must be a build-time constant: the barrier's byte count depends on it"
    )]
    MulticastMask,
    /// A pair load's multicast mask that is not the same shape in every rank.
    #[error(
        "the pair's multicast mask (`multicast = M, cta_group = 2`) must be a function of `cta_rank` and constants that, in every rank, includes the rank itself, not its pair's peer, and the same number of CTAs as the ranks whose masks include it: each even CTA's barrier then counts both CTAs' boxes from every CTA of the mask"
    )]
    PairMulticastMask,
    /// One phase's loads move more bytes than a phase counts.
    #[error(
        "the TMA loads signalling this barrier move {bytes} bytes in one phase; an mbarrier phase counts at most {}",
        TX_LIMIT
    )]
    TxLimit {
        /// Bytes of the phase.
        bytes: u64,
    },
    /// A written `expect_tx(n)` that is not the sum of the boxes.
    #[error(
        "expect_tx({written}) disagrees with the {what} that signal this barrier: they move {derived} bytes per phase; write expect_tx({derived}) or leave it out"
    )]
    ExpectTx {
        /// What signals it: `TMA boxes`, or cluster-launch-control responses.
        what: &'static str,
        /// The user's count.
        written: u32,
        /// The boxes' sum.
        derived: u64,
    },
    /// One phase's loads arrive from more blocks than the barrier expects arrivals.
    #[error(
        "TMA loads for this barrier phase are split over {sites} blocks (a block and an `if` or scope inside it, or sibling scopes); each block's loads arrive on the barrier with their expected bytes, so it would get {sites} arrivals where it expects {expected} and complete before the bytes are in: issue the phase's loads from one block, or declare `mbarrier(arrivals = {sites})`"
    )]
    SplitPhase {
        /// Blocks that arrive.
        sites: u32,
        /// Arrivals the barrier was declared with.
        expected: u32,
    },
    /// A barrier signalled by pair loads and by plain loads, or one whose bytes are written.
    #[error(
        "{why}: a pair load (`cta_group = 2`) completes on the even CTA's barrier, which the even CTA arms with both CTAs' bytes (the compiler derives it); the odd CTA's barrier at that offset receives none"
    )]
    PairSignal {
        /// What is wrong.
        why: &'static str,
    },
    /// A loop whose barrier index repeats over its iterations.
    #[error(
        "this TMA load signals barrier {index} in iterations {first} and {second} of its loop, and each iteration arms the barrier (one arrival with its bytes), so that phase would get more arrivals than the barrier expects and complete after the first iteration's bytes; nest the loop so that one barrier's loads are one inner loop of constant bounds (`for c in 0..CHUNKS {{ for q in 0..BOXES {{ tma::load(…, bar[c]) }} }}`: its boxes are one phase), or index the barrier by the iteration"
    )]
    RepeatedBarrier {
        /// The barrier index both iterations signal.
        index: i64,
        /// The first iteration's loop value.
        first: i64,
        /// A later one with the same index.
        second: i64,
    },
    /// A loop whose every iteration signals the same barrier reference.
    #[error(
        "this TMA load signals the same barrier in every iteration of its loop, so one barrier phase would receive several arrivals and complete after the first; index the barrier by the iteration (a pipeline stage), or give the loop constant bounds so that its iterations form one phase"
    )]
    SameBarrierEveryIteration,
}

/// Bytes of the box a copy of `buf` (indexed on `index.len()` leading dims) moves.
pub fn box_bytes(k: &Kernel, t: &TileRef) -> Option<u64> {
    let TileRef::Buf { buf, index } = t else {
        return None;
    };
    let b = &k.buffers[*buf];
    let dims = b.layout.shape.get(index.len()..)?;
    Some(dims.iter().map(|&d| d as u64).product::<u64>() * b.elem.bytes() as u64)
}

/// Whether `op` is the CTA pair's TMA load (`cta_group = 2`).
fn pair_load(op: &Op) -> bool {
    matches!(
        op,
        Op::Copy {
            src: TileRef::Global { .. },
            bar: Some(_),
            pair: true,
            ..
        }
    )
}

/// The bytes of one cluster-launch-control response (PTX ISA §9.7.13.17).
pub const CLC_RESPONSE_BYTES: u64 = 16;

/// The barrier a TMA load or a cluster-launch-control request signals with bytes.
fn load_bar(op: &Op) -> Option<&BarRef> {
    match op {
        Op::Copy {
            src: TileRef::Global { .. },
            bar: Some(b),
            ..
        }
        | Op::ClcTryCancel { bar: b, .. } => Some(b),
        _ => None,
    }
}

/// The CTAs of a pair load's multicast mask (`multicast = M, cta_group = 2`), when `M` is a
/// function of `cta_rank` and constants whose every rank's value has that many bits, includes
/// the rank itself and not its own pair's peer (the peer loads its own half), and every rank
/// is in that many ranks' masks: the boxes each receiver gets per phase. `None` otherwise.
fn pair_mask_copies(k: &Kernel, mask: &Expr) -> Option<u64> {
    let size: u32 = k.sig.cluster.iter().product();
    let mut masks = Vec::new();
    for r in 0..i64::from(size) {
        let m = crate::passes::check_protocol::eval_rank(k, mask, r)?;
        if m <= 0 || m >> size != 0 || m & (1 << r) == 0 || m & (1 << (r ^ 1)) != 0 {
            return None;
        }
        masks.push(m as u64);
    }
    let c = u64::from(masks.first()?.count_ones());
    // Every rank sends `c` boxes and receives `c` (one from every rank whose mask holds it).
    let ok = (0..masks.len()).all(|r| {
        u64::from(masks[r].count_ones()) == c
            && masks.iter().filter(|m| *m & (1 << r) != 0).count() as u64 == c
    });
    ok.then_some(c)
}

/// Boxes per barrier reference of a constant-trip loop that is one phase spread over its
/// iterations (see the module docs): `(bar, bytes over all iterations, span of the first
/// load)`, or `None` when `s` is not such a loop (not a `for`, bounds not constant, no loads,
/// a load nested deeper than the body's top level, a load whose barrier the loop changes, or a
/// wait in the body).
fn counted_loop(k: &Kernel, s: &Stmt) -> Option<Vec<(BarRef, u64, Span)>> {
    let StmtKind::For {
        var,
        start: Expr::Imm(a, _),
        end: Expr::Imm(b, _),
        step: Expr::Imm(st, _),
        body,
    } = &s.kind
    else {
        return None;
    };
    let trips = if b > a && *st > 0 {
        ((b - a) + st - 1) / st
    } else {
        0
    } as u64;
    let mut vars = vec![*var];
    written(body, &mut vars);
    let mut out: Vec<(BarRef, u64, Span)> = Vec::new();
    for t in body {
        match &t.kind {
            StmtKind::Op(op @ Op::Copy { dst, multicast, .. }) if load_bar(op).is_some() => {
                let bar = load_bar(op)?;
                if mentions(&bar.index, &vars) {
                    return None;
                }
                let copies = match multicast {
                    None if pair_load(op) => 2,
                    None => 1,
                    Some(m) if pair_load(op) => 2 * pair_mask_copies(k, m)?,
                    Some(Expr::Imm(mask, _)) => (*mask as u64).count_ones() as u64,
                    Some(_) => return None,
                };
                let bytes = box_bytes(k, dst).unwrap_or(0) * copies * trips;
                match out.iter_mut().find(|g| &g.0 == bar) {
                    Some(g) => g.1 += bytes,
                    None => out.push((bar.clone(), bytes, t.span)),
                }
            }
            // A nest of counted loops is one phase too (`for w in 0..2 { for c in 0..D / 64 {
            // … } }`): the inner loop's boxes count this loop's trips more.
            StmtKind::For { .. } => {
                for (bar, bytes, span) in counted_loop(k, t)? {
                    if mentions(&bar.index, &vars) {
                        return None;
                    }
                    match out.iter_mut().find(|g| g.0 == bar) {
                        Some(g) => g.1 += bytes * trips,
                        None => out.push((bar, bytes * trips, span)),
                    }
                }
            }
            // A scalar load (`gather` of a table entry: the page a box reads) neither signals
            // nor waits on a barrier: a plain statement.
            StmtKind::Let { .. }
            | StmtKind::Assign { .. }
            | StmtKind::Inst(_)
            | StmtKind::Op(Op::LoadScalar { .. }) => {}
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The barrier references whose every signal is a multicast TMA load (not the pair's) and
/// that a user-written `expect_tx` arms outside the block of its loads (e.g. before the
/// issuer's `if cta_rank == 0`): each receiving CTA sets its own expectation (see the module
/// docs). A derived expect-tx always stands in the block of its loads, so the answer is the
/// same before this pass and after it.
pub(crate) fn receiver_armed(k: &Kernel) -> Vec<BarRef> {
    // (bar, multicast) of every signal with bytes.
    let mut loads: Vec<(&BarRef, bool)> = Vec::new();
    visit(&k.body, &mut |s, _| {
        if let StmtKind::Op(op) = &s.kind
            && let Some(bar) = load_bar(op)
        {
            let mc = matches!(
                op,
                Op::Copy {
                    multicast: Some(_),
                    ..
                }
            ) && !pair_load(op);
            loads.push((bar, mc));
        }
    });
    let mut out: Vec<BarRef> = Vec::new();
    armed_outside(&k.body, &mut |bar| {
        let mut mine = loads.iter().filter(|l| l.0 == bar).peekable();
        if mine.peek().is_some() && mine.all(|l| l.1) && !out.contains(bar) {
            out.push(bar.clone());
        }
    });
    out
}

/// Calls `f` with the barrier of every `expect_tx` in `b` or its nested blocks that stands in
/// a block with no load for that barrier at its top level (or in a loop at its top level).
fn armed_outside(b: &Block, f: &mut dyn FnMut(&BarRef)) {
    let loads_here = |bar: &BarRef| {
        b.iter().any(|s| match &s.kind {
            StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => {
                let mut found = false;
                visit(
                    body,
                    &mut |t, _| {
                        found |= matches!(&t.kind, StmtKind::Op(op) if load_bar(op) == Some(bar))
                    },
                );
                found
            }
            StmtKind::Op(op) => load_bar(op) == Some(bar),
            _ => false,
        })
    };
    for s in b {
        if let StmtKind::Op(Op::MbarArriveExpectTx { bar, .. }) = &s.kind
            && !loads_here(bar)
        {
            f(bar);
        }
        match &s.kind {
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                armed_outside(then_body, f);
                armed_outside(else_body, f);
            }
            StmtKind::For { body, .. }
            | StmtKind::Loop { body, .. }
            | StmtKind::Scope { body, .. } => armed_outside(body, f),
            _ => {}
        }
    }
}

fn process(k: &Kernel, block: Block, skip: &[BarRef], errs: &mut Diagnostics) -> Block {
    // Group loads by barrier reference: (bar, first index, sum, span of first load).
    let mut groups: Vec<(BarRef, usize, u64, Span)> = Vec::new();
    // Barriers a cluster-launch-control request signals (for the wording of errors).
    let mut clc: Vec<BarRef> = Vec::new();
    // Barriers a multicast load signals (for the wording of errors).
    let mut mc: Vec<BarRef> = Vec::new();
    for (i, s) in block.iter().enumerate() {
        for (bar, bytes, span) in counted_loop(k, s).unwrap_or_default() {
            match groups.iter_mut().find(|g| g.0 == bar) {
                Some(g) => g.2 += bytes,
                None => groups.push((bar, i, bytes, span)),
            }
        }
        if let StmtKind::Op(op) = &s.kind
            && let (Some(bar), Op::Copy { dst, multicast, .. }) = (load_bar(op), op)
        {
            // A multicast box lands in every CTA of the mask; with every CTA of the mask issuing
            // its slice symmetrically, each barrier receives the box once per CTA of the mask.
            let copies = match multicast {
                // The pair's load: the even CTA's barrier receives both CTAs' boxes.
                None if pair_load(op) => 2,
                None => 1,
                // The pair's multicast load: each CTA of the mask receives one box from every
                // CTA of its own mask, and its pair's even CTA's barrier counts both CTAs'.
                Some(m) if pair_load(op) && pair_mask_copies(k, m).is_some() => {
                    2 * pair_mask_copies(k, m).unwrap_or(0)
                }
                Some(Expr::Imm(mask, _)) if !pair_load(op) => (*mask as u64).count_ones() as u64,
                Some(_) if pair_load(op) => {
                    errs.push(Diagnostic::new(s.span, SignalError::PairMulticastMask));
                    1
                }
                Some(_) => {
                    errs.push(Diagnostic::new(s.span, SignalError::MulticastMask));
                    1
                }
            };
            if multicast.is_some() {
                mc.push(bar.clone());
            }
            let bytes = box_bytes(k, dst).unwrap_or(0) * copies;
            match groups.iter_mut().find(|g| &g.0 == bar) {
                Some(g) => g.2 += bytes,
                None => groups.push((bar.clone(), i, bytes, s.span)),
            }
        }
        if let StmtKind::Op(Op::ClcTryCancel { bar, .. }) = &s.kind {
            clc.push(bar.clone());
            match groups.iter_mut().find(|g| &g.0 == bar) {
                Some(g) => g.2 += CLC_RESPONSE_BYTES,
                None => groups.push((bar.clone(), i, CLC_RESPONSE_BYTES, s.span)),
            }
        }
    }
    // A receiver-armed barrier's bytes are proven per rank by check-protocol.
    groups.retain(|g| !skip.contains(&g.0));
    let mut inserts: Vec<(usize, Stmt)> = Vec::new();
    let mut out = block;
    for (bar, first, sum, span) in groups {
        if sum > TX_LIMIT {
            errs.push(Diagnostic::new(span, SignalError::TxLimit { bytes: sum }));
            continue;
        }
        let (pair, plain) = load_kinds(&out, &bar);
        if pair && plain {
            errs.push(Diagnostic::new(
                span,
                SignalError::PairSignal {
                    why: "this barrier is signalled both by the pair's TMA loads and by plain ones",
                },
            ));
            continue;
        }
        let explicit = out.iter_mut().find_map(|s| match &mut s.kind {
            StmtKind::Op(Op::MbarArriveExpectTx { bar: b, bytes }) if *b == bar => {
                Some((bytes, s.span))
            }
            _ => None,
        });
        if pair && let Some((_, sp)) = explicit {
            errs.push(Diagnostic::new(
                sp,
                SignalError::PairSignal {
                    why: "leave this expect_tx out",
                },
            ));
            continue;
        }
        match explicit {
            Some((bytes @ &mut None, _)) => *bytes = Some(sum as u32),
            Some((Some(n), sp)) if *n as u64 != sum => errs.push(Diagnostic::new(
                sp,
                SignalError::ExpectTx {
                    what: if clc.contains(&bar) {
                        "cluster-launch-control responses (16 bytes per `clc::try_cancel`)"
                    } else if mc.contains(&bar) {
                        "multicast TMA boxes (one from every CTA of the mask, each issuing its slice; for one CTA issuing for all, every receiver arms its own barrier with the bytes it receives, outside the issuer's `if`)"
                    } else {
                        "TMA boxes"
                    },
                    written: *n,
                    derived: sum,
                },
            )),
            Some(_) => {}
            None => {
                let arm = Stmt::at(
                    StmtKind::Op(Op::MbarArriveExpectTx {
                        bar,
                        bytes: Some(sum as u32),
                    }),
                    span,
                );
                // The pair's loads: only the even CTA's barrier receives bytes, so only the
                // even CTA arms it.
                let arm = if pair {
                    let even = Expr::cmp(
                        crate::ir::CmpOp::Eq,
                        Expr::bin(
                            crate::ir::BinOp::And,
                            Expr::Special(crate::ir::Special::ClusterCtaRank),
                            Expr::u32(1),
                        ),
                        Expr::u32(0),
                    );
                    Stmt::at(
                        StmtKind::If {
                            cond: even,
                            then_body: vec![arm],
                            else_body: vec![],
                        },
                        span,
                    )
                } else {
                    arm
                };
                inserts.push((first, arm))
            }
        }
    }
    inserts.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
    for (i, s) in inserts {
        out.insert(i, s);
    }
    out
}

/// Whether the loads of `block` (at its top level and in its counted loops) that signal `bar`
/// include the pair's loads, and plain ones.
fn load_kinds(block: &Block, bar: &BarRef) -> (bool, bool) {
    let (mut pair, mut plain) = (false, false);
    visit(block, &mut |s, stack| {
        if stack
            .iter()
            .any(|p| !matches!(p.kind, StmtKind::For { .. }))
        {
            return;
        }
        if let StmtKind::Op(op) = &s.kind
            && load_bar(op) == Some(bar)
            && matches!(op, Op::Copy { .. })
        {
            if pair_load(op) {
                pair = true;
            } else {
                plain = true;
            }
        }
    });
    (pair, plain)
}

/// The arrivals one execution of `block` makes on `bar` through derived expect-tx: one if the
/// block itself loads for it (directly or in a counted loop), plus those of its nested scopes
/// and ifs (the larger branch); loops are phases of their own (see [`check_loop`]). With the
/// span of a load that makes one.
fn arrival_sites(k: &Kernel, block: &Block, bar: &BarRef) -> (u32, Option<Span>) {
    let mut own = None;
    let (mut nested, mut nested_span) = (0, None);
    for s in block {
        if counted_loop(k, s).is_some_and(|g| g.iter().any(|(b, ..)| b == bar)) {
            own = own.or(Some(s.span));
            continue;
        }
        match &s.kind {
            StmtKind::Op(op) if load_bar(op) == Some(bar) => own = own.or(Some(s.span)),
            StmtKind::Scope { body, .. } => {
                let (n, sp) = arrival_sites(k, body, bar);
                nested += n;
                nested_span = nested_span.or(sp);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                let (a, sa) = arrival_sites(k, then_body, bar);
                let (b, sb) = arrival_sites(k, else_body, bar);
                nested += a.max(b);
                nested_span = nested_span.or(sa).or(sb);
            }
            _ => {}
        }
    }
    (u32::from(own.is_some()) + nested, nested_span.or(own))
}

/// Rejects a block whose loads for one barrier phase would arrive more often than the barrier
/// expects (see the module docs); reported once, at the outermost block where it happens.
fn check_arrivals(k: &Kernel, block: &Block, skip: &[BarRef], errs: &mut Diagnostics) {
    let mut bars: Vec<&BarRef> = Vec::new();
    collect_bars(block, &mut bars);
    // A receiver-armed barrier's loads arrive nowhere: its written expect-tx does.
    bars.retain(|b| !skip.contains(b));
    for bar in bars {
        let expected = k.barriers[bar.bar].arrivals;
        let (sites, span) = arrival_sites(k, block, bar);
        if sites <= expected {
            continue;
        }
        // Already reported inside a nested scope or branch that exceeds on its own?
        let inner_exceeds = block.iter().any(|s| match &s.kind {
            StmtKind::Scope { body, .. } => arrival_sites(k, body, bar).0 > expected,
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                arrival_sites(k, then_body, bar).0 > expected
                    || arrival_sites(k, else_body, bar).0 > expected
            }
            _ => false,
        });
        if !inner_exceeds && let Some(span) = span {
            errs.push(Diagnostic::new(
                span,
                SignalError::SplitPhase { sites, expected },
            ));
        }
    }
}

/// Every barrier reference a load in `block` signals, once each (loads inside loops too: a
/// counted loop's loads are part of the block's phase; other loops add no sites).
fn collect_bars<'b>(block: &'b Block, out: &mut Vec<&'b BarRef>) {
    visit(block, &mut |s, _| {
        if let StmtKind::Op(op) = &s.kind
            && let Some(bar) = load_bar(op)
            && !out.contains(&bar)
        {
            out.push(bar);
        }
    });
}

/// The rewrite: every block is checked for split arrivals before its statements, and gets its
/// expect-tx after them (nested blocks first); a loop is checked once its body is done. A
/// counted loop's loads belong to the enclosing block's phase: its body is not a block of its
/// own.
struct Signals<'e> {
    errs: &'e mut Diagnostics,
    /// The receiver-armed barriers ([`receiver_armed`]): nothing derived for them.
    skip: Vec<BarRef>,
}

impl Rewriter for Signals<'_> {
    fn enter_block(&mut self, k: &mut Kernel, block: &Block) -> Result<(), Diagnostics> {
        check_arrivals(k, block, &self.skip, self.errs);
        Ok(())
    }
    fn descend(&mut self, k: &Kernel, s: &Stmt) -> bool {
        counted_loop(k, s).is_none()
    }
    fn exit_stmt(&mut self, k: &mut Kernel, s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        if counted_loop(k, &s).is_some() {
            return Ok(vec![s]);
        }
        match &s.kind {
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
            } => check_loop(k, Some((*var, [start, end, step])), body, self.errs),
            StmtKind::Loop { body, .. } => check_loop(k, None, body, self.errs),
            _ => {}
        }
        Ok(vec![s])
    }
    fn exit_block(&mut self, k: &mut Kernel, block: Block) -> Result<Block, Diagnostics> {
        Ok(process(k, block, &self.skip, self.errs))
    }
}

/// Variables written anywhere in `block`.
fn written(block: &Block, out: &mut Vec<Handle<Var>>) {
    visit(block, &mut |s, _| match &s.kind {
        StmtKind::Let { var, .. } | StmtKind::Assign { var, .. } | StmtKind::For { var, .. } => {
            out.push(*var)
        }
        StmtKind::Op(Op::ProducerAcquire { stage, .. } | Op::ConsumerWait { stage, .. }) => {
            out.push(*stage)
        }
        StmtKind::Op(
            Op::ClcIsCanceled { dst, .. } | Op::LoadScalar { dst, .. } | Op::WarpVote { dst, .. },
        ) => out.push(*dst),
        StmtKind::Op(Op::ClcFirstCta { dsts, .. }) => out.extend(dsts),
        _ => {}
    });
}

fn mentions(e: &Expr, vars: &[Handle<Var>]) -> bool {
    match e {
        Expr::Var(v) => vars.contains(v),
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::AndP(a, b) => {
            mentions(a, vars) || mentions(b, vars)
        }
        Expr::Not(a) => mentions(a, vars),
        Expr::Imm(..) | Expr::Dim(_) | Expr::Special(_) => false,
    }
}

/// The most iterations [`repeated_index`] walks.
const REPEAT_WALK: i64 = 1 << 16;

/// The first two iterations of a loop of constant bounds `[start, end, step]` over `var` at
/// which a barrier index computed from `var` alone (and constants) is the same: `(index, first,
/// second)`. `None` when the bounds are not constant, the loop runs more than [`REPEAT_WALK`]
/// iterations, or the index depends on anything else.
fn repeated_index(
    k: &Kernel,
    var: Handle<Var>,
    bounds: [&Expr; 3],
    index: &Expr,
) -> Option<(i64, i64, i64)> {
    let [Expr::Imm(a, _), Expr::Imm(b, _), Expr::Imm(st, _)] = bounds else {
        return None;
    };
    let (a, b, st) = (*a, *b, *st);
    if st <= 0 || b <= a || (b - a) / st > REPEAT_WALK {
        return None;
    }
    let mut seen = std::collections::HashMap::new();
    let mut i = a;
    while i < b {
        let at = crate::passes::check_protocol::eval_at(k, index, var, i)?;
        if let Some(&first) = seen.get(&at) {
            return Some((at, first, i));
        }
        seen.insert(at, i);
        i += st;
    }
    None
}

/// A loop whose every iteration arrives (expect-tx) on the same barrier would arrive several
/// times in one phase: the phase would complete after the first iteration's bytes, and the
/// consumer would read tiles still in flight. Reject TMA loads in a loop body that signal a
/// barrier reference the loop does not change (directly in the body or in its ifs/scopes;
/// inner loops are checked on their own) — unless the body also waits on that barrier, which
/// makes each iteration a phase of its own.
///
/// A `for` of constant bounds whose load signals a barrier array at an index computed from the
/// loop variable alone arms each iteration's barrier (an arrival with its bytes), so an index
/// that repeats (`full[i / 16]`) gives one phase several arrivals: rejected at the load with the
/// two iterations ([`repeated_index`]); a pipeline's barriers are left to `check-protocol` (a
/// stage refilled without `producer_acquire` says more).
fn check_loop(
    k: &Kernel,
    var: Option<(Handle<Var>, [&Expr; 3])>,
    body: &Block,
    errs: &mut Diagnostics,
) {
    let mut vars: Vec<Handle<Var>> = var.iter().map(|v| v.0).collect();
    written(body, &mut vars);
    // A loop variable the body assigns has no value per iteration to evaluate an index at.
    let var = var.filter(|(v, _)| !vars[1..].contains(v));
    let mut waits: Vec<&BarRef> = Vec::new();
    visit(body, &mut |s, _| {
        if let StmtKind::Op(Op::MbarWait { bar, .. }) = &s.kind {
            waits.push(bar);
        }
    });
    visit(body, &mut |s, stack| {
        // Inner loops are checked on their own, except counted ones: their loads are one phase
        // of this loop's iteration.
        if stack.iter().any(|p| {
            matches!(p.kind, StmtKind::For { .. } | StmtKind::Loop { .. })
                && counted_loop(k, p).is_none()
        }) {
            return;
        }
        let StmtKind::Op(op) = &s.kind else { return };
        let Some(bar) = load_bar(op) else { return };
        if !mentions(&bar.index, &vars) && !waits.contains(&bar) {
            errs.push(Diagnostic::new(
                s.span,
                SignalError::SameBarrierEveryIteration,
            ));
            return;
        }
        let piped = k
            .pipelines
            .iter()
            .any(|(_, p)| p.full == bar.bar || p.empty == bar.bar);
        if let Some((v, bounds)) = var
            && !piped
            && !waits.iter().any(|w| w.bar == bar.bar)
            && let Some((index, first, second)) = repeated_index(k, v, bounds, &bar.index)
        {
            errs.push(Diagnostic::new(
                s.span,
                SignalError::RepeatedBarrier {
                    index,
                    first,
                    second,
                },
            ));
        }
    });
}

impl Pass for DeriveSignals {
    fn name(&self) -> &'static str {
        "derive-signals"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        let skip = receiver_armed(k);
        rewrite_body_with(
            k,
            &mut Signals {
                errs: &mut errs,
                skip,
            },
        )?;
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
