//! Copy variants, and the tile-shape checks they share.

pub mod ldmatrix;
pub mod ldmatrix_trans;
pub mod reg_atomic;
pub mod reg_epilogue;
pub mod reg_load;
pub mod reg_stage;
pub mod reg_store;
pub mod row_store;
pub mod shared_load;
pub mod shared_store;
pub mod stmatrix;
pub mod stmatrix_trans;
pub mod tcgen05_cp;
pub mod thread_load;
pub mod tma_load;
pub mod tma_reduce;
pub mod tma_store;
pub mod tmem_epilogue;
pub mod tmem_regs;

use super::Reject;
use crate::abi::Swizzle;
use crate::ir::{Buffer, Kernel, TileRef};
pub use row_store::RowStore;

/// A register-tile op runs on exactly the threads its tile is spread over.
pub fn owner_threads(
    cx: &crate::dispatch::Cx,
    l: &crate::ir::RegLayout,
    name: &str,
) -> Result<(), Reject> {
    crate::regtile::check_owner(cx.threads, l, name)
        .map_err(|e| Reject::RegTile { why: e.to_string() })
}

/// The register side and the other side of a plain register-tile copy (`store`: the tile is
/// the source), or why the op is not one: unscaled, no barrier or multicast, the tile side a
/// register tile.
fn reg_sides<'o>(
    cx: &crate::dispatch::Cx<'o>,
    store: bool,
) -> Result<(&'o TileRef, &'o TileRef), Reject> {
    unscaled(cx.op)?;
    let crate::ir::Op::Copy {
        dst,
        src,
        bar: None,
        multicast: None,
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp {
            expected: "a copy without barrier or multicast",
        });
    };
    let (tile, other, side) = if store {
        (src, dst, "source")
    } else {
        (dst, src, "destination")
    };
    let is_tile = matches!(tile, TileRef::Buf { buf, .. } if cx.k.buffers[*buf].space == crate::ir::Space::Reg);
    if !is_tile {
        return Err(Reject::RegTile {
            why: format!("the {side} is not a register tile"),
        });
    }
    Ok((tile, other))
}

/// The check both register-tile copies make (`store`: the tile is the source): a plain copy
/// between a register tile and a tile of a 2-D tensor (or a vector), types that widen or
/// round as the direction allows, run by the tile's owners.
pub fn reg_copy(cx: &crate::dispatch::Cx, store: bool) -> Result<(), Reject> {
    use crate::regtile::{access, layout};
    let reject = |e: crate::regtile::RegTileError| Reject::RegTile { why: e.to_string() };
    let (tile, global) = reg_sides(cx, store)?;
    let (buf, tensor, _) = access::operands(cx.k, tile, global).map_err(reject)?;
    let elem =
        cx.k.sig
            .tensors
            .iter()
            .find(|t| t.name == tensor)
            .map(|t| t.elem)
            .ok_or(Reject::UnknownTensor {
                tensor: tensor.into(),
            })?;
    access::check_types(cx.k.buffers[buf].elem, elem, store).map_err(reject)?;
    let l = layout(cx.k, buf).map_err(reject)?;
    if elem == crate::abi::ElemType::E2m1x2 {
        fp4_store(cx, &l, tensor, &cx.k.buffers[buf].name)?;
    }
    owner_threads(cx, &l, &cx.k.buffers[buf].name)
}

