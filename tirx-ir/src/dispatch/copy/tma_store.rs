//! `tma_store` — a shared buffer into a global tile through the TMA engine.
//!
//! When: `copy(tensor.tile(..), smem_tile)` with a TMA-legal box, run by one thread. Out-of-
//! bounds parts of the box are clipped by the hardware, so tails need no code.
//! Before: `copy global d[%m, %n] <- @d_s`
//! After: `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [map, {n*BN, m*BM}], [src]`.
//! The user completes it with `tma::commit_group()` / `tma::wait_group(n)`.
//! PTX used: PTX ISA §9.7.9.25.5.1 (cp.async.bulk.tensor).

use super::tma_box;
use super::tma_load::element_coords;
use crate::diag::Diagnostics;
use crate::dispatch::{Cx, Reject, Variant};
use crate::ir::{Inst, Op, ScalarType, TileRef};
use crate::lower::Lower;

/// The variant.
pub static VARIANT: Variant = Variant {
    name: "tma_store",
    priority: 10,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy { dst, src, bar, .. } = cx.op else {
        return Err(Reject::WrongOp { expected: "a copy" });
    };
    if !matches!(dst, TileRef::Global { .. }) {
        return Err(Reject::NotGlobal {
            side: "destination",
        });
    }
    if bar.is_some() {
        return Err(Reject::StoreWithBarrier);
    }
    tma_box(cx.k, src, dst)?;
    if !cx.threads.is_single() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "a TMA store is issued by one thread",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("tma_store on a non-copy"));
    };
    let (b, dims) = tma_box(lw.k, src, dst).map_err(|e| lw.error(e))?;
    let swizzle = b.layout.swizzle;
    let TileRef::Buf { buf, index } = src else {
        unreachable!("checked by tma_box")
    };
    let TileRef::Global { tensor, coords } = dst else {
        unreachable!("checked by tma_box")
    };
    let inner_first: Vec<u32> = dims.iter().rev().copied().collect();
    let map = lw.tensor_map(tensor, inner_first, swizzle);
    let crd = element_coords(lw, coords, &dims);
    let src_e = lw.smem_addr(*buf, index)?;
    let src_v = lw.let_("src", ScalarType::U32, src_e);
    lw.inst(Inst::cp_async_bulk_tensor_store(map, crd, src_v));
    Ok(())
}
