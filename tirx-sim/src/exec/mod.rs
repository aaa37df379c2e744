//! The executor: runs a decoded PTX entry on the CPU (issue #10, first executing piece).
//!
//! ```text
//! ptx::parse ─► Program::new (program.rs; decode/: AST → Op (ops.rs), unsupported → an
//!               error before running)
//!            ─► run: params checked against the entry and laid out (cta.rs: ParamBuf), one
//!               cluster at a time
//!                    ├─ the scheduler: which warp steps, when an async op completes, the
//!                    │  deadlock check (machine.rs; its seeded Rng and Policy: sched.rs)
//!                    ├─ the state it schedules: CTAs, threads, registers (cta.rs), global
//!                    │  memory (device.rs), address spaces (mem.rs)
//!                    ├─ one instruction for a lockstep group of lanes (lane.rs), its
//!                    │  arithmetic (alu.rs, float.rs)
//!                    ├─ barriers, mbarriers (sync.rs); shuffles, votes (warp.rs);
//!                    │  ldmatrix / stmatrix (matrix.rs); atomics (atom.rs)
//!                    ├─ register budgets of setmaxnreg (setmaxnreg.rs)
//!                    ├─ TMA copies as async operations completed later (bulk.rs, tma.rs) and
//!                    │  the shared-memory shadow that catches races with them (shadow.rs)
//!                    ├─ wgmma (wgmma.rs)
//!                    ├─ tcgen05 and tensor memory (tcgen05.rs): MMA kinds (tcgen05_kind.rs),
//!                    │  block scaling (tcgen05_scale.rs), tcgen05.cp (tcgen05_cp.rs),
//!                    │  tcgen05.shift (tcgen05_shift.rs),
//!                    │  tcgen05.ld/st (tcgen05_move.rs, thread maps: tmem_shape.rs), the CTA
//!                    │  pair (tcgen05_pair.rs), ordering after MMAs (tcgen05_fence.rs)
//!                    ├─ cluster launch control (clc.rs)
//!                    ├─ every failure as a typed value naming the PTX line (diag.rs)
//!                    └─ the opt-in event recorder of `tirx sim --timeline` (timeline.rs)
//! ```
//!
//! Layering: `machine.rs` alone decides what runs when and draws every random choice (the
//! units ask it: the order of a group's atomics, a `try_wait` returning early, a
//! `try_cancel`'s answer); each unit keeps its state in its own type (`shadow::Shadow`,
//! `wgmma::WarpMma`, `tcgen05::Tmem`, `tcgen05_fence::Tc05Cta`, `setmaxnreg::RegBudget`,
//! `sync::Mbar`, `sync::ClusterArrivals`, `bulk::BulkGroups`, `clc::ClcCta`) held by the CTA
//! of `cta.rs`, below the scheduler.
//!
//! Inputs are what the runtime passes the driver: a grid, cluster and block; dynamic shared
//! memory bytes; one [`ParamValue`] per `.param` of the entry, in order — a tensor map as
//! the [`TensorMapDesc`] the runtime gives `cuTensorMapEncodeTiled`. Global memory is a
//! [`Device`] the caller fills and reads back.

mod alu;
mod atom;
mod bulk;
mod clc;
mod cta;
mod decode;
mod device;
mod diag;
pub mod float;
mod global_race;
mod lane;
mod machine;
mod matrix;
mod mem;
mod ops;
mod program;
mod sched;
mod setmaxnreg;
mod shadow;
mod st_async;
mod sync;
mod tcgen05;
mod tcgen05_cp;
mod tcgen05_fence;
mod tcgen05_kind;
mod tcgen05_move;
mod tcgen05_pair;
mod tcgen05_scale;
mod tcgen05_shift;
mod timeline;
mod tma;
mod tmem_shape;
mod warp;
mod wgmma;

#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

pub use device::{Device, GLOBAL_BASE, HostAccessError};
pub use diag::{Blocked, SimError, Space, ThreadId, WaitOn};
pub use mem::{PARAM_GENERIC, SHARED_GENERIC, SMEM_BASE};
pub use program::Program;
pub use sched::{ClcMode, Policy, Rng};
pub use setmaxnreg::REGISTER_FILE;
pub use tcgen05::{TMEM_COLS, TMEM_LANES, decode_smem_desc};
pub use tcgen05_kind::{Elem, InstrDesc, Kind, decode_idesc, to_e4m3, to_e5m2, ue4m3, ue8m0};
pub use timeline::{MAX_EVENTS, OpSpan, Timeline, Unit, WaitKind, WarpSpan, WarpState};
pub use tma::{OobFill, TensorMapDesc, TmaElem, TmaSwizzle};
pub use wgmma::MatrixDesc;

