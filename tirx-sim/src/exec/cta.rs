//! The state of one cluster, as the units read and write it: each CTA's threads (program
//! counter, running / waiting / exited), register file, shared memory, barriers and the
//! units' own state types (`shadow.rs`, `wgmma.rs`, `tcgen05.rs`, `tcgen05_fence.rs`,
//! `setmaxnreg.rs`), the cluster barrier and the asynchronous operations in flight; and the
//! kernel parameters as the entry lays them out.
//!
//! The scheduler (`machine.rs`) creates these and decides which warp steps; the units
//! (`lane.rs`, `sync.rs`, `bulk.rs`, …) change them one instruction at a time.

use std::collections::BTreeMap;

use super::bulk::AsyncOp;
use super::diag::{SimError, ThreadId};
use super::program::Program;
use super::sync::{Mbar, NamedBar};
use super::{ParamValue, TensorMapDesc};

/// A thread's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TState {
    Run,
    Wait(Wait),
    Exit,
}

/// What a waiting thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Named barrier `id` to finish round `round`.
    Bar { id: u8, round: u64 },
    /// The mbarrier at `off` of its CTA to complete the phase of parity `parity`.
    Mbar { off: u32, parity: u32 },
    /// The cluster barrier to finish round `round`.
    Cluster { round: u64 },
    /// At most `n` of its bulk groups pending.
    Bulk { n: u32 },
    /// The other lanes (`need`) of a collective instruction.
    Converge { need: u32 },
    /// Every sibling warp of its warpgroup to commit `target` wgmma groups.
    Wgmma { target: u64 },
    /// The CTA's register pool to hold enough for `setmaxnreg.inc` to `count`.
    Regs { count: u32 },
}

/// The kernel parameters laid out as the entry declares them.
pub(crate) struct ParamBuf {
    pub bytes: Vec<u8>,
    /// (offset, description) of each tensor-map parameter.
    pub maps: Vec<(u32, TensorMapDesc)>,
}

impl ParamBuf {
    pub(crate) fn new(p: &Program, values: &[ParamValue]) -> Result<ParamBuf, SimError> {
        if values.len() != p.params.len() {
            return Err(SimError::Launch(format!(
                "{} parameters given, the entry takes {}",
                values.len(),
                p.params.len()
            )));
        }
        let mut bytes = vec![0u8; p.param_bytes as usize];
        let mut maps = Vec::new();
        for (i, (v, &(off, size))) in values.iter().zip(&p.params).enumerate() {
            let (data, want): (Vec<u8>, u32) = match v {
                ParamValue::U32(x) => (x.to_le_bytes().to_vec(), 4),
                ParamValue::F32(x) => (x.to_bits().to_le_bytes().to_vec(), 4),
                ParamValue::U64(x) => (x.to_le_bytes().to_vec(), 8),
                ParamValue::TensorMap(m) => {
                    m.validate()
                        .map_err(|reason| SimError::TensorMap { param: i, reason })?;
                    maps.push((off, m.clone()));
                    (vec![0; 128], 128)
                }
            };
            if want != size {
                return Err(SimError::Launch(format!(
                    "parameter {i} is {size} bytes, the value given is {want}"
                )));
            }
            bytes[off as usize..(off + size) as usize].copy_from_slice(&data);
        }
        Ok(ParamBuf { bytes, maps })
    }
}

/// A CTA's register file: one slot and one "written" flag per (thread, register), and when
/// the thread last wrote it (for the `wgmma.fence` rule, `wgmma.rs`).
pub(crate) struct Regs {
    /// Registers per thread (the slot of thread `t`'s register `r` is `t·n + r`).
    pub n: usize,
    /// Values.
    pub v: Vec<u64>,
    /// Whether each slot has been written.
    pub w: Vec<bool>,
    /// Per slot: the value of `now` at the thread's last write.
    pub stamp: Vec<u32>,
    /// Groups of lanes the CTA has executed (a clock).
    pub now: u32,
}

