//! Moves between a register tile and a tile of shared memory: vectorized `ld.shared` /
//! `st.shared` for any layout (the `shared_load` / `shared_store` copy variants), and
//! `ldmatrix` / `stmatrix` for 16-bit tiles in the wgmma fragment layout (the `ldmatrix` /
//! `stmatrix` variants).
//!
//! The shared side, after its indices, is the register tile's `[R, C]`, a vector `[C]` for a
//! one-row tile, or `[C / W, R, W]`: column chunks of `W` columns, each `R` rows deep — how TMA
//! boxes `W` columns wide lay out a wider tile (`smem::<bf16>([C / 64, R, 64], swizzle = B128)`
//! filled by `C / 64` boxes). Element `(r, c)` is at element offset `r·C + c`, or
//! `(c / W)·R·W + r·W + c % W`, and at byte address `swizzle(base + offset·size)`, the
//! buffer's swizzle applied to the shared-window address (PTX ISA §5.5.7: chunk bits [4, 7)
//! XORed with line bits [7, 10) for 128B; the buffers are aligned to the mode's 1024 bytes,
//! so address and offset give the same pattern).
//!
//! Vectors: a chunk is `w` consecutive registers along a row (the layout's fastest mode),
//! `w` a power of two that divides the run, every column step of the layout and `W`, with
//! `w·size ≤ 16` bytes and every chunk's address a multiple of `w·size` (the stage strides of
//! an indexed buffer are checked too): one `ld/st.shared.v{1,2,4}` per chunk, 16-bit values
//! packed two per 32-bit word. A swizzle moves whole 16-byte chunks, so a chunk stays
//! contiguous in every mode.
//!
//! ldmatrix / stmatrix (PTX ISA §9.7.14.5.15, §9.7.14.5.16): in the wgmma fragment a warp
//! holds rows 16w … 16w + 15 of each 64-row slice, and for each 8-column block `j` two 8×8
//! matrices (rows 0–7 and 8–15) whose lane-`l` elements `(l / 4, 2(l % 4) + {0, 1})` are
//! exactly registers `4j + 2h + {0, 1}` (`RegLayout::wgmma_acc`). One `.x4` moves blocks `j`
//! and `j + 1`: matrix `q` = (h = q % 2, block j + q / 2), its row `l % 8` addressed by lane
//! `8q + l % 8`; an odd last block takes `.x2`. f32 tiles are rounded in pairs before
//! `stmatrix` (`cvt.rn.bf16x2.f32`); `ldmatrix` fills 16-bit tiles only (widening would need
//! the unpacked registers anyway: the generic load does that). The `.trans` forms
//! (`copy(.., transpose = true)`) move the fragment to and from a shared tile holding its
//! transpose: `.trans` delivers (takes) each stored 8×8 matrix transposed — lane `l` gets
//! stored rows `2(l % 4)`, `2(l % 4) + 1` of column `l / 4` (§9.7.14.5.15: the matrix "in
//! column-major format") — so the lanes address the rows of the transposed block and the
//! registers are the same.

use super::access::{chunk_width, pack_words, store_values, unpack_words};
use super::{RegTileError, frag, layout, origin};
use crate::abi::{ElemType, Swizzle};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::encode::swizzle::cute_params;
use crate::inst::reg;
use crate::ir::{
    BinOp, Buffer, Expr, Inst, Kernel, Major, RegLayout, ScalarType as T, Space, TileRef, Var,
};
use crate::lower::{Lower, add, mul};

/// The shared side of a move, checked against the register tile.
#[derive(Clone, Debug)]
pub struct View {
    /// The shared buffer.
    pub buf: Handle<Buffer>,
    /// Its indices (leading dimensions).
    pub index: Vec<Expr>,
    /// Tile rows and columns.
    pub rows: u32,
    /// Tile columns.
    pub cols: u32,
    /// Columns per chunk (`cols` when the tile is row-major).
    pub chunk: u32,
    /// The shared buffer's element type.
    pub elem: ElemType,
    /// Its swizzle.
    pub swizzle: Swizzle,
    /// The largest power of two (bytes) dividing every stage stride of the indices.
    pub stage_align: u32,
}

