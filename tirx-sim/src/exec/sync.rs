//! Synchronisation and asynchronous copies (PTX ISA §9.7.13 "Parallel Synchronization and
//! Communication Instructions"; §9.7.9.25–27 bulk tensor copies and their groups).
//!
//! - Named barriers (`bar`, `barrier`): 16 per CTA; a round completes when the thread count
//!   (the operand, or every thread of the CTA that has not exited) has arrived; `sync`
//!   waits for the round, `arrive` does not.
//! - Cluster barrier (`barrier.cluster.arrive/wait`): one per cluster over all its threads;
//!   `wait` waits for the round the thread's own `arrive` joined.
//! - mbarrier objects ("mbarrier", §9.7.13): each has a phase number (its parity is what
//!   `try_wait.parity` names), a pending arrival count reset from the init count at every
//!   phase, and a tx-count. `arrive` decrements the pending count, `expect_tx` raises the
//!   tx-count, `complete_tx` (a TMA load's completion) lowers it; the phase completes when
//!   both are zero. `try_wait.parity P` succeeds once the phase of parity `P` has completed,
//!   i.e. while the current phase's parity differs from `P`. More arrivals than the phase
//!   expects, and bytes completed beyond the expected with every arrival in (tx-count
//!   underflow), are errors; the tx-count must stay within ±(2^20 − 1).
//! - Warp collectives: `shfl.sync` (§9.7.9.6, the ISA's lane computation with clamp and
//!   segment mask), `vote.sync`, `elect.sync` (the lowest active lane of the mask is
//!   elected), `activemask`.
//! - TMA (`tma.rs` does the copying): a load is queued with its coordinates, destination and
//!   mbarrier and completes when the scheduler decides; a store joins its thread's current
//!   bulk group, which `commit_group` closes and `wait_group N` waits on (at most `N` of the
//!   thread's committed groups pending). A store reads shared memory when it completes, so a
//!   write to the tile before `wait_group.read` races with it, as on the hardware.

use super::diag::{SimError, Space, WaitOn};
use super::exec::lanes;
use super::machine::{Cluster, Machine, TState, Wait};
use super::mem::{self, Loc};
use super::ops::{MemSpace, Op, ShflMode, VoteMode};
use super::program::{Addr, Inst, Val};
use super::tma::{self, CopyFault};

/// A named barrier's round.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NamedBar {
    pub arrived: u32,
    pub expected: Option<u32>,
    pub round: u64,
}

/// An mbarrier object.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mbar {
    pub phase: u64,
    pub pending: i64,
    pub expected: u32,
    pub tx: i64,
}

impl Mbar {
    /// Whether the phase of parity `parity` has completed (the current phase's differs).
    pub(crate) fn phase_done(&self, parity: u32) -> bool {
        (self.phase & 1) as u32 != (parity & 1)
    }
}

/// The largest |tx-count| (§9.7.13 "mbarrier": tx-count range).
const TX_LIMIT: i64 = (1 << 20) - 1;

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
}

#[derive(Clone, Debug)]
pub(crate) enum AsyncKind {
    /// A tensor load into `dst` of each CTA in `ctas` (rank mask), signalling the mbarrier
    /// at `mbar` of the same CTAs (`mbar_cta` for a non-multicast load).
    Load {
        map: usize,
        coords: Vec<i64>,
        ctas: u32,
        dst: u32,
        mbar: u32,
    },
    /// A tensor store from `src` of the issuing CTA.
    Store {
        map: usize,
        coords: Vec<i64>,
        src: u32,
    },
}

impl AsyncOp {
    /// Whether it uses the shared memory of CTA `ci`.
    pub(crate) fn touches(&self, ci: u32) -> bool {
        match &self.kind {
            AsyncKind::Load { ctas, .. } => ctas >> ci & 1 == 1,
            AsyncKind::Store { .. } => self.cta == ci,
        }
    }
}

