//! The scheduler: the grid run one cluster at a time, the loop that picks the next warp and
//! its burst and completes asynchronous operations, the wake-up of waiting lanes, and the
//! deadlock check. The state it schedules (CTAs, threads, registers) is `cta.rs`; what one
//! instruction does is the units' (`lane.rs` and the files it dispatches to).
//!
//! Execution model (PTX ISA §2.2 "Thread Hierarchy", §3.1 "SIMT Architecture"; §9.7.13 for
//! the synchronising instructions). Each thread has its own program counter and state
//! (running, waiting on something, exited). A warp steps one *group* at a time: the lanes
//! that are running at the same PC, the lowest such PC first, execute that instruction
//! together. Lanes that branch apart (`@p bra`) thus run separately and merge again as soon
//! as they reach the same PC, which for the structured code tirx emits is the join point;
//! if the lowest group cannot proceed (a warp-collective op missing lanes of its mask), the
//! next group runs, which is the forward progress independent thread scheduling guarantees.
//! Warp-collective instructions (`shfl.sync`, `vote.sync`, `elect.sync`, `.aligned`) run only
//! when every lane they name is in the group; the lanes present wait until the others arrive.
//!
//! A thread blocks at `bar.sync`, `barrier.cluster.wait`, `mbarrier.try_wait` (while the
//! phase is incomplete) and `cp.async.bulk.wait_group`; each round the scheduler re-checks
//! the condition. When no warp can step and no asynchronous operation is in flight, the run
//! is a [`SimError::Deadlock`] listing every blocked group and what it waits on.
//!
//! Clusters run to completion one after another (in a seeded order); CTAs of a cluster run
//! together, so distributed shared memory and cluster barriers work, but CTAs of different
//! clusters never overlap (a kernel that spins on a flag set by another cluster would hang).

use super::bulk::AsyncOp;
use super::cta::{Cluster, Cta, ParamBuf, Regs, TState, Wait};
use super::device::Device;
use super::diag::{Blocked, SimError};
use super::program::Program;
use super::sched::{ClcMode, Policy, Rng};
use super::{Launch, Stats};

/// Everything a run reads and writes.
pub(crate) struct Machine<'a> {
    pub prog: &'a Program,
    pub launch: &'a Launch,
    pub params: &'a ParamBuf,
    pub dev: &'a mut Device,
    /// The one source of nondeterminism: private to the scheduler, whose methods below the
    /// units ask ([`Machine::lane_order`], [`Machine::wait_returns_early`],
    /// [`Machine::cancel_pending_cluster`]).
    rng: Rng,
    pub policy: Policy,
    pub stats: Stats,
    /// Clusters of the grid not started yet (linear indices, in launch order); a successful
    /// `clusterlaunchcontrol.try_cancel` removes one ([`Machine::cancel_pending_cluster`]).
    pending: std::collections::VecDeque<u32>,
    /// The event recorder (`timeline.rs`), when [`Policy::timeline`] asks for one.
    pub rec: Option<Box<super::timeline::Recorder>>,
    /// The last writer of each global byte, kept for programs with global atomics
    /// (`global_race.rs`).
    pub globals: Option<super::global_race::GlobalShadow>,
}