impl View {
    /// Element offset of tile element `(r, c)` (run-time expressions).
    fn offset(&self, r: Expr, c: Expr) -> Expr {
        if self.chunk == self.cols {
            return add(mul(r, Expr::u32(self.cols)), c);
        }
        let w = Expr::u32(self.chunk);
        let block = Expr::bin(BinOp::Div, c.clone(), w.clone());
        let within = Expr::bin(BinOp::Rem, c, w);
        add(
            add(
                mul(block, Expr::u32(self.rows * self.chunk)),
                mul(r, Expr::u32(self.chunk)),
            ),
            within,
        )
    }
}

/// The register tile and shared tile of a move (`store`: registers → shared), or why not.
pub fn view(
    k: &Kernel,
    tile: &TileRef,
    smem: &TileRef,
    store: bool,
) -> Result<(Handle<Buffer>, View), RegTileError> {
    view_as(k, tile, smem, store, false)
}

/// [`view`], or with `trans` the view of a shared tile holding the register tile's transpose
/// (a `[R, C]` register tile and a `[C, R]` shared tile, or `[R / W, C, W]` chunks): the
/// view's rows and columns are the shared tile's.
pub fn view_as(
    k: &Kernel,
    tile: &TileRef,
    smem: &TileRef,
    store: bool,
    trans: bool,
) -> Result<(Handle<Buffer>, View), RegTileError> {
    let TileRef::Buf { buf: t, index } = tile else {
        return Err(RegTileError::Copy(
            "the register side is not a buffer".into(),
        ));
    };
    layout(k, *t)?;
    if !index.is_empty() {
        return Err(RegTileError::Copy(
            "a register tile is not indexed: copy the whole tile".into(),
        ));
    }
    let TileRef::Buf { buf: s, index } = smem else {
        return Err(RegTileError::Copy(
            "the other side is not a shared-memory tile".into(),
        ));
    };
    let b = &k.buffers[*s];
    if b.space != Space::Shared {
        return Err(RegTileError::Copy(format!(
            "`{}` is not in shared memory",
            b.name
        )));
    }
    if b.layout.major == Major::MN || !b.layout.is_row_major() {
        return Err(RegTileError::Copy(format!(
            "`{}` is not a dense row-major tile (an MN-major operand is read by MMAs, not moved to registers)",
            b.name
        )));
    }
    let [rows, cols] = <[u32; 2]>::try_from(&k.buffers[*t].layout.shape[..])
        .map_err(|_| RegTileError::Copy("register tiles are 2-D".into()))?;
    let (rows, cols) = if trans { (cols, rows) } else { (rows, cols) };
    let dims = b.layout.shape.get(index.len()..).unwrap_or(&[]);
    let chunk = match *dims {
        [r, c] if r == rows && c == cols => cols,
        [c] if rows == 1 && c == cols => cols,
        [n, r, w] if r == rows && n * w == cols => {
            if rows == 1 {
                cols
            } else {
                w
            }
        }
        _ => {
            return Err(RegTileError::Copy(format!(
                "`{}` is {dims:?} after its indices; a {}register tile moves to and from a [{rows}, {cols}] shared tile{}, or [{cols} / W, {rows}, W] column chunks (the layout of TMA boxes W columns wide)",
                b.name,
                if trans {
                    format!("transposing copy of a [{cols}, {rows}] ")
                } else {
                    format!("[{rows}, {cols}] ")
                },
                if rows == 1 {
                    format!(" (or [{cols}])")
                } else {
                    String::new()
                },
            )));
        }
    };
    if b.elem.bytes() == 1 {
        // The 8-bit store path (`cvt.rn.satfinite.e4m3x2`) is written for global tensors only.
        return Err(RegTileError::Copy(format!(
            "a register tile does not move to or from a shared tile of {}: of the 8-bit types, register tiles only store into global e4m3/e5m2 tensors",
            b.elem.name()
        )));
    }
    super::access::check_types(k.buffers[*t].elem, b.elem, store)
        .map_err(|e| RegTileError::Copy(e.to_string().replace("tensor", "shared tile")))?;
    let eb = b.elem.bytes();
    let stage_align = index
        .iter()
        .enumerate()
        .map(|(i, _)| b.layout.stride[i] * eb)
        .fold(1u32 << 16, |g, s| g.min(1 << s.trailing_zeros()));
    Ok((
        *t,
        View {
            buf: *s,
            index: index.clone(),
            rows,
            cols,
            chunk,
            elem: b.elem,
            swizzle: b.layout.swizzle,
            stage_align,
        },
    ))
}

