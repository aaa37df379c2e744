//! Warp collectives (PTX ISA §9.7.9 `shfl.sync`; §9.7.13 `vote.sync`, `elect.sync`,
//! `activemask`; §9.7.19.6 `setmaxnreg`, whose budget is `setmaxnreg.rs`), executed for a whole group of lanes at once after
//! `collective_ready` (`lane.rs`) made sure every lane the instruction names is present.
//!
//! `shfl.sync` follows the ISA's lane computation: `b[4:0]` the lane or offset, `c[4:0]`
//! the clamp and `c[12:8]` the segment mask; an out-of-range source reads the lane's own
//! value with the predicate false; a source lane not taking part is an error (its value is
//! undefined). `elect.sync` elects the lowest active lane of its mask.

use super::cta::{Cluster, TState, Wait};
use super::diag::SimError;
use super::lane::lanes;
use super::machine::Machine;
use super::ops::{Op, ShflMode, VoteMode};
use super::program::Inst;
use super::setmaxnreg::{Round, warps_of};

impl Machine<'_> {
    /// The warp-collective instructions, for the `active` lanes of warp `wi` (every lane
    /// the instruction names, `collective_ready` made sure).
    pub(crate) fn collective(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let line = inst.line;
        let base = wi * 32;
        match &inst.op {
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
            } => {
                let mut src = [0u64; 32];
                for l in lanes(active) {
                    src[l as usize] = self.rd(cl, ci, base + l, *a, line)?;
                }
                for l in lanes(active) {
                    let t = base + l;
                    let bv = self.rd(cl, ci, t, *b, line)? as u32 & 0x1f;
                    let cv = self.rd(cl, ci, t, *c, line)? as u32;
                    let (clamp, seg) = (cv & 0x1f, (cv >> 8) & 0x1f);
                    let max_lane = (l & seg) | (clamp & !seg);
                    let min_lane = l & seg;
                    let (j, ok) = match mode {
                        ShflMode::Up => {
                            let j = l as i32 - bv as i32;
                            (j, j >= max_lane as i32)
                        }
                        ShflMode::Down => {
                            let j = (l + bv) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Bfly => {
                            let j = (l ^ bv) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Idx => {
                            let j = (min_lane | (bv & !seg)) as i32;
                            (j, j <= max_lane as i32)
                        }
                    };
                    let j = if ok { j as u32 } else { l };
                    if active >> j & 1 == 0 {
                        return Err(self.protocol(
                            cl,
                            ci,
                            t,
                            line,
                            format!(
                                "shfl.sync in lane {l} reads lane {j}, which does not take part \
                             (active lanes {active:#010x}): its value is undefined"
                            ),
                        ));
                    }
                    Self::wr(cl, ci, t, *d, src[j as usize] & 0xffff_ffff);
                    if let Some(p) = p {
                        Self::wr(cl, ci, t, *p, u64::from(ok));
                    }
                }
            }
            Op::Vote { mode, d, a, a_neg } => {
                let mut ballot = 0u32;
                for l in lanes(active) {
                    let v = (self.rd(cl, ci, base + l, *a, line)? & 1 == 1) ^ a_neg;
                    ballot |= u32::from(v) << l;
                }
                let r = match mode {
                    VoteMode::Ballot => u64::from(ballot),
                    VoteMode::All => u64::from(ballot == active),
                    VoteMode::Any => u64::from(ballot != 0),
                    VoteMode::Uni => u64::from(ballot == 0 || ballot == active),
                };
                for l in lanes(active) {
                    Self::wr(cl, ci, base + l, *d, r);
                }
            }
            Op::Redux { op, ty, d, a } => {
                let mut acc: Option<u64> = None;
                for l in lanes(active) {
                    let v = self.rd(cl, ci, base + l, *a, line)? & 0xffff_ffff;
                    acc = Some(match acc {
                        None => v,
                        Some(x) => super::atom::apply(*op, *ty, x, v, 0),
                    });
                }
                for l in lanes(active) {
                    Self::wr(cl, ci, base + l, *d, acc.unwrap_or(0));
                }
            }
            Op::Elect { d, p } => {
                let leader = active.trailing_zeros();
                for l in lanes(active) {
                    if let Some(d) = d {
                        Self::wr(cl, ci, base + l, *d, u64::from(leader));
                    }
                    if let Some(p) = p {
                        Self::wr(cl, ci, base + l, *p, u64::from(l == leader));
                    }
                }
            }
            Op::ActiveMask { d } => {
                for l in lanes(active) {
                    Self::wr(cl, ci, base + l, *d, u64::from(active));
                }
            }
            Op::Setmaxnreg { inc, count } => {
                if !self.setmaxnreg(cl, ci, wi, active, pc, line, (*inc, *count))? {
                    return Ok(());
                }
            }
            _ => unreachable!("collective() of a per-lane op"),
        }
        for l in lanes(active) {
            cl.ctas[ci].pc[(base + l) as usize] = pc + 1;
            cl.ctas[ci].st[(base + l) as usize] = TState::Run;
        }
        Ok(())
    }
}

impl Machine<'_> {
    /// `setmaxnreg` by warp `wi`: false when an `.inc` must wait for the pool (its lanes then
    /// wait at `pc`).
    #[allow(clippy::too_many_arguments)]
    fn setmaxnreg(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        active: u32,
        pc: u32,
        line: u32,
        (inc, count): (bool, u32),
    ) -> Result<bool, SimError> {
        let first = wi * 32 + active.trailing_zeros();
        let what = if inc { "inc" } else { "dec" };
        let budget = &cl.ctas[ci].regs;
        if let Some(cur) = budget.per_thread[wi as usize]
            && (if inc { count < cur } else { count > cur })
        {
            return Err(self.protocol(
                cl,
                ci,
                first,
                line,
                format!(
                    "setmaxnreg.{what} to {count} registers per thread from warp {wi}'s current \
                     {cur}: .{what} {} the count from its current value",
                    if inc { "raises" } else { "lowers" }
                ),
            ));
        }
        if inc && !budget.can_grow(wi, count) {
            for l in super::lane::lanes(active) {
                cl.ctas[ci].st[(wi * 32 + l) as usize] = TState::Wait(Wait::Regs { count });
            }
            return Ok(false);
        }
        // The warpgroup's round: the same instruction by every warp, once each.
        let (g, k) = (wi / 4, wi % 4);
        let all = warps_of(&cl.ctas[ci], g);
        let round = cl.ctas[ci].regs.rounds[g as usize];
        let mut r = match round {
            Some(r) if r.pc != pc => {
                return Err(self.protocol(
                    cl,
                    ci,
                    first,
                    line,
                    format!(
                        "warps of one warpgroup execute different setmaxnreg instructions (lines \
                         {} and {line}): the same one must be executed by all of them",
                        r.line
                    ),
                ));
            }
            Some(r) if r.done >> k & 1 == 1 => {
                return Err(self.protocol(
                    cl,
                    ci,
                    first,
                    line,
                    format!(
                        "warp {wi} executes setmaxnreg again before warps {:#06b} of its \
                         warpgroup executed the previous one: they must synchronise in between",
                        all & !r.done
                    ),
                ));
            }
            Some(r) => r,
            None => Round { pc, line, done: 0 },
        };
        r.done |= 1 << k;
        let budget = &mut cl.ctas[ci].regs;
        budget.per_thread[wi as usize] = Some(count);
        budget.rounds[g as usize] = (all & !r.done != 0).then_some(r);
        Ok(true)
    }
}
