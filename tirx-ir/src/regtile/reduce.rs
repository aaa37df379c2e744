//! `reduce @dst <- @src KIND axis A`: a row (A = 1) or column (A = 0) statistic of a register
//! tile, left replicated in every thread that holds part of that row or column.
//!
//! Three stages, each derived from the layout (`RegLayout::reduce_bits`):
//! 1. in each thread, over its registers of one row (`max.f32` / `add.f32`; on integer
//!    values `max.s32` / `add.s32` (wrapping) or `.u32`, the statistic of their type);
//! 2. across the lanes that share the row: one `shfl.sync.bfly.b32` + combine per lane bit
//!    of the thread index whose mode moves along the axis (PTX ISA §9.7.9.6: the butterfly
//!    leaves every lane with the combined value, so no broadcast follows);
//! 3. across the warps that share the row (thread-index bits ≥ 5): lane-representatives
//!    store their warp's value to shared scratch, `bar.sync 0`, and every thread reads the
//!    values of all warps of its row — constant offsets from one address, since the warp bits
//!    along the axis are disjoint from the others — and combines them in warp order (so every
//!    thread gets the bit-identical result). In a loop a second `bar.sync` follows the reads,
//!    so the next iteration's stores cannot overtake them.
//!
//! 4. with `across = cluster`, across the CTAs of the cluster through distributed shared
//!    memory (see [`across_cluster`]).
//!
//! Shape: `scratch` and `cluster_scratch` hold `threads · registers` 4-byte slots
//! (`plan-reg-tiles` sizes both).

use super::{RegTileError, compute, frag, layout, owner_thread};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BinOp, Buffer, CmpOp, Expr, Inst, Op, Operand, ReduceKind, ScalarType as T, TExpr, Var,
};
use crate::lower::Lower;

/// The operands of one `reduce`.
pub struct Reduce<'a> {
    /// Statistic.
    pub dst: Handle<Buffer>,
    /// Tile (the layout carrier when `value` is given).
    pub src: Handle<Buffer>,
    /// The values, when they are an expression over `src`'s layout.
    pub value: Option<&'a TExpr>,
    /// Max or sum.
    pub kind: ReduceKind,
    /// Axis.
    pub axis: usize,
    /// Cross-warp scratch.
    pub scratch: Option<Handle<Buffer>>,
    /// In a loop: synchronise after reading the scratch.
    pub again: bool,
    /// The exchange across the cluster (`across = cluster`).
    pub cluster_scratch: Option<Handle<Buffer>>,
}