/// The chunk width (elements) of a generic move of tiles of layout `l` through `v`.
pub fn width(l: &RegLayout, v: &View) -> u32 {
    let eb = v.elem.bytes();
    let mut w = chunk_width(l, eb);
    // Chunks must not cross a column chunk, and every chunk address must be a multiple of
    // its size (row starts at multiples of `chunk` elements, stages at `stage_align` bytes).
    let pow2 = 1u32 << v.chunk.trailing_zeros();
    w = w.min(pow2);
    while w > 1 && !v.stage_align.is_multiple_of(w * eb) {
        w /= 2;
    }
    w
}

/// `addr` with the buffer's swizzle applied (the formula of
/// `encode::swizzle::swizzle_offset` on the shared-window address).
pub(crate) fn swizzled(sw: Swizzle, addr: Expr) -> Expr {
    match cute_params(sw) {
        None => addr,
        Some((bits, base, shift)) => {
            let mask = ((1u32 << bits) - 1) << base;
            let moved = Expr::bin(BinOp::Shr, addr.clone(), Expr::u32(shift));
            Expr::bin(
                BinOp::Xor,
                addr,
                Expr::bin(BinOp::And, moved, Expr::u32(mask)),
            )
        }
    }
}

/// Addresses of tile elements for the executing thread.
struct Addr {
    base: Handle<Var>,
    origin: [Handle<Var>; 2],
    /// Unswizzled row-major: the thread's own address, chunks at constant offsets from it.
    linear: Option<Handle<Var>>,
}

impl Addr {
    fn new(lw: &mut Lower, l: &RegLayout, v: &View) -> Result<Addr, Diagnostics> {
        let base = lw.smem_addr(v.buf, &v.index)?;
        let base = lw.let_("sbase", T::U32, base);
        let origin = origin(lw, l);
        let linear = (v.swizzle == Swizzle::None && v.chunk == v.cols).then(|| {
            let off = v.offset(Expr::Var(origin[0]), Expr::Var(origin[1]));
            let e = add(Expr::Var(base), mul(off, Expr::u32(v.elem.bytes())));
            lw.let_("saddr", T::U32, e)
        });
        Ok(Addr {
            base,
            origin,
            linear,
        })
    }

    /// (register, immediate offset) addressing element (origin + (dr, dc)).
    fn at(&self, lw: &mut Lower, v: &View, dr: u32, dc: u32) -> (Handle<Var>, i64) {
        let eb = v.elem.bytes();
        if let Some(a) = self.linear {
            return (a, ((dr * v.cols + dc) * eb) as i64);
        }
        let r = add(Expr::Var(self.origin[0]), Expr::u32(dr));
        let c = add(Expr::Var(self.origin[1]), Expr::u32(dc));
        (element_addr(lw, self.base, v, r, c), 0)
    }
}

/// The swizzled address of element `(r, c)` of `v` from its base.
fn element_addr(lw: &mut Lower, base: Handle<Var>, v: &View, r: Expr, c: Expr) -> Handle<Var> {
    let off = mul(v.offset(r, c), Expr::u32(v.elem.bytes()));
    let a = lw.let_("saddr", T::U32, add(Expr::Var(base), off));
    match v.swizzle {
        Swizzle::None => a,
        sw => lw.let_("swz", T::U32, swizzled(sw, Expr::Var(a))),
    }
}

/// `copy(tile, smem)` by `ld.shared`.
pub fn load(lw: &mut Lower, tile: Handle<Buffer>, v: &View) -> Result<(), Diagnostics> {
    let l = layout(lw.k, tile).map_err(|e| lw.error(e))?;
    let regs = frag(lw, tile)?;
    let tile_elem = lw.k.buffers[tile].elem;
    let w = width(&l, v);
    let a = Addr::new(lw, &l, v)?;
    for i in (0..l.value_count()).step_by(w as usize) {
        let [dr, dc] = l.value_coord(i);
        let (addr, off) = a.at(lw, v, dr, dc);
        let regs = &regs[i as usize..(i + w) as usize];
        match (v.elem, tile_elem) {
            (ElemType::F32, _) => lw.inst(Inst::ld_shared_vec("f32", regs, addr, off)),
            (half, tile) if w == 1 => {
                if tile == half {
                    lw.inst(Inst::ld_shared_vec("b16", regs, addr, off));
                } else {
                    let h = lw.var("h", T::B16);
                    lw.inst(Inst::ld_shared_vec("b16", &[h], addr, off));
                    lw.inst(Inst::cvt_f32_from(half.name(), regs[0], h));
                }
            }
            (half, tile) => {
                let words: Vec<_> = (0..w / 2).map(|_| lw.var("ld", T::U32)).collect();
                lw.inst(Inst::ld_shared_vec("b32", &words, addr, off));
                unpack_words(lw, &words, regs, half, tile);
            }
        }
    }
    Ok(())
}

