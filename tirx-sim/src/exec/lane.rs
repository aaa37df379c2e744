//! One instruction for one lockstep group: guards (PTX ISA §9.3 "Predicated Execution"),
//! operand reads with the uninitialised-register check, special registers (§10), and the
//! per-lane instructions — arithmetic (through `alu.rs`), moves, conversions, loads and
//! stores (through `mem.rs`), branches. Synchronising and asynchronous instructions go to
//! `sync.rs`.

use super::alu;
use super::cta::{Cluster, TState, Wait};
use super::diag::{SimError, Space};
use super::machine::Machine;
use super::mem::{self, Loc};
use super::ops::{BoolOp, MemSpace, Op};
use super::program::{Addr, Collective, Inst, Reg, Sreg, Val};

/// The set lanes of `mask`, ascending.
pub(crate) fn lanes(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let l = mask.trailing_zeros();
        mask &= mask - 1;
        Some(l)
    })
}

impl Machine<'_> {
    /// The value of `v` in thread `t` of CTA `ci`.
    pub(crate) fn rd(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        v: Val,
        line: u32,
    ) -> Result<u64, SimError> {
        match v {
            Val::Reg(r) => {
                let rf = &cl.regs[ci];
                let i = t as usize * rf.n + r as usize;
                if !rf.w[i] {
                    return Err(self.uninit(cl, ci, t, r, line));
                }
                Ok(rf.v[i])
            }
            Val::Imm(x) => Ok(x),
            Val::Addr(_, a) => Ok(a),
            Val::Sreg(s) => Ok(self.sreg(cl, ci, t, s)),
        }
    }

    /// Writes register `r` of thread `t`.
    pub(crate) fn wr(cl: &mut Cluster, ci: usize, t: u32, r: Reg, v: u64) {
        let rf = &mut cl.regs[ci];
        let i = t as usize * rf.n + r as usize;
        rf.v[i] = v;
        rf.w[i] = true;
        rf.stamp[i] = rf.now;
    }

    fn sreg(&self, cl: &Cluster, ci: usize, t: u32, s: Sreg) -> u64 {
        let l = self.launch;
        let [bx, by, _] = l.block;
        let cta = &cl.ctas[ci];
        let v = match s {
            Sreg::Tid(0) => t % bx,
            Sreg::Tid(1) => (t / bx) % by,
            Sreg::Tid(_) => t / (bx * by),
            Sreg::Ntid(d) => l.block[d as usize],
            Sreg::Ctaid(d) => cta.ctaid[d as usize],
            Sreg::Nctaid(d) => l.grid[d as usize],
            Sreg::LaneId => t % 32,
            Sreg::WarpId => t / 32,
            Sreg::NWarpId => cta.nthreads.div_ceil(32),
            Sreg::ClusterCtaRank => ci as u32,
            Sreg::ClusterNctaRank => l.cluster.iter().product(),
            Sreg::ClusterCtaid(d) => cta.ctaid[d as usize] % l.cluster[d as usize],
            Sreg::ClusterNctaid(d) => l.cluster[d as usize],
            Sreg::ClusterId(d) => cl.id[d as usize],
            Sreg::NClusterId(d) => l.grid[d as usize] / l.cluster[d as usize],
            Sreg::LaneMaskLt => (1u32 << (t % 32)) - 1,
            Sreg::LaneMaskEq => 1u32 << (t % 32),
        };
        u64::from(v)
    }

    /// Whether a collective instruction at `pc` has every lane it needs in `group`; if not,
    /// the lanes present wait.
    pub(crate) fn collective_ready(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        group: u32,
        pc: u32,
    ) -> Result<bool, SimError> {
        let inst = &self.prog.insts[pc as usize];
        if inst.collective == Collective::No {
            return Ok(true);
        }
        let base = wi * 32;
        let cta = &cl.ctas[ci];
        let live = (0..32)
            .filter(|l| base + l < cta.nthreads && cta.st[(base + l) as usize] != TState::Exit)
            .fold(0u32, |m, l| m | (1 << l));
        let need =
            match inst.collective {
                Collective::No => return Ok(true),
                Collective::Warp => live,
                Collective::Mask(v) => {
                    let mut need = None;
                    for l in lanes(group) {
                        let m = self.rd(cl, ci, base + l, v, inst.line)? as u32;
                        if need.is_some_and(|n| n != m) {
                            return Err(self.protocol(cl, ci, base + l, inst.line, format!(
                            "lanes of one warp execute this warp-collective instruction with \
                             different member masks ({:#010x} and {m:#010x})",
                            need.unwrap_or(0)
                        )));
                        }
                        need = Some(m);
                    }
                    need.unwrap_or(0)
                }
            };
        let first = base + group.trailing_zeros();
        if need & !live != 0 {
            return Err(self.protocol(
                cl,
                ci,
                first,
                inst.line,
                format!(
                    "member mask {need:#010x} names lanes that have exited (live {live:#010x})"
                ),
            ));
        }
        if group & !need != 0 {
            return Err(self.protocol(
                cl,
                ci,
                first,
                inst.line,
                format!(
                    "lanes {:#010x} execute it but are not in its member mask {need:#010x}",
                    group & !need
                ),
            ));
        }
        if need & !group != 0 {
            for l in lanes(group) {
                cl.ctas[ci].st[(base + l) as usize] = TState::Wait(Wait::Converge { need });
            }
            return Ok(false);
        }
        Ok(true)
    }

    /// A protocol error of thread `t`.
    pub(crate) fn protocol(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        what: String,
    ) -> SimError {
        SimError::Protocol {
            line,
            thread: cl.ctas[ci].thread(t),
            what,
        }
    }

    /// Executes the instruction at `pc` for the lanes `group` of warp `wi`.
    pub(crate) fn exec_group(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        group: u32,
        pc: u32,
    ) -> Result<(), SimError> {
        let prog = self.prog;
        let inst = &prog.insts[pc as usize];
        // Saturating: past 2³² groups of one CTA the write-order checks go quiet, never wrong.
        cl.regs[ci].now = cl.regs[ci].now.saturating_add(1);
        let mut active = 0u32;
        for l in lanes(group) {
            let t = wi * 32 + l;
            let on = match inst.guard {
                None => true,
                Some((r, neg)) => (self.rd(cl, ci, t, Val::Reg(r), inst.line)? & 1 == 1) ^ neg,
            };
            if on {
                active |= 1 << l;
            } else {
                cl.ctas[ci].pc[t as usize] = pc + 1;
                cl.ctas[ci].st[t as usize] = TState::Run;
            }
        }
        self.stats.thread_instructions += u64::from(active.count_ones());
        if active == 0 {
            return Ok(());
        }
        if matches!(
            inst.op,
            Op::Shfl { .. }
                | Op::Vote { .. }
                | Op::Redux { .. }
                | Op::Elect { .. }
                | Op::ActiveMask { .. }
                | Op::Setmaxnreg { .. }
        ) {
            return self.collective(cl, ci, wi, active, pc, inst);
        }
        if matches!(inst.op, Op::LdMatrix { .. } | Op::StMatrix { .. }) {
            return self.matrix(cl, ci, wi, active, pc, inst);
        }
        if matches!(inst.op, Op::Atom { .. } | Op::RedVec { .. }) {
            return self.atom_group(cl, ci, wi, active, pc, inst);
        }
        if matches!(
            inst.op,
            Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } | Op::Wgmma { .. }
        ) {
            return self.wgmma(cl, ci, wi, active, pc, inst);
        }
        if matches!(
            inst.op,
            Op::TcAlloc { .. }
                | Op::TcDealloc { .. }
                | Op::TcRelinquish
                | Op::TcLd { .. }
                | Op::TcWaitLd
                | Op::TcSt { .. }
                | Op::TcWaitSt
        ) {
            return self.tcgen05_warp(cl, ci, wi, active, pc, inst);
        }
        for l in lanes(active) {
            self.exec_lane(cl, ci, wi * 32 + l, pc, inst)?;
        }
        Ok(())
    }

    fn exec_lane(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        let line = inst.line;
        macro_rules! rd {
            ($v:expr) => {
                self.rd(cl, ci, t, $v, line)?
            };
        }
        match &inst.op {
            Op::Mov { d, a, bits } => {
                let v = alu::mask(rd!(*a), *bits);
                Self::wr(cl, ci, t, *d, v);
                if let (128, Val::Reg(r)) = (*bits, a) {
                    // The high slot of a `.b128` copy.
                    let hi = rd!(Val::Reg(r + 1));
                    Self::wr(cl, ci, t, *d + 1, hi);
                }
            }
            Op::Pack { d, parts, bits: 64 } => {
                // Two 64-bit halves into the two slots of a `.b128` register.
                for (i, p) in parts.iter().enumerate() {
                    let v = rd!(*p);
                    Self::wr(cl, ci, t, *d + i as u32, v);
                }
            }
            Op::Pack { d, parts, bits } => {
                let mut v = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    v |= alu::mask(rd!(*p), *bits) << (i as u32 * bits);
                }
                Self::wr(cl, ci, t, *d, v);
            }
            Op::Unpack {
                ds,
                a: Val::Reg(r),
                bits: 64,
            } => {
                // The slots of a `.b128` register (or the one slot of a `.b64`).
                for (i, d) in ds.iter().enumerate() {
                    let v = rd!(Val::Reg(r + i as u32));
                    if let Some(d) = d {
                        Self::wr(cl, ci, t, *d, v);
                    }
                }
            }
            Op::Unpack { ds, a, bits } => {
                let v = rd!(*a);
                for (i, d) in ds.iter().enumerate() {
                    if let Some(d) = d {
                        Self::wr(cl, ci, t, *d, alu::mask(v >> (i as u32 * bits), *bits));
                    }
                }
            }
            Op::Int { op, ty, d, a, b, c } => {
                let (a, b) = (rd!(*a), rd!(*b));
                let c = match c {
                    Some(c) => rd!(*c),
                    None => 0,
                };
                Self::wr(cl, ci, t, *d, alu::int_bin(*op, *ty, a, b, c).0);
            }
            Op::IntUn { op, ty, d, a } => {
                let v = alu::int_un(*op, *ty, rd!(*a));
                Self::wr(cl, ci, t, *d, v);
            }
            Op::Float {
                op,
                ty,
                ftz,
                sat,
                rnd,
                d,
                a,
                b,
                c,
            } => {
                let unary = !matches!(
                    op,
                    super::ops::FOp::Add
                        | super::ops::FOp::Sub
                        | super::ops::FOp::Mul
                        | super::ops::FOp::Fma
                        | super::ops::FOp::Div
                        | super::ops::FOp::Min
                        | super::ops::FOp::Max
                        | super::ops::FOp::MinNaN
                        | super::ops::FOp::MaxNaN
                );
                let a = rd!(*a);
                let b = if unary { 0 } else { rd!(*b) };
                let c = if *op == super::ops::FOp::Fma {
                    rd!(*c)
                } else {
                    0
                };
                let v = if *rnd == super::float::Rnd::Rn {
                    alu::float_op(*op, *ty, *ftz, *sat, a, b, c)
                } else {
                    alu::float_op_directed(*op, *ty, *ftz, *sat, *rnd, a, b)
                };
                Self::wr(cl, ci, t, *d, v);
            }
            Op::Setp {
                cmp,
                ty,
                ftz,
                p,
                q,
                a,
                b,
                combine,
            } => {
                let (va, vb) = (rd!(*a), rd!(*b));
                let r = alu::compare(*cmp, *ty, *ftz, va, vb);
                if let Some(c) = &inst.check
                    && let crate::ptx::Check::Gather { tensor, dim } = &**c
                    && !r
                {
                    return Err(SimError::DataIndex {
                        line,
                        thread: cl.ctas[ci].thread(t),
                        what: "gather",
                        tensor: tensor.clone(),
                        dim: *dim,
                        index: i64::from(va as u32 as i32),
                        extent: vb & 0xffff_ffff,
                    });
                }
                let (mut pv, mut qv) = (r, !r);
                if let Some((op, c, neg)) = combine {
                    let c = (rd!(*c) & 1 == 1) ^ neg;
                    let f = |x: bool| match op {
                        BoolOp::And => x && c,
                        BoolOp::Or => x || c,
                        BoolOp::Xor => x ^ c,
                    };
                    (pv, qv) = (f(r), f(!r));
                }
                if let Some(p) = p {
                    Self::wr(cl, ci, t, *p, u64::from(pv));
                }
                if let Some(q) = q {
                    Self::wr(cl, ci, t, *q, u64::from(qv));
                }
            }
            Op::Selp {
                bits,
                d,
                a,
                b,
                c,
                c_neg,
            } => {
                let c = (rd!(*c) & 1 == 1) ^ c_neg;
                let v = if c { rd!(*a) } else { rd!(*b) };
                Self::wr(cl, ci, t, *d, alu::mask(v, *bits));
            }
            Op::Cvt {
                dty,
                sty,
                mode,
                d,
                a,
            } => {
                let v = alu::cvt(*dty, *sty, *mode, rd!(*a));
                Self::wr(cl, ci, t, *d, v);
            }
            Op::CvtPack { dty, mode, d, a, b } => {
                let v = alu::cvt_pack(*dty, *mode, rd!(*a), rd!(*b));
                Self::wr(cl, ci, t, *d, v);
            }
            Op::Cvta {
                to_generic,
                space,
                d,
                a,
            } => {
                let a = rd!(*a);
                let v = if *to_generic {
                    mem::to_generic(*space, a)
                } else {
                    mem::from_generic(*space, a)
                };
                Self::wr(cl, ci, t, *d, v);
            }
            Op::Mapa { d, a, rank } => {
                let (a, rank) = (rd!(*a), rd!(*rank) as u32);
                if rank as usize >= cl.ctas.len() {
                    return Err(self.protocol(
                        cl,
                        ci,
                        t,
                        line,
                        format!("mapa to CTA rank {rank} of a cluster of {}", cl.ctas.len()),
                    ));
                }
                Self::wr(cl, ci, t, *d, mem::mapa(a, rank));
            }
            Op::Ld {
                space,
                bits,
                ds,
                addr,
            } => self.load(cl, ci, t, line, *space, *bits, ds, addr)?,
            Op::St {
                space,
                bits,
                vals,
                addr,
            } => self.store(cl, ci, t, line, *space, *bits, vals, addr)?,
            Op::Bra { target } => {
                cl.ctas[ci].pc[t as usize] = *target;
                cl.ctas[ci].st[t as usize] = TState::Run;
                return Ok(());
            }
            Op::Exit => return self.exit_thread(cl, ci, t),
            Op::Nop => {}
            Op::TcFenceAfter => {
                let c = &mut cl.ctas[ci];
                c.tc.fenced[t as usize] = c.tc.log.len() as u32;
            }
            Op::FenceProxyAsync => cl.ctas[ci].shadow.fence(t),
            Op::TcMma {
                kind,
                d,
                a,
                b,
                idesc,
                enable,
                pair,
                scale,
            } => self.tcgen05_mma(
                cl,
                ci,
                t,
                inst,
                (*kind, d, a, *b, *idesc, *enable),
                (*pair, scale.as_ref()),
            )?,
            Op::TcCp {
                taddr,
                desc,
                shape,
                pair,
            } => self.tcgen05_cp(cl, ci, t, inst, (taddr, *desc, *shape), *pair)?,
            Op::TcShift { taddr, pair } => self.tcgen05_shift(cl, ci, t, inst, (taddr, *pair))?,
            _ => return self.sync_lane(cl, ci, t, pc, inst),
        }
        cl.ctas[ci].pc[t as usize] = pc + 1;
        cl.ctas[ci].st[t as usize] = TState::Run;
        Ok(())
    }

    /// The address an [`Addr`] operand names.
    pub(crate) fn ea(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        a: &Addr,
        line: u32,
    ) -> Result<u64, SimError> {
        let base = match a.base {
            Some(v) => self.rd(cl, ci, t, v, line)?,
            None => 0,
        };
        Ok(base.wrapping_add(a.offset as u64))
    }

    /// Resolves and bounds-checks an access of `size` bytes, aligned to its size; returns
    /// the location.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn locate(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        space: MemSpace,
        addr: u64,
        size: u32,
    ) -> Result<Loc, SimError> {
        self.locate_aligned(cl, ci, t, line, space, addr, size, size)
    }

    /// [`Machine::locate`] with an alignment other than the size (bulk copies).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn locate_aligned(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        space: MemSpace,
        addr: u64,
        size: u32,
        align: u32,
    ) -> Result<Loc, SimError> {
        let thread = cl.ctas[ci].thread(t);
        let oob = |space, addr, detail: &str| SimError::OutOfBounds {
            line,
            thread,
            space,
            addr,
            size,
            detail: detail.to_owned(),
        };
        let loc = mem::resolve(space, addr, ci as u32).map_err(|(s, a)| oob(s, a, ""))?;
        match loc {
            Loc::Global(g) => {
                mem::check_align(line, thread, Space::Global, g, align)?;
                if self.dev.slice(g, size as usize).is_none() {
                    return Err(self.dev.oob(line, thread, g, size));
                }
            }
            Loc::Shared { cta, off } => {
                mem::check_align(line, thread, Space::Shared, u64::from(off), align)?;
                let Some(c) = cl.ctas.get(cta as usize) else {
                    return Err(oob(
                        Space::Shared,
                        addr,
                        "; no CTA of that rank in the cluster",
                    ));
                };
                if mem::smem_range(c.smem.len(), off, size).is_none() {
                    let d = format!(
                        "; the shared window is [{:#x}, {:#x})",
                        mem::SMEM_BASE,
                        c.smem.len()
                    );
                    return Err(oob(Space::Shared, u64::from(off), &d));
                }
            }
            Loc::Param(off) => {
                mem::check_align(line, thread, Space::Param, u64::from(off), align)?;
                if (off as usize).saturating_add(size as usize) > self.params.bytes.len() {
                    return Err(oob(Space::Param, u64::from(off), "; past the parameters"));
                }
            }
        }
        Ok(loc)
    }

    #[allow(clippy::too_many_arguments)]
    fn load(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        line: u32,
        space: MemSpace,
        bits: u32,
        ds: &[Option<Reg>],
        addr: &Addr,
    ) -> Result<(), SimError> {
        let eb = bits / 8;
        let size = eb * ds.len() as u32;
        let a = self.ea(cl, ci, t, addr, line)?;
        let loc = self.locate(cl, ci, t, line, space, a, size)?;
        let mut buf = [0u8; 64];
        let n = size as usize;
        match loc {
            Loc::Global(g) => buf[..n].copy_from_slice(self.dev.slice(g, n).unwrap_or(&[])),
            Loc::Shared { cta, off } => {
                self.check_race(cl, ci, t, line, cta, off, size, false)?;
                let s = &cl.ctas[cta as usize].smem;
                buf[..n].copy_from_slice(&s[off as usize..off as usize + n]);
            }
            Loc::Param(off) => {
                buf[..n].copy_from_slice(&self.params.bytes[off as usize..off as usize + n])
            }
        }
        for (i, d) in ds.iter().enumerate() {
            if let Some(d) = d {
                let k = i * eb as usize;
                if bits == 128 {
                    // The two slots of a `.b128` register.
                    Self::wr(cl, ci, t, *d, mem::le_read(&buf[k..k + 8]));
                    Self::wr(cl, ci, t, *d + 1, mem::le_read(&buf[k + 8..k + 16]));
                } else {
                    Self::wr(cl, ci, t, *d, mem::le_read(&buf[k..k + eb as usize]));
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        line: u32,
        space: MemSpace,
        bits: u32,
        vals: &[Val],
        addr: &Addr,
    ) -> Result<(), SimError> {
        let eb = bits / 8;
        let size = eb * vals.len() as u32;
        let a = self.ea(cl, ci, t, addr, line)?;
        let loc = self.locate(cl, ci, t, line, space, a, size)?;
        let mut buf = [0u8; 64];
        for (i, v) in vals.iter().enumerate() {
            let k = i * eb as usize;
            if let (128, Val::Reg(r)) = (bits, v) {
                mem::le_write(&mut buf[k..k + 8], self.rd(cl, ci, t, *v, line)?);
                let hi = self.rd(cl, ci, t, Val::Reg(r + 1), line)?;
                mem::le_write(&mut buf[k + 8..k + 16], hi);
            } else {
                mem::le_write(&mut buf[k..k + eb as usize], self.rd(cl, ci, t, *v, line)?);
            }
        }
        let n = size as usize;
        match loc {
            Loc::Global(g) => {
                let plain = super::global_race::Access::Plain;
                self.global_write(cl, ci, t, line, g, size, plain)?;
                if let Some(out) = self.dev.slice_mut(g, n) {
                    out.copy_from_slice(&buf[..n]);
                }
            }
            Loc::Shared { cta, off } => {
                self.check_race(cl, ci, t, line, cta, off, size, true)?;
                let c = &mut cl.ctas[cta as usize];
                c.smem[off as usize..off as usize + n].copy_from_slice(&buf[..n]);
                if cta as usize == ci {
                    c.shadow.write(c.smem.len(), c.nthreads, off, size, t, line);
                }
            }
            Loc::Param(_) => {
                return Err(self.protocol(
                    cl,
                    ci,
                    t,
                    line,
                    "a store to kernel parameters".to_owned(),
                ));
            }
        }
        Ok(())
    }

    /// A generic shared-memory access that touches bytes an in-flight TMA copy owns.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_race(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        cta: u32,
        off: u32,
        size: u32,
        write: bool,
    ) -> Result<(), SimError> {
        if write && let Some(at) = super::shadow::mma_reading(cl, cta as usize, off, size) {
            return Err(SimError::Race {
                line,
                thread: cl.ctas[ci].thread(t),
                what: format!(
                    "writes shared+{off:#x}, which the MMA issued at line {at} still reads (a \
                     missing wait for the MMA)"
                ),
            });
        }
        if cl.ops.is_empty() {
            return Ok(());
        }
        let maps = &self.params.maps;
        let hit = super::shadow::conflict(&cl.ops, cta, off, size, write, |op| {
            op.map().map_or(0, |i| maps[i].1.box_bytes())
        });
        let Some((op, how)) = hit else {
            return Ok(());
        };
        let what = match how {
            super::shadow::Conflict::Load => format!(
                "{} shared+{off:#x} while the TMA load issued at line {} is still writing it \
                 (a missing wait on its mbarrier)",
                if write { "writes" } else { "reads" },
                op.line
            ),
            super::shadow::Conflict::Response => format!(
                "{} shared+{off:#x} while the clusterlaunchcontrol.try_cancel issued at line {} \
                 is still writing its response there (a missing wait on its mbarrier)",
                if write { "writes" } else { "reads" },
                op.line
            ),
            super::shadow::Conflict::StAsync => format!(
                "{} shared+{off:#x} while the st.async issued at line {} by CTA rank {} is \
                 still writing it (a missing wait on its mbarrier)",
                if write { "writes" } else { "reads" },
                op.line,
                op.cta
            ),
            super::shadow::Conflict::Store => format!(
                "writes shared+{off:#x} while the TMA store issued at line {} is still reading \
                 it (a missing cp.async.bulk.wait_group.read)",
                op.line
            ),
        };
        Err(SimError::Race {
            line,
            thread: cl.ctas[ci].thread(t),
            what,
        })
    }
}
