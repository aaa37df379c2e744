//! The opt-in event recorder behind `tirx sim --timeline` (issue #10, "Use"): what each warp of
//! the first cluster did, and when each asynchronous operation was issued and completed.
//!
//! **Time unit: steps.** A step is one warp-instruction (one lockstep group of lanes executing
//! one instruction, [`super::Stats::warp_instructions`]) executed by any warp of the recorded
//! cluster, counted from the cluster's start. The emulator runs one warp at a time, so a warp's
//! "busy" interval is the time it was *runnable* (some lane could issue) while the seeded
//! scheduler interleaved it with the other runnable warps; it is not a cycle model and not GPU
//! time. Asynchronous operations take no steps of their own: one completes when the scheduler
//! decides (`sched.rs`), so their lengths show the order the scheduler chose, not the latency of
//! a TMA unit or tensor core.
//!
//! Invariants: per warp, spans are in time order and do not overlap (a warp is in one state at
//! a time, and a span is closed before the next opens), and two spans in a row differ in state;
//! spans are sorted by start; an operation's `complete` is at least its `issue`. A state that
//! lasted no step (a warp that blocked and was woken within the same step) leaves no span. Recording is off unless [`super::Policy::timeline`] asks for it; off, the machine
//! holds `None` and each hook is one branch.
//!
//! Recorded: the cluster holding CTA (0, 0, 0) (every CTA of it). A warp's state is sampled when
//! the scheduler tries it (after waking its lanes) and after each instruction it executes, so a
//! blocked span ends when the scheduler next looks at the warp after the condition holds.

use std::collections::VecDeque;

use serde::Serialize;

use super::cta::{Cluster, TState, Wait};

/// At most this many spans and operations each are kept (the rest are counted in
/// [`Timeline::dropped`]), so a big run stays manageable.
pub const MAX_EVENTS: usize = 250_000;

/// What a warp waits on while blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// `bar.sync` / `barrier.sync` (a named barrier).
    BarSync,
    /// `mbarrier.try_wait` on an incomplete phase.
    Mbarrier,
    /// `barrier.cluster.wait`.
    ClusterBarrier,
    /// `cp.async.bulk.wait_group` (TMA stores in flight).
    BulkWaitGroup,
    /// `wgmma.wait_group` while a sibling warp of the warpgroup has not committed.
    WgmmaWaitGroup,
    /// `setmaxnreg.inc` waiting for the register pool.
    Setmaxnreg,
    /// A warp-collective instruction waiting for lanes that are blocked elsewhere.
    Converge,
}

impl WaitKind {
    /// The instruction's name, for legends.
    pub fn name(self) -> &'static str {
        match self {
            WaitKind::BarSync => "bar.sync",
            WaitKind::Mbarrier => "mbarrier.try_wait",
            WaitKind::ClusterBarrier => "barrier.cluster.wait",
            WaitKind::BulkWaitGroup => "cp.async.bulk.wait_group",
            WaitKind::WgmmaWaitGroup => "wgmma.wait_group",
            WaitKind::Setmaxnreg => "setmaxnreg",
            WaitKind::Converge => "converge",
        }
    }

    fn of(w: Wait) -> WaitKind {
        match w {
            Wait::Bar { .. } => WaitKind::BarSync,
            Wait::Mbar { .. } => WaitKind::Mbarrier,
            Wait::Cluster { .. } => WaitKind::ClusterBarrier,
            Wait::Bulk { .. } => WaitKind::BulkWaitGroup,
            Wait::Converge { .. } => WaitKind::Converge,
            Wait::Wgmma { .. } => WaitKind::WgmmaWaitGroup,
            Wait::Regs { .. } => WaitKind::Setmaxnreg,
        }
    }
}

/// A warp's state over a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "on")]
pub enum WarpState {
    /// Some lane can issue: the warp executes (interleaved with the other runnable warps).
    Busy,
    /// Every live lane waits.
    Blocked(WaitKind),
}

/// One span of a warp's state, `start..end` in steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarpSpan {
    /// The CTA's rank in the cluster.
    pub cta: u32,
    /// The warp's index in its CTA.
    pub warp: u32,
    pub start: u64,
    pub end: u64,
    #[serde(flatten)]
    pub state: WarpState,
}

/// The unit an asynchronous operation runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// `cp.async.bulk.tensor` global → shared.
    TmaLoad,
    /// `cp.async.bulk.tensor` shared → global.
    TmaStore,
    /// One committed `wgmma` group of a warpgroup: from its first `mma_async` to the
    /// `wgmma.wait_group` that retires it (the emulator computes it there).
    Wgmma,
    /// The `tcgen05.mma`s one `tcgen05.commit` hands to the tensor core, from the commit to
    /// their completion.
    Tcgen05Mma,
    /// `tcgen05.ld`s of a warp until its `tcgen05.wait::ld`.
    TmemLoad,
    /// `tcgen05.st`s of a warp until its `tcgen05.wait::st`.
    TmemStore,
    /// `clusterlaunchcontrol.try_cancel`.
    Clc,
    /// `st.async` into a CTA of the cluster.
    StAsync,
}

