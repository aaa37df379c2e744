//! Bulk asynchronous copies: `cp.async.bulk.tensor` issue and completion, and the bulk
//! groups of stores (PTX ISA §9.7.9.25 `cp.async.bulk.tensor`, §9.7.9
//! `cp.async.bulk.commit_group`, §9.7.9 `cp.async.bulk.wait_group`).
//!
//! A load is queued with its coordinates, destination CTAs (one, or the `.multicast::cluster`
//! mask) and mbarrier, and completes when the scheduler decides: the box is copied
//! (`tma.rs`) into each destination and each destination's mbarrier gets `complete_tx` of the
//! box's bytes. A store joins its thread's current bulk group, which `commit_group` closes and
//! `wait_group N` waits on (at most `N` of the thread's committed groups pending). A store
//! reads shared memory when it completes, so a write to the tile before `wait_group.read`
//! races with it, as on the hardware.
//!
//! The tensor-map operand must be the generic address of a tensor-map parameter
//! (`cvta.param`): a `.param`-space address is diagnosed, because on the H200 the TMA unit
//! then reads the wrong address (DESIGN.md §6).

use super::cta::Cluster;
use super::diag::{SimError, Space};
use super::global_race::Access;
use super::lane::lanes;
use super::machine::Machine;
use super::mem::{self, Loc};
use super::ops::{MemSpace, Op};
use super::program::{Addr, Inst, Val};
use super::tcgen05_cp::Tc05Work;
use super::tma::{self, CopyFault};

/// One CTA's bulk-group counters (`cp.async.bulk.commit_group`, §9.7.9): per thread,
/// the id its next committed group gets.
#[derive(Clone, Debug)]
pub(crate) struct BulkGroups {
    next: Vec<u64>,
}

impl BulkGroups {
    /// `nthreads` threads, no group committed.
    pub(crate) fn new(nthreads: u32) -> BulkGroups {
        BulkGroups {
            next: vec![0; nthreads as usize],
        }
    }

    /// Thread `t` commits its open group.
    pub(crate) fn commit(&mut self, t: usize) {
        self.next[t] += 1;
    }

    /// The id of thread `t`'s open (not yet committed) group.
    fn open(&self, t: u32) -> u64 {
        self.next[t as usize]
    }
}

/// An asynchronous operation in flight.
#[derive(Clone, Debug)]
pub(crate) struct AsyncOp {
    pub kind: AsyncKind,
    /// Issuing CTA (rank) and thread.
    pub cta: u32,
    pub tid: u32,
    /// The bulk group it belongs to (stores).
    pub group: Option<u64>,
    pub line: u32,
    /// Its operation in the timeline recorder (`timeline.rs`), if one is recording it.
    pub rec: Option<u32>,
}

#[derive(Clone, Debug)]
pub(crate) enum AsyncKind {
    /// A tensor load into `dst` of each CTA in `ctas` (rank mask), signalling the mbarrier
    /// at `mbar` of the same CTAs — or, for the pair's `.cta_group::2` load, of the CTA of each
    /// destination's pair with `mbar_cta`'s rank parity.
    Load {
        map: usize,
        coords: Vec<i64>,
        ctas: u32,
        dst: u32,
        mbar: u32,
        mbar_cta: Option<usize>,
    },
    /// A `tcgen05.commit`: the MMAs it covers, then one arrival on each mbarrier `(CTA,
    /// offset)` (several with `.multicast::cluster`).
    Tc05 {
        mmas: Vec<super::tcgen05_cp::Tc05Work>,
        mbars: Vec<(usize, u32)>,
    },
    /// A `clusterlaunchcontrol.try_cancel`: the 16-byte response written at `resp` of each CTA
    /// in `ctas`, then `complete_tx` of 16 bytes on the mbarrier at `mbar` of each.
    Clc {
        ctas: u32,
        resp: u32,
        mbar: u32,
        /// The first CTA of the canceled cluster, or `None` for a failed request.
        canceled: Option<[u32; 3]>,
    },
    /// An `st.async` (`st_async.rs`): `data` written at `off` of CTA `cta`, then
    /// `complete_tx` of its length on the mbarrier at `mbar` of the same CTA.
    StAsync {
        cta: u32,
        off: u32,
        data: Vec<u8>,
        mbar: u32,
    },
    /// A tensor store from `src` of the issuing CTA (with `reduce`, a reduce-store: each
    /// element combined with the global one atomically).
    Store {
        map: usize,
        coords: Vec<i64>,
        src: u32,
        reduce: Option<super::atom::AtomOp>,
    },
}

