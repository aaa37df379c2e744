//! Warpgroup MMA (PTX ISA §9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
//! Instructions"): `wgmma.fence`, `wgmma.mma_async` with both operands in shared memory,
//! `wgmma.commit_group`, `wgmma.wait_group`.
//!
//! Scope of this version: `.m64nNk16` with an f32 accumulator and bf16/f16 inputs; A in
//! shared memory (the SS form) or in registers (the RS form), B in shared memory; shared
//! operands K-major or (swizzled) MN-major (`imm-trans-a/b`), descriptors without a base
//! offset. And `.m64nNk32` with E4M3/E5M2 inputs (A and B of either FP8 type), both in shared
//! memory and K-major (the FP8 forms have no transpose operands, §9.7.15.5.2): the same
//! K-major address function at byte offset `k` along the row (an 8-bit row of 32 elements is
//! the 32 bytes of a 16-bit row of 16). Other types, and the FP8 RS form, are refused at
//! decode; an unswizzled MN-major operand or a base offset when the MMA issues.
//!
//! **A fragment in registers** (§9.7.15.5.1.1.1, "Matrix Fragments for wgmma.mma_async
//! .m64nNk16", the figure of the A layout): four `.b32` registers of two 16-bit elements each,
//! the lower half the lower column. Thread `l` of warp `w` of the warpgroup holds in register
//! `q` row `16w + l/4 + 8·(q % 2)`, columns `2(l % 4) + 8·(q / 2)` and `+1` — each warp's
//! 16 rows are the m16n8k16 `mma` A fragment (§9.7.14.5.8).
//!
//! **Matrix descriptor** (§9.7.15 "Matrix Descriptor Format"), decoded here from the
//! ISA's table: bits 0–13 the start address >> 4, bits 16–29 the leading-dimension byte
//! offset >> 4, bits 32–45 the stride-dimension byte offset >> 4, bits 49–51 the base offset,
//! bits 62–63 the swizzle (0 none, 1 128B, 2 64B, 3 32B).
//!
//! **MN-major canonical layouts, swizzled** (§9.7.15): element (`r`, `k`) lies at
//! `start + (r / (S/2))·LBO + (k / 8)·SBO + (k % 8)·S + 2·(r % (S/2))`, swizzled: each row of
//! the span holds consecutive M/N elements of one `k`.
//!
//! **K-major canonical layouts** (§9.7.15): row `r` (of M for A, N for B) and column `k`
//! of a 16-bit matrix lie at
//! - no swizzle: `start + (r / 8)·SBO + (k / 8)·LBO + (r % 8)·16 + (k % 8)·2` (8×16-byte core
//!   matrices, LBO apart along K, SBO apart along M/N);
//! - swizzle of span `S` (32/64/128 bytes): `start + (r / 8)·SBO + (r % 8)·S + 2k`, then the
//!   swizzle permutation of `tma.rs` applied to that shared-memory address (the same address
//!   function as the TMA unit's, which is why a TMA-written tile reads back in order).
//!
//! **Accumulator fragment** (§9.7.15, "Register fragments, matrix D"): thread `l` of warp
//! `w` of the warpgroup holds, for each 8-column block `i` of N, registers `4i..4i+3` at
//! rows `16w + l/4` (registers `4i`, `4i+1`) and `16w + l/4 + 8` (`4i+2`, `4i+3`), columns
//! `8i + 2(l % 4)` and `+1`. Each warp's 16 rows depend only on its own slice of A, so a
//! warp's part of the MMA is computed on its own.
//!
//! **Asynchrony.** An `mma_async` captures its accumulator inputs at issue and takes the D
//! registers away from the thread: reading one before the `wgmma.wait_group` that retires the
//! MMA is an uninitialised-register error naming the wgmma. The RS form's A registers are in
//! flight too (§9.7.15.7.3 `wgmma.wait_group`: accessing the accumulator or the registers
//! holding A's fragments before the wait that retires the MMA is undefined): the MMA takes
//! their values at issue and owns them, so a read is diagnosed at the reading line, and a
//! write (detected when the MMA retires or another MMA reads them) is a race. Further MMAs
//! may read the same A registers while they are in flight, as attention's P·V does. The shared-memory operands are
//! read when the MMA completes, at the `wait_group` (a write to them in between races, as on
//! the hardware). Arithmetic: the exact products of each k16 (k32) step summed in f64 and added
//! to the f32 accumulator with one rounding (FP8 products are exact in f64 too); the tensor
//! core's own order and rounding differ by an f32 accumulation-order bound (for FP8 on Hopper
//! by more: its adder keeps fewer than f32's bits, which GPU tests bound, not this model).

