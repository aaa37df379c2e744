//! `tmem_load` / `tmem_store` — a register tile to and from tensor memory (sm_100a): the
//! register side of a softmax, a correction or an epilogue that computes before it stores,
//! in every data-movement shape (PTX ISA §9.7.16.2.3) and with 16-bit tiles packed.
//!
//! When: `copy(t, acc)` (load) or `copy(acc, t)` (store), run by whole aligned warpgroups
//! (each moves its own tile: a scope of k warpgroups holds k register tiles), with
//! `acc` a `tmem::<E>([128, C])` or a stage `acc[s]` of a `tmem::<E>([S, 128, C])` and `t` a
//! `regs::<T>([128, C], layout = tmem_<shape>)`, `<shape>` one of `32x32b`, `16x64b`,
//! `16x128b`, `16x256b`, `16x32bx2` (the layouts of `ir::TmemShape`: which thread holds which
//! (lane, column), from the ISA's fragment figures, §9.7.16.8.3). The forms:
//! - `T = E = f32`: one element per 32-bit cell, the instruction of the layout's shape.
//! - `T = E = bf16|f16` (a 16-bit TMEM buffer: C/2 columns, two elements per 32-bit cell, the
//!   lower column in the low half — what `tcgen05.mma` reads as an A operand from TMEM):
//!   register pairs of adjacent columns packed into words (`mov.b32 w, {lo, hi}`) and moved
//!   with the shape whose 32-bit map is the pairs' (`TmemShape::word_shape`: `16x256b`
//!   tiles move as `16x128b` words; `32x32b`, `16x32bx2` keep their shape).
//! - `T = bf16|f16`, `E = f32`, or `T = E = f16` of an unpacked TMEM tile (an f16
//!   accumulator, `unpacked = true`): one element per 32-bit cell, in its low 16 bits: the same
//!   words moved with `.unpack::16b` (store) / `.pack::16b` (load), §9.7.16.2.4 packing formats.
//!
//! Warp w accesses TMEM lanes 32·(w%4) … +31, the only lanes it may (§9.7.16.8.1, access
//! restrictions); a 16-lane shape issues each chunk twice, from lanes +0 and +16.
//! Before: `copy @t <- @acc[%s]`
//! After (per thread, per 16- or 32-lane half, per chunk of ≤ 32 registers): the TMEM address
//! from the buffer's slot (lane in bits 31–16, column in 15–0, §9.7.16.1.1), then
//! `tcgen05.ld.sync.aligned.<shape>.xN{.pack::16b}.b32 {r…}, [taddr]{, split}` and
//! `tcgen05.wait::ld.sync.aligned` (§9.7.16.8.3, §9.7.16.8.5) — the tile's registers hold the
//! values when the copy is done — or `tcgen05.st.sync.aligned.<shape>.xN{.unpack::16b}.b32
//! [taddr]{, split}, {r…}` and `tcgen05.wait::st.sync.aligned` (§9.7.16.8.4, §9.7.16.8.5), so a
//! later MMA or load sees the stored cells. `16x32bx2` passes `immHalfSplitoff` = half the
//! row's columns. A load starts with `tcgen05.fence::after_thread_sync` (§9.7.16.6.4),
//! ordering it after the thread synchronisation (the mbarrier wait) that observed the MMA's
//! commit.
//! PTX used: PTX ISA §9.7.16.8.3 (tcgen05.ld), §9.7.16.8.4 (tcgen05.st), §9.7.16.8.5
//! (tcgen05.wait), §9.7.16.6.4 (tcgen05.fence), §9.7.16.2.3 (shapes), §9.7.16.2.4 (packing),
//! §9.7.9.21 (`mov.b32` packing two halves).

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{BinOp, Expr, Inst, Kernel, Op, ScalarType, Space, Special, TileRef, TmemShape};
use crate::lower::{Lower, add, mul};

/// TMEM → register tile.
pub static LOAD: Variant<CopyVariant> = Variant {
    id: CopyVariant::TmemLoad,
    priority: 9,
    applies: applies_load,
    lower: lower_load,
};

/// Register tile → TMEM.
pub static STORE: Variant<CopyVariant> = Variant {
    id: CopyVariant::TmemStore,
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

/// How the element of a 32-bit TMEM cell and of a register relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// f32 tile, f32 cells.
    Plain,
    /// 16-bit tile, two elements per cell (a 16-bit TMEM buffer).
    Packed,
    /// 16-bit tile, one element per cell (`.pack::16b` / `.unpack::16b`).
    Spread,
}