/// `copy(smem, tile)` by `st.shared`.
pub fn store(lw: &mut Lower, tile: Handle<Buffer>, v: &View) -> Result<(), Diagnostics> {
    let l = layout(lw.k, tile).map_err(|e| lw.error(e))?;
    let frag = frag(lw, tile)?;
    let tile_elem = lw.k.buffers[tile].elem;
    let w = width(&l, v);
    let vals = store_values(lw, &frag, tile_elem, v.elem, w);
    let a = Addr::new(lw, &l, v)?;
    for i in (0..l.value_count()).step_by(w as usize) {
        let [dr, dc] = l.value_coord(i);
        let (addr, off) = a.at(lw, v, dr, dc);
        let regs = &vals[i as usize..(i + w) as usize];
        match v.elem {
            ElemType::F32 => lw.inst(Inst::st_shared_vec("f32", addr, off, regs)),
            _ if w == 1 => lw.inst(Inst::st_shared("b16", addr, off, reg(regs[0]))),
            half => {
                let words = pack_words(lw, regs, half, tile_elem);
                lw.inst(Inst::st_shared_vec("b32", addr, off, &words));
            }
        }
    }
    Ok(())
}

/// Why `ldmatrix` (`store`: `stmatrix`; `trans`: their `.trans` forms, `v` the transpose's
/// view) cannot move `tile` through `v`, if it cannot.
pub fn matrix_fits(
    k: &Kernel,
    tile: Handle<Buffer>,
    v: &View,
    store: bool,
    trans: bool,
) -> Result<(), String> {
    let b = &k.buffers[tile];
    let l = layout(k, tile).map_err(|e| e.to_string())?;
    let (fr, fc) = frag_dims(v, trans);
    // The fragment's columns are 8-column blocks, stored and loaded as `.x4` pairs and an
    // `.x2` for an odd last one (`block_groups`): any multiple of 8 (wgmma's N, PTX ISA
    // §9.7.15.5), and nothing narrower.
    if !fc.is_multiple_of(8) {
        return Err(format!(
            "ldmatrix/stmatrix move the wgmma fragment by 8-column blocks: `{}` is {fc} columns wide, not a multiple of 8",
            b.name
        ));
    }
    let frag = RegLayout::wgmma_acc(fr, fc).ok();
    if frag.as_ref() != Some(&l) {
        return Err(format!(
            "`{}` is not in the wgmma fragment layout, whose 8×8 blocks ldmatrix/stmatrix move",
            b.name
        ));
    }
    if v.elem == ElemType::F32 {
        return Err(if trans {
            format!(
                "a transposing copy (ldmatrix/stmatrix `.trans`) moves 16-bit elements; the shared tile `{}` is f32 (declare it `smem::<bf16>` or `smem::<f16>`)",
                k.buffers[v.buf].name
            )
        } else {
            "ldmatrix/stmatrix move 16-bit elements; the shared tile is f32".into()
        });
    }
    let ok = if store {
        b.elem == v.elem || b.elem == ElemType::F32
    } else {
        b.elem == v.elem
    };
    if !ok && trans {
        return Err(format!(
            "a transposing copy moves {} `{}` {} {} shared memory: the register tile is of the shared tile's type{}",
            b.elem.name(),
            b.name,
            if store { "into" } else { "from" },
            v.elem.name(),
            if store { " or f32 (rounded)" } else { "" }
        ));
    }
    if !ok {
        return Err(format!(
            "{} `{}` from {} shared memory: ldmatrix fills 16-bit tiles of the shared type (the generic `ld.shared` path widens)",
            b.elem.name(),
            b.name,
            v.elem.name()
        ));
    }
    // Every matrix row is 16 contiguous bytes at a 16-byte boundary.
    if !v.chunk.is_multiple_of(8) || !v.stage_align.is_multiple_of(16) {
        return Err(format!(
            "the shared tile's rows are not whole 16-byte matrix rows (chunks of {} columns, stages aligned to {} bytes)",
            v.chunk, v.stage_align
        ));
    }
    Ok(())
}