use super::cta::{Cluster, TState};
use super::diag::SimError;
use super::lane::lanes;
use super::machine::Machine;
use super::ops::{Op, WgmmaA};
use super::program::{Inst, Reg, Val};
use super::tcgen05_kind::Elem;
use super::tma::TmaSwizzle;

/// A decoded shared-memory matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDesc {
    /// Start address (shared window offset).
    pub start: u32,
    /// Leading-dimension byte offset.
    pub lbo: u32,
    /// Stride-dimension byte offset.
    pub sbo: u32,
    /// Base offset (bits 49–51).
    pub base_offset: u32,
    /// Swizzle mode.
    pub swizzle: TmaSwizzle,
}

impl MatrixDesc {
    /// Decodes the 64-bit descriptor.
    pub fn decode(d: u64) -> MatrixDesc {
        let field = |lo: u32, bits: u32| ((d >> lo) & ((1 << bits) - 1)) as u32;
        MatrixDesc {
            start: field(0, 14) << 4,
            lbo: field(16, 14) << 4,
            sbo: field(32, 14) << 4,
            base_offset: field(49, 3),
            swizzle: match d >> 62 {
                0 => TmaSwizzle::None,
                1 => TmaSwizzle::B128,
                2 => TmaSwizzle::B64,
                _ => TmaSwizzle::B32,
            },
        }
    }

    /// The shared-memory bytes `[lo, hi)` a K = 16 slice of `rows` rows (M or N) can touch:
    /// whole swizzle rows (a swizzle permutes chunks within a row only), whole core matrices.
    pub fn extent(&self, rows: u32, mn_major: bool) -> (u32, u32) {
        let groups = rows.div_ceil(8).max(1);
        match (self.swizzle.span(), mn_major) {
            (None, _) => {
                let hi = self.start + (groups - 1) * self.sbo + self.lbo + 128;
                (self.start, hi.max(self.start + 128))
            }
            (Some(span), false) => {
                let lo = self.start & !(span - 1);
                (lo, lo + (groups - 1) * self.sbo + 8 * span)
            }
            (Some(span), true) => {
                let lo = self.start & !(span - 1);
                let atoms = rows.div_ceil(span / 2).max(1);
                (lo, lo + (atoms - 1) * self.lbo + self.sbo + 8 * span)
            }
        }
    }

    /// The shared-memory offset of element (`r`, `k`) of an MN-major 16-bit matrix (`r` along
    /// M or N, contiguous), swizzled: rows of the span hold consecutive MN elements of one
    /// `k`; 8 rows (k) form an atom, atoms SBO apart along K and LBO apart along MN. `None`
    /// without a swizzle (not supported yet).
    pub fn mn_major(&self, r: u32, k: u32) -> Option<u32> {
        let span = self.swizzle.span()?;
        let per_row = span / 2;
        let plain = self.start
            + (r / per_row) * self.lbo
            + (k / 8) * self.sbo
            + (k % 8) * span
            + (r % per_row) * 2;
        Some(self.swizzle.apply(plain))
    }

    /// The shared-memory offset of byte `kb` of row `r` of a K-major matrix (of any element
    /// width): core matrices of 8 rows × 16 bytes, LBO apart along K and SBO apart along the
    /// rows without a swizzle; rows of the span, 8-row groups SBO apart, swizzled, with one.
    pub fn k_major_byte(&self, r: u32, kb: u32) -> u32 {
        match self.swizzle.span() {
            None => self.start + (r / 8) * self.sbo + (kb / 16) * self.lbo + (r % 8) * 16 + kb % 16,
            Some(span) => self
                .swizzle
                .apply(self.start + (r / 8) * self.sbo + (r % 8) * span + kb),
        }
    }

