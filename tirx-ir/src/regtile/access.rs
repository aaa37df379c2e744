//! Loads and stores between a register tile and a tile of a row-major 2-D global tensor,
//! vectorized from the layout and masked at the tensor's edges (the `reg_load` and
//! `reg_store` copy variants).
//!
//! The vector: the layout's fastest value mode, when it walks along a row (`stride (0, 1)`),
//! gives each thread runs of consecutive columns; a run is split into chunks of `w` elements,
//! `w` the largest power of two dividing the run and every other column stride of the layout
//! (so every chunk starts at a multiple of `w`), and at most 16 bytes (`ld.global.v4.b32`).
//!
//! Two paths, chosen at run time for the whole tile (a uniform branch: every thread of the
//! CTA takes the same one):
//! - fast: the tile lies inside the tensor and every row starts 16-byte aligned (base address
//!   and row stride): one unguarded vector access per chunk;
//! - masked vectors: the rows are 16-byte aligned and `N` is a multiple of `w` (a row of 5000
//!   bf16 in a 5120-column tile, the tail of a row split into tiles; for a one-row tile at an
//!   element offset, its start aligned and `N` less that offset a multiple of `w`): each chunk is one
//!   vector access guarded by `row < M && col + w <= N`, so a chunk lies wholly inside the row
//!   or wholly past its end, and nothing moves element by element;
//! - edge: each chunk is one vector access guarded by `row < M && col + w <= N` (and the
//!   alignment), else its elements one by one, each guarded by `row < M && col + e < N`.
//!
//! Elements outside the tensor are loaded as 0 and not stored. The masked path is a path of
//! its own, not the edge path with its element accesses skipped by a branch: ptxas keeps the
//! registers written under a branch apart across it, and that cost 15 registers at 32 values
//! per thread (a CTA per SM fewer for the 8k-column row kernels).
//!
//! An f32 tile stored into an `e4m3`/`e5m2` tensor is rounded to nearest even and saturated
//! (`cvt.rn.satfinite.e4m3x2.f32`, pairs packed into words; a lone element by `st.global.b8`);
//! into an `e2m1x2` tensor, two adjacent columns a byte (`cvt.rn.satfinite.e2m1x2.f32` into
//! `.b8` registers, four packed into a word), the columns counting values and the addresses
//! bytes (column `c` in byte `c / 2`), pairs whole at every edge (`N` is even).
//!
//! PTX used: §9.7.9.8 ld / §9.7.9.10 st (vector forms, alignment), §9.7.9.21 cvt (the packed
//! `cvt.rn.bf16x2.f32` and `cvt.rn.satfinite.e4m3x2.f32`: the first source goes to the upper
//! half, the higher address), §9.7.9.1 mov (packing and unpacking halves).

use super::{RegTileError, frag, layout, origin};
use crate::abi::{AbiParam, ElemType};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{
    BinOp, CmpOp, Expr, Inst, Kernel, Operand, RegLayout, ScalarType as T, StmtKind, TileRef, Var,
};
use crate::lower::{Lower, LowerError, add, mul};

/// The chunk width of a layout for a tensor of `eb`-byte elements.
pub fn chunk_width(l: &RegLayout, eb: u32) -> u32 {
    let run = match l.values.first() {
        Some(m) if m.stride == [0, 1] => m.size,
        _ => 1,
    };
    let mut g = run;
    for m in l.threads.iter().chain(l.values.iter().skip(1)) {
        if m.stride[1] != 0 {
            g = gcd(g, m.stride[1]);
        }
    }
    let pow2 = 1u32 << g.trailing_zeros();
    pow2.min(16 / eb).max(1)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Whether a copy between a tile of `tile` elements and a tensor of `tensor` elements is
/// lossless or an explicit store (narrowing only on stores: rounding results to the output
/// type is what a store of an f32 tile into a bf16 tensor means).
pub fn check_types(tile: ElemType, tensor: ElemType, store: bool) -> Result<(), RegTileError> {
    // Loads widen into f32 tiles; stores round f32 tiles and widen into f32 tensors.
    // Integers move only between tiles and tensors of their own type (a conversion to or
    // from floats is a `cast` in `compute`, with its rounding said there).
    // An 8-bit float tensor takes stores of f32 tiles, rounded to nearest even and saturated
    // (`cvt.rn.satfinite.e4m3x2.f32`): the output of a quantiser; a `ue8m0`, `ue4m3`, `u8`
    // or `i8` tensor takes an integer tile's low bytes (a scale's biased exponent, a UE4M3
    // factor's bits). Nothing else of one byte moves through registers.
    // An `e2m1x2` tensor (two FP4 values a byte) takes stores of f32 tiles, two adjacent
    // columns a byte (`cvt.rn.satfinite.e2m1x2.f32`, sm_100a).
    if tensor.bytes() == 1 || tile.bytes() == 1 {
        let bytes = matches!(
            tensor,
            ElemType::Ue8m0 | ElemType::Ue4m3 | ElemType::U8 | ElemType::I8
        );
        let float = tensor.is_fp8() || tensor == ElemType::E2m1x2;
        let int32 = tile.is_int() && !tile.is_int64();
        return if store && ((tile == ElemType::F32 && float) || (int32 && bytes)) {
            Ok(())
        } else {
            Err(RegTileError::Copy(format!(
                "{} {} tile cannot be {} {} {} tensor: of the 8-bit types, register tiles only store into e4m3, e5m2 and e2m1x2 tensors, from f32 tiles (rounded to nearest even, saturating), and into ue8m0, ue4m3, u8 and i8 tensors, from i32/u32 tiles (the low byte)",
                article(tile),
                tile.name(),
                if store { "stored into" } else { "loaded from" },
                article(tensor),
                tensor.name(),
            )))
        };
    }
    let ok = tile == tensor
        || (!tile.is_int()
            && !tensor.is_int()
            && (tile == ElemType::F32 || (store && tensor == ElemType::F32)));
    if ok {
        Ok(())
    } else {
        Err(RegTileError::Copy(format!(
            "{} {} tile cannot be {} {} {} tensor without a cast: {}",
            article(tile),
            tile.name(),
            if store { "stored into" } else { "loaded from" },
            article(tensor),
            tensor.name(),
            if tile.is_int() || tensor.is_int() {
                "integers move between tiles and tensors of their own type; convert in `compute` with `cast::<f32>(i)` or `cast::<i32>(x)`"
            } else {
                "load into an f32 tile (exact) or cast explicitly"
            }
        )))
    }
}

/// The untyped word an integer element moves as: `.b32`, or `.b64` for `i64`/`u64`
/// (§9.7.9.8 `ld`, §9.7.9.10 `st`: an untyped load fills any register of its size).
fn word(e: ElemType) -> &'static str {
    if e.is_int64() { "b64" } else { "b32" }
}

