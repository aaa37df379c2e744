//! The fifth-generation tensor core and tensor memory (PTX ISA §9.7.16 "TensorCore 5th
//! Generation Family Instructions"), the subset the shipped Blackwell GEMM uses:
//! `tcgen05.alloc/dealloc/relinquish_alloc_permit`, `tcgen05.mma` of `kind::f16`, `kind::tf32`
//! and `kind::f8f6f4` (the kinds, their descriptors and element formats: `tcgen05_kind.rs`; M = 128 in one
//! CTA, B in shared memory, A in shared memory or — the `[a-tmem]` form, §9.7.16.10.9 — in
//! tensor memory; the CTA pair's `cta_group::2`, M = 256 or 128, is `tcgen05_pair.rs`, with A
//! in either too), `tcgen05.cp` (`tcgen05_cp.rs`), `tcgen05.commit.mbarrier::arrive::one`,
//! `tcgen05.ld` with `tcgen05.wait::ld`,
//! `tcgen05.st` with `tcgen05.wait::st`, and the `tcgen05.fence::*` orderings
//! (no-ops here).
//!
//! **Data movement** (§9.7.16.2.3): every `.b32` shape, `.pack::16b` and `.unpack::16b`; the
//! thread maps are `tmem_shape.rs`, one thread's move `tcgen05_move.rs`. A warp accesses
//! the lanes of its quarter (warp `w % 4`: lanes `32(w % 4)..`). A `tcgen05.ld` reads its cells until the warp's
//! `tcgen05.wait::ld`: an MMA whose D covers them before that is diagnosed (the accumulator
//! stage released too early). `tcgen05.st` (§9.7.16.8.4) is asynchronous: its values are
//! taken at issue and written, but the cells belong to the store until the warp's
//! `tcgen05.wait::st` (§9.7.16.8.5); a `tcgen05.ld` of them, or an MMA whose D covers them,
//! before that is diagnosed.
//!
//! **Tensor memory** (§9.7.16): per CTA 128 lanes × 512 columns of 32 bits; an address is
//! `lane << 16 | column`. `alloc` takes a power-of-two column count in 32..=512, allocates
//! the lowest free aligned range and writes its address to shared memory; more than 512
//! columns in use is an error (the hardware would block), as are a `dealloc` that matches no
//! allocation, a `dealloc` of columns issued and unfinished work (an MMA, copy or shift, the
//! pair's included) has yet to access, and an access outside every allocation (use after
//! `dealloc`, naming the `dealloc` that released the column).
//!
//! **Instruction descriptor**: decoded per kind from the ISA's table in `tcgen05_kind.rs`.
//!
//! **Shared-memory descriptor** (§9.7.16): as wgmma's (start, LBO, SBO at the same bits,
//! base offset 49–51) with bits 46–48 the fixed version 0b001 and the swizzle in bits 61–63
//! (0 none, 2 128B, 4 64B, 6 32B; 1, 128B with 32-byte atoms, is refused); the canonical
//! layouts are `wgmma.rs`'s.
//!
//! **Asynchrony.** An MMA is queued by its thread; `tcgen05.commit` hands the thread's queued
//! MMAs to an asynchronous operation that the scheduler completes later: the MMAs run in
//! order (reading shared memory then) and the mbarrier gets one arrival. A read from TMEM is
//! read then too: row `m` from lane `lane0 + m` (data-path layout D, §9.7.16.10.5), K
//! element `k` from the low (`k` even) or high half of column `col0 + k / 2`; a cell outside
//! every allocation, or one a `tcgen05.st` wrote without its `tcgen05.wait::st`, is diagnosed,
//! as is a `tcgen05.st` into a cell an issued MMA has yet to read as A (`tcgen05_cp::
//! a_reader`); the transpose-A bit is refused with A in TMEM. D row `m` is TMEM
//! lane `lane0 + m`, column `n` column `col0 + n`. `tcgen05.ld` copies when it executes but
//! the registers belong to the load until `tcgen05.wait::ld`: reading one before is
//! diagnosed. Arithmetic as for wgmma: exact products of each instruction's K elements (16,
//! 8 tf32 or 32 FP8, 32 bytes of each row) summed in f64, one rounding into the f32
//! accumulator — or, with an f16 D (dtype F16), one rounding to f16 of the sum and the old D
//! (the cell's low half) per instruction; `kind::i8` adds in s32, wrapping or, with the
//! descriptor's saturate bit, clamping. A in tensor memory is emulated for `kind::f16` only, MN-major operands for
//! 16-bit ones only: others are refused at issue.

