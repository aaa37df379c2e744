//! `reg_store` — a register tile into a tile of a 2-D global tensor, vectorized and masked.
//!
//! When: `copy(y.tile(r, c), t)` with `t` a register tile of any layout, `y` row-major 2-D,
//! run by the threads that own `t`; an f32 tile rounds to the tensor's type (to nearest
//! even; into `e4m3`/`e5m2` saturating; into `e2m1x2` two adjacent columns a byte by
//! `cvt.rn.satfinite.e2m1x2.f32`, sm_100a), 16-bit tiles keep theirs or widen into an f32
//! tensor, and an `i32`/`u32` tile gives its low bytes to a `ue8m0`, `ue4m3`, `u8` or `i8`
//! tensor.
//! Before: `copy global y[%r, %c] <- @t`
//! After: the fast/edge paths of `regtile::access`: per chunk, pairs packed by
//! `cvt.rn.bf16x2.f32` (or `cvt.rn.satfinite.e4m3x2.f32`, four bytes a word) into
//! `st.global.v4.b32`, or masked element stores at the edges (`st.global.b8` for bytes).
//! (A wgmma accumulator without other layout goes to `reg_epilogue` first, by priority.)

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{Op, TileRef};
use crate::lower::Lower;
use crate::regtile::access;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::RegStore,
    priority: 5,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::reg_copy(cx, true)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst:
            TileRef::Global {
                tensor,
                coords,
                elements,
            },
        src: TileRef::Buf { buf, .. },
        ..
    } = op
    else {
        return Err(lw.internal("reg_store on a different copy"));
    };
    access::store(
        lw,
        *buf,
        tensor,
        coords,
        elements.as_deref().map(|b| &b.0[..]),
    )
}
