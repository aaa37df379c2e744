//! `shared_store` — a register tile into a shared-memory tile, vectorized.
//!
//! When: `copy(s[i], t)` with `t` a register tile of any layout and `s[i]` a dense shared tile
//! of its shape (`[R, C]`, `[C]` for one row, or `[C / W, R, W]` column chunks), run by the
//! threads that own `t`; an f32 tile rounds to the shared type (to nearest even), 16-bit
//! tiles keep theirs or widen into f32.
//! Before: `copy @s[%i] <- @t`
//! After: per chunk of the layout (up to 16 bytes), pairs packed (`cvt.rn.bf16x2.f32` or
//! `mov.b32 {lo, hi}`) into `st.shared.v{1,2,4}.b32`, or `.f32`, at the swizzled address of
//! its first element (`regtile::shared`). A TMA store or MMA that reads the tile afterwards
//! needs `fence::proxy_async()` and a barrier first.
//! (A wgmma fragment goes to `stmatrix` first, and an accumulator into a TMA staging tile to
//! `reg_stage`, by priority.)

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::Op;
use crate::lower::Lower;
use crate::regtile::shared;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::SharedStore,
    priority: 5,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::reg_shared(cx, true).map(|_| ())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("shared_store on a non-copy"));
    };
    let (tile, view) = shared::view(lw.k, src, dst, true).map_err(|e| lw.error(e))?;
    shared::store(lw, tile, &view)
}
