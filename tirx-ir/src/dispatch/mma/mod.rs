//! Mma variants, and the operand checks they share.

pub mod tcgen05;
pub mod wgmma;

use crate::abi::{ElemType, Swizzle};
use crate::ir::{Buffer, Expr, Kernel, Space, TileRef};

/// A K-major shared-memory operand: buffer, leading index, rows (M or N), K extent.
pub struct Operand<'k> {
    /// The buffer.
    pub buf: &'k Buffer,
    /// Leading (stage) indices.
    pub index: &'k [Expr],
    /// Rows (M for A, N for B).
    pub rows: u32,
    /// K extent.
    pub k: u32,
}

/// Checks that `t` is a K-major shared tile with a 128B-swizzled layout whose rows are one
/// swizzle span (the layout TMA writes and both MMA descriptors read).
pub fn smem_operand<'k>(k: &'k Kernel, t: &'k TileRef, which: &str) -> Result<Operand<'k>, String> {
    let TileRef::Buf { buf, index } = t else {
        return Err(format!("{which} is not a buffer"));
    };
    let b = &k.buffers[*buf];
    if b.space != Space::Shared {
        return Err(format!(
            "{which} `{}` is in {}; MMA operands come from shared memory here",
            b.name,
            b.space.name()
        ));
    }
    if !matches!(b.elem, ElemType::Bf16 | ElemType::F16) {
        return Err(format!(
            "{which} `{}` holds {}; bf16 and f16 are supported",
            b.name,
            b.elem.name()
        ));
    }
    // Leading dimensions of a dense row-major tile merge into rows (`[2, 128, 64]` is a
    // `[256, 64]` operand), as for TMA boxes.
    let mut dims = b.layout.shape[index.len().min(b.layout.shape.len())..].to_vec();
    while dims.len() > 2 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    if dims.len() != 2 {
        return Err(format!(
            "{which} `{}` indexed this way is rank {}, not a 2-D tile",
            b.name,
            dims.len()
        ));
    }
    if b.layout.swizzle != Swizzle::B128 || dims[1] * b.elem.bytes() != 128 {
        return Err(format!(
            "{which} `{}` must be K-major with swizzle B128 and 128-byte rows ({} elements of K); it has swizzle {} and {}-byte rows",
            b.name,
            128 / b.elem.bytes(),
            b.layout.swizzle.name(),
            dims[1] * b.elem.bytes()
        ));
    }
    if !dims[0].is_multiple_of(8) {
        return Err(format!(
            "{which} `{}` has {} rows; a multiple of 8 (one swizzle atom) is needed",
            b.name, dims[0]
        ));
    }
    Ok(Operand {
        buf: b,
        index,
        rows: dims[0],
        k: dims[1],
    })
}

/// The accumulator buffer of an mma and its (M, N), if it is a 2-D f32 buffer in `space`.
pub fn accumulator<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
    space: Space,
) -> Result<(&'k Buffer, u32, u32), String> {
    let TileRef::Buf { buf, index } = t else {
        return Err("the accumulator is not a buffer".into());
    };
    let b = &k.buffers[*buf];
    if b.space != space {
        let how = match space {
            Space::Tmem => "tensor memory (`tmem::<f32>`)",
            Space::Reg => "registers (`regs::<f32>`)",
            Space::Shared => "shared memory",
        };
        return Err(format!(
            "accumulator `{}` is in {}; this path accumulates in {how}",
            b.name,
            b.space.name()
        ));
    }
    if b.elem != ElemType::F32 || !index.is_empty() || b.layout.shape.len() != 2 {
        return Err(format!(
            "accumulator `{}` must be an unindexed 2-D f32 tile",
            b.name
        ));
    }
    Ok((b, b.layout.shape[0], b.layout.shape[1]))
}
