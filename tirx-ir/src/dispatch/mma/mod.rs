//! Mma variants, and the operand checks they share.

pub mod tcgen05;
pub mod wgmma;

use crate::abi::{ElemType, Swizzle};
use crate::ir::{Buffer, Expr, Kernel, Major, Space, TileRef};

/// A shared-memory MMA operand: buffer, leading index, rows (M or N), K extent, majorness.
pub struct Operand<'k> {
    /// The buffer.
    pub buf: &'k Buffer,
    /// Leading (stage) indices.
    pub index: &'k [Expr],
    /// Rows (M for A, N for B).
    pub rows: u32,
    /// K extent.
    pub k: u32,
    /// K-major (`[rows, K]`) or MN-major (`[rows / 64 chunks, K, 64]`).
    pub major: Major,
}

/// Checks that `t` is a 16-bit shared tile with a 128B-swizzled layout in one of the two forms
/// TMA writes and both MMA descriptors read:
/// - K-major (the default): `[rows, K]` with rows of one swizzle span (64 bf16);
/// - MN-major (`major = mn`): `[rows / 64, K, 64]` — chunks of 64 M/N elements (one span), each
///   K rows deep, one TMA box each.
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
    let dims = b.layout.shape[index.len().min(b.layout.shape.len())..].to_vec();
    let (rows, kext) = match b.layout.major {
        Major::K => kmajor_dims(b, dims, which)?,
        Major::MN => mn_major_dims(b, dims, which)?,
    };
    Ok(Operand {
        buf: b,
        index,
        rows,
        k: kext,
        major: b.layout.major,
    })
}

/// (rows, K) of a K-major tile whose indexed shape is `dims`.
fn kmajor_dims(b: &Buffer, mut dims: Vec<u32>, which: &str) -> Result<(u32, u32), String> {
    // Leading dimensions of a dense row-major tile merge into rows (`[2, 128, 64]` is a
    // `[256, 64]` operand), as for TMA boxes.
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
    Ok((dims[0], dims[1]))
}

/// (rows, K) of an MN-major tile whose indexed shape is `dims`: `[chunks.., K, 64]`, leading
/// dimensions merged into the chunk count (chunks are contiguous, so `[2, 2, 64, 64]` is 4).
fn mn_major_dims(b: &Buffer, mut dims: Vec<u32>, which: &str) -> Result<(u32, u32), String> {
    while dims.len() > 3 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    if dims.len() == 2 {
        dims.insert(0, 1);
    }
    let [chunks, kext, atom] = dims[..] else {
        return Err(format!(
            "{which} `{}` is MN-major and indexed this way is rank {}; expected `[chunks, K, {}]` or `[K, {}]`",
            b.name,
            dims.len(),
            128 / b.elem.bytes(),
            128 / b.elem.bytes()
        ));
    };
    if b.layout.swizzle != Swizzle::B128 || atom * b.elem.bytes() != 128 {
        return Err(format!(
            "{which} `{}` is MN-major: it needs swizzle B128 and chunks of {} M/N elements (128 bytes, one swizzle span) as its innermost dimension; it has swizzle {} and {}-byte chunks",
            b.name,
            128 / b.elem.bytes(),
            b.layout.swizzle.name(),
            atom * b.elem.bytes()
        ));
    }
    if !kext.is_multiple_of(8) {
        return Err(format!(
            "{which} `{}` has {kext} K-rows per chunk; a multiple of 8 (one swizzle atom) is needed",
            b.name
        ));
    }
    Ok((chunks * atom, kext))
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
