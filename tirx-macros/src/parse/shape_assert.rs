//! `static_assert` over shape symbols (`static_assert(D % 64 == 0)`, `static_assert(HALF * 2
//! == D)`): a condition on the launched tensors' extents, which the build cannot decide, is
//! carried in the signature as [`ShapeCheck`]s and checked by the launch planner
//! (`tirx_runtime::plan_launch_with`) before any launch.
//!
//! Preconditions: the condition mentions a shape symbol ([`Lowerer::mentions_shape`]); the
//! statement is at the top level of the kernel body (not in a loop, an `if`, a scope or a tile
//! function), so it holds for the whole launch.
//!
//! Postconditions: each comparison of the condition (a `&&` of comparisons is split) over shape
//! symbols is one check of `kernel.sig.checks`, with the config's constants folded; one with no
//! shape symbol is decided here (a false one is the assertion's error); a name that is neither
//! a shape symbol nor a config constant is an error at the name.

use super::{Lowerer, Res};
use crate::args::{eval_const, path_ident};
use quote::ToTokens;
use syn::{BinOp, Expr as SExpr};
use tirx_ir::abi::{CmpOp, ShapeCheck, SymExpr};

impl Lowerer<'_> {
    /// Whether `e` names a shape symbol anywhere.
    pub(crate) fn mentions_shape(&self, e: &SExpr) -> bool {
        match e {
            SExpr::Path(_) => path_ident(e).is_some_and(|id| self.is_shape_symbol(id)),
            SExpr::Paren(p) => self.mentions_shape(&p.expr),
            SExpr::Group(g) => self.mentions_shape(&g.expr),
            SExpr::Unary(u) => self.mentions_shape(&u.expr),
            SExpr::Binary(b) => self.mentions_shape(&b.left) || self.mentions_shape(&b.right),
            SExpr::Call(c) => c.args.iter().any(|a| self.mentions_shape(a)),
            _ => false,
        }
    }

    fn is_shape_symbol(&self, id: &syn::Ident) -> bool {
        self.def.params.iter().any(|p| p.symbols().any(|s| s == id))
    }

    /// `static_assert(cond[, "why"])` whose `cond` mentions a shape symbol: its checks go to
    /// the signature (see the module docs).
    pub(crate) fn shape_assert(
        &mut self,
        call: &syn::ExprCall,
        cond: &SExpr,
        why: Option<String>,
    ) -> Res<()> {
        if self.depth > 0 || self.in_tile_fn() {
            return Err(self.fail(
                call,
                "a `static_assert` over shape symbols is checked once per launch: put it at the \
                 top level of the kernel body",
            ));
        }
        let mut checks = Vec::new();
        self.comparisons(cond, &why, call, &mut checks)?;
        self.kernel.sig.checks.extend(checks);
        Ok(())
    }

    /// The comparisons of `e` (a `&&` of them), each a check or decided now.
    fn comparisons(
        &mut self,
        e: &SExpr,
        why: &Option<String>,
        call: &syn::ExprCall,
        out: &mut Vec<ShapeCheck>,
    ) -> Res<()> {
        let e = strip(e);
        let SExpr::Binary(b) = e else {
            return Err(self.fail(e, EXPECTED));
        };
        let op = match b.op {
            BinOp::And(_) => {
                self.comparisons(&b.left, why, call, out)?;
                return self.comparisons(&b.right, why, call, out);
            }
            BinOp::Eq(_) => CmpOp::Eq,
            BinOp::Ne(_) => CmpOp::Ne,
            BinOp::Lt(_) => CmpOp::Lt,
            BinOp::Le(_) => CmpOp::Le,
            BinOp::Gt(_) => CmpOp::Gt,
            BinOp::Ge(_) => CmpOp::Ge,
            _ => return Err(self.fail(e, EXPECTED)),
        };
        let lhs = self.shape_expr(&b.left);
        let rhs = self.shape_expr(&b.right);
        let (lhs, rhs) = (lhs?, rhs?);
        let cond = tidy(&e.to_token_stream().to_string());
        let text = match why {
            Some(why) => format!("{cond}: {why}"),
            None => cond.clone(),
        };
        let check = ShapeCheck { text, lhs, op, rhs };
        if !check.lhs.symbols().is_empty() || !check.rhs.symbols().is_empty() {
            out.push(check);
            return Ok(());
        }
        // No shape symbol on either side: decided now, as a constant `static_assert` is.
        match check.holds(&|_| None) {
            Some(true) => Ok(()),
            _ => {
                let why = why.clone().unwrap_or_else(|| format!("`{cond}`"));
                Err(self.fail_assertion(call, format!("static assertion failed: {why}")))
            }
        }
    }

    /// One side of a comparison: shape symbols, config constants and integer literals
    /// combined with `+ - * / %` and `cdiv(a, b)`.
    fn shape_expr(&mut self, e: &SExpr) -> Res<SymExpr> {
        let consts = self.kernel.consts.clone();
        let lookup = |s: &str| consts.iter().find(|(n, _)| n == s).map(|(_, v)| *v);
        if !self.mentions_shape(e)
            && let Ok(v) = eval_const(e, &lookup)
        {
            return u64::try_from(v).map(SymExpr::Const).map_err(|_| {
                self.fail(
                    e,
                    format!("this is {v}: a shape assertion compares non-negative values"),
                )
            });
        }
        let b = Box::new;
        match e {
            SExpr::Paren(p) => self.shape_expr(&p.expr),
            SExpr::Group(g) => self.shape_expr(&g.expr),
            SExpr::Path(_) => match path_ident(e) {
                Some(id) if self.is_shape_symbol(id) => Ok(SymExpr::Sym(id.to_string())),
                Some(id) => {
                    let shapes = self.def.shape_symbols().join(", ");
                    Err(self.fail(
                        id,
                        format!(
                            "`{id}` is neither a shape symbol ({shapes}) nor a config constant; \
                             a shape assertion names only those"
                        ),
                    ))
                }
                None => Err(self.fail(e, OPERAND)),
            },
            SExpr::Binary(x) => {
                let l = self.shape_expr(&x.left);
                let r = self.shape_expr(&x.right);
                let (l, r) = (b(l?), b(r?));
                Ok(match x.op {
                    BinOp::Add(_) => SymExpr::Add(l, r),
                    BinOp::Sub(_) => SymExpr::Sub(l, r),
                    BinOp::Mul(_) => SymExpr::Mul(l, r),
                    BinOp::Div(_) => SymExpr::Div(l, r),
                    BinOp::Rem(_) => SymExpr::Rem(l, r),
                    _ => return Err(self.fail(e, OPERAND)),
                })
            }
            SExpr::Call(c)
                if path_ident(&c.func).is_some_and(|f| f == "cdiv") && c.args.len() == 2 =>
            {
                let l = self.shape_expr(&c.args[0]);
                let r = self.shape_expr(&c.args[1]);
                Ok(SymExpr::CeilDiv(b(l?), b(r?)))
            }
            _ => Err(self.fail(e, OPERAND)),
        }
    }
}

const EXPECTED: &str = "a `static_assert` over shape symbols compares (`==`, `!=`, `<`, `<=`, \
                        `>`, `>=`) expressions of shape symbols and constants, or joins such \
                        comparisons with `&&`";

const OPERAND: &str = "expected shape symbols, config constants and integers combined with \
                       `+`, `-`, `*`, `/`, `%` or `cdiv(a, b)`";

fn strip(e: &SExpr) -> &SExpr {
    match e {
        SExpr::Paren(p) => strip(&p.expr),
        SExpr::Group(g) => strip(&g.expr),
        _ => e,
    }
}

/// Token text as a user writes it: `cdiv(D, 64)`, not `cdiv (D , 64)`.
fn tidy(text: &str) -> String {
    let mut out = text
        .replace(" ,", ",")
        .replace("( ", "(")
        .replace(" )", ")");
    for f in ["cdiv", "min", "max"] {
        out = out.replace(&format!("{f} ("), &format!("{f}("));
    }
    out
}
