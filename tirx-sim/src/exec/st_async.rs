//! `st.async` (PTX ISA §9.7.9.12, PTX 8.1, sm_90): an asynchronous store of registers into
//! the shared memory of a CTA of the cluster that signals `complete_tx` of the stored bytes
//! on an mbarrier of that same CTA.
//!
//! `st.async[.weak].shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], v, [mbar]`:
//! `a` and `mbar` are `.shared::cluster` addresses (from `mapa`, or a CTA's own shared
//! address, which is valid in the cluster window); the destination must be aligned to the
//! access size and the mbarrier must live in the destination's CTA (the ISA requires both;
//! "Conditions": the store is weak, the complete-tx releases at cluster scope).
//! The values are read at issue; the write and the signal happen when the scheduler completes
//! the operation (like a TMA load), so a generic access of the destination before the
//! receiver's wait on its mbarrier is reported as a race, and a receiver that reads without
//! waiting reads stale bytes under some schedule. The signal is a `complete_tx` only (no
//! arrival): the receiver's `mbarrier.arrive.expect_tx` of the bytes it expects completes the
//! phase together with them, in either order (the tx-count may go negative meanwhile, §9.7.13.15.2).

use super::bulk::{AsyncKind, AsyncOp};
use super::cta::Cluster;
use super::diag::SimError;
use super::machine::Machine;
use super::mem::Loc;
use super::ops::{MemSpace, Op};
use super::program::Inst;

impl Machine<'_> {
    /// `st.async` by thread `t` of CTA `ci`: the values are read now, the store is queued.
    pub(crate) fn st_async(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let Op::StAsync {
            bits,
            vals,
            addr,
            mbar,
        } = &inst.op
        else {
            unreachable!("st_async() of another op")
        };
        let line = inst.line;
        let len = bits / 8 * vals.len() as u32;
        let a = self.ea(cl, ci, t, addr, line)?;
        let Loc::Shared { cta, off } =
            self.locate_aligned(cl, ci, t, line, MemSpace::SharedCluster, a, len, len)?
        else {
            unreachable!("a shared::cluster location")
        };
        let (mcta, moff) = self.mbar_loc(cl, ci, t, mbar, line, true)?;
        if mcta != cta as usize {
            return Err(self.protocol(
                cl,
                ci,
                t,
                line,
                format!(
                    "st.async into CTA rank {cta} signals the mbarrier of CTA rank {mcta}: the \
                     mbarrier must be in the destination's CTA"
                ),
            ));
        }
        let mut data = Vec::with_capacity(len as usize);
        for v in vals {
            let x = self.rd(cl, ci, t, *v, line)?;
            data.extend_from_slice(&x.to_le_bytes()[..(bits / 8) as usize]);
        }
        self.push_op(
            cl,
            AsyncOp {
                kind: AsyncKind::StAsync {
                    cta,
                    off,
                    data,
                    mbar: moff,
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

    /// An `st.async` completes: its bytes land, then `complete_tx` of their count on the
    /// destination's mbarrier.
    pub(crate) fn st_async_complete(
        &mut self,
        cl: &mut Cluster,
        op: &AsyncOp,
    ) -> Result<(), SimError> {
        let AsyncKind::StAsync {
            cta,
            off,
            data,
            mbar,
        } = &op.kind
        else {
            unreachable!("st_async_complete() of another op")
        };
        let c = &mut cl.ctas[*cta as usize];
        let at = *off as usize;
        c.smem[at..at + data.len()].copy_from_slice(data);
        // `st.async` writes through the generic proxy (§9.7.9.12); like other stores into a
        // peer's shared memory it is not tagged for the proxy-fence check (`shadow.rs`), and
        // the bytes it overwrote lose their earlier writer's tag.
        c.shadow.async_write(*off, data.len() as u32);
        let bytes = data.len() as i64;
        self.mbar_update(
            cl,
            (*cta as usize, *mbar),
            (op.cta as usize, op.tid),
            op.line,
            0,
            -bytes,
            false,
        )?;
        Ok(())
    }
}