/// Lowers one `reduce`.
pub fn lower(lw: &mut Lower, r: &Reduce<'_>) -> Result<(), Diagnostics> {
    let ls = layout(lw.k, r.src).map_err(|e| lw.error(e))?;
    let ld = layout(lw.k, r.dst).map_err(|e| lw.error(e))?;
    let want = ls
        .reduce(r.axis)
        .map_err(|e| lw.error(RegTileError::from(e)))?;
    if want != ld {
        return Err(lw.error(RegTileError::ReduceLayout {
            dst: lw.k.buffers[r.dst].name.clone(),
            src: lw.k.buffers[r.src].name.clone(),
            axis: r.axis as u8,
        }));
    }
    // The combine's type: the statistic's (f32, or the values' integer type).
    let (ty, rt) = match lw.k.buffers[r.dst].elem {
        crate::abi::ElemType::I32 => ("s32", T::S32),
        crate::abi::ElemType::U32 => ("u32", T::U32),
        _ => ("f32", T::F32),
    };
    let op = match r.kind {
        ReduceKind::Max => format!("max.{ty}"),
        ReduceKind::Sum => format!("add.{ty}"),
    };
    let op = op.as_str();
    let (sv, dv) = (super::frag_values(lw, r.src)?, frag(lw, r.dst)?);
    let half = lw.k.buffers[r.src].elem;
    // The values: the tile's registers, or the expression evaluated per element as it is
    // combined (never stored).
    let expr = match r.value {
        Some(e) => {
            let p = compute::prepare(lw, r.src, &ls, e)?;
            let org = compute::uses_index(&p).then(|| super::origin(lw, &ls));
            Some((p, org))
        }
        None => None,
    };
    // 1. Within the thread.
    const CHAINS: usize = 4;
    let mut acc: Vec<[Option<Handle<Var>>; CHAINS]> = vec![[None; CHAINS]; dv.len()];
    let mut seen = vec![0usize; dv.len()];
    let mut memo = compute::Memo::default();
    for (i, &s) in sv.iter().enumerate() {
        let v = if let Some((p, org)) = &expr {
            let (o, t) = compute::eval(lw, &ls, *org, p, i as u32, &mut memo);
            match o {
                _ if rt == T::F32 => compute::f32_reg(lw, (o, t)),
                Operand::Reg(v) => v,
                o => {
                    let v = lw.var("v", rt);
                    lw.inst(Inst::mov(ty, v, o));
                    v
                }
            }
        } else if half.bytes() == 2 {
            let w = lw.var("w", T::F32);
            lw.inst(Inst::cvt_f32_from(half.name(), w, s));
            w
        } else {
            s
        };
        // Each statistic register folds its elements into CHAINS independent partial
        // results, combined as a tree below: the dependent chain is n/CHAINS + log2(CHAINS)
        // operations long instead of n, for the same instruction count.
        let j = ls.broadcast_index(r.axis, i as u32) as usize;
        let c = seen[j] % CHAINS;
        seen[j] += 1;
        acc[j][c] = Some(match acc[j][c] {
            None => v,
            Some(a) => {
                let d = lw.var("red", rt);
                lw.inst(Inst::binary(op, d, reg(a), reg(v)));
                d
            }
        });
    }
    for (d, chains) in dv.iter().zip(&acc) {
        let mut level: Vec<Handle<Var>> = chains.iter().flatten().copied().collect();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|p| match p {
                    [a, b] => {
                        let d = lw.var("red", rt);
                        lw.inst(Inst::binary(op, d, reg(*a), reg(*b)));
                        d
                    }
                    [a] => *a,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        let a = level
            .first()
            .copied()
            .ok_or_else(|| lw.internal("a statistic register no element reduces into"))?;
        lw.inst(Inst::mov(ty, *d, reg(a)));
    }
    // 2. Across lanes.
    let bits = ls.reduce_bits(r.axis);
    for &b in bits.iter().filter(|&&b| b < 5) {
        for &d in &dv {
            let t = lw.var("shfl", rt);
            lw.inst(Inst::shfl_bfly(t, d, 1 << b));
            lw.inst(Inst::binary(op, d, reg(d), reg(t)));
        }
    }
    // 3. Across warps.
    let warp_bits: Vec<u32> = bits.iter().filter(|&&b| b >= 5).map(|b| b - 5).collect();
    if !warp_bits.is_empty() {
        across_warps(lw, r, &ls, &dv, (op, ty, rt), &bits, &warp_bits)?;
    }
    // 4. Across the CTAs of the cluster.
    if let Some(cs) = r.cluster_scratch {
        across_cluster(lw, r, &ls, &dv, (op, ty, rt), &bits, cs)?;
    }
    Ok(())
}

/// The store both exchanges begin with: the statistic registers `dv` of each group of threads
/// that agree on the thread-index bits outside `mask` go to that group's `dv.len()` slots from
/// `base`, written by the group's first thread (those bits all 0). Returns the group's slot.
fn publish(
    lw: &mut Lower,
    t: Handle<Var>,
    base: Expr,
    mask: u32,
    dv: &[Handle<Var>],
    ty: &str,
    [slot_name, writer_name]: [&str; 2],
) -> Handle<Var> {
    let nv = dv.len() as u32;
    let key = Expr::bin(BinOp::And, Expr::Var(t), Expr::u32(!mask));
    let slot = lw.let_(
        slot_name,
        T::U32,
        crate::lower::add(base, crate::lower::mul(key, Expr::u32(4 * nv))),
    );
    let first = Expr::bin(BinOp::And, Expr::Var(t), Expr::u32(mask));
    let writer = lw.let_(
        writer_name,
        T::Pred,
        Expr::cmp(CmpOp::Eq, first, Expr::u32(0)),
    );
    for (j, &d) in dv.iter().enumerate() {
        lw.inst(Inst::st_shared(ty, slot, 4 * j as i64, reg(d)).guarded(writer, false));
    }
    slot
}

/// Stage 3: the warps that share a row, through `r.scratch` and `bar.sync`.
fn across_warps(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    dv: &[Handle<Var>],
    (op, ty, rt): (&str, &str, T),
    bits: &[u32],
    warp_bits: &[u32],
) -> Result<(), Diagnostics> {
    let scratch = r
        .scratch
        .ok_or_else(|| lw.internal("cross-warp reduction without scratch"))?;
    let lane_mask: u32 = bits.iter().filter(|&&b| b < 5).map(|b| 1u32 << b).sum();
    let warp_mask: u32 = warp_bits.iter().map(|b| 1u32 << b).sum();
    let nv = dv.len() as u32;
    let t = owner_thread(lw, ls);
    let base = lw.smem_addr(scratch, &[])?;
    // Slot of (warp with the axis bits cleared, lane with the axis bits cleared).
    let own = Expr::bin(
        BinOp::And,
        Expr::Var(t),
        Expr::u32(!(lane_mask | (warp_mask << 5))),
    );
    let slot = lw.let_(
        "slot",
        T::U32,
        crate::lower::add(base.clone(), crate::lower::mul(own, Expr::u32(4 * nv))),
    );
    publish(lw, t, base, lane_mask, dv, ty, ["wslot", "writer"]);
    lw.op(Op::SyncThreads);
    for k in 0..(1u32 << warp_bits.len()) {
        let dep: u32 = warp_bits
            .iter()
            .enumerate()
            .filter(|(i, _)| k >> i & 1 == 1)
            .map(|(_, b)| 1u32 << b)
            .sum();
        for (j, &d) in dv.iter().enumerate() {
            let off = (dep * 32 * nv + j as u32) as i64 * 4;
            if k == 0 {
                lw.inst(Inst::ld_shared_vec(ty, &[d], slot, off));
            } else {
                let v = lw.var("part", rt);
                lw.inst(Inst::ld_shared_vec(ty, &[v], slot, off));
                lw.inst(Inst::binary(op, d, reg(d), Operand::Reg(v)));
            }
        }
    }
    if r.again {
        lw.op(Op::SyncThreads);
    }
    Ok(())
}

/// Stage 4: the CTAs of the cluster. Each group of threads sharing a statistic has one slot
/// per register in `cs`; the group's first thread stores its CTA's value there, a cluster
/// barrier (`barrier.cluster.arrive.release` / `wait.acquire`, PTX ISA §9.7.13.5) makes the
/// stores visible cluster-wide, and every thread reads the slot of every CTA through
/// distributed shared memory (`mapa` + `ld.shared::cluster`, §9.7.9.15, §9.7.9.8) and
/// combines them in rank order — the same order in every CTA, so all hold the bit-identical
/// result. Pulling after the barrier (rather than pushing before it) never touches a peer
/// that might not have started; the kernel's exit barrier keeps every CTA alive until its
/// peers' reads are done, and in a loop a second cluster barrier follows the reads.
fn across_cluster(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    dv: &[Handle<Var>],
    (op, ty, rt): (&str, &str, T),
    bits: &[u32],
    cs: Handle<Buffer>,
) -> Result<(), Diagnostics> {
    let size: u32 = lw.k.sig.cluster.iter().product();
    let axis_mask: u32 = bits.iter().map(|b| 1u32 << b).sum();
    let t = owner_thread(lw, ls);
    let base = lw.smem_addr(cs, &[])?;
    let slot = publish(lw, t, base, axis_mask, dv, ty, ["cslot", "cwriter"]);
    lw.op(Op::ClusterSync);
    for p in 0..size {
        let peer = lw.var("cpeer", T::U32);
        lw.inst(Inst::mapa(peer, slot, Operand::Imm(p as i64)));
        for (j, &d) in dv.iter().enumerate() {
            let off = 4 * j as i64;
            if p == 0 {
                lw.inst(Inst::ld_shared_cluster(ty, d, peer, off));
            } else {
                let v = lw.var("cpart", rt);
                lw.inst(Inst::ld_shared_cluster(ty, v, peer, off));
                lw.inst(Inst::binary(op, d, reg(d), Operand::Reg(v)));
            }
        }
    }
    if r.again {
        lw.op(Op::ClusterSync);
    }
    Ok(())
}
