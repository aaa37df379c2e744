//! `tmem_epilogue` — an f32 accumulator in tensor memory into a global tile, converted (or
//! `kind::i8`'s s32 accumulator, a `tmem::<i32>` tile, into an i32 tensor, its words as they
//! are; or an f16 accumulator, an unpacked `tmem::<f16>` tile, each cell's low half widened
//! by `cvt.f32.f16` and stored as an f32 one is).
//!
//! When: `copy(tensor.tile(m, n), acc)` with `acc` a `tmem::<f32>([128, N])` (N a multiple of
//! 32), or `acc[s]`, a stage of a `tmem::<f32>([S, 128, N])` (`s` may be a run-time value: the
//! stage's columns start `s·N` in), on sm_100a, run by one warpgroup: warp w reads TMEM lanes
//! 32·(w%4) … +31, the only lanes it may access (PTX ISA §9.7.16.8.1, access restrictions:
//! "The Tensor Memory of a CTA is divided into 4 equal chunks such that each warp of a
//! warpgroup in the CTA can access a chunk of the Tensor Memory. A lane of the Tensor Memory
//! can be accessed by a single warp in the warpgroup": warp 0 of a warpgroup lanes 0–31, warp 1
//! 32–63, warp 2 64–95, warp 3 96–127). Any aligned warpgroup satisfies it: its warps are
//! `4G … 4G+3`, so `w % 4` is the warp's rank in it; a scope of other warps is refused.
//! The CTA pair's half of an M = 128 D, `tmem::<f32>([64, N])` (N a multiple of 32; PTX ISA
//! §9.7.16.10.5.2, Layout B, the 2x2 data path: column `n < N / 2` of row `m` in lane `m`,
//! column `n ≥ N / 2` in lane `64 + m`, both at TMEM column `n mod N / 2`), is read the
//! same way over its 128 lanes and `N / 2` columns: warp quarter q stores rows
//! `32·(q % 2) + lane` of columns `(q / 2)·N / 2 …` (`Buffer::tmem_pair_half`).
//! Before: `copy global d[%m, %n] <- @acc`
//! After: per thread (row = 32·(warp%4) + lane): for each 32-column chunk,
//! `tcgen05.ld.sync.aligned.32x32b.x32.b32`, `tcgen05.wait::ld`, then per column a
//! bounds-checked `cvt.rn.bf16.f32` + `st.global.b16` (tails: rows ≥ M, columns ≥ N skipped).
//! PTX used: PTX ISA §9.7.16.8.3 (tcgen05.ld, shape 32x32b: thread i of the warp reads lane
//! base+i), §9.7.16.8.5 (tcgen05.wait), §9.7.16.6.4 (tcgen05.fence), §9.7.16.1.1 (TMEM
//! addresses: lane in bits 31–16, column in 15–0).

use super::RowStore;
use crate::abi::ElemType;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{BinOp, Expr, Inst, Op, ScalarType, Special, TileRef};
use crate::lower::{Lower, LowerError, add, mul};

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::TmemEpilogue,
    priority: 10,
    applies,
    lower,
};

