//! lower-tile-ops — tile ops become synchronisation ops and instructions (Tile → Thread).
//!
//! Phase: Tile → Thread. Preconditions: variants chosen, memory planned. Postconditions: no
//! `Copy`, `Mma` or pipeline op remains; the kernel starts with
//! 1. the register fragments of `regs::<f32>` accumulators, zeroed (so an empty K loop stores
//!    zeros, never garbage);
//! 2. the barrier prologue: thread 0 initialises every mbarrier with its arrival count and
//!    fences the inits (`fence.mbarrier_init`), then the CTA synchronises — declaring a
//!    barrier or pipeline is all a kernel writes;
//!
//! and each pipeline op becomes an mbarrier wait/arrive whose stage and parity derive from the
//! iteration counter: stage = iter mod S, phase parity = (iter div S) mod 2 (the waits of
//! loops that step by one were already given carried values by carry-stage-counters); the producer
//! waits on the opposite parity of the empty barrier, so its first pass through the ring
//! does not block (a fresh mbarrier's preceding phase counts as complete, PTX ISA
//! §9.7.13.15.16).

use super::Pass;
use super::walk::rewrite_body;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::dispatch::Table;
use crate::ir::{
    BarRef, Barrier, BinOp, Buffer, Expr, Inst, Kernel, Op, Phase, ScalarType, Scope, Space, Span,
    Stmt, StmtKind, Var,
};
use crate::lower::Lower;
use std::collections::HashMap;

/// The pass.
pub struct LowerTileOps;

fn stage_parity(k: &Kernel, pipe: Handle<crate::ir::Pipeline>, iter: &Expr) -> (Expr, Expr) {
    let s = k.pipelines[pipe].stages;
    let stage = Expr::bin(BinOp::Rem, iter.clone(), Expr::u32(s));
    let parity = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Div, iter.clone(), Expr::u32(s)),
        Expr::u32(1),
    );
    (stage, parity)
}

/// A pipeline wait on stage `index` with the counter's phase parity `parity`: binds `stage`
/// and waits on the stage's full barrier (a consumer) or, with the opposite parity, its empty
/// one (a producer). Shared with carry-stage-counters, which passes carried values.
pub(super) fn pipeline_wait(
    k: &Kernel,
    pipe: Handle<crate::ir::Pipeline>,
    producer: bool,
    stage: Handle<Var>,
    index: Expr,
    parity: Expr,
) -> [StmtKind; 2] {
    let p = &k.pipelines[pipe];
    let (bar, parity) = if producer {
        (p.empty, Expr::bin(BinOp::Xor, parity, Expr::u32(1)))
    } else {
        (p.full, parity)
    };
    [
        StmtKind::Let {
            var: stage,
            value: index,
        },
        StmtKind::Op(Op::MbarWait {
            bar: BarRef {
                bar,
                index: Expr::Var(stage),
            },
            parity,
        }),
    ]
}

fn lower_op(lw: &mut Lower, op: Op) -> Result<(), Diagnostics> {
    match &op {
        Op::Copy {
            variant: Some(v), ..
        } => (v.entry().lower)(lw, &op),
        Op::Mma {
            variant: Some(v), ..
        } => (v.entry().lower)(lw, &op),
        Op::Copy { .. } | Op::Mma { .. } => Err(lw.internal("copy/mma without a variant")),
        Op::Compute { dst, value } => crate::regtile::compute::lower(lw, *dst, value),
        Op::WarpVote { dst, kind, pred } => crate::regtile::vote::lower(lw, *dst, *kind, pred),
        Op::Reduce {
            dst,
            src,
            value,
            kind,
            axis,
            scratch,
            again,
            cluster: _,
            pull: _,
            cluster_scratch,
            cluster_bar,
        } => crate::regtile::reduce::lower(
            lw,
            &crate::regtile::reduce::Reduce {
                dst: *dst,
                src: *src,
                value: value.as_ref(),
                kind: *kind,
                axis: *axis as usize,
                scratch: *scratch,
                again: *again,
                cluster_scratch: *cluster_scratch,
                cluster_bar: *cluster_bar,
            },
        ),
        Op::ProducerAcquire { pipe, iter, stage } | Op::ConsumerWait { pipe, iter, stage } => {
            let producer = matches!(op, Op::ProducerAcquire { .. });
            let (st, parity) = stage_parity(lw.k, *pipe, iter);
            for kind in pipeline_wait(lw.k, *pipe, producer, *stage, st, parity) {
                lw.emit(kind);
            }
            Ok(())
        }
        Op::ConsumerRelease { pipe, stage } => {
            let (bar, peers) = (lw.k.pipelines[*pipe].empty, lw.k.pipelines[*pipe].peers);
            let r = BarRef {
                bar,
                index: stage.clone(),
            };
            if peers == 1 {
                lw.op(Op::MbarArrive { bar: r });
                return Ok(());
            }
            // Every peer's producer writes into this stage: arrive on each peer's empty
            // barrier (the same offset in their shared memory, PTX ISA §9.7.9.15 mapa).
            let local = lw.bar_addr_var(&r)?;
            for rank in 0..peers {
                let remote = lw.var("peer_bar", ScalarType::U32);
                lw.inst(Inst::mapa(
                    remote,
                    local,
                    crate::ir::Operand::Imm(rank as i64),
                ));
                lw.inst(Inst::mbarrier_arrive_remote(remote));
            }
            Ok(())
        }
        _ => {
            lw.op(op);
            Ok(())
        }
    }
}

