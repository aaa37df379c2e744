//! `shared_load` — a shared-memory tile into a register tile, vectorized.
//!
//! When: `copy(t, s[i])` with `t` a register tile of any layout and `s[i]` a dense shared tile
//! of its shape (`[R, C]`, `[C]` for one row, or `[C / W, R, W]` column chunks), run by the
//! threads that own `t`; the shared elements widen exactly into an f32 tile or keep their
//! type.
//! Before: `copy @t <- @s[%i]`
//! After: per chunk of the layout (up to 16 bytes), `ld.shared.v{1,2,4}.b32` (16-bit, then
//! unpacked and widened) or `.f32`, at the swizzled address of its first element
//! (`regtile::shared`). No bounds: a shared tile is whole.
//! (A 16-bit tile in the wgmma fragment layout goes to `ldmatrix` first, by priority.)

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::Op;
use crate::lower::Lower;
use crate::regtile::shared;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::SharedLoad,
    priority: 5,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::reg_shared(cx, false).map(|_| ())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("shared_load on a non-copy"));
    };
    let (tile, view) = shared::view(lw.k, dst, src, false).map_err(|e| lw.error(e))?;
    shared::load(lw, tile, &view)
}
