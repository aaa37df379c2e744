//! `reg_epilogue` — a wgmma accumulator held in registers into a global tile, converted.
//!
//! When: `copy(tensor.tile(m, n), acc)` with `acc` a `regs::<f32>([64·i, N])`, on sm_90a, run
//! by the warpgroup that owns the fragment.
//! Before: `copy global d[%m, %n] <- @acc`
//! After: per thread t of the warpgroup (warp w = t/32, lane l): for each m64 slice and each
//! of its two row halves, row = 64·slice + 16·w + l/4 + 8·half, columns 8·j + 2·(l%4) + {0,1};
//! bounds-checked `cvt.rn.bf16.f32` + `st.global.b16`.
//! Layout: PTX ISA §9.7.15.5.1.1 "Register fragments", figure "WGMMA .m64nNk16 register
//! fragment layout for accumulator matrix D": register d[4j + 2·half + c] of a thread holds
//! row 16·w + l/4 + 8·half, column 8·j + 2·(l%4) + c.

use super::RowStore;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{BinOp, Expr, Op, Space, Special, TileRef};
use crate::lower::{Lower, LowerError, add, mul};

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::RegEpilogue,
    priority: 10,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy { dst, src, .. } = cx.op else {
        return Err(Reject::WrongOp { expected: "a copy" });
    };
    if !cx.k.target().has_wgmma() {
        return Err(Reject::NoWgmmaFragments {
            target: cx.k.target(),
        });
    }
    let TileRef::Global { coords, tensor, .. } = dst else {
        return Err(Reject::NotGlobal {
            side: "destination",
        });
    };
    // The f32 fragment converts to floats only (an i32 tensor takes kind::i8's TMEM words).
    let elem =
        cx.k.sig
            .tensors
            .iter()
            .find(|t| t.name == *tensor)
            .map(|t| t.elem);
    if let (Some(crate::abi::ElemType::I32), TileRef::Buf { buf, .. }) = (elem, src) {
        return Err(Reject::EpilogueTypes {
            buffer: cx.k.buffers[*buf].name.clone(),
            acc: cx.k.buffers[*buf].elem.name(),
            tensor: tensor.clone(),
            elem: "i32",
        });
    }
    if coords.len() != 2 {
        return Err(Reject::RegTile {
            why: "the accumulator epilogue stores into 2-D tensors (`reg_store` takes rank 3)"
                .into(),
        });
    }
    let (_, m, n) = crate::dispatch::mma::accumulator(cx.k, src, Space::Reg)?;
    if m % 64 != 0 || n % 8 != 0 {
        return Err(Reject::FragmentShape { m, n });
    }
    if !cx.threads.is_whole_warpgroups() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "the fragment is spread over one warpgroup",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst:
            TileRef::Global {
                tensor,
                coords,
                elements,
            },
        src: TileRef::Buf { buf, .. },
        ..
    } = op
    else {
        return Err(lw.internal("reg_epilogue on a different copy"));
    };
    if coords.len() != 2 {
        return Err(lw.error(LowerError::TileCoords {
            tensor: tensor.clone(),
        }));
    }
    let (bm, bn) = (
        lw.k.buffers[*buf].layout.shape[0],
        lw.k.buffers[*buf].layout.shape[1],
    );
    let frag = lw
        .frags
        .get(buf)
        .cloned()
        .ok_or_else(|| lw.internal("register fragment not allocated"))?;
    let t = Expr::bin(BinOp::Rem, Expr::Special(Special::TidX), Expr::u32(128));
    let t = lw.let_("t", crate::ir::ScalarType::U32, t);
    let w = Expr::bin(BinOp::Div, Expr::Var(t), Expr::u32(32));
    let l = Expr::bin(BinOp::Rem, Expr::Var(t), Expr::u32(32));
    let quad_row = add(
        mul(w, Expr::u32(16)),
        Expr::bin(BinOp::Div, l.clone(), Expr::u32(4)),
    );
    // `o.at(r, c)`: element offsets, not tile coordinates.
    let (mult_r, mult_c) = if elements.is_some() { (1, 1) } else { (bm, bn) };
    let bounds = elements
        .as_deref()
        .map(|b| &b.0[..])
        .filter(|b| !b.is_empty());
    let col0 = add(
        mul(coords[1].clone(), Expr::u32(mult_c)),
        mul(Expr::bin(BinOp::Rem, l, Expr::u32(4)), Expr::u32(2)),
    );
    for slice in 0..bm / 64 {
        for half in 0..2 {
            let row = add(
                add(
                    mul(coords[0].clone(), Expr::u32(mult_r)),
                    Expr::u32(slice * 64 + 8 * half),
                ),
                quad_row.clone(),
            );
            let rs = RowStore::new(lw, tensor, row, col0.clone(), bounds)?;
            let vals: Vec<(u32, _)> = (0..bn / 8)
                .flat_map(|j| (0..2).map(move |c| (j, c)))
                .map(|(j, c)| {
                    (
                        8 * j + c,
                        frag[(slice * (bn / 2) + 4 * j + 2 * half + c) as usize],
                    )
                })
                .collect();
            rs.store_all(lw, &vals);
        }
    }
    Ok(())
}