/// "a" or "an" before the type's name as it is read aloud ("an f32", "an i32", "a bf16").
fn article(e: ElemType) -> &'static str {
    if e.name().starts_with(['f', 'e', 'i']) {
        "an"
    } else {
        "a"
    }
}

/// The register tile and global tile of a register load or store, or why not.
pub fn operands<'o>(
    k: &Kernel,
    reg_side: &'o TileRef,
    global: &'o TileRef,
) -> Result<(Handle<crate::ir::Buffer>, &'o str, &'o [Expr]), RegTileError> {
    let TileRef::Buf { buf, index } = reg_side else {
        return Err(RegTileError::Copy(
            "the register side is not a buffer".into(),
        ));
    };
    layout(k, *buf)?;
    if !index.is_empty() {
        return Err(RegTileError::Copy(
            "a register tile is not indexed: copy the whole tile".into(),
        ));
    }
    let TileRef::Global { tensor, coords, .. } = global else {
        return Err(RegTileError::Copy(
            "the other side is not a global tile".into(),
        ));
    };
    let t = k
        .sig
        .tensors
        .iter()
        .find(|t| &t.name == tensor)
        .ok_or_else(|| RegTileError::Copy(format!("unknown tensor `{tensor}`")))?;
    let shape = &k.buffers[*buf].layout.shape;
    if shape.len() != 2 {
        return Err(RegTileError::Copy("register tiles are 2-D".into()));
    }
    // A vector [N] moves as the one-row tile [1, C] or the one-column tile [R, 1] (a row
    // statistic: one scale per row of an accumulator), at one tile coordinate; a rank-3
    // tensor `[L, M, N]` as an `[M, N]` matrix at leading index `coords[0]` (a batch or head).
    let vector = t.shape.len() == 1 && coords.len() == 1 && (shape[0] == 1 || shape[1] == 1);
    let ranked = matches!(t.shape.len(), 2 | 3) && coords.len() == t.shape.len();
    // A full tile and a vector: say which shape would fit, not the general rule.
    if t.shape.len() == 1 && coords.len() == 1 && !vector {
        let name = &k.buffers[*buf].name;
        return Err(RegTileError::Copy(format!(
            "`{tensor}` is a vector [{}]: a register tile moves to and from it as one row [1, C] or one column [R, 1], and `{name}` is {}×{}; declare a [1, {}] or [{}, 1] tile (e.g. `layout = stat({name}, axis = …)`), or give `{tensor}` two dimensions",
            t.shape[0], shape[0], shape[1], shape[1], shape[0]
        )));
    }
    if !vector && !ranked {
        return Err(RegTileError::Copy(format!(
            "register tiles move to and from 2-D tensors with 2 tile coordinates, 3-D tensors with 3 (the first an index, the tile along the last two), or vectors [N] as [1, C] or [R, 1] tiles with 1; `{tensor}` has rank {} and {} coordinate(s)",
            t.shape.len(),
            coords.len()
        )));
    }
    Ok((*buf, tensor, coords))
}

/// One chunk: `w` consecutive registers from `reg0`, at (`dr`, `dc`) from the thread's origin.
pub(super) struct Chunk {
    pub(super) reg0: u32,
    pub(super) dr: u32,
    pub(super) dc: u32,
}

