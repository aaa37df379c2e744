//! `setmaxnreg` (PTX ISA §9.7.19.6 "setmaxnreg", sm_90a): warps of a CTA move registers
//! between themselves and the CTA's register pool.
//!
//! What the ISA states, and what is checked of it:
//! - `.dec` lowers the executing warp's per-thread maximum register count *from its current
//!   value* to `imm-reg-count`, releasing the difference to the CTA's pool; `.inc` raises it
//!   from its current value, taking the difference from the pool, and **blocks until the pool
//!   has enough**. A `.dec` above or an `.inc` below the warp's current count contradicts
//!   that and is diagnosed, where the current count is known. An `.inc` the pool can never
//!   satisfy blocks for ever: the deadlock report names it, with the registers held.
//! - The count is a constant in 24..=256, a multiple of 8 (checked at decode).
//! - The same `setmaxnreg` must be executed by every warp of the warpgroup, and the warps must
//!   synchronise before the next one. A sibling executing a different `setmaxnreg` in the same
//!   round, a warp executing a second one before every sibling executed the first, and a CTA
//!   exiting with a round some warp of the warpgroup never executed are diagnosed.
//!
//! **The launch count.** The ISA requires the kernel to be launched with a valid maximum
//! per-thread register count (ptxas's `.maxnreg`/`-maxrregcount`); the PTX does not say what
//! ptxas chose unless `.maxnreg` is declared. With it (or [`super::Policy::launch_regs`]) each
//! warp starts at that count and the pool holds what the CTA was launched with (threads × the
//! count, whole warps). Without it a warp's count is unknown until its first `setmaxnreg`
//! (which is then not checked against it), unknown warps count as holding nothing, and the pool
//! is the whole 64K-register file of an SM (the most a CTA can hold): the check then finds only
//! requests no launch could satisfy, never a false one.

use super::cta::Cta;

/// 32-bit registers of an SM's register file (the most one CTA can hold).
pub const REGISTER_FILE: u32 = 65536;

/// A CTA's register budget.
#[derive(Clone, Debug, Default)]
pub(crate) struct RegBudget {
    /// Per warp: its per-thread maximum register count, where known.
    pub per_thread: Vec<Option<u32>>,
    /// Registers the pool holds in all (the CTA's launch allocation, or the register file).
    pub capacity: u32,
    /// Per warpgroup: the `setmaxnreg` round in progress.
    pub rounds: Vec<Option<Round>>,
}

/// One `setmaxnreg` of a warpgroup, executed by some of its warps so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Round {
    pub pc: u32,
    pub line: u32,
    /// Warps (bit = index in the warpgroup) that executed it.
    pub done: u32,
}

impl RegBudget {
    /// The budget of a CTA of `warps` warps launched with `launch` registers per thread.
    pub(crate) fn new(warps: u32, launch: Option<u32>) -> RegBudget {
        RegBudget {
            per_thread: vec![launch; warps as usize],
            capacity: launch.map_or(REGISTER_FILE, |r| (r * 32 * warps).min(REGISTER_FILE)),
            rounds: vec![None; warps.div_ceil(4) as usize],
        }
    }

    /// Registers held by every warp but `except` (unknown counts as zero).
    pub(crate) fn held_by_others(&self, except: u32) -> u32 {
        self.per_thread
            .iter()
            .enumerate()
            .filter(|&(w, _)| w as u32 != except)
            .map(|(_, c)| 32 * c.unwrap_or(0))
            .sum()
    }

    /// Whether warp `w` can raise its count to `count` now.
    pub(crate) fn can_grow(&self, w: u32, count: u32) -> bool {
        self.held_by_others(w) + 32 * count <= self.capacity
    }
}

/// The warps of warpgroup `g` of `cta` (those the launch has threads for: the last
/// warpgroup may be partial), as a mask of their index in it. Exited warps count: the ISA
/// asks every warp of the warpgroup to execute the instruction.
pub(crate) fn warps_of(cta: &Cta, g: u32) -> u32 {
    (0..4)
        .filter(|k| (4 * g + k) * 32 < cta.nthreads)
        .fold(0, |m, k| m | 1 << k)
}
