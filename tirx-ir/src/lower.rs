//! The lowering context shared by the dispatch variants and the lowering passes: emits
//! statements, makes variables, computes shared-memory and barrier addresses, and registers
//! kernel parameters in the signature on first use.
//!
//! Invariant: addresses are computed from offsets that `plan_memory` assigned; calling an
//! address helper before it ran is an internal error reported as a diagnostic.

use crate::abi::{AbiParam, ElemType, Swizzle};
use crate::arena::Handle;
use crate::diag::{Diagnostic, Diagnostics};
use crate::dispatch::Reject;
use crate::ir::{
    BarRef, Barrier, BinOp, Buffer, Expr, Inst, Kernel, Op, ScalarType, Span, Special, Stmt,
    StmtKind, Var,
};
use std::collections::HashMap;

/// An op that cannot be lowered as written, or a compiler bug found while lowering.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// The variant's check refuses the op (found again when lowering it).
    #[error(transparent)]
    Rejected(#[from] Reject),
    /// A global tile with another number of coordinates than the epilogue stores.
    #[error("`{tensor}.tile(..)` needs 2 coordinates here")]
    TileCoords {
        /// The tensor.
        tensor: String,
    },
    /// An epilogue into a tensor that is not 2-D.
    #[error("`{tensor}` has rank {rank}; the register/TMEM epilogue stores 2-D tiles")]
    EpilogueRank {
        /// The tensor.
        tensor: String,
        /// Its rank.
        rank: usize,
    },
    /// A scale naming something that is not a scalar argument.
    #[error("`{name}` is not a scalar argument of the kernel")]
    NotScalar {
        /// The name.
        name: String,
    },
    /// A buffer or barrier address asked for before `plan-memory` placed it.
    #[error("internal error: {what} `{name}` has no offset")]
    Unplanned {
        /// "buffer" or "barrier".
        what: &'static str,
        /// Its name.
        name: String,
    },
    /// A register-tile op that does not fit its tiles' layouts or types.
    #[error(transparent)]
    RegTile(#[from] crate::regtile::RegTileError),
    /// A compiler bug: an invariant an earlier pass guarantees does not hold.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Emits the statements that replace one tile op.
pub struct Lower<'k> {
    /// The kernel being lowered (for variables, buffers, the signature).
    pub k: &'k mut Kernel,
    /// The replacement statements.
    pub out: Vec<Stmt>,
    /// The span every emitted statement carries (the tile op's).
    pub span: Span,
    /// Register fragments of `Space::Reg` buffers, allocated once per kernel.
    pub frags: &'k mut HashMap<Handle<Buffer>, Vec<Handle<Var>>>,
    /// Variables whose value depends on data loaded from global memory (a scalar `gather`,
    /// directly or through `let`s): indices and TMA coordinates that read them are checked
    /// by the emulator (`crate::regtile::gather::data_vars`).
    pub data: &'k std::collections::HashSet<Handle<Var>>,
    /// Per receive barrier of a cluster exchange that runs again (`regtile::reduce`): the
    /// count of its executions so far, a variable the prologue sets to 0.
    pub rounds: &'k HashMap<Handle<Barrier>, Handle<Var>>,
}

/// `a + b` on u32 expressions, folding immediates.
pub fn add(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Imm(0, _), _) => b,
        (_, Expr::Imm(0, _)) => a,
        (Expr::Imm(x, t), Expr::Imm(y, _)) => Expr::Imm(x + y, *t),
        _ => Expr::bin(BinOp::Add, a, b),
    }
}

/// `a * b` on u32 expressions, folding immediates.
pub fn mul(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Imm(1, _), _) => b,
        (_, Expr::Imm(1, _)) => a,
        (Expr::Imm(x, t), Expr::Imm(y, _)) => Expr::Imm(x * y, *t),
        _ => Expr::bin(BinOp::Mul, a, b),
    }
}

impl<'k> Lower<'k> {
    /// A fresh variable.
    pub fn var(&mut self, name: &str, ty: ScalarType) -> Handle<Var> {
        self.k.new_var(name, ty)
    }
    /// Emits a statement kind at the op's span.
    pub fn emit(&mut self, kind: StmtKind) {
        self.out.push(Stmt::at(kind, self.span));
    }
    /// `let v = e` into a fresh variable.
    pub fn let_(&mut self, name: &str, ty: ScalarType, e: Expr) -> Handle<Var> {
        let v = self.var(name, ty);
        self.emit(StmtKind::Let { var: v, value: e });
        v
    }
    /// Emits an instruction.
    pub fn inst(&mut self, i: Inst) {
        self.emit(StmtKind::Inst(i));
    }
    /// Emits a synchronisation op (lowered later by `lower-sync-ops`).
    pub fn op(&mut self, op: Op) {
        self.emit(StmtKind::Op(op));
    }
    /// An internal error at the op.
    pub fn internal(&self, msg: impl Into<String>) -> Diagnostics {
        self.error(LowerError::Internal(msg.into()))
    }
    /// An error at the op.
    pub fn error(&self, e: impl Into<LowerError>) -> Diagnostics {
        vec![Diagnostic::new(self.span, e.into())]
    }

