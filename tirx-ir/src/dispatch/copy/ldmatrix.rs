//! `ldmatrix` — a shared-memory tile into a 16-bit register tile in the wgmma fragment
//! layout, by 8×8 matrices.
//!
//! When: `copy(t, s[i])` with `t` a `regs::<bf16|f16>([R, C])` in the wgmma fragment layout
//! (R a multiple of 64, C of 8: the RS-form A operand, or a converted accumulator), `s[i]` a
//! shared tile of the same type and shape (`[R, C]` or `[C / W, R, W]` chunks, rows of whole
//! 16-byte segments), run by whole warpgroups.
//! Before: `copy @p <- @s[%i]`
//! After: per 64-row slice and pair of 8-column blocks, one
//! `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (`.x2` for an odd last block) at the swizzled
//! address of the lane's matrix row, each word unpacked into the fragment's two registers
//! (`regtile::shared`): 16 bytes per lane per instruction, and the eight rows of a matrix
//! are eight different 16-byte chunks under every swizzle, so a matrix is one wavefront.

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::Op;
use crate::lower::Lower;
use crate::regtile::shared;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::Ldmatrix,
    priority: 8,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::matrix_move(cx, false, false)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("ldmatrix on a non-copy"));
    };
    let (tile, view) = shared::view(lw.k, dst, src, false).map_err(|e| lw.error(e))?;
    shared::load_matrix(lw, tile, &view, false)
}
