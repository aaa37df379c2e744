//! The seeded scheduler: which warp runs next, for how long, and when an asynchronous unit
//! finishes.
//!
//! Everything nondeterministic about a GPU run that the emulator models is drawn from one
//! [`Rng`] seeded by the caller, so a seed names one interleaving and replays it exactly:
//! - the order in which the clusters of the grid run (each cluster runs to completion before
//!   the next starts; CTAs of one cluster run together);
//! - the next warp, uniformly among the cluster's warps, and its burst length (1 to
//!   [`Policy::max_burst`] instructions, or until it blocks);
//! - when an in-flight asynchronous operation (a TMA copy) completes: at each scheduling
//!   round one completes with probability [`Policy::complete_one_in`]⁻¹, a random one among
//!   those in flight, not the oldest, so completions are reordered; and whenever no warp can
//!   run;
//! - whether a `mbarrier.try_wait` that would block returns false instead (the ISA allows a
//!   time limit, PTX ISA §9.7.13 "mbarrier.test_wait/try_wait"), so retry loops run;
//! - the order in which a group's lanes apply their atomics, and whether a
//!   `clusterlaunchcontrol.try_cancel` succeeds and which pending cluster it takes.
//!
//! Only the scheduler (`machine.rs`) holds the [`Rng`]; a unit that needs a choice asks it.

/// A small, fast PRNG (SplitMix64: Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014). Not cryptographic; chosen for determinism and speed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        n != 0 && self.below(n) == 0
    }

    /// A uniformly shuffled `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
        v
    }
}

/// How the emulator answers `clusterlaunchcontrol.try_cancel` (`clc.rs`): a request can
/// succeed only while some cluster of the grid has not started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClcMode {
    /// Every request fails (each cluster does its own work).
    Fail,
    /// Every request succeeds while a cluster is pending (the first clusters take all).
    Succeed,
    /// Each request succeeds or fails as the seed decides.
    #[default]
    Random,
}

/// The scheduler's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Longest run of one warp before the scheduler switches.
    pub max_burst: u32,
    /// An in-flight async op completes at a round with probability 1/this.
    pub complete_one_in: u64,
    /// A blocking `try_wait` returns false instead with probability 1/this (0: never).
    pub spurious_wait_one_in: u64,
    /// Stop with [`super::SimError::StepLimit`] after this many warp-instructions.
    pub step_limit: u64,
    /// How `clusterlaunchcontrol.try_cancel` requests are answered.
    pub clc: ClcMode,
    /// Hold the RS form's A registers to the `wgmma.fence` rule too: a thread's write of one
    /// after the fence is diagnosed (on by default: tirx packs A before its own fence; a
    /// kernel written elsewhere that packs after the fence, which ptxas accepts and
    /// serialises, can turn it off).
    pub strict_wgmma_fence: bool,
    /// The per-thread register count the kernel was launched with (what ptxas chose), for
    /// `setmaxnreg`; `None`: the entry's `.maxnreg` if declared, else unknown.
    pub launch_regs: Option<u32>,
    /// Record a [`super::Timeline`] of the cluster holding CTA (0, 0, 0) into
    /// [`super::Stats::timeline`] (off by default; off, the run records nothing).
    pub timeline: bool,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            max_burst: 48,
            complete_one_in: 6,
            spurious_wait_one_in: 8,
            step_limit: 200_000_000,
            launch_regs: None,
            clc: ClcMode::Random,
            strict_wgmma_fence: true,
            timeline: false,
        }
    }
}
