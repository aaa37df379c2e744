//! The verifier: structural invariants every pass must preserve.
//!
//! Checks that every handle is in range, that buffer/barrier names are unique, and that the
//! statements fit the kernel's phase (`Thread`: no tile ops; `Ptx`: no scopes or ops, atoms
//! only). Scope rules are checked once, by the `verify-scopes` pass, on the user's scopes.

mod error;
pub mod scope;

pub use error::VerifyError;

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{BarRef, Expr, Kernel, Op, Operand, Phase, Stmt, StmtKind, TileRef, VotePred};
use crate::passes::walk::visit;
use std::collections::HashSet;

/// Verifies `k`, reporting every problem found.
pub fn verify(k: &Kernel) -> Result<(), Diagnostics> {
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (_, b) in k.buffers.iter() {
        if !names.insert(b.name.clone()) {
            errs.push(Diagnostic::new(
                b.span,
                VerifyError::DeclaredTwice {
                    name: b.name.clone(),
                },
            ));
        }
        if b.layout.shape.len() != b.layout.stride.len() {
            errs.push(Diagnostic::new(
                b.span,
                VerifyError::StrideRank {
                    buffer: b.name.clone(),
                },
            ));
        }
    }
    for (_, b) in k.barriers.iter() {
        if !names.insert(b.name.clone()) {
            errs.push(Diagnostic::new(
                b.span,
                VerifyError::DeclaredTwice {
                    name: b.name.clone(),
                },
            ));
        }
    }
    for (_, p) in k.pipelines.iter() {
        if !k.barriers.contains(p.full) || !k.barriers.contains(p.empty) {
            errs.push(Diagnostic::new(
                p.span,
                VerifyError::PipelineBarrier {
                    pipeline: p.name.clone(),
                },
            ));
        }
    }
    visit(&k.body, &mut |s, _| check_stmt(k, s, &mut errs));
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

fn check_stmt(k: &Kernel, s: &Stmt, errs: &mut Diagnostics) {
    let mut bad = |e: VerifyError| errs.push(Diagnostic::new(s.span, e));
    let mut exprs: Vec<&Expr> = Vec::new();
    match &s.kind {
        StmtKind::Let { var, value } | StmtKind::Assign { var, value } => {
            if !k.vars.contains(*var) {
                bad(VerifyError::Var { index: var.index() });
            }
            exprs.push(value);
        }
        StmtKind::If { cond, .. } => exprs.push(cond),
        StmtKind::For {
            var,
            start,
            end,
            step,
            ..
        } => {
            if !k.vars.contains(*var) {
                bad(VerifyError::Var { index: var.index() });
            }
            exprs.extend([start, end, step]);
        }
        StmtKind::Loop { until, .. } => {
            if !k.vars.contains(*until) {
                bad(VerifyError::Var {
                    index: until.index(),
                });
            }
        }
        StmtKind::Scope { .. } => {
            if k.phase == Phase::Ptx {
                bad(VerifyError::ScopeInPtx);
            }
        }
        StmtKind::Op(op) => {
            if k.phase == Phase::Ptx {
                bad(VerifyError::OpInPtx {
                    op: format!("{op:?}"),
                });
            } else if k.phase == Phase::Thread && is_tile_op(op) {
                bad(VerifyError::TileOpInThread {
                    op: format!("{op:?}"),
                });
            }
            op_exprs(k, op, &mut exprs, &mut bad);
        }
        StmtKind::Inst(i) => {
            for o in i.dsts.iter().chain(&i.srcs).chain(i.guard.iter()) {
                check_operand(k, o, &mut bad);
            }
        }
    }
    for e in exprs {
        if k.phase == Phase::Ptx && !e.is_atom() {
            bad(VerifyError::NonAtomic {
                expr: format!("{e:?}"),
            });
        }
        check_expr(k, e, &mut bad);
    }
}

fn is_tile_op(op: &Op) -> bool {
    matches!(
        op,
        Op::Copy { .. }
            | Op::Mma { .. }
            | Op::ProducerAcquire { .. }
            | Op::ConsumerWait { .. }
            | Op::ConsumerRelease { .. }
            | Op::Compute { .. }
            | Op::Reduce { .. }
            | Op::WarpVote { .. }
    )
}

fn op_exprs<'a>(
    k: &Kernel,
    op: &'a Op,
    exprs: &mut Vec<&'a Expr>,
    bad: &mut dyn FnMut(VerifyError),
) {
    let tile = |t: &'a TileRef, exprs: &mut Vec<&'a Expr>, bad: &mut dyn FnMut(VerifyError)| match t
    {
        TileRef::Buf { buf, index } => {
            if !k.buffers.contains(*buf) {
                bad(VerifyError::Buffer { index: buf.index() });
            }
            exprs.extend(index.iter());
        }
        TileRef::Global {
            tensor,
            coords,
            elements,
        } => {
            if !k.sig.tensors.iter().any(|t| &t.name == tensor) {
                bad(VerifyError::UnknownTensor {
                    tensor: tensor.clone(),
                });
            }
            exprs.extend(coords.iter());
            exprs.extend(elements.iter().flat_map(|b| b.0.iter()));
        }
    };
    let barref = |b: &'a BarRef, exprs: &mut Vec<&'a Expr>, bad: &mut dyn FnMut(VerifyError)| {
        if !k.barriers.contains(b.bar) {
            bad(VerifyError::Barrier {
                index: b.bar.index(),
            });
        }
        exprs.push(&b.index);
    };
    match op {
        Op::Copy {
            dst,
            src,
            bar,
            multicast,
            atomic,
            ..
        } => {
            exprs.extend(multicast.iter());
            tile(dst, exprs, bad);
            tile(src, exprs, bad);
            if let Some(old) = atomic.as_ref().and_then(|a| a.old.as_ref()) {
                tile(old, exprs, bad);
            }
            if let Some(b) = bar {
                barref(b, exprs, bad);
            }
        }
        Op::Mma {
            acc,
            a,
            b,
            accumulate,
            scale,
            ..
        } => {
            tile(acc, exprs, bad);
            tile(a, exprs, bad);
            tile(b, exprs, bad);
            if let Some(sc) = scale {
                tile(&sc.a, exprs, bad);
                tile(&sc.b, exprs, bad);
            }
            exprs.push(accumulate);
        }
        Op::ProducerAcquire { pipe, iter, .. } | Op::ConsumerWait { pipe, iter, .. } => {
            if !k.pipelines.contains(*pipe) {
                bad(VerifyError::Pipeline {
                    index: pipe.index(),
                });
            }
            exprs.push(iter);
        }
        Op::ConsumerRelease { pipe, stage } => {
            if !k.pipelines.contains(*pipe) {
                bad(VerifyError::Pipeline {
                    index: pipe.index(),
                });
            }
            exprs.push(stage);
        }
        Op::MbarArrive { bar }
        | Op::MbarArriveExpectTx { bar, .. }
        | Op::Tcgen05Commit { bar, .. } => barref(bar, exprs, bad),
        Op::MbarWait { bar, parity } => {
            barref(bar, exprs, bad);
            exprs.push(parity);
        }
        Op::Tcgen05Shift { tile: t, .. } => tile(t, exprs, bad),
        Op::ClcTryCancel { resp, bar, .. } => {
            tile(resp, exprs, bad);
            barref(bar, exprs, bad);
        }
        Op::LoadScalar {
            dst, tensor, index, ..
        } => {
            if !k.sig.tensors.iter().any(|t| &t.name == tensor) {
                bad(VerifyError::UnknownTensor {
                    tensor: tensor.clone(),
                });
            }
            if !k.vars.contains(*dst) {
                bad(VerifyError::Var { index: dst.index() });
            }
            exprs.extend(index.iter());
        }
        Op::ClcIsCanceled { resp, dst } => {
            tile(resp, exprs, bad);
            if !k.vars.contains(*dst) {
                bad(VerifyError::Var { index: dst.index() });
            }
        }
        Op::ClcFirstCta { resp, dsts } => {
            tile(resp, exprs, bad);
            for d in dsts.iter().filter(|d| !k.vars.contains(**d)) {
                bad(VerifyError::Var { index: d.index() });
            }
        }
        Op::NamedBarrier { id, .. } => exprs.push(id),
        Op::WarpVote { dst, pred, .. } => {
            if !k.vars.contains(*dst) {
                bad(VerifyError::Var { index: dst.index() });
            }
            match pred {
                VotePred::Scalar(e) => exprs.push(e),
                VotePred::Tile { src, value } => {
                    let mut bufs = vec![*src];
                    value.tiles(&mut bufs);
                    for b in bufs.into_iter().filter(|b| !k.buffers.contains(*b)) {
                        bad(VerifyError::Buffer { index: b.index() });
                    }
                    value.exprs(exprs);
                }
            }
        }
        Op::Compute { dst, value } => {
            let mut bufs = vec![*dst];
            value.tiles(&mut bufs);
            for b in bufs.into_iter().filter(|b| !k.buffers.contains(*b)) {
                bad(VerifyError::Buffer { index: b.index() });
            }
            value.exprs(exprs);
        }
        Op::Reduce {
            dst,
            src,
            value,
            scratch,
            cluster_scratch,
            cluster_bar,
            ..
        } => {
            if let Some(b) = cluster_bar.filter(|b| !k.barriers.contains(*b)) {
                bad(VerifyError::Barrier { index: b.index() });
            }
            let mut bufs: Vec<_> = [Some(*dst), Some(*src), *scratch, *cluster_scratch]
                .into_iter()
                .flatten()
                .collect();
            if let Some(v) = value {
                v.tiles(&mut bufs);
                v.exprs(exprs);
            }
            for b in bufs.into_iter().filter(|b| !k.buffers.contains(*b)) {
                bad(VerifyError::Buffer { index: b.index() });
            }
        }
        Op::MbarInit { bar } if !k.barriers.contains(*bar) => {
            bad(VerifyError::Barrier { index: bar.index() });
        }
        Op::TmemAlloc { buf, .. } | Op::TmemDealloc { buf, .. } if !k.buffers.contains(*buf) => {
            bad(VerifyError::Buffer { index: buf.index() });
        }
        _ => {}
    }
}

