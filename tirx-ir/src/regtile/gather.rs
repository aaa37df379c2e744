//! `gather(x, row, col)` and `gather(v, i)`: an element of a global tensor at indices computed
//! per element of a register tile (data-dependent coordinates: a class target per row, a
//! token id, a page-table entry), as a term of a tile expression.
//!
//! Before: `compute @xt = (gather x (add (int …) (row)) @tg)`
//! After (per register, or once per statistic register when the indices only vary along
//! rows — the memo of `compute.rs` — unrolled):
//! `setp.lo.u32 %in0, %row, %M; setp.lo.u32 %in1, %col, %N; and.pred %in, %in0, %in1;`
//! `cvt.u64.u32; mul.lo.u64 (row stride); add.u64; shl.b64; add.u64 (base);`
//! `mov.f32 %v, 0f00000000; @%in ld.global.f32 %v, [%addr];`
//!
//! Bounds: each index is compared unsigned with its dimension, so an `i32` index below 0 is
//! out of range as well as one at or past the extent. An element whose indices are out of
//! range is not loaded and reads as 0 (the same fill as the edges of `reg_load`); the address
//! is computed but never dereferenced. A bf16/f16 tensor loads its 16 bits (`ld.global.b16`)
//! and widens where arithmetic reads it; an integer tensor loads `.b32` (`.b64` for `i64`/
//! `u64`) words into an integer value of its own type.
//!
//! Checked indices: an index that depends on loaded data — it reads a register tile, a
//! gathered value or a variable a scalar gather loaded ([`data_vars`]) — is a coordinate the
//! build cannot prove in range. Unless the gather says `oob = zero` (reading 0 there is
//! intended), its bound check is preceded by a PTX comment `// tirx.check gather TENSOR DIM`:
//! the GPU runs the same guarded load (an out-of-range element reads 0 and nothing faults),
//! and the emulator, which reads the comment, reports a lane whose check fails with the line,
//! the tensor, the dimension, the index and the extent. Indices built only from
//! `row_index`/`col_index`, constants and kernel scalars are a tile's edges, like `copy`'s,
//! and read 0 silently. The TMA load at a data-dependent coordinate is checked the same way
//! (`dispatch/copy/tma_load.rs`).
//!
//! PTX used: §9.7.9.8 `ld` (`ld.global`, guarded by a predicate, §9.7.1 "predicated
//! execution"), §9.7.7.1 `setp` (`.lo.u32`), §9.7.9.21 `cvt` (`u64.u32`), §9.7.1 integer
//! arithmetic on `.u64` addresses.

use super::{RegTileError, reg_type, tile_ttype, ttype as expr_ttype};
use crate::abi::{AbiParam, ElemType};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{Expr, Inst, Kernel, Op, Operand, ScalarType as T, StmtKind, TExpr, TType, Var};
use crate::lower::Lower;
use std::collections::HashSet;

/// The variables whose value depends on a word loaded from global memory: the destinations
/// of scalar gathers, and every variable a `let` or assignment computes from one (to a fixed
/// point, so the order of statements does not matter).
pub fn data_vars(k: &Kernel) -> HashSet<Handle<Var>> {
    let mut data = HashSet::new();
    loop {
        let before = data.len();
        crate::passes::walk::visit(&k.body, &mut |s, _| match &s.kind {
            StmtKind::Op(Op::LoadScalar { dst, .. }) => {
                data.insert(*dst);
            }
            StmtKind::Let { var, value } | StmtKind::Assign { var, value }
                if expr_reads(value, &data) =>
            {
                data.insert(*var);
            }
            _ => {}
        });
        if data.len() == before {
            return data;
        }
    }
}

/// Whether scalar expression `e` reads one of `data`.
pub fn expr_reads(e: &Expr, data: &HashSet<Handle<Var>>) -> bool {
    match e {
        Expr::Var(v) => data.contains(v),
        Expr::Imm(..) | Expr::Dim(_) | Expr::Special(_) => false,
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::AndP(a, b) => {
            expr_reads(a, data) || expr_reads(b, data)
        }
        Expr::Not(a) => expr_reads(a, data),
    }
}

