//! Receiver-armed multicast: the bytes each receiving CTA expects, proven per rank.
//!
//! A multicast TMA load (`tma::load(.., multicast = M)`, PTX ISA §9.7.9.25.5.1
//! `.multicast::cluster`) writes its box into every CTA whose rank is a bit of `M` and signals
//! complete-tx of the box's bytes on the barrier at the same offset in each of them. When the
//! user arms such a barrier with a written `expect_tx(n)` outside the block of its loads
//! (`derive-signals`' `receiver_armed`), each receiving CTA sets its own expectation, and any CTA may issue: one
//! CTA for the whole cluster (`if cta_rank == 0 { tma::load(.., multicast = 15) }`) or several.
//! A phase completes when its arrivals are in and its tx-count is back to zero (PTX ISA
//! §9.7.13.15.1); the tx-count ranges over ±(2^20 − 1), so it may go below zero when bytes
//! land before the arm (the emulator models the same), and only the sums matter.
//!
//! For every rank `r` of the cluster, with every `if` around the barrier's loads, arms and
//! waits evaluated in that rank (a function of `cta_rank` and constants):
//! - *received(r)* = the sum, over the loads whose mask has bit `r`, of the box's bytes times
//!   the ranks that issue the load;
//! - *expected(r)* = the sum of the written `expect_tx(n)` that run in rank `r`.
//!
//! Refused, at the user's token: bytes land in a rank that never arms the barrier (at the
//! load); a rank that arms or waits but that no mask covers (at the load); a rank whose arm is
//! not the bytes it receives (at the `expect_tx`). Decided only when every `if` around the
//! sites is a function of `cta_rank` and the sites share one innermost loop (one phase per
//! iteration); otherwise refused as unprovable, at the `if` or the site.

use super::ProtocolError;
use super::counts::eval_rank;
use crate::diag::Diagnostic;
use crate::ir::{BarRef, Block, Expr, Kernel, Op, Span, Stmt, StmtKind};
use crate::passes::derive_signals::{box_bytes, receiver_armed};

/// What runs where, for one barrier reference: ranks as bit sets.
#[derive(Default)]
struct Sites {
    /// (ranks, bytes, span) of each written `expect_tx`.
    arms: Vec<(u64, Option<u32>, Span)>,
    /// (issuing ranks, mask, box bytes, span) of each multicast load.
    loads: Vec<(u64, u64, u64, Span)>,
    /// Ranks that wait on it.
    waits: u64,
    /// The innermost loop of every site, by address (`None`: none).
    loops: Vec<(Option<*const Stmt>, Span)>,
    /// An `if` around a site whose condition is not a function of `cta_rank`.
    undecided: Option<Span>,
}

/// Whether `b` holds a statement that arms, loads for or waits on `bar`.
fn touches(b: &Block, bar: &BarRef) -> bool {
    let mut found = false;
    crate::passes::walk::visit(b, &mut |s, _| found |= site(s, bar));
    found
}

fn site(s: &Stmt, bar: &BarRef) -> bool {
    match &s.kind {
        StmtKind::Op(
            Op::MbarArriveExpectTx { bar: r, .. }
            | Op::MbarWait { bar: r, .. }
            | Op::Copy { bar: Some(r), .. },
        ) => r == bar,
        _ => false,
    }
}