/// What a load or store needs, computed once.
pub(super) struct Access {
    pub(super) frag: Vec<Handle<Var>>,
    pub(super) tile_elem: ElemType,
    pub(super) elem: ElemType,
    pub(super) w: u32,
    chunks: Vec<Chunk>,
    /// Row address (u64) per distinct `dr`.
    rows: Vec<(u32, Handle<Var>, Handle<Var>)>,
    col: Handle<Var>,
    cols: Expr,
    aligned: Handle<Var>,
}

pub(super) fn prepare(
    lw: &mut Lower,
    buf: Handle<crate::ir::Buffer>,
    tensor: &str,
    coords: &[Expr],
    elements: Option<&[Expr]>,
) -> Result<(Access, Paths), Diagnostics> {
    let l = layout(lw.k, buf).map_err(|e| lw.error(e))?;
    let (bm, bn) = (
        lw.k.buffers[buf].layout.shape[0],
        lw.k.buffers[buf].layout.shape[1],
    );
    let elem = lw
        .tensor_elem(tensor)
        .ok_or_else(|| lw.internal(format!("unknown tensor `{tensor}`")))?;
    let mut shape = lw.tensor_shape(tensor);
    // A vector [N]: one row, column tile coordinate `coords[0]`; into an [R, 1] tile (R > 1),
    // one column, row tile coordinate `coords[0]` (an [N, 1] tensor of row stride 1).
    let vector = shape.len() == 1;
    let column = vector && bm != 1 && bn == 1;
    if !(vector || shape.len() == 2 || shape.len() == 3) {
        return Err(lw.error(LowerError::EpilogueRank {
            tensor: tensor.into(),
            rank: shape.len(),
        }));
    }
    // A rank-3 tensor: matrix `coords[0]` of its leading dimension (an element offset of
    // `coords[0]` times that dimension's stride), then the last two as a 2-D tensor.
    let lead = (shape.len() == 3).then(|| coords[0].clone());
    if lead.is_some() {
        shape.remove(0);
    }
    let coords: Vec<Expr> = if column {
        vec![coords[0].clone(), Expr::u32(0)]
    } else if vector {
        vec![Expr::u32(0), coords[0].clone()]
    } else if lead.is_some() {
        coords[1..].to_vec()
    } else {
        coords.to_vec()
    };
    // An integer tile's low bytes are stored one by one (`st.global.b8`; scales are few).
    let bytes_of_ints = elem.bytes() == 1 && lw.k.buffers[buf].elem.is_int();
    // FP4 pairs: `w` counts values (two a byte), at most 16 (8 bytes); the column
    // coordinates, the tile's extents and `N` are in values, the tensor's row stride in bytes.
    let fp4 = elem == ElemType::E2m1x2;
    let w = if bytes_of_ints {
        1
    } else if fp4 {
        chunk_width(&l, 1)
    } else {
        chunk_width(&l, elem.bytes())
    };
    let chunks: Vec<Chunk> = (0..l.value_count())
        .step_by(w as usize)
        .map(|i| {
            let [dr, dc] = l.value_coord(i);
            Chunk { reg0: i, dr, dc }
        })
        .collect();
    let (mut m, mut n) = if column {
        (lw.dim(&shape[0]), Expr::u32(1))
    } else if vector {
        (Expr::u32(1), lw.dim(&shape[0]))
    } else {
        (lw.dim(&shape[0]), lw.dim(&shape[1]))
    };
    if fp4 {
        n = mul(n, Expr::u32(2));
    }
    // `x.at(…)`: the coordinates are element offsets (a multiplier of 1, not the tile's
    // extent); `.within(…)` bounds clip the tile's two dimensions as the extents do (the
    // leading index of a rank-3 tensor picks the matrix, unclipped, as with `.tile`).
    let (mult_r, mult_c) = if elements.is_some() { (1, 1) } else { (bm, bn) };
    if let Some(b) = elements.filter(|b| !b.is_empty()) {
        let min = |a: Expr, b: &Expr| Expr::bin(BinOp::Min, a, b.clone());
        if column {
            m = min(m, &b[0]);
        } else if vector {
            n = min(n, &b[0]);
        } else {
            let k = b.len();
            m = min(m, &b[k - 2]);
            n = min(n, &b[k - 1]);
        }
    }
    let ptr_name = lw.param(AbiParam::Pointer {
        tensor: tensor.into(),
    });
    let [or, oc] = origin(lw, &l);
    let row0 = lw.let_(
        "row0",
        T::U32,
        add(mul(coords[0].clone(), Expr::u32(mult_r)), Expr::Var(or)),
    );
    let col = lw.let_(
        "col0",
        T::U32,
        add(mul(coords[1].clone(), Expr::u32(mult_c)), Expr::Var(oc)),
    );
    let ptr = lw.var("ptr", T::U64);
    lw.inst(Inst::ld_param("u64", ptr, &ptr_name));
    let eb = elem.bytes() as i64;
    let row_dim = usize::from(lead.is_some());
    if let Some(l) = &lead {
        let lead_stride = lw.param(AbiParam::Stride {
            tensor: tensor.into(),
            dim: 0,
        });
        let ls = lw.var("lead_stride", T::U64);
        lw.inst(Inst::ld_param("u64", ls, &lead_stride));
        let li = lw.let_("lead", T::U32, l.clone());
        let l64 = lw.var("lead64", T::U64);
        lw.inst(Inst::cvt("u64.u32", l64, reg(li)));
        lw.inst(Inst::binary("mul.lo.u64", l64, reg(l64), reg(ls)));
        lw.inst(Inst::binary(
            "shl.b64",
            l64,
            reg(l64),
            Operand::Imm(eb.trailing_zeros() as i64),
        ));
        lw.inst(Inst::binary("add.u64", ptr, reg(ptr), reg(l64)));
    }
    let stride = lw.var("stride", T::U64);
    if column {
        lw.inst(Inst::mov("u64", stride, Operand::Imm(1)));
    } else if vector {
        lw.inst(Inst::mov("u64", stride, Operand::Imm(0)));
    } else {
        let stride_name = lw.param(AbiParam::Stride {
            tensor: tensor.into(),
            dim: row_dim,
        });
        lw.inst(Inst::ld_param("u64", stride, &stride_name));
    }
    // Alignment of every row start for whole chunks: base and row stride in bytes.
    let sb = lw.var("stride_b", T::U64);
    lw.inst(Inst::binary(
        "mul.lo.u64",
        sb,
        reg(stride),
        Operand::Imm(eb),
    ));
    let low = lw.var("low", T::U64);
    lw.inst(Inst::binary("or.b64", low, reg(ptr), reg(sb)));
    lw.inst(Inst::binary(
        "and.b64",
        low,
        reg(low),
        Operand::Imm(if fp4 {
            i64::from(w / 2) - 1
        } else {
            w as i64 * eb - 1
        }),
    ));
    let mut aligned_e = Expr::cmp(CmpOp::Eq, Expr::Var(low), Expr::Imm(0, T::U64));
    // The first column of a one-row tile at an element offset (`x.at(r, c)`), where the
    // chunks' alignment is counted from.
    let mut start_col = None;
    if bm == 1 && !vector && !fp4 && w > 1 {
        // A one-row tile: its own start decides, not the row stride. A row of odd length
        // starts 16-byte aligned only every few rows, and `x.at(r, c)` can start the tile at
        // the column where the row's bytes are (a long row walked from its first aligned
        // column keeps its vectors; rows of 50257 bf16 otherwise moved element by element).
        let r64 = lw.var("trow64", T::U64);
        let tr = lw.let_("trow", T::U32, mul(coords[0].clone(), Expr::u32(mult_r)));
        lw.inst(Inst::cvt("u64.u32", r64, reg(tr)));
        let tc = lw.let_("tcol", T::U32, mul(coords[1].clone(), Expr::u32(mult_c)));
        if elements.is_some() {
            start_col = Some(tc);
        }
        let t64 = lw.var("tcol64", T::U64);
        lw.inst(Inst::cvt("u64.u32", t64, reg(tc)));
        lw.inst(Inst::binary("mul.lo.u64", r64, reg(r64), reg(sb)));
        lw.inst(Inst::binary(
            "shl.b64",
            t64,
            reg(t64),
            Operand::Imm(eb.trailing_zeros() as i64),
        ));
        lw.inst(Inst::binary("add.u64", r64, reg(r64), reg(t64)));
        lw.inst(Inst::binary("add.u64", r64, reg(r64), reg(ptr)));
        lw.inst(Inst::binary(
            "and.b64",
            r64,
            reg(r64),
            Operand::Imm(w as i64 * eb - 1),
        ));
        aligned_e = Expr::cmp(CmpOp::Eq, Expr::Var(r64), Expr::Imm(0, T::U64));
    } else if elements.is_some() && w > 1 {
        // An element column offset keeps the chunks aligned only when it is a multiple of
        // the chunk width (a tile coordinate always is).
        let at_chunk = Expr::cmp(
            CmpOp::Eq,
            Expr::bin(BinOp::And, coords[1].clone(), Expr::u32(w - 1)),
            Expr::u32(0),
        );
        aligned_e = Expr::AndP(Box::new(aligned_e), Box::new(at_chunk));
    }
    let aligned = lw.let_("aligned", T::Pred, aligned_e);
    // Whole tile inside the tensor (uniform over the CTA).
    let tile_r = add(mul(coords[0].clone(), Expr::u32(mult_r)), Expr::u32(bm));
    let tile_c = add(mul(coords[1].clone(), Expr::u32(mult_c)), Expr::u32(bn));
    let inside = Expr::AndP(
        Box::new(Expr::cmp(CmpOp::Le, tile_r, m.clone())),
        Box::new(Expr::cmp(CmpOp::Le, tile_c, n.clone())),
    );
    let fast = lw.let_(
        "fast",
        T::Pred,
        Expr::AndP(Box::new(inside), Box::new(Expr::Var(aligned))),
    );
    // Whole chunks only: aligned rows whose length is a multiple of `w` (uniform as well).
    // A one-row tile at an element offset counts the length from its own first column: its
    // chunks start `w`-aligned there, so a bound `c + k·w` (`x.at(r, c).within(M, c + k·w)`,
    // the whole vectors of a row of odd length) keeps every chunk wholly inside or wholly
    // past it (wrapping `u32` arithmetic keeps the remainder when the bound is below `c`).
    let span = match start_col {
        Some(tc) => Expr::bin(BinOp::Sub, n.clone(), Expr::Var(tc)),
        None => n.clone(),
    };
    let whole_chunks = Expr::cmp(
        CmpOp::Eq,
        Expr::bin(BinOp::And, span, Expr::u32(w - 1)),
        Expr::u32(0),
    );
    let masked = lw.let_(
        "masked",
        T::Pred,
        Expr::AndP(Box::new(Expr::Var(aligned)), Box::new(whole_chunks)),
    );
    let c64 = lw.var("col64", T::U64);
    lw.inst(Inst::cvt("u64.u32", c64, reg(col)));
    if fp4 {
        // The byte of a value pair: columns are values, two a byte.
        lw.inst(Inst::binary("shr.u64", c64, reg(c64), Operand::Imm(1)));
    }
    let mut drs: Vec<u32> = chunks.iter().map(|c| c.dr).collect();
    drs.sort();
    drs.dedup();
    let mut rows = Vec::new();
    for dr in drs {
        let r = lw.let_("row", T::U32, add(Expr::Var(row0), Expr::u32(dr)));
        let ok = lw.let_(
            "row_ok",
            T::Pred,
            Expr::cmp(CmpOp::Lt, Expr::Var(r), m.clone()),
        );
        let r64 = lw.var("row64", T::U64);
        lw.inst(Inst::cvt("u64.u32", r64, reg(r)));
        let a = lw.var("addr", T::U64);
        lw.inst(Inst::binary("mul.lo.u64", a, reg(r64), reg(stride)));
        lw.inst(Inst::binary("add.u64", a, reg(a), reg(c64)));
        lw.inst(Inst::binary(
            "shl.b64",
            a,
            reg(a),
            Operand::Imm(eb.trailing_zeros() as i64),
        ));
        lw.inst(Inst::binary("add.u64", a, reg(a), reg(ptr)));
        rows.push((dr, a, ok));
    }
    let access = Access {
        frag: frag(lw, buf)?,
        tile_elem: lw.k.buffers[buf].elem,
        elem,
        w,
        chunks,
        rows,
        col,
        cols: n,
        aligned,
    };
    Ok((access, Paths { fast, masked }))
}