/// Whether tile expression `x` depends on loaded data: it reads a register tile, a gather,
/// or a scalar of `data`.
pub fn reads_data(x: &TExpr, data: &HashSet<Handle<Var>>) -> bool {
    match x {
        TExpr::Tile(_) | TExpr::Gather { .. } => true,
        TExpr::F32(_) | TExpr::Arg(_) | TExpr::Index(_) => false,
        TExpr::Int(e) => expr_reads(e, data),
        TExpr::Un(_, a) => reads_data(a, data),
        TExpr::Bin(_, a, b) | TExpr::Cmp(_, a, b) => reads_data(a, data) || reads_data(b, data),
        TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => {
            reads_data(a, data) || reads_data(b, data) || reads_data(c, data)
        }
    }
}

/// A gather with its tensor's base, row stride and extents loaded.
pub(super) struct Gather {
    /// The tensor's name (for the emulator's check).
    tensor: String,
    /// Per dimension: whether its index is checked (`tirx.check`).
    check: Vec<bool>,
    elem: ElemType,
    ptr: Handle<Var>,
    /// The row stride in elements (rank 2 only).
    stride: Option<Handle<Var>>,
    /// The extent of each dimension (`u32`), outermost first.
    dims: Vec<Handle<Var>>,
}

/// The element type of tensor `tensor`, or why it cannot be gathered from.
pub fn tensor_elem(k: &Kernel, tensor: &str) -> Result<ElemType, RegTileError> {
    let t = k
        .sig
        .tensors
        .iter()
        .find(|t| t.name == tensor)
        .ok_or_else(|| RegTileError::Copy(format!("`{tensor}` is not a tensor parameter")))?;
    match t.elem {
        ElemType::F32 | ElemType::Bf16 | ElemType::F16 => Ok(t.elem),
        e if e.is_int() => Ok(e),
        e => Err(RegTileError::Copy(format!(
            "`gather` reads f32, bf16, f16, i32, u32, i64 or u64 tensors; `{tensor}` holds {}",
            e.name()
        ))),
    }
}

/// The type of `gather(tensor, index…)`: the tensor's element (16-bit floats widen where
/// arithmetic reads them); the indices are integers, one per dimension.
pub fn ttype(k: &Kernel, tensor: &str, index: &[TExpr]) -> Result<TType, RegTileError> {
    let elem = tensor_elem(k, tensor)?;
    let rank = k
        .sig
        .tensors
        .iter()
        .find(|t| t.name == tensor)
        .map_or(0, |t| t.shape.len());
    if !matches!(rank, 1 | 2) || index.len() != rank {
        return Err(RegTileError::Copy(format!(
            "`gather` takes one index per dimension of a vector [N] or a matrix [M, N] \
             (`gather(x, row, col)`, `gather(v, i)`); `{tensor}` has rank {rank} and {} \
             index(es) were given",
            index.len()
        )));
    }
    for i in index {
        let t = expr_ttype(k, i)?;
        if !matches!(t, TType::I32 | TType::U32) {
            return Err(RegTileError::Type {
                op: "gather",
                want: "integer indices (`i32` or `u32`: an integer tile, a statistic, `row_index(t)`, a scalar)",
                got: t.name(),
            });
        }
    }
    Ok(tile_ttype(elem))
}

/// Loads the tensor's base address, row stride and extents once, before the unrolled body.
pub(super) fn prepare(
    lw: &mut Lower,
    tensor: &str,
    check: Vec<bool>,
) -> Result<Gather, Diagnostics> {
    let elem = tensor_elem(lw.k, tensor).map_err(|e| lw.error(e))?;
    let shape = lw.tensor_shape(tensor);
    let ptr_name = lw.param(AbiParam::Pointer {
        tensor: tensor.into(),
    });
    let ptr = lw.var("gptr", T::U64);
    lw.inst(Inst::ld_param("u64", ptr, &ptr_name));
    let stride = (shape.len() == 2).then(|| {
        let name = lw.param(AbiParam::Stride {
            tensor: tensor.into(),
            dim: 0,
        });
        let s = lw.var("gstride", T::U64);
        lw.inst(Inst::ld_param("u64", s, &name));
        s
    });
    let dims = shape
        .iter()
        .map(|sym| {
            let e = lw.dim(sym);
            lw.let_("gdim", T::U32, e)
        })
        .collect();
    Ok(Gather {
        tensor: tensor.to_owned(),
        check,
        elem,
        ptr,
        stride,
        dims,
    })
}

