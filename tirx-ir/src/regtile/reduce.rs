//! `reduce @dst <- @src KIND axis A`: a row (A = 1) or column (A = 0) statistic of a register
//! tile, left replicated in every thread that holds part of that row or column.
//!
//! Three stages, each derived from the layout (`RegLayout::reduce_bits`):
//! 1. in each thread, over its registers of one row (`max.f32` / `min.f32` / `add.f32`; on
//!    integer values `max.s32` / `min.s32` / `add.s32` (wrapping) or `.u32`, the statistic
//!    of their type); for `argmax`/`argmin`, each value becomes an ordered integer key (see
//!    `key`) and the thread keeps the first index of the greatest key (see
//!    `arg_in_thread`), and the later stages move (key, index) pairs (see `Combine`);
//! 2. across the lanes that share the row: one `shfl.sync.bfly.b32` + combine per lane bit
//!    of the thread index whose mode moves along the axis (PTX ISA §9.7.9.6: the butterfly
//!    leaves every lane with the combined value, so no broadcast follows);
//! 3. across the warps that share the row (thread-index bits ≥ 5): lane-representatives
//!    store their warp's value to shared scratch, `bar.sync 0`, and every thread reads the
//!    values of all warps of its row — constant offsets from one address, since the warp bits
//!    along the axis are disjoint from the others — and combines them in warp order (so every
//!    thread gets the bit-identical result). In a loop a second `bar.sync` follows the reads,
//!    so the next iteration's stores cannot overtake them.
//!
//! 4. with `across = cluster`, across the CTAs of the cluster through distributed shared
//!    memory (`cluster.rs`: pushed with `st.async` by default, pulled after a cluster barrier
//!    with `across = cluster_pull`); an index statistic first counts the row as the CTAs'
//!    tiles in rank order.
//!
//! Shape: `scratch` (and the pull form's `cluster_scratch`) hold `threads · registers` 4-byte
//! slots, twice that for (key, index) pairs and for 64-bit integer statistics, whose
//! registers take 8-byte slots and cross lanes as two 32-bit shuffles (`plan-reg-tiles` sizes
//! both; the push form's receive area is in `cluster.rs`).

use super::{RegTileError, compute, frag, layout, owner_thread};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BinOp, Buffer, CmpOp, Expr, Inst, Op, Operand, ReduceKind, ScalarType as T, TExpr, Var,
};
use crate::lower::Lower;

mod cluster;

/// The operands of one `reduce`.
pub struct Reduce<'a> {
    /// Statistic.
    pub dst: Handle<Buffer>,
    /// Tile (the layout carrier when `value` is given).
    pub src: Handle<Buffer>,
    /// The values, when they are an expression over `src`'s layout.
    pub value: Option<&'a TExpr>,
    /// Max or sum.
    pub kind: ReduceKind,
    /// Axis.
    pub axis: usize,
    /// Cross-warp scratch.
    pub scratch: Option<Handle<Buffer>>,
    /// In a loop: synchronise after reading the scratch.
    pub again: bool,
    /// The exchange across the cluster (`across = cluster`).
    pub cluster_scratch: Option<Handle<Buffer>>,
    /// The push form's receive barriers (`None`: the pull form).
    pub cluster_bar: Option<Handle<crate::ir::Barrier>>,
}

/// How the registers of a statistic combine with a partner's: one register per value and
/// a binary op, or (key, index) pairs for `argmax`/`argmin`.
#[derive(Clone, Copy)]
enum Combine<'a> {
    /// `op d, d, part` on one register of PTX type `ty` (`max.f32`, `add.s32`, …).
    Op { op: &'a str, ty: &'a str, rt: T },
    /// A (key, index) pair, the key compared as `ty` (`s32` or `u32`): the partner wins when
    /// its key is greater, or equal with a lower index — so ties go to the lowest index.
    Arg { ty: &'a str, rt: T },
}