/// The uniform predicates that choose a path (see the module docs).
pub(super) struct Paths {
    fast: Handle<Var>,
    masked: Handle<Var>,
}

impl Access {
    pub(super) fn row(&self, dr: u32) -> (Handle<Var>, Handle<Var>) {
        let r = self.rows.iter().find(|r| r.0 == dr).expect("row prepared");
        (r.1, r.2)
    }

    /// Emits the three paths around `chunk` (which emits one chunk, guarded or not).
    pub(super) fn paths(
        &self,
        lw: &mut Lower,
        paths: &Paths,
        mut chunk: impl FnMut(&Access, &mut Lower, &Chunk, Option<Handle<Var>>),
        mut element: impl FnMut(&Access, &mut Lower, &Chunk, u32, Handle<Var>),
    ) {
        let outer = std::mem::take(&mut lw.out);
        for c in &self.chunks {
            chunk(self, lw, c, None);
        }
        let then_body = std::mem::take(&mut lw.out);
        // Masked vectors: the row is inside and the chunk's columns before `N`.
        for c in &self.chunks {
            let (_, row_ok) = self.row(c.dr);
            let colc = add(Expr::Var(self.col), Expr::u32(c.dc));
            let whole = Expr::AndP(
                Box::new(Expr::Var(row_ok)),
                Box::new(Expr::cmp(
                    CmpOp::Le,
                    add(colc, Expr::u32(self.w)),
                    self.cols.clone(),
                )),
            );
            let pv = lw.let_("whole", T::Pred, whole);
            chunk(self, lw, c, Some(pv));
        }
        let masked_body = std::mem::take(&mut lw.out);
        for c in &self.chunks {
            let (_, row_ok) = self.row(c.dr);
            let colc = add(Expr::Var(self.col), Expr::u32(c.dc));
            let whole = Expr::AndP(
                Box::new(Expr::AndP(
                    Box::new(Expr::Var(row_ok)),
                    Box::new(Expr::Var(self.aligned)),
                )),
                Box::new(Expr::cmp(
                    CmpOp::Le,
                    add(colc.clone(), Expr::u32(self.w)),
                    self.cols.clone(),
                )),
            );
            let pv = lw.let_("whole", T::Pred, whole);
            chunk(self, lw, c, Some(pv));
            if self.w > 1 {
                for e in 0..self.w {
                    let ok = Expr::AndP(
                        Box::new(Expr::AndP(
                            Box::new(Expr::Not(Box::new(Expr::Var(pv)))),
                            Box::new(Expr::Var(row_ok)),
                        )),
                        Box::new(Expr::cmp(
                            CmpOp::Lt,
                            add(colc.clone(), Expr::u32(e)),
                            self.cols.clone(),
                        )),
                    );
                    let pe = lw.let_("in", T::Pred, ok);
                    element(self, lw, c, e, pe);
                }
            }
        }
        let edge_body = std::mem::take(&mut lw.out);
        lw.emit(StmtKind::If {
            cond: Expr::Var(paths.masked),
            then_body: masked_body,
            else_body: edge_body,
        });
        let else_body = std::mem::replace(&mut lw.out, outer);
        lw.emit(StmtKind::If {
            cond: Expr::Var(paths.fast),
            then_body,
            else_body,
        });
    }
}