impl AsyncOp {
    /// The index of its tensor-map parameter.
    pub(crate) fn map(&self) -> Option<usize> {
        match &self.kind {
            AsyncKind::Load { map, .. } | AsyncKind::Store { map, .. } => Some(*map),
            AsyncKind::Tc05 { .. } | AsyncKind::Clc { .. } | AsyncKind::StAsync { .. } => None,
        }
    }

    /// Whether it uses the shared memory of CTA `ci`.
    pub(crate) fn touches(&self, ci: u32) -> bool {
        match &self.kind {
            AsyncKind::Load { ctas, .. } | AsyncKind::Clc { ctas, .. } => ctas >> ci & 1 == 1,
            AsyncKind::Store { .. } => self.cta == ci,
            AsyncKind::StAsync { cta, .. } => *cta == ci,
            // A pair's MMA reads both CTAs' shared memory.
            AsyncKind::Tc05 { mmas, .. } => {
                self.cta == ci || (self.cta ^ 1 == ci && mmas.iter().any(|m| m.pair()))
            }
        }
    }
}

impl Machine<'_> {
    /// Puts `op` in flight, recording its issue when the timeline recorder is on.
    pub(crate) fn push_op(&mut self, cl: &mut Cluster, mut op: AsyncOp) {
        if let Some(r) = &mut self.rec {
            use super::timeline::Unit;
            let unit = match op.kind {
                AsyncKind::Load { .. } => Unit::TmaLoad,
                AsyncKind::Store { .. } => Unit::TmaStore,
                AsyncKind::Tc05 { .. } => Unit::Tcgen05Mma,
                AsyncKind::Clc { .. } => Unit::Clc,
                AsyncKind::StAsync { .. } => Unit::StAsync,
            };
            let now = r.at(self.stats.warp_instructions);
            op.rec = r.issue(unit, (op.cta as usize, op.tid / 32), op.line, now);
        }
        cl.ops.push(op);
    }
}

/// Committed bulk groups of thread `t` of CTA `ci` with an operation still in flight.
pub(crate) fn pending_groups(cl: &Cluster, ci: u32, t: u32) -> u32 {
    let next = cl.ctas[ci as usize].bulk.open(t);
    let mut groups: Vec<u64> = cl
        .ops
        .iter()
        .filter(|o| o.cta == ci && o.tid == t)
        .filter_map(|o| o.group)
        .filter(|&g| g < next)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups.len() as u32
}

