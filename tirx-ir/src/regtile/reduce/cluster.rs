//! Stage 4 of a `reduce … across = cluster`: the statistic of each CTA of the cluster,
//! combined in every CTA in rank order, so all hold the bit-identical result.
//!
//! **Push form** (the default, [`push`]): each CTA owns a receive area in its shared memory,
//! one slot per (thread group of the statistic, cluster rank), and a receive mbarrier with one
//! arrival per phase (both planned by `plan-reg-tiles`; the barrier prologue initialises the
//! mbarrier and synchronises the cluster before any peer can signal it). Per reduction:
//! 1. thread 0 arms its own barrier with `mbarrier.arrive.expect_tx` of the bytes all ranks
//!    will send (PTX ISA §9.7.13.15.13);
//! 2. each group's first thread `st.async`s its statistic into slot `[own rank]` of every
//!    CTA's area, its own included, each with complete-tx on that CTA's barrier (addresses by
//!    `mapa`, §9.7.9.15; `st.async`, §9.7.9.12);
//! 3. every thread waits on its own barrier (`mbarrier.try_wait.parity`, §9.7.13.15.16) and
//!    reads the `size` slots of its group from its own shared memory, combining them in rank
//!    order — the pull form's order, so the results are bit-identical to it.
//!
//! No cluster barrier and no release fence per reduction. Why it is enough:
//! - *Arming and data in either order*: a complete-tx (§9.7.13.15.5) that arrives before the
//!   receiver's expect-tx leaves the tx-count negative while the arrival is pending (its
//!   range is ±(2^20 − 1), §9.7.13.15.2), so the phase completes only once both the arrival
//!   and every byte are in.
//! - *Visibility*: `st.async` is a weak store performed in the generic proxy whose
//!   complete-tx has `.release` semantics at `.cluster` scope (§9.7.9.12, "Conditions"); the
//!   wait is `mbarrier.try_wait.parity.acquire.cluster`, so the phase completion it observes
//!   makes every slot visible to plain `ld.shared` (no proxy fence: one proxy).
//! - *Reuse in a loop* (`again`): two slot sets and two barriers alternate, round `n` using
//!   set `n mod 2` and waiting on parity `(n div 2) mod 2` (a counter the prologue zeroes).
//!   A peer writes set `s` again only in round `n + 2`, which it reaches after its round
//!   `n + 1` barrier completed — which needs this CTA's round `n + 1` store, issued after this
//!   CTA's round `n` reads of set `s` in program order, and released with it. So no slot and
//!   no barrier phase is overwritten before it is consumed.
//! - *Exit*: a CTA leaves only after its last wait, i.e. after every peer's stores into it
//!   landed; its own stores into peers need nothing of it once issued (the values travel in
//!   the instruction), and a peer exits only after receiving them. The kernel's final cluster
//!   barrier (`lower-tile-ops`) still guards every other use of peers' shared memory.
//!
//! **Pull form** (`across = cluster_pull`, [`pull_form`]): each group's first thread stores
//! its statistic into its own slot, a cluster barrier (`barrier.cluster.arrive.release` /
//! `wait.acquire`, §9.7.13.5) publishes it, and every thread reads every rank's slot through
//! distributed shared memory (`mapa` + `ld.shared::cluster`, §9.7.9.15, §9.7.9.8); in a loop
//! a second cluster barrier follows the reads. On the H200 the release of the cluster barrier
//! stalls the issuing warps (ncu: "membar"), which the push form avoids.

use super::{Combine, Reduce, publish, pull};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BarRef, Barrier, BinOp, Buffer, CmpOp, Expr, Inst, Op, Operand, ScalarType as T, Stmt, StmtKind,
};
use crate::lower::{Lower, add, mul};
use crate::regtile::owner_thread;

/// What both forms exchange.
pub(super) struct Exchange<'a> {
    /// The statistic's registers (pairs for an index statistic).
    pub dv: &'a [Handle<crate::ir::Var>],
    pub c: Combine<'a>,
    /// The thread-index bits along the axis.
    pub bits: &'a [u32],
    /// The exchange's shared memory.
    pub cs: Handle<Buffer>,
}

fn cluster_size(lw: &Lower) -> u32 {
    lw.k.sig.cluster.iter().product()
}

