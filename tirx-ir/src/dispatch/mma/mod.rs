//! Mma variants, and the operand checks they share.

mod block_scale;
pub mod tcgen05;
pub mod wgmma;

use super::Reject;
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
pub fn smem_operand<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
    which: &'static str,
) -> Result<Operand<'k>, Reject> {
    // The type before the layout: an f32 tile's 32-element rows are a legal layout of a
    // type this operand does not take, and the type is what is wrong.
    if let TileRef::Buf { buf, .. } = t
        && let b = &k.buffers[*buf]
        && b.space == Space::Shared
        && !matches!(b.elem, ElemType::Bf16 | ElemType::F16)
    {
        return Err(Reject::OperandElem {
            which,
            buffer: b.name.clone(),
            elem: b.elem,
            supported: "bf16 and f16",
        });
    }
    smem_operand_any(k, t, which)
}

/// [`smem_operand`] of any element type: the layout checks only, a K-major row still one
/// 128-byte swizzle span (32 f32, 64 bf16 or 128 8-bit elements). The caller checks the type
/// (`tcgen05`'s kinds take f32 and 8-bit operands too).
pub fn smem_operand_any<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
    which: &'static str,
) -> Result<Operand<'k>, Reject> {
    let TileRef::Buf { buf, index } = t else {
        return Err(Reject::NotBuffer { what: which });
    };
    let b = &k.buffers[*buf];
    if b.space != Space::Shared {
        return Err(Reject::OperandSpace {
            which,
            buffer: b.name.clone(),
            space: b.space,
        });
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
fn kmajor_dims(b: &Buffer, mut dims: Vec<u32>, which: &'static str) -> Result<(u32, u32), Reject> {
    // Leading dimensions of a dense row-major tile merge into rows (`[2, 128, 64]` is a
    // `[256, 64]` operand), as for TMA boxes.
    while dims.len() > 2 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    if dims.len() != 2 {
        return Err(Reject::OperandRank {
            which,
            buffer: b.name.clone(),
            rank: dims.len(),
        });
    }
    if b.layout.swizzle != Swizzle::B128 || dims[1] * b.elem.bytes() != 128 {
        return Err(Reject::KMajorLayout {
            which,
            buffer: b.name.clone(),
            elem: b.elem,
            swizzle: b.layout.swizzle,
            row_bytes: dims[1] * b.elem.bytes(),
        });
    }
    if !dims[0].is_multiple_of(8) {
        return Err(Reject::OperandRows {
            which,
            buffer: b.name.clone(),
            rows: dims[0],
        });
    }
    Ok((dims[0], dims[1]))
}

/// (rows, K) of an MN-major tile whose indexed shape is `dims`: `[chunks.., K, 64]`, leading
/// dimensions merged into the chunk count (chunks are contiguous, so `[2, 2, 64, 64]` is 4).
fn mn_major_dims(
    b: &Buffer,
    mut dims: Vec<u32>,
    which: &'static str,
) -> Result<(u32, u32), Reject> {
    while dims.len() > 3 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    if dims.len() == 2 {
        dims.insert(0, 1);
    }
    let [chunks, kext, atom] = dims[..] else {
        return Err(Reject::MnRank {
            which,
            buffer: b.name.clone(),
            rank: dims.len(),
            elem: b.elem,
        });
    };
    if b.layout.swizzle != Swizzle::B128 || atom * b.elem.bytes() != 128 {
        return Err(Reject::MnLayout {
            which,
            buffer: b.name.clone(),
            elem: b.elem,
            swizzle: b.layout.swizzle,
            chunk_bytes: atom * b.elem.bytes(),
        });
    }
    if !kext.is_multiple_of(8) {
        return Err(Reject::MnKRows {
            which,
            buffer: b.name.clone(),
            k_rows: kext,
        });
    }
    Ok((chunks * atom, kext))
}

/// The accumulator buffer of an mma and its (M, N), if it is a 2-D f32 buffer in `space`. A
/// TMEM buffer may have leading stage dimensions (`tmem::<f32>([2, 128, 256])`, two
/// accumulators side by side in columns), indexed down to one `[M, N]` tile (`acc[s]`, with a
/// run-time `s`); see [`tmem_columns`] for where a stage lives.
pub fn accumulator<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
    space: Space,
) -> Result<(&'k Buffer, u32, u32), Reject> {
    accumulator_of(k, t, space, false)
}

/// [`accumulator`], also taking an `i32` tensor-memory tile — the s32 accumulator of
/// `tcgen05.mma.kind::i8` (PTX ISA §9.7.16.10.1) — and an unpacked `f16` one — the f16 D of
/// `kind::f16` / `kind::f8f6f4` (dtype F16, §9.7.16.2.1; one element per 32-bit cell,
/// §9.7.16.10.4.1) —, for the MMA and the TMEM epilogue.
pub fn accumulator_int<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
) -> Result<(&'k Buffer, u32, u32), Reject> {
    accumulator_of(k, t, Space::Tmem, true)
}