fn guard(i: Inst, p: Option<Handle<Var>>) -> Inst {
    match p {
        Some(p) => i.guarded(p, false),
        None => i,
    }
}

/// `copy(tile, tensor.tile(r, c))`, or `tensor.at(r, c)[.within(…)]` with `elements` the
/// bounds ([`crate::ir::TileRef::Global`]).
pub fn load(
    lw: &mut Lower,
    buf: Handle<crate::ir::Buffer>,
    tensor: &str,
    coords: &[Expr],
    elements: Option<&[Expr]>,
) -> Result<(), Diagnostics> {
    let (a, paths) = prepare(lw, buf, tensor, coords, elements)?;
    // Elements outside the tensor read as 0.
    let zero = match a.tile_elem {
        ElemType::F32 => Operand::F32Bits(0),
        _ => Operand::Imm(0),
    };
    let ty = super::reg_type(a.tile_elem).name();
    let outer = std::mem::take(&mut lw.out);
    for &r in &a.frag {
        lw.inst(Inst::mov(ty, r, zero.clone()));
    }
    let zeros = std::mem::replace(&mut lw.out, outer);
    // 16-bit chunks load into zeroed words, unpacked into every register of the chunk, so
    // their registers need no zeroing of their own.
    let zeroed = a.elem.bytes() == 2 && !a.elem.is_int() && a.w > 1;
    a.paths(
        lw,
        &paths,
        |a, lw, c, p| {
            // Before the first chunk of each guarded path.
            if p.is_some() && c.reg0 == 0 && !zeroed {
                lw.out.extend(zeros.iter().cloned());
            }
            load_chunk(a, lw, c, p)
        },
        load_element,
    );
    Ok(())
}

