//! `gather(x, row, col)` / `gather(v, i)`: loads at data-dependent indices. In a tile
//! expression it is `TExpr::Gather` (per element, the indices integer tile expressions); as the
//! whole value of a `let` whose indices are scalars, of an `i32`/`u32` tensor, it is a scalar
//! load (`Op::LoadScalar`) into a `u32` variable usable anywhere a scalar is — a TMA tile
//! coordinate from a page table or `cu_seqlens`. Lowering: `tirx-ir/src/regtile/gather.rs`.
//! `oob = zero` says an index out of range reads 0 by intent (no emulator check).

use super::tile::callee;
use super::{Local, Lowerer, Res};
use syn::{Expr as SExpr, Ident};
use tirx_ir::ir::{Buffer, Op, TExpr};
use tirx_ir::{Block, Handle, ScalarType, Stmt, StmtKind};

impl Lowerer<'_> {
    /// `gather(x, row, col)` / `gather(v, i)`: the tensor, then one integer index expression
    /// per dimension (checked for rank here, for type where the expression is typed).
    pub(crate) fn gather(
        &mut self,
        c: &syn::ExprCall,
        pos: &[&SExpr],
        oob: Option<&SExpr>,
        out: &mut Block,
        carriers: &mut Vec<Handle<Buffer>>,
    ) -> Res<TExpr> {
        let (_, name) = self.gather_tensor(c, pos)?;
        let oob_zero = self.oob_zero(oob)?;
        let mut index = Vec::new();
        for a in &pos[1..] {
            index.push(self.texpr(a, out, carriers)?);
        }
        Ok(TExpr::Gather {
            tensor: name,
            index,
            oob_zero,
        })
    }

    /// `oob = zero`: an out-of-range index reads 0 by intent; absent, an index that depends
    /// on loaded data is checked by the emulator.
    fn oob_zero(&mut self, oob: Option<&SExpr>) -> Res<bool> {
        match oob {
            None => Ok(false),
            Some(SExpr::Path(p)) if p.path.is_ident("zero") => Ok(true),
            Some(e) => Err(self.fail(
                e,
                "`oob` takes `zero`: `gather(x, r, c, oob = zero)` reads 0 where an index is out of range, on purpose (without it the emulator reports such an index)",
            )),
        }
    }

    /// The tensor of a gather (an index into the kernel's parameters) and its name, checked
    /// for rank against the number of indices.
    fn gather_tensor(&mut self, c: &syn::ExprCall, pos: &[&SExpr]) -> Res<(usize, String)> {
        let tensor = match crate::args::path_ident(pos[0]) {
            Some(id) => match self.local(&id.to_string()) {
                Some(Local::Tensor(i)) => i,
                _ => {
                    return Err(self.wrong_kind(
                        id,
                        "a global tensor",
                        "; `gather(x, row, col)` reads an element of a tensor parameter",
                    ));
                }
            },
            None => return Err(self.fail(pos[0], "expected a tensor name: `gather(x, row, col)`")),
        };
        let param = &self.def.params[tensor];
        let (rank, name) = (param.shape.len(), param.ident.to_string());
        if !matches!(rank, 1 | 2) || pos.len() - 1 != rank {
            let dims: Vec<String> = param
                .shape
                .iter()
                .map(crate::model::ShapeDim::text)
                .collect();
            return Err(self.fail(
                c,
                format!(
                    "`gather` takes one index per dimension of a vector or a matrix; `{name}` has {rank} ({}), found {}",
                    dims.join(", "),
                    pos.len() - 1
                ),
            ));
        }
        Ok((tensor, name))
    }

    /// The call of `init` when it is a scalar gather: `gather(…)` with no tile among its
    /// indices.
    pub(crate) fn scalar_gather<'e>(&self, init: &'e SExpr) -> Option<&'e syn::ExprCall> {
        match super::stmt::strip_parens(init) {
            SExpr::Call(c)
                if callee(&c.func).as_deref() == Some("gather")
                    && c.args.iter().skip(1).all(|a| !self.is_tile_expr(a)) =>
            {
                Some(c)
            }
            _ => None,
        }
    }

    /// `let ident = gather(t, i…);` of scalars: a `u32` variable loaded from an integer tensor.
    pub(crate) fn let_scalar_gather(
        &mut self,
        ident: &Ident,
        mutable: bool,
        c: &syn::ExprCall,
        l: &syn::Local,
        out: &mut Block,
    ) -> Res<()> {
        let args = self.call_args(
            &c.args,
            c,
            "gather(tensor, i[, j][, oob = zero])",
            2..=3,
            &["oob"],
        )?;
        let pos = args.pos.clone();
        let oob_zero = self.oob_zero(args.get("oob"))?;
        let (_, name) = self.gather_tensor(c, &pos)?;
        let elem = self
            .kernel
            .sig
            .tensors
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.elem);
        if !elem.is_some_and(|e| e.is_int() && !e.is_int64()) {
            let elem = elem.map_or("?", |e| e.name());
            return Err(self.fail(
                c,
                format!(
                    "a gather into a scalar reads an i32 or u32 tensor (scalars are u32: a \
                     page, an offset, a coordinate); `{name}` holds {elem} — gather floats in a \
                     tile expression"
                ),
            ));
        }
        let mut index = Vec::new();
        for a in &pos[1..] {
            index.push(self.int(a)?);
        }
        let dst = self.kernel.new_var(ident.to_string(), ScalarType::U32);
        let span = self.span(l);
        let op = Op::LoadScalar {
            dst,
            tensor: name,
            index,
            oob_zero,
        };
        out.push(Stmt::at(StmtKind::Op(op), span));
        self.bind(ident, Local::Var { var: dst, mutable })
    }
}