fn prologue(k: &mut Kernel, frags: &mut HashMap<Handle<Buffer>, Vec<Handle<Var>>>) -> Vec<Stmt> {
    let mut pre = Vec::new();
    // Register tiles: their layout's registers per thread (a legacy accumulator without a
    // layout: the wgmma fragment's, elements / 128), f32 or b16 by element type.
    let regs: Vec<(Handle<Buffer>, u64, ScalarType, String)> = k
        .buffers
        .iter()
        .filter(|(_, b)| b.space == Space::Reg)
        .map(|(h, b)| {
            let n = match &b.regs {
                Some(l) => l.value_count() as u64,
                None => b.layout.elements() / 128,
            };
            let frag = b.layout.shape.len() == 2
                && b.regs.as_ref()
                    == crate::ir::RegLayout::wgmma_acc(b.layout.shape[0], b.layout.shape[1])
                        .ok()
                        .as_ref();
            let name = if b.regs.is_none() || frag {
                "acc"
            } else {
                &b.name
            };
            (h, n, crate::regtile::reg_type(b.elem), name.to_string())
        })
        .collect();
    let packed = crate::regtile::packed_tiles(k);
    let regs = regs.into_iter().map(|(h, n, ty, name)| {
        if packed.contains(&h) {
            (h, n / 2, ScalarType::U32, name)
        } else {
            (h, n, ty, name)
        }
    });
    for (h, n, ty, name) in regs {
        let vars: Vec<_> = (0..n).map(|_| k.new_var(name.clone(), ty)).collect();
        for &v in &vars {
            pre.push(Stmt::new(StmtKind::Let {
                var: v,
                value: Expr::Imm(0, ty),
            }));
        }
        frags.insert(h, vars);
    }
    let bars: Vec<_> = k.barriers.iter().map(|(h, _)| h).collect();
    if !bars.is_empty() {
        let mut init: Vec<Stmt> = bars
            .into_iter()
            .map(|bar| Stmt::new(StmtKind::Op(Op::MbarInit { bar })))
            .collect();
        init.push(Stmt::new(StmtKind::Op(Op::FenceMbarrierInit)));
        pre.push(Stmt::new(StmtKind::Scope {
            scope: Scope::Thread(0),
            body: init,
        }));
        // In a cluster, peers multicast into this CTA's buffers and arrive on its barriers:
        // every CTA's barriers must be initialised before any CTA proceeds.
        let sync = if cluster_size(k) > 1 {
            Op::ClusterSync
        } else {
            Op::SyncThreads
        };
        pre.push(Stmt::new(StmtKind::Op(sync)));
    }
    pre
}

/// The round counters of the cluster exchanges that run again (`Reduce` with `cluster_bar`
/// and `again`): one variable per receive barrier, set to 0 at the start of the kernel (after
/// the barrier prologue), counted up by each exchange (`regtile::reduce`).
fn exchange_rounds(k: &mut Kernel, pre: &mut Vec<Stmt>) -> HashMap<Handle<Barrier>, Handle<Var>> {
    let mut bars = Vec::new();
    super::walk::visit(&k.body, &mut |s, _| {
        if let StmtKind::Op(Op::Reduce {
            cluster_bar: Some(b),
            again: true,
            ..
        }) = &s.kind
        {
            bars.push(*b);
        }
    });
    let mut rounds = HashMap::new();
    for b in bars {
        let v = k.new_var("xround", ScalarType::U32);
        pre.push(Stmt::new(StmtKind::Let {
            var: v,
            value: Expr::Imm(0, ScalarType::U32),
        }));
        rounds.insert(b, v);
    }
    rounds
}

fn cluster_size(k: &Kernel) -> u32 {
    k.sig.cluster.iter().product()
}

impl Pass for LowerTileOps {
    fn name(&self) -> &'static str {
        "lower-tile-ops"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut frags = HashMap::new();
        let data = crate::regtile::gather::data_vars(k);
        let mut pre = prologue(k, &mut frags);
        let rounds = exchange_rounds(k, &mut pre);
        rewrite_body(k, &mut |k, s| {
            let StmtKind::Op(op) = s.kind else {
                return Ok(vec![s]);
            };
            let mut lw = Lower {
                k,
                out: Vec::new(),
                span: s.span,
                frags: &mut frags,
                data: &data,
                rounds: &rounds,
            };
            lower_op(&mut lw, op)?;
            Ok(lw.out)
        })?;
        let mut body: Vec<Stmt> = pre.into_iter().chain(std::mem::take(&mut k.body)).collect();
        // No CTA of a cluster may exit while a peer can still write into its shared memory or
        // arrive on its barriers. A `cluster_sync()` of the user's as the last statement of the
        // body (run by every thread: a top-level statement) already orders that; a second one
        // would only wait again.
        let ends_synced = matches!(
            body.last(),
            Some(Stmt {
                kind: StmtKind::Op(Op::ClusterSync),
                ..
            })
        );
        if cluster_size(k) > 1 && !ends_synced {
            body.push(Stmt::new(StmtKind::Op(Op::ClusterSync)));
        }
        k.body = body;
        k.phase = Phase::Thread;
        let _ = Span::NONE;
        Ok(())
    }
}
