//! `ldmatrix` and `stmatrix` (PTX ISA "Warp-level matrix load instruction: ldmatrix" and
//! "Warp-level matrix store instruction: stmatrix"), `.m8n8` of 16-bit elements, executed for
//! the whole warp at once.
//!
//! The ISA's thread map: for `.xN`, lanes `8i … 8i + 7` supply the shared-memory addresses of
//! rows 0…7 of matrix `i` (each row 8 contiguous 16-bit elements, 16 bytes, 16-byte aligned);
//! lanes of higher groups supply none. Register `i` of lane `l` holds two elements of matrix
//! `i`: row `l / 4`, columns `2·(l % 4)` and `2·(l % 4) + 1`, the lower column in the low half.
//! `.trans` delivers (or takes) the matrix transposed: rows `2·(l % 4)` and `2·(l % 4) + 1` of
//! column `l / 4`. `stmatrix` is the inverse map.

use super::cta::{Cluster, TState};
use super::diag::SimError;
use super::lane::lanes;
use super::machine::Machine;
use super::mem::Loc;
use super::ops::{MemSpace, Op};
use super::program::{Addr, Inst};

/// (row, column) of matrix element `k` (0 low, 1 high) of lane `l`'s register.
fn element(l: u32, k: u32, trans: bool) -> (u32, u32) {
    let (r, c) = (l / 4, 2 * (l % 4) + k);
    if trans { (c, r) } else { (r, c) }
}

impl Machine<'_> {
    /// One `ldmatrix` / `stmatrix` for the `active` lanes of warp `wi`.
    pub(crate) fn matrix(
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
        let (n, trans, addr, load) = match &inst.op {
            Op::LdMatrix { n, trans, addr, .. } => (*n, *trans, addr, true),
            Op::StMatrix { n, trans, addr, .. } => (*n, *trans, addr, false),
            _ => unreachable!("matrix() of another op"),
        };
        let addr_lanes = (1u64 << (8 * n)) - 1;
        if active as u64 & addr_lanes != addr_lanes {
            let l = (0..8 * n).find(|l| active >> l & 1 == 0).unwrap_or(0);
            return Err(self.protocol(
                cl,
                ci,
                base + l,
                line,
                format!(
                    "{} .x{n} needs lanes 0…{} to supply row addresses; lane {l} does not take \
                     part (active lanes {active:#010x})",
                    if load { "ldmatrix" } else { "stmatrix" },
                    8 * n - 1
                ),
            ));
        }
        // The shared-memory location of each of the 8·n rows, from the lane that names it.
        let mut rows = Vec::with_capacity(8 * n as usize);
        for l in 0..8 * n {
            rows.push(self.matrix_row(cl, ci, base + l, line, addr)?);
        }
        match &inst.op {
            Op::LdMatrix { ds, .. } => {
                let mut data = Vec::with_capacity(rows.len());
                for (l, &(cta, off)) in rows.iter().enumerate() {
                    self.check_race(cl, ci, base + l as u32, line, cta, off, 16, false)?;
                    let s = &cl.ctas[cta as usize].smem;
                    data.push(s[off as usize..off as usize + 16].to_vec());
                }
                for l in lanes(active) {
                    for (i, d) in ds.iter().enumerate() {
                        let Some(d) = d else { continue };
                        let mut v = 0u64;
                        for k in 0..2 {
                            let (r, c) = element(l, k, trans);
                            let row = &data[i * 8 + r as usize];
                            let e =
                                u16::from_le_bytes([row[2 * c as usize], row[2 * c as usize + 1]]);
                            v |= u64::from(e) << (16 * k);
                        }
                        Self::wr(cl, ci, base + l, *d, v);
                    }
                }
            }
            Op::StMatrix { vals, .. } => {
                let mut data = vec![[0u8; 16]; rows.len()];
                for l in lanes(active) {
                    for (i, v) in vals.iter().enumerate() {
                        let v = self.rd(cl, ci, base + l, *v, line)?;
                        for k in 0..2 {
                            let (r, c) = element(l, k, trans);
                            let e = ((v >> (16 * k)) as u16).to_le_bytes();
                            let row = &mut data[i * 8 + r as usize];
                            row[2 * c as usize..2 * c as usize + 2].copy_from_slice(&e);
                        }
                    }
                }
                for (l, (&(cta, off), bytes)) in rows.iter().zip(&data).enumerate() {
                    let t = base + l as u32;
                    self.check_race(cl, ci, t, line, cta, off, 16, true)?;
                    let c = &mut cl.ctas[cta as usize];
                    c.smem[off as usize..off as usize + 16].copy_from_slice(bytes);
                    c.shadow.write(c.smem.len(), c.nthreads, off, 16, t, line);
                }
            }
            _ => unreachable!(),
        }
        for l in lanes(active) {
            cl.ctas[ci].pc[(base + l) as usize] = pc + 1;
            cl.ctas[ci].st[(base + l) as usize] = TState::Run;
        }
        Ok(())
    }

    /// The CTA and shared-memory offset of the 16-byte row whose address lane `t` supplies.
    fn matrix_row(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        addr: &Addr,
    ) -> Result<(u32, u32), SimError> {
        let a = self.ea(cl, ci, t, addr, line)?;
        match self.locate(cl, ci, t, line, MemSpace::SharedCta, a, 16)? {
            Loc::Shared { cta, off } => Ok((cta, off)),
            _ => unreachable!("locate() of .shared::cta gives shared memory"),
        }
    }
}