impl<'a> Machine<'a> {
    pub(crate) fn new(
        prog: &'a Program,
        launch: &'a Launch,
        params: &'a ParamBuf,
        dev: &'a mut Device,
        seed: u64,
        policy: Policy,
    ) -> Machine<'a> {
        Machine {
            prog,
            launch,
            params,
            dev,
            rng: Rng::new(seed),
            policy,
            stats: Stats::default(),
            pending: Default::default(),
            rec: policy.timeline.then(Default::default),
            globals: has_global_atomics(prog).then(Default::default),
        }
    }

    /// Records a write of global memory for the race check between CTAs (`global_race.rs`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn global_write(
        &mut self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        addr: u64,
        size: u32,
        access: super::global_race::Access,
    ) -> Result<(), SimError> {
        let Some(g) = self.globals.as_mut() else {
            return Ok(());
        };
        let who = super::global_race::Writer {
            cluster: cl.id,
            rank: ci as u32,
        };
        match g.write(addr, size, who, access, line) {
            Some(what) => Err(SimError::Race {
                line,
                thread: cl.ctas[ci].thread(t),
                what,
            }),
            None => Ok(()),
        }
    }

    /// The order in which the `n` lanes of a group apply their atomics (`atom.rs`): a seeded
    /// shuffle, as the hardware serialises them in an unspecified order.
    pub(crate) fn lane_order(&mut self, n: usize) -> Vec<usize> {
        self.rng.permutation(n)
    }

    /// Whether a `mbarrier.try_wait` that would block returns false instead (`sync.rs`; the
    /// ISA allows a time limit): with probability [`Policy::spurious_wait_one_in`]⁻¹.
    pub(crate) fn wait_returns_early(&mut self) -> bool {
        self.rng.one_in(self.policy.spurious_wait_one_in)
    }

    /// The answer to a `clusterlaunchcontrol.try_cancel` (`clc.rs`): whether it succeeds
    /// ([`Policy::clc`]), and if it does while a cluster is pending, a random pending cluster
    /// (its linear index), removed so it never runs.
    pub(crate) fn cancel_pending_cluster(&mut self) -> Option<u32> {
        let succeed = match self.policy.clc {
            ClcMode::Fail => false,
            ClcMode::Succeed => true,
            ClcMode::Random => self.rng.one_in(2),
        };
        if !succeed || self.pending.is_empty() {
            return None;
        }
        let i = self.rng.below(self.pending.len() as u64) as usize;
        self.pending.remove(i)
    }

    pub(crate) fn threads_per_cta(&self) -> u32 {
        self.launch.block.iter().product()
    }

    /// Runs every cluster of the grid, in a seeded order.
    pub(crate) fn run_grid(&mut self) -> Result<(), SimError> {
        let l = self.launch;
        let n = [0, 1, 2].map(|d| l.grid[d] / l.cluster[d]);
        let count = (n[0] * n[1] * n[2]) as usize;
        self.pending = self
            .rng
            .permutation(count)
            .into_iter()
            .map(|k| k as u32)
            .collect();
        while let Some(k) = self.pending.pop_front() {
            let id = [k % n[0], (k / n[0]) % n[1], k / (n[0] * n[1])];
            let mut cl = self.new_cluster(id);
            let wpc = self.threads_per_cta().div_ceil(32);
            if let Some(r) = &mut self.rec {
                r.begin(&cl, self.stats.warp_instructions, wpc);
            }
            self.run_cluster(&mut cl)?;
            if let Some(r) = &mut self.rec {
                r.end(self.stats.warp_instructions);
            }
            self.stats.ctas += cl.ctas.len() as u64;
        }
        Ok(())
    }

    fn new_cluster(&self, id: [u32; 3]) -> Cluster {
        let l = self.launch;
        let nt = self.threads_per_cta();
        let smem_len = (self.prog.dyn_smem_base + l.smem_bytes) as usize;
        let nregs = self.prog.reg_names.len();
        let mut ctas = Vec::new();
        let mut regs = Vec::new();
        for r in 0..l.cluster.iter().product::<u32>() {
            let c = [
                r % l.cluster[0],
                (r / l.cluster[0]) % l.cluster[1],
                r / (l.cluster[0] * l.cluster[1]),
            ];
            let ctaid = [0, 1, 2].map(|d| id[d] * l.cluster[d] + c[d]);
            ctas.push(Cta::new(
                ctaid,
                nt,
                smem_len,
                self.policy.launch_regs.or(self.prog.max_regs),
            ));
            regs.push(Regs::new(nregs, nt));
        }
        Cluster {
            id,
            regs,
            ctas,
            cbar: Default::default(),
            ops: Vec::new(),
        }
    }

    /// Schedules the cluster's warps until every thread exits.
    fn run_cluster(&mut self, cl: &mut Cluster) -> Result<(), SimError> {
        let nt = self.threads_per_cta();
        let wpc = nt.div_ceil(32);
        let nwarps = cl.ctas.len() as u32 * wpc;
        loop {
            if self.stats.warp_instructions > self.policy.step_limit {
                return Err(SimError::StepLimit(self.policy.step_limit));
            }
            if !cl.ops.is_empty() && self.rng.one_in(self.policy.complete_one_in) {
                self.complete_random(cl)?;
                continue;
            }
            if cl.ctas.iter().all(|c| c.live == 0) {
                if cl.ops.is_empty() {
                    return Ok(());
                }
                self.complete_random(cl)?;
                continue;
            }
            // A random warp first, then the others in order, until one steps.
            let first = self.rng.below(u64::from(nwarps)) as u32;
            let mut stepped = false;
            for k in 0..nwarps {
                let w = (first + k) % nwarps;
                let (ci, wi) = ((w / wpc) as usize, w % wpc);
                let burst = 1 + self.rng.below(u64::from(self.policy.max_burst)) as u32;
                let mut n = 0;
                while n < burst && self.step_warp(cl, ci, wi)? {
                    n += 1;
                }
                if n > 0 {
                    stepped = true;
                    break;
                }
            }
            if !stepped {
                if cl.ops.is_empty() {
                    return Err(SimError::Deadlock(self.blocked(cl)));
                }
                self.complete_random(cl)?;
            }
        }
    }

    /// Completes one in-flight operation, chosen at random; `cl.ops` stays in issue order.
    /// TMA copies complete in any order; a thread's tensor-core work (`tcgen05.commit`)
    /// completes in the order it was issued, as the tensor core runs a thread's MMAs in order
    /// (a commit tracks every earlier MMA of its thread), so the oldest commit of that thread
    /// completes instead.
    fn complete_random(&mut self, cl: &mut Cluster) -> Result<(), SimError> {
        let mut i = self.rng.below(cl.ops.len() as u64) as usize;
        if matches!(cl.ops[i].kind, super::bulk::AsyncKind::Tc05 { .. }) {
            let (cta, tid) = (cl.ops[i].cta, cl.ops[i].tid);
            i = cl
                .ops
                .iter()
                .position(|o| {
                    matches!(o.kind, super::bulk::AsyncKind::Tc05 { .. })
                        && o.cta == cta
                        && o.tid == tid
                })
                .unwrap_or(i);
        }
        let op = cl.ops.remove(i);
        self.stats.async_ops += 1;
        if let Some(r) = &mut self.rec {
            r.complete(op.rec, self.stats.warp_instructions);
        }
        self.complete(cl, op)
    }

    /// Wakes the waiting lanes of warp `wi` of CTA `ci` whose condition now holds.
    fn wake(&self, cl: &mut Cluster, ci: usize, lanes: std::ops::Range<u32>) {
        for t in lanes {
            let TState::Wait(w) = cl.ctas[ci].st[t as usize] else {
                continue;
            };
            let ready = match w {
                Wait::Bar { id, round } => cl.ctas[ci].bars[id as usize].round != round,
                Wait::Mbar { off, parity } => cl.ctas[ci]
                    .mbars
                    .get(&off)
                    .is_none_or(|m| m.phase_done(parity)),
                Wait::Cluster { round } => cl.cbar.round != round,
                Wait::Bulk { n } => super::bulk::pending_groups(cl, ci as u32, t) <= n,
                Wait::Converge { .. } => false,
                Wait::Wgmma { target } => {
                    super::wgmma::warpgroup_behind(cl, ci, t / 32, target) == 0
                }
                Wait::Regs { count } => cl.ctas[ci].regs.can_grow(t / 32, count),
            };
            if ready {
                cl.ctas[ci].st[t as usize] = TState::Run;
            }
        }
    }

    /// Executes one group of warp `wi` of CTA `ci`; false when no lane of it can proceed.
    fn step_warp(&mut self, cl: &mut Cluster, ci: usize, wi: u32) -> Result<bool, SimError> {
        let nt = cl.ctas[ci].nthreads;
        let lanes = wi * 32..(wi * 32 + 32).min(nt);
        self.wake(cl, ci, lanes.clone());
        if let Some(r) = &mut self.rec {
            r.note_warp(cl, ci, wi, self.stats.warp_instructions);
        }
        // The lowest PC of a running lane first (nearly always the only one); the others in
        // ascending order only when its group cannot proceed.
        let cta = &cl.ctas[ci];
        let mut min = u32::MAX;
        for t in lanes.clone() {
            if cta.st[t as usize] == TState::Run {
                min = min.min(cta.pc[t as usize]);
            }
        }
        if min == u32::MAX {
            return Ok(false);
        }
        if self.try_group(cl, ci, wi, min)? {
            return Ok(true);
        }
        let cta = &cl.ctas[ci];
        let mut pcs: Vec<u32> = lanes
            .filter(|&t| cta.st[t as usize] == TState::Run)
            .map(|t| cta.pc[t as usize])
            .filter(|&pc| pc != min)
            .collect();
        pcs.sort_unstable();
        pcs.dedup();
        for pc in pcs {
            if self.try_group(cl, ci, wi, pc)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Executes the group of warp `wi` at `pc` (its running lanes and those waiting there to
    /// converge), unless a collective instruction still misses lanes.
    fn try_group(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        pc: u32,
    ) -> Result<bool, SimError> {
        let cta = &cl.ctas[ci];
        let base = wi * 32;
        let mut group = 0u32;
        for t in base..(base + 32).min(cta.nthreads) {
            if cta.pc[t as usize] == pc
                && matches!(
                    cta.st[t as usize],
                    TState::Run | TState::Wait(Wait::Converge { .. })
                )
            {
                group |= 1 << (t - base);
            }
        }
        if pc as usize >= self.prog.insts.len() {
            // Falling off the end of the body is an implicit `ret`.
            for l in super::lane::lanes(group) {
                self.exit_thread(cl, ci, base + l)?;
            }
            if let Some(r) = &mut self.rec {
                r.note_warp(cl, ci, wi, self.stats.warp_instructions);
            }
            return Ok(true);
        }
        if !self.collective_ready(cl, ci, wi, group, pc)? {
            return Ok(false);
        }
        self.exec_group(cl, ci, wi, group, pc)?;
        self.stats.warp_instructions += 1;
        if let Some(r) = &mut self.rec {
            r.note_warp(cl, ci, wi, self.stats.warp_instructions);
        }
        Ok(true)
    }

    /// Marks thread `t` exited; checks barriers its exit may complete and async ops its CTA
    /// leaves behind.
    pub(crate) fn exit_thread(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
    ) -> Result<(), SimError> {
        let cta = &mut cl.ctas[ci];
        if cta.st[t as usize] == TState::Exit {
            return Ok(());
        }
        cta.st[t as usize] = TState::Exit;
        cta.live -= 1;
        super::sync::recheck_bars(cl, ci);
        if cl.ctas[ci].live == 0 && !cl.ctas[ci].tmem.is_empty() {
            return Err(SimError::Protocol {
                line: 0,
                thread: cl.ctas[ci].thread(t),
                what: "the CTA exited with tensor memory still allocated (no tcgen05.dealloc)"
                    .into(),
            });
        }
        if cl.ctas[ci].live == 0
            && let Some(r) = cl.ctas[ci].regs.rounds.iter().flatten().next()
        {
            return Err(SimError::Protocol {
                line: r.line,
                thread: cl.ctas[ci].thread(t),
                what: format!(
                    "the CTA exited with this setmaxnreg executed by warps {:#06b} of their \
                     warpgroup only: every warp of the warpgroup must execute it",
                    r.done
                ),
            });
        }
        if cl.ctas[ci].live == 0 {
            let mine: Vec<&AsyncOp> = cl.ops.iter().filter(|o| o.touches(ci as u32)).collect();
            if let Some(first) = mine.first() {
                return Err(SimError::InFlightAtExit {
                    cta: cl.ctas[ci].ctaid,
                    ops: mine.len(),
                    line: first.line,
                });
            }
        }
        Ok(())
    }

    /// Every blocked group, for a deadlock report.
    fn blocked(&self, cl: &Cluster) -> Vec<Blocked> {
        let mut out: Vec<Blocked> = Vec::new();
        for (ci, cta) in cl.ctas.iter().enumerate() {
            for t in 0..cta.nthreads {
                let TState::Wait(w) = cta.st[t as usize] else {
                    continue;
                };
                let pc = cta.pc[t as usize];
                let line = self.line_near(pc, w);
                let on = super::sync::describe(cl, ci, t, w);
                let warp = t / 32;
                match out
                    .iter_mut()
                    .find(|b| b.cta == cta.ctaid && b.warp == warp && b.line == line && b.on == on)
                {
                    Some(b) => b.lanes |= 1 << (t % 32),
                    None => out.push(Blocked {
                        cta: cta.ctaid,
                        warp,
                        lanes: 1 << (t % 32),
                        line,
                        on,
                    }),
                }
            }
        }
        out
    }

    /// The line of the instruction a waiting thread is at (a `bar.sync` waiter has moved past
    /// its barrier already).
    fn line_near(&self, pc: u32, w: Wait) -> u32 {
        let pc = match w {
            Wait::Bar { .. } | Wait::Cluster { .. } | Wait::Bulk { .. } => pc.saturating_sub(1),
            _ => pc,
        };
        self.prog.insts.get(pc as usize).map_or(0, |i| i.line)
    }

    /// The uninitialised-register error.
    pub(crate) fn uninit(&self, cl: &Cluster, ci: usize, t: u32, r: u32, line: u32) -> SimError {
        if let Some(at) = super::tcgen05::pending_ld(&cl.ctas[ci].tc.ld[(t / 32) as usize], t, r) {
            return SimError::Protocol {
                line,
                thread: cl.ctas[ci].thread(t),
                what: format!(
                    "reads `{}`, loaded by the tcgen05.ld of line {at}, before tcgen05.wait::ld",
                    self.prog.reg_names[r as usize]
                ),
            };
        }
        if let Some(at) = cl.ctas[ci].mma[(t / 32) as usize].owner(r) {
            return SimError::Protocol {
                line,
                thread: cl.ctas[ci].thread(t),
                what: format!(
                    "reads `{}` while the wgmma.mma_async of line {at} still owns it (no \
                     wgmma.wait_group has retired it)",
                    self.prog.reg_names[r as usize]
                ),
            };
        }
        SimError::Uninitialised {
            line,
            thread: cl.ctas[ci].thread(t),
            reg: self.prog.reg_names[r as usize].clone(),
        }
    }
}

/// Whether `prog` holds an atomic that may reach global memory (`atom`/`red` not on shared
/// memory) or a TMA reduce-store.
fn has_global_atomics(prog: &Program) -> bool {
    use super::ops::{MemSpace, Op};
    prog.insts.iter().any(|i| match &i.op {
        Op::Atom { space, .. } => matches!(space, MemSpace::Global | MemSpace::Generic),
        Op::RedVec { .. } => true,
        Op::TmaStore { reduce, .. } => reduce.is_some(),
        _ => false,
    })
}
