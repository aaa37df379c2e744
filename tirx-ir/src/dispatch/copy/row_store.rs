//! Stores of f32 accumulator values into one row segment of a row-major global tensor,
//! converted to the tensor's element type, shared by the register and TMEM epilogues.
//!
//! Each segment takes one of two paths, chosen per thread at run time:
//! - fast: the whole segment is inside the tensor and its address is aligned for pairs, so
//!   adjacent columns go out as one packed store (`cvt.rn.bf16x2.f32` + `st.global.b32`, or
//!   `st.global.v2.f32`), with no predicates;
//! - tail: every element is guarded by its own bounds predicate (rows ≥ M, columns ≥ N are
//!   skipped), which is how tiles hanging over the tensor's edge are handled without padding.
//!
//! PTX used: §9.7.9.21 (cvt, the `.bf16x2`/`.f16x2` packing forms: `d.hi` from the first
//! source), §9.7.9.10 (st, `.v2`), §9.7.7.1 (setp).

use crate::abi::{AbiParam, ElemType};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{CmpOp, Expr, Inst, Operand, ScalarType as T, StmtKind, Var};
use crate::lower::{Lower, LowerError, add};

/// One row segment `tensor[row, col0 + j]`.
pub struct RowStore {
    addr: Handle<Var>,
    col0: Expr,
    row_ok: Handle<Var>,
    cols: Expr,
    elem: ElemType,
}

impl RowStore {
    /// Prepares stores to `tensor[row, col0 + …]`; `bounds` (`[rows, cols]`, `.within(…)`)
    /// clip further than the tensor's extents.
    pub fn new(
        lw: &mut Lower,
        tensor: &str,
        row: Expr,
        col0: Expr,
        bounds: Option<&[Expr]>,
    ) -> Result<RowStore, Diagnostics> {
        let shape = lw.tensor_shape(tensor);
        let elem = lw
            .tensor_elem(tensor)
            .ok_or_else(|| lw.internal(format!("unknown tensor `{tensor}`")))?;
        if shape.len() != 2 {
            return Err(lw.error(LowerError::EpilogueRank {
                tensor: tensor.into(),
                rank: shape.len(),
            }));
        }
        let mut rows = lw.dim(&shape[0]);
        let mut cols = lw.dim(&shape[1]);
        if let Some([br, bc]) = bounds {
            rows = Expr::bin(crate::ir::BinOp::Min, rows, br.clone());
            cols = Expr::bin(crate::ir::BinOp::Min, cols, bc.clone());
        }
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
        let col_v = lw.let_("col0", T::U32, col0);
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
        let shift = Operand::Imm(elem.bytes().trailing_zeros() as i64);
        lw.inst(Inst::binary("shl.b64", off, reg(off), shift));
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

    /// Stores every `(j, v)`: `v` (f32) at column `col0 + j`. Pairs `(j, j + 1)` with `j` even
    /// that appear next to each other go out packed on the fast path.
    pub fn store_all(&self, lw: &mut Lower, vals: &[(u32, Handle<Var>)]) {
        let Some(last) = vals.iter().map(|(j, _)| *j).max() else {
            return;
        };
        // Fast path when the whole segment is in bounds and pairs are aligned.
        let pair_bytes = 2 * self.elem.bytes() as i64;
        let low = lw.var("addr_low", T::U64);
        lw.inst(Inst::binary(
            "and.b64",
            low,
            reg(self.addr),
            Operand::Imm(pair_bytes - 1),
        ));
        let last_col = add(self.col0.clone(), Expr::u32(last));
        let in_cols = Expr::cmp(CmpOp::Lt, last_col, self.cols.clone());
        let aligned = Expr::cmp(CmpOp::Eq, Expr::Var(low), Expr::Imm(0, T::U64));
        let full = Expr::AndP(
            Box::new(Expr::AndP(Box::new(in_cols), Box::new(aligned))),
            Box::new(Expr::Var(self.row_ok)),
        );
        let full = lw.let_("full", T::Pred, full);
        let outer = std::mem::take(&mut lw.out);
        self.fast(lw, vals);
        let then_body = std::mem::take(&mut lw.out);
        for &(j, v) in vals {
            self.guarded(lw, j, v);
        }
        let else_body = std::mem::replace(&mut lw.out, outer);
        lw.emit(StmtKind::If {
            cond: Expr::Var(full),
            then_body,
            else_body,
        });
    }

    fn fast(&self, lw: &mut Lower, vals: &[(u32, Handle<Var>)]) {
        let mut i = 0;
        while i < vals.len() {
            let (j, v) = vals[i];
            let off = (j * self.elem.bytes()) as i64;
            if j % 2 == 0 && i + 1 < vals.len() && vals[i + 1].0 == j + 1 {
                let w = vals[i + 1].1;
                match self.elem {
                    // f32, or the s32 words of an i32 accumulator (kind::i8): stored as they are.
                    ElemType::F32 | ElemType::I32 => {
                        lw.inst(Inst::st_global_v2_f32(self.addr, off, v, w))
                    }
                    half => {
                        let packed = lw.var("packed", T::U32);
                        lw.inst(Inst::cvt_rn_pack(half.name(), packed, w, v));
                        lw.inst(Inst::st_global("b32", self.addr, off, reg(packed)));
                    }
                }
                i += 2;
            } else {
                self.unguarded(lw, off, v);
                i += 1;
            }
        }
    }

    fn unguarded(&self, lw: &mut Lower, off: i64, v: Handle<Var>) {
        match self.elem {
            ElemType::F32 | ElemType::I32 => {
                lw.inst(Inst::st_global("f32", self.addr, off, reg(v)))
            }
            half => {
                let h = lw.var("h", T::B16);
                lw.inst(Inst::cvt_rn_f32_to(half.name(), h, v));
                lw.inst(Inst::st_global("b16", self.addr, off, reg(h)));
            }
        }
    }

    fn guarded(&self, lw: &mut Lower, j: u32, v: Handle<Var>) {
        let col = add(self.col0.clone(), Expr::u32(j));
        let ok = Expr::AndP(
            Box::new(Expr::cmp(CmpOp::Lt, col, self.cols.clone())),
            Box::new(Expr::Var(self.row_ok)),
        );
        let p = lw.let_("in", T::Pred, ok);
        let off = (j * self.elem.bytes()) as i64;
        match self.elem {
            ElemType::F32 | ElemType::I32 => {
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