use super::cta::{Cluster, TState};
use super::diag::SimError;
use super::float::{Rnd, f64_to_f32};
use super::lane::lanes;
use super::machine::Machine;
use super::ops::{Op, TcA};
use super::program::{Addr, Inst, Reg, Val};
use super::tcgen05_cp::Tc05Work;
use super::tcgen05_kind::{Elem, InstrDesc, Kind, decode_idesc, element};
use super::tma::TmaSwizzle;
use super::wgmma::MatrixDesc;

/// Columns of tensor memory per CTA.
pub const TMEM_COLS: u32 = 512;
/// Lanes of tensor memory.
pub const TMEM_LANES: u32 = 128;

/// A CTA's tensor memory and its allocations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tmem {
    /// `lanes × columns` 32-bit cells, lane-major; empty until the first allocation.
    cells: Vec<u32>,
    /// Allocated (first column, columns, `cta_group::2`).
    pub(super) allocs: Vec<(u32, u32, bool)>,
    /// Released and not allocated again: (first column, columns, the `dealloc`'s line), so
    /// that an access after the release names it.
    freed: Vec<(u32, u32, u32)>,
}

impl Tmem {
    /// Whether no columns are allocated.
    pub(crate) fn is_empty(&self) -> bool {
        self.allocs.is_empty()
    }

    /// The word at (`lane`, `col`), if allocated.
    pub(super) fn word(&self, lane: u32, col: u32) -> Option<u32> {
        let inside = self
            .allocs
            .iter()
            .any(|&(c, n, _)| (c..c + n).contains(&col));
        if !inside || lane >= TMEM_LANES {
            return None;
        }
        self.cells.get((lane * TMEM_COLS + col) as usize).copied()
    }

    /// For an access of column `col` outside every allocation: the `tcgen05.dealloc` that
    /// released it, as a clause naming its line ("" when none did).
    pub(super) fn released(&self, col: u32) -> String {
        self.freed
            .iter()
            .rev()
            .find(|&&(c, n, _)| (c..c + n).contains(&col))
            .map_or(String::new(), |&(_, _, at)| {
                format!(" (released by the tcgen05.dealloc of line {at})")
            })
    }

    pub(super) fn cell(&mut self, lane: u32, col: u32) -> Option<&mut u32> {
        let inside = self
            .allocs
            .iter()
            .any(|&(c, n, _)| (c..c + n).contains(&col));
        if !inside || lane >= TMEM_LANES {
            return None;
        }
        self.cells.get_mut((lane * TMEM_COLS + col) as usize)
    }
}

/// One queued `tcgen05.mma`.
#[derive(Clone, Debug)]
pub(crate) struct Tc05Mma {
    pub(super) line: u32,
    pub(super) d_lane: u32,
    pub(super) d_col: u32,
    pub(super) a: MmaA,
    pub(super) b: MatrixDesc,
    pub(super) m: u32,
    pub(super) n: u32,
    /// The `.kind` and the operands' formats (`tcgen05_kind.rs`).
    pub(super) kind: Kind,
    pub(super) a_elem: Elem,
    pub(super) b_elem: Elem,
    pub(super) neg_a: bool,
    pub(super) neg_b: bool,
    pub(super) mn_a: bool,
    pub(super) mn_b: bool,
    pub(super) accumulate: bool,
    /// D is f16, one element in the low half of each cell (dtype F16, §9.7.16.10.4.1).
    pub(super) d_f16: bool,
    /// `kind::i8` with saturation (descriptor bit 3): D clamps to the s32 range.
    pub(super) sat: bool,
    /// `cta_group::2`: the CTA pair's MMA (`tcgen05_pair.rs`).
    pub(crate) pair: bool,
    /// The block-scaled kinds' scale factors in TMEM (`tcgen05_scale.rs`).
    pub(super) scale: Option<super::tcgen05_scale::ScaleAt>,
}

/// Where a queued MMA reads A.
#[derive(Clone, Debug)]
pub(crate) enum MmaA {
    /// Shared memory, through a matrix descriptor.
    Smem(MatrixDesc),
    /// Tensor memory from (lane, column): row `m` in lane `lane + m`, K element `k` in the
    /// low (`k` even) or high half of column `col + k / 2` (§9.7.16.10.5, layout D).
    Tmem { lane: u32, col: u32 },
}

impl Tc05Mma {
    /// Whether it reads A from tensor memory at (`lane`, `col`): `M` lanes × 8 columns (16
    /// packed 16-bit K elements).
    pub(crate) fn reads_a_at(&self, lane: u32, col: u32) -> bool {
        matches!(self.a, MmaA::Tmem { lane: l, col: c }
            if (l..l + self.m).contains(&lane) && (c..c + 8).contains(&col))
    }