fn load_chunk(a: &Access, lw: &mut Lower, c: &Chunk, p: Option<Handle<Var>>) {
    let (addr, _) = a.row(c.dr);
    let off = (c.dc * a.elem.bytes()) as i64;
    let regs = &a.frag[c.reg0 as usize..(c.reg0 + a.w) as usize];
    match (a.elem, a.tile_elem) {
        (ElemType::F32, _) => lw.inst(guard(Inst::ld_global_vec("f32", regs, addr, off), p)),
        // Integer words move as bits (§9.7.9.8 `ld`: a `.b32` load fills any 32-bit register).
        (e, _) if e.is_int() => lw.inst(guard(Inst::ld_global_vec(word(e), regs, addr, off), p)),
        (_, _) if a.w == 1 => {
            let p = p.unwrap_or_else(|| lw.pred_const(true));
            load_element(a, lw, c, 0, p)
        }
        (half, tile) => {
            let words: Vec<_> = (0..a.w / 2).map(|_| lw.var("ld", T::U32)).collect();
            if p.is_some() {
                for &wd in &words {
                    lw.inst(Inst::mov("b32", wd, Operand::Imm(0)));
                }
            }
            lw.inst(guard(Inst::ld_global_vec("b32", &words, addr, off), p));
            unpack_words(lw, &words, regs, half, tile);
        }
    }
}

/// Splits 32-bit words of packed 16-bit `half` values into the tile registers `regs` (two
/// per word, the lower address in the lower half), widening them when the tile is f32.
pub(crate) fn unpack_words(
    lw: &mut Lower,
    words: &[Handle<Var>],
    regs: &[Handle<Var>],
    half: ElemType,
    tile: ElemType,
) {
    for (k, &wd) in words.iter().enumerate() {
        let (lo, hi) = (regs[2 * k], regs[2 * k + 1]);
        if tile == half {
            lw.inst(Inst::unpack_b32(lo, hi, wd));
        } else {
            let (hl, hh) = (lw.var("h", T::B16), lw.var("h", T::B16));
            lw.inst(Inst::unpack_b32(hl, hh, wd));
            lw.inst(Inst::cvt_f32_from(half.name(), lo, hl));
            lw.inst(Inst::cvt_f32_from(half.name(), hi, hh));
        }
    }
}

/// Packs pairs of tile registers into 32-bit words of 16-bit `half` values: f32 values
/// rounded in pairs (`cvt.rn.bf16x2.f32`), 16-bit ones moved.
pub(crate) fn pack_words(
    lw: &mut Lower,
    regs: &[Handle<Var>],
    half: ElemType,
    tile: ElemType,
) -> Vec<Handle<Var>> {
    regs.chunks(2)
        .map(|pair| {
            let wd = lw.var("st", T::U32);
            let (lo, hi) = (pair[0], pair[1]);
            if tile == ElemType::F32 {
                lw.inst(Inst::cvt_rn_pack(half.name(), wd, hi, lo));
            } else {
                lw.inst(Inst::pack_b32(wd, lo, hi));
            }
            wd
        })
        .collect()
}