impl Combine<'_> {
    /// Bytes of one register's slot in the shared-memory exchanges: 8 for a 64-bit integer
    /// statistic, else 4.
    fn word(&self) -> u32 {
        match *self {
            Combine::Op {
                rt: T::S64 | T::U64,
                ..
            } => 8,
            _ => 4,
        }
    }

    /// The registers of one group and their (PTX type, register type).
    fn members(&self) -> Vec<(&str, T)> {
        match *self {
            Combine::Op { ty, rt, .. } => vec![(ty, rt)],
            Combine::Arg { ty, rt } => vec![(ty, rt), ("u32", T::U32)],
        }
    }

    /// Combines the group `acc` with the partner group `part` into `acc`.
    fn apply(&self, lw: &mut Lower, acc: &[Handle<Var>], part: &[Handle<Var>]) {
        match *self {
            Combine::Op { op, .. } => {
                lw.inst(Inst::binary(op, acc[0], reg(acc[0]), reg(part[0])));
            }
            // §9.7.5.1 setp, §9.7.6.1 and/or (on predicates), §9.7.5.2 selp.
            Combine::Arg { ty, .. } => {
                let (k, i, pk, pi) = (acc[0], acc[1], part[0], part[1]);
                let [wins, tie, lower] = [
                    lw.var("win", T::Pred),
                    lw.var("tie", T::Pred),
                    lw.var("low", T::Pred),
                ];
                lw.inst(Inst::setp("gt", ty, wins, reg(pk), reg(k)));
                lw.inst(Inst::setp("eq", ty, tie, reg(pk), reg(k)));
                lw.inst(Inst::setp("lt", "u32", lower, reg(pi), reg(i)));
                lw.inst(Inst::binary("and.pred", tie, reg(tie), reg(lower)));
                lw.inst(Inst::binary("or.pred", wins, reg(wins), reg(tie)));
                lw.inst(Inst::selp(ty, k, reg(pk), reg(k), wins));
                lw.inst(Inst::selp("u32", i, reg(pi), reg(i), wins));
            }
        }
    }
}

/// Lowers one `reduce`.
pub fn lower(lw: &mut Lower, r: &Reduce<'_>) -> Result<(), Diagnostics> {
    let ls = layout(lw.k, r.src).map_err(|e| lw.error(e))?;
    let ld = layout(lw.k, r.dst).map_err(|e| lw.error(e))?;
    let want = ls
        .reduce(r.axis)
        .map_err(|e| lw.error(RegTileError::from(e)))?;
    if want != ld {
        return Err(lw.error(RegTileError::ReduceLayout {
            dst: lw.k.buffers[r.dst].name.clone(),
            src: lw.k.buffers[r.src].name.clone(),
            axis: r.axis as u8,
        }));
    }
    // The values' type: f32 (16-bit floats widen), or their integer type.
    let vt = match r.value {
        Some(v) => super::ttype(lw.k, v).map_err(|e| lw.error(e))?,
        None => super::tile_ttype(lw.k.buffers[r.src].elem),
    };
    if super::is_int64(vt) && r.kind.is_arg() {
        // TODO(#30): 64-bit keys for argmax/argmin.
        return Err(lw.error(RegTileError::Type {
            op: r.kind.name(),
            want: "floats or 32-bit integers (no 64-bit keys yet: cast the values to f32 or i32)",
            got: vt.name(),
        }));
    }
    let (ty, rt) = match vt {
        crate::ir::TType::I64 => ("s64", T::S64),
        crate::ir::TType::U64 => ("u64", T::U64),
        crate::ir::TType::I32 => ("s32", T::S32),
        crate::ir::TType::U32 => ("u32", T::U32),
        _ => ("f32", T::F32),
    };
    let op = match r.kind {
        ReduceKind::Max => format!("max.{ty}"),
        ReduceKind::Sum => format!("add.{ty}"),
        ReduceKind::Min => format!("min.{ty}"),
        ReduceKind::ArgMax | ReduceKind::ArgMin => String::new(),
    };
    // 1. Within the thread.
    let (c, dv) = if r.kind.is_arg() {
        // Float keys are `s32` (see `key`).
        let (kty, krt) = if rt == T::U32 {
            ("u32", T::U32)
        } else {
            ("s32", T::S32)
        };
        let dv = arg_in_thread(lw, r, &ls, rt, krt)?;
        (Combine::Arg { ty: kty, rt: krt }, dv)
    } else {
        let c = Combine::Op { op: &op, ty, rt };
        (c, fold_in_thread(lw, r, &ls, c)?)
    };
    // 2. Across lanes.
    let w = c.members().len();
    let bits = ls.reduce_bits(r.axis);
    for &b in bits.iter().filter(|&&b| b < 5) {
        for g in dv.chunks(w) {
            let part: Vec<Handle<Var>> = g
                .iter()
                .zip(c.members())
                .map(|(&d, (_, rt))| shfl_bfly(lw, d, rt, 1 << b))
                .collect();
            c.apply(lw, g, &part);
        }
    }
    // 3. Across warps.
    let warp_bits: Vec<u32> = bits.iter().filter(|&&b| b >= 5).map(|b| b - 5).collect();
    if !warp_bits.is_empty() {
        across_warps(lw, r, &ls, &dv, c, &bits, &warp_bits)?;
    }
    // 4. Across the CTAs of the cluster.
    if let Some(cs) = r.cluster_scratch {
        if r.kind.is_arg() {
            cluster::rank_offset(lw, r, &dv);
        }
        let x = cluster::Exchange {
            dv: &dv,
            c,
            bits: &bits,
            cs,
        };
        match r.cluster_bar {
            Some(bar) => cluster::push(lw, r, &ls, &x, bar)?,
            None => cluster::pull_form(lw, r, &ls, &x)?,
        }
    }
    Ok(())
}

