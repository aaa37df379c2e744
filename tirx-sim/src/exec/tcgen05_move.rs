//! `tcgen05.ld` and `tcgen05.st` for one thread (PTX ISA §9.7.16.8.3, §9.7.16.8.4): the cells
//! its registers move come from the shape's thread map (`tmem_shape.rs`), the address's lane
//! must lie in the warp's quarter (§9.7.16.8.1, access restrictions: warp `w` reaches lanes
//! `32·(w % 4)` … `+31`, and a 16-lane shape the 16 lanes from its base inside them).
//!
//! The checks of `tcgen05.rs` apply per cell: a load of a cell a `tcgen05.st` has not yet
//! waited for, or that an issued and unfinished `tcgen05.cp` / `tcgen05.shift` will write
//! (this CTA's, or the pair's issued by the even CTA: `tcgen05_cp::unfinished_write`), and
//! any access outside every allocation, are diagnosed; loaded registers
//! belong to the load until `tcgen05.wait::ld`, stored cells to the store until
//! `tcgen05.wait::st`.

use super::cta::Cluster;
use super::diag::SimError;
use super::machine::Machine;
use super::program::{Addr, Reg, Val};
use super::tcgen05::pending_st;
use super::tmem_shape::TmemShape;

impl Machine<'_> {
    /// The TMEM lane and column the address of thread `t` (lane `l` of warp `wi`) names,
    /// checked against the warp's lane quarter for the shape.
    fn tmem_origin(
        &self,
        cl: &Cluster,
        ci: usize,
        (wi, l): (u32, u32),
        taddr: &Addr,
        shape: TmemShape,
        line: u32,
    ) -> Result<(u32, u32), SimError> {
        let t = wi * 32 + l;
        let a = self.ea(cl, ci, t, taddr, line)? as u32;
        let (lane0, col0) = (a >> 16, a & 0xffff);
        let q = 32 * (wi % 4);
        let ok = if shape.lanes() == 32 {
            lane0 == q
        } else {
            (q..=q + 16).contains(&lane0)
        };
        if !ok {
            return Err(self.protocol(
                cl,
                ci,
                t,
                line,
                format!(
                    "warp {wi} may access TMEM lanes {q}..{} only: a {}-lane access from lane {lane0}",
                    q + 32,
                    shape.lanes()
                ),
            ));
        }
        Ok((lane0, col0))
    }

    /// One thread's part of a `tcgen05.ld` (`pack`: `.pack::16b`); `in_flight`: the D
    /// rectangles of the CTA's MMAs not yet run (`tcgen05_fence.rs`).
    pub(crate) fn tcgen05_ld(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        (wi, l): (u32, u32),
        line: u32,
        (ds, taddr, shape, pack): (&[Reg], &Addr, TmemShape, bool),
        in_flight: &[super::tcgen05_fence::InFlight],
    ) -> Result<(), SimError> {
        let t = wi * 32 + l;
        let (lane0, col0) = self.tmem_origin(cl, ci, (wi, l), taddr, shape, line)?;
        for (j, &r) in ds.iter().enumerate() {
            let (dl, cols, n) = shape.columns(l, j as u32, pack);
            let lane = lane0 + dl;
            let mut v = 0u32;
            for (h, &c) in cols.iter().take(n).enumerate() {
                let col = col0 + c;
                if let Some(at) = pending_st(&cl.ctas[ci], lane, col) {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!(
                            "tcgen05.ld of lane {lane}, column {col} written by the tcgen05.st \
                             of line {at} before its tcgen05.wait::st"
                        ),
                    ));
                }
                if let Some((op, at, by, who)) =
                    super::tcgen05_cp::unfinished_write(cl, ci, lane, col)
                {
                    let whose = if by == ci {
                        format!("thread {who}")
                    } else {
                        format!("thread {who} of the peer CTA, cluster rank {by}")
                    };
                    return Err(SimError::Race {
                        line,
                        thread: cl.ctas[ci].thread(t),
                        what: format!(
                            "tcgen05.ld of lane {lane}, column {col}, which the {op} of line \
                             {at} ({whose}) has yet to write: wait on its tcgen05.commit's \
                             mbarrier first"
                        ),
                    });
                }
                if let Some(what) =
                    super::tcgen05_fence::unordered_read(cl, ci, t, (lane, col), in_flight)
                {
                    return Err(self.protocol(cl, ci, t, line, what));
                }
                let Some(x) = cl.ctas[ci].tmem.cell(lane, col).copied() else {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!(
                            "tcgen05.ld of lane {lane}, column {col} outside every allocation{}",
                            cl.ctas[ci].tmem.released(col)
                        ),
                    ));
                };
                v |= if pack { (x & 0xffff) << (16 * h) } else { x };
                cl.ctas[ci].tc.ld_cells[wi as usize].push((lane, col, line));
            }
            let rf = &mut cl.regs[ci];
            rf.v[t as usize * rf.n + r as usize] = u64::from(v);
            rf.w[t as usize * rf.n + r as usize] = false;
            let now = cl.regs[ci].now;
            cl.ctas[ci].tc.ld[wi as usize].push((t, r, line, now));
        }
        Ok(())
    }

    /// One thread's part of a `tcgen05.st` (`unpack`: `.unpack::16b`).
    pub(crate) fn tcgen05_st(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        l: u32,
        line: u32,
        (vals, taddr, shape, unpack): (&[Val], &Addr, TmemShape, bool),
    ) -> Result<(), SimError> {
        let t = wi * 32 + l;
        let (lane0, col0) = self.tmem_origin(cl, ci, (wi, l), taddr, shape, line)?;
        for (j, &v) in vals.iter().enumerate() {
            let x = self.rd(cl, ci, t, v, line)? as u32;
            let (dl, cols, n) = shape.columns(l, j as u32, unpack);
            let lane = lane0 + dl;
            for (h, &c) in cols.iter().take(n).enumerate() {
                let col = col0 + c;
                if let Some(at) = super::tcgen05_cp::a_reader(cl, ci, lane, col) {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!(
                            "tcgen05.st to lane {lane}, column {col}, which the tcgen05.mma of \
                             line {at} reads as A from tensor memory and has not run yet (wait \
                             on its commit's mbarrier first)"
                        ),
                    ));
                }
                let Some(cell) = cl.ctas[ci].tmem.cell(lane, col) else {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!(
                            "tcgen05.st to lane {lane}, column {col} outside every allocation{}",
                            cl.ctas[ci].tmem.released(col)
                        ),
                    ));
                };
                *cell = if unpack { (x >> (16 * h)) & 0xffff } else { x };
                cl.ctas[ci].tc.st[wi as usize].push((lane, col, line));
            }
        }
        Ok(())
    }
}
