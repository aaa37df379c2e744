//! Cluster launch control (PTX ISA §9.7.13.17 `clusterlaunchcontrol.try_cancel` and §9.7.13.18
//! `clusterlaunchcontrol.query_cancel`, sm_100 and later): a running cluster asks to cancel
//! the launch of a cluster that has not started, and takes over its work.
//!
//! - `try_cancel` is asynchronous: it writes a 16-byte opaque response to a 16-byte-aligned
//!   `shared::cta` address and signals `complete_tx` of 16 bytes on an 8-byte-aligned
//!   `shared::cta` mbarrier; with `.multicast::cluster::all` the response and the signal go to
//!   the same offsets in every CTA of the requesting cluster. Here the request is queued at
//!   issue like a TMA load and completed when the scheduler decides; whether it succeeds is
//!   [`super::ClcMode`] (always, never, or by the seed: the scheduler's draw, `machine.rs`), and it can succeed only while a
//!   cluster of the grid has not started (the emulator's clusters run one after another, so
//!   every later one is pending). A canceled cluster never runs, and no other response names
//!   it. Until completion the response bytes belong to the request: a generic access is a race
//!   (a missing mbarrier wait).
//! - `query_cancel.is_canceled` decodes the response's success; `get_first_ctaid` the
//!   `%ctaid` of the canceled cluster's first CTA (`::x/::y/::z`, or all three into a `.v4`).
//!   Its value after a failed request is undefined in the ISA: diagnosed here, as is
//!   decoding a value that is no response at all.
//! - Issuing another `try_cancel` after observing a failed one is undefined (CUDA
//!   Programming Guide, "Cluster Launch Control"): diagnosed per CTA.
//!
//! The response's encoding is the emulator's own (the ISA calls it opaque): word 0 is a tag
//! with the success bit, words 1–3 the first CTA's x, y, z.

use super::bulk::{AsyncKind, AsyncOp};
use super::cta::Cluster;
use super::diag::SimError;
use super::lane::lanes;
use super::machine::Machine;
use super::mem::Loc;
use super::ops::{MemSpace, Op};
use super::program::{Inst, Val};

/// Word 0 of a response, without the success bit.
const TAG: u32 = 0xc1c0_0000;

/// One CTA's cluster-launch-control state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClcCta {
    /// A thread of the CTA observed a failed response (a later `try_cancel` is undefined).
    pub failed: bool,
}

impl Machine<'_> {
    /// `clusterlaunchcontrol.try_cancel` by thread `t`.
    pub(crate) fn clc_try_cancel(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let Op::ClcTryCancel {
            resp,
            mbar,
            multicast,
        } = &inst.op
        else {
            unreachable!("clc_try_cancel() of another op")
        };
        let line = inst.line;
        if cl.ctas[ci].clc.failed {
            return Err(self.protocol(
                cl,
                ci,
                t,
                line,
                "clusterlaunchcontrol.try_cancel after this CTA observed a failed request \
                 (undefined behaviour)"
                    .into(),
            ));
        }
        let a = self.ea(cl, ci, t, resp, line)?;
        let Loc::Shared { off, .. } =
            self.locate_aligned(cl, ci, t, line, MemSpace::SharedCta, a, 16, 16)?
        else {
            unreachable!("a shared::cta location")
        };
        let (_, moff) = self.mbar_loc(cl, ci, t, mbar, line, false)?;
        let canceled = if let Some(k) = self.cancel_pending_cluster() {
            let l = self.launch;
            let n = [0, 1, 2].map(|d| l.grid[d] / l.cluster[d]);
            let id = [k % n[0], (k / n[0]) % n[1], k / (n[0] * n[1])];
            Some([0, 1, 2].map(|d| id[d] * l.cluster[d]))
        } else {
            None
        };
        let ctas = if *multicast {
            (1u32 << cl.ctas.len()) - 1
        } else {
            1 << ci
        };
        self.push_op(
            cl,
            AsyncOp {
                kind: AsyncKind::Clc {
                    ctas,
                    resp: off,
                    mbar: moff,
                    canceled,
                },
                cta: ci as u32,
                tid: t,
                group: None,
                line,
                rec: None,
            },
        );
        Ok(())
    }

    /// A request completes: its response lands in each destination CTA, then each one's
    /// mbarrier gets `complete_tx` of 16 bytes.
    pub(crate) fn clc_complete(
        &mut self,
        cl: &mut Cluster,
        op: &AsyncOp,
        (ctas, resp, mbar, canceled): (u32, u32, u32, Option<[u32; 3]>),
    ) -> Result<(), SimError> {
        let [x, y, z] = canceled.unwrap_or([0; 3]);
        let words = [TAG | u32::from(canceled.is_some()), x, y, z];
        for r in lanes(ctas) {
            let c = &mut cl.ctas[r as usize];
            for (i, w) in words.iter().enumerate() {
                let at = resp as usize + 4 * i;
                c.smem[at..at + 4].copy_from_slice(&w.to_le_bytes());
            }
            c.shadow.async_write(resp, 16);
        }
        for r in lanes(ctas) {
            let who = (op.cta as usize, op.tid);
            self.mbar_update(cl, (r as usize, mbar), who, op.line, 0, -16, false)?;
        }
        Ok(())
    }

    /// `clusterlaunchcontrol.query_cancel` by thread `t`.
    pub(crate) fn clc_query(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let Op::ClcQuery { ds, q, first } = &inst.op else {
            unreachable!("clc_query() of another op")
        };
        let line = inst.line;
        let lo = self.rd(cl, ci, t, Val::Reg(*q), line)?;
        let hi = self.rd(cl, ci, t, Val::Reg(*q + 1), line)?;
        let word0 = lo as u32;
        if word0 & !1 != TAG {
            return Err(self.protocol(
                cl,
                ci,
                t,
                line,
                format!(
                    "query_cancel of `{}`, which holds no try_cancel response (read before the \
                     request completed?)",
                    self.prog.reg_names[*q as usize]
                ),
            ));
        }
        let canceled = word0 & 1 == 1;
        match first {
            None => {
                if !canceled {
                    cl.ctas[ci].clc.failed = true;
                }
                if let Some(Some(d)) = ds.first() {
                    Self::wr(cl, ci, t, *d, u64::from(canceled));
                }
            }
            Some(dim) => {
                if !canceled {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        "get_first_ctaid of a failed try_cancel response (its value is undefined)"
                            .into(),
                    ));
                }
                let xyz = [(lo >> 32) as u32, hi as u32, (hi >> 32) as u32];
                let vals: Vec<u32> = match dim {
                    Some(d) => vec![xyz[*d as usize]],
                    None => xyz.to_vec(),
                };
                for (d, v) in ds.iter().zip(vals) {
                    if let Some(d) = d {
                        Self::wr(cl, ci, t, *d, u64::from(v));
                    }
                }
            }
        }
        Ok(())
    }
}
