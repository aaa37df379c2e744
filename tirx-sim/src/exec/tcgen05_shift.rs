//! `tcgen05.shift.cta_group::N.down [taddr]` (PTX ISA §9.7.16.9.3 "tcgen05.shift"): "the
//! shifting of 32-byte elements downwards across all the rows, except the last, by one row"
//! of the matrix at `taddr`, whose lane must be aligned to 32. The data-movement shape is the
//! implicit `.31x256b` (§9.7.16.2.3): 31 rows of 256 bits (8 32-bit columns) move, so the
//! emulator moves row `r` (lane `lane0 + r`, `r` < 31) to lane `lane0 + r + 1`, columns
//! `col0 .. col0 + 8`, the last row first so each row moves once; lane `lane0` keeps what it
//! held (nothing is written there — the ISA says nothing of it). With `.cta_group::2` the
//! shift is done in the issuing CTA's and its peer's tensor memory (§9.7.16.9.3, "both the
//! current and the peer CTAs").
//!
//! Asynchronous like `tcgen05.cp`: queued with the thread's MMAs and copies in issue order
//! and run by its next `tcgen05.commit` of the same `.cta_group` (the pipelined pairs
//! `tcgen05.mma → tcgen05.shift` and `tcgen05.shift → tcgen05.mma`, §9.7.16.6.2), so an MMA
//! the thread issues before the shift is run (has written D) before the shift moves it. A
//! lane not aligned to 32, a cell outside every allocation, or a pair shift without a peer CTA
//! is diagnosed.

use super::cta::Cluster;
use super::diag::SimError;
use super::machine::Machine;
use super::program::{Addr, Inst};
use super::tcgen05_cp::Tc05Work;

/// Rows a shift moves (`.31x256b`).
const ROWS: u32 = 31;
/// 32-bit columns of each row it moves (256 bits).
const COLS: u32 = 8;

/// One queued `tcgen05.shift`.
#[derive(Clone, Debug)]
pub(crate) struct Tc05Shift {
    pub(crate) line: u32,
    lane: u32,
    col: u32,
    /// `.cta_group::2`: both CTAs of the pair.
    pub(crate) pair: bool,
}

impl Tc05Shift {
    /// Whether the shift writes the TMEM cell (`lane`, `col`) of a CTA it touches.
    pub(crate) fn writes(&self, lane: u32, col: u32) -> bool {
        (self.lane + 1..=self.lane + ROWS).contains(&lane)
            && (self.col..self.col + COLS).contains(&col)
    }
}

impl Machine<'_> {
    /// `tcgen05.shift` by thread `t` of CTA `ci`: checked and queued until its commit.
    pub(crate) fn tcgen05_shift(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
        (taddr, pair): (&Addr, bool),
    ) -> Result<(), SimError> {
        let line = inst.line;
        let at = self.ea(cl, ci, t, taddr, line)? as u32;
        let (lane, col) = (at >> 16, at & 0xffff);
        if lane % 32 != 0 {
            let what = format!(
                "tcgen05.shift at lane {lane}: the lane of the address must be aligned to 32 \
                 (PTX ISA §9.7.16.9.3)"
            );
            return Err(self.protocol(cl, ci, t, line, what));
        }
        if pair && (ci ^ 1) >= cl.ctas.len() {
            let what = "tcgen05.shift.cta_group::2 in a CTA without a peer (ranks 2k and 2k + 1 \
                        form a pair, §9.7.16.5)";
            return Err(self.protocol(cl, ci, t, line, what.to_owned()));
        }
        cl.ctas[ci].tc.queue.push((
            t,
            Tc05Work::Shift(Tc05Shift {
                line,
                lane,
                col,
                pair,
            }),
        ));
        Ok(())
    }

    /// Runs one queued shift on CTA `ci`'s tensor memory (and its peer's for the pair).
    pub(crate) fn tcgen05_shift_run(
        &self,
        cl: &mut Cluster,
        ci: usize,
        sh: &Tc05Shift,
        who: u32,
    ) -> Result<(), SimError> {
        let ctas = if sh.pair { vec![ci, ci ^ 1] } else { vec![ci] };
        for c in ctas {
            for r in (0..ROWS).rev() {
                for k in 0..COLS {
                    let tmem = &mut cl.ctas[c].tmem;
                    let (from, to) = (
                        tmem.word(sh.lane + r, sh.col + k),
                        tmem.cell(sh.lane + r + 1, sh.col + k),
                    );
                    let (Some(v), Some(cell)) = (from, to) else {
                        return Err(SimError::Protocol {
                            line: sh.line,
                            thread: cl.ctas[ci].thread(who),
                            what: format!(
                                "tcgen05.shift moves lanes {}..={} of columns {}..{} in CTA \
                                 {c}: tensor memory outside every allocation",
                                sh.lane,
                                sh.lane + ROWS,
                                sh.col,
                                sh.col + COLS
                            ),
                        });
                    };
                    *cell = v;
                }
            }
        }
        Ok(())
    }
}