    /// The shared-memory offset of element (`r`, `k`) of a K-major 16-bit matrix.
    pub fn k_major(&self, r: u32, k: u32) -> u32 {
        match self.swizzle.span() {
            None => {
                self.start + (r / 8) * self.sbo + (k / 8) * self.lbo + (r % 8) * 16 + (k % 8) * 2
            }
            Some(span) => self
                .swizzle
                .apply(self.start + (r / 8) * self.sbo + (r % 8) * span + 2 * k),
        }
    }
}

/// One warp's share of an issued `wgmma.mma_async`.
#[derive(Clone, Debug)]
pub(crate) struct PendingMma {
    line: u32,
    n: u32,
    /// K of the instruction (16, or 32 for FP8) and the operands' element types.
    k: u32,
    a_elem: Elem,
    b_elem: Elem,
    /// A's descriptor (the SS form), or `None` with `frag` set (the RS form).
    a: Option<MatrixDesc>,
    frag: Option<AFrag>,
    b: MatrixDesc,
    neg_a: bool,
    neg_b: bool,
    /// MN-major A / B (`imm-trans-a`, `imm-trans-b`).
    tnsp_a: bool,
    tnsp_b: bool,
    /// The D registers, in operand order.
    d: Vec<Reg>,
    /// Per lane of the warp (32 × d.len()): the accumulator inputs (zero when scale-d is false).
    acc: Vec<f32>,
    /// The accumulator is the result of an earlier MMA still in flight (a chain of MMAs into
    /// the same registers, which the ISA allows without a wait): read it when this retires.
    chained: bool,
    lanes: u32,
    /// The register clock at issue: a thread write of D after it races with the MMA.
    issued_at: u32,
}

/// The RS form's A operand: the four fragment registers and, per lane, their values at issue.
#[derive(Clone, Debug)]
struct AFrag {
    regs: [Reg; 4],
    /// Lane-major, 32 × 4.
    vals: Vec<u32>,
}

/// A warp's wgmma state: MMAs issued since the last commit, and committed groups in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct WarpMma {
    open: Vec<PendingMma>,
    groups: std::collections::VecDeque<Vec<PendingMma>>,
    /// Groups this warp has committed, and retired, since the start.
    committed: u64,
    retired: u64,
    /// The register clock (`Regs::now`) at the warp's last `wgmma.fence`, if any.
    fenced_at: Option<u32>,
}

impl PendingMma {
    /// The shared-memory ranges it reads (A, B) and its line.
    pub(crate) fn operands(&self) -> ([(u32, u32); 2], u32) {
        (
            [
                // The RS form reads no shared memory for A: an empty range.
                self.a.map_or((0, 0), |a| a.extent(64, self.tnsp_a)),
                self.b.extent(self.n, self.tnsp_b),
            ],
            self.line,
        )
    }
}

impl WarpMma {
    /// Every MMA issued and not retired.
    pub(crate) fn pending(&self) -> impl Iterator<Item = &PendingMma> {
        self.open.iter().chain(self.groups.iter().flatten())
    }

    /// The line of the pending MMA that owns register `r` (as D, or as an A fragment
    /// register), if any.
    pub(crate) fn owner(&self, r: Reg) -> Option<u32> {
        self.pending()
            .find(|p| p.d.contains(&r) || p.frag.as_ref().is_some_and(|f| f.regs.contains(&r)))
            .map(|p| p.line)
    }

    /// The line of the pending MMA that writes register `r` (one of its D), if any.
    fn owner_d(&self, r: Reg) -> Option<u32> {
        self.pending().find(|p| p.d.contains(&r)).map(|p| p.line)
    }

    /// The pending MMA that reads register `r` as an A fragment register, if any: its line
    /// and the value it took of `r` in lane `l`.
    fn reader_a(&self, r: Reg, l: u32) -> Option<(u32, u32)> {
        self.pending().find_map(|p| {
            let f = p.frag.as_ref()?;
            let q = f.regs.iter().position(|&x| x == r)?;
            Some((p.line, f.vals[l as usize * 4 + q]))
        })
    }
}

