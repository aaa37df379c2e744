//! Atomic reductions of a register tile into a tile of a global tensor (the `reg_atomic` copy
//! variant): the addressing and the masked edges of [`access`](super::access), with each
//! store replaced by a `red` (PTX ISA §9.7.13.6) or, when the old values are asked for, an
//! `atom` (§9.7.13.5).
//!
//! Per element for integers (`red.relaxed.gpu.global.add.s32`, `.u32`, `.u64` — also for
//! `i64`, PTX having no `.add.s64`; `.min`, `.max` as `.s32`/`.u32`/`.s64`/`.u64`).
//! f32 adds go as one vector `red` per run of 2 or 4 adjacent columns a thread holds
//! (`red.relaxed.gpu.global.add.v4.f32 [a], {…}`: the vector forms of §9.7.13.6, PTX ISA 8.1,
//! sm_90, each element its own atomic), per element at the masked edges and with old values
//! (`atom` has no vector form for these). 16-bit floats go in pairs where the layout gives a
//! thread two adjacent columns 4-byte aligned (`red….add.noftz.bf16x2` on a word packed by
//! `mov.b32`, the lower column in the low half), runs of 4 or 8 as one vector of pairs
//! (`red….add.noftz.v2.bf16x2`, `.v4`), singly at the edges (`.add.noftz.bf16`). An f32 tile
//! reduced into a 16-bit tensor is rounded to it first (to nearest even), then added with the
//! rounding of the 16-bit add; `.noftz` keeps subnormals.
//!
//! A layout that holds an element in several threads (a `stat` tile: a column sum in every
//! thread of its column) reduces it once, from the first replica.
//!
//! Old values (`atom`): the `old` tile, of the source's layout and the tensor's element type,
//! receives each element's value before the update; elements outside the tensor read as 0.
//!
//! Invariants: the caller (`dispatch/copy/reg_atomic.rs`) checked the operation against the
//! type (min/max on integers only), the old tile's layout and type, and the semantics
//! (`acquire`/`acq_rel` only with old values).

use super::access::{self, Access, Chunk};
use super::frag;
use crate::abi::ElemType;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    Atomic, AtomicOp, BinOp, Buffer, CmpOp, Expr, Inst, Operand, ScalarType as T, StmtKind,
    TileRef, Var,
};
use crate::lower::Lower;

/// The PTX type of one element of `elem` in an atomic `op`, or of a pair (`x2`). A 64-bit
/// add is `.u64` for `i64` too (§9.7.13.6 has no `.add.s64`; two's-complement addition is
/// the same bits); `min`/`max` compare as `.s64` or `.u64`.
fn ptx_type(op: AtomicOp, elem: ElemType, pair: bool) -> &'static str {
    match (elem, pair) {
        (ElemType::F32, _) => "f32",
        (ElemType::I32, _) => "s32",
        (ElemType::U32, _) => "u32",
        (ElemType::I64, _) if op != AtomicOp::Add => "s64",
        (ElemType::I64 | ElemType::U64, _) => "u64",
        (ElemType::Bf16, false) => "noftz.bf16",
        (ElemType::Bf16, true) => "noftz.bf16x2",
        (ElemType::F16, false) => "noftz.f16",
        (ElemType::F16, true) => "noftz.f16x2",
        _ => unreachable!("refused by reg_atomic's predicate"),
    }
}

/// What every instruction of one atomic copy shares.
struct Plan<'a> {
    a: &'a Atomic,
    vals: Vec<Handle<Var>>,
    old: Option<Vec<Handle<Var>>>,
}

impl Plan<'_> {
    /// `sem.scope.global.op.type` (the ISA's order: `red{.sem}{.scope}{.global}.op.type`).
    fn qual(&self, elem: ElemType, pair: bool) -> String {
        format!(
            "{}.{}.global.{}.{}",
            self.a.sem,
            self.a.scope,
            self.a.op,
            ptx_type(self.a.op, elem, pair)
        )
    }

    /// One element `e` of chunk `c`, guarded by `p` where given.
    fn element(&self, acc: &Access, lw: &mut Lower, c: &Chunk, e: u32, p: Option<Handle<Var>>) {
        let (addr, _) = acc.row(c.dr);
        let off = ((c.dc + e) * acc.elem.bytes()) as i64;
        let i = (c.reg0 + e) as usize;
        let q = self.qual(acc.elem, false);
        let i_ = match &self.old {
            Some(old) => Inst::atom_global(&q, old[i], addr, off, reg(self.vals[i])),
            None => Inst::red_global(&q, addr, off, reg(self.vals[i])),
        };
        lw.inst(guard(i_, p));
    }

    /// `sem.scope.global.op[.noftz].vN.type` of a vector `red` of `n` values (f32, or pairs
    /// of 16-bit floats).
    fn vec_qual(&self, elem: ElemType, n: u32) -> String {
        let ty = match elem {
            ElemType::F32 => format!("v{n}.f32"),
            e => format!("noftz.v{n}.{}x2", e.name()),
        };
        format!("{}.{}.global.{}.{ty}", self.a.sem, self.a.scope, self.a.op)
    }

    /// Chunk `c` whole, guarded by `p` where given: a vector `red` where the thread's run
    /// has two or more f32 values or 32-bit pairs of 16-bit floats (`red.add.v4.f32`,
    /// `red.add.noftz.v4.bf16x2`: §9.7.13.6, sm_90; the chunk is aligned to its size as a
    /// vector store's is); with old values, pairs of 16-bit floats, else elements.
    fn chunk(&self, acc: &Access, lw: &mut Lower, c: &Chunk, p: Option<Handle<Var>>) {
        let half = matches!(acc.elem, ElemType::Bf16 | ElemType::F16);
        let (addr, _) = acc.row(c.dr);
        let red_f32 = acc.elem == ElemType::F32 && self.a.op == crate::ir::AtomicOp::Add;
        if self.old.is_none() && red_f32 && acc.w >= 2 {
            let off = (c.dc * 4) as i64;
            let regs = &self.vals[c.reg0 as usize..(c.reg0 + acc.w) as usize];
            let q = self.vec_qual(acc.elem, acc.w);
            lw.inst(guard(Inst::red_global_vec(&q, addr, off, regs), p));
            return;
        }
        if !half || acc.w == 1 {
            for e in 0..acc.w {
                self.element(acc, lw, c, e, p);
            }
            return;
        }
        if self.old.is_none() && acc.w >= 4 {
            let words: Vec<Handle<Var>> = (0..acc.w / 2)
                .map(|k| {
                    let i = (c.reg0 + 2 * k) as usize;
                    let wd = lw.var("red", T::U32);
                    lw.inst(Inst::pack_b32(wd, self.vals[i], self.vals[i + 1]));
                    wd
                })
                .collect();
            let q = self.vec_qual(acc.elem, acc.w / 2);
            let off = (c.dc * 2) as i64;
            lw.inst(guard(Inst::red_global_vec(&q, addr, off, &words), p));
            return;
        }
        let q = self.qual(acc.elem, true);
        for k in 0..acc.w / 2 {
            let i = (c.reg0 + 2 * k) as usize;
            let off = ((c.dc + 2 * k) * 2) as i64;
            let wd = lw.var("red", T::U32);
            lw.inst(Inst::pack_b32(wd, self.vals[i], self.vals[i + 1]));
            match &self.old {
                Some(old) => {
                    let got = lw.var("old", T::U32);
                    lw.inst(guard(Inst::atom_global(&q, got, addr, off, reg(wd)), p));
                    lw.inst(guard(Inst::unpack_b32(old[i], old[i + 1], got), p));
                }
                None => lw.inst(guard(Inst::red_global(&q, addr, off, reg(wd)), p)),
            }
        }
    }
}

