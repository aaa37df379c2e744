//! lower-sync-ops — mbarrier, fence, bulk-group, wgmma-group and TMEM-allocation ops become
//! instructions.
//!
//! Phase: Thread. Preconditions: memory planned; no tile ops. Postconditions: no `Op`
//! remains. A wait is a spin loop on `mbarrier.try_wait.parity` (PTX ISA §9.7.13.15.16:
//! try_wait suspends for a system-dependent time, so the loop rarely spins). A multicast
//! `try_cancel` is guarded to the cluster's CTA of rank 0 (PTX ISA §9.7.13.17: one request
//! answers every CTA of the cluster); a response query loads the 16 bytes into a `.b128`
//! register first (§9.7.13.18 decodes registers, not memory).

use super::Pass;
use super::walk::rewrite_body;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BinOp, CmpOp, Expr, Inst, Kernel, Op, Operand, ScalarType as T, Special, Stmt, StmtKind,
    TileRef, Var,
};
use crate::lower::{Lower, add};
use std::collections::HashMap;

/// The pass.
pub struct LowerSyncOps;

fn operand(lw: &mut Lower, e: &Expr) -> Operand {
    match e {
        Expr::Imm(v, _) => Operand::Imm(*v),
        e => reg(lw.let_("x", T::U32, e.clone())),
    }
}

fn tmem_slot(
    lw: &mut Lower,
    buf: crate::arena::Handle<crate::ir::Buffer>,
) -> Result<(crate::arena::Handle<crate::ir::Var>, u32), Diagnostics> {
    let b = &lw.k.buffers[buf];
    let (slot, cols) = (b.offset, b.tmem_cols);
    let (Some(slot), Some(cols)) = (slot, cols) else {
        return Err(lw.internal("TMEM buffer not planned"));
    };
    Ok((
        lw.let_(
            "slot",
            T::U32,
            add(Expr::Special(Special::SmemBase), Expr::u32(slot)),
        ),
        cols,
    ))
}

/// `tcgen05::shift(t)`: one `tcgen05.shift.down` per 32-lane partition of the tile (PTX ISA
/// §9.7.16.9.3: the address's lane is aligned to 32, the implicit shape `.31x256b`,
/// §9.7.16.2.3), at the tile's (stage's) first column; the pair's is issued by the even CTA
/// only (§9.7.16.5), and shifts both CTAs' tensor memory.
fn lower_shift(lw: &mut Lower, tile: &TileRef, pair: bool) -> Result<(), Diagnostics> {
    let TileRef::Buf { buf, index } = tile else {
        return Err(lw.internal("tcgen05::shift of a tile outside tensor memory"));
    };
    let lanes = lw.k.buffers[*buf].tmem_tile().map_or(0, |(r, _)| r);
    let stage_col = crate::dispatch::mma::tmem_columns(&lw.k.buffers[*buf], index);
    let (slot, _) = tmem_slot(lw, *buf)?;
    let base = lw.var("taddr", T::U32);
    lw.inst(Inst::ld_shared_u32(base, slot, 0));
    let issuer = pair.then(|| lw.pair_issuer());
    for q in 0..lanes.div_ceil(32) {
        // Lane 32·q in bits 31-16 of the TMEM address (§9.7.16.1.1).
        let at = add(
            add(Expr::Var(base), stage_col.clone()),
            Expr::u32((32 * q) << 16),
        );
        let t = lw.let_("shift_at", T::U32, at);
        let mut i = Inst::tcgen05_shift(t, pair);
        i.guard = issuer.map(Operand::Reg);
        lw.inst(i);
    }
    Ok(())
}

/// The shared-window address of a response buffer, in a fresh variable.
fn resp_addr(lw: &mut Lower, resp: &TileRef) -> Result<Handle<Var>, Diagnostics> {
    let TileRef::Buf { buf, index } = resp else {
        return Err(lw.internal("a cluster-launch-control response outside shared memory"));
    };
    let e = lw.smem_addr(*buf, index)?;
    Ok(lw.let_("resp", T::U32, e))
}

/// `ld.shared.b128` of a response into a fresh register.
fn load_resp(lw: &mut Lower, resp: &TileRef) -> Result<Handle<Var>, Diagnostics> {
    let a = resp_addr(lw, resp)?;
    let q = lw.var("clc", T::B128);
    lw.inst(Inst::ld_shared_b128(q, a));
    Ok(q)
}

