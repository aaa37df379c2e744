//! The CTA pair of `tcgen05` `.cta_group::2` (PTX ISA §9.7.16.5 "Issue Granularity"): the two
//! CTAs of a cluster whose `%cluster_ctarank` differ only in bit 0. One thread of either CTA
//! issues the pair's `tcgen05.mma` and `tcgen05.commit`; `tcgen05.alloc / dealloc /
//! relinquish_alloc_permit .cta_group::2` are performed by one warp in each CTA together.
//!
//! **Allocation.** The pair's allocation takes the same columns in both CTAs: the first of
//! the two warps takes the lowest range free in both tensor memories, the second adopts the
//! range its peer took and has not matched yet. (The hardware blocks the first warp until the
//! second arrives; the emulator does not need to, since nothing reads the range before both
//! CTAs have synchronised.) An allocation records its `cta_group`; a `dealloc` with the other
//! group is diagnosed, as is one of columns that issued work has yet to access — the even
//! CTA's pair MMA or copy writing the odd CTA's columns included (Table 47: before
//! deallocating, no concurrent tensor-memory access from the peer CTA;
//! `tcgen05_cp::unfinished_use`).
//!
//! **The MMA** (M = 256 or 128 across the pair, §9.7.16.10.9): A is `[A0; A1]`, each CTA
//! holding its `M/2 × K` half at the descriptor's address in its own shared memory; B is
//! `[B0; B1]` along N, each CTA holding `N/2 × K`; the instruction descriptor carries the
//! pair's M and N. D's rows `i < M/2` are the even CTA's, rows `M/2 + i` the odd CTA's, each
//! in its own tensor memory in the data-path layout of §9.7.16.10.5:
//! - M = 256 (Layout A, "4x1"): row `i` in lane `lane0 + i`, column `n` in `col0 + n`;
//! - M = 128 (Layout B, "2x2"; its figures are images — the mapping is CUTLASS's "2x2"
//!   atom for two SMs and 64 rows, `cute/atom/mma_traits_sm100.hpp` `tmem_frg`, which TVM
//!   TIRx's `tmem_datapath_layout("B")` documents the same way, D's two column halves in
//!   the two 64-lane halves): row `i < 64`, column `n < N/2` in lane `lane0 + i`, column
//!   `n`; column `n ≥ N/2` in lane `lane0 + 64 + i`, column `n − N/2` — 128 lanes × N/2
//!   columns per CTA; `lane0` must be 0 (the layout's lane alignment).
//!
//! A from tensor memory (the `[a-tmem]` form, `kind::f16`): each CTA's half of A in its own
//! tensor memory at the instruction's `[a]` address, one row per data-path lane: M = 256's
//! row `i` in lane `a_lane + i`; M = 128's 2x2 path computes D's columns `n < N/2` from lanes
//! `a_lane + i` and columns `n ≥ N/2` from lanes `a_lane + 64 + i` — A's 64 rows must be
//! there twice (CUTLASS's `TmemAllocMode::Duplicated`: lane quarters 2 and 3 repeat quarters
//! 0 and 1); the emulator reads each lane as it is, so A written once gives the wrong upper
//! half, as the hardware would.
//!
//! **Block scaling** (`.block_scale`, `tcgen05_scale.rs`): each CTA's half of D uses the
//! factors in its own tensor memory — `scale_A` of its 128 rows of A, `scale_B` of all N.
//!
//! **Completion.** A `.cta_group::2` commit tracks the pair's MMAs; its arrivals go to
//! `[mbar]` only, or with `.multicast::cluster` to the same offset in every CTA of `ctaMask`.
//! Without the multicast the peer's barrier is never arrived on by the MMA, which shows as a
//! deadlock naming the peer's barrier.

use super::cta::Cluster;
use super::diag::SimError;
use super::machine::Machine;
use super::tcgen05::{MmaA, Tc05Mma, free_column, mma_fault, operand_rows, write_d};

