//! The fifth-generation tensor core and tensor memory (PTX ISA §9.7.16 "TensorCore 5th
//! Generation Family Instructions"), the subset the shipped Blackwell GEMM uses:
//! `tcgen05.alloc/dealloc/relinquish_alloc_permit`, `tcgen05.mma.kind::f16` (M = 128 in one
//! CTA, B in shared memory, A in shared memory or — the `[a-tmem]` form, §9.7.16.10.9 — in
//! tensor memory; the CTA pair's `cta_group::2`, M = 256, is `tcgen05_pair.rs`, A in shared
//! memory only), `tcgen05.cp` (`tcgen05_cp.rs`), `tcgen05.commit.mbarrier::arrive::one`,
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
//! allocation and an access outside every allocation (use after `dealloc`).
//!
//! **Instruction descriptor** (§9.7.16, `kind::f16`), decoded from the ISA's table:
//! bits 4–5 the D format (1: f32), 7–9 / 10–12 the A / B formats (0: f16, 1: bf16), 13 / 14
//! negate A / B, 15 / 16 A / B MN-major, 17–22 N >> 3, 24–28 M >> 4; sparsity (bits 0–2),
//! saturation (3) and the shift (30–31) must be zero.
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
//! diagnosed. Arithmetic as for wgmma: exact products of each K = 16 step summed in f64, one
//! rounding into the f32 accumulator.

use super::diag::SimError;
use super::float::{Rnd, bf16_to_f32, f16_to_f32, f64_to_f32};
use super::lane::lanes;
use super::machine::{Cluster, Machine, TState};
use super::ops::{Op, TcA};
use super::program::{Addr, Inst, Reg, Val};
use super::tcgen05_cp::Tc05Work;
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
}