/// Rounds f32 registers to an 8-bit float type in pairs (`cvt.rn.satfinite.e4m3x2.f32 h,
/// hi, lo`: the first source in the upper byte, the higher address, §9.7.9.21) and packs the
/// pairs two to a 32-bit word (`mov.b32 {lo, hi}`); two values give one 16-bit word.
pub(crate) fn pack_fp8(lw: &mut Lower, regs: &[Handle<Var>], fp8: ElemType) -> Vec<Handle<Var>> {
    let halves: Vec<Handle<Var>> = regs
        .chunks(2)
        .map(|pair| {
            let h = lw.var("q", T::B16);
            lw.inst(Inst::cvt_rn_satfinite_fp8x2(
                fp8.name(),
                h,
                reg(pair[1]),
                reg(pair[0]),
            ));
            h
        })
        .collect();
    if halves.len() == 1 {
        return halves;
    }
    halves
        .chunks(2)
        .map(|hl| {
            let wd = lw.var("st", T::U32);
            lw.inst(Inst::pack_b32(wd, hl[0], hl[1]));
            wd
        })
        .collect()
}

/// Rounds an even number (2 to 16) of f32 registers to FP4 E2M1 in pairs
/// (`cvt.rn.satfinite.e2m1x2.f32 c, hi, lo`: the first source, the odd column, in the upper
/// nibble, §9.7.9.21 — the `e2m1x2` layout, the lower column in the low nibble) and stores
/// the bytes at `addr + off`: one by `st.global.b8`, two as the low half of a word packed by
/// `mov.b32 {c0, c1, c0, c1}` (`st.global.b16`), four as a word, eight as two (`.v2.b32`).
fn store_fp4(
    lw: &mut Lower,
    regs: &[Handle<Var>],
    addr: Handle<Var>,
    off: i64,
    p: Option<Handle<Var>>,
) {
    let bytes: Vec<Handle<Var>> = regs
        .chunks(2)
        .map(|pair| {
            let c = lw.var("q", T::B8);
            lw.inst(Inst::cvt_rn_satfinite_e2m1x2(c, reg(pair[1]), reg(pair[0])));
            c
        })
        .collect();
    match bytes[..] {
        [b] => lw.inst(guard(Inst::st_global("b8", addr, off, reg(b)), p)),
        [b0, b1] => {
            let wd = lw.var("st", T::U32);
            lw.inst(Inst::pack_b32_bytes(wd, [b0, b1, b0, b1]));
            lw.inst(guard(Inst::st_global("b16", addr, off, reg(wd)), p));
        }
        _ => {
            let words: Vec<Handle<Var>> = bytes
                .chunks(4)
                .map(|q| {
                    let wd = lw.var("st", T::U32);
                    lw.inst(Inst::pack_b32_bytes(wd, [q[0], q[1], q[2], q[3]]));
                    wd
                })
                .collect();
            lw.inst(guard(Inst::st_global_vec("b32", addr, off, &words), p));
        }
    }
}

/// The values a store of a `tile` tile into `elem` memory writes, one register each: the
/// tile's own registers when the types agree or when pairs will be rounded as they are packed
/// (`w > 1`), else each value rounded (f32 → 16-bit) or widened (16-bit → f32) alone.
pub(crate) fn store_values(
    lw: &mut Lower,
    frag: &[Handle<Var>],
    tile: ElemType,
    elem: ElemType,
    w: u32,
) -> Vec<Handle<Var>> {
    match (tile, elem) {
        (t, e) if t == e => frag.to_vec(),
        // 8-bit floats are rounded in pairs as they are packed (`store_fp8`); integers give
        // their low bytes.
        (_, e) if e.bytes() == 1 => frag.to_vec(),
        (ElemType::F32, half) if w == 1 => frag
            .iter()
            .map(|&r| {
                let h = lw.var("h", T::B16);
                lw.inst(Inst::cvt_rn_f32_to(half.name(), h, r));
                h
            })
            .collect(),
        (ElemType::F32, _) => frag.to_vec(),
        (half, _) => frag
            .iter()
            .map(|&r| {
                let f = lw.var("w", T::F32);
                lw.inst(Inst::cvt_f32_from(half.name(), f, r));
                f
            })
            .collect(),
    }
}

fn load_element(a: &Access, lw: &mut Lower, c: &Chunk, e: u32, p: Handle<Var>) {
    let (addr, _) = a.row(c.dr);
    let off = ((c.dc + e) * a.elem.bytes()) as i64;
    let r = a.frag[(c.reg0 + e) as usize];
    match (a.elem, a.tile_elem) {
        (ElemType::F32, _) => lw.inst(Inst::ld_global("f32", r, addr, off).guarded(p, false)),
        (e, _) if e.is_int() => lw.inst(Inst::ld_global(word(e), r, addr, off).guarded(p, false)),
        (half, tile) if tile == half => {
            lw.inst(Inst::ld_global("b16", r, addr, off).guarded(p, false))
        }
        (half, _) => {
            let h = lw.var("h", T::B16);
            lw.inst(Inst::mov("b16", h, Operand::Imm(0)));
            lw.inst(Inst::ld_global("b16", h, addr, off).guarded(p, false));
            lw.inst(Inst::cvt_f32_from(half.name(), r, h).guarded(p, false));
        }
    }
}