/// Committed bulk groups of thread `t` of CTA `ci` with an operation still in flight.
pub(crate) fn pending_groups(cl: &Cluster, ci: u32, t: u32) -> u32 {
    let next = cl.ctas[ci as usize].bulk_next[t as usize];
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

/// Completes the rounds of named barriers (after an exit lowers the live count) and of the
/// cluster barrier.
pub(crate) fn recheck_bars(cl: &mut Cluster, ci: usize) {
    for id in 0..16 {
        check_bar(cl, ci, id);
    }
    check_cluster_bar(cl);
}

fn check_bar(cl: &mut Cluster, ci: usize, id: usize) {
    let cta = &mut cl.ctas[ci];
    let live = cta.live;
    let b = &mut cta.bars[id];
    if b.arrived > 0 && b.arrived >= b.expected.unwrap_or(live) {
        b.arrived = 0;
        b.expected = None;
        b.round += 1;
    }
}

fn check_cluster_bar(cl: &mut Cluster) {
    let live: u32 = cl.ctas.iter().map(|c| c.live).sum();
    if cl.cbar.0 > 0 && cl.cbar.0 >= live {
        cl.cbar.0 = 0;
        cl.cbar.1 += 1;
    }
}

/// What thread `t` waiting on `w` waits for, with the object's state.
pub(crate) fn describe(cl: &Cluster, ci: usize, t: u32, w: Wait) -> WaitOn {
    let cta = &cl.ctas[ci];
    match w {
        Wait::Bar { id, .. } => {
            let b = cta.bars[id as usize];
            WaitOn::Barrier {
                id: u32::from(id),
                arrived: b.arrived,
                expected: b.expected.unwrap_or(cta.live),
            }
        }
        Wait::Mbar { off, parity } => {
            let m = cta.mbars.get(&off).copied().unwrap_or(Mbar {
                phase: 0,
                pending: 0,
                expected: 0,
                tx: 0,
            });
            WaitOn::Mbarrier {
                addr: off,
                parity,
                phase: m.phase,
                pending: m.pending,
                expected: m.expected,
                tx: m.tx,
            }
        }
        Wait::Cluster { .. } => WaitOn::ClusterBarrier {
            arrived: cl.cbar.0,
            expected: cl.ctas.iter().map(|c| c.live).sum(),
        },
        Wait::Bulk { n } => WaitOn::BulkGroup {
            allowed: n,
            pending: pending_groups(cl, ci as u32, t),
        },
        Wait::Converge { need } => {
            let base = t / 32 * 32;
            let pc = cta.pc[t as usize];
            let present = (0..32)
                .filter(|l| {
                    let u = (base + l) as usize;
                    u < cta.st.len()
                        && cta.pc[u] == pc
                        && matches!(cta.st[u], TState::Wait(Wait::Converge { .. }))
                })
                .fold(0, |m, l| m | 1 << l);
            WaitOn::Converge {
                needed: need,
                present,
            }
        }
    }
}

impl Machine<'_> {
    /// An mbarrier operand: (CTA rank, offset), checked for bounds and 8-byte alignment.
    fn mbar_loc(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        a: &Addr,
        line: u32,
        cluster: bool,
    ) -> Result<(usize, u32), SimError> {
        let space = if cluster {
            MemSpace::SharedCluster
        } else {
            MemSpace::SharedCta
        };
        let addr = self.ea(cl, ci, t, a, line)?;
        match self.locate(cl, ci, t, line, space, addr, 8)? {
            Loc::Shared { cta, off } => Ok((cta as usize, off)),
            _ => Err(self.protocol(cl, ci, t, line, "mbarrier outside shared memory".into())),
        }
    }

    fn mbar<'c>(
        &self,
        cl: &'c mut Cluster,
        at: (usize, u32),
        who: (usize, u32),
        line: u32,
    ) -> Result<&'c mut Mbar, SimError> {
        if !cl.ctas[at.0].mbars.contains_key(&at.1) {
            return Err(self.protocol(cl, who.0, who.1, line, format!(
                "the mbarrier at shared+{:#x} of CTA rank {} is not initialised (mbarrier.init)",
                at.1, at.0
            )));
        }
        Ok(cl.ctas[at.0].mbars.get_mut(&at.1).expect("checked"))
    }

    /// Applies arrivals and tx changes to an mbarrier and completes its phase when due.
    #[allow(clippy::too_many_arguments)]
    fn mbar_update(
        &self,
        cl: &mut Cluster,
        at: (usize, u32),
        who: (usize, u32),
        line: u32,
        arrivals: i64,
        tx: i64,
        drop: bool,
    ) -> Result<u64, SimError> {
        let ctaid = cl.ctas[at.0].ctaid;
        let thread = cl.ctas[who.0].thread(who.1);
        let m = self.mbar(cl, at, who, line)?;
        let state = m.phase;
        m.tx += tx;
        m.pending -= arrivals;
        if drop {
            m.expected = m.expected.saturating_sub(1);
        }
        let m = *m;
        if m.pending < 0 {
            return Err(SimError::Protocol {
                line,
                thread,
                what: format!(
                    "mbarrier at shared+{:#x}: more arrivals than the {} its phase {} expects",
                    at.1, m.expected, m.phase
                ),
            });
        }
        if m.tx.abs() > TX_LIMIT {
            return Err(SimError::Protocol {
                line,
                thread,
                what: format!(
                    "mbarrier at shared+{:#x}: tx-count {} out of range",
                    at.1, m.tx
                ),
            });
        }
        if m.pending == 0 && m.tx < 0 {
            return Err(SimError::TxUnderflow {
                line,
                cta: ctaid,
                addr: at.1,
                phase: m.phase,
                excess: -m.tx,
            });
        }
        if m.pending == 0 && m.tx == 0 {
            let m = cl.ctas[at.0].mbars.get_mut(&at.1).expect("present");
            m.phase += 1;
            m.pending = i64::from(m.expected);
            m.tx = 0;
        }
        Ok(state)
    }

    /// A synchronising or asynchronous instruction for thread `t`; sets its PC and state.
    pub(crate) fn sync_lane(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let line = inst.line;
        let u = t as usize;
        let mut next = TState::Run;
        match &inst.op {
            Op::Bar { id, count, wait } => {
                let id = self.rd(cl, ci, t, *id, line)?;
                let count = match count {
                    Some(c) => Some(self.rd(cl, ci, t, *c, line)? as u32),
                    None => None,
                };
                if id >= 16 || count.is_some_and(|c| c == 0 || c % 32 != 0) {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!(
                            "barrier {id} with count {count:?}: ids are 0..16, counts positive \
                         multiples of 32"
                        ),
                    ));
                }
                let b = &mut cl.ctas[ci].bars[id as usize];
                if let (Some(c), Some(e)) = (count, b.expected)
                    && c != e
                {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!("barrier {id} used with thread counts {e} and {c} in one round"),
                    ));
                }
                b.expected = count.or(b.expected);
                b.arrived += 1;
                let round = b.round;
                if *wait {
                    next = TState::Wait(Wait::Bar {
                        id: id as u8,
                        round,
                    });
                }
                check_bar(cl, ci, id as usize);
            }
            Op::ClusterArrive => {
                if cl.ctas[ci].cluster_arrived[u].is_some() {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        "barrier.cluster.arrive twice without a wait".into(),
                    ));
                }
                cl.ctas[ci].cluster_arrived[u] = Some(cl.cbar.1);
                cl.cbar.0 += 1;
                check_cluster_bar(cl);
            }
            Op::ClusterWait => {
                let Some(round) = cl.ctas[ci].cluster_arrived[u].take() else {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        "barrier.cluster.wait without an arrive".into(),
                    ));
                };
                if cl.cbar.1 == round {
                    next = TState::Wait(Wait::Cluster { round });
                }
            }
            Op::MbarInit { addr, count } => {
                let at = self.mbar_loc(cl, ci, t, addr, line, false)?;
                let n = self.rd(cl, ci, t, *count, line)?;
                if !(1..=TX_LIMIT as u64).contains(&n) {
                    return Err(self.protocol(cl, ci, t, line, format!("mbarrier.init count {n}")));
                }
                cl.ctas[at.0].mbars.insert(
                    at.1,
                    Mbar {
                        phase: 0,
                        pending: n as i64,
                        expected: n as u32,
                        tx: 0,
                    },
                );
            }
            Op::MbarArrive {
                d,
                addr,
                count,
                tx,
                cluster,
                drop,
            } => {
                let at = self.mbar_loc(cl, ci, t, addr, line, *cluster)?;
                if at.0 != ci && d.is_some() {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        "a remote mbarrier.arrive must write `_`".into(),
                    ));
                }
                let n = match count {
                    Some(c) => self.rd(cl, ci, t, *c, line)? as i64,
                    None => 1,
                };
                let bytes = match tx {
                    Some(x) => self.rd(cl, ci, t, *x, line)? as i64,
                    None => 0,
                };
                let state = self.mbar_update(cl, at, (ci, t), line, n, bytes, *drop)?;
                if let Some(d) = d {
                    Self::wr(cl, ci, t, *d, state);
                }
            }
            Op::MbarTx {
                addr,
                tx,
                complete,
                cluster,
            } => {
                let at = self.mbar_loc(cl, ci, t, addr, line, *cluster)?;
                let n = self.rd(cl, ci, t, *tx, line)? as i64;
                let n = if *complete { -n } else { n };
                self.mbar_update(cl, at, (ci, t), line, 0, n, false)?;
            }
            Op::MbarWait {
                d,
                addr,
                arg,
                parity,
                block,
            } => {
                let at = self.mbar_loc(cl, ci, t, addr, line, false)?;
                let a = self.rd(cl, ci, t, *arg, line)?;
                let m = *self.mbar(cl, at, (ci, t), line)?;
                let done = if *parity {
                    m.phase_done(a as u32)
                } else {
                    m.phase > a
                };
                // The state form waits for the phase after the token's: the same parity test.
                let parity = a as u32 & 1;
                if !done && *block && !self.rng.one_in(self.policy.spurious_wait_one_in) {
                    cl.ctas[ci].st[u] = TState::Wait(Wait::Mbar { off: at.1, parity });
                    cl.ctas[ci].pc[u] = pc;
                    return Ok(());
                }
                if let Some(d) = d {
                    Self::wr(cl, ci, t, *d, u64::from(done));
                }
            }
            Op::TmaLoad { .. } | Op::TmaStore { .. } => self.tma_issue(cl, ci, t, inst)?,
            Op::BulkCommit => cl.ctas[ci].bulk_next[u] += 1,
            Op::BulkWait { n } => {
                if pending_groups(cl, ci as u32, t) > *n {
                    next = TState::Wait(Wait::Bulk { n: *n });
                }
            }
            other => {
                return Err(self.protocol(
                    cl,
                    ci,
                    t,
                    line,
                    format!("no lane executor for {other:?}"),
                ));
            }
        }
        cl.ctas[ci].pc[u] = pc + 1;
        cl.ctas[ci].st[u] = next;
        Ok(())
    }

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

    fn tma_issue(
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
                        m
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
                }
            }
            Op::TmaStore { src, .. } => {
                let (_, soff) = smem_at(self, cl, src, MemSpace::SharedCta)?;
                AsyncKind::Store {
                    map,
                    coords,
                    src: soff,
                }
            }
            _ => unreachable!("checked above"),
        };
        let group =
            matches!(kind, AsyncKind::Store { .. }).then(|| cl.ctas[ci].bulk_next[t as usize]);
        cl.ops.push(AsyncOp {
            kind,
            cta: ci as u32,
            tid: t,
            group,
            line,
        });
        Ok(())
    }

    /// Completes an asynchronous operation: the copy, then the mbarrier signal of a load.
    pub(crate) fn complete(&mut self, cl: &mut Cluster, op: AsyncOp) -> Result<(), SimError> {
        let desc = &self.params.maps[match &op.kind {
            AsyncKind::Load { map, .. } | AsyncKind::Store { map, .. } => *map,
        }]
        .1;
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
        match &op.kind {
            AsyncKind::Load {
                coords,
                ctas,
                dst,
                mbar,
                ..
            } => {
                for r in lanes(*ctas) {
                    let smem = &mut cl.ctas[r as usize].smem;
                    tma::load_box(desc, coords, self.dev, smem, *dst).map_err(|f| fault(f, cl))?;
                }
                for r in lanes(*ctas) {
                    let bytes = i64::from(desc.box_bytes());
                    self.mbar_update(
                        cl,
                        (r as usize, *mbar),
                        (op.cta as usize, op.tid),
                        op.line,
                        0,
                        -bytes,
                        false,
                    )?;
                }
            }
            AsyncKind::Store { coords, src, .. } => {
                let smem = &cl.ctas[op.cta as usize].smem;
                tma::store_box(desc, coords, self.dev, smem, *src).map_err(|f| fault(f, cl))?;
            }
        }
        Ok(())
    }

    /// The warp-collective instructions, for the `active` lanes of warp `wi` (every lane
    /// the instruction names, `collective_ready` made sure).
    pub(crate) fn collective(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let line = inst.line;
        let base = wi * 32;
        match &inst.op {
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
            } => {
                let mut src = [0u64; 32];
                for l in lanes(active) {
                    src[l as usize] = self.rd(cl, ci, base + l, *a, line)?;
                }
                for l in lanes(active) {
                    let t = base + l;
                    let bv = self.rd(cl, ci, t, *b, line)? as u32 & 0x1f;
                    let cv = self.rd(cl, ci, t, *c, line)? as u32;
                    let (clamp, seg) = (cv & 0x1f, (cv >> 8) & 0x1f);
                    let max_lane = (l & seg) | (clamp & !seg);
                    let min_lane = l & seg;
                    let (j, ok) = match mode {
                        ShflMode::Up => {
                            let j = l as i32 - bv as i32;
                            (j, j >= max_lane as i32)
                        }
                        ShflMode::Down => {
                            let j = (l + bv) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Bfly => {
                            let j = (l ^ bv) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Idx => {
                            let j = (min_lane | (bv & !seg)) as i32;
                            (j, j <= max_lane as i32)
                        }
                    };
                    let j = if ok { j as u32 } else { l };
                    if active >> j & 1 == 0 {
                        return Err(self.protocol(
                            cl,
                            ci,
                            t,
                            line,
                            format!(
                                "shfl.sync in lane {l} reads lane {j}, which does not take part \
                             (active lanes {active:#010x}): its value is undefined"
                            ),
                        ));
                    }
                    Self::wr(cl, ci, t, *d, src[j as usize] & 0xffff_ffff);
                    if let Some(p) = p {
                        Self::wr(cl, ci, t, *p, u64::from(ok));
                    }
                }
            }
            Op::Vote { mode, d, a, a_neg } => {
                let mut ballot = 0u32;
                for l in lanes(active) {
                    let v = (self.rd(cl, ci, base + l, *a, line)? & 1 == 1) ^ a_neg;
                    ballot |= u32::from(v) << l;
                }
                let r = match mode {
                    VoteMode::Ballot => u64::from(ballot),
                    VoteMode::All => u64::from(ballot == active),
                    VoteMode::Any => u64::from(ballot != 0),
                    VoteMode::Uni => u64::from(ballot == 0 || ballot == active),
                };
                for l in lanes(active) {
                    Self::wr(cl, ci, base + l, *d, r);
                }
            }
            Op::Elect { d, p } => {
                let leader = active.trailing_zeros();
                for l in lanes(active) {
                    if let Some(d) = d {
                        Self::wr(cl, ci, base + l, *d, u64::from(leader));
                    }
                    if let Some(p) = p {
                        Self::wr(cl, ci, base + l, *p, u64::from(l == leader));
                    }
                }
            }
            Op::ActiveMask { d } => {
                for l in lanes(active) {
                    Self::wr(cl, ci, base + l, *d, u64::from(active));
                }
            }
            Op::Setmaxnreg => {}
            _ => unreachable!("collective() of a per-lane op"),
        }
        for l in lanes(active) {
            cl.ctas[ci].pc[(base + l) as usize] = pc + 1;
            cl.ctas[ci].st[(base + l) as usize] = TState::Run;
        }
        Ok(())
    }
}
