//! `reg_load` — a tile of a 2-D global tensor into a register tile, vectorized and masked.
//!
//! When: `copy(t, x.tile(r, c))` with `t` a register tile (`regs::<T>([R, C], layout = …)`)
//! and `x` row-major 2-D, run by the threads that own `t`; the tensor's elements widen
//! exactly into an f32 tile or keep their type.
//! Before: `copy @t <- global x[%r, %c]`
//! After: the fast/edge paths of `regtile::access` (whole-tile bounds and alignment checked
//! once; per-chunk `ld.global.v4.b32` + unpacking, or masked element loads at the edges).

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{Op, TileRef};
use crate::lower::Lower;
use crate::regtile::access;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::RegLoad,
    priority: 5,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::reg_copy(cx, false)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst: TileRef::Buf { buf, .. },
        src:
            TileRef::Global {
                tensor,
                coords,
                elements,
            },
        ..
    } = op
    else {
        return Err(lw.internal("reg_load on a different copy"));
    };
    access::load(
        lw,
        *buf,
        tensor,
        coords,
        elements.as_deref().map(|b| &b.0[..]),
    )
}