/// The 8-column blocks each ldmatrix/stmatrix of a fragment `cols` wide moves: pairs, and a
/// last single block when the count is odd.
fn block_groups(cols: u32) -> Vec<(u32, u32)> {
    let blocks = cols / 8;
    (0..blocks)
        .step_by(2)
        .map(|j| (j, (blocks - j).min(2)))
        .collect()
}

/// The fragment's rows and columns: the view's, or its transpose's (`trans`).
fn frag_dims(v: &View, trans: bool) -> (u32, u32) {
    if trans {
        (v.cols, v.rows)
    } else {
        (v.rows, v.cols)
    }
}

/// The lane's row address for blocks `(j, n)` of slice `s`: lane `l` addresses row `l % 8` of
/// matrix `q = l / 8` (h = q % 2, block j + q / 2); lanes past the `2n` matrices repeat. The
/// matrix's fragment block starts at row `R0 = 64s + 16·warp + 8h`, column `C0 = 8(j + q/2)`;
/// its row `i` is shared row `R0 + i` from column `C0`, or with `trans` (the shared tile is
/// the transpose, and `.trans` delivers each stored row as a fragment column) shared row
/// `C0 + i` from column `R0`.
fn matrix_addr(
    lw: &mut Lower,
    base: Handle<Var>,
    v: &View,
    (warp, lane): (Handle<Var>, Handle<Var>),
    (s, j, n, trans): (u32, u32, u32, bool),
) -> Handle<Var> {
    let q = Expr::bin(BinOp::Div, Expr::Var(lane), Expr::u32(8));
    let q = Expr::bin(BinOp::Rem, q, Expr::u32(2 * n));
    let r0 = add(
        add(Expr::u32(64 * s), mul(Expr::Var(warp), Expr::u32(16))),
        mul(Expr::bin(BinOp::Rem, q.clone(), Expr::u32(2)), Expr::u32(8)),
    );
    let c0 = mul(
        add(Expr::u32(j), Expr::bin(BinOp::Div, q, Expr::u32(2))),
        Expr::u32(8),
    );
    let i = Expr::bin(BinOp::Rem, Expr::Var(lane), Expr::u32(8));
    let (row, col) = if trans {
        (add(c0, i), r0)
    } else {
        (add(r0, i), c0)
    };
    element_addr(lw, base, v, row, col)
}

/// The warp within the warpgroup and the lane of the executing thread.
fn warp_lane(lw: &mut Lower, l: &RegLayout) -> (Handle<Var>, Handle<Var>) {
    let t = super::owner_thread(lw, l);
    let warp = Expr::bin(
        BinOp::Rem,
        Expr::bin(BinOp::Div, Expr::Var(t), Expr::u32(32)),
        Expr::u32(4),
    );
    let warp = lw.let_("warp", T::U32, warp);
    let lane = lw.let_(
        "lane",
        T::U32,
        Expr::bin(BinOp::Rem, Expr::Var(t), Expr::u32(32)),
    );
    (warp, lane)
}

/// Register indices (pairs) of matrix `q` of blocks `j…` in slice `s` of a `cols`-wide tile.
fn matrix_regs(cols: u32, s: u32, j: u32, q: u32) -> (usize, usize) {
    let i = 4 * (cols / 8) * s + 4 * (j + q / 2) + 2 * (q % 2);
    (i as usize, i as usize + 1)
}