impl Regs {
    /// `n` registers for each of `nthreads` threads, none written.
    pub(crate) fn new(n: usize, nthreads: u32) -> Regs {
        let slots = n * nthreads as usize;
        Regs {
            n,
            v: vec![0; slots],
            w: vec![false; slots],
            stamp: vec![0; slots],
            now: 0,
        }
    }
}

/// One CTA: its threads' control state, shared memory and barriers.
pub(crate) struct Cta {
    pub ctaid: [u32; 3],
    pub nthreads: u32,
    pub pc: Vec<u32>,
    pub st: Vec<TState>,
    pub smem: Vec<u8>,
    pub bars: [NamedBar; 16],
    pub mbars: BTreeMap<u32, Mbar>,
    /// Per thread: the id its next bulk group gets at `commit_group` (`bulk.rs`).
    pub bulk: super::bulk::BulkGroups,
    /// Per thread: the cluster-barrier round it arrived in, if it has not waited yet
    /// (`sync.rs`).
    pub cluster: super::sync::ClusterArrivals,
    pub live: u32,
    /// Generic-writer tags and fence epochs of the shared memory (`shadow.rs`).
    pub shadow: super::shadow::Shadow,
    /// Per warp: its wgmma operations in flight (`wgmma.rs`).
    pub mma: Vec<super::wgmma::WarpMma>,
    /// Tensor memory and its allocations (`tcgen05.rs`).
    pub tmem: super::tcgen05::Tmem,
    /// The CTA's `tcgen05` bookkeeping: MMAs queued, loads and stores awaiting their wait,
    /// which MMA last wrote each cell and each thread's last fence (`tcgen05_fence.rs`).
    pub tc: super::tcgen05_fence::Tc05Cta,
    /// Per-warp register counts and the pool (`setmaxnreg.rs`).
    pub regs: super::setmaxnreg::RegBudget,
    /// Whether a thread of the CTA observed a failed `clusterlaunchcontrol.try_cancel`
    /// response (`clc.rs`).
    pub clc: super::clc::ClcCta,
}

impl Cta {
    /// CTA `ctaid` of `nthreads` threads at their first instruction, `smem_len` bytes of
    /// shared memory (zeroed), every unit idle; `launch_regs` is the per-thread register
    /// count the kernel was launched with (the `setmaxnreg` pool), when known.
    pub(crate) fn new(
        ctaid: [u32; 3],
        nthreads: u32,
        smem_len: usize,
        launch_regs: Option<u32>,
    ) -> Cta {
        let nt = nthreads as usize;
        let warps = nthreads.div_ceil(32);
        Cta {
            ctaid,
            nthreads,
            pc: vec![0; nt],
            st: vec![TState::Run; nt],
            smem: vec![0; smem_len],
            bars: Default::default(),
            mbars: BTreeMap::new(),
            bulk: super::bulk::BulkGroups::new(nthreads),
            cluster: super::sync::ClusterArrivals::new(nthreads),
            live: nthreads,
            shadow: Default::default(),
            mma: vec![Default::default(); warps as usize],
            tmem: Default::default(),
            tc: super::tcgen05_fence::Tc05Cta::new(nthreads),
            clc: Default::default(),
            regs: super::setmaxnreg::RegBudget::new(warps, launch_regs),
        }
    }

    pub(crate) fn thread(&self, t: u32) -> ThreadId {
        ThreadId {
            cta: self.ctaid,
            tid: t,
        }
    }
}

/// The CTAs of one cluster and what they share.
pub(crate) struct Cluster {
    /// The cluster's index in the grid.
    pub id: [u32; 3],
    /// Each CTA's register file (apart from [`Cta`], so a unit can borrow both).
    pub regs: Vec<Regs>,
    /// The CTAs, by rank in the cluster.
    pub ctas: Vec<Cta>,
    /// The cluster barrier.
    pub cbar: super::sync::ClusterBar,
    /// Asynchronous operations in flight.
    pub ops: Vec<AsyncOp>,
}