fn lower(lw: &mut Lower, op: Op) -> Result<(), Diagnostics> {
    let i = match op {
        Op::ClcTryCancel {
            resp,
            bar,
            multicast,
        } => {
            let a = resp_addr(lw, &resp)?;
            let m = lw.bar_addr_var(&bar)?;
            let i = Inst::clc_try_cancel(a, m, multicast);
            if !multicast {
                i
            } else {
                let rank0 = Expr::cmp(
                    CmpOp::Eq,
                    Expr::Special(Special::ClusterCtaRank),
                    Expr::u32(0),
                );
                let then_body = vec![Stmt::at(StmtKind::Inst(i), lw.span)];
                lw.emit(StmtKind::If {
                    cond: rank0,
                    then_body,
                    else_body: Vec::new(),
                });
                return Ok(());
            }
        }
        Op::LoadScalar {
            dst,
            tensor,
            index,
            oob_zero,
        } => {
            crate::regtile::gather::load_scalar(lw, dst, &tensor, &index, oob_zero)?;
            return Ok(());
        }
        Op::ClcIsCanceled { resp, dst } => {
            let q = load_resp(lw, &resp)?;
            Inst::clc_is_canceled(dst, q)
        }
        Op::ClcFirstCta { resp, dsts } => {
            let q = load_resp(lw, &resp)?;
            for (dim, d) in dsts.into_iter().enumerate() {
                lw.inst(Inst::clc_first_ctaid(dim, d, q));
            }
            return Ok(());
        }
        Op::MbarInit { bar } => {
            let (count, arrivals) = (lw.k.barriers[bar].count, lw.k.barriers[bar].arrivals);
            let a = lw.bar_addr_var(&crate::ir::BarRef {
                bar,
                index: Expr::u32(0),
            })?;
            for i in 0..count {
                lw.inst(Inst::mbarrier_init(a, 8 * i as i64, arrivals));
            }
            return Ok(());
        }
        Op::MbarArrive { bar } => Inst::mbarrier_arrive(lw.bar_addr_var(&bar)?),
        Op::MbarArriveExpectTx { bar, bytes } => {
            let bytes = bytes.ok_or_else(|| lw.internal("expect_tx without a byte count"))?;
            Inst::mbarrier_arrive_expect_tx(lw.bar_addr_var(&bar)?, bytes)
        }
        Op::MbarWait { bar, parity } => {
            let a = lw.bar_addr_var(&bar)?;
            let par = operand(lw, &parity);
            let done = lw.var("done", T::Pred);
            let body = vec![crate::ir::Stmt::at(
                StmtKind::Inst(Inst::mbarrier_try_wait_parity(done, a, par)),
                lw.span,
            )];
            lw.emit(StmtKind::Loop { body, until: done });
            return Ok(());
        }
        Op::FenceMbarrierInit => Inst::fence_mbarrier_init(),
        Op::FenceProxyAsync => Inst::fence_proxy_async(),
        Op::GridDepWait => Inst::griddepcontrol_wait(),
        Op::GridDepLaunch => Inst::griddepcontrol_launch_dependents(),
        Op::SyncThreads => Inst::bar_sync(),
        Op::TmaCommitGroup => Inst::cp_async_bulk_commit_group(),
        Op::TmaWaitGroup { n, read } => Inst::cp_async_bulk_wait_group(n, read),
        Op::TmemAlloc { buf, pair } => {
            let (slot, cols) = tmem_slot(lw, buf)?;
            Inst::tcgen05_alloc(slot, cols, pair)
        }
        Op::TmemRelinquish { pair } => Inst::tcgen05_relinquish_alloc_permit(pair),
        Op::TmemDealloc { buf, pair } => {
            let (slot, cols) = tmem_slot(lw, buf)?;
            let t = lw.var("taddr", T::U32);
            lw.inst(Inst::ld_shared_u32(t, slot, 0));
            Inst::tcgen05_dealloc(t, cols, pair)
        }
        Op::Tcgen05Shift { tile, pair } => {
            lower_shift(lw, &tile, pair)?;
            return Ok(());
        }
        Op::Tcgen05Commit {
            bar, pair: false, ..
        } => Inst::tcgen05_commit(lw.bar_addr_var(&bar)?),
        Op::Tcgen05Commit {
            bar,
            pair: true,
            multicast: Some(m),
        } => {
            // A mask of whole pairs (checked at the macro): the arrival in every CTA of it.
            let bar = lw.bar_addr_var(&bar)?;
            let mask = lw.let_("pair_mask", T::B16, Expr::u32(m));
            let issuer = lw.pair_issuer();
            let mut i = Inst::tcgen05_commit_pair(bar, mask);
            i.guard = Some(Operand::Reg(issuer));
            i
        }
        Op::Tcgen05Commit {
            bar, pair: true, ..
        } => {
            // The pair's CTAs are ranks 2k and 2k + 1 (§9.7.16.5): the mask `0b11 << (rank & !1)`
            // multicasts the arrival to the barrier's offset in both.
            let bar = lw.bar_addr_var(&bar)?;
            let even = Expr::bin(
                BinOp::And,
                Expr::Special(Special::ClusterCtaRank),
                Expr::u32(!1),
            );
            let wide = lw.let_(
                "pair_bits",
                T::U32,
                Expr::bin(BinOp::Shl, Expr::u32(3), even),
            );
            // The mask operand is 16 bits wide.
            let mask = lw.var("pair_mask", T::B16);
            lw.inst(Inst {
                opcode: "cvt.u16.u32".into(),
                dsts: vec![Operand::Reg(mask)],
                srcs: vec![Operand::Reg(wide)],
                guard: None,
            });
            let issuer = lw.pair_issuer();
            let mut i = Inst::tcgen05_commit_pair(bar, mask);
            i.guard = Some(Operand::Reg(issuer));
            i
        }
        Op::Tcgen05FenceBefore => Inst::tcgen05_fence(false),
        Op::Tcgen05FenceAfter => Inst::tcgen05_fence(true),
        Op::WgmmaFence => Inst::wgmma_fence(),
        Op::WgmmaCommit => Inst::wgmma_commit_group(),
        Op::WgmmaWait { n } => Inst::wgmma_wait_group(n),
        Op::SetMaxNReg { inc, count } => Inst::setmaxnreg(inc, count),
        Op::NamedBarrier {
            id,
            threads,
            arrive,
        } => {
            let id = operand(lw, &id);
            Inst::bar_named(id, threads, arrive)
        }
        Op::ClusterSync => {
            let [arrive, wait] = Inst::barrier_cluster();
            lw.inst(arrive);
            wait
        }
        other => return Err(lw.internal(format!("tile op reached lower-sync-ops: {other:?}"))),
    };
    lw.inst(i);
    Ok(())
}

impl Pass for LowerSyncOps {
    fn name(&self) -> &'static str {
        "lower-sync-ops"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut frags = HashMap::new();
        let data = crate::regtile::gather::data_vars(k);
        let rounds = HashMap::new();
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
            lower(&mut lw, op)?;
            Ok(lw.out)
        })
    }
}