/// `copy(tile, smem)` by `ldmatrix` (the tile in the wgmma fragment layout); `trans`: by
/// `ldmatrix….trans` from the tile's transpose.
pub fn load_matrix(
    lw: &mut Lower,
    tile: Handle<Buffer>,
    v: &View,
    trans: bool,
) -> Result<(), Diagnostics> {
    let l = layout(lw.k, tile).map_err(|e| lw.error(e))?;
    let regs = frag(lw, tile)?;
    let half = v.elem;
    let base = lw.smem_addr(v.buf, &v.index)?;
    let base = lw.let_("sbase", T::U32, base);
    let (warp, lane) = warp_lane(lw, &l);
    let (fr, fc) = frag_dims(v, trans);
    for s in 0..fr / 64 {
        for (j, n) in block_groups(fc) {
            let addr = matrix_addr(lw, base, v, (warp, lane), (s, j, n, trans));
            let words: Vec<_> = (0..2 * n).map(|_| lw.var("ldm", T::U32)).collect();
            lw.inst(Inst::ldmatrix(&words, addr, trans));
            for (q, &wd) in words.iter().enumerate() {
                let (lo, hi) = matrix_regs(fc, s, j, q as u32);
                unpack_words(lw, &[wd], &[regs[lo], regs[hi]], half, half);
            }
        }
    }
    Ok(())
}

/// `copy(smem, tile)` by `stmatrix` (the tile in the wgmma fragment layout; f32 values are
/// rounded in pairs); `trans`: by `stmatrix….trans` into the tile's transpose.
pub fn store_matrix(
    lw: &mut Lower,
    tile: Handle<Buffer>,
    v: &View,
    trans: bool,
) -> Result<(), Diagnostics> {
    let l = layout(lw.k, tile).map_err(|e| lw.error(e))?;
    let regs = frag(lw, tile)?;
    let tile_elem = lw.k.buffers[tile].elem;
    let base = lw.smem_addr(v.buf, &v.index)?;
    let base = lw.let_("sbase", T::U32, base);
    let (warp, lane) = warp_lane(lw, &l);
    let (fr, fc) = frag_dims(v, trans);
    for s in 0..fr / 64 {
        for (j, n) in block_groups(fc) {
            let words: Vec<_> = (0..2 * n)
                .flat_map(|q| {
                    let (lo, hi) = matrix_regs(fc, s, j, q);
                    [regs[lo], regs[hi]]
                })
                .collect();
            let words = pack_words(lw, &words, v.elem, tile_elem);
            let addr = matrix_addr(lw, base, v, (warp, lane), (s, j, n, trans));
            lw.inst(Inst::stmatrix(addr, &words, trans));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_pair_up_and_an_odd_last_block_stands_alone() {
        assert_eq!(block_groups(64), vec![(0, 2), (2, 2), (4, 2), (6, 2)]);
        assert_eq!(block_groups(24), vec![(0, 2), (2, 1)]);
        assert_eq!(block_groups(8), vec![(0, 1)]);
        // The transposed GEMM's odd tiles (BN = 72, 88, 104): four, five, six pairs and a
        // last single block.
        assert_eq!(block_groups(72).last(), Some(&(8, 1)));
        assert_eq!(block_groups(88).len(), 6);
        assert_eq!(
            block_groups(104),
            [(0, 2), (2, 2), (4, 2), (6, 2), (8, 2), (10, 2), (12, 1)]
        );
    }

    /// The registers each matrix of an x4 fills are the fragment's: matrix q of blocks (j, j+1)
    /// holds rows 8·(q % 2) + l/4 and columns 8·(j + q/2) + 2(l % 4) + {0, 1}.
    #[test]
    fn matrix_registers_are_the_fragments_elements() {
        let (rows, cols) = (128, 48);
        let l = RegLayout::wgmma_acc(rows, cols).unwrap();
        for s in 0..rows / 64 {
            for (j, n) in block_groups(cols) {
                for q in 0..2 * n {
                    for lane in 0..32u32 {
                        let warp = 1;
                        let t = 32 * warp + lane;
                        let [or, oc] = l.thread_coord(t);
                        let (lo, hi) = matrix_regs(cols, s, j, q);
                        let want_r = 64 * s + 16 * warp + 8 * (q % 2) + lane / 4;
                        let want_c = 8 * (j + q / 2) + 2 * (lane % 4);
                        let [dr, dc] = l.value_coord(lo as u32);
                        assert_eq!([or + dr, oc + dc], [want_r, want_c]);
                        let [dr, dc] = l.value_coord(hi as u32);
                        assert_eq!([or + dr, oc + dc], [want_r, want_c + 1]);
                    }
                }
            }
        }
    }
}
