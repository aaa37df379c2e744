//! `tmem_load` / `tmem_store` — a register tile to and from tensor memory (sm_100a): the
//! register side of a softmax, a correction or an epilogue that computes before it stores.
//!
//! When: `copy(t, acc)` (load) or `copy(acc, t)` (store) with `acc` a `tmem::<f32>([128, C])`
//! or a stage `acc[s]` of a `tmem::<f32>([S, 128, C])`, and `t` a `regs::<f32>([128, C],
//! layout = tmem_32x32b)`, run by one aligned warpgroup; `C` a multiple of 32, or 1, 2, 4, 8 or
//! 16. Warp w of the warpgroup accesses TMEM lanes 32·(w%4) … +31, the only lanes it may (PTX
//! ISA §9.7.16.8.1, access restrictions), and thread `t` holds row `t` — the layout
//! `tmem_32x32b` is exactly what the 32x32b shape moves (§9.7.16.8.3: thread i of the warp
//! reads or writes lane base+i, register j column j).
//! Before: `copy @t <- @acc[%s]`
//! After (per thread, per chunk of min(C, 32) columns): the TMEM address from the buffer's
//! slot (lane 32·(w%4) in bits 31–16, column in 15–0, §9.7.16.1.1), then
//! `tcgen05.ld.sync.aligned.32x32b.xN.b32 {t_j…}, [taddr]` and `tcgen05.wait::ld.sync.aligned`
//! (§9.7.16.8.5) — the tile's registers hold the values when the copy is done — or
//! `tcgen05.st.sync.aligned.32x32b.xN.b32 [taddr], {t_j…}` and `tcgen05.wait::st.sync.aligned`
//! (§9.7.16.8.4, §9.7.16.8.5), so a later MMA or load sees the stored cells. A load starts
//! with `tcgen05.fence::after_thread_sync` (§9.7.16.6.4), ordering it after the thread
//! synchronisation (the mbarrier wait) that observed the MMA's commit.

use crate::diag::Diagnostics;
use crate::dispatch::{Cx, Reject, Variant};
use crate::ir::{BinOp, Expr, Inst, Op, RegLayout, ScalarType, Space, Special, TileRef};
use crate::lower::{Lower, add, mul};

/// TMEM → register tile.
pub static LOAD: Variant = Variant {
    name: "tmem_load",
    priority: 9,
    applies: applies_load,
    lower: lower_load,
};

/// Register tile → TMEM.
pub static STORE: Variant = Variant {
    name: "tmem_store",
    priority: 9,
    applies: applies_store,
    lower: lower_store,
};

fn applies_load(cx: &Cx) -> Result<(), Reject> {
    applies(cx, false)
}

fn applies_store(cx: &Cx) -> Result<(), Reject> {
    applies(cx, true)
}

/// The columns one instruction moves.
fn chunk(c: u32) -> u32 {
    c.min(32)
}

fn applies(cx: &Cx, store: bool) -> Result<(), Reject> {
    let (tile, other) = super::reg_sides(cx, store)?;
    if !cx.k.target().has_tcgen05() {
        return Err(Reject::NoTmem {
            target: cx.k.target(),
        });
    }
    let (_, m, c) = crate::dispatch::mma::accumulator(cx.k, other, Space::Tmem)?;
    if m != 128 || !(c % 32 == 0 || matches!(c, 1 | 2 | 4 | 8 | 16)) {
        return Err(Reject::TmemEpilogueShape { m, n: c, chunk: 32 });
    }
    let TileRef::Buf { buf, .. } = tile else {
        return Err(Reject::RegTile {
            why: "the register side is not a register tile".into(),
        });
    };
    let b = &cx.k.buffers[*buf];
    let want = RegLayout::tmem_32x32b(c);
    let layout =
        crate::regtile::layout(cx.k, *buf).map_err(|e| Reject::RegTile { why: e.to_string() })?;
    if b.layout.shape != [128, c] || layout != want || b.elem != crate::abi::ElemType::F32 {
        return Err(Reject::RegTile {
            why: format!(
                "`{}` must be `regs::<f32>([128, {c}], layout = tmem_32x32b)`, the fragment tcgen05.ld/st.32x32b moves",
                b.name
            ),
        });
    }
    if !cx.threads.is_one_warpgroup() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "tcgen05.ld/st need one whole warpgroup (`#[scope(warpgroup = G)]`)",
        });
    }
    Ok(())
}

/// The TMEM address of this thread's lane quarter at the tile's (or stage's) first column.
fn lane_address(
    lw: &mut Lower,
    tmem: &TileRef,
) -> Result<crate::arena::Handle<crate::ir::Var>, Diagnostics> {
    let TileRef::Buf { buf, index } = tmem else {
        return Err(lw.internal("tmem_regs on a non-buffer TMEM side"));
    };
    let base = super::tmem_epilogue::tmem_base(lw, *buf, index)?;
    let quarter = Expr::bin(BinOp::Rem, Expr::Special(Special::WarpId), Expr::u32(4));
    let lane = Expr::bin(BinOp::Shl, mul(quarter, Expr::u32(32)), Expr::u32(16));
    Ok(lw.let_("tlane", ScalarType::U32, add(Expr::Var(base), lane)))
}

fn sides(op: &Op, store: bool) -> Option<(&TileRef, crate::arena::Handle<crate::ir::Buffer>)> {
    let Op::Copy { dst, src, .. } = op else {
        return None;
    };
    let (tile, tmem) = if store { (src, dst) } else { (dst, src) };
    match tile {
        TileRef::Buf { buf, .. } => Some((tmem, *buf)),
        TileRef::Global { .. } => None,
    }
}

fn lower_load(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    lower(lw, op, false)
}

fn lower_store(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    lower(lw, op, true)
}

fn lower(lw: &mut Lower, op: &Op, store: bool) -> Result<(), Diagnostics> {
    let (tmem, tile) = sides(op, store).ok_or_else(|| lw.internal("tmem_regs on another op"))?;
    let regs = crate::regtile::frag(lw, tile)?;
    if !store {
        lw.op(Op::Tcgen05FenceAfter);
    }
    let taddr = lane_address(lw, tmem)?;
    let n = chunk(regs.len() as u32);
    for (c, part) in regs.chunks(n as usize).enumerate() {
        let ta = lw.let_(
            "ta",
            ScalarType::U32,
            add(Expr::Var(taddr), Expr::u32(c as u32 * n)),
        );
        if store {
            lw.inst(Inst::tcgen05_st_32x32b(ta, part));
        } else {
            lw.inst(Inst::tcgen05_ld_32x32b(part, ta));
        }
    }
    lw.inst(if store {
        Inst::tcgen05_wait_st()
    } else {
        Inst::tcgen05_wait_ld()
    });
    Ok(())
}
