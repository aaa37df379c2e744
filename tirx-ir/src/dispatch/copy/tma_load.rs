//! `tma_load` — a global tile into a shared buffer through the TMA engine.
//!
//! When: `copy(smem_tile, tensor.tile(..), bar)` with the box legal for TMA (rank 1–5,
//! extents ≤ 256, inner extent a multiple of 16 bytes and within the swizzle span), run by
//! one thread.
//! Before: `copy @a_s[%s] <- global a[%m, %k] bar @pipe.full[%s]`
//! After: the tensor map's generic address, the destination and barrier addresses, and
//! `cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
//! [dst], [map, {k*BK, m*BM}], [bar]` — coordinates in elements, innermost first.
//! With `multicast = MASK` (a constant), the `.multicast::cluster` form: the box lands at the
//! same offset in every CTA of the mask, and each of their barriers counts it.
//! With `cta_group = 2` (the CTA pair's load), the `.cta_group::2` form: the box lands in this
//! CTA's shared memory and its bytes complete on the barrier at `bar`'s offset in the pair's
//! even CTA (`mapa` to rank `%cluster_ctarank & ~1`), which the ISA allows of `.cta_group::2`
//! only — the barrier may be in the peer CTA of the destination. `derive-signals` arms that
//! barrier in the even CTA with both CTAs' bytes. Both (`multicast = MASK, cta_group = 2`, the
//! mask a function of `cta_rank`): `.multicast::cluster.cta_group::2`, the box lands at the same
//! offset in every CTA of the mask and each completes its bytes on the barrier at `bar`'s
//! offset in its own pair's even CTA — the pair's load shared with the other pairs of a larger
//! cluster.
//! PTX used: PTX ISA §9.7.9.25.5.1 (cp.async.bulk.tensor), §9.7.9.18 (cvta.param), §9.7.9.15
//! (mapa).
//! The runtime encodes the map with the same box and swizzle (`AbiParam::TensorMap`), so the
//! swizzle TMA writes is the one the buffer declares.

use super::tma_box;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::inst::reg;
use crate::ir::{Expr, Inst, Op, ScalarType, TileRef};
use crate::lower::{Lower, mul};

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::TmaLoad,
    priority: 10,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy {
        dst,
        src,
        bar,
        multicast,
        pair,
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp { expected: "a copy" });
    };
    if *pair && !cx.k.sig.cluster.iter().product::<u32>().is_multiple_of(2) {
        return Err(Reject::PairLoad {
            why: "needs a cluster of an even number of CTAs",
        });
    }
    // The pair's multicast mask may depend on `cta_rank` (each CTA sends to its counterparts
    // in the other pairs); `derive-signals` evaluates it per rank.
    if let Some(m) = multicast.as_ref().filter(|_| !*pair) {
        let size: u32 = cx.k.sig.cluster.iter().product();
        match m {
            Expr::Imm(v, _) if *v > 0 && (*v as u64) < (1u64 << size) => {}
            _ => {
                return Err(Reject::MulticastMask { cluster: size });
            }
        }
    }
    if !matches!(src, TileRef::Global { .. }) {
        return Err(Reject::NotGlobal { side: "source" });
    }
    if bar.is_none() {
        return Err(Reject::LoadWithoutBarrier);
    }
    tma_box(cx.k, dst, src)?;
    if !cx.threads.is_single() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "a TMA load is issued by one thread (`#[scope(warp = W, elect)]`)",
        });
    }
    Ok(())
}

/// TMA coordinates (elements, innermost first) of tile `coords` (tile units, outermost first;
/// element offsets already when `elements`, `x.at(…)`: a TMA coordinate is an element index,
/// PTX ISA §9.7.9.25.5.1).
pub fn element_coords(
    lw: &mut Lower,
    coords: &[Expr],
    dims: &[u32],
    elements: bool,
) -> Vec<crate::ir::Operand> {
    coords
        .iter()
        .zip(dims)
        .rev()
        .map(|(c, &d)| {
            let e = mul(c.clone(), Expr::u32(if elements { 1 } else { d }));
            match e {
                Expr::Imm(v, _) => crate::ir::Operand::Imm(v),
                e => reg(lw.let_("crd", ScalarType::U32, e)),
            }
        })
        .collect()
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst,
        src,
        bar: Some(bar),
        multicast,
        pair,
        ..
    } = op
    else {
        return Err(lw.internal("tma_load on a non-load"));
    };
    let (b, dims) = tma_box(lw.k, dst, src).map_err(|e| lw.error(e))?;
    let swizzle = b.layout.swizzle;
    let TileRef::Buf { buf, index } = dst else {
        unreachable!("checked by tma_box")
    };
    let TileRef::Global {
        tensor,
        coords,
        elements,
    } = src
    else {
        unreachable!("checked by tma_box")
    };
    let inner_first: Vec<u32> = dims.iter().rev().copied().collect();
    let map = lw.tensor_map(tensor, inner_first, swizzle);
    let crd = element_coords(lw, coords, &dims, elements.is_some());
    // Coordinates read from loaded data (a page table, `cu_seqlens`): positions as written
    // (innermost first), for the emulator's `tirx.check tma` (see `regtile/gather.rs`).
    let data: Vec<i64> = coords
        .iter()
        .rev()
        .enumerate()
        .filter(|(_, c)| crate::regtile::gather::expr_reads(c, lw.data))
        .map(|(i, _)| i as i64)
        .collect();
    let check = (!data.is_empty()).then(|| Inst::tirx_check("tma", tensor, &data));
    let dst_e = lw.smem_addr(*buf, index)?;
    let dst_v = lw.let_("dst", ScalarType::U32, dst_e);
    let bar_v = lw.bar_addr_var(bar)?;
    if *pair {
        // The even CTA of the pair: this CTA's rank with bit 0 cleared.
        let even = lw.let_(
            "pair_rank",
            ScalarType::U32,
            Expr::bin(
                crate::ir::BinOp::And,
                Expr::Special(crate::ir::Special::ClusterCtaRank),
                Expr::u32(!1),
            ),
        );
        let remote = lw.var("pair_bar", ScalarType::U32);
        lw.inst(Inst::mapa(remote, bar_v, reg(even)));
        if let Some(c) = check {
            lw.inst(c);
        }
        match multicast {
            None => lw.inst(Inst::cp_async_bulk_tensor_load_pair(
                dst_v, map, crd, remote,
            )),
            Some(mask) => {
                // Computed in 32 bits (it may depend on the rank), then the 16-bit operand.
                let wide = lw.let_("mask32", ScalarType::U32, mask.clone());
                let m = lw.var("mask", ScalarType::B16);
                lw.inst(Inst {
                    opcode: "cvt.u16.u32".into(),
                    dsts: vec![reg(m)],
                    srcs: vec![reg(wide)],
                    guard: None,
                });
                lw.inst(Inst::cp_async_bulk_tensor_load_pair_multicast(
                    dst_v, map, crd, remote, m,
                ))
            }
        }
        return Ok(());
    }
    match multicast {
        None => {
            if let Some(c) = check {
                lw.inst(c);
            }
            lw.inst(Inst::cp_async_bulk_tensor_load(dst_v, map, crd, bar_v))
        }
        Some(mask) => {
            let m = lw.let_("mask", ScalarType::B16, mask.clone());
            if let Some(c) = check {
                lw.inst(c);
            }
            lw.inst(Inst::cp_async_bulk_tensor_load_multicast(
                dst_v, map, crd, bar_v, m,
            ));
        }
    }
    Ok(())
}