/// `shfl.sync.bfly.b32` of `d` to the lane `lanemask` away (§9.7.9.6); a 64-bit register as
/// its two halves (`mov.b64 {lo, hi}`, two shuffles, `mov.b64` back).
fn shfl_bfly(lw: &mut Lower, d: Handle<Var>, rt: T, lanemask: u32) -> Handle<Var> {
    let t = lw.var("shfl", rt);
    if !matches!(rt, T::S64 | T::U64) {
        lw.inst(Inst::shfl_bfly(t, d, lanemask));
        return t;
    }
    let [lo, hi, plo, phi] = ["lo", "hi", "shfl_lo", "shfl_hi"].map(|n| lw.var(n, T::U32));
    lw.inst(Inst::unpack_b64(lo, hi, d));
    lw.inst(Inst::shfl_bfly(plo, lo, lanemask));
    lw.inst(Inst::shfl_bfly(phi, hi, lanemask));
    lw.inst(Inst::pack_b64(t, plo, phi));
    t
}

/// The values to reduce: the tile's registers, or the expression evaluated per element as it
/// is combined (never stored).
type Values = Option<(compute::P, Option<[Handle<Var>; 2]>)>;

fn values(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
) -> Result<Values, Diagnostics> {
    Ok(match r.value {
        Some(e) => {
            let p = compute::prepare(lw, r.src, ls, e)?;
            let org = compute::uses_index(&p).then(|| super::origin(lw, ls));
            Some((p, org))
        }
        None => None,
    })
}

/// How one element's value is read.
struct Reader<'a> {
    /// The expression, when the values are one.
    expr: &'a Values,
    /// The tile's registers (one per element).
    sv: &'a [Handle<Var>],
    /// The tile's 16-bit float type, read widened to f32 (`bf16`, `f16`).
    half: Option<&'static str>,
    /// The values' PTX and register type.
    ty: &'a str,
    rt: T,
}

