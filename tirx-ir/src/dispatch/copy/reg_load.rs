//! `reg_load` — a tile of a 2-D global tensor into a register tile, vectorized and masked.
//!
//! When: `copy(t, x.tile(r, c))` with `t` a register tile (`regs::<T>([R, C], layout = …)`)
//! and `x` row-major 2-D, run by the threads that own `t`; the tensor's elements widen
//! exactly into an f32 tile or keep their type.
//! Before: `copy @t <- global x[%r, %c]`
//! After: the fast/edge paths of `regtile::access` (whole-tile bounds and alignment checked
//! once; per-chunk `ld.global.v4.b32` + unpacking, or masked element loads at the edges).

use crate::diag::Diagnostics;
use crate::dispatch::{Cx, Reject, Variant};
use crate::ir::{Op, TileRef};
use crate::lower::Lower;
use crate::regtile::{access, layout};

/// The variant.
pub static VARIANT: Variant = Variant {
    name: "reg_load",
    priority: 5,
    applies,
    lower,
};

fn reject(e: crate::regtile::RegTileError) -> Reject {
    Reject::RegTile { why: e.to_string() }
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy {
        dst,
        src,
        bar: None,
        multicast: None,
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp {
            expected: "a copy without barrier or multicast",
        });
    };
    let is_tile = matches!(dst, TileRef::Buf { buf, .. } if cx.k.buffers[*buf].space == crate::ir::Space::Reg);
    if !is_tile {
        return Err(Reject::RegTile {
            why: "the destination is not a register tile".into(),
        });
    }
    let (buf, tensor, _) = access::operands(cx.k, dst, src).map_err(reject)?;
    let elem =
        cx.k.sig
            .tensors
            .iter()
            .find(|t| t.name == tensor)
            .map(|t| t.elem)
            .ok_or(Reject::UnknownTensor {
                tensor: tensor.into(),
            })?;
    access::check_types(cx.k.buffers[buf].elem, elem, false).map_err(reject)?;
    let l = layout(cx.k, buf).map_err(reject)?;
    super::owner_threads(cx, &l, &cx.k.buffers[buf].name)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst: TileRef::Buf { buf, .. },
        src: TileRef::Global { tensor, coords },
        ..
    } = op
    else {
        return Err(lw.internal("reg_load on a different copy"));
    };
    access::load(lw, *buf, tensor, coords)
}