use crate::ptx::Module;

/// A launch configuration (what `cuLaunchKernelEx` receives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Grid in CTAs.
    pub grid: [u32; 3],
    /// Cluster in CTAs (`[1, 1, 1]` for none).
    pub cluster: [u32; 3],
    /// Block in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory per CTA, in bytes.
    pub smem_bytes: u32,
}

/// One kernel parameter's value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A `.u32`/`.s32`/`.b32` parameter.
    U32(u32),
    /// A `.u64`/`.b64` parameter (pointers, strides).
    U64(u64),
    /// A `.f32` parameter.
    F32(f32),
    /// A `.param .align 64 .b8 [128]` tensor map.
    TensorMap(TensorMapDesc),
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Instructions executed, counted per thread (a warp-instruction of 32 lanes is 32).
    pub thread_instructions: u64,
    /// Instructions executed, counted per lockstep group of lanes.
    pub warp_instructions: u64,
    /// Asynchronous operations completed (TMA copies).
    pub async_ops: u64,
    /// CTAs run.
    pub ctas: u64,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// What the recorder saw, when [`Policy::timeline`] was on.
    pub timeline: Option<Box<Timeline>>,
}

impl Stats {
    /// Thread-instructions per second of wall time.
    pub fn instructions_per_second(&self) -> f64 {
        self.thread_instructions as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Runs entry `entry` of `module` with the default scheduling [`Policy`] and `seed`.
pub fn run(
    module: &Module,
    entry: &str,
    launch: &Launch,
    params: &[ParamValue],
    dev: &mut Device,
    seed: u64,
) -> Result<Stats, SimError> {
    let program = Program::new(module, entry)?;
    run_program(&program, launch, params, dev, seed, &Policy::default())
}

/// Runs a decoded program.
pub fn run_program(
    program: &Program,
    launch: &Launch,
    params: &[ParamValue],
    dev: &mut Device,
    seed: u64,
    policy: &Policy,
) -> Result<Stats, SimError> {
    let start = Instant::now();
    let buf = cta::ParamBuf::new(program, params)?;
    check_launch(program, launch)?;
    let mut m = machine::Machine::new(program, launch, &buf, dev, seed, *policy);
    let ran = m.run_grid();
    let now = m.stats.warp_instructions;
    let timeline = m.rec.take().map(|r| Box::new(r.finish(now)));
    ran?;
    let mut stats = m.stats;
    stats.wall = start.elapsed();
    stats.timeline = timeline;
    Ok(stats)
}

fn check_launch(p: &Program, l: &Launch) -> Result<(), SimError> {
    let bad = |s: String| Err(SimError::Launch(s));
    let threads: u64 = l.block.iter().map(|&b| u64::from(b)).product();
    if threads == 0 || threads > 1024 {
        return bad(format!("{threads} threads per block is not in 1..=1024"));
    }
    if let Some(max) = p.max_threads
        && threads > u64::from(max)
    {
        return bad(format!(
            "{threads} threads per block exceed the entry's .maxntid {max}"
        ));
    }
    if l.grid.contains(&0) || l.cluster.contains(&0) {
        return bad("empty grid or cluster".to_owned());
    }
    if let Some(d) = (0..3).find(|&d| !l.grid[d].is_multiple_of(l.cluster[d])) {
        return bad(format!(
            "cluster {:?} does not divide grid {:?} in dimension {d}",
            l.cluster, l.grid
        ));
    }
    let size: u32 = l.cluster.iter().product();
    if size > 16 {
        return bad(format!("cluster of {size} CTAs exceeds 16"));
    }
    if let Some(c) = p.req_cluster
        && c != l.cluster
    {
        return bad(format!(
            "cluster {:?} disagrees with the entry's .reqnctapercluster {c:?}",
            l.cluster
        ));
    }
    let smem = u64::from(p.dyn_smem_base) + u64::from(l.smem_bytes);
    if smem > u64::from(mem::SMEM_BASE) + 228 * 1024 {
        return bad(format!("{smem} bytes of shared memory exceed 228 KiB"));
    }
    Ok(())
}
