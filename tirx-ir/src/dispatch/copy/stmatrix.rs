//! `stmatrix` — a register tile in the wgmma fragment layout into a 16-bit shared-memory
//! tile, by 8×8 matrices (sm_90+).
//!
//! When: `copy(s[i], t)` with `t` a `regs::<T>([R, C])` in the wgmma fragment layout (an
//! accumulator, or a 16-bit tile) and `s[i]` a bf16/f16 shared tile of its shape (`[R, C]` or
//! `[C / W, R, W]` chunks, rows of whole 16-byte segments), run by whole warpgroups.
//! Before: `copy @o_s <- @o`
//! After: per 64-row slice and pair of 8-column blocks, the eight registers packed into four
//! words (`cvt.rn.bf16x2.f32` for an f32 tile, `mov.b32 {lo, hi}` for a 16-bit one) and one
//! `stmatrix.sync.aligned.m8n8.x4.shared.b16` (`.x2` for an odd last block) at the swizzled
//! address of the lane's matrix row (`regtile::shared`). A TMA store that reads the tile
//! afterwards needs `fence::proxy_async()` and a barrier first.
//! (`reg_stage` takes an accumulator into a `[N / W, R, W]` B128 TMA staging tile first, by
//! priority: it is the path the GEMM epilogues were measured with.)

use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::Op;
use crate::lower::Lower;
use crate::regtile::shared;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::Stmatrix,
    priority: 8,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::matrix_move(cx, true, false)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("stmatrix on a non-copy"));
    };
    let (tile, view) = shared::view(lw.k, src, dst, true).map_err(|e| lw.error(e))?;
    shared::store_matrix(lw, tile, &view, false)
}