impl Unit {
    /// The operation's name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::TmaLoad => "TMA load",
            Unit::TmaStore => "TMA store",
            Unit::Wgmma => "wgmma",
            Unit::Tcgen05Mma => "tcgen05.mma",
            Unit::TmemLoad => "tcgen05.ld",
            Unit::TmemStore => "tcgen05.st",
            Unit::Clc => "try_cancel",
            Unit::StAsync => "st.async",
        }
    }

    /// The engine it runs on: one lane of a timeline picture per engine.
    pub fn engine(self) -> &'static str {
        match self {
            Unit::TmaLoad | Unit::TmaStore => "TMA",
            Unit::Wgmma | Unit::Tcgen05Mma => "tensor core",
            Unit::TmemLoad | Unit::TmemStore => "TMEM ld/st",
            Unit::Clc => "cluster launch control",
            Unit::StAsync => "distributed shared memory",
        }
    }
}

/// One asynchronous operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OpSpan {
    pub unit: Unit,
    /// Issuing CTA (rank in the cluster) and warp.
    pub cta: u32,
    pub warp: u32,
    /// The PTX line that issued it.
    pub line: u32,
    pub issue: u64,
    /// `None` when the run ended (by an error) before it completed.
    pub complete: Option<u64>,
}

/// What the recorder saw, in steps (see the module header).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// The recorded cluster's id and its CTAs' ids, by rank.
    pub cluster: [u32; 3],
    pub ctas: Vec<[u32; 3]>,
    pub warps_per_cta: u32,
    /// Steps the recorded cluster took.
    pub end: u64,
    /// Per warp, spans in time order (warps interleaved).
    pub warps: Vec<WarpSpan>,
    pub ops: Vec<OpSpan>,
    /// Spans and operations not kept beyond [`MAX_EVENTS`].
    pub dropped: u64,
}

/// The recorder a machine holds while [`super::Policy::timeline`] is on.
#[derive(Default)]
pub(crate) struct Recorder {
    tl: Timeline,
    /// Recording the current cluster; its start in warp-instructions of the run.
    on: bool,
    origin: u64,
    /// Per (CTA, warp): the open span's state and start (`None`: exited or not seen yet).
    cur: Vec<Option<(WarpState, u64)>>,
    /// Per (CTA, warp): its last closed span, kept back so that a span of the same state that
    /// follows it directly (the warp blocked and woke within one step) merges into it.
    last: Vec<Option<WarpSpan>>,
    /// Per (CTA, warp): the step of the first `mma_async` since the last commit.
    wgmma_open: Vec<Option<u64>>,
    /// Per (CTA, warp): the committed wgmma groups' operations, oldest first.
    wgmma_groups: Vec<VecDeque<Option<u32>>>,
    /// Per (CTA, warp): the open `tcgen05.ld` / `tcgen05.st` operation.
    tmem: Vec<[Option<u32>; 2]>,
}

impl Recorder {
    /// Starts a cluster: recorded when it holds CTA (0, 0, 0).
    pub(crate) fn begin(&mut self, cl: &Cluster, now: u64, warps_per_cta: u32) {
        self.on = cl.id == [0, 0, 0];
        if !self.on {
            return;
        }
        let n = cl.ctas.len() * warps_per_cta as usize;
        self.origin = now;
        self.tl.cluster = cl.id;
        self.tl.ctas = cl.ctas.iter().map(|c| c.ctaid).collect();
        self.tl.warps_per_cta = warps_per_cta;
        // Every thread starts running: each warp with threads is busy from step 0.
        let threads = cl.ctas[0].nthreads;
        self.cur = (0..n)
            .map(|i| ((i as u32 % warps_per_cta) * 32 < threads).then_some((WarpState::Busy, 0)))
            .collect();
        self.last = vec![None; n];
        self.wgmma_open = vec![None; n];
        self.wgmma_groups = vec![VecDeque::new(); n];
        self.tmem = vec![[None; 2]; n];
    }

    /// Ends the recorded cluster at `now`: open spans close.
    pub(crate) fn end(&mut self, now: u64) {
        if !self.on {
            return;
        }
        let t = now - self.origin;
        for i in 0..self.cur.len() {
            self.close(i, t);
            if let Some(s) = self.last[i].take() {
                self.keep_span(s);
            }
        }
        self.tl.warps.sort_by_key(|s| (s.start, s.cta, s.warp));
        self.tl.end = t;
        self.on = false;
    }

    /// The recording, closed at `now` if the run stopped inside the recorded cluster.
    pub(crate) fn finish(mut self, now: u64) -> Timeline {
        self.end(now);
        self.tl
    }

    fn idx(&self, ci: usize, wi: u32) -> usize {
        ci * self.tl.warps_per_cta as usize + wi as usize
    }