impl Reader<'_> {
    /// Element `i`'s value in a register of type `rt`.
    fn read(
        &self,
        lw: &mut Lower,
        ls: &crate::ir::RegLayout,
        memo: &mut compute::Memo,
        i: usize,
    ) -> Handle<Var> {
        if let Some((p, org)) = self.expr {
            let (o, t) = compute::eval(lw, ls, *org, p, i as u32, memo);
            match o {
                _ if self.rt == T::F32 => compute::f32_reg(lw, (o, t)),
                Operand::Reg(v) => v,
                o => {
                    let v = lw.var("v", self.rt);
                    lw.inst(Inst::mov(self.ty, v, o));
                    v
                }
            }
        } else if let Some(h) = self.half {
            let w = lw.var("w", T::F32);
            lw.inst(Inst::cvt_f32_from(h, w, self.sv[i]));
            w
        } else {
            self.sv[i]
        }
    }
}

/// Stage 1 of a max, min or sum: each statistic register folds its elements, returned as
/// the statistic's registers.
fn fold_in_thread(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    c: Combine<'_>,
) -> Result<Vec<Handle<Var>>, Diagnostics> {
    let Combine::Op { op, ty, rt } = c else {
        return Err(lw.internal("a fold of (key, index) pairs"));
    };
    let (sv, dv) = (super::frag_values(lw, r.src)?, frag(lw, r.dst)?);
    let half = lw.k.buffers[r.src].elem;
    let expr = values(lw, r, ls)?;
    let rd = Reader {
        expr: &expr,
        sv: &sv,
        half: (half.bytes() == 2).then(|| half.name()),
        ty,
        rt,
    };
    const CHAINS: usize = 4;
    let mut acc: Vec<[Option<Handle<Var>>; CHAINS]> = vec![[None; CHAINS]; dv.len()];
    let mut seen = vec![0usize; dv.len()];
    let mut memo = compute::Memo::default();
    for i in 0..sv.len() {
        let v = rd.read(lw, ls, &mut memo, i);
        // Each statistic register folds its elements into CHAINS independent partial
        // results, combined as a tree below: the dependent chain is n/CHAINS + log2(CHAINS)
        // operations long instead of n, for the same instruction count.
        let j = ls.broadcast_index(r.axis, i as u32) as usize;
        let c = seen[j] % CHAINS;
        seen[j] += 1;
        acc[j][c] = Some(match acc[j][c] {
            None => v,
            Some(a) => {
                let d = lw.var("red", rt);
                lw.inst(Inst::binary(op, d, reg(a), reg(v)));
                d
            }
        });
    }
    for (d, chains) in dv.iter().zip(&acc) {
        let mut level: Vec<Handle<Var>> = chains.iter().flatten().copied().collect();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|p| match p {
                    [a, b] => {
                        let d = lw.var("red", rt);
                        lw.inst(Inst::binary(op, d, reg(*a), reg(*b)));
                        d
                    }
                    [a] => *a,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        let a = level
            .first()
            .copied()
            .ok_or_else(|| lw.internal("a statistic register no element reduces into"))?;
        lw.inst(Inst::mov(ty, *d, reg(a)));
    }
    Ok(dv)
}

/// Stage 1 of an `argmax`/`argmin`: each statistic register scans its elements in increasing
/// index along the axis, keeping the first with the greatest key (a strict `>` keeps the
/// lower index on a tie), then adds the thread's origin to the index. Returns the exchanged
/// registers as (key, index) pairs, the indices the statistic's own registers.
fn arg_in_thread(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    rt: T,
    krt: T,
) -> Result<Vec<Handle<Var>>, Diagnostics> {
    let (sv, dv) = (super::frag_values(lw, r.src)?, frag(lw, r.dst)?);
    let half = lw.k.buffers[r.src].elem;
    let expr = values(lw, r, ls)?;
    let rd = Reader {
        expr: &expr,
        sv: &sv,
        half: (half.bytes() == 2).then(|| half.name()),
        ty: rt.name(),
        rt,
    };
    let kty = krt.name();
    let mut order: Vec<usize> = (0..sv.len()).collect();
    order.sort_by_key(|&i| ls.value_coord(i as u32)[r.axis]);
    let mut keys: Vec<Option<Handle<Var>>> = vec![None; dv.len()];
    let mut memo = compute::Memo::default();
    for i in order {
        let v = rd.read(lw, ls, &mut memo, i);
        let kv = key(lw, v, rt, r.kind == ReduceKind::ArgMin);
        let j = ls.broadcast_index(r.axis, i as u32) as usize;
        let at = Operand::Imm(i64::from(ls.value_coord(i as u32)[r.axis]));
        match keys[j] {
            None => {
                let k = lw.var("key", krt);
                lw.inst(Inst::mov(kty, k, reg(kv)));
                lw.inst(Inst::mov("u32", dv[j], at));
                keys[j] = Some(k);
            }
            Some(k) => {
                let p = lw.var("win", T::Pred);
                lw.inst(Inst::setp("gt", kty, p, reg(kv), reg(k)));
                lw.inst(Inst::selp(kty, k, reg(kv), reg(k), p));
                lw.inst(Inst::selp("u32", dv[j], at, reg(dv[j]), p));
            }
        }
    }
    let org = super::origin(lw, ls)[r.axis];
    let mut out = Vec::with_capacity(2 * dv.len());
    for (k, &d) in keys.into_iter().zip(&dv) {
        let k = k.ok_or_else(|| lw.internal("a statistic register no element reduces into"))?;
        lw.inst(Inst::binary("add.u32", d, reg(d), reg(org)));
        out.extend([k, d]);
    }
    Ok(out)
}

/// The key an index statistic compares: greater for the element to pick (`min`: the
/// smaller value). Integers: the value, or its complement for `argmin` (`not.b32` reverses
/// both the signed and the unsigned order). Floats, as `s32` bits ordered like the values:
/// `add.f32 x, 0` (`sub.f32 0, x` for `argmin`) makes −0 into +0 (so they tie, as they
/// compare equal) and every NaN the canonical NaN `0x7fffffff` (§9.7.3: NaN results are
/// canonical), then `b ^ ((b >> 31) & 0x7fffffff)` flips the magnitude bits of negative
/// values: the canonical NaN is the greatest key, so a NaN wins over every number in both
/// `argmax` and `argmin`, as in torch.
fn key(lw: &mut Lower, v: Handle<Var>, rt: T, min: bool) -> Handle<Var> {
    match rt {
        T::F32 => {
            let x = lw.var("x", T::F32);
            let zero = Operand::F32Bits(0);
            lw.inst(if min {
                Inst::binary("sub.f32", x, zero, reg(v))
            } else {
                Inst::binary("add.f32", x, reg(v), zero)
            });
            let (b, s, k) = (
                lw.var("b", T::S32),
                lw.var("s", T::S32),
                lw.var("k", T::S32),
            );
            lw.inst(Inst::mov("b32", b, reg(x)));
            lw.inst(Inst::binary("shr.s32", s, reg(b), Operand::Imm(31)));
            lw.inst(Inst::binary(
                "and.b32",
                s,
                reg(s),
                Operand::Imm(0x7fff_ffff),
            ));
            lw.inst(Inst::binary("xor.b32", k, reg(b), reg(s)));
            k
        }
        _ if min => {
            let k = lw.var("k", rt);
            lw.inst(Inst::unary("not.b32", k, reg(v)));
            k
        }
        _ => v,
    }
}

/// The store both exchanges begin with: the statistic registers `dv` of each group of threads
/// that agree on the thread-index bits outside `mask` go to that group's `dv.len()` slots from
/// `base`, written by the group's first thread (those bits all 0). Returns the group's slot.
fn publish(
    lw: &mut Lower,
    t: Handle<Var>,
    base: Expr,
    mask: u32,
    dv: &[Handle<Var>],
    c: Combine<'_>,
    [slot_name, writer_name]: [&str; 2],
) -> Handle<Var> {
    let (nv, wb) = (dv.len() as u32, c.word());
    let key = Expr::bin(BinOp::And, Expr::Var(t), Expr::u32(!mask));
    let slot = lw.let_(
        slot_name,
        T::U32,
        crate::lower::add(base, crate::lower::mul(key, Expr::u32(wb * nv))),
    );
    let first = Expr::bin(BinOp::And, Expr::Var(t), Expr::u32(mask));
    let writer = lw.let_(
        writer_name,
        T::Pred,
        Expr::cmp(CmpOp::Eq, first, Expr::u32(0)),
    );
    let members = c.members();
    for (j, &d) in dv.iter().enumerate() {
        let ty = members[j % members.len()].0;
        let off = i64::from(wb) * j as i64;
        lw.inst(Inst::st_shared(ty, slot, off, reg(d)).guarded(writer, false));
    }
    slot
}

/// Stage 3: the warps that share a row, through `r.scratch` and `bar.sync`.
fn across_warps(
    lw: &mut Lower,
    r: &Reduce<'_>,
    ls: &crate::ir::RegLayout,
    dv: &[Handle<Var>],
    c: Combine<'_>,
    bits: &[u32],
    warp_bits: &[u32],
) -> Result<(), Diagnostics> {
    let scratch = r
        .scratch
        .ok_or_else(|| lw.internal("cross-warp reduction without scratch"))?;
    let lane_mask: u32 = bits.iter().filter(|&&b| b < 5).map(|b| 1u32 << b).sum();
    let warp_mask: u32 = warp_bits.iter().map(|b| 1u32 << b).sum();
    let (nv, wb) = (dv.len() as u32, c.word());
    let t = owner_thread(lw, ls);
    let base = lw.smem_addr(scratch, &[])?;
    // Slot of (warp with the axis bits cleared, lane with the axis bits cleared).
    let own = Expr::bin(
        BinOp::And,
        Expr::Var(t),
        Expr::u32(!(lane_mask | (warp_mask << 5))),
    );
    let slot = lw.let_(
        "slot",
        T::U32,
        crate::lower::add(base.clone(), crate::lower::mul(own, Expr::u32(wb * nv))),
    );
    publish(lw, t, base, lane_mask, dv, c, ["wslot", "writer"]);
    lw.op(Op::SyncThreads);
    for k in 0..(1u32 << warp_bits.len()) {
        let dep: u32 = warp_bits
            .iter()
            .enumerate()
            .filter(|(i, _)| k >> i & 1 == 1)
            .map(|(_, b)| 1u32 << b)
            .sum();
        let load = |lw: &mut Lower, ty: &str, d, j: usize| {
            let off = (dep * 32 * nv + j as u32) as i64 * i64::from(wb);
            lw.inst(Inst::ld_shared_vec(ty, &[d], slot, off));
        };
        pull(lw, c, dv, k == 0, "part", load);
    }
    if r.again {
        lw.op(Op::SyncThreads);
    }
    Ok(())
}

/// Reads one partner's statistic (`load(ty, register, slot index)`) group by group: the
/// first partner straight into `dv`, every later one into fresh registers combined into it.
fn pull(
    lw: &mut Lower,
    c: Combine<'_>,
    dv: &[Handle<Var>],
    first: bool,
    name: &str,
    load: impl Fn(&mut Lower, &str, Handle<Var>, usize),
) {
    let members = c.members();
    for (g, acc) in dv.chunks(members.len()).enumerate() {
        let mut part = Vec::with_capacity(acc.len());
        for (m, (&d, &(ty, rt))) in acc.iter().zip(&members).enumerate() {
            let j = g * members.len() + m;
            if first {
                load(lw, ty, d, j);
            } else {
                let v = lw.var(name, rt);
                load(lw, ty, v, j);
                part.push(v);
            }
        }
        if !first {
            c.apply(lw, acc, &part);
        }
    }
}