    /// Its D in this CTA's tensor memory: first lane, first column, lanes, columns, line. The
    /// pair's M = 256 takes 128 lanes × N columns in each CTA; its M = 128 (Layout B) 128
    /// lanes × N / 2 columns.
    pub(crate) fn d_rect(&self) -> (u32, u32, u32, u32, u32) {
        let (rows, cols) = match (self.pair, self.m) {
            (true, 128) => (TMEM_LANES, self.n / 2),
            (true, _) => (TMEM_LANES, self.n),
            (false, m) => (m, self.n),
        };
        (self.d_lane, self.d_col, rows, cols, self.line)
    }

    /// The (lane, column) of tensor memory where D's row `i` (of this CTA's rows) and column
    /// `j` live: lane `d_lane + i`, column `d_col + j` (§9.7.16.10.5, Layouts A and D); for
    /// the pair's M = 128 (Layout B, the 2x2 data path: each CTA's 64 rows, its columns in
    /// two halves over the lanes) column `j < N / 2` in lane `d_lane + i` and column `j ≥
    /// N / 2` in lane `d_lane + 64 + i`, at column `d_col + j mod N / 2`.
    pub(crate) fn d_cell(&self, i: u32, j: u32) -> (u32, u32) {
        if self.pair && self.m == 128 {
            let half = self.n / 2;
            (self.d_lane + i + 64 * (j / half), self.d_col + j % half)
        } else {
            (self.d_lane + i, self.d_col + j)
        }
    }

    /// Its PTX line.
    pub(crate) fn line(&self) -> u32 {
        self.line
    }

    /// The shared-memory ranges it reads (A, B; A's empty when it is in TMEM) and its line.
    /// The pair's MMA reads the same ranges in both CTAs: each CTA's half, M / 2 rows of A
    /// and N / 2 rows of B (§9.7.16.5).
    pub(crate) fn operands(&self) -> ([(u32, u32); 2], u32) {
        let (m, n) = if self.pair {
            (self.m / 2, self.n / 2)
        } else {
            (self.m, self.n)
        };
        let a = match &self.a {
            MmaA::Smem(d) => d.extent(m, self.mn_a),
            MmaA::Tmem { .. } => (0, 0),
        };
        ([a, self.b.extent(n, self.mn_b)], self.line)
    }
}

/// A tcgen05 shared-memory descriptor, decoded into the wgmma form, or why it is refused.
pub fn decode_smem_desc(d: u64) -> Result<MatrixDesc, String> {
    let swizzle = match d >> 61 {
        0 => TmaSwizzle::None,
        2 => TmaSwizzle::B128,
        4 => TmaSwizzle::B64,
        6 => TmaSwizzle::B32,
        s => return Err(format!("shared-memory descriptor {d:#x}: swizzle mode {s}")),
    };
    if (d >> 46) & 7 != 1 {
        return Err(format!(
            "shared-memory descriptor {d:#x}: bits 46-48 are not 0b001"
        ));
    }
    let mut m = MatrixDesc::decode(d & !(7u64 << 61));
    m.swizzle = swizzle;
    Ok(m)
}