impl Machine<'_> {
    /// `wgmma.*` for the `active` lanes of warp `wi` (every live lane: `.aligned`).
    pub(crate) fn wgmma(
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
        let w = wi as usize;
        if let Some(r) = &mut self.rec {
            let now = self.stats.warp_instructions;
            match inst.op {
                Op::Wgmma { .. } => r.wgmma_issue(ci, wi, now),
                Op::WgmmaCommit => r.wgmma_commit(ci, wi, line),
                _ => {}
            }
        }
        match &inst.op {
            Op::WgmmaFence => cl.ctas[ci].mma[w].fenced_at = Some(cl.regs[ci].now),
            Op::WgmmaCommit => {
                let wm = &mut cl.ctas[ci].mma[w];
                let open = std::mem::take(&mut wm.open);
                wm.groups.push_back(open);
                wm.committed += 1;
            }
            Op::WgmmaWait { n } => {
                // A warpgroup's MMA is one operation: the groups this wait retires are the
                // whole warpgroup's, so every sibling warp must have committed them first.
                let target = cl.ctas[ci].mma[w].committed.saturating_sub(u64::from(*n));
                if warpgroup_behind(cl, ci, wi, target) != 0 {
                    for l in lanes(active) {
                        cl.ctas[ci].st[(base + l) as usize] =
                            TState::Wait(super::cta::Wait::Wgmma { target });
                    }
                    return Ok(());
                }
                for s in (wi / 4) * 4..(wi / 4) * 4 + 4 {
                    let Some(wm) = cl.ctas[ci].mma.get_mut(s as usize) else {
                        continue;
                    };
                    if let Some(r) = &mut self.rec {
                        let groups = target.saturating_sub(wm.retired);
                        r.wgmma_retire(ci, s, groups, self.stats.warp_instructions);
                    }
                    let mut todo = Vec::new();
                    while wm.retired < target {
                        todo.extend(wm.groups.pop_front().unwrap_or_default());
                        wm.retired += 1;
                    }
                    // RS fragments: checked before any retires (MMAs retiring together may
                    // share A registers), given back after all have.
                    for p in &todo {
                        if let Some(f) = &p.frag {
                            self.check_fragment(cl, ci, s, p.line, f)?;
                        }
                    }
                    for p in &todo {
                        self.retire(cl, ci, s, p)?;
                    }
                    for f in todo.iter().filter_map(|p| p.frag.as_ref()) {
                        release_fragment(cl, ci, s, f);
                    }
                }
            }
            Op::Wgmma {
                n,
                k,
                a_elem,
                b_elem,
                d,
                a,
                b,
                scale_d,
                neg_a,
                neg_b,
                tnsp_a,
                tnsp_b,
            } => {
                let first = base + active.trailing_zeros();
                self.check_wgmma_fence(cl, ci, wi, active, line, d, a)?;
                let ad = match a {
                    WgmmaA::Desc(v) => Some(MatrixDesc::decode(self.rd(cl, ci, first, *v, line)?)),
                    WgmmaA::Regs(_) => None,
                };
                let bd = MatrixDesc::decode(self.rd(cl, ci, first, *b, line)?);
                let frag = match a {
                    WgmmaA::Regs(regs) => Some(self.take_fragment(cl, ci, wi, active, line, regs)?),
                    WgmmaA::Desc(_) => None,
                };
                let unswizzled =
                    |d: Option<MatrixDesc>| d.is_some_and(|d| d.swizzle == TmaSwizzle::None);
                if (*tnsp_a && unswizzled(ad)) || (*tnsp_b && bd.swizzle == TmaSwizzle::None) {
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        "an MN-major operand without a swizzle is not supported yet".into(),
                    ));
                }
                if ad.is_some_and(|d| d.base_offset != 0) || bd.base_offset != 0 {
                    return Err(self.protocol(
                        cl,
                        ci,
                        first,
                        line,
                        "matrix descriptors with a base offset are not supported yet".into(),
                    ));
                }
                let mut acc = vec![0f32; 32 * d.len()];
                let chained = d.iter().any(|&r| cl.ctas[ci].mma[w].owner_d(r).is_some());
                for l in lanes(active) {
                    let t = base + l;
                    let accumulate = self.rd(cl, ci, t, *scale_d, line)? & 1 == 1;
                    for (j, &r) in d.iter().enumerate() {
                        if accumulate && !chained {
                            let v = self.rd(cl, ci, t, Val::Reg(r), line)?;
                            acc[l as usize * d.len() + j] = f32::from_bits(v as u32);
                        }
                        // The MMA owns the register until it retires.
                        let rf = &mut cl.regs[ci];
                        rf.w[t as usize * rf.n + r as usize] = false;
                    }
                }
                cl.ctas[ci].mma[w].open.push(PendingMma {
                    line,
                    n: *n,
                    k: *k,
                    a_elem: *a_elem,
                    b_elem: *b_elem,
                    a: ad,
                    frag,
                    b: bd,
                    neg_a: *neg_a,
                    neg_b: *neg_b,
                    tnsp_a: *tnsp_a,
                    tnsp_b: *tnsp_b,
                    d: d.clone(),
                    acc,
                    chained,
                    lanes: active,
                    issued_at: cl.regs[ci].now,
                });
            }
            _ => unreachable!("wgmma() of another op"),
        }
        for l in lanes(active) {
            cl.ctas[ci].pc[(base + l) as usize] = pc + 1;
            cl.ctas[ci].st[(base + l) as usize] = TState::Run;
        }
        Ok(())
    }

    /// Completes one warp's share of an MMA: reads A and B, writes D.
    fn retire(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        p: &PendingMma,
    ) -> Result<(), SimError> {
        self.check_fenced(cl, ci, wi * 32, p.operands(), "wgmma.mma_async")?;
        let smem = &cl.ctas[ci].smem;
        // Element (`r`, `k`) of an operand of type `e`: K-major rows of any width (the byte
        // offset `k·bytes` along the row), MN-major 16-bit only (decode refuses the rest).
        let elem = |desc: &MatrixDesc, mn_major: bool, e: Elem, r: u32, k: u32| -> Option<f64> {
            let off = if mn_major {
                desc.mn_major(r, k)? as usize
            } else {
                desc.k_major_byte(r, k * e.bytes()) as usize
            };
            let b = smem.get(off..off + e.bytes() as usize)?;
            let bits = b.iter().rev().fold(0u32, |v, &x| (v << 8) | u32::from(x));
            Some(e.value(bits))
        };
        let oob = |m: &Self, cl: &Cluster| {
            m.protocol(
                cl,
                ci,
                wi * 32,
                p.line,
                "a wgmma operand reaches outside shared memory".into(),
            )
        };
        let wr = wi % 4; // the warp's rank in its warpgroup
        let kk = p.k as usize;
        let mut a = [[0f64; 32]; 16];
        for (i, row) in a.iter_mut().enumerate() {
            for (k, v) in row.iter_mut().enumerate().take(kk) {
                let x = match (&p.a, &p.frag) {
                    (Some(desc), _) => elem(desc, p.tnsp_a, p.a_elem, 16 * wr + i as u32, k as u32)
                        .ok_or_else(|| oob(self, cl))?,
                    (None, Some(f)) => {
                        let (l, q, hi) = fragment_slot(i as u32, k as u32);
                        p.a_elem
                            .value((f.vals[(l * 4 + q) as usize] >> (16 * hi)) & 0xffff)
                    }
                    (None, None) => unreachable!("an MMA without A"),
                };
                *v = if p.neg_a { -x } else { x };
            }
        }
        let mut b = vec![[0f64; 32]; p.n as usize];
        for (nn, col) in b.iter_mut().enumerate() {
            for (k, v) in col.iter_mut().enumerate().take(kk) {
                let x = elem(&p.b, p.tnsp_b, p.b_elem, nn as u32, k as u32)
                    .ok_or_else(|| oob(self, cl))?;
                *v = if p.neg_b { -x } else { x };
            }
        }
        let nregs = p.d.len();
        for l in lanes(p.lanes) {
            let t = wi * 32 + l;
            for (j, &r) in p.d.iter().enumerate() {
                let rf = &cl.regs[ci];
                if rf.stamp[t as usize * rf.n + r as usize] > p.issued_at {
                    return Err(SimError::Race {
                        line: p.line,
                        thread: cl.ctas[ci].thread(t),
                        what: format!(
                            "wrote `{}`, an accumulator register of this wgmma.mma_async, while \
                             the MMA was in flight (before the wgmma.wait_group that retires it)",
                            self.prog.reg_names[r as usize]
                        ),
                    });
                }
                let (i, q) = (j as u32 / 4, j as u32 % 4);
                let row = (l / 4 + 8 * (q / 2)) as usize;
                let col = (8 * i + 2 * (l % 4) + q % 2) as usize;
                let dot: f64 = (0..kk).map(|k| a[row][k] * b[col][k]).sum();
                let acc = if p.chained {
                    let rf = &cl.regs[ci];
                    f32::from_bits(rf.v[t as usize * rf.n + r as usize] as u32)
                } else {
                    p.acc[l as usize * nregs + j]
                };
                let v = super::float::f64_to_f32(f64::from(acc) + dot, super::float::Rnd::Rn);
                // The MMA's write, not the thread's: no stamp (the fence rule exempts
                // accumulator accesses by MMAs of the same shape).
                let rf = &mut cl.regs[ci];
                rf.v[t as usize * rf.n + r as usize] = u64::from(v.to_bits());
                rf.w[t as usize * rf.n + r as usize] = true;
                if cl.ctas[ci].mma[wi as usize].owner_d(r).is_some() {
                    // A later MMA of the chain still owns it.
                    let rf = &mut cl.regs[ci];
                    rf.w[t as usize * rf.n + r as usize] = false;
                }
            }
        }
        Ok(())
    }
}

