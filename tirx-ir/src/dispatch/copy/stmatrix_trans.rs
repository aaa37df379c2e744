//! `stmatrix_trans` — a register tile in the wgmma fragment layout into a 16-bit shared tile
//! holding its transpose, by 8×8 matrices transposed on the way (`stmatrix….trans`, PTX ISA
//! §9.7.14.5.16, sm_90+): an MN-major epilogue or a transpose without an extra pass.
//!
//! When: forced by `copy(s[i], t, transpose = true)` (never chosen for a plain copy), `t` a
//! `regs::<T>([R, C])` in the wgmma fragment layout (an accumulator, or a 16-bit tile), `s[i]`
//! a bf16/f16 shared tile holding `tᵀ`: `[C, R]`, or `[R / W, C, W]` chunks, run by whole
//! warpgroups.
//! Before: `copy @s[%i] <- @t variant stmatrix_trans`
//! After: per 64-row slice and pair of 8-column blocks of `t`, the registers packed into words
//! as for `stmatrix` and one `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16` (`.x2` for an
//! odd last block), lane `l` addressing shared row `C0 + l % 8` at column `R0`
//! (`regtile::shared`). A TMA store that reads the tile afterwards needs
//! `fence::proxy_async()` and a barrier first.

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::Op;
use crate::lower::Lower;
use crate::regtile::shared;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::StmatrixTrans,
    priority: 8,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::matrix_move(cx, true, true)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("stmatrix_trans on a non-copy"));
    };
    let (tile, view) = shared::view_as(lw.k, src, dst, true, true).map_err(|e| lw.error(e))?;
    shared::store_matrix(lw, tile, &view, true)
}