impl Machine<'_> {
    /// The warp-collective tcgen05 instructions (`alloc`, `dealloc`, `relinquish`, `ld`,
    /// `wait::ld`) for the `active` lanes of warp `wi`.
    pub(crate) fn tcgen05_warp(
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
        let first = base + active.trailing_zeros();
        if let Some(r) = &mut self.rec {
            let now = self.stats.warp_instructions;
            match inst.op {
                Op::TcLd { .. } => r.tmem_access(ci, wi, false, line, now),
                Op::TcSt { .. } => r.tmem_access(ci, wi, true, line, now),
                Op::TcWaitLd => r.tmem_wait(ci, wi, false, now),
                Op::TcWaitSt => r.tmem_wait(ci, wi, true, now),
                _ => {}
            }
        }
        match &inst.op {
            Op::TcAlloc { dst, ncols, pair } => {
                let n = self.rd(cl, ci, first, *ncols, line)? as u32;
                if !n.is_power_of_two() || !(32..=TMEM_COLS).contains(&n) {
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        format!("tcgen05.alloc of {n} columns: a power of two in 32..=512"),
                    ));
                }
                let free = if *pair {
                    self.pair_column(cl, ci, first, line, n)?
                } else {
                    free_column(&[&cl.ctas[ci].tmem], n)
                };
                let tm = &mut cl.ctas[ci].tmem;
                let used: u32 = tm.allocs.iter().map(|a| a.1).sum();
                let Some(col) = free else {
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        format!(
                            "tcgen05.alloc of {n} columns with {used} of 512 already allocated \
                         (TMEM over-allocation: the hardware would block)"
                        ),
                    ));
                };
                if tm.cells.is_empty() {
                    tm.cells = vec![0; (TMEM_LANES * TMEM_COLS) as usize];
                }
                tm.allocs.push((col, n, *pair));
                tm.freed.retain(|&(c, k, _)| c + k <= col || col + n <= c);
                let a = self.ea(cl, ci, first, dst, line)?;
                let loc =
                    self.locate(cl, ci, first, line, super::ops::MemSpace::SharedCta, a, 4)?;
                if let super::mem::Loc::Shared { cta, off } = loc {
                    let s = &mut cl.ctas[cta as usize].smem;
                    s[off as usize..off as usize + 4].copy_from_slice(&col.to_le_bytes());
                }
            }
            Op::TcDealloc { taddr, ncols, pair } => {
                let a = self.rd(cl, ci, first, *taddr, line)? as u32;
                let n = self.rd(cl, ci, first, *ncols, line)? as u32;
                let tm = &mut cl.ctas[ci].tmem;
                let Some(i) = tm
                    .allocs
                    .iter()
                    .position(|&(c, k, _)| c == a & 0xffff && k == n)
                else {
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        format!("tcgen05.dealloc of {n} columns at {a:#x} matches no allocation"),
                    ));
                };
                let made = tm.allocs[i].2;
                if made != *pair {
                    let g = |p: bool| if p { 2 } else { 1 };
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        format!(
                            "tcgen05.dealloc.cta_group::{} of {n} columns at {a:#x}, allocated \
                             with cta_group::{} (alloc and dealloc must agree, §9.7.16.7.1)",
                            g(*pair),
                            g(made)
                        ),
                    ));
                }
                // Released under an access still to come: the columns go while issued
                // work (the pair's, from the even CTA, included) has yet to use them.
                let c = a & 0xffff;
                if let Some((op, at, by, who)) =
                    super::tcgen05_cp::unfinished_use(cl, ci, (c, c + n))
                {
                    let g = if *pair { 2 } else { 1 };
                    let whose = if by == ci {
                        format!("thread {who}")
                    } else {
                        format!("thread {who} of the peer CTA, cluster rank {by}")
                    };
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        format!(
                            "tcgen05.dealloc.cta_group::{g} of {n} columns at {a:#x} while the \
                             {op} of line {at} ({whose}), issued and not completed, still \
                             accesses them: release the columns only after the last access of \
                             both CTAs — wait on its commit's mbarrier, then barrier.cluster \
                             (§9.7.16.5)"
                        ),
                    ));
                }
                let tm = &mut cl.ctas[ci].tmem;
                let (c, k, _) = tm.allocs.swap_remove(i);
                tm.freed.push((c, k, line));
            }
            Op::TcRelinquish => {}
            Op::TcLd {
                ds,
                taddr,
                shape,
                pack,
            } => {
                // What in-flight MMAs will write, once for the warp's load.
                let in_flight = super::tcgen05_fence::mmas_in_flight(cl, ci);
                for l in lanes(active) {
                    let op = (ds.as_slice(), taddr, *shape, *pack);
                    self.tcgen05_ld(cl, ci, (wi, l), line, op, &in_flight)?;
                }
            }
            Op::TcSt {
                taddr,
                vals,
                shape,
                unpack,
            } => {
                for l in lanes(active) {
                    self.tcgen05_st(cl, ci, wi, l, line, (vals, taddr, *shape, *unpack))?;
                }
            }
            Op::TcWaitSt => cl.ctas[ci].tc.st[wi as usize].clear(),
            Op::TcWaitLd => {
                cl.ctas[ci].tc.ld_cells[wi as usize].clear();
                for (t, r, at, now) in std::mem::take(&mut cl.ctas[ci].tc.ld[wi as usize]) {
                    let rf = &mut cl.regs[ci];
                    let i = t as usize * rf.n + r as usize;
                    if rf.stamp[i] > now {
                        return Err(SimError::Race {
                            line,
                            thread: cl.ctas[ci].thread(t),
                            what: format!(
                                "wrote `{}` while the tcgen05.ld of line {at} that fills it was in \
                                 flight (before this tcgen05.wait::ld)",
                                self.prog.reg_names[r as usize]
                            ),
                        });
                    }
                    rf.w[i] = true;
                }
            }
            _ => unreachable!("tcgen05_warp() of another op"),
        }
        for l in lanes(active) {
            cl.ctas[ci].pc[(base + l) as usize] = pc + 1;
            cl.ctas[ci].st[(base + l) as usize] = TState::Run;
        }
        Ok(())
    }

    /// `tcgen05.mma` by one thread: decoded and queued until its `tcgen05.commit`.
    pub(crate) fn tcgen05_mma(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        inst: &Inst,
        (kind, d, a, b, idesc, enable): (Kind, &Addr, &TcA, Val, Val, Val),
        (pair, scale): (bool, Option<&(Addr, Addr)>),
    ) -> Result<(), SimError> {
        let line = inst.line;
        let bad = |m: &Self, cl: &Cluster, s: String| m.protocol(cl, ci, t, line, s);
        let taddr = self.ea(cl, ci, t, d, line)? as u32;
        let InstrDesc {
            m,
            n,
            a: a_elem,
            b: b_elem,
            neg_a,
            neg_b,
            mn_a,
            mn_b,
            sf_ids,
            sf_ue4m3,
            d_f16,
            sat,
        } = decode_idesc(self.rd(cl, ci, t, idesc, line)? as u32, kind)
            .map_err(|s| bad(self, cl, s))?;
        let scale = match (scale, sf_ids) {
            (Some(at), Some(ids)) => Some(
                self.scale_at(cl, ci, t, line, at, ids, pair)?
                    .with_format(kind.scale_vec(), sf_ue4m3),
            ),
            _ => None,
        };
        // The MN-major canonical layouts are emulated for 16-bit operands only.
        if let Some(e) = [(mn_a, a_elem), (mn_b, b_elem)]
            .iter()
            .find(|(mn, e)| *mn && e.bytes() != 2)
        {
            return Err(bad(
                self,
                cl,
                format!(
                    "tcgen05.mma with an MN-major {:?} operand: MN-major layouts are emulated \
                     for 16-bit operands only",
                    e.1
                ),
            ));
        }
        if pair {
            self.pair_shape(cl, ci, t, line, (m, n, taddr >> 16), scale.is_some())?;
        } else if m != 128 || n == 0 || n > 256 || !n.is_multiple_of(16) {
            return Err(bad(
                self,
                cl,
                format!(
                    "tcgen05.mma with M = {m}, N = {n}: M = 128, N a multiple of 16 up to 256 are supported"
                ),
            ));
        }
        let ad = match a {
            TcA::Desc(a) => MmaA::Smem(
                decode_smem_desc(self.rd(cl, ci, t, *a, line)?).map_err(|s| bad(self, cl, s))?,
            ),
            TcA::Tmem(a) => {
                if kind != Kind::F16 {
                    return Err(bad(
                        self,
                        cl,
                        format!(
                            "tcgen05.mma.{kind:?} with A in tensor memory ([a-tmem]): A from \
                             TMEM is emulated for kind::f16 only"
                        ),
                    ));
                }
                if mn_a {
                    return Err(bad(
                        self,
                        cl,
                        "tcgen05.mma with A in tensor memory and the transpose-A bit set: A in \
                         TMEM is K-major"
                            .to_owned(),
                    ));
                }
                let at = self.ea(cl, ci, t, a, line)? as u32;
                MmaA::Tmem {
                    lane: at >> 16,
                    col: at & 0xffff,
                }
            }
        };
        let bd = decode_smem_desc(self.rd(cl, ci, t, b, line)?).map_err(|s| bad(self, cl, s))?;
        let accumulate = self.rd(cl, ci, t, enable, line)? & 1 == 1;
        cl.ctas[ci].tc.queue.push((
            t,
            Tc05Work::Mma(Tc05Mma {
                line,
                d_lane: taddr >> 16,
                d_col: taddr & 0xffff,
                a: ad,
                b: bd,
                m,
                n,
                kind,
                a_elem,
                b_elem,
                neg_a,
                neg_b,
                mn_a,
                mn_b,
                accumulate,
                d_f16,
                sat,
                pair,
                scale,
            }),
        ));
        Ok(())
    }

    /// The MMAs and copies thread `t` queued since its last commit, for `tcgen05.commit`.
    pub(crate) fn tcgen05_take(cl: &mut Cluster, ci: usize, t: u32) -> Vec<Tc05Work> {
        let q = &mut cl.ctas[ci].tc.queue;
        let mine: Vec<Tc05Work> = q
            .iter()
            .filter(|(u, _)| *u == t)
            .map(|(_, m)| m.clone())
            .collect();
        q.retain(|(u, _)| *u != t);
        mine
    }

    /// Runs one MMA on CTA `ci`'s shared and tensor memory (a pair's on both CTAs').
    pub(crate) fn tcgen05_run(
        &self,
        cl: &mut Cluster,
        ci: usize,
        mma: &Tc05Mma,
        who: u32,
    ) -> Result<(), SimError> {
        if mma.pair {
            return self.tcgen05_run_pair(cl, ci, mma, who);
        }
        self.check_fenced(cl, ci, who, mma.operands(), "tcgen05.mma")?;
        let a = match &mma.a {
            MmaA::Tmem { lane, col } => {
                Some(self.tmem_a(cl, (ci, who), ci, mma, (*lane, *col, mma.m))?)
            }
            MmaA::Smem(d) => operand_rows(&cl.ctas[ci].smem, mma, d, mma.a_side(), mma.m),
        };
        let b = operand_rows(&cl.ctas[ci].smem, mma, &mma.b, mma.b_side(), mma.n);
        let (Some(mut a), Some(mut b)) = (a, b) else {
            return Err(mma_fault(
                cl,
                (ci, who),
                mma,
                "a tcgen05.mma operand reaches outside shared memory",
            ));
        };
        if let Some(at) = &mma.scale {
            self.apply_scales(cl, (ci, who), ci, mma, at, (&mut a, &mut b))?;
        }
        write_d(cl, (ci, who), ci, mma, &a, &b)
    }
}

