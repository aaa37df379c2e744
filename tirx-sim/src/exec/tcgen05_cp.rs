//! `tcgen05.cp` (PTX ISA §9.7.16.9.2): shared memory into tensor memory, issued by one
//! thread and asynchronous — queued with the thread's `tcgen05.mma`s, in issue order, and run
//! by its next `tcgen05.commit` before the commit's mbarrier arrival, so a later MMA of the
//! same thread reads what the copy wrote (the ISA's pipelined `tcgen05.cp → tcgen05.mma`
//! pair, §9.7.16.6.5).
//!
//! **The CTA pair** (`.cta_group::2`, §9.7.16.9.2): "the data is copied into the Tensor
//! Memory of both the current and the peer CTAs" — here each CTA of the pair copies its own
//! shared memory at the descriptor's address into its own tensor memory (the ISA does not
//! say whose shared memory the peer's copy reads; CUTLASS's 2-SM block-scaled mainloop, in
//! which each CTA loads its own scale factors and only the leader issues the copy, implies
//! its own). Queued and committed with the issuing thread's `.cta_group::2` work.
//!
//! Shapes (§9.7.16.2.3): `.128x256b`, `.128x128b` and `.4x256b` with `.cta_group::1` — lanes ×
//! bits per lane — and the multicast ones (§9.7.16.9.2): `.32x128b.warpx4`, 32 lanes × 128
//! bits written to each of the four 32-lane quarters (what block scaling's factors need,
//! duplicated to every lane partition, §9.7.16.10.7); `.64x128b.warpx2::02_13`, 64 rows
//! written to lanes 0-63 and again to 64-127 (rows 0-31 to the quarters of warps 0 and 2,
//! rows 32-63 to warps 1 and 3, as the name says); `.64x128b.warpx2::01_23`, rows 0-31 to
//! the quarters of warps 0 and 1 and rows 32-63 to warps 2 and 3 (row `r` to lane
//! `64·(r / 32) + r % 32` and 32 lanes on). The decompressing `.b8x16.b6x16_p32` /
//! `.b4x16_p64` forms are refused as not supported yet. The source is read as the descriptor's K-major matrix (the canonical
//! layouts of `wgmma.rs`, swizzled or not), as `tcgen05.mma` reads an operand through the
//! same descriptor: lane `lane0 + r` takes row `r`'s bytes, 4 to a column from `col0`, so
//! 16-bit elements land two to a column with the lower K in the low half — where an MMA
//! reads A from TMEM. A cell outside every allocation, or a source outside shared memory, is
//! diagnosed; the source bytes are checked like an MMA operand's (a generic-proxy write
//! without `fence.proxy.async` before the copy reads it).

use super::cta::Cluster;
use super::diag::SimError;
use super::machine::Machine;
use super::program::{Addr, Inst, Val};
use super::tcgen05::{TMEM_LANES, Tc05Mma, decode_smem_desc};
use super::wgmma::MatrixDesc;

/// One queued `tcgen05.cp`.
#[derive(Clone, Debug)]
pub(crate) struct Tc05Cp {
    line: u32,
    lane: u32,
    col: u32,
    desc: MatrixDesc,
    /// The shape: rows, bytes per row, where each row's copies land.
    shape: CpShape,
    /// `.cta_group::2`: each CTA of the pair copies its own shared memory at the
    /// descriptor's address into its own tensor memory.
    pub(crate) pair: bool,
}

/// Where a `tcgen05.cp` shape's rows land in the 128 lanes (§9.7.16.9.2, the multicast
/// qualifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpLanes {
    /// No multicast: row `r` to lane `r`.
    Plain,
    /// `.warpx4`: row `r` (of 32) to lanes `r`, `32 + r`, `64 + r`, `96 + r`.
    Warpx4,
    /// `.warpx2::02_13`: row `r` (of 64) to lanes `r` and `64 + r`.
    Warpx2_02_13,
    /// `.warpx2::01_23`: row `r` (of 64) to lanes `64·(r / 32) + r % 32` and 32 on.
    Warpx2_01_23,
}

/// A `tcgen05.cp` shape and multicast: rows, bytes a row, their lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CpShape {
    pub(crate) rows: u32,
    pub(crate) bytes: u32,
    pub(crate) lanes: CpLanes,
}