/// The push form (see the module header).
pub(super) fn push(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    x: &Exchange<'_>,
    bar: Handle<Barrier>,
) -> Result<(), Diagnostics> {
    let size = cluster_size(lw);
    let owner = ls.thread_count();
    let axis_mask: u32 = x.bits.iter().map(|b| 1u32 << b).sum();
    let (nv, wb) = (x.dv.len() as u32, x.c.word());
    // One rank's statistic of one group; one group's slots; one set.
    let slot = nv * wb;
    let set_bytes = size * (owner >> x.bits.len()) * slot;
    let round = lw.rounds.get(&bar).copied();
    let (set, parity) = match round {
        Some(n) => (
            Expr::bin(BinOp::And, Expr::Var(n), Expr::u32(1)),
            Expr::bin(
                BinOp::And,
                Expr::bin(BinOp::Shr, Expr::Var(n), Expr::u32(1)),
                Expr::u32(1),
            ),
        ),
        None if r.again => return Err(lw.internal("a cluster exchange in a loop without a round")),
        None => (Expr::u32(0), Expr::u32(0)),
    };
    let bref = BarRef {
        bar,
        index: set.clone(),
    };
    let t = owner_thread(lw, ls);
    let base = lw.smem_addr(x.cs, &[])?;
    let area = lw.let_(
        "xarea",
        T::U32,
        add(
            add(base, mul(set, Expr::u32(set_bytes))),
            mul(group_index(t, axis_mask, owner), Expr::u32(size * slot)),
        ),
    );
    // 1. Arm: one arrival, and every rank's bytes.
    let mbar = lw.bar_addr_var(&bref)?;
    let arm = lw.let_(
        "xarm",
        T::Pred,
        Expr::cmp(
            CmpOp::Eq,
            Expr::Special(crate::ir::Special::TidX),
            Expr::u32(0),
        ),
    );
    lw.inst(Inst::mbarrier_arrive_expect_tx(mbar, set_bytes).guarded(arm, false));
    // 2. Send: slot [own rank] of every CTA, by the group's first thread.
    let own = lw.let_(
        "xown",
        T::U32,
        add(
            Expr::Var(area),
            mul(
                Expr::Special(crate::ir::Special::ClusterCtaRank),
                Expr::u32(slot),
            ),
        ),
    );
    let writer = lw.let_(
        "xwriter",
        T::Pred,
        Expr::cmp(
            CmpOp::Eq,
            Expr::bin(BinOp::And, Expr::Var(t), Expr::u32(axis_mask)),
            Expr::u32(0),
        ),
    );
    let bty = if wb == 8 { "b64" } else { "b32" };
    for p in 0..size {
        let [to, to_bar] = [lw.var("xto", T::U32), lw.var("xto_bar", T::U32)];
        lw.inst(Inst::mapa(to, own, Operand::Imm(p as i64)));
        lw.inst(Inst::mapa(to_bar, mbar, Operand::Imm(p as i64)));
        for (j, &d) in x.dv.iter().enumerate() {
            let off = i64::from(wb) * j as i64;
            lw.inst(Inst::st_async(bty, to, off, reg(d), to_bar).guarded(writer, false));
        }
    }
    // 3. Wait for every rank's bytes (acquiring at cluster scope what the peers' complete-tx
    // released there), then combine the slots in rank order.
    let par = match parity {
        Expr::Imm(v, _) => Operand::Imm(v),
        e => reg(lw.let_("xparity", T::U32, e)),
    };
    let done = lw.var("xdone", T::Pred);
    let wait = Inst::mbarrier_try_wait_parity_cluster(done, mbar, par);
    lw.emit(StmtKind::Loop {
        body: vec![Stmt::at(StmtKind::Inst(wait), lw.span)],
        until: done,
    });
    for p in 0..size {
        let load = |lw: &mut Lower, ty: &str, d, j: usize| {
            let off = i64::from(p * slot) + i64::from(wb) * j as i64;
            lw.inst(Inst::ld_shared_vec(ty, &[d], area, off));
        };
        pull(lw, x.c, x.dv, p == 0, "xpart", load);
    }
    if let Some(n) = round {
        lw.inst(Inst::binary("add.u32", n, reg(n), Operand::Imm(1)));
    }
    Ok(())
}

/// The index of thread `t`'s group among the owner's threads: its bits outside `axis_mask`,
/// packed (0 when every thread shares one statistic).
fn group_index(t: Handle<crate::ir::Var>, axis_mask: u32, owner: u32) -> Expr {
    let mut g = Expr::u32(0);
    let outside = (0..owner.trailing_zeros()).filter(|b| axis_mask >> b & 1 == 0);
    for (i, b) in outside.enumerate() {
        let bit = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Shr, Expr::Var(t), Expr::u32(b)),
            Expr::u32(1),
        );
        g = add(g, Expr::bin(BinOp::Shl, bit, Expr::u32(i as u32)));
    }
    g
}

/// The pull form (see the module header): publish, cluster barrier, read every rank's slot.
/// Pulling after the barrier never touches a peer that might not have started; the kernel's
/// exit barrier keeps every CTA alive until its peers' reads are done.
pub(super) fn pull_form(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    x: &Exchange<'_>,
) -> Result<(), Diagnostics> {
    let size = cluster_size(lw);
    let axis_mask: u32 = x.bits.iter().map(|b| 1u32 << b).sum();
    let t = owner_thread(lw, ls);
    let base = lw.smem_addr(x.cs, &[])?;
    let slot = publish(lw, t, base, axis_mask, x.dv, x.c, ["cslot", "cwriter"]);
    lw.op(Op::ClusterSync);
    for p in 0..size {
        let peer = lw.var("cpeer", T::U32);
        lw.inst(Inst::mapa(peer, slot, Operand::Imm(p as i64)));
        let wb = i64::from(x.c.word());
        let load = |lw: &mut Lower, ty: &str, d, j: usize| {
            lw.inst(Inst::ld_shared_cluster(ty, d, peer, wb * j as i64));
        };
        pull(lw, x.c, x.dv, p == 0, "cpart", load);
    }
    if r.again {
        lw.op(Op::ClusterSync);
    }
    Ok(())
}

/// Before an index statistic crosses the cluster: the row (column) is the CTAs' tiles laid
/// end to end in rank order, so CTA rank `r`'s index `i` becomes `r · E + i`, `E` the tile's
/// extent along the axis (`%cluster_ctarank`, PTX ISA §10.27; `mul.lo.u32`, `add.u32`). The
/// combination in rank order then keeps torch's rule across CTAs too: the greater key, and
/// on equal keys the lower index, which is the lower rank's.
pub(super) fn rank_offset(lw: &mut Lower, r: &Reduce<'_>, dv: &[Handle<crate::ir::Var>]) {
    let extent = lw.k.buffers[r.src].layout.shape[r.axis];
    let off = lw.let_(
        "crank_off",
        T::U32,
        mul(
            Expr::Special(crate::ir::Special::ClusterCtaRank),
            Expr::u32(extent),
        ),
    );
    // (key, index) pairs: the index is every second register.
    for &i in dv.iter().skip(1).step_by(2) {
        lw.inst(Inst::binary("add.u32", i, reg(i), reg(off)));
    }
}
