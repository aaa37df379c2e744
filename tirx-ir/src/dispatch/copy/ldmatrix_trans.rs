//! `ldmatrix_trans` — a shared-memory tile holding the transpose of a 16-bit register tile
//! into that tile, in the wgmma fragment layout, by 8×8 matrices transposed on the way
//! (`ldmatrix….trans`, PTX ISA §9.7.14.5.15): a transpose that costs no extra pass.
//!
//! When: forced by `copy(t, s[i], transpose = true)` (never chosen for a plain copy), `t` a
//! `regs::<bf16|f16>([R, C])` in the wgmma fragment layout (R a multiple of 64, C of 8), `s[i]`
//! a shared tile of the same type holding `tᵀ`: `[C, R]`, or `[R / W, C, W]` chunks (rows of
//! whole 16-byte segments), run by whole warpgroups.
//! Before: `copy @t <- @s[%i] variant ldmatrix_trans`
//! After: per 64-row slice and pair of 8-column blocks of `t`, one
//! `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` (`.x2` for an odd last block): lane `l`
//! addresses shared row `C0 + l % 8` at column `R0` of its matrix's block (`regtile::shared`),
//! and receives the fragment's registers as the plain form does.

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::Op;
use crate::lower::Lower;
use crate::regtile::shared;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::LdmatrixTrans,
    priority: 8,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::matrix_move(cx, false, true)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("ldmatrix_trans on a non-copy"));
    };
    let (tile, view) = shared::view_as(lw.k, dst, src, false, true).map_err(|e| lw.error(e))?;
    shared::load_matrix(lw, tile, &view, true)
}