const CHUNK: u32 = 32;

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy { dst, src, .. } = cx.op else {
        return Err(Reject::WrongOp { expected: "a copy" });
    };
    if !cx.k.target().has_tcgen05() {
        return Err(Reject::NoTmem {
            target: cx.k.target(),
        });
    }
    let TileRef::Global { tensor, .. } = dst else {
        return Err(Reject::NotGlobal {
            side: "destination",
        });
    };
    let (acc, m, n) = crate::dispatch::mma::accumulator_int(cx.k, src)?;
    // s32 words (kind::i8's D) go to an i32 tensor unconverted; f32 to a float tensor.
    let elem =
        cx.k.sig
            .tensors
            .iter()
            .find(|t| t.name == *tensor)
            .map(|t| t.elem);
    let int_acc = acc.elem == ElemType::I32;
    if elem.is_some_and(|e| (e == ElemType::I32) != int_acc) {
        return Err(Reject::EpilogueTypes {
            buffer: acc.name.clone(),
            acc: acc.elem.name(),
            tensor: tensor.clone(),
            elem: elem.map_or("?", ElemType::name),
        });
    }
    // 128 rows: a warp's row per thread, all N columns in chunks of 32; 64 rows (the pair's
    // M = 128 half, Layout B): N / 2 columns per warp, read as chunks of 32 and one of 16.
    let fits = match m {
        128 => n % CHUNK == 0,
        64 => acc.tmem_pair_half() && n % 32 == 0,
        _ => false,
    };
    if !fits {
        return Err(Reject::TmemEpilogueShape { m, n, chunk: CHUNK });
    }
    if !cx.threads.is_one_warpgroup() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "tcgen05.ld needs one whole warpgroup (`#[scope(warpgroup = G)]`)",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst: TileRef::Global { tensor, coords, .. },
        src: TileRef::Buf { buf, index },
        ..
    } = op
    else {
        return Err(lw.internal("tmem_epilogue on a different copy"));
    };
    let lead = index.len();
    let (bm, bn) = (
        lw.k.buffers[*buf].layout.shape[lead],
        lw.k.buffers[*buf].layout.shape[lead + 1],
    );
    if coords.len() != 2 {
        return Err(lw.error(LowerError::TileCoords {
            tensor: tensor.clone(),
        }));
    }
    let f16_acc = lw.k.buffers[*buf].elem == ElemType::F16;
    lw.op(Op::Tcgen05FenceAfter);
    let taddr = tmem_base(lw, *buf, index)?;
    let quarter = lw.let_(
        "quarter",
        ScalarType::U32,
        Expr::bin(BinOp::Rem, Expr::Special(Special::WarpId), Expr::u32(4)),
    );
    // Layout B (the pair's M = 128 half, `Buffer::tmem_pair_half`, PTX ISA §9.7.16.10.5.2):
    // warp quarter q holds rows 32·(q % 2) … of columns (q / 2)·N/2 …, N / 2 of them.
    let half = lw.k.buffers[*buf].tmem_pair_half();
    let (row_q, warp_cols) = if half {
        (
            Expr::bin(BinOp::Rem, Expr::Var(quarter), Expr::u32(2)),
            bn / 2,
        )
    } else {
        (Expr::Var(quarter), bn)
    };
    let row_local = add(mul(row_q, Expr::u32(32)), Expr::Special(Special::LaneId));
    let row = add(mul(coords[0].clone(), Expr::u32(bm)), row_local);
    let col0 = mul(coords[1].clone(), Expr::u32(bn));
    let col0 = if half {
        let q_half = Expr::bin(BinOp::Div, Expr::Var(quarter), Expr::u32(2));
        add(col0, mul(q_half, Expr::u32(warp_cols)))
    } else {
        col0
    };
    let rs = RowStore::new(lw, tensor, row, col0, None)?;
    let lane_base = lw.let_(
        "tlane",
        ScalarType::U32,
        Expr::bin(
            BinOp::Shl,
            mul(Expr::Var(quarter), Expr::u32(32)),
            Expr::u32(16),
        ),
    );
    // Chunks of 32 columns, the last of 16 where a pair half's N / 2 is an odd multiple.
    let chunks: Vec<(u32, u32)> = (0..warp_cols)
        .step_by(CHUNK as usize)
        .map(|c0| (c0, CHUNK.min(warp_cols - c0)))
        .collect();
    for (c0, width) in chunks {
        let ta = lw.let_(
            "ta",
            ScalarType::U32,
            add(add(Expr::Var(taddr), Expr::Var(lane_base)), Expr::u32(c0)),
        );
        // An f16 accumulator's words are bits to unpack (`cvt.u16.u32` takes an integer).
        let word = if f16_acc {
            ScalarType::U32
        } else {
            ScalarType::F32
        };
        let regs: Vec<_> = (0..width).map(|_| lw.var("v", word)).collect();
        lw.inst(Inst::tcgen05_ld_32x32b(&regs, ta));
        lw.inst(Inst::tcgen05_wait_ld());
        // An f16 accumulator's cell holds its element in the low half (PTX ISA
        // §9.7.16.10.4.1): widened exactly to f32, then stored as an f32 D is.
        let regs = if f16_acc {
            regs.iter()
                .map(|&w| {
                    let (h, f) = (lw.var("h", ScalarType::B16), lw.var("f", ScalarType::F32));
                    lw.inst(Inst::cvt("u16.u32", h, crate::inst::reg(w)));
                    lw.inst(Inst::cvt("f32.f16", f, crate::inst::reg(h)));
                    f
                })
                .collect()
        } else {
            regs
        };
        let vals: Vec<(u32, _)> = regs
            .iter()
            .enumerate()
            .map(|(j, &r)| (c0 + j as u32, r))
            .collect();
        rs.store_all(lw, &vals);
    }
    Ok(())
}

/// The TMEM address (lane 0) of `buf`'s tile, or of its stage `buf[index]`: the allocation's
/// address, which `tcgen05.alloc` wrote into the buffer's shared-memory slot, loaded from
/// there (§9.7.16.7.1), plus the stage's first column (a stage `acc[s]` of a staged
/// accumulator starts `s·N` columns in).
pub(super) fn tmem_base(
    lw: &mut Lower,
    buf: crate::arena::Handle<crate::ir::Buffer>,
    index: &[Expr],
) -> Result<crate::arena::Handle<crate::ir::Var>, Diagnostics> {
    let stage_col = crate::dispatch::mma::tmem_columns(&lw.k.buffers[buf], index);
    let slot = lw.k.buffers[buf]
        .offset
        .ok_or_else(|| lw.internal("TMEM buffer without slot"))?;
    let slot_addr = lw.let_(
        "slot",
        ScalarType::U32,
        add(Expr::Special(Special::SmemBase), Expr::u32(slot)),
    );
    let base = lw.var("taddr", ScalarType::U32);
    lw.inst(Inst::ld_shared_u32(base, slot_addr, 0));
    Ok(match stage_col {
        Expr::Imm(0, _) => base,
        col => lw.let_("taddr_s", ScalarType::U32, add(Expr::Var(base), col)),
    })
}