fn check_expr(k: &Kernel, e: &Expr, bad: &mut dyn FnMut(VerifyError)) {
    match e {
        Expr::Var(v) => {
            if !k.vars.contains(*v) {
                bad(VerifyError::Var { index: v.index() });
            }
        }
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::AndP(a, b) => {
            check_expr(k, a, bad);
            check_expr(k, b, bad);
        }
        Expr::Not(a) => check_expr(k, a, bad),
        Expr::Imm(..) | Expr::Dim(_) | Expr::Special(_) => {}
    }
}

fn check_operand(k: &Kernel, o: &Operand, bad: &mut dyn FnMut(VerifyError)) {
    match o {
        Operand::Reg(v) | Operand::NotReg(v) => {
            if !k.vars.contains(*v) {
                bad(VerifyError::Register { index: v.index() });
            }
        }
        Operand::Mem(b, _) => check_operand(k, b, bad),
        Operand::TensorMem(m, cs) => {
            check_operand(k, m, bad);
            cs.iter().for_each(|c| check_operand(k, c, bad));
        }
        Operand::Vector(vs) => vs.iter().for_each(|c| check_operand(k, c, bad)),
        Operand::Pair(a, b) => {
            check_operand(k, a, bad);
            check_operand(k, b, bad);
        }
        Operand::Imm(_) | Operand::F32Bits(_) | Operand::Sym(_) => {}
    }
}
