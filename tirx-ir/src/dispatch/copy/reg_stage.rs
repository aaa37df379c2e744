//! `reg_stage` — a wgmma accumulator held in registers into a shared-memory staging tile,
//! converted, laid out for TMA stores.
//!
//! When: `copy(stage, acc)` on sm_90a, run by whole warpgroups; `acc` a `regs::<f32>([R, N])`
//! wgmma fragment (R a multiple of 64, N of 64); `stage` a bf16/f16 shared tile of shape
//! `[N / 64, R, 64]` with swizzle B128 — column blocks of 64 elements, each one 128-byte-wide
//! TMA box (`tma::store(d.tile(.., ..), stage[cb])`).
//! Before: `copy @d_s[%wg] <- @acc`
//! After: per thread t of the warpgroup (warp w = t/32, lane l): eight row-chunk addresses
//! `base + row(l)·128 + ((j ^ l/4) · 16) + 4·(l%4)`, then for each column pair of the
//! fragment `cvt.rn.bf16x2.f32` + `st.shared.b32` at that address plus a constant offset
//! (column block, row half, 64-row slice).
//! Layout: the fragment (PTX ISA §9.7.15.5.1.1, "WGMMA .m64nNk16 register fragment layout
//! for accumulator matrix D") puts columns 8j + 2(l%4) + {0, 1} of row 16w + l/4 (+8) in one
//! thread; in a 128-byte row that pair is 16-byte chunk j % 8 at byte 4(l%4), which the 128B
//! swizzle (PTX ISA §5.5.7) moves to chunk (j % 8) ^ (row % 8) = (j % 8) ^ (l / 4): the eight
//! lanes sharing a row phase write eight different chunks, so the stores are conflict-free.
//! The kernel follows with `fence::proxy_async()` and a barrier before the TMA store reads it.

use crate::diag::Diagnostics;
use crate::dispatch::{Cx, Variant};
use crate::inst::reg;
use crate::ir::{BinOp, Expr, Inst, Op, ScalarType as T, Space, Special, TileRef};
use crate::lower::{Lower, add, mul};

/// The variant.
pub static VARIANT: Variant = Variant {
    name: "reg_stage",
    priority: 10,
    applies,
    lower,
};

/// (acc rows, acc cols) and checks of the staging layout.
fn shapes(cx_k: &crate::ir::Kernel, dst: &TileRef, src: &TileRef) -> Result<(u32, u32), String> {
    let (_, r, n) = crate::dispatch::mma::accumulator(cx_k, src, Space::Reg)?;
    let TileRef::Buf { buf, index } = dst else {
        return Err("the destination is not a buffer".into());
    };
    let b = &cx_k.buffers[*buf];
    if b.space != Space::Shared || b.elem.bytes() != 2 {
        return Err(format!("`{}` must be a bf16/f16 shared tile", b.name));
    }
    let dims = b.layout.shape.get(index.len()..).unwrap_or(&[]);
    if r % 64 != 0 || n % 64 != 0 {
        return Err(format!(
            "the accumulator is {r}×{n}; staging needs multiples of 64"
        ));
    }
    if dims != [n / 64, r, 64] || b.layout.swizzle != crate::abi::Swizzle::B128 {
        return Err(format!(
            "`{}` must be [{}, {r}, 64] with swizzle B128 (64-column blocks, one TMA box each); it is {dims:?} with swizzle {}",
            b.name,
            n / 64,
            b.layout.swizzle.name()
        ));
    }
    Ok((r, n))
}

fn applies(cx: &Cx) -> Result<(), String> {
    let Op::Copy {
        dst,
        src,
        bar: None,
        ..
    } = cx.op
    else {
        return Err("not a copy without barrier".into());
    };
    if !cx.k.target().has_wgmma() {
        return Err(format!(
            "the register fragment layout is wgmma's, and {} has no wgmma",
            cx.k.target().name()
        ));
    }
    shapes(cx.k, dst, src)?;
    if !cx.threads.is_whole_warpgroups() {
        return Err(format!(
            "it runs on {}; the fragment is spread over whole warpgroups",
            cx.threads.describe()
        ));
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("reg_stage on a non-copy"));
    };
    let (rows, n) = shapes(lw.k, dst, src).map_err(|e| lw.error(e))?;
    let (TileRef::Buf { buf, index }, TileRef::Buf { buf: acc, .. }) = (dst, src) else {
        unreachable!("checked")
    };
    let half = lw.k.buffers[*buf].elem.name();
    let frag = lw
        .frags
        .get(acc)
        .cloned()
        .ok_or_else(|| lw.internal("register fragment not allocated"))?;
    let base = lw.smem_addr(*buf, index)?;
    let t = lw.let_(
        "t",
        T::U32,
        Expr::bin(BinOp::Rem, Expr::Special(Special::TidX), Expr::u32(128)),
    );
    let w = Expr::bin(BinOp::Div, Expr::Var(t), Expr::u32(32));
    let l = Expr::bin(BinOp::Rem, Expr::Var(t), Expr::u32(32));
    let q = lw.let_("q", T::U32, Expr::bin(BinOp::Div, l.clone(), Expr::u32(4)));
    let row = add(mul(w, Expr::u32(16)), Expr::Var(q));
    let thread_base = add(
        add(base, mul(row, Expr::u32(128))),
        mul(Expr::bin(BinOp::Rem, l, Expr::u32(4)), Expr::u32(4)),
    );
    let thread_base = lw.let_("stage_row", T::U32, thread_base);
    let chunk_addr: Vec<_> = (0..8u32)
        .map(|j| {
            let x = Expr::bin(BinOp::Xor, Expr::Var(q), Expr::u32(j));
            lw.let_(
                "stage_addr",
                T::U32,
                add(Expr::Var(thread_base), mul(x, Expr::u32(16))),
            )
        })
        .collect();
    let block_bytes = rows * 128;
    for slice in 0..rows / 64 {
        for h in 0..2 {
            for j in 0..n / 8 {
                let (lo, hi) = (
                    frag[(slice * (n / 2) + 4 * j + 2 * h) as usize],
                    frag[(slice * (n / 2) + 4 * j + 2 * h + 1) as usize],
                );
                let packed = lw.var("packed", T::U32);
                lw.inst(Inst::cvt_rn_pack(half, packed, hi, lo));
                let off = (j / 8) * block_bytes + slice * 64 * 128 + h * 8 * 128;
                lw.inst(Inst::st_shared(
                    "b32",
                    chunk_addr[(j % 8) as usize],
                    off as i64,
                    reg(packed),
                ));
            }
        }
    }
    Ok(())
}
