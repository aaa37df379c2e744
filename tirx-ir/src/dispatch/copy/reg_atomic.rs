//! `reg_atomic` — a register tile reduced into a tile of a global tensor, element by element,
//! atomically: `red` (PTX ISA §9.7.13.6), or `atom` (§9.7.13.5) when the old values are
//! asked for.
//!
//! When: `atomic::add(y.tile(r, c), t, scope = gpu)` (also `atomic::min`/`max`, `sem = …`,
//! `old = o`), `t` a register tile of any layout run by its owners; `y` f32, bf16, f16, i32 or
//! u32; `min`/`max` on integers only (PTX has no `red.min.f32`, and its 16-bit min/max are
//! vector forms); `sem` `relaxed` or `release` for `red`, any of `relaxed`, `acquire`,
//! `release`, `acq_rel` with old values; the old tile of `t`'s layout and `y`'s type. Only
//! forced by its word: a plain `copy` never becomes an atomic.
//! Before: `copy global y[%r, %c] <- @t atomic add gpu relaxed variant reg_atomic`
//! After: the addressing and masked edges of `reg_store` (`regtile::access`), each store
//! replaced by `red.relaxed.gpu.global.add.f32 [addr], v` (16-bit floats in pairs,
//! `red.relaxed.gpu.global.add.noftz.bf16x2`, single at the edges) or `atom…` into the old
//! tile's registers (`regtile::atomic`).
//! PTX used: §9.7.13.5 atom, §9.7.13.6 red (sm_90 for `.bf16`/`.bf16x2` add; `.sem` and
//! `.scope` as in §8.4/§8.5), §9.7.9.1 mov (packing pairs).

use crate::abi::ElemType;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{Atomic, AtomicOp, MemSem, Op, Space, TileRef};
use crate::lower::Lower;
use crate::regtile::{atomic, layout};

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::RegAtomic,
    priority: 5,
    applies,
    lower,
};

fn reject(why: impl Into<String>) -> Reject {
    Reject::Atomic { why: why.into() }
}

/// Which operations an element type takes (`red`/`atom` on global memory, sm_90).
pub fn op_fits(op: AtomicOp, elem: ElemType) -> Result<(), String> {
    let ok = match op {
        AtomicOp::Add => {
            matches!(
                elem,
                ElemType::F32 | ElemType::Bf16 | ElemType::F16 | ElemType::I32 | ElemType::U32
            ) || elem.is_int64()
        }
        AtomicOp::Min | AtomicOp::Max => elem.is_int(),
    };
    if ok {
        return Ok(());
    }
    Err(match op {
        AtomicOp::Add => format!(
            "`atomic::add` adds into f32, bf16, f16, i32, u32, i64 or u64 tensors; this one is {}",
            elem.name()
        ),
        _ => format!(
            "`atomic::{op}` is on integers (i32, u32, i64, u64): PTX has no scalar `red.{op}` on floats ({} here); reduce bf16 or f16 by TMA (`tma::reduce_{op}`), or keep the extreme in registers",
            elem.name()
        ),
    })
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    let Op::Copy {
        dst,
        src,
        atomic: Some(a),
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp {
            expected: "an atomic copy",
        });
    };
    super::reg_copy(cx, true)?;
    let TileRef::Global { tensor, .. } = dst else {
        return Err(Reject::NotGlobal {
            side: "destination",
        });
    };
    let elem =
        cx.k.sig
            .tensors
            .iter()
            .find(|t| &t.name == tensor)
            .map(|t| t.elem)
            .ok_or(Reject::UnknownTensor {
                tensor: tensor.clone(),
            })?;
    op_fits(a.op, elem).map_err(reject)?;
    // The values convert into the tensor's type as a store's would (an f32 tile rounds to a
    // 16-bit tensor); an integer tile takes a tensor of its own type only.
    if let TileRef::Buf { buf, .. } = src {
        crate::regtile::access::check_types(cx.k.buffers[*buf].elem, elem, true)
            .map_err(|e| reject(e.to_string()))?;
    }
    old_fits(cx, src, a, elem)
}

/// The semantics and the old-value tile of `a`, against the source tile and the tensor's type.
fn old_fits(cx: &Cx, src: &TileRef, a: &Atomic, elem: ElemType) -> Result<(), Reject> {
    let Some(old) = &a.old else {
        if matches!(a.sem, MemSem::Acquire | MemSem::AcqRel) {
            return Err(reject(format!(
                "`sem = {}` orders later reads after the atomic's read, and `red` reads nothing back: ask for the old values (`old = o`), or write `sem = release`",
                a.sem
            )));
        }
        return Ok(());
    };
    let (TileRef::Buf { buf: o, index }, TileRef::Buf { buf: s, .. }) = (old, src) else {
        return Err(reject("the old values go to a register tile"));
    };
    let ob = &cx.k.buffers[*o];
    if o == s {
        return Err(reject(format!(
            "the old values go to a tile of their own: `{}` is the source, whose values the atomics add",
            ob.name
        )));
    }
    if ob.space != Space::Reg || !index.is_empty() {
        return Err(reject(format!(
            "the old values go to a whole register tile; `{}` is not one",
            ob.name
        )));
    }
    if ob.elem != elem {
        return Err(reject(format!(
            "the old values are the tensor's {} elements; `{}` is {} (declare it `regs::<{}>`)",
            elem.name(),
            ob.name,
            ob.elem.name(),
            elem.name()
        )));
    }
    let map = |e: crate::regtile::RegTileError| reject(e.to_string());
    if layout(cx.k, *s)
        .map_err(map)?
        .threads
        .iter()
        .any(|m| m.stride == [0, 0] && m.size > 1)
    {
        return Err(reject(format!(
            "`{}` holds each element in several threads (a statistic), and one of them does the atomic: its old value would reach that thread only. Ask for old values of a tile held once per element (`blocked(vec = 1)` over one thread per column)",
            cx.k.buffers[*s].name
        )));
    }
    if layout(cx.k, *o).map_err(map)? != layout(cx.k, *s).map_err(map)?
        || ob.layout.shape != cx.k.buffers[*s].layout.shape
    {
        return Err(reject(format!(
            "the old-value tile `{}` must have the shape and layout of `{}`: element k of one is the old value of element k of the other",
            ob.name, cx.k.buffers[*s].name
        )));
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst: TileRef::Global { tensor, coords, .. },
        src: TileRef::Buf { buf, .. },
        atomic: Some(a),
        ..
    } = op
    else {
        return Err(lw.internal("reg_atomic on a different copy"));
    };
    atomic::reduce(lw, *buf, tensor, coords, a)
}
