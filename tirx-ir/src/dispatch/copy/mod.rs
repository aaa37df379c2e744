//! Copy variants, and the tile-shape checks they share.

pub mod reg_epilogue;
pub mod tma_load;
pub mod tma_store;
pub mod tmem_epilogue;

use crate::abi::Swizzle;
use crate::ir::{Buffer, Kernel, TileRef};

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
    if b.layout != crate::ir::Layout::row_major(&b.layout.shape, b.layout.swizzle) {
        return Err(format!(
            "`{}` is not dense row-major, which is the layout a TMA box has",
            b.name
        ));
    }
    let _ = Swizzle::None;
    Ok((b, dims))
}

/// Guarded stores of f32 values into one row segment of a row-major global tensor, converted
/// to the tensor's element type; elements outside `[0, rows) × [0, cols)` are skipped, which
/// is how tails are handled without padding.
pub struct RowStore {
    addr: crate::arena::Handle<crate::ir::Var>,
    col0: crate::ir::Expr,
    row_ok: crate::arena::Handle<crate::ir::Var>,
    cols: crate::ir::Expr,
    elem: crate::abi::ElemType,
}

impl RowStore {
    /// Prepares stores to `tensor[row, col0 + …]`.
    pub fn new(
        lw: &mut crate::lower::Lower,
        tensor: &str,
        row: crate::ir::Expr,
        col0: crate::ir::Expr,
    ) -> Result<RowStore, crate::diag::Diagnostics> {
        use crate::abi::AbiParam;
        use crate::inst::reg;
        use crate::ir::{CmpOp, Expr, Inst, Operand, ScalarType as T};
        let shape = lw.tensor_shape(tensor);
        let elem = lw
            .tensor_elem(tensor)
            .ok_or_else(|| lw.internal(format!("unknown tensor `{tensor}`")))?;
        if shape.len() != 2 {
            return Err(lw.error(format!(
                "`{tensor}` has rank {}; the register/TMEM epilogue stores 2-D tiles",
                shape.len()
            )));
        }
        let rows = lw.dim(&shape[0]);
        let cols = lw.dim(&shape[1]);
        let ptr_name = lw.param(AbiParam::Pointer {
            tensor: tensor.into(),
        });
        let stride_name = lw.param(AbiParam::Stride {
            tensor: tensor.into(),
            dim: 0,
        });
        let row_v = lw.let_("row", T::U32, row);
        let row_ok = lw.let_(
            "row_ok",
            T::Pred,
            Expr::cmp(CmpOp::Lt, Expr::Var(row_v), rows),
        );
        let col_v = lw.let_("col0", T::U32, col0.clone());
        let ptr = lw.var("ptr", T::U64);
        lw.inst(Inst::ld_param("u64", ptr, &ptr_name));
        let stride = lw.var("stride", T::U64);
        lw.inst(Inst::ld_param("u64", stride, &stride_name));
        let r64 = lw.var("row64", T::U64);
        lw.inst(Inst::cvt("u64.u32", r64, reg(row_v)));
        let c64 = lw.var("col64", T::U64);
        lw.inst(Inst::cvt("u64.u32", c64, reg(col_v)));
        let off = lw.var("off", T::U64);
        lw.inst(Inst::binary("mul.lo.u64", off, reg(r64), reg(stride)));
        lw.inst(Inst::binary("add.u64", off, reg(off), reg(c64)));
        lw.inst(Inst::binary(
            "shl.b64",
            off,
            reg(off),
            Operand::Imm(elem.bytes().trailing_zeros() as i64),
        ));
        let addr = lw.var("addr", T::U64);
        lw.inst(Inst::binary("add.u64", addr, reg(ptr), reg(off)));
        Ok(RowStore {
            addr,
            col0: Expr::Var(col_v),
            row_ok,
            cols,
            elem,
        })
    }

    /// Stores `v` (f32) at column `col0 + j` if it is in bounds.
    pub fn store(
        &self,
        lw: &mut crate::lower::Lower,
        j: u32,
        v: crate::arena::Handle<crate::ir::Var>,
    ) {
        use crate::abi::ElemType;
        use crate::inst::reg;
        use crate::ir::{CmpOp, Expr, Inst, ScalarType as T};
        let col = crate::lower::add(self.col0.clone(), Expr::u32(j));
        let ok = Expr::AndP(
            Box::new(Expr::cmp(CmpOp::Lt, col, self.cols.clone())),
            Box::new(Expr::Var(self.row_ok)),
        );
        let p = lw.let_("in", T::Pred, ok);
        let off = (j * self.elem.bytes()) as i64;
        match self.elem {
            ElemType::F32 => {
                lw.inst(Inst::st_global("f32", self.addr, off, reg(v)).guarded(p, false))
            }
            half => {
                let h = lw.var("h", T::B16);
                lw.inst(Inst::cvt_rn_f32_to(half.name(), h, v));
                lw.inst(Inst::st_global("b16", self.addr, off, reg(h)).guarded(p, false));
            }
        }
    }
}