/// `copy(tensor.tile(r, c), tile)`, or into `tensor.at(r, c)[.within(…)]` with `elements`
/// the bounds ([`crate::ir::TileRef::Global`]).
pub fn store(
    lw: &mut Lower,
    buf: Handle<crate::ir::Buffer>,
    tensor: &str,
    coords: &[Expr],
    elements: Option<&[Expr]>,
) -> Result<(), Diagnostics> {
    let (a, paths) = prepare(lw, buf, tensor, coords, elements)?;
    // Convert once, before either path: the values the tensor receives, one register each
    // (16-bit values in b16 registers, f32 in f32).
    let vals = store_values(lw, &a.frag, a.tile_elem, a.elem, a.w);
    a.paths(
        lw,
        &paths,
        |a, lw, c, p| store_chunk(a, lw, &vals, c, p),
        |a, lw, c, e, p| store_element(a, lw, &vals, c, e, p),
    );
    Ok(())
}

fn store_chunk(
    a: &Access,
    lw: &mut Lower,
    vals: &[Handle<Var>],
    c: &Chunk,
    p: Option<Handle<Var>>,
) {
    let (addr, _) = a.row(c.dr);
    let off = (c.dc * a.elem.bytes()) as i64;
    let regs = &vals[c.reg0 as usize..(c.reg0 + a.w) as usize];
    if a.elem == ElemType::E2m1x2 {
        return store_fp4(lw, regs, addr, i64::from(c.dc / 2), p);
    }
    if a.w == 1 {
        let p = p.unwrap_or_else(|| lw.pred_const(true));
        return store_element(a, lw, vals, c, 0, p);
    }
    match a.elem {
        e if e.is_fp8() => {
            let words = pack_fp8(lw, regs, e);
            let ty = if a.w == 2 { "b16" } else { "b32" };
            lw.inst(guard(Inst::st_global_vec(ty, addr, off, &words), p));
        }
        ElemType::F32 => lw.inst(guard(Inst::st_global_vec("f32", addr, off, regs), p)),
        e if e.is_int() => lw.inst(guard(Inst::st_global_vec(word(e), addr, off, regs), p)),
        half => {
            let words = pack_words(lw, regs, half, a.tile_elem);
            lw.inst(guard(Inst::st_global_vec("b32", addr, off, &words), p));
        }
    }
}

fn store_element(
    a: &Access,
    lw: &mut Lower,
    vals: &[Handle<Var>],
    c: &Chunk,
    e: u32,
    p: Handle<Var>,
) {
    let (addr, _) = a.row(c.dr);
    let off = ((c.dc + e) * a.elem.bytes()) as i64;
    let v = vals[(c.reg0 + e) as usize];
    if a.elem == ElemType::E2m1x2 {
        // A pair at a time: the even element stores the byte of itself and the next (both
        // inside or both past `N`, which is even), the odd one nothing.
        if e.is_multiple_of(2) {
            let pair = &vals[(c.reg0 + e) as usize..(c.reg0 + e + 2) as usize];
            store_fp4(lw, pair, addr, i64::from((c.dc + e) / 2), Some(p));
        }
        return;
    }
    match (a.elem, lw.k.vars[v].ty) {
        (e, _) if e.is_fp8() => {
            // One byte: the pair's upper byte rounds 0 and is not stored (`st.global.b8`
            // stores the register's low byte, §9.7.9.10).
            let h = lw.var("q", T::B16);
            lw.inst(Inst::cvt_rn_satfinite_fp8x2(
                e.name(),
                h,
                Operand::F32Bits(0),
                reg(v),
            ));
            lw.inst(Inst::st_global("b8", addr, off, reg(h)).guarded(p, false));
        }
        // The low byte of a 32-bit register (§9.7.9.10 st; §5.2.4: the register may be wider
        // than the instruction's type).
        (e, _) if e.bytes() == 1 => {
            lw.inst(Inst::st_global("b8", addr, off, reg(v)).guarded(p, false))
        }
        (ElemType::F32, _) => lw.inst(Inst::st_global("f32", addr, off, reg(v)).guarded(p, false)),
        (e, _) if e.is_int() => {
            lw.inst(Inst::st_global(word(e), addr, off, reg(v)).guarded(p, false))
        }
        (_, T::B16) => lw.inst(Inst::st_global("b16", addr, off, reg(v)).guarded(p, false)),
        (half, _) => {
            let h = lw.var("h", T::B16);
            lw.inst(Inst::cvt_rn_f32_to(half.name(), h, v));
            lw.inst(Inst::st_global("b16", addr, off, reg(h)).guarded(p, false));
        }
    }
}