/// A store into an `e2m1x2` tensor rounds by `cvt.rn.satfinite.e2m1x2.f32`, which only
/// sm_100a has (PTX ISA §9.7.9.21), and packs two adjacent columns of a thread a byte, so
/// each thread's runs of consecutive columns must be of even length.
fn fp4_store(
    cx: &crate::dispatch::Cx,
    l: &crate::ir::RegLayout,
    tensor: &str,
    tile: &str,
) -> Result<(), Reject> {
    use crate::regtile::access;
    if !cx.k.target().has_tcgen05() {
        return Err(Reject::RegTile {
            why: format!(
                "storing into the e2m1x2 tensor `{tensor}` rounds by cvt.rn.satfinite.e2m1x2.f32, which {} lacks (sm_100a and later); quantise to FP4 on sm_100a",
                cx.k.target().name()
            ),
        });
    }
    if access::chunk_width(l, 1) < 2 {
        return Err(Reject::RegTile {
            why: format!(
                "storing `{tile}` into the e2m1x2 tensor `{tensor}` packs two adjacent columns a byte: each thread must hold runs of an even number of consecutive columns (e.g. `layout = blocked(vec = 8)`)"
            ),
        });
    }
    Ok(())
}

/// The check the register ↔ shared moves share (`store`: registers → shared): a plain copy
/// between a register tile and a shared tile of its shape (see `regtile::shared`), run by
/// the tile's owners. Gives the tile and the shared side.
pub fn reg_shared(
    cx: &crate::dispatch::Cx,
    store: bool,
) -> Result<(crate::arena::Handle<Buffer>, crate::regtile::shared::View), Reject> {
    reg_shared_as(cx, store, false)
}

/// [`reg_shared`], or with `trans` a shared tile holding the register tile's transpose.
pub fn reg_shared_as(
    cx: &crate::dispatch::Cx,
    store: bool,
    trans: bool,
) -> Result<(crate::arena::Handle<Buffer>, crate::regtile::shared::View), Reject> {
    use crate::regtile::{layout, shared};
    let reject = |e: crate::regtile::RegTileError| Reject::RegTile { why: e.to_string() };
    let (tile, smem) = reg_sides(cx, store)?;
    let space = |t: &TileRef| match t {
        TileRef::Buf { buf, .. } => Some(cx.k.buffers[*buf].space),
        _ => None,
    };
    if space(smem) != Some(crate::ir::Space::Shared) {
        return Err(Reject::RegTile {
            why: "the other side is not a shared-memory tile".into(),
        });
    }
    let (buf, view) = shared::view_as(cx.k, tile, smem, store, trans).map_err(reject)?;
    let l = layout(cx.k, buf).map_err(reject)?;
    owner_threads(cx, &l, &cx.k.buffers[buf].name)?;
    Ok((buf, view))
}

/// The check `ldmatrix` and `stmatrix` share (`store`: `stmatrix`): a register ↔ shared move
/// of a fragment by 8×8 matrices, run by whole warpgroups.
/// With `trans`, the `.trans` forms: the shared tile holds the fragment's transpose.
pub fn matrix_move(cx: &crate::dispatch::Cx, store: bool, trans: bool) -> Result<(), Reject> {
    let (tile, view) = reg_shared_as(cx, store, trans)?;
    crate::regtile::shared::matrix_fits(cx.k, tile, &view, store, trans)
        .map_err(|why| Reject::RegTile { why })?;
    if !cx.threads.is_whole_warpgroups() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "the fragment is spread over whole warpgroups",
        });
    }
    Ok(())
}

/// Every copy variant but `reg_stage` refuses a scaled copy (`alpha = …, beta = …`).
pub fn unscaled(op: &crate::ir::Op) -> Result<(), Reject> {
    match op {
        crate::ir::Op::Copy { scale: Some(_), .. } => Err(Reject::Scaled),
        _ => Ok(()),
    }
}