impl Machine<'_> {
    /// The tensor-map parameter a TMA operand names: it must be the parameter's generic
    /// address (`cvta.param`), as the hardware needs (DESIGN.md §6).
    fn tensor_map(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        v: Val,
        line: u32,
    ) -> Result<usize, SimError> {
        let a = self.rd(cl, ci, t, v, line)?;
        let param = match mem::resolve(MemSpace::Generic, a, ci as u32) {
            Ok(Loc::Param(off)) => Some(off),
            _ => None,
        };
        let found = param.and_then(|off| self.params.maps.iter().position(|(o, _)| *o == off));
        found.ok_or_else(|| {
            let why = if self.params.maps.iter().any(|(o, _)| u64::from(*o) == a) {
                "is a .param-space address: the TMA unit needs the parameter's generic address \
                 (cvta.param); on the H200 it would read the wrong address"
            } else {
                "is not the generic address of a tensor-map parameter"
            };
            self.protocol(cl, ci, t, line, format!("tensor-map operand {a:#x} {why}"))
        })
    }

    pub(crate) fn tma_issue(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let line = inst.line;
        let (map_v, coord_v) = match &inst.op {
            Op::TmaLoad { map, coords, .. } | Op::TmaStore { map, coords, .. } => (*map, coords),
            _ => unreachable!("tma_issue of a non-TMA op"),
        };
        let map = self.tensor_map(cl, ci, t, map_v, line)?;
        let desc = &self.params.maps[map].1;
        if coord_v.len() != desc.dims.len() {
            return Err(self.protocol(
                cl,
                ci,
                t,
                line,
                format!(
                    "{} coordinates for a tensor map of rank {}",
                    coord_v.len(),
                    desc.dims.len()
                ),
            ));
        }
        let mut coords = Vec::with_capacity(coord_v.len());
        for c in coord_v {
            coords.push(i64::from(self.rd(cl, ci, t, *c, line)? as u32 as i32));
        }
        // A coordinate from data (`// tirx.check tma`): the box must start inside the tensor.
        if let Some(c) = &inst.check
            && let crate::ptx::Check::Tma { tensor, coords: ks } = &**c
        {
            let rank = desc.dims.len();
            for &k in ks {
                let (k, c) = (k as usize, coords.get(k as usize).copied());
                if let Some(c) = c.filter(|&c| c < 0 || c as u64 >= desc.dims[k]) {
                    return Err(SimError::DataIndex {
                        line,
                        thread: cl.ctas[ci].thread(t),
                        what: "TMA load",
                        tensor: tensor.clone(),
                        dim: (rank - 1 - k) as u32,
                        index: c,
                        extent: desc.dims[k],
                    });
                }
            }
        }
        let bytes = desc.box_bytes();
        let smem_at = |m: &Self, cl: &Cluster, a: &Addr, space| -> Result<(u32, u32), SimError> {
            // Bulk tensor copies need a 128-byte aligned shared address (§9.7.9.25).
            let addr = m.ea(cl, ci, t, a, line)?;
            match m.locate_aligned(cl, ci, t, line, space, addr, bytes, 128)? {
                Loc::Shared { cta, off } => Ok((cta, off)),
                _ => Err(m.protocol(
                    cl,
                    ci,
                    t,
                    line,
                    "TMA shared operand outside shared memory".into(),
                )),
            }
        };
        let kind = match &inst.op {
            Op::TmaLoad {
                dst,
                mbar,
                multicast,
                pair,
                ..
            } => {
                let (dcta, doff) = smem_at(self, cl, dst, MemSpace::SharedCluster)?;
                let (mcta, moff) = self.mbar_loc(cl, ci, t, mbar, line, true)?;
                let ctas = match multicast {
                    Some(v) => {
                        let m = self.rd(cl, ci, t, *v, line)? as u32 & 0xffff;
                        if m == 0 || m >> cl.ctas.len() != 0 {
                            return Err(self.protocol(
                                cl,
                                ci,
                                t,
                                line,
                                format!(
                                    "multicast CTA mask {m:#x} for a cluster of {}",
                                    cl.ctas.len()
                                ),
                            ));
                        }
                        // `.multicast::cluster.cta_group::2`: the mbarrier is in the issuer's
                        // pair (this CTA or its peer); each destination signals the one at its
                        // offset in its own pair's CTA of that parity.
                        if *pair && mcta != dcta as usize && mcta != (dcta ^ 1) as usize {
                            return Err(self.protocol(
                                cl,
                                ci,
                                t,
                                line,
                                format!(
                                    "the mbarrier of a .cta_group::2 multicast TMA load must be in \
                                     the issuer's pair (rank {dcta} or {}), not in CTA rank {mcta}",
                                    dcta ^ 1
                                ),
                            ));
                        }
                        m
                    }
                    // `.cta_group::2` (§9.7.9.25.5.1): the mbarrier is in the destination's CTA
                    // or in the peer CTA of its pair (ranks 2k and 2k + 1).
                    None if *pair => {
                        if mcta != dcta as usize && mcta != (dcta ^ 1) as usize {
                            return Err(self.protocol(
                                cl,
                                ci,
                                t,
                                line,
                                format!(
                                    "the mbarrier of a .cta_group::2 TMA load must be in the \
                                     destination's CTA (rank {dcta}) or its pair's peer (rank {}), \
                                     not in CTA rank {mcta}",
                                    dcta ^ 1
                                ),
                            ));
                        }
                        1 << dcta
                    }
                    None => {
                        if mcta != dcta as usize {
                            return Err(self.protocol(
                                cl,
                                ci,
                                t,
                                line,
                                "the mbarrier of a TMA load must be in the destination's CTA"
                                    .into(),
                            ));
                        }
                        1 << dcta
                    }
                };
                AsyncKind::Load {
                    map,
                    coords,
                    ctas,
                    dst: doff,
                    mbar: moff,
                    mbar_cta: pair.then_some(mcta),
                }
            }
            Op::TmaStore { src, reduce, .. } => {
                let (_, soff) = smem_at(self, cl, src, MemSpace::SharedCta)?;
                let span = bytes.next_multiple_of(128);
                if let Some((addr, w, write_line)) = cl.ctas[ci].shadow.unfenced(soff & !127, span)
                {
                    return Err(SimError::UnfencedProxy {
                        line,
                        reader: "TMA store",
                        thread: cl.ctas[ci].thread(t),
                        addr,
                        writer: cl.ctas[ci].thread(w),
                        write_line,
                    });
                }
                AsyncKind::Store {
                    map,
                    coords,
                    src: soff,
                    reduce: *reduce,
                }
            }
            _ => unreachable!("checked above"),
        };
        let group = matches!(kind, AsyncKind::Store { .. }).then(|| cl.ctas[ci].bulk.open(t));
        self.push_op(
            cl,
            AsyncOp {
                kind,
                cta: ci as u32,
                tid: t,
                group,
                line,
                rec: None,
            },
        );
        Ok(())
    }

    /// Completes an asynchronous operation: the copy, then the mbarrier signal of a load.
    pub(crate) fn complete(&mut self, cl: &mut Cluster, op: AsyncOp) -> Result<(), SimError> {
        let Some(map) = op.map() else {
            // A tcgen05.commit: the MMAs in order, then one arrival.
            if let AsyncKind::Tc05 { mmas, mbars } = &op.kind {
                for w in mmas {
                    match w {
                        Tc05Work::Mma(m) => self.tcgen05_run(cl, op.cta as usize, m, op.tid)?,
                        Tc05Work::Cp(c) => self.tcgen05_cp_run(cl, op.cta as usize, c, op.tid)?,
                        Tc05Work::Shift(s) => {
                            self.tcgen05_shift_run(cl, op.cta as usize, s, op.tid)?
                        }
                    }
                }
                for &at in mbars {
                    self.mbar_update(cl, at, (op.cta as usize, op.tid), op.line, 1, 0, false)?;
                }
            }
            if let AsyncKind::Clc {
                ctas,
                resp,
                mbar,
                canceled,
            } = &op.kind
            {
                self.clc_complete(cl, &op, (*ctas, *resp, *mbar, *canceled))?;
            }
            if let AsyncKind::StAsync { .. } = &op.kind {
                self.st_async_complete(cl, &op)?;
            }
            return Ok(());
        };
        let desc = &self.params.maps[map].1;
        let fault = |f: CopyFault, cl: &Cluster| {
            let (space, addr) = match f {
                CopyFault::Global(a) => (Space::Global, a),
                CopyFault::Shared(a) => (Space::Shared, u64::from(a)),
            };
            SimError::OutOfBounds {
                line: op.line,
                thread: cl.ctas[op.cta as usize].thread(op.tid),
                space,
                addr,
                size: desc.elem.bytes(),
                detail: " (by the TMA unit: the tensor map points outside its allocation)".into(),
            }
        };
        if let AsyncKind::Load { coords, .. } | AsyncKind::Store { coords, .. } = &op.kind {
            // A tile-mode box starts 16-byte aligned in the tensor's innermost dimension: the
            // base and the strides are (the encoder's rules), the start coordinate must be too.
            // The H100 raises an illegal instruction on one that is not (a 1-D load at element
            // 2 of bf16, docs/perf/h100-2026-12-07-stop56.md; a 2-D store at a 4-byte column,
            // tile-ai/tilelang#2527).
            let eb = i64::from(desc.elem.bytes());
            if let Some(&c) = coords.first()
                && (c * eb).rem_euclid(16) != 0
            {
                let what = if matches!(op.kind, AsyncKind::Load { .. }) {
                    "load"
                } else {
                    "store"
                };
                return Err(SimError::Protocol {
                    line: op.line,
                    thread: cl.ctas[op.cta as usize].thread(op.tid),
                    what: format!(
                        "issued a TMA {what} whose box starts at innermost coordinate {c}, {} \
                         bytes into the row: a box must start 16-byte aligned there (the GPU \
                         raises an illegal instruction)",
                        c * eb
                    ),
                });
            }
        }
        match &op.kind {
            AsyncKind::Load {
                coords,
                ctas,
                dst,
                mbar,
                mbar_cta,
                ..
            } => {
                let span = desc.box_bytes().next_multiple_of(128);
                for r in lanes(*ctas) {
                    if let Some(at) = super::shadow::mma_reading(cl, r as usize, *dst & !127, span)
                    {
                        return Err(SimError::Race {
                            line: op.line,
                            thread: cl.ctas[op.cta as usize].thread(op.tid),
                            what: format!(
                                "issued a TMA load that overwrites shared+{dst:#x} of CTA rank {r}, \
                                 which the MMA issued at line {at} still reads (the stage was \
                                 released before the MMA completed)"
                            ),
                        });
                    }
                }
                for r in lanes(*ctas) {
                    let c = &mut cl.ctas[r as usize];
                    tma::load_box(desc, coords, self.dev, &mut c.smem, *dst)
                        .map_err(|f| fault(f, cl))?;
                    let c = &mut cl.ctas[r as usize];
                    c.shadow
                        .async_write(*dst & !127, desc.box_bytes().next_multiple_of(128));
                }
                for r in lanes(*ctas) {
                    let bytes = i64::from(desc.box_bytes());
                    // A pair's load signals the barrier in destination `r`'s pair, in the CTA
                    // whose rank parity the issuer's `mbar` names.
                    let at = match mbar_cta {
                        Some(m) => (r as usize & !1) | (m & 1),
                        None => r as usize,
                    };
                    self.mbar_update(
                        cl,
                        (at, *mbar),
                        (op.cta as usize, op.tid),
                        op.line,
                        0,
                        -bytes,
                        false,
                    )?;
                }
            }
            AsyncKind::Store {
                coords,
                src,
                reduce,
                ..
            } => {
                let access = match reduce {
                    Some(_) => Access::Atomic(super::global_race::AtomScope::Gpu),
                    None => Access::Plain,
                };
                for (a, n) in tma::box_addrs(desc, coords) {
                    self.global_write(cl, op.cta as usize, op.tid, op.line, a, n, access)?;
                }
                let desc = &self.params.maps[map].1;
                let smem = &cl.ctas[op.cta as usize].smem;
                match reduce {
                    Some(r) => tma::reduce_box(desc, coords, self.dev, smem, *src, *r),
                    None => tma::store_box(desc, coords, self.dev, smem, *src),
                }
                .map_err(|f| fault(f, cl))?;
            }
            AsyncKind::Tc05 { .. } | AsyncKind::Clc { .. } | AsyncKind::StAsync { .. } => {
                unreachable!("handled above")
            }
        }
        Ok(())
    }
}