/// How one operand is read: its format, whether MN-major, whether negated.
#[derive(Clone, Copy)]
pub(super) struct Side {
    elem: Elem,
    mn: bool,
    neg: bool,
}

impl Tc05Mma {
    /// How A is read.
    pub(super) fn a_side(&self) -> Side {
        Side {
            elem: self.a_elem,
            mn: self.mn_a,
            neg: self.neg_a,
        }
    }
    /// How B is read.
    pub(super) fn b_side(&self) -> Side {
        Side {
            elem: self.b_elem,
            mn: self.mn_b,
            neg: self.neg_b,
        }
    }
}

/// `rows` rows of the kind's K elements of one operand (32 bytes of each row: 16 × 16-bit,
/// 8 × tf32, 32 × 8-bit, 64 dense FP4 or 32 of the padded 6-/4-bit groups) read through `desc` from `smem` as exact values (negated when
/// asked), or `None` when one reaches outside it. MN-major operands are 16-bit (checked at
/// issue).
pub(super) fn operand_rows(
    smem: &[u8],
    mma: &Tc05Mma,
    desc: &MatrixDesc,
    side: Side,
    rows: u32,
) -> Option<Vec<Vec<f64>>> {
    let w = side.elem.bytes();
    let mut out = vec![vec![0f64; mma.kind.k() as usize]; rows as usize];
    for (r, row) in out.iter_mut().enumerate() {
        for (k, v) in row.iter_mut().enumerate() {
            if let Some(w) = side.elem.padded_bits() {
                // kind::f8f6f4's padded groups: 16 K-elements in the low 12 / 8 bytes of each
                // 16-byte group, element i at bits w·i (little-endian); padding unread.
                let (group, bit) = (k as u32 / 16 * 16, (k as u32 % 16) * w);
                let byte = |j: u32| smem.get(desc.k_major_byte(r as u32, group + j) as usize);
                let lo = u32::from(*byte(bit / 8)?);
                // A 6-bit element may straddle two bytes (never the group's last: 15·6 + 6 = 96).
                let hi = if (bit % 8) + w > 8 {
                    u32::from(*byte(bit / 8 + 1)?)
                } else {
                    0
                };
                let code = ((lo | (hi << 8)) >> (bit % 8)) & ((1 << w) - 1);
                *v = element(&code.to_le_bytes(), side.elem, side.neg)?;
                continue;
            }
            if side.elem == Elem::E2m1 {
                // Two E2M1 to a byte, the lower K in the low nibble.
                let off = desc.k_major_byte(r as u32, k as u32 / 2) as usize;
                let nib = smem.get(off)? >> (4 * (k % 2));
                *v = element(&[nib & 0xf], side.elem, side.neg)?;
                continue;
            }
            let off = if side.mn {
                desc.mn_major(r as u32, k as u32)?
            } else {
                desc.k_major_byte(r as u32, k as u32 * w)
            } as usize;
            *v = element(smem.get(off..)?, side.elem, side.neg)?;
        }
    }
    Some(out)
}