/// What the lowering issues, decided once from the two sides.
#[derive(Clone, Copy, Debug)]
struct Plan {
    /// The instruction's shape (on 32-bit words).
    shape: TmemShape,
    form: Form,
    /// Halves of a warp's 32 lanes the shape covers one at a time (1 or 2).
    halves: u32,
    /// Registers (words) per instruction.
    chunk: u32,
    /// Words per row of the tile.
    row_words: u32,
}

impl Plan {
    /// Physical TMEM columns per word column.
    fn unit(&self) -> u32 {
        if self.form == Form::Spread { 2 } else { 1 }
    }
}

fn applies(cx: &Cx, store: bool) -> Result<(), Reject> {
    let (tile, other) = super::reg_sides(cx, store)?;
    if !cx.k.target().has_tcgen05() {
        return Err(Reject::NoTmem {
            target: cx.k.target(),
        });
    }
    plan(cx.k, tile, other)?;
    // Each warpgroup of the scope moves its own tile (its warp w at lanes 32·(w%4)…): FA4's
    // two softmax warpgroups run one copy of the code over their two S tiles.
    if !cx.threads.is_whole_warpgroups() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "tcgen05.ld/st need whole warpgroups (`#[scope(warpgroup = G)]` or `warpgroups = A..B`)",
        });
    }
    Ok(())
}

/// The TMEM side's rows, columns, element type and whether it is an unpacked 16-bit tile
/// (one element to a cell, `Buffer::tmem_unpacked`): an f32 accumulator (stage) as the MMA
/// paths take it, or a 16-bit TMEM buffer (stage).
type TmemSide = (u32, u32, crate::abi::ElemType, bool);

fn tmem_side(k: &Kernel, t: &TileRef) -> Result<TmemSide, Reject> {
    if let TileRef::Buf { buf, index } = t {
        let b = &k.buffers[*buf];
        let lead = b.layout.shape.len().saturating_sub(2);
        if b.space == Space::Tmem && b.elem.bytes() == 2 && index.len() == lead {
            let (m, c) = (b.layout.shape[lead], b.layout.shape[lead + 1]);
            return Ok((m, c, b.elem, b.tmem_unpacked()));
        }
    }
    let (b, m, c) = crate::dispatch::mma::accumulator(k, t, Space::Tmem)?;
    Ok((m, c, b.elem, false))
}