impl CpShape {
    /// The lanes (relative to the address's lane) row `r` is written to.
    fn lanes_of(self, r: u32) -> Vec<u32> {
        match self.lanes {
            CpLanes::Plain => vec![r],
            CpLanes::Warpx4 => (0..4).map(|q| 32 * q + r).collect(),
            CpLanes::Warpx2_02_13 => vec![r, 64 + r],
            CpLanes::Warpx2_01_23 => {
                let first = 64 * (r / 32) + r % 32;
                vec![first, first + 32]
            }
        }
    }
}

/// Work a thread queues for the tensor core until its `tcgen05.commit`, in issue order.
#[derive(Clone, Debug)]
pub(crate) enum Tc05Work {
    /// A `tcgen05.mma`.
    Mma(Tc05Mma),
    /// A `tcgen05.cp`.
    Cp(Tc05Cp),
    /// A `tcgen05.shift` (`tcgen05_shift.rs`).
    Shift(super::tcgen05_shift::Tc05Shift),
}

impl Tc05Work {
    /// Whether it is the CTA pair's (`cta_group::2`).
    pub(crate) fn pair(&self) -> bool {
        match self {
            Tc05Work::Mma(m) => m.pair,
            Tc05Work::Shift(s) => s.pair,
            Tc05Work::Cp(c) => c.pair,
        }
    }

    /// Its PTX instruction and line.
    pub(crate) fn what(&self) -> (&'static str, u32) {
        match self {
            Tc05Work::Mma(m) => ("tcgen05.mma", m.line()),
            Tc05Work::Cp(c) => ("tcgen05.cp", c.line),
            Tc05Work::Shift(s) => ("tcgen05.shift", s.line),
        }
    }

    /// The shared-memory ranges it reads and its line.
    pub(crate) fn operands(&self) -> ([(u32, u32); 2], u32) {
        match self {
            Tc05Work::Mma(m) => m.operands(),
            Tc05Work::Cp(c) => ([c.extent(), (0, 0)], c.line),
            // A shift reads no shared memory.
            Tc05Work::Shift(s) => ([(0, 0), (0, 0)], s.line),
        }
    }
}

/// The tcgen05 work issued (queued, or committed and not yet run) that acts on CTA `ci`'s
/// tensor memory, as (issuing CTA, thread, work): all of CTA `ci`'s own, and the pair work
/// (`.cta_group::2`) of its pair's even CTA, which acts on both CTAs' tensor memory
/// (§9.7.16.5; the pair's work is queued in the CTA that issued it).
pub(crate) fn tmem_work(cl: &Cluster, ci: usize) -> Vec<(usize, u32, &Tc05Work)> {
    let even = ci & !1;
    let acts = |cta: usize, w: &Tc05Work| cta == ci || (cta == even && w.pair());
    let committed = cl.ops.iter().flat_map(|o| match &o.kind {
        super::bulk::AsyncKind::Tc05 { mmas, .. } => mmas
            .iter()
            .map(|w| (o.cta as usize, o.tid, w))
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    });
    let queued = [ci, even].into_iter().enumerate().flat_map(|(i, cta)| {
        // The even CTA's queue once when `ci` is itself even.
        let q = if i == 1 && cta == ci {
            &[][..]
        } else {
            &cl.ctas[cta].tc.queue[..]
        };
        q.iter().map(move |(t, w)| (cta, *t, w))
    });
    committed
        .chain(queued)
        .filter(|&(cta, _, w)| acts(cta, w))
        .collect()
}

/// The line of a `tcgen05.mma`, issued (queued or committed) and not yet run, that reads A
/// from CTA `ci`'s tensor memory at (`lane`, `col`) — one of its own, or its pair's from the
/// even CTA (each CTA's A half at the same address in its own tensor memory).
pub(crate) fn a_reader(cl: &Cluster, ci: usize, lane: u32, col: u32) -> Option<u32> {
    tmem_work(cl, ci).into_iter().find_map(|(_, _, w)| match w {
        Tc05Work::Mma(m) => m.reads_a_at(lane, col).then_some(m.line()),
        Tc05Work::Cp(_) | Tc05Work::Shift(_) => None,
    })
}

