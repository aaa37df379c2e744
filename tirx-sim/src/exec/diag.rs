//! `SimError`: every way a run can fail, as a typed value naming the PTX line.
//!
//! The emulator never panics on a kernel's behaviour: an instruction outside the supported
//! subset, an access outside any allocation, a read of a register never written, a
//! synchronisation protocol broken (tx-count underflow, more arrivals than a phase expects)
//! and a deadlock are each one variant here. A deadlock lists every blocked thread group
//! (warp, lanes, line) with what it waits on and that object's state, so the report says
//! which phase, arrivals and bytes were seen versus expected.

use std::fmt;

/// A thread: its CTA (`%ctaid`) and its linear thread index in the CTA (`%tid.x` for the
/// 1-D blocks tirx launches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadId {
    /// `%ctaid.{x,y,z}`.
    pub cta: [u32; 3],
    /// Linear thread index in the CTA.
    pub tid: u32,
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.cta;
        write!(f, "CTA ({x},{y},{z}) thread {}", self.tid)
    }
}

/// A memory state space as the emulator addresses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `.global` (and generic addresses that fall in no other window).
    Global,
    /// `.shared::cta` / `.shared::cluster`.
    Shared,
    /// `.param` (kernel parameters).
    Param,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Param => "param",
        })
    }
}

/// What one blocked group of lanes waits on, with the object's state at the deadlock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitOn {
    /// `bar.sync`/`barrier.sync` (PTX ISA §9.7.13 "bar, barrier").
    Barrier {
        /// Barrier id 0..15.
        id: u32,
        /// Threads arrived in the current round.
        arrived: u32,
        /// Threads the round needs.
        expected: u32,
    },
    /// `mbarrier.try_wait.parity` (§9.7.13 "mbarrier").
    Mbarrier {
        /// Shared-memory offset of the barrier object, in its CTA.
        addr: u32,
        /// The parity waited for.
        parity: u32,
        /// The barrier's current phase number (its parity is `phase & 1`).
        phase: u64,
        /// Arrivals still pending in the current phase.
        pending: i64,
        /// The arrival count each phase expects (from `mbarrier.init`).
        expected: u32,
        /// The tx-count: bytes expected minus bytes completed in the current phase.
        tx: i64,
    },
    /// `barrier.cluster.wait` (§9.7.13).
    ClusterBarrier {
        /// Threads of the cluster arrived in the current round.
        arrived: u32,
        /// Threads the round needs.
        expected: u32,
    },
    /// `cp.async.bulk.wait_group` (§9.7.9): bulk groups still in flight.
    BulkGroup {
        /// Groups allowed to remain pending.
        allowed: u32,
        /// Groups pending.
        pending: u32,
    },
    /// `wgmma.wait_group` waiting for the sibling warps of its warpgroup to commit the groups
    /// it retires (a warpgroup's MMA is one operation).
    Warpgroup {
        /// Groups every warp must have committed.
        target: u64,
        /// Warps of the warpgroup (bit = index in it) still behind.
        behind: u32,
    },
    /// `setmaxnreg.inc` waiting for the CTA's register pool (§9.7.19.6).
    Registers {
        /// The per-thread count requested.
        count: u32,
        /// Registers the other warps of the CTA hold (those whose count is known).
        held: u32,
        /// Registers the pool holds in all.
        capacity: u32,
    },
    /// A warp-collective instruction (`shfl.sync`, `.aligned` ops) waiting for the other
    /// lanes of its mask to reach it.
    Converge {
        /// Lanes the instruction needs.
        needed: u32,
        /// Lanes present.
        present: u32,
    },
}

impl fmt::Display for WaitOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitOn::Barrier {
                id,
                arrived,
                expected,
            } => write!(f, "bar {id}: {arrived} of {expected} threads arrived"),
            WaitOn::Mbarrier {
                addr,
                parity,
                phase,
                pending,
                expected,
                tx,
            } => write!(
                f,
                "mbarrier at shared+{addr:#x}: waits for parity {parity}, the barrier is in phase \
                 {phase} (parity {}), {} of {expected} arrivals seen, tx-count {tx} bytes still \
                 expected",
                phase & 1,
                i64::from(*expected) - pending,
            ),
            WaitOn::ClusterBarrier { arrived, expected } => {
                write!(
                    f,
                    "cluster barrier: {arrived} of {expected} threads arrived"
                )
            }
            WaitOn::BulkGroup { allowed, pending } => write!(
                f,
                "cp.async.bulk.wait_group {allowed}: {pending} bulk groups still pending"
            ),
            WaitOn::Warpgroup { target, behind } => write!(
                f,
                "wgmma.wait_group: warps {behind:#06b} of the warpgroup have not committed \
                 {target} wgmma groups"
            ),
            WaitOn::Registers {
                count,
                held,
                capacity,
            } => write!(
                f,
                "setmaxnreg.inc to {count} registers per thread needs {} registers; the other \
                 warps hold {held} of the CTA's {capacity}",
                32 * count
            ),
            WaitOn::Converge { needed, present } => write!(
                f,
                "warp-collective: needs lanes {needed:#010x}, only {present:#010x} arrived"
            ),
        }
    }
}