    fn close(&mut self, i: usize, t: u64) {
        if let Some((state, start)) = self.cur[i].take()
            && t > start
        {
            match &mut self.last[i] {
                Some(l) if l.state == state && l.end == start => l.end = t,
                _ => {
                    let wpc = self.tl.warps_per_cta as usize;
                    let span = WarpSpan {
                        cta: (i / wpc) as u32,
                        warp: (i % wpc) as u32,
                        start,
                        end: t,
                        state,
                    };
                    if let Some(l) = self.last[i].replace(span) {
                        self.keep_span(l);
                    }
                }
            }
        }
    }

    fn keep_span(&mut self, s: WarpSpan) {
        if self.tl.warps.len() < MAX_EVENTS {
            self.tl.warps.push(s);
        } else {
            self.tl.dropped += 1;
        }
    }

    /// Samples warp `wi` of CTA `ci` at `now`: a change of state closes its open span.
    pub(crate) fn note_warp(&mut self, cl: &Cluster, ci: usize, wi: u32, now: u64) {
        if !self.on {
            return;
        }
        let cta = &cl.ctas[ci];
        let lanes = wi * 32..(wi * 32 + 32).min(cta.nthreads);
        let (mut run, mut wait, mut converge) = (false, None, false);
        for t in lanes {
            match cta.st[t as usize] {
                TState::Run => run = true,
                TState::Wait(Wait::Converge { .. }) => converge = true,
                TState::Wait(w) => wait = wait.or(Some(WaitKind::of(w))),
                TState::Exit => {}
            }
        }
        let state = if run {
            Some(WarpState::Busy)
        } else if let Some(k) = wait {
            Some(WarpState::Blocked(k))
        } else {
            converge.then_some(WarpState::Blocked(WaitKind::Converge))
        };
        let (i, t) = (self.idx(ci, wi), now - self.origin);
        if self.cur[i].map(|c| c.0) != state {
            self.close(i, t);
            self.cur[i] = state.map(|s| (s, t));
        }
    }

    /// An operation issued at `now`; its index for [`Recorder::complete`].
    pub(crate) fn issue(
        &mut self,
        unit: Unit,
        (ci, wi): (usize, u32),
        line: u32,
        issue: u64,
    ) -> Option<u32> {
        if !self.on {
            return None;
        }
        if self.tl.ops.len() >= MAX_EVENTS {
            self.tl.dropped += 1;
            return None;
        }
        self.tl.ops.push(OpSpan {
            unit,
            cta: ci as u32,
            warp: wi,
            line,
            issue,
            complete: None,
        });
        Some(self.tl.ops.len() as u32 - 1)
    }

    /// The step `now` in the recorded cluster's time.
    pub(crate) fn at(&self, now: u64) -> u64 {
        now.saturating_sub(self.origin)
    }

    /// Operation `id` completed at `now`.
    pub(crate) fn complete(&mut self, id: Option<u32>, now: u64) {
        if let Some(op) = id.and_then(|i| self.tl.ops.get_mut(i as usize)) {
            op.complete = Some(now - self.origin);
        }
    }

    /// A `wgmma.mma_async` of warp `wi`.
    pub(crate) fn wgmma_issue(&mut self, ci: usize, wi: u32, now: u64) {
        if self.on {
            let i = self.idx(ci, wi);
            let t = self.at(now);
            self.wgmma_open[i].get_or_insert(t);
        }
    }

    /// A `wgmma.commit_group` of warp `wi`: one operation per warpgroup, kept by its first warp
    /// (a group without MMAs is none).
    pub(crate) fn wgmma_commit(&mut self, ci: usize, wi: u32, line: u32) {
        if !self.on {
            return;
        }
        let i = self.idx(ci, wi);
        let first = self.wgmma_open[i].take();
        let id = match first {
            Some(t) if wi.is_multiple_of(4) => self.issue(Unit::Wgmma, (ci, wi), line, t),
            _ => None,
        };
        self.wgmma_groups[i].push_back(id);
    }

    /// `groups` committed groups of warp `wi` retired at `now`.
    pub(crate) fn wgmma_retire(&mut self, ci: usize, wi: u32, groups: u64, now: u64) {
        if !self.on {
            return;
        }
        let i = self.idx(ci, wi);
        for _ in 0..groups {
            let id = self.wgmma_groups[i].pop_front().flatten();
            self.complete(id, now);
        }
    }

    /// A `tcgen05.ld` (`store` false) or `tcgen05.st` of warp `wi`: opens the warp's operation.
    pub(crate) fn tmem_access(&mut self, ci: usize, wi: u32, store: bool, line: u32, now: u64) {
        if !self.on {
            return;
        }
        let i = self.idx(ci, wi);
        if self.tmem[i][usize::from(store)].is_none() {
            let unit = if store {
                Unit::TmemStore
            } else {
                Unit::TmemLoad
            };
            let t = self.at(now);
            self.tmem[i][usize::from(store)] = self.issue(unit, (ci, wi), line, t);
        }
    }

    /// A `tcgen05.wait::ld` / `::st` of warp `wi`: completes the warp's open operation.
    pub(crate) fn tmem_wait(&mut self, ci: usize, wi: u32, store: bool, now: u64) {
        if !self.on {
            return;
        }
        let i = self.idx(ci, wi);
        let id = self.tmem[i][usize::from(store)].take();
        self.complete(id, now);
    }
}