/// Issued (queued or committed) and unfinished tcgen05 work that accesses columns `c0..c1`
/// of CTA `ci`'s tensor memory: (its instruction, line, issuing CTA, thread) — an MMA's D or
/// its A in tensor memory, a copy's or shift's destination; the pair's work issued by the
/// even CTA accesses the odd CTA's columns too. A `tcgen05.dealloc` of those columns now
/// releases them under that access (§9.7.16.5, Table 47: before deallocating, no concurrent
/// tensor-memory access from the peer CTA).
pub(crate) fn unfinished_use(
    cl: &Cluster,
    ci: usize,
    (c0, c1): (u32, u32),
) -> Option<(&'static str, u32, usize, u32)> {
    let meets = |s: u32, n: u32| s < c1 && c0 < s + n;
    tmem_work(cl, ci)
        .into_iter()
        .find_map(|(cta, t, w)| match w {
            Tc05Work::Mma(m) => {
                let (_, d, _, cols, line) = m.d_rect();
                let a = matches!(m.a, super::tcgen05::MmaA::Tmem { col, .. } if meets(col, 8));
                (meets(d, cols) || a).then_some(("tcgen05.mma", line, cta, t))
            }
            Tc05Work::Cp(c) => {
                meets(c.col, c.shape.bytes / 4).then_some(("tcgen05.cp", c.line, cta, t))
            }
            Tc05Work::Shift(s) => (0..TMEM_LANES)
                .any(|l| (c0..c1).any(|c| s.writes(l, c)))
                .then_some(("tcgen05.shift", s.line, cta, t)),
        })
}

/// A `tcgen05.cp` or `tcgen05.shift`, issued (queued or committed) and not yet run, that
/// writes CTA `ci`'s tensor-memory cell (`lane`, `col`): (its instruction, line, issuing CTA,
/// thread). A `tcgen05.ld` of that cell now reads it before or after the write by timing —
/// the pair's copy issued by the even CTA included, which writes the odd CTA's tensor
/// memory too (§9.7.16.9.2) and is ordered before the odd CTA's load only by its commit's
/// mbarrier (multicast to both CTAs) and a wait on it.
pub(crate) fn unfinished_write(
    cl: &Cluster,
    ci: usize,
    lane: u32,
    col: u32,
) -> Option<(&'static str, u32, usize, u32)> {
    tmem_work(cl, ci)
        .into_iter()
        .find_map(|(cta, t, w)| match w {
            Tc05Work::Cp(c) => c
                .writes(lane, col)
                .then_some(("tcgen05.cp", c.line, cta, t)),
            Tc05Work::Shift(s) => s
                .writes(lane, col)
                .then_some(("tcgen05.shift", s.line, cta, t)),
            Tc05Work::Mma(_) => None,
        })
}

impl Tc05Cp {
    /// The shared-memory bytes `[lo, hi)` the copy reads: exactly its rows' bytes through the
    /// descriptor (a `.32x128b` row is one 16-byte chunk, less than the K = 16 slice of 16-bit
    /// elements `MatrixDesc::extent` bounds, which would reach past a 512-byte factor image).
    fn extent(&self) -> (u32, u32) {
        let (rows, bytes) = (self.shape.rows, self.shape.bytes);
        let offs = (0..rows)
            .flat_map(|r| (0..bytes / 4).map(move |c| (r, c)))
            .map(|(r, c)| self.desc.k_major(r, 2 * c));
        let (lo, hi) = offs.fold((u32::MAX, 0), |(lo, hi), o| (lo.min(o), hi.max(o + 4)));
        (lo.min(hi), hi)
    }

    /// Whether the copy writes the TMEM cell (`lane`, `col`).
    fn writes(&self, lane: u32, col: u32) -> bool {
        let in_lanes = (0..self.shape.rows).any(|r| {
            self.shape
                .lanes_of(r)
                .iter()
                .any(|&l| self.lane + l == lane)
        });
        in_lanes && (self.col..self.col + self.shape.bytes / 4).contains(&col)
    }
}

/// A `tcgen05.cp` of CTA `ci` issued by a thread other than `who`, not yet run (queued, or
/// committed and not complete), that writes the TMEM cell (`lane`, `col`): its line and
/// issuing thread. An MMA of `who` reading that cell now reads it before the copy lands:
/// nothing orders another thread's copy before the MMA but its commit and a wait on it
/// (PTX ISA §9.7.16.6.5 orders `tcgen05.cp → tcgen05.mma` only within one thread).
pub(crate) fn pending_writer(
    cl: &Cluster,
    (ci, who): (usize, u32),
    lane: u32,
    col: u32,
) -> Option<(u32, u32)> {
    let committed = cl
        .ops
        .iter()
        .filter(|o| o.cta as usize == ci && o.tid != who)
        .flat_map(|o| match &o.kind {
            super::bulk::AsyncKind::Tc05 { mmas, .. } => {
                mmas.iter().map(move |w| (o.tid, w)).collect::<Vec<_>>()
            }
            _ => Vec::new(),
        });
    let queued = cl.ctas[ci]
        .tc
        .queue
        .iter()
        .filter(|(t, _)| *t != who)
        .map(|(t, w)| (*t, w));
    committed.chain(queued).find_map(|(t, w)| match w {
        Tc05Work::Cp(c) => c.writes(lane, col).then_some((c.line, t)),
        Tc05Work::Shift(s) => s.writes(lane, col).then_some((s.line, t)),
        Tc05Work::Mma(_) => None,
    })
}