/// A retired RS MMA gives its A registers back to the threads of warp `wi`, unless another
/// pending MMA still reads them.
fn release_fragment(cl: &mut Cluster, ci: usize, wi: u32, f: &AFrag) {
    for &r in &f.regs {
        if cl.ctas[ci].mma[wi as usize].owner(r).is_some() {
            continue;
        }
        let rf = &mut cl.regs[ci];
        for l in 0..32 {
            rf.w[(wi * 32 + l) as usize * rf.n + r as usize] = true;
        }
    }
}

/// Where element (`i`, `k`) of a warp's 16 × 16 slice of A lies in the RS fragment: the
/// lane, the register (0..4) and the half (0 low, 1 high), §9.7.15.5.1.1.1.
pub(crate) fn fragment_slot(i: u32, k: u32) -> (u32, u32, u32) {
    let lane = 4 * (i % 8) + (k % 8) / 2;
    let q = (i / 8) + 2 * (k / 8);
    (lane, q, k % 2)
}

impl Machine<'_> {
    /// The RS form's A registers at issue, for the `active` lanes of warp `wi` (the whole
    /// warp: each lane holds part of its rows): their values, and the registers taken from
    /// the thread until the MMA retires. A register another pending MMA reads as A is shared
    /// (its value is the one that MMA took, unless the thread wrote it since: a race); one a
    /// pending MMA writes as D is the uninitialised-register diagnostic of `rd`.
    fn take_fragment(
        &self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        active: u32,
        line: u32,
        regs: &[Reg; 4],
    ) -> Result<AFrag, SimError> {
        let base = wi * 32;
        if active != u32::MAX {
            return Err(self.protocol(
                cl,
                ci,
                base + active.trailing_zeros(),
                line,
                format!(
                    "wgmma.mma_async with A from registers executed by lanes {active:#010x} of                      warp {wi}: every lane holds part of A"
                ),
            ));
        }
        let mut vals = vec![0u32; 32 * 4];
        for l in 0..32 {
            let t = base + l;
            for (q, &r) in regs.iter().enumerate() {
                let rf = &cl.regs[ci];
                let i = t as usize * rf.n + r as usize;
                let v = match cl.ctas[ci].mma[wi as usize].reader_a(r, l) {
                    Some((_, v)) if !rf.w[i] && rf.v[i] as u32 == v => v,
                    Some((at, _)) => return Err(self.fragment_race(cl, ci, t, r, at, line)),
                    None => self.rd(cl, ci, t, Val::Reg(r), line)? as u32,
                };
                vals[l as usize * 4 + q] = v;
            }
        }
        for l in 0..32 {
            let t = (base + l) as usize;
            let rf = &mut cl.regs[ci];
            for &r in regs {
                rf.w[t * rf.n + r as usize] = false;
            }
        }
        Ok(AFrag { regs: *regs, vals })
    }

    /// A retiring RS MMA's A registers: one the thread wrote while the MMA owned it (it is
    /// marked written again, or holds another value) is a race.
    fn check_fragment(
        &self,
        cl: &Cluster,
        ci: usize,
        wi: u32,
        line: u32,
        f: &AFrag,
    ) -> Result<(), SimError> {
        for l in 0..32 {
            let t = wi * 32 + l;
            for (q, &r) in f.regs.iter().enumerate() {
                let rf = &cl.regs[ci];
                let i = t as usize * rf.n + r as usize;
                if rf.w[i] || rf.v[i] as u32 != f.vals[l as usize * 4 + q] {
                    return Err(self.fragment_race(cl, ci, t, r, line, line));
                }
            }
        }
        Ok(())
    }

    /// The `wgmma.fence` rule (§9.7.15.7.1 `wgmma.fence`): the warpgroup's warps fence before
    /// their first `wgmma.mma_async`, and between a thread's access of a register and an MMA
    /// that accesses it as accumulator or A fragment. Checked for writes: a D register (and,
    /// with [`super::Policy::strict_wgmma_fence`], an A register) the thread wrote after its
    /// warp's last `wgmma.fence` (MMAs' own writes of D exempt).
    #[allow(clippy::too_many_arguments)]
    fn check_wgmma_fence(
        &self,
        cl: &Cluster,
        ci: usize,
        wi: u32,
        active: u32,
        line: u32,
        d: &[Reg],
        a: &WgmmaA,
    ) -> Result<(), SimError> {
        let first = wi * 32 + active.trailing_zeros();
        let Some(at) = cl.ctas[ci].mma[wi as usize].fenced_at else {
            return Err(self.protocol(
                cl,
                ci,
                first,
                line,
                format!("warp {wi} issues wgmma.mma_async without a wgmma.fence before it"),
            ));
        };
        let frag: &[Reg] = match a {
            WgmmaA::Regs(r) if self.policy.strict_wgmma_fence => r,
            _ => &[],
        };
        let rf = &cl.regs[ci];
        for l in lanes(active) {
            let t = wi * 32 + l;
            for &r in d.iter().chain(frag) {
                if rf.stamp[t as usize * rf.n + r as usize] > at {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!(
                            "wgmma.mma_async uses `{}`, which the thread wrote after its warp's \
                             last wgmma.fence (a wgmma.fence must separate the two)",
                            self.prog.reg_names[r as usize]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A write to register `r` of thread `t` while the RS MMA of line `at` reads it, found at
    /// `line`.
    fn fragment_race(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        r: Reg,
        at: u32,
        line: u32,
    ) -> SimError {
        SimError::Race {
            line,
            thread: cl.ctas[ci].thread(t),
            what: format!(
                "`{}`, an A register of the wgmma.mma_async of line {at}, was written while that                  MMA was in flight (before the wgmma.wait_group that retires it)",
                self.prog.reg_names[r as usize]
            ),
        }
    }

    /// An MMA about to read `ranges` of CTA `ci`'s shared memory: no byte of them may hold a
    /// generic-proxy write its writer has not fenced with `fence.proxy.async`.
    pub(crate) fn check_fenced(
        &self,
        cl: &Cluster,
        ci: usize,
        who: u32,
        (ranges, line): ([(u32, u32); 2], u32),
        reader: &'static str,
    ) -> Result<(), SimError> {
        for (lo, hi) in ranges {
            if let Some((addr, w, write_line)) = cl.ctas[ci].shadow.unfenced(lo, hi - lo) {
                return Err(SimError::UnfencedProxy {
                    line,
                    reader,
                    thread: cl.ctas[ci].thread(who),
                    addr,
                    writer: cl.ctas[ci].thread(w),
                    write_line,
                });
            }
        }
        Ok(())
    }
}

/// The warps of warp `wi`'s warpgroup (those with a live lane) that have not yet committed
/// `target` wgmma groups, as a mask of their index in the warpgroup.
pub(crate) fn warpgroup_behind(cl: &Cluster, ci: usize, wi: u32, target: u64) -> u32 {
    let cta = &cl.ctas[ci];
    let mut behind = 0;
    for (k, s) in ((wi / 4) * 4..(wi / 4) * 4 + 4).enumerate() {
        let live =
            (s * 32..(s * 32 + 32).min(cta.nthreads)).any(|t| cta.st[t as usize] != TState::Exit);
        if live
            && cta
                .mma
                .get(s as usize)
                .is_some_and(|m| m.committed < target)
        {
            behind |= 1 << k;
        }
    }
    behind
}
