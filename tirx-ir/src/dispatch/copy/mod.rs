//! Copy variants, and the tile-shape checks they share.

pub mod reg_epilogue;
pub mod reg_stage;
pub mod row_store;
pub mod thread_load;
pub mod tma_load;
pub mod tma_store;
pub mod tmem_epilogue;

use crate::abi::Swizzle;
use crate::ir::{Buffer, Kernel, TileRef};
pub use row_store::RowStore;

/// Every copy variant but `reg_stage` refuses a scaled copy (`alpha = …, beta = …`).
pub fn unscaled(op: &crate::ir::Op) -> Result<(), String> {
    match op {
        crate::ir::Op::Copy { scale: Some(_), .. } => Err(
            "it does not scale (`alpha`/`beta` apply to an accumulator staged in shared memory: \
             `reg_stage`)"
                .into(),
        ),
        _ => Ok(()),
    }
}

/// The shared buffer and the box (outermost first) a TMA copy moves, or why not.
pub fn tma_box<'k>(
    k: &'k Kernel,
    smem: &TileRef,
    global: &TileRef,
) -> Result<(&'k Buffer, Vec<u32>), String> {
    let TileRef::Buf { buf, index } = smem else {
        return Err("the shared side is not a buffer".into());
    };
    let TileRef::Global { tensor, coords } = global else {
        return Err("the other side is not a global tile".into());
    };
    let b = &k.buffers[*buf];
    if b.space != crate::ir::Space::Shared {
        return Err(format!(
            "`{}` is in {}, TMA moves between global and shared memory",
            b.name,
            b.space.name()
        ));
    }
    let mut dims: Vec<u32> = b.layout.shape.get(index.len()..).unwrap_or(&[]).to_vec();
    let t = k
        .sig
        .tensors
        .iter()
        .find(|t| &t.name == tensor)
        .ok_or_else(|| format!("unknown tensor `{tensor}`"))?;
    // A dense tile of higher rank than the tensor is the same bytes as the box with its
    // leading dimensions merged (`[2, 64, 64]` is a `[128, 64]` box), which lets a kernel split
    // a loaded tile between consumers by indexing (`a_s[s, wg]`).
    while dims.len() > t.shape.len() && dims.len() >= 2 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    if t.elem != b.elem {
        return Err(format!(
            "`{}` holds {} but `{tensor}` holds {}",
            b.name,
            b.elem.name(),
            t.elem.name()
        ));
    }
    if dims.len() != t.shape.len() || coords.len() != t.shape.len() {
        return Err(format!(
            "the box has rank {} and {} coordinates, but `{tensor}` has rank {}",
            dims.len(),
            coords.len(),
            t.shape.len()
        ));
    }
    if !(1..=5).contains(&dims.len()) {
        return Err(format!(
            "TMA boxes have rank 1 to 5, this one {}",
            dims.len()
        ));
    }
    if let Some(d) = dims.iter().find(|&&d| d == 0 || d > 256) {
        return Err(format!(
            "TMA box extents are 1..=256 elements, this box has {d}"
        ));
    }
    let inner = dims[dims.len() - 1] * b.elem.bytes();
    if !inner.is_multiple_of(16) {
        return Err(format!(
            "the box's inner extent is {inner} bytes; TMA needs a multiple of 16"
        ));
    }
    if let Some(span) = b.layout.swizzle.span_bytes()
        && inner > span
    {
        return Err(format!(
            "the box's inner extent is {inner} bytes, over the {span}-byte span of swizzle {}",
            b.layout.swizzle.name()
        ));
    }
    // The buffer must be dense row-major for the box TMA writes to be the buffer's layout.
    if !b.layout.is_row_major() {
        return Err(format!(
            "`{}` is not dense row-major, which is the layout a TMA box has",
            b.name
        ));
    }
    let _ = Swizzle::None;
    Ok((b, dims))
}