/// A protocol error of the MMA issued by thread `who` of CTA `ci`.
pub(super) fn mma_fault(
    cl: &Cluster,
    (ci, who): (usize, u32),
    mma: &Tc05Mma,
    what: &str,
) -> SimError {
    SimError::Protocol {
        line: mma.line,
        thread: cl.ctas[ci].thread(who),
        what: what.to_owned(),
    }
}

/// Writes `D = A·B (+ D)` into CTA `cta`'s tensor memory: row `i` of `a` and row `j` of `b`
/// to the cell `Tc05Mma::d_cell(i, j)` (for the pair's M = 128 with 128 rows of `a`, read
/// per lane from tensor memory, the row of that cell's lane); cells a `tcgen05.st` or
/// `tcgen05.ld` still owns
/// are diagnosed. `issuer` is the MMA's CTA and thread.
pub(super) fn write_d(
    cl: &mut Cluster,
    issuer: (usize, u32),
    cta: usize,
    mma: &Tc05Mma,
    a: &[Vec<f64>],
    b: &[Vec<f64>],
) -> Result<(), SimError> {
    // D cells a `tcgen05.st` wrote without its `tcgen05.wait::st` yet: the MMA would read
    // (accumulate) or overwrite them while the store is in flight.
    let pending: std::collections::HashMap<(u32, u32), u32> = cl.ctas[cta]
        .tc
        .st
        .iter()
        .flatten()
        .map(|&(l, c, at)| ((l, c), at))
        .collect();
    // D cells a `tcgen05.ld` reads whose warp has not executed `tcgen05.wait::ld`: the
    // load is asynchronous until then (§9.7.16.8.3, §9.7.16.8.5), so the MMA's result may
    // be what it reads (an epilogue that releases its accumulator stage too early).
    let reading: std::collections::HashMap<(u32, u32), u32> = cl.ctas[cta]
        .tc
        .ld_cells
        .iter()
        .flatten()
        .map(|&(l, c, at)| ((l, c), at))
        .collect();
    let written = super::tcgen05_fence::record_mma(&mut cl.ctas[cta], issuer.1, mma.line);
    // The pair's M = 128 (Layout B): D's 64 rows; with A read per lane (128 rows, from
    // tensor memory) the upper lanes' columns N/2.. take A's rows 64.. (its second copy).
    let rows = if mma.pair && mma.m == 128 {
        64
    } else {
        a.len()
    };
    for i in 0..rows {
        for (j, br) in b.iter().enumerate() {
            let key = mma.d_cell(i as u32, j as u32);
            let ar = &a[if a.len() > rows {
                (key.0 - mma.d_lane) as usize
            } else {
                i
            }];
            if let Some(at) = reading.get(&key) {
                let what = format!(
                    "tcgen05.mma writes lane {}, column {} of tensor memory, which the \
                     tcgen05.ld of line {at} still reads (its warp has not executed \
                     tcgen05.wait::ld)",
                    key.0, key.1
                );
                return Err(mma_fault(cl, issuer, mma, &what));
            }
            if let Some(at) = pending.get(&key) {
                let what = format!(
                    "tcgen05.mma on lane {}, column {} of tensor memory, which the \
                     tcgen05.st of line {at} wrote without a tcgen05.wait::st",
                    key.0, key.1
                );
                return Err(mma_fault(cl, issuer, mma, &what));
            }
            let dot: f64 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
            let Some(cell) = cl.ctas[cta].tmem.cell(key.0, key.1) else {
                let what = format!(
                    "tcgen05.mma writes lane {}, column {} of the tensor memory of cluster rank \
                     {cta}, outside every allocation{}",
                    key.0,
                    key.1,
                    cl.ctas[cta].tmem.released(key.1)
                );
                return Err(mma_fault(cl, issuer, mma, &what));
            };
            if mma.kind == Kind::I8 {
                // s32 D: the integer products' sum is exact in f64 (|Σ| ≤ 32·255²), added in
                // two's-complement 32-bit arithmetic: wrapping, or with the descriptor's
                // saturate bit clamped to [-2^31, 2^31 - 1] (Table 42, "Saturate for integer
                // types").
                let acc = if mma.accumulate { *cell as i32 } else { 0 };
                let sum = if mma.sat {
                    acc.saturating_add(dot as i64 as i32)
                } else {
                    acc.wrapping_add(dot as i64 as i32)
                };
                *cell = sum as u32;
            } else if mma.d_f16 {
                // f16 D (dtype F16): the element is the cell's low half (§9.7.16.10.4.1). The
                // instruction's exact products and the old D summed in f64, rounded once to
                // f16 (nearest even) as the instruction writes D — the ISA defines each MMA as
                // D = A·B + D with D of the dtype, and leaves the internal precision of one
                // instruction's sum unspecified; the emulator takes it exact.
                let acc = if mma.accumulate {
                    super::float::decode(u64::from(*cell & 0xffff), super::float::F16)
                } else {
                    0.0
                };
                *cell = super::float::round_to(acc + dot, super::float::F16, Rnd::Rn) as u32;
            } else {
                let acc = if mma.accumulate {
                    f64::from(f32::from_bits(*cell))
                } else {
                    0.0
                };
                *cell = f64_to_f32(acc + dot, Rnd::Rn).to_bits();
            }
            cl.ctas[cta].tc.mma_at[(key.0 * TMEM_COLS + key.1) as usize] = written;
        }
    }
    Ok(())
}