fn walk(
    k: &Kernel,
    b: &Block,
    bar: &BarRef,
    live: u64,
    size: u32,
    lp: Option<*const Stmt>,
    out: &mut Sites,
) {
    for s in b {
        match &s.kind {
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                if !touches(then_body, bar) && !touches(else_body, bar) {
                    continue;
                }
                let mut then_live = 0u64;
                for r in (0..size).filter(|r| live >> r & 1 == 1) {
                    match eval_rank(k, cond, r as i64) {
                        Some(0) => {}
                        Some(_) => then_live |= 1 << r,
                        None => {
                            out.undecided.get_or_insert(s.span);
                            return;
                        }
                    }
                }
                walk(k, then_body, bar, then_live, size, lp, out);
                walk(k, else_body, bar, live & !then_live, size, lp, out);
            }
            StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => {
                walk(k, body, bar, live, size, Some(s as *const Stmt), out)
            }
            StmtKind::Scope { body, .. } => walk(k, body, bar, live, size, lp, out),
            StmtKind::Op(Op::MbarArriveExpectTx { bar: r, bytes }) if r == bar => {
                out.arms.push((live, *bytes, s.span));
                out.loops.push((lp, s.span));
            }
            StmtKind::Op(Op::MbarWait { bar: r, .. }) if r == bar => out.waits |= live,
            StmtKind::Op(Op::Copy {
                bar: Some(r),
                dst,
                multicast: Some(Expr::Imm(mask, _)),
                ..
            }) if r == bar => {
                let bytes = box_bytes(k, dst).unwrap_or(0);
                out.loads.push((live, *mask as u64, bytes, s.span));
                out.loops.push((lp, s.span));
            }
            _ => {}
        }
    }
}

/// Ranks of a bit set, in words (`0, 2`).
fn ranks(bits: u64) -> String {
    let v: Vec<String> = (0..64)
        .filter(|r| bits >> r & 1 == 1)
        .map(|r: u32| r.to_string())
        .collect();
    v.join(", ")
}

/// The per-rank proof for one receiver-armed barrier reference.
fn prove(k: &Kernel, bar: &BarRef, size: u32, errs: &mut Vec<Diagnostic>) {
    let mut s = Sites::default();
    let all = (1u64 << size) - 1;
    walk(k, &k.body, bar, all, size, None, &mut s);
    let name = k.barriers[bar.bar].name.clone();
    if let Some(span) = s.undecided {
        errs.push(Diagnostic::new(
            span,
            ProtocolError::MulticastUnproven {
                bar: name,
                why: "this `if` around its loads, `expect_tx` or waits is not a function of `cta_rank` alone",
            },
        ));
        return;
    }
    if let Some((_, span)) = s.loops.iter().find(|l| l.0 != s.loops[0].0) {
        errs.push(Diagnostic::new(
            *span,
            ProtocolError::MulticastUnproven {
                bar: name,
                why: "its loads and its `expect_tx` are not in one loop (one phase per iteration)",
            },
        ));
        return;
    }
    if let Some(&(_, _, span)) = s.arms.iter().find(|a| a.1.is_none()) {
        errs.push(Diagnostic::new(
            span,
            ProtocolError::MulticastUnproven {
                bar: name,
                why: "this `expect_tx()` has no count, and outside the block of the loads none is derived; write the bytes this CTA receives",
            },
        ));
        return;
    }
    let received = |r: u32| -> u64 {
        s.loads
            .iter()
            .filter(|l| l.1 >> r & 1 == 1)
            .map(|l| l.2 * l.0.count_ones() as u64)
            .sum()
    };
    let armed = |r: u32| s.arms.iter().any(|a| a.0 >> r & 1 == 1);
    let issuers: u64 = s.loads.iter().fold(0, |acc, l| acc | l.0);
    let masks: Vec<String> = s.loads.iter().map(|l| l.1.to_string()).collect();
    // Bytes that land where no expect_tx runs, per load.
    for &(from, mask, _, span) in &s.loads {
        if from == 0 {
            continue;
        }
        let unarmed = (0..size)
            .filter(|&r| mask >> r & 1 == 1 && !armed(r))
            .fold(0u64, |acc, r| acc | 1 << r);
        if unarmed != 0 {
            let bytes = received(unarmed.trailing_zeros());
            errs.push(Diagnostic::new(
                span,
                ProtocolError::MulticastUnarmed {
                    bar: name.clone(),
                    mask,
                    issuers: ranks(from),
                    unarmed: ranks(unarmed),
                    bytes,
                },
            ));
        }
    }
    // Ranks that arm or wait and receive nothing: the masks do not cover them.
    let uncovered = (0..size)
        .filter(|&r| (armed(r) || s.waits >> r & 1 == 1) && received(r) == 0)
        .fold(0u64, |acc, r| acc | 1 << r);
    if uncovered != 0
        && let Some(&(_, _, _, span)) = s.loads.iter().find(|l| l.0 != 0).or(s.loads.first())
    {
        errs.push(Diagnostic::new(
            span,
            ProtocolError::MulticastUncovered {
                bar: name.clone(),
                uncovered: ranks(uncovered),
                masks: masks.join(", "),
                issuers: ranks(issuers),
            },
        ));
    }
    // Each arm against the bytes of every rank that runs it.
    for &(runs, bytes, span) in &s.arms {
        let expected = bytes.unwrap_or(0);
        let wrong = (0..size)
            .filter(|&r| runs >> r & 1 == 1 && received(r) != 0)
            .find(|&r| {
                let mine: u64 = s
                    .arms
                    .iter()
                    .filter(|a| a.0 >> r & 1 == 1)
                    .map(|a| a.1.unwrap_or(0) as u64)
                    .sum();
                mine != received(r)
            });
        if let Some(r) = wrong {
            errs.push(Diagnostic::new(
                span,
                ProtocolError::MulticastBytes {
                    bar: name.clone(),
                    rank: r,
                    expected,
                    received: received(r),
                },
            ));
        }
    }
}