impl Tmem {
    /// Whether no columns are allocated.
    pub(crate) fn is_empty(&self) -> bool {
        self.allocs.is_empty()
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
    pub(super) f16: bool,
    pub(super) neg_a: bool,
    pub(super) neg_b: bool,
    pub(super) mn_a: bool,
    pub(super) mn_b: bool,
    pub(super) accumulate: bool,
    /// `cta_group::2`: the CTA pair's MMA (`tcgen05_pair.rs`).
    pub(crate) pair: bool,
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

/// A decoded `kind::f16` instruction descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstrDesc {
    /// M (64 or 128 for `cta_group::1`).
    pub m: u32,
    /// N.
    pub n: u32,
    /// f16 inputs (else bf16).
    pub f16: bool,
    /// Negate A.
    pub neg_a: bool,
    /// Negate B.
    pub neg_b: bool,
    /// A MN-major.
    pub mn_a: bool,
    /// B MN-major.
    pub mn_b: bool,
}

/// Decodes a `kind::f16` instruction descriptor, or says why it is refused.
pub fn decode_idesc(d: u32) -> Result<InstrDesc, String> {
    let f = |lo: u32, n: u32| (d >> lo) & ((1 << n) - 1);
    if f(0, 4) != 0 || f(30, 2) != 0 {
        return Err(format!(
            "instruction descriptor {d:#x}: sparsity, saturation or shift set"
        ));
    }
    if f(4, 2) != 1 {
        return Err(format!(
            "instruction descriptor {d:#x}: only an f32 accumulator is supported"
        ));
    }
    let (fa, fb) = (f(7, 3), f(10, 3));
    if fa != fb || fa > 1 {
        return Err(format!(
            "instruction descriptor {d:#x}: A/B formats {fa}/{fb}"
        ));
    }
    Ok(InstrDesc {
        m: f(24, 5) << 4,
        n: f(17, 6) << 3,
        f16: fa == 0,
        neg_a: f(13, 1) == 1,
        neg_b: f(14, 1) == 1,
        mn_a: f(15, 1) == 1,
        mn_b: f(16, 1) == 1,
    })
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
                cl.ctas[ci].tmem.allocs.swap_remove(i);
            }
            Op::TcRelinquish => {}
            Op::TcLd {
                ds,
                taddr,
                shape,
                pack,
            } => {
                for l in lanes(active) {
                    self.tcgen05_ld(cl, ci, wi, l, line, (ds, taddr, *shape, *pack))?;
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
            Op::TcWaitSt => cl.ctas[ci].tc_st[wi as usize].clear(),
            Op::TcWaitLd => {
                cl.ctas[ci].tc_ld_cells[wi as usize].clear();
                for (t, r, at, now) in std::mem::take(&mut cl.ctas[ci].tc_ld[wi as usize]) {
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
        (d, a, b, idesc, enable): (&Addr, &TcA, Val, Val, Val),
        pair: bool,
    ) -> Result<(), SimError> {
        let line = inst.line;
        let bad = |m: &Self, cl: &Cluster, s: String| m.protocol(cl, ci, t, line, s);
        let taddr = self.ea(cl, ci, t, d, line)? as u32;
        let InstrDesc {
            m,
            n,
            f16,
            neg_a,
            neg_b,
            mn_a,
            mn_b,
        } = decode_idesc(self.rd(cl, ci, t, idesc, line)? as u32).map_err(|s| bad(self, cl, s))?;
        if pair {
            self.pair_shape(cl, ci, t, line, m, n)?;
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
                if pair {
                    return Err(bad(
                        self,
                        cl,
                        "tcgen05.mma.cta_group::2 with A in tensor memory ([a-tmem]): the CTA \
                         pair's MMA is emulated with A in shared memory only"
                            .to_owned(),
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
        cl.ctas[ci].tc_queue.push((
            t,
            Tc05Work::Mma(Tc05Mma {
                line,
                d_lane: taddr >> 16,
                d_col: taddr & 0xffff,
                a: ad,
                b: bd,
                m,
                n,
                f16,
                neg_a,
                neg_b,
                mn_a,
                mn_b,
                accumulate,
                pair,
            }),
        ));
        Ok(())
    }

    /// The MMAs and copies thread `t` queued since its last commit, for `tcgen05.commit`.
    pub(crate) fn tcgen05_take(cl: &mut Cluster, ci: usize, t: u32) -> Vec<Tc05Work> {
        let q = &mut cl.ctas[ci].tc_queue;
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
            MmaA::Tmem { lane, col } => Some(self.tmem_a(cl, ci, mma, who, (*lane, *col))?),
            MmaA::Smem(d) => operand_rows(&cl.ctas[ci].smem, mma, d, mma.mn_a, mma.neg_a, mma.m),
        };
        let b = operand_rows(&cl.ctas[ci].smem, mma, &mma.b, mma.mn_b, mma.neg_b, mma.n);
        let (Some(a), Some(b)) = (a, b) else {
            return Err(mma_fault(
                cl,
                (ci, who),
                mma,
                "a tcgen05.mma operand reaches outside shared memory",
            ));
        };
        write_d(cl, (ci, who), ci, mma, &a, &b)
    }
}

/// A 16-bit element of the MMA's type (f16 or bf16) as f64, negated when asked.
fn half(mma: &Tc05Mma, bits: u16, neg: bool) -> f64 {
    let x = f64::from(if mma.f16 {
        f16_to_f32(bits)
    } else {
        bf16_to_f32(bits)
    });
    if neg { -x } else { x }
}

/// `rows` rows of 16 K elements of one operand read through `desc` from `smem` (negated when
/// asked), or `None` when one reaches outside it.
pub(super) fn operand_rows(
    smem: &[u8],
    mma: &Tc05Mma,
    desc: &MatrixDesc,
    mn: bool,
    neg: bool,
    rows: u32,
) -> Option<Vec<[f64; 16]>> {
    let mut out = vec![[0f64; 16]; rows as usize];
    for (r, row) in out.iter_mut().enumerate() {
        for (k, v) in row.iter_mut().enumerate() {
            let off = if mn {
                desc.mn_major(r as u32, k as u32)?
            } else {
                desc.k_major(r as u32, k as u32)
            } as usize;
            let b = smem.get(off..off + 2)?;
            *v = half(mma, u16::from_le_bytes([b[0], b[1]]), neg);
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

/// Writes `D = A·B (+ D)` into CTA `cta`'s tensor memory: row `i` of `a` to lane `d_lane + i`,
/// row `j` of `b` to column `d_col + j`; cells a `tcgen05.st` or `tcgen05.ld` still owns
/// are diagnosed. `issuer` is the MMA's CTA and thread.
pub(super) fn write_d(
    cl: &mut Cluster,
    issuer: (usize, u32),
    cta: usize,
    mma: &Tc05Mma,
    a: &[[f64; 16]],
    b: &[[f64; 16]],
) -> Result<(), SimError> {
    // D cells a `tcgen05.st` wrote without its `tcgen05.wait::st` yet: the MMA would read
    // (accumulate) or overwrite them while the store is in flight.
    let pending: std::collections::HashMap<(u32, u32), u32> = cl.ctas[cta]
        .tc_st
        .iter()
        .flatten()
        .map(|&(l, c, at)| ((l, c), at))
        .collect();
    // D cells a `tcgen05.ld` reads whose warp has not executed `tcgen05.wait::ld`: the
    // load is asynchronous until then (§9.7.16.8.3, §9.7.16.8.5), so the MMA's result may
    // be what it reads (an epilogue that releases its accumulator stage too early).
    let reading: std::collections::HashMap<(u32, u32), u32> = cl.ctas[cta]
        .tc_ld_cells
        .iter()
        .flatten()
        .map(|&(l, c, at)| ((l, c), at))
        .collect();
    for (i, ar) in a.iter().enumerate() {
        for (j, br) in b.iter().enumerate() {
            let key = (mma.d_lane + i as u32, mma.d_col + j as u32);
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
                return Err(mma_fault(
                    cl,
                    issuer,
                    mma,
                    "tcgen05.mma writes tensor memory outside every allocation",
                ));
            };
            let acc = if mma.accumulate {
                f64::from(f32::from_bits(*cell))
            } else {
                0.0
            };
            *cell = f64_to_f32(acc + dot, Rnd::Rn).to_bits();
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
    /// A's `M × 16` 16-bit elements (as f64, negated when asked) read from tensor memory (§9.7.16.10.9, `[a-tmem]`): row
    /// `m` from lane `lane + m`, element `k` from the low (`k` even) or high half of column
    /// `col + k / 2` (§9.7.16.10.5 layout D; two 16-bit elements to a 32-bit cell). A cell
    /// outside every allocation, or one a `tcgen05.st` wrote without its `tcgen05.wait::st`
    /// yet, is diagnosed.
    fn tmem_a(
        &self,
        cl: &mut Cluster,
        ci: usize,
        mma: &Tc05Mma,
        who: u32,
        (lane, col): (u32, u32),
    ) -> Result<Vec<[f64; 16]>, SimError> {
        let fault = |cl: &Cluster, what: String| SimError::Protocol {
            line: mma.line,
            thread: cl.ctas[ci].thread(who),
            what,
        };
        let mut out = vec![[0f64; 16]; mma.m as usize];
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
                        "tcgen05.mma reads A from tensor memory outside every allocation".into(),
                    ));
                };
                row[2 * c as usize] = half(mma, w as u16, mma.neg_a);
                row[2 * c as usize + 1] = half(mma, (w >> 16) as u16, mma.neg_a);
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
pub(super) fn pending_st(cta: &super::machine::Cta, lane: u32, col: u32) -> Option<u32> {
    cta.tc_st
        .iter()
        .flatten()
        .find(|&&(l, c, _)| l == lane && c == col)
        .map(|x| x.2)
}
