//! Barriers and mbarriers (PTX ISA §9.7.13 "Parallel Synchronization and Communication
//! Instructions").
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
//! - Warp collectives are in `warp.rs`, bulk copies and their groups in `bulk.rs`.

use super::bulk::pending_groups;
use super::cta::{Cluster, TState, Wait};
use super::diag::{SimError, WaitOn};
use super::machine::Machine;
use super::mem::Loc;
use super::ops::{MemSpace, Op};
use super::program::{Addr, Inst};

/// A named barrier's round.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NamedBar {
    pub arrived: u32,
    pub expected: Option<u32>,
    pub round: u64,
}

/// The cluster barrier's round (`barrier.cluster.arrive` / `wait`, §9.7.13.1).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClusterBar {
    /// Threads of the cluster arrived in this round.
    pub arrived: u32,
    /// The round number.
    pub round: u64,
}

/// Each thread's arrival at the cluster barrier it has not waited on yet: one CTA's share of
/// the cluster barrier's state.
#[derive(Clone, Debug)]
pub(crate) struct ClusterArrivals {
    /// Per thread: the round it arrived in, until its wait.
    round: Vec<Option<u64>>,
}

impl ClusterArrivals {
    /// `nthreads` threads, none arrived.
    pub(crate) fn new(nthreads: u32) -> ClusterArrivals {
        ClusterArrivals {
            round: vec![None; nthreads as usize],
        }
    }

    /// Thread `t` arrives in `round`; `false` if it arrived before without a wait.
    fn arrive(&mut self, t: usize, round: u64) -> bool {
        self.round[t].replace(round).is_none()
    }

    /// Thread `t`'s wait: the round it arrived in, if it did.
    fn wait(&mut self, t: usize) -> Option<u64> {
        self.round[t].take()
    }
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
    if cl.cbar.arrived > 0 && cl.cbar.arrived >= live {
        cl.cbar.arrived = 0;
        cl.cbar.round += 1;
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
            arrived: cl.cbar.arrived,
            expected: cl.ctas.iter().map(|c| c.live).sum(),
        },
        Wait::Bulk { n } => WaitOn::BulkGroup {
            allowed: n,
            pending: pending_groups(cl, ci as u32, t),
        },
        Wait::Wgmma { target } => WaitOn::Warpgroup {
            target,
            behind: super::wgmma::warpgroup_behind(cl, ci, t / 32, target),
        },
        Wait::Regs { count } => WaitOn::Registers {
            count,
            held: cta.regs.held_by_others(t / 32),
            capacity: cta.regs.capacity,
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
    pub(crate) fn mbar_loc(
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
    pub(crate) fn mbar_update(
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
                let round = cl.cbar.round;
                if !cl.ctas[ci].cluster.arrive(u, round) {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        "barrier.cluster.arrive twice without a wait".into(),
                    ));
                }
                cl.cbar.arrived += 1;
                check_cluster_bar(cl);
            }
            Op::ClusterWait => {
                let Some(round) = cl.ctas[ci].cluster.wait(u) else {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        "barrier.cluster.wait without an arrive".into(),
                    ));
                };
                if cl.cbar.round == round {
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
                if !done && *block && !self.wait_returns_early() {
                    cl.ctas[ci].st[u] = TState::Wait(Wait::Mbar { off: at.1, parity });
                    cl.ctas[ci].pc[u] = pc;
                    return Ok(());
                }
                if let Some(d) = d {
                    Self::wr(cl, ci, t, *d, u64::from(done));
                }
            }
            Op::TmaLoad { .. } | Op::TmaStore { .. } => self.tma_issue(cl, ci, t, inst)?,
            Op::TcCommit {
                mbar,
                multicast,
                pair,
            } => {
                let at = self.mbar_loc(cl, ci, t, mbar, line, true)?;
                let mbars = match multicast {
                    None => vec![at],
                    Some(v) => {
                        let m = self.rd(cl, ci, t, *v, line)? as u32 & 0xffff;
                        if m == 0 || m >> cl.ctas.len() != 0 {
                            return Err(self.protocol(
                                cl,
                                ci,
                                t,
                                line,
                                format!(
                                    "tcgen05.commit multicast CTA mask {m:#x} for a cluster of {}",
                                    cl.ctas.len()
                                ),
                            ));
                        }
                        // The same offset in each destination CTA.
                        super::lane::lanes(m).map(|r| (r as usize, at.1)).collect()
                    }
                };
                let mmas = Self::tcgen05_take(cl, ci, t);
                // A commit tracks the operations of its own `.cta_group` (§9.7.16.10.10).
                if let Some(m) = mmas.iter().find(|m| m.pair() != *pair) {
                    let g = |p: bool| if p { 2 } else { 1 };
                    let (op, at) = m.what();
                    let what = format!(
                        "tcgen05.commit.cta_group::{} after a {op}.cta_group::{} (line {at}): \
                         the commit must use the {op}'s cta_group",
                        g(*pair),
                        g(m.pair()),
                    );
                    return Err(self.protocol(cl, ci, t, line, what));
                }
                self.push_op(
                    cl,
                    super::bulk::AsyncOp {
                        kind: super::bulk::AsyncKind::Tc05 { mmas, mbars },
                        cta: ci as u32,
                        tid: t,
                        group: None,
                        line,
                        rec: None,
                    },
                );
            }
            Op::ClcTryCancel { .. } => self.clc_try_cancel(cl, ci, t, inst)?,
            Op::StAsync { .. } => self.st_async(cl, ci, t, inst)?,
            Op::ClcQuery { .. } => self.clc_query(cl, ci, t, inst)?,
            Op::BulkCommit => cl.ctas[ci].bulk.commit(u),
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
}