/// The (rows, bytes a row) of a `tcgen05.cp` shape modifier this emulator runs.
pub(crate) fn cp_shape(modifier: &str) -> Option<(u32, u32)> {
    match modifier {
        "128x256b" => Some((128, 32)),
        "128x128b" => Some((128, 16)),
        "4x256b" => Some((4, 32)),
        "32x128b" => Some((32, 16)),
        "64x128b" => Some((64, 16)),
        _ => None,
    }
}

impl Machine<'_> {
    /// `tcgen05.cp` by one thread: decoded and queued until its `tcgen05.commit`.
    pub(crate) fn tcgen05_cp(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
        (taddr, desc, shape): (&Addr, Val, CpShape),
        pair: bool,
    ) -> Result<(), SimError> {
        let line = inst.line;
        if pair && (ci ^ 1) >= cl.ctas.len() {
            let what = "tcgen05.cp.cta_group::2 in a CTA without a peer (ranks 2k and 2k + 1 \
                        form a pair, §9.7.16.5)";
            return Err(self.protocol(cl, ci, t, line, what.to_owned()));
        }
        let at = self.ea(cl, ci, t, taddr, line)? as u32;
        let desc = decode_smem_desc(self.rd(cl, ci, t, desc, line)?)
            .map_err(|s| self.protocol(cl, ci, t, line, s))?;
        cl.ctas[ci].tc.queue.push((
            t,
            Tc05Work::Cp(Tc05Cp {
                line,
                lane: at >> 16,
                col: at & 0xffff,
                desc,
                shape,
                pair,
            }),
        ));
        Ok(())
    }

    /// Runs one queued copy on CTA `ci`'s shared and tensor memory; the pair's on each CTA
    /// of the pair, from its own shared memory into its own tensor memory.
    pub(crate) fn tcgen05_cp_run(
        &self,
        cl: &mut Cluster,
        ci: usize,
        cp: &Tc05Cp,
        who: u32,
    ) -> Result<(), SimError> {
        if cp.pair {
            let even = ci & !1;
            self.tcgen05_cp_one(cl, (ci, even), cp, who)?;
            return self.tcgen05_cp_one(cl, (ci, even + 1), cp, who);
        }
        self.tcgen05_cp_one(cl, (ci, ci), cp, who)
    }

    /// The copy of `cp` (issued in CTA `issuer`) in CTA `ci`.
    fn tcgen05_cp_one(
        &self,
        cl: &mut Cluster,
        (issuer, ci): (usize, usize),
        cp: &Tc05Cp,
        who: u32,
    ) -> Result<(), SimError> {
        self.check_fenced(cl, ci, who, ([cp.extent(), (0, 0)], cp.line), "tcgen05.cp")?;
        let fault = |cl: &Cluster, what: &str| SimError::Protocol {
            line: cp.line,
            thread: cl.ctas[issuer].thread(who),
            what: if issuer == ci {
                what.to_owned()
            } else {
                format!("{what} (in the peer CTA, cluster rank {ci})")
            },
        };
        for r in 0..cp.shape.rows {
            for c in 0..cp.shape.bytes / 4 {
                // Four bytes of row `r` from byte `4c`: 16-bit elements `2c` and `2c + 1`,
                // adjacent within one 16-byte chunk whatever the swizzle.
                let off = cp.desc.k_major(r, 2 * c) as usize;
                let Some(b) = cl.ctas[ci].smem.get(off..off + 4) else {
                    return Err(fault(
                        cl,
                        "a tcgen05.cp source reaches outside shared memory",
                    ));
                };
                let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                for l in cp.shape.lanes_of(r) {
                    let Some(cell) = cl.ctas[ci].tmem.cell(cp.lane + l, cp.col + c) else {
                        return Err(fault(
                            cl,
                            "tcgen05.cp writes tensor memory outside every allocation",
                        ));
                    };
                    *cell = w;
                }
            }
        }
        Ok(())
    }
}