/// Lanes of one warp blocked at one instruction on one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// `%ctaid`.
    pub cta: [u32; 3],
    /// Warp index in the CTA.
    pub warp: u32,
    /// The blocked lanes.
    pub lanes: u32,
    /// PTX line of the instruction they wait at (or just passed, for `bar.sync`).
    pub line: u32,
    /// What they wait on.
    pub on: WaitOn,
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimError {
    /// No entry of that name in the module.
    #[error("no entry `{0}` in the module")]
    NoEntry(String),
    /// The launch does not fit the entry: parameter count or sizes, block size, cluster.
    #[error("bad launch: {0}")]
    Launch(String),
    /// A tensor-map description the encoder would reject (CUDA Driver API §6.30).
    #[error("bad tensor map for parameter {param}: {reason}")]
    TensorMap {
        /// The parameter's index.
        param: usize,
        /// The rule broken.
        reason: String,
    },
    /// An instruction this version of the emulator does not execute.
    #[error("PTX line {line}: `{instr}` is unsupported in this version of tirx-sim: {reason}")]
    Unsupported {
        /// Source line.
        line: u32,
        /// The opcode as written.
        instr: String,
        /// Why.
        reason: String,
    },
    /// An access outside every allocation of its space.
    #[error(
        "PTX line {line}: {thread}: {space} access of {size} bytes at {addr:#x} is out of bounds{detail}"
    )]
    OutOfBounds {
        /// Source line (0 for an access by an asynchronous unit with no line).
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// The space.
        space: Space,
        /// The address.
        addr: u64,
        /// Bytes accessed.
        size: u32,
        /// More context (`; nearest allocation …`).
        detail: String,
    },
    /// A data-dependent index or TMA coordinate outside its tensor (a `// tirx.check` note:
    /// a gather's index read from data, a TMA load at a coordinate from a page table). The
    /// GPU reads 0 there (the guarded load, TMA's zero fill); the emulator reports it.
    #[error(
        "PTX line {line}: {thread}: the {what} of `{tensor}` at a data-dependent index: {index} \
         in dimension {dim} (outermost first) is outside the tensor's extent {extent}"
    )]
    DataIndex {
        /// Source line of the check (the `setp` or the TMA load).
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// `gather` or `TMA load`.
        what: &'static str,
        /// The tensor parameter's name.
        tensor: String,
        /// The dimension, outermost first.
        dim: u32,
        /// The index (signed: a negative `i32` index or TMA coordinate prints below 0).
        index: i64,
        /// The tensor's extent in that dimension.
        extent: u64,
    },
    /// An access not aligned to its size (PTX ISA §5.4.5 "Alignment": accesses must be
    /// naturally aligned).
    #[error("PTX line {line}: {thread}: {space} access at {addr:#x} is not {align}-byte aligned")]
    Misaligned {
        /// Source line.
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// The space.
        space: Space,
        /// The address.
        addr: u64,
        /// Required alignment.
        align: u32,
    },
    /// A register read before any write in this thread.
    #[error("PTX line {line}: {thread} reads `{reg}`, which it never wrote")]
    Uninitialised {
        /// Source line.
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// The register.
        reg: String,
    },
    /// A synchronisation protocol broken (mbarrier, shuffles, barriers).
    #[error("PTX line {line}: {thread}: {what}")]
    Protocol {
        /// Source line.
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// What, in words.
        what: String,
    },
    /// More bytes completed on an mbarrier than its phase expects, with every arrival in.
    #[error(
        "tx-count underflow on the mbarrier at shared+{addr:#x} of CTA {cta:?} in phase {phase}: \
         all arrivals are in and {excess} bytes more completed than were expected (line {line})"
    )]
    TxUnderflow {
        /// Line of the instruction whose completion underflowed it.
        line: u32,
        /// `%ctaid` of the barrier's CTA.
        cta: [u32; 3],
        /// Its shared-memory offset.
        addr: u32,
        /// Its phase.
        phase: u64,
        /// Bytes completed beyond the expected.
        excess: i64,
    },
    /// A generic shared-memory access racing with an in-flight TMA copy.
    #[error("PTX line {line}: {thread} {what}")]
    Race {
        /// Source line of the access.
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// What, with the copy's line.
        what: String,
    },
    /// A TMA store reads shared memory written through the generic proxy without a
    /// `fence.proxy.async` of the writer in between.
    #[error(
        "PTX line {line}: {thread}: the {reader} reads shared+{addr:#x}, which {writer} wrote \
         through the generic proxy (its last shared store: line {write_line}) without a \
         fence.proxy.async since"
    )]
    UnfencedProxy {
        /// Line of the async-proxy reader (a TMA store, an MMA).
        line: u32,
        /// What reads: `TMA store`, `wgmma.mma_async`, `tcgen05.mma`.
        reader: &'static str,
        /// The issuing thread.
        thread: ThreadId,
        /// The first unfenced byte.
        addr: u32,
        /// The thread that wrote it.
        writer: ThreadId,
        /// The writer's last shared-memory store.
        write_line: u32,
    },
    /// Every live thread is blocked and no asynchronous operation is in flight.
    #[error("{}", deadlock_text(.0))]
    Deadlock(Vec<Blocked>),
    /// A CTA's threads all exited with asynchronous operations still using its shared memory.
    #[error(
        "CTA {cta:?} exited with {ops} asynchronous operation(s) in flight (issued at line {line})"
    )]
    InFlightAtExit {
        /// `%ctaid`.
        cta: [u32; 3],
        /// How many.
        ops: usize,
        /// Line of the first.
        line: u32,
    },
    /// The run executed more warp-instructions than its limit (a runaway loop).
    #[error("step limit of {0} warp-instructions reached")]
    StepLimit(u64),
}

fn deadlock_text(blocked: &[Blocked]) -> String {
    let mut s = String::from("deadlock: every live thread is blocked and nothing is in flight");
    for b in blocked {
        let [x, y, z] = b.cta;
        s += &format!(
            "\n  CTA ({x},{y},{z}) warp {} lanes {:#010x} at PTX line {}: {}",
            b.warp, b.lanes, b.line, b.on
        );
    }
    s
}