    /// Shared-window address of `buf[index…]` (u32).
    pub fn smem_addr(&self, buf: Handle<Buffer>, index: &[Expr]) -> Result<Expr, Diagnostics> {
        let b = &self.k.buffers[buf];
        let off = b.offset.ok_or_else(|| {
            self.error(LowerError::Unplanned {
                what: "buffer",
                name: b.name.clone(),
            })
        })?;
        let eb = b.elem.bytes();
        let mut e = add(Expr::Special(Special::SmemBase), Expr::u32(off));
        for (i, ix) in index.iter().enumerate() {
            e = add(e, mul(ix.clone(), Expr::u32(b.layout.stride[i] * eb)));
        }
        Ok(e)
    }
    /// Shared-window address of one mbarrier (u32).
    pub fn bar_addr(&self, r: &BarRef) -> Result<Expr, Diagnostics> {
        let b = &self.k.barriers[r.bar];
        let off = b.offset.ok_or_else(|| {
            self.error(LowerError::Unplanned {
                what: "barrier",
                name: b.name.clone(),
            })
        })?;
        Ok(add(
            add(Expr::Special(Special::SmemBase), Expr::u32(off)),
            mul(r.index.clone(), Expr::u32(8)),
        ))
    }
    /// The barrier's address in a fresh variable.
    pub fn bar_addr_var(&mut self, r: &BarRef) -> Result<Handle<Var>, Diagnostics> {
        let e = self.bar_addr(r)?;
        Ok(self.let_("mbar", ScalarType::U32, e))
    }
    /// Registers a kernel parameter (once) and returns its PTX name.
    pub fn param(&mut self, p: AbiParam) -> String {
        let name = p.ptx_name();
        if !self.k.sig.params.contains(&p) {
            self.k.sig.params.push(p);
        }
        name
    }
    /// The generic address of the tensor map of `tensor` with this box, in a fresh variable.
    pub fn tensor_map(
        &mut self,
        tensor: &str,
        box_dims: Vec<u32>,
        swizzle: Swizzle,
    ) -> Handle<Var> {
        let name = self.param(AbiParam::TensorMap {
            tensor: tensor.into(),
            box_dims,
            swizzle,
        });
        let v = self.var("tmap", ScalarType::U64);
        for i in Inst::cvta_param(v, &name) {
            self.inst(i);
        }
        v
    }
    /// A u32 kernel-parameter value of a shape symbol; a fixed extent (a literal in a tensor's
    /// declared shape, which the launch planner has checked) is an immediate.
    pub fn dim(&mut self, symbol: &str) -> Expr {
        if let Ok(v) = symbol.parse::<u32>() {
            return Expr::u32(v);
        }
        // An integer scalar argument is a runtime `u32` like a shape symbol (its 32 bits).
        if self.k.sig.int_scalar(symbol).is_some() {
            self.param(AbiParam::Scalar {
                name: symbol.into(),
            });
            return Expr::Dim(symbol.into());
        }
        self.param(AbiParam::Dim {
            symbol: symbol.into(),
        });
        Expr::Dim(symbol.into())
    }
    /// An `f32` kernel argument, loaded (`ld.param.f32`), or a 64-bit integer one
    /// (`ld.param.s64`/`.u64` into a 64-bit register); an error if the kernel has none of
    /// that name.
    pub fn scalar_param(&mut self, name: &str) -> Result<Handle<Var>, Diagnostics> {
        if !self.k.sig.scalars.iter().any(|s| s == name) {
            return Err(self.error(LowerError::NotScalar { name: name.into() }));
        }
        let p = self.param(AbiParam::Scalar { name: name.into() });
        let ty = match self.k.sig.int_scalar(name) {
            Some(ElemType::I64) => ScalarType::S64,
            Some(ElemType::U64) => ScalarType::U64,
            _ => ScalarType::F32,
        };
        let v = self.var(name, ty);
        self.inst(Inst::ld_param(ty.name(), v, &p));
        Ok(v)
    }
    /// A predicate: this CTA is the even one of its pair (`%cluster_ctarank & 1 == 0`), the
    /// CTA that issues the pair's `tcgen05.mma` and `tcgen05.commit` (PTX ISA §9.7.16.5).
    pub fn pair_issuer(&mut self) -> Handle<Var> {
        let bit = Expr::bin(
            crate::ir::BinOp::And,
            Expr::Special(crate::ir::Special::ClusterCtaRank),
            Expr::u32(1),
        );
        let e = Expr::cmp(crate::ir::CmpOp::Eq, bit, Expr::u32(0));
        self.let_("pair_even", ScalarType::Pred, e)
    }
    /// A predicate variable holding a constant.
    pub fn pred_const(&mut self, value: bool) -> Handle<Var> {
        self.let_(
            "p",
            ScalarType::Pred,
            Expr::Imm(value as i64, ScalarType::Pred),
        )
    }
    /// The element type of a tensor parameter.
    pub fn tensor_elem(&self, tensor: &str) -> Option<ElemType> {
        self.k
            .sig
            .tensors
            .iter()
            .find(|t| t.name == tensor)
            .map(|t| t.elem)
    }
    /// The shape symbols of a tensor parameter.
    pub fn tensor_shape(&self, tensor: &str) -> Vec<String> {
        self.k
            .sig
            .tensors
            .iter()
            .find(|t| t.name == tensor)
            .map(|t| t.shape.clone())
            .unwrap_or_default()
    }
}