/// The lowest `n`-aligned range of `n` columns free in every one of `tmems`.
pub(super) fn free_column(tmems: &[&Tmem], n: u32) -> Option<u32> {
    (0..TMEM_COLS / n).map(|i| i * n).find(|&c| {
        tmems
            .iter()
            .all(|tm| tm.allocs.iter().all(|&(s, k, _)| c + n <= s || s + k <= c))
    })
}

impl Machine<'_> {
    /// A's `rows × 16` 16-bit elements (as f64, negated when asked) read from CTA `ci`'s
    /// tensor memory (§9.7.16.10.9, `[a-tmem]`) for the MMA `issuer` (CTA, thread) issued:
    /// row `m` from lane `lane + m`, element `k` from the low (`k` even) or high half of
    /// column `col + k / 2` (§9.7.16.10.5 layouts D and A; two 16-bit elements to a 32-bit
    /// cell). A cell outside every allocation, or one a `tcgen05.st` wrote without its
    /// `tcgen05.wait::st` yet, is diagnosed.
    pub(super) fn tmem_a(
        &self,
        cl: &mut Cluster,
        (ii, who): (usize, u32),
        ci: usize,
        mma: &Tc05Mma,
        (lane, col, rows): (u32, u32, u32),
    ) -> Result<Vec<Vec<f64>>, SimError> {
        let fault = |cl: &Cluster, what: String| SimError::Protocol {
            line: mma.line,
            thread: cl.ctas[ii].thread(who),
            what,
        };
        let mut out = vec![vec![0f64; 16]; rows as usize];
        for (r, row) in out.iter_mut().enumerate() {
            for c in 0..8u32 {
                let (l, cc) = (lane + r as u32, col + c);
                if let Some(at) = pending_st(&cl.ctas[ci], l, cc) {
                    return Err(fault(
                        cl,
                        format!(
                            "tcgen05.mma reads A from lane {l}, column {cc} of tensor memory, \
                             which the tcgen05.st of line {at} wrote without a tcgen05.wait::st"
                        ),
                    ));
                }
                let Some(&mut w) = cl.ctas[ci].tmem.cell(l, cc) else {
                    return Err(fault(
                        cl,
                        format!(
                            "tcgen05.mma reads A from lane {l}, column {cc} of the tensor memory \
                             of cluster rank {ci}, outside every allocation{}",
                            cl.ctas[ci].tmem.released(cc)
                        ),
                    ));
                };
                // kind::f16 only (checked at issue): two 16-bit elements to a cell.
                let e = |bits: u32| {
                    let v = mma.a_elem.value(bits & 0xffff);
                    if mma.neg_a { -v } else { v }
                };
                row[2 * c as usize] = e(w);
                row[2 * c as usize + 1] = e(w >> 16);
            }
        }
        Ok(out)
    }
}

/// The line of the `tcgen05.ld` whose result register `r` of thread `t` still awaits its
/// `tcgen05.wait::ld`.
pub(crate) fn pending_ld(list: &[(u32, Reg, u32, u32)], t: u32, r: Reg) -> Option<u32> {
    list.iter()
        .find(|&&(u, q, _, _)| u == t && q == r)
        .map(|x| x.2)
}

/// The line of a `tcgen05.st` of CTA `cta` that wrote (`lane`, `col`) and awaits its
/// `tcgen05.wait::st`.
pub(super) fn pending_st(cta: &super::cta::Cta, lane: u32, col: u32) -> Option<u32> {
    cta.tc
        .st
        .iter()
        .flatten()
        .find(|&&(l, c, _)| l == lane && c == col)
        .map(|x| x.2)
}