/// The shared buffer and the box (outermost first) a TMA copy moves, or why not.
pub fn tma_box<'k>(
    k: &'k Kernel,
    smem: &TileRef,
    global: &TileRef,
) -> Result<(&'k Buffer, Vec<u32>), Reject> {
    let TileRef::Buf { buf, index } = smem else {
        return Err(Reject::NotBuffer {
            what: "the shared side",
        });
    };
    let TileRef::Global { tensor, coords, .. } = global else {
        return Err(Reject::NotGlobal { side: "other side" });
    };
    let b = &k.buffers[*buf];
    if b.space != crate::ir::Space::Shared {
        return Err(Reject::TmaSpace {
            buffer: b.name.clone(),
            space: b.space,
        });
    }
    let mut dims: Vec<u32> = b.layout.shape.get(index.len()..).unwrap_or(&[]).to_vec();
    let t = k
        .sig
        .tensors
        .iter()
        .find(|t| &t.name == tensor)
        .ok_or_else(|| Reject::UnknownTensor {
            tensor: tensor.clone(),
        })?;
    // A dense tile of higher rank than the tensor is the same bytes as the box with its
    // leading dimensions merged (`[2, 64, 64]` is a `[128, 64]` box), which lets a kernel split
    // a loaded tile between consumers by indexing (`a_s[s, wg]`).
    let tile = dims.clone();
    while dims.len() > t.shape.len() && dims.len() >= 2 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    // Merged past TMA's limit: the mismatch is the tile's rank against the tensor's.
    if tile.len() > dims.len() && dims[0] > 256 {
        return Err(Reject::MergedBox {
            buffer: b.name.clone(),
            tile,
            tensor: tensor.clone(),
            tensor_rank: t.shape.len(),
            extent: dims[0],
        });
    }
    // A tile of lower rank than the tensor is a box of extent 1 in the tensor's leading
    // dimensions: a `[BM, 64]` tile of a `[B, S, H·D]` tensor at `(b, m, h)` is one batch's rows.
    while dims.len() < t.shape.len() && coords.len() == t.shape.len() {
        dims.insert(0, 1);
    }
    if t.elem != b.elem {
        return Err(Reject::TmaElem {
            buffer: b.name.clone(),
            elem: b.elem,
            tensor: tensor.clone(),
            tensor_elem: t.elem,
        });
    }
    if dims.len() != t.shape.len() || coords.len() != t.shape.len() {
        return Err(Reject::TmaRank {
            rank: dims.len(),
            coords: coords.len(),
            tensor: tensor.clone(),
            tensor_rank: t.shape.len(),
        });
    }
    if !(1..=5).contains(&dims.len()) {
        return Err(Reject::BoxRank { rank: dims.len() });
    }
    if let Some(d) = dims.iter().find(|&&d| d == 0 || d > 256) {
        return Err(Reject::BoxExtent { extent: *d });
    }
    let inner = dims[dims.len() - 1] * b.elem.bytes();
    if !inner.is_multiple_of(16) {
        return Err(Reject::BoxInnerBytes { bytes: inner });
    }
    if let Some(span) = b.layout.swizzle.span_bytes()
        && inner > span
    {
        return Err(Reject::BoxOverSwizzle {
            bytes: inner,
            span,
            swizzle: b.layout.swizzle,
        });
    }
    // Narrower rows are not packed: with a swizzle the TMA unit places box row `r` at
    // `r · span` bytes (the 16-byte chunks of a row are permuted within its span), so a box of
    // 64-byte rows under B128 covers twice the tile's bytes. Measured: a `[64, 32]` bf16 B128
    // staging tile's TMA store faulted on an H100 ("out-of-range shared address", the last
    // box of the buffer; compute-sanitizer, 2026-12-06).
    if let Some(span) = b.layout.swizzle.span_bytes()
        && inner < span
    {
        return Err(Reject::BoxUnderSwizzle {
            buffer: b.name.clone(),
            bytes: inner,
            span,
            swizzle: b.layout.swizzle,
            fit: match inner {
                32 => "B32",
                64 => "B64",
                _ => "no swizzle",
            },
        });
    }
    // The buffer must be dense row-major for the box TMA writes to be the buffer's layout.
    if !b.layout.is_row_major() {
        return Err(Reject::TmaRowMajor {
            buffer: b.name.clone(),
        });
    }
    let _ = Swizzle::None;
    Ok((b, dims))
}