impl Machine<'_> {
    /// The peer of CTA `ci` (rank `ci ^ 1`), or the protocol error that it has none.
    fn pair_peer(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        what: &str,
    ) -> Result<usize, SimError> {
        let peer = ci ^ 1;
        if peer >= cl.ctas.len() {
            return Err(self.protocol(
                cl,
                ci,
                t,
                line,
                format!(
                    "{what}.cta_group::2 in a cluster of {} CTA(s): cluster rank {ci} has no \
                     peer CTA (ranks 2k and 2k + 1 form a pair, §9.7.16.5)",
                    cl.ctas.len()
                ),
            ));
        }
        Ok(peer)
    }

    /// The column of a `tcgen05.alloc.cta_group::2` of `n` columns by CTA `ci`: the range
    /// the peer took and this CTA has not matched, else the lowest free in both.
    pub(crate) fn pair_column(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        n: u32,
    ) -> Result<Option<u32>, SimError> {
        let peer = self.pair_peer(cl, ci, t, line, "tcgen05.alloc")?;
        let (mine, theirs) = (&cl.ctas[ci].tmem, &cl.ctas[peer].tmem);
        let unmatched = theirs
            .allocs
            .iter()
            .find(|&&(c, k, p)| p && k == n && !mine.allocs.contains(&(c, k, true)));
        if let Some(&(c, _, _)) = unmatched {
            let clash = mine.allocs.iter().any(|&(s, k, _)| c < s + k && s < c + n);
            return Ok((!clash).then_some(c));
        }
        Ok(free_column(&[mine, theirs], n))
    }

    /// Checks the shape of a `tcgen05.mma.cta_group::2` by thread `t` of CTA `ci` with D at
    /// lane `d_lane`: a peer exists; M = 256 across the pair with N a multiple of 16 up to
    /// 256, or M = 128 with N a multiple of 32 up to 256 (PTX ISA §9.7.16.2.1, Table 39's
    /// `cta_group::2` rows) and D at lane 0 (§9.7.16.10.5, Layout B's datapath lane
    /// alignment); block scaling with M = 256 only (its 2x2 factor layout is not emulated).
    pub(crate) fn pair_shape(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        (m, n, d_lane): (u32, u32, u32),
        scaled: bool,
    ) -> Result<(), SimError> {
        self.pair_peer(cl, ci, t, line, "tcgen05.mma")?;
        let step = match m {
            256 => 16,
            128 => 32,
            _ => 0,
        };
        let bad = if step == 0 || n < step || n > 256 || !n.is_multiple_of(step) {
            Some(format!(
                "tcgen05.mma.cta_group::2 with M = {m}, N = {n}: the pair's M is 256 (N a \
                 multiple of 16 up to 256) or 128 (N a multiple of 32 up to 256), §9.7.16.2.1"
            ))
        } else if m == 128 && d_lane != 0 {
            Some(format!(
                "tcgen05.mma.cta_group::2 with M = 128 and D at lane {d_lane}: the 2x2 data \
                 path (Layout B, §9.7.16.10.5) takes D at lane 0"
            ))
        } else if m == 128 && scaled {
            Some(
                "tcgen05.mma.cta_group::2.block_scale with M = 128: the pair's block-scaled \
                 MMA is emulated with M = 256 only"
                    .to_owned(),
            )
        } else {
            None
        };
        match bad {
            Some(what) => Err(self.protocol(cl, ci, t, line, what)),
            None => Ok(()),
        }
    }

    /// Runs the pair's MMA issued by thread `who` of CTA `ci`: each CTA's half of A and of B
    /// from its own shared memory, each CTA's half of D's rows into its own tensor memory.
    pub(crate) fn tcgen05_run_pair(
        &self,
        cl: &mut Cluster,
        ci: usize,
        mma: &Tc05Mma,
        who: u32,
    ) -> Result<(), SimError> {
        let even = ci & !1;
        let (hm, hn) = (mma.m / 2, mma.n / 2);
        let mut a = Vec::new();
        let mut b = Vec::new();
        for cta in [even, even + 1] {
            let (ranges, _) = mma.operands();
            self.check_fenced(cl, cta, who, (ranges, mma.line), "tcgen05.mma")?;
            let ah = match &mma.a {
                MmaA::Smem(ad) => operand_rows(&cl.ctas[cta].smem, mma, ad, mma.a_side(), hm),
                // `[a-tmem]`: this CTA's A half from its own tensor memory, one row per
                // lane of D's data path — M = 128's 2x2 path reads lanes 64.. again for D's
                // columns N/2.. (`write_d`), so 128 lanes either way.
                MmaA::Tmem { lane, col } => {
                    Some(self.tmem_a(cl, (ci, who), cta, mma, (*lane, *col, 128))?)
                }
            };
            let smem = &cl.ctas[cta].smem;
            let bh = operand_rows(smem, mma, &mma.b, mma.b_side(), hn);
            let (Some(ah), Some(bh)) = (ah, bh) else {
                let what = format!(
                    "a tcgen05.mma.cta_group::2 operand half reaches outside the shared memory \
                     of cluster rank {cta}"
                );
                return Err(mma_fault(cl, (ci, who), mma, &what));
            };
            a.push(ah);
            b.extend(bh);
        }
        let Some(at) = &mma.scale else {
            write_d(cl, (ci, who), even, mma, &a[0], &b)?;
            return write_d(cl, (ci, who), even + 1, mma, &a[1], &b);
        };
        // Block scaling: each CTA's data path scales its rows of A and all of B by the
        // factors in its own tensor memory (`tcgen05_scale.rs`).
        for (h, ah) in a.into_iter().enumerate() {
            let (mut ah, mut bh) = (ah, b.clone());
            self.apply_scales(cl, (ci, who), even + h, mma, at, (&mut ah, &mut bh))?;
            write_d(cl, (ci, who), even + h, mma, &ah, &bh)?;
        }
        Ok(())
    }
}
