//! Atomic read-modify-write operations on global and shared memory: `atom` (PTX ISA §9.7.13.5,
//! returns the old value) and `red` (§9.7.13.6, no result).
//!
//! `.add` on `.u32/.s32/.u64/.f32/.f64`, `.min/.max` on `.u32/.s32/.u64/.s64`, `.inc/.dec` on
//! `.u32`, `.and/.or/.xor/.exch` on `.b32/.b64`, `.cas` on `.b32/.b64` (`atom` only). The
//! arithmetic is the ISA's: `.inc` gives `old >= b ? 0 : old + 1`, `.dec` gives
//! `old == 0 || old > b ? b : old − 1`, `.cas` stores `c` when `old == b`; `atom.add.f32`
//! rounds to nearest even and flushes subnormal inputs and results to sign-preserving zero,
//! `.f64` keeps subnormals.
//!
//! `.add.noftz` on `.f16/.bf16` and the packed `.f16x2/.bf16x2` (one add per half) rounds to
//! nearest even and keeps subnormals ([`half_apply`]).
//!
//! `red` with a vector type (`.v2/.v4.f32` add, `.v2/.v4/.v8` of 16-bit floats and
//! `.v2/.v4` of their pairs: §9.7.13.6, sm_90) applies each element as its own atomic at
//! consecutive addresses, each judged by the global-race shadow as an atomic.
//!
//! The memory-ordering qualifiers (`.relaxed/.acquire/.release/.acq_rel`, scopes) change
//! nothing in this sequentially consistent machine. The lanes of one warp-instruction are
//! atomic one at a time, in an order drawn from the scheduler's seed (the ISA orders them in
//! no particular way), so a kernel that relies on lane order shows it under some seed.

use super::alu::{float_op, mask};
use super::cta::{Cluster, TState};
use super::diag::SimError;
use super::lane::lanes;
use super::machine::Machine;
use super::mem::Loc;
use super::ops::{FOp, MemSpace, Op};
use super::program::{Addr, Inst, Reg, Val};
use crate::ptx::Type;

/// The operation of an `atom`/`red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