fn guard(i: Inst, p: Option<Handle<Var>>) -> Inst {
    match p {
        Some(p) => i.guarded(p, false),
        None => i,
    }
}

/// `atomic::<op>(tensor.tile(r, c), tile[, old = o])`.
pub fn reduce(
    lw: &mut Lower,
    buf: Handle<Buffer>,
    tensor: &str,
    coords: &[Expr],
    a: &Atomic,
) -> Result<(), Diagnostics> {
    let (acc, paths) = access::prepare(lw, buf, tensor, coords, None)?;
    // Each value in the tensor's type, one register each (an f32 tile rounded to 16 bits
    // element by element: pairs are packed by `mov`, not rounded by `cvt…x2`).
    let vals = access::store_values(lw, &acc.frag, acc.tile_elem, acc.elem, 1);
    let old = match &a.old {
        Some(TileRef::Buf { buf: o, .. }) => {
            let regs = frag(lw, *o)?;
            let (ty, zero) = match acc.elem {
                ElemType::F32 => ("f32", Operand::F32Bits(0)),
                ElemType::Bf16 | ElemType::F16 => ("b16", Operand::Imm(0)),
                e if e.is_int64() => ("b64", Operand::Imm(0)),
                _ => ("b32", Operand::Imm(0)),
            };
            for &r in &regs {
                lw.inst(Inst::mov(ty, r, zero.clone()));
            }
            Some(regs)
        }
        Some(TileRef::Global { .. }) => {
            return Err(lw.internal("the old values of an atomic go to a register tile"));
        }
        None => None,
    };
    let plan = Plan { a, vals, old };
    let leader = leader(lw, buf)?;
    let outer = std::mem::take(&mut lw.out);
    acc.paths(
        lw,
        &paths,
        |acc, lw, c, p| plan.chunk(acc, lw, c, p),
        |acc, lw, c, e, p| plan.element(acc, lw, c, e, Some(p)),
    );
    let body = std::mem::replace(&mut lw.out, outer);
    match leader {
        Some(l) => lw.emit(StmtKind::If {
            cond: Expr::Var(l),
            then_body: body,
            else_body: Vec::new(),
        }),
        None => lw.out.extend(body),
    }
    Ok(())
}

/// For a layout that replicates elements over threads (thread modes of stride 0: a row or
/// column statistic held by every thread of its row), the predicate "this thread is the
/// first replica": a store writes the same value many times, an atomic add must not. `None`
/// when nothing is replicated.
fn leader(lw: &mut Lower, buf: Handle<Buffer>) -> Result<Option<Handle<Var>>, Diagnostics> {
    let l = super::layout(lw.k, buf).map_err(|e| lw.error(e))?;
    if !l.threads.iter().any(|m| m.stride == [0, 0] && m.size > 1) {
        return Ok(None);
    }
    let t = super::owner_thread(lw, &l);
    let mut below = 1u32;
    let mut cond: Option<Expr> = None;
    for m in &l.threads {
        if m.stride == [0, 0] && m.size > 1 {
            let digit = Expr::bin(
                BinOp::Rem,
                Expr::bin(BinOp::Div, Expr::Var(t), Expr::u32(below)),
                Expr::u32(m.size),
            );
            let first = Expr::cmp(CmpOp::Eq, digit, Expr::u32(0));
            cond = Some(match cond {
                Some(c) => Expr::AndP(Box::new(c), Box::new(first)),
                None => first,
            });
        }
        below *= m.size;
    }
    Ok(cond.map(|c| lw.let_("replica0", T::Pred, c)))
}