fn accumulator_of<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
    space: Space,
    int_ok: bool,
) -> Result<(&'k Buffer, u32, u32), Reject> {
    let TileRef::Buf { buf, index } = t else {
        return Err(Reject::NotBuffer {
            what: "the accumulator",
        });
    };
    let b = &k.buffers[*buf];
    if b.space != space {
        return Err(Reject::AccumulatorSpace {
            buffer: b.name.clone(),
            space: b.space,
            want: space,
        });
    }
    let rank = b.layout.shape.len();
    // Only TMEM accumulators have stages: a register fragment is named, never indexed.
    let lead = if space == Space::Tmem {
        rank.saturating_sub(2)
    } else {
        0
    };
    if int_ok && b.elem == ElemType::F16 && !b.tmem_unpacked() {
        return Err(Reject::PackedAccumulator {
            buffer: b.name.clone(),
        });
    }
    let elem_ok = b.elem == ElemType::F32
        || (int_ok && (b.elem == ElemType::I32 || (b.elem == ElemType::F16 && b.tmem_unpacked())));
    if !elem_ok || rank != lead + 2 || index.len() != lead {
        return Err(Reject::AccumulatorShape {
            buffer: b.name.clone(),
            rank,
            index: index.len(),
        });
    }
    let (m, n) = (b.layout.shape[lead], b.layout.shape[lead + 1]);
    if let Some(l) = &b.regs
        && crate::ir::RegLayout::wgmma_acc(m, n).as_ref() != Ok(l)
    {
        return Err(Reject::NotFragment {
            buffer: b.name.clone(),
        });
    }
    Ok((b, m, n))
}

/// The first TMEM column (relative to the buffer's allocation) of the accumulator tile `t`
/// names: a TMEM buffer `[d0, …, M, N]` of f32 holds its stages side by side along the
/// columns (TMEM has 128 lanes, so the rows cannot take them; PTX ISA §9.7.16.1), stage
/// `(i0, …)` at column `(i0·d1·… + …)·N`. Zero for an unstaged buffer.
pub fn tmem_columns(b: &Buffer, index: &[Expr]) -> Expr {
    let cols = b.tmem_tile().map_or(0, |(_, c)| c);
    let mut flat = Expr::u32(0);
    for (i, ix) in index.iter().enumerate() {
        flat = crate::lower::add(
            crate::lower::mul(flat, Expr::u32(b.layout.shape[i])),
            ix.clone(),
        );
    }
    crate::lower::mul(flat, Expr::u32(cols))
}

/// An A operand in tensor memory: the buffer, its stage index, and K.
pub struct TmemA<'k> {
    /// The buffer (`tmem::<bf16|f16>([.., 128, K])`, or a view of one).
    pub buf: &'k Buffer,
    /// Leading (stage) indices.
    pub index: &'k [Expr],
    /// K extent.
    pub k: u32,
}

/// Whether `t` names a tensor-memory buffer (the A-from-TMEM form of `tcgen05.mma`).
pub fn in_tmem(k: &Kernel, t: &TileRef) -> bool {
    matches!(t, TileRef::Buf { buf, .. } if k.buffers[*buf].space == Space::Tmem)
}

/// Checks that `t` is an A operand `tcgen05.mma` can read from tensor memory (PTX ISA
/// §9.7.16.10, the `[a-tmem]` form): a 16-bit `[128, K]` tile (a stage of a staged buffer
/// indexed down to one), row `m` in TMEM lane `m` (§9.7.16.10.5, layout D: M = 128,
/// `cta_group::1`) and K packed along the columns 32 bits to a cell — two elements per
/// column, the lower K in the low half, as `tmem_store` of a 16-bit tile writes them — with
/// K a multiple of the instruction's 16 (`kind::f16`, §9.7.16.10.1).
pub fn tmem_operand<'k>(k: &'k Kernel, t: &'k TileRef) -> Result<TmemA<'k>, Reject> {
    tmem_operand_rows(k, t, 128)
}

/// [`tmem_operand`] of `want` rows: 128, or the CTA pair's M = 128 A half of 64 rows, which
/// its 2x2 data path reads from lanes 0-63 and again from 64-127 (§9.7.16.10.5.2;
/// `tcgen05::cp` of a 64-row tile writes both).
pub fn tmem_operand_rows<'k>(
    k: &'k Kernel,
    t: &'k TileRef,
    want: u32,
) -> Result<TmemA<'k>, Reject> {
    let TileRef::Buf { buf, index } = t else {
        return Err(Reject::NotBuffer { what: "A" });
    };
    let b = &k.buffers[*buf];
    if !matches!(b.elem, ElemType::Bf16 | ElemType::F16) {
        return Err(Reject::OperandElem {
            which: "A",
            buffer: b.name.clone(),
            elem: b.elem,
            supported: "bf16 and f16",
        });
    }
    // A is packed two to a cell; an unpacked tile is a 16-bit accumulator's image.
    if b.tmem_unpacked() {
        return Err(Reject::UnpackedA {
            buffer: b.name.clone(),
        });
    }
    let rank = b.layout.shape.len();
    let (rows, kext) = match b.layout.shape[..] {
        [.., r, c] if rank == index.len() + 2 => (r, c),
        _ => (0, 0),
    };
    if rows != want || kext == 0 || !kext.is_multiple_of(16) {
        return Err(Reject::TmemAShape {
            buffer: b.name.clone(),
            dims: b.layout.shape[index.len().min(rank)..].to_vec(),
        });
    }
    Ok(TmemA {
        buf: b,
        index,
        k: kext,
    })
}