/// The new value of a location holding `old` (of `ty`, `w` bits), for operand(s) `b`, `c`.
pub(crate) fn apply(op: AtomOp, ty: Type, old: u64, b: u64, c: u64) -> u64 {
    let w = super::decode::bits(ty);
    let signed = matches!(ty, Type::S32 | Type::S64);
    let sx = |x: u64| ((x << (64 - w)) as i64) >> (64 - w);
    let r = match op {
        _ if matches!(ty, Type::F16 | Type::Bf16 | Type::F16x2 | Type::Bf16x2) => {
            return half_apply(op, ty, old, b);
        }
        AtomOp::Add if ty == Type::F32 || ty == Type::F64 => {
            float_op(FOp::Add, ty, ty == Type::F32, false, old, b, 0)
        }
        AtomOp::Add => old.wrapping_add(b),
        AtomOp::Min if signed => sx(old).min(sx(b)) as u64,
        AtomOp::Max if signed => sx(old).max(sx(b)) as u64,
        AtomOp::Min => mask(old, w).min(mask(b, w)),
        AtomOp::Max => mask(old, w).max(mask(b, w)),
        AtomOp::Inc => {
            if mask(old, w) >= mask(b, w) {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dec => {
            if mask(old, w) == 0 || mask(old, w) > mask(b, w) {
                b
            } else {
                old - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if mask(old, w) == mask(b, w) {
                c
            } else {
                old
            }
        }
    };
    mask(r, w)
}

/// `.add.noftz` (and the TMA reduce's `.min`/`.max`) on 16-bit floats, one or two per word
/// (`.x2`: low and high halves apart): the exact result rounded to nearest even, subnormals
/// kept (`.noftz`); `min`/`max` of a NaN and a number give the number.
pub(crate) fn half_apply(op: AtomOp, ty: Type, old: u64, b: u64) -> u64 {
    use super::float::{BF16, F16, Rnd, decode, round_to};
    let fmt = if matches!(ty, Type::Bf16 | Type::Bf16x2) {
        BF16
    } else {
        F16
    };
    let one = |x: u64, y: u64| -> u64 {
        let (a, c) = (decode(x & 0xffff, fmt), decode(y & 0xffff, fmt));
        match op {
            // Two 16-bit values' sum is exact in f64, so one rounding is the ISA's.
            AtomOp::Add => round_to(a + c, fmt, Rnd::Rn),
            AtomOp::Min if a.is_nan() || c < a => y & 0xffff,
            AtomOp::Max if a.is_nan() || c > a => y & 0xffff,
            AtomOp::Min | AtomOp::Max => x & 0xffff,
            _ => unreachable!("decode refuses other operations on 16-bit floats"),
        }
    };
    if matches!(ty, Type::F16x2 | Type::Bf16x2) {
        one(old, b) | (one(old >> 16, b >> 16) << 16)
    } else {
        one(old, b)
    }
}

impl Machine<'_> {
    /// `atom`/`red` for the `active` lanes of warp `wi`, one lane at a time in a seeded order.
    pub(crate) fn atom_group(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        wi: u32,
        active: u32,
        pc: u32,
        inst: &Inst,
    ) -> Result<(), SimError> {
        if let Op::RedVec {
            op,
            ty,
            scope,
            addr,
            vals,
        } = &inst.op
        {
            let order: Vec<u32> = lanes(active).collect();
            let perm = self.lane_order(order.len());
            for k in perm {
                let t = wi * 32 + order[k];
                let a = self.ea(cl, ci, t, addr, inst.line)?;
                let size = u64::from(super::decode::bits(*ty) / 8);
                // The vector is aligned to its whole size (§9.7.13.6, as a vector ld/st).
                let total = (size * vals.len() as u64) as u32;
                self.locate(cl, ci, t, inst.line, MemSpace::Global, a, total)?;
                // Element by element, each its own atomic (§9.7.13.6: a vector `red` is
                // performed as scalar operations on its elements, in no particular order).
                for (e, v) in vals.iter().enumerate() {
                    let bv = self.rd(cl, ci, t, *v, inst.line)?;
                    let at = a + e as u64 * size;
                    let what = (*op, *ty, MemSpace::Global, *scope, None);
                    self.atom_at(cl, ci, t, inst.line, what, at, (bv, 0))?;
                }
                cl.ctas[ci].pc[t as usize] = pc + 1;
                cl.ctas[ci].st[t as usize] = TState::Run;
            }
            return Ok(());
        }
        let Op::Atom {
            op,
            ty,
            space,
            scope,
            d,
            addr,
            b,
            c,
        } = &inst.op
        else {
            unreachable!("atom_group() of another op")
        };
        let order: Vec<u32> = lanes(active).collect();
        let perm = self.lane_order(order.len());
        for k in perm {
            let t = wi * 32 + order[k];
            self.atom_lane(
                cl,
                ci,
                t,
                inst.line,
                (*op, *ty, *space, *scope, *d, addr, *b, *c),
            )?;
            cl.ctas[ci].pc[t as usize] = pc + 1;
            cl.ctas[ci].st[t as usize] = TState::Run;
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn atom_lane(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        line: u32,
        (op, ty, space, scope, d, addr, b, c): (
            AtomOp,
            Type,
            MemSpace,
            super::global_race::AtomScope,
            Option<Reg>,
            &Addr,
            Val,
            Option<Val>,
        ),
    ) -> Result<(), SimError> {
        let a = self.ea(cl, ci, t, addr, line)?;
        let bv = self.rd(cl, ci, t, b, line)?;
        let cv = match c {
            Some(c) => self.rd(cl, ci, t, c, line)?,
            None => 0,
        };
        self.atom_at(cl, ci, t, line, (op, ty, space, scope, d), a, (bv, cv))
    }

    /// One atomic read-modify-write of a `ty` at address `a` with operands `(b, c)`, the old
    /// value written to `d` where given.
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn atom_at(
        &mut self,
        cl: &mut Cluster,
        ci: usize,
        t: u32,
        line: u32,
        (op, ty, space, scope, d): (
            AtomOp,
            Type,
            MemSpace,
            super::global_race::AtomScope,
            Option<Reg>,
        ),
        a: u64,
        (bv, cv): (u64, u64),
    ) -> Result<(), SimError> {
        let size = super::decode::bits(ty) / 8;
        let loc = self.locate(cl, ci, t, line, space, a, size)?;
        let n = size as usize;
        let old = match loc {
            Loc::Global(g) => super::mem::le_read(self.dev.slice(g, n).unwrap_or(&[0; 8][..n])),
            Loc::Shared { cta, off } => {
                self.check_race(cl, ci, t, line, cta, off, size, true)?;
                let s = &cl.ctas[cta as usize].smem;
                super::mem::le_read(&s[off as usize..off as usize + n])
            }
            Loc::Param(_) => {
                return Err(self.protocol(
                    cl,
                    ci,
                    t,
                    line,
                    "an atomic on kernel parameters".into(),
                ));
            }
        };
        let new = apply(op, ty, old, bv, cv);
        match loc {
            Loc::Global(g) => {
                let access = super::global_race::Access::Atomic(scope);
                self.global_write(cl, ci, t, line, g, size, access)?;
                if let Some(out) = self.dev.slice_mut(g, n) {
                    super::mem::le_write(out, new);
                }
            }
            Loc::Shared { cta, off } => {
                let cta_ = &mut cl.ctas[cta as usize];
                super::mem::le_write(&mut cta_.smem[off as usize..off as usize + n], new);
                if cta as usize == ci {
                    cta_.shadow
                        .write(cta_.smem.len(), cta_.nthreads, off, size, t, line);
                }
            }
            Loc::Param(_) => unreachable!("refused above"),
        }
        if let Some(d) = d {
            Self::wr(cl, ci, t, d, old);
        }
        Ok(())
    }
}
