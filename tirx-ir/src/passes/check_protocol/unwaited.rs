//! Pipeline stages read in a loop that never waits for them.
//!
//! A pipeline's consumer may read a stage only after its full barrier says the producer's TMA
//! bytes have landed: `consumer_wait(k)` waits on it (PTX ISA §9.7.13.15.16 the wait,
//! §9.7.9.25.5.1 the bulk tensor copy that signals `complete_tx`). A read — an MMA operand, a
//! copy's source (registers, a TMA store) — of a buffer that TMA loads signalling a pipeline's
//! full barrier fill, in a loop whose iterations read different stages (the buffer's leading
//! index reads something the loop changes) and that may run more rounds than the pipeline has
//! stages, in a loop with no `consumer_wait` of that pipeline (nor a wait on its full
//! barriers) anywhere in its body, is an error at the read: a consumer that skips the stage's
//! wait reads, from the second round on, bytes the producer may still be writing.
//!
//! This is the consumer's mirror of [`super::refill`]. A wait before the loop does not cover
//! it (the kernel-wide missing-wait rule of [`super::order`] accepts that: it sees a wait on
//! the barrier), and neither does one in an enclosing loop. A wait on some iterations only
//! (under an `if`), or one for a different stage than the one read, is not judged here.

use super::refill::more_than;
use super::{ProtocolError, changed_in, invariant};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{Buffer, Completion, Expr, Kernel, Op, Stmt, StmtKind, TileRef};
use crate::passes::walk::visit;

/// The rule over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (pipe, p) in k.pipelines.iter() {
        // The buffers the pipeline's producer fills (TMA loads signalling its full barrier).
        let mut filled: Vec<Handle<Buffer>> = Vec::new();
        visit(&k.body, &mut |s, _| {
            if let StmtKind::Op(Op::Copy {
                dst: TileRef::Buf { buf, .. },
                bar: Some(r),
                variant: Some(v),
                ..
            }) = &s.kind
                && v.completion() == Completion::TxBytes
                && r.bar == p.full
                && !filled.contains(buf)
            {
                filled.push(*buf);
            }
        });
        if filled.is_empty() {
            continue;
        }
        visit(&k.body, &mut |s, _| {
            let (var, body, rounds) = match &s.kind {
                StmtKind::For {
                    var,
                    start,
                    end,
                    step,
                    body,
                } => (Some(*var), body, more_than(start, end, step, p.stages)),
                StmtKind::Loop { body, .. } => (None, body, true),
                _ => return,
            };
            if !rounds || waits(body, pipe, p.full) {
                return;
            }
            let mut changed: Vec<_> = var.into_iter().collect();
            changed_in(body, &mut changed);
            visit(body, &mut |t, _| {
                let varying = reads(t).into_iter().find(|(b, index)| {
                    filled.contains(b) && index.first().is_some_and(|i| !invariant(i, &changed))
                });
                if let Some((buf, _)) = varying
                    && !out.iter().any(|d: &Diagnostic| d.span == t.span)
                {
                    let e = ProtocolError::StageReadWithoutWait {
                        pipe: p.name.clone(),
                        buffer: k.buffers[buf].name.clone(),
                        stages: p.stages,
                    };
                    out.push(Diagnostic::new(t.span, e));
                }
            });
        });
    }
    out
}

/// Whether `body` waits for a stage of `pipe` anywhere (a `consumer_wait`, or a wait on its
/// full barriers).
fn waits(
    body: &crate::ir::Block,
    pipe: Handle<crate::ir::Pipeline>,
    full: Handle<crate::ir::Barrier>,
) -> bool {
    let mut found = false;
    visit(body, &mut |s, _| {
        found |= match &s.kind {
            StmtKind::Op(Op::ConsumerWait { pipe: q, .. }) => *q == pipe,
            StmtKind::Op(Op::MbarWait { bar, .. }) => bar.bar == full,
            _ => false,
        };
    });
    found
}

/// The buffers an op reads (an MMA's operands, a copy's source), with their indices.
fn reads(s: &Stmt) -> Vec<(Handle<Buffer>, &Vec<Expr>)> {
    let tiles: Vec<&TileRef> = match &s.kind {
        StmtKind::Op(Op::Mma { a, b, .. }) => vec![a, b],
        StmtKind::Op(Op::Copy { src, .. }) => vec![src],
        _ => Vec::new(),
    };
    tiles
        .into_iter()
        .filter_map(|t| match t {
            TileRef::Buf { buf, index } => Some((*buf, index)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::DiagKind;
    use crate::parse::parse_module;

    /// A producer thread filling a 3-stage ring over K steps, and a consumer thread whose
    /// statements are `consumer` (`%2`–`%4` free): the rule's errors.
    fn kinds(consumer: &str) -> Vec<ProtocolError> {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 64
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  var %0: u32 \"k\"
  var %1: u32 \"s\"
  var %2: u32 \"s0\"
  var %3: u32 \"k\"
  var %4: u32 \"s\"
  buffer @ring: smem bf16 (3, 64, 64):(4096, 64, 1) swizzle B128
  barrier @pipe.full: count 3 arrivals 1
  barrier @pipe.empty: count 3 arrivals 1
  pipeline @pipe: stages 3 full @pipe.full empty @pipe.empty
{{
  scope thread 0 {{
    for %0 = 0:u32 to dim K step 1:u32 {{
      op producer_acquire @pipe iter %0 -> %1
      op copy @ring[%1] <- global a[0:u32, %0] bar @pipe.full[%1] variant tma_load
    }}
  }}
  scope thread 32 {{
{consumer}  }}
}}
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

    #[test]
    fn a_consumer_loop_that_skips_the_stage_wait_is_refused() {
        // One wait before the loop, then every stage read in it.
        let errs = kinds(
            "    op consumer_wait @pipe iter 0:u32 -> %2
    for %3 = 0:u32 to dim K step 1:u32 {
      op copy global a[0:u32, %3] <- @ring[%3 % 3:u32] variant tma_store
      op consumer_release @pipe stage %3 % 3:u32
    }
",
        );
        assert!(
            matches!(
                &errs[..],
                [ProtocolError::StageReadWithoutWait { pipe, buffer, stages: 3 }]
                    if pipe == "pipe" && buffer == "ring"
            ),
            "{errs:?}"
        );
    }

    #[test]
    fn a_wait_per_iteration_or_a_loop_within_one_round_is_accepted() {
        let waits = "    for %3 = 0:u32 to dim K step 1:u32 {
      op consumer_wait @pipe iter %3 -> %4
      op copy global a[0:u32, %3] <- @ring[%4] variant tma_store
      op consumer_release @pipe stage %4
    }
";
        assert_eq!(kinds(waits), vec![]);
        // Three iterations of a three-stage ring after one wait: each stage filled once (the
        // first round), not judged.
        let round = "    op consumer_wait @pipe iter 0:u32 -> %2
    for %3 = 0:u32 to 3:u32 step 1:u32 {
      op copy global a[0:u32, %3] <- @ring[%3] variant tma_store
    }
";
        assert_eq!(kinds(round), vec![]);
        // The stage read does not change in the loop (the chunks of one stage).
        let chunks = "    op consumer_wait @pipe iter 0:u32 -> %2
    for %3 = 0:u32 to dim K step 1:u32 {
      op copy global a[0:u32, %3] <- @ring[%2] variant tma_store
    }
";
        assert_eq!(kinds(chunks), vec![]);
    }
}