fn plan(k: &Kernel, tile: &TileRef, tmem: &TileRef) -> Result<Plan, Reject> {
    use crate::abi::ElemType;
    let (m, c, tmem_elem, unpacked) = tmem_side(k, tmem)?;
    // The pair's M = 128 half (Layout B) folds its columns over the lanes; a register tile
    // moves it through a `[128, N / 2]` view of its cells.
    if let TileRef::Buf { buf, .. } = tmem
        && k.buffers[*buf].tmem_pair_half()
    {
        return Err(Reject::PairHalfRegs {
            buffer: k.buffers[*buf].name.clone(),
            n: c,
        });
    }
    if m != 128 {
        return Err(Reject::TmemEpilogueShape { m, n: c, chunk: 32 });
    }
    let TileRef::Buf { buf, .. } = tile else {
        return Err(Reject::RegTile {
            why: "the register side is not a register tile".into(),
        });
    };
    let b = &k.buffers[*buf];
    let layout =
        crate::regtile::layout(k, *buf).map_err(|e| Reject::RegTile { why: e.to_string() })?;
    let shape = TmemShape::ALL
        .into_iter()
        .find(|s| s.layout(c).as_ref() == Ok(&layout));
    let wide = matches!(b.elem, ElemType::Bf16 | ElemType::F16);
    let form = match (b.elem, tmem_elem) {
        (ElemType::F32, ElemType::F32) => Some(Form::Plain),
        // An unpacked 16-bit tile (an f16 accumulator) holds its elements as an f32
        // tile's cells hold their low halves.
        (e, t) if wide && e == t && unpacked => Some(Form::Spread),
        (e, t) if wide && e == t => Some(Form::Packed),
        (_, ElemType::F32) if wide => Some(Form::Spread),
        _ => None,
    };
    let (Some(shape), Some(form), true) = (shape, form, b.layout.shape == [128, c]) else {
        let t = if tmem_elem == ElemType::F32 {
            "f32|bf16|f16"
        } else {
            tmem_elem.name()
        };
        return Err(Reject::RegTile {
            why: format!(
                "`{}` must be `regs::<{t}>([128, {c}], layout = tmem_<shape>)`, a fragment tcgen05.ld/st moves (shapes 32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2)",
                b.name
            ),
        });
    };
    let wshape = if form == Form::Plain {
        Some(shape)
    } else {
        shape.word_shape()
    };
    let Some(wshape) = wshape else {
        return Err(Reject::RegTile {
            why: format!(
                "a 16-bit tile moves as words of two column-adjacent elements; `tmem_{}` gives no thread such pairs (use tmem_32x32b, tmem_16x256b or tmem_16x32bx2)",
                shape.name()
            ),
        });
    };
    let row_words = if form == Form::Plain { c } else { c / 2 };
    let halves = 32 / wshape.lanes();
    // Words each thread holds per half, moved in instructions of at most 32 registers whose
    // `.num` is a power of two.
    let words = row_words * wshape.lanes() / 32;
    let chunk = words.min(32);
    let num = chunk / wshape.regs_per_rep();
    if row_words % wshape.cols_per_rep() != 0
        || words % chunk != 0
        || num == 0
        || !num.is_power_of_two()
    {
        return Err(Reject::TmemEpilogueShape { m, n: c, chunk: 32 });
    }
    Ok(Plan {
        shape: wshape,
        form,
        halves,
        chunk,
        row_words,
    })
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

fn sides(op: &Op, store: bool) -> Option<(&TileRef, &TileRef)> {
    let Op::Copy { dst, src, .. } = op else {
        return None;
    };
    let (tile, tmem) = if store { (src, dst) } else { (dst, src) };
    match tile {
        TileRef::Buf { .. } => Some((tmem, tile)),
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
    let p = plan(lw.k, tile, tmem).map_err(|e| lw.internal(e.to_string()))?;
    let TileRef::Buf { buf, .. } = tile else {
        return Err(lw.internal("tmem_regs without a register tile"));
    };
    let regs = crate::regtile::frag(lw, *buf)?;
    if !store {
        lw.op(Op::Tcgen05FenceAfter);
    }
    let words = if p.form == Form::Plain {
        regs.clone()
    } else {
        let w: Vec<_> = (0..regs.len() / 2)
            .map(|_| lw.var("w", ScalarType::U32))
            .collect();
        if store {
            for (i, &wd) in w.iter().enumerate() {
                lw.inst(Inst::pack_b32(wd, regs[2 * i], regs[2 * i + 1]));
            }
        }
        w
    };
    let taddr = lane_address(lw, tmem)?;
    move_words(lw, &p, taddr, &words, store);
    if store {
        lw.inst(Inst::tcgen05_wait_st());
    } else {
        lw.inst(Inst::tcgen05_wait_ld());
        if p.form != Form::Plain {
            for (i, &wd) in words.iter().enumerate() {
                lw.inst(Inst::unpack_b32(regs[2 * i], regs[2 * i + 1], wd));
            }
        }
    }
    Ok(())
}

/// The `tcgen05.ld`/`st` instructions of one thread's words: per half of the warp's lanes,
/// per chunk, at the chunk's lane and column.
fn move_words(
    lw: &mut Lower,
    p: &Plan,
    taddr: crate::arena::Handle<crate::ir::Var>,
    words: &[crate::arena::Handle<crate::ir::Var>],
    store: bool,
) {
    let per_half = words.len() / p.halves as usize;
    let split = p.row_words / 2 * p.unit();
    // Word columns one chunk spans (per half for 16x32bx2).
    let step = p.chunk / p.shape.regs_per_rep() * p.shape.width() * p.unit();
    for (h, half) in words.chunks(per_half).enumerate() {
        for (c, part) in half.chunks(p.chunk as usize).enumerate() {
            let off = ((h as u32 * 16) << 16) + c as u32 * step;
            let ta = lw.let_("ta", ScalarType::U32, add(Expr::Var(taddr), Expr::u32(off)));
            let spread = p.form == Form::Spread;
            lw.inst(if store {
                Inst::tcgen05_st(p.shape, spread, ta, part, split)
            } else {
                Inst::tcgen05_ld(p.shape, spread, part, ta, split)
            });
        }
    }
}