/// The rule over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let size: u32 = k.sig.cluster.iter().product();
    let mut errs = Vec::new();
    if !(2..=16).contains(&size) {
        return errs;
    }
    for bar in receiver_armed(k) {
        prove(k, &bar, size, &mut errs);
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::DiagKind;
    use crate::parse::parse_module;

    /// A 4-CTA cluster kernel: every CTA arms `@bar` for `arm` bytes, and the multicast load
    /// of one 8192-byte box runs under `cond`.
    fn kernel(arm: u32, cond: &str, mask: u32) -> Kernel {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (4, 1, 1)
    grid (mul(cdiv(M, 64), 4), cdiv(N, 64), 1)
    smem 0
    tmem 0
    tensor src: bf16[M, N]
  var %0: u32 \"block\"
  buffer @tile: smem bf16 (64, 64):(64, 1) swizzle B128
  barrier @bar: count 1 arrivals 1
{{
  let %0 = ctaid.x / 4:u32
  scope thread 0 {{
    op mbar_arrive_expect_tx @bar[0:u32] bytes {arm}
    if {cond} {{
      op copy @tile <- global src[%0, ctaid.y] bar @bar[0:u32] multicast {mask}:u32 variant tma_load
    }}
  }}
  op mbar_wait @bar[0:u32] parity 0:u32
}}
"
        );
        parse_module(&text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .kernels
            .remove(0)
    }

    fn kinds(k: &Kernel) -> Vec<ProtocolError> {
        check(k)
            .into_iter()
            .map(|d| match d.kind {
                DiagKind::Protocol(p) => p,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn one_issuer_for_four_receivers_is_proven() {
        assert!(kinds(&kernel(8192, "cluster_ctarank == 0:u32", 15)).is_empty());
    }

    #[test]
    fn each_issuer_whose_mask_includes_a_rank_counts() {
        // Ranks 0 and 1 both multicast to all four: each receives two boxes.
        let cond = "cluster_ctarank < 2:u32";
        assert!(kinds(&kernel(16384, cond, 15)).is_empty());
        let errs = kinds(&kernel(8192, cond, 15));
        assert!(
            matches!(
                errs.as_slice(),
                [ProtocolError::MulticastBytes {
                    rank: 0,
                    expected: 8192,
                    received: 16384,
                    ..
                }]
            ),
            "{errs:?}"
        );
    }

    #[test]
    fn an_uncovered_rank_and_an_unprovable_if_are_refused() {
        let errs = kinds(&kernel(8192, "cluster_ctarank == 0:u32", 3));
        assert!(
            matches!(errs.as_slice(), [ProtocolError::MulticastUncovered { uncovered, .. }] if uncovered == "2, 3"),
            "{errs:?}"
        );
        let errs = kinds(&kernel(8192, "ctaid.y == 0:u32", 15));
        assert!(
            matches!(errs.as_slice(), [ProtocolError::MulticastUnproven { .. }]),
            "{errs:?}"
        );
    }
}