/// One gathered element at `index` (one value per dimension): a guarded load, 0 outside.
pub(super) fn load(lw: &mut Lower, g: &Gather, index: &[Operand]) -> (Operand, TType) {
    // In range: every index below its extent, compared unsigned (a negative i32 is huge).
    let mut ok: Option<Handle<Var>> = None;
    for (d, (ix, dim)) in index.iter().zip(&g.dims).enumerate() {
        if g.check[d] {
            lw.inst(Inst::tirx_check("gather", &g.tensor, &[d as i64]));
        }
        let p = lw.var("gin", T::Pred);
        lw.inst(Inst::setp("lo", "u32", p, ix.clone(), reg(*dim)));
        ok = Some(match ok {
            None => p,
            Some(q) => {
                let a = lw.var("gin", T::Pred);
                lw.inst(Inst::binary("and.pred", a, reg(q), reg(p)));
                a
            }
        });
    }
    let ok = ok.expect("a gather has an index");
    // Element offset: `row * stride + col` (rank 2) or `i` (rank 1), in bytes from the base.
    let off = lw.var("goff", T::U64);
    lw.inst(Inst::cvt("u64.u32", off, index[0].clone()));
    if let (Some(stride), Some(col)) = (g.stride, index.get(1)) {
        let c = lw.var("gcol", T::U64);
        lw.inst(Inst::cvt("u64.u32", c, col.clone()));
        lw.inst(Inst::binary("mul.lo.u64", off, reg(off), reg(stride)));
        lw.inst(Inst::binary("add.u64", off, reg(off), reg(c)));
    }
    let eb = g.elem.bytes() as i64;
    lw.inst(Inst::binary(
        "shl.b64",
        off,
        reg(off),
        Operand::Imm(eb.trailing_zeros() as i64),
    ));
    lw.inst(Inst::binary("add.u64", off, reg(off), reg(g.ptr)));
    let rt = reg_type(g.elem);
    let d = lw.var("g", rt);
    let (zero, ld) = match g.elem {
        ElemType::F32 => (Operand::F32Bits(0), "f32"),
        e if e.is_int64() => (Operand::Imm(0), "b64"),
        e if e.is_int() => (Operand::Imm(0), "b32"),
        _ => (Operand::Imm(0), "b16"),
    };
    lw.inst(Inst::mov(rt.name(), d, zero));
    lw.inst(Inst::ld_global(ld, d, off, 0).guarded(ok, false));
    (reg(d), tile_ttype(g.elem))
}

/// `LoadScalar`: `dst` ← the word of integer tensor `tensor` at `index` (`u32` scalars), 0
/// when an index is out of range (same bounds and fill as the tile form; an index that reads
/// loaded data is checked unless `oob_zero`).
pub fn load_scalar(
    lw: &mut Lower,
    dst: Handle<Var>,
    tensor: &str,
    index: &[crate::ir::Expr],
    oob_zero: bool,
) -> Result<(), Diagnostics> {
    let check = index
        .iter()
        .map(|e| !oob_zero && expr_reads(e, lw.data))
        .collect();
    let g = prepare(lw, tensor, check)?;
    if !g.elem.is_int() || g.elem.is_int64() || index.len() != g.dims.len() {
        return Err(lw.internal(format!(
            "load_scalar of `{tensor}`: an i32/u32 tensor with one index per dimension"
        )));
    }
    let ix: Vec<Operand> = index
        .iter()
        .map(|e| reg(lw.let_("gidx", T::U32, e.clone())))
        .collect();
    let (v, _) = load(lw, &g, &ix);
    lw.inst(Inst::mov("b32", dst, v));
    Ok(())
}
