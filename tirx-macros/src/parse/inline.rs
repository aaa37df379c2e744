//! Calls of tile functions (`#[tile_fn]` in a `#[tile_module]`), inlined where they stand:
//! the IR has no calls.
//!
//! Call forms are statements, so that the body's statements have a place to go: `f(…);` (no
//! result), `let x = f(…);`, `let (x, y) = f(…);` (`_` and `mut` allowed), `x = f(…);` and
//! `(x, y) = f(…);`. A call inside an expression is an error that says to bind it first.
//!
//! Binding: each argument is read in the caller's scope and bound to its parameter by
//! meaning. A scalar binds to its value: a variable, an immediate, a shape symbol or a
//! built-in as is (read-only), anything else evaluated once into a variable named after the
//! parameter (a `mut` parameter always gets its own variable). A buffer, barrier, pipeline or
//! tensor binds to the caller's declaration, whose kind must match the parameter's marker.
//!
//! The body is lowered in a fresh environment (`env_base`): its parameters plus the global
//! names (config constants and shape symbols of the calling kernel, built-ins), none of the
//! caller's locals. Its statements are spliced into the caller's block, so the result, the
//! tail expression's value(s), may name the body's variables. Scope attributes inside it are
//! lowered as anywhere else, so the scope checks apply per call site.
//!
//! Spans: the body keeps its own tokens, and the span table records the chain of calls being
//! lowered, so every error inside carries its call sites and recursion is found on that chain.

use super::stmt::strip_parens;
use super::{Fail, Local, Lowerer, Res, did_you_mean};
use crate::args::path_ident;
use crate::error::span_range;
use crate::module::{ParamKind, TileFnDef, TileParam, scalar_type_name};
use quote::ToTokens;
use syn::{Expr as SExpr, Ident, Pat};
use tirx_ir::{Block, Expr, Handle, Stmt, StmtKind, Var};

/// A name a `let` binds one result to (`None` for `_`), and whether it is `mut`.
type LetTarget<'p> = Option<(&'p Ident, bool)>;

impl<'a> Lowerer<'a> {
    /// The tile function `func` names, if any.
    pub(crate) fn tile_fn_of(&self, func: &SExpr) -> Option<&'a TileFnDef> {
        let id = path_ident(strip_parens(func))?;
        self.fns.get(&id.to_string())
    }

    /// "; tile functions of this module are …; did you mean …?" for an unknown callee
    /// (`others` are further candidates); empty outside a module.
    pub(crate) fn tile_fn_hint(&self, name: &str, others: &[String]) -> String {
        let fns = self.fns.names();
        if fns.is_empty() {
            return String::new();
        }
        let candidates: Vec<String> = others.iter().chain(&fns).cloned().collect();
        let guess = did_you_mean(name, &candidates);
        format!(
            "; tile functions of this module are {}{guess}",
            fns.join(", ")
        )
    }

    /// `hint` when it says something, else, outside a module, where a function of the user's
    /// own belongs (a lone `#[tile_kernel]` calls no Rust function).
    pub(crate) fn or_own_fn(&self, hint: String) -> String {
        if !hint.is_empty() || !self.fns.names().is_empty() {
            return hint;
        }
        "; a function of your own is a `#[tile_fn]` of a `#[tile_module]` that holds this kernel (docs/language.md §10)".to_string()
    }

    /// `f(…);`: a call whose results, if any, would be lost is an error.
    pub(crate) fn call_stmt(
        &mut self,
        c: &syn::ExprCall,
        f: &'a TileFnDef,
        out: &mut Block,
    ) -> Res<()> {
        if !f.ret.is_empty() && !f.broken {
            let name = &f.ident;
            return Err(self.fail(
                c,
                format!(
                    "`{name}` returns {}; use it: `let v = {name}(…);` or `v = {name}(…);`",
                    f.ret_text()
                ),
            ));
        }
        self.inline(c, f, out).map(drop)
    }

    /// `let x = f(…);` and `let (x, y) = f(…);`.
    pub(crate) fn let_call(
        &mut self,
        l: &syn::Local,
        c: &syn::ExprCall,
        f: &'a TileFnDef,
        out: &mut Block,
    ) -> Res<()> {
        let targets = self.let_targets(&l.pat, f);
        let values = match targets {
            Ok(_) => self.inline(c, f, out),
            Err(_) => Err(Fail),
        };
        let (Ok(targets), Ok(values)) = (targets, values) else {
            // Later uses of the names report nothing more.
            let mut names = Vec::new();
            pattern_names(&l.pat, &mut names);
            for id in names {
                self.poison(id);
            }
            return Err(Fail);
        };
        // The names are bound after the call: `let it = f(it);` passes the old `it`.
        let span = self.span(l);
        for ((target, value), ty) in targets.into_iter().zip(values).zip(&f.ret) {
            let Some((ident, mutable)) = target else {
                continue;
            };
            let var = self.kernel.new_var(ident.to_string(), *ty);
            out.push(Stmt::at(StmtKind::Let { var, value }, span));
            if self.bind(ident, Local::Var { var, mutable }).is_err() {
                self.poison(ident);
            }
        }
        Ok(())
    }

    /// The names of `let pat = f(…)`, checked against `f`'s results.
    fn let_targets<'p>(&mut self, pat: &'p Pat, f: &TileFnDef) -> Res<Vec<LetTarget<'p>>> {
        let (elems, tuple): (Vec<&Pat>, bool) = match pat {
            Pat::Tuple(t) => (t.elems.iter().collect(), true),
            Pat::Paren(p) => return self.let_targets(&p.pat, f),
            p => (vec![p], false),
        };
        self.check_count(pat, f, elems.len(), tuple, "let ")?;
        let mut out = Vec::new();
        for p in elems {
            out.push(match p {
                Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                    Some((&i.ident, i.mutability.is_some()))
                }
                Pat::Wild(_) => None,
                Pat::Type(t) => {
                    return Err(self.fail(
                        &t.ty,
                        "type annotations are not supported: scalars are u32 or predicates",
                    ));
                }
                p => return Err(self.fail(p, "expected a name or `_`")),
            });
        }
        Ok(out)
    }

    /// `x = f(…);` and `(x, y) = f(…);` (`whole` is the statement).
    pub(crate) fn assign_call(
        &mut self,
        left: &SExpr,
        c: &syn::ExprCall,
        f: &'a TileFnDef,
        whole: &SExpr,
        out: &mut Block,
    ) -> Res<()> {
        let (elems, tuple): (Vec<&SExpr>, bool) = match strip_parens(left) {
            SExpr::Tuple(t) => (t.elems.iter().collect(), true),
            l => (vec![l], false),
        };
        self.check_count(left, f, elems.len(), tuple, "")?;
        let mut targets = Vec::new();
        let mut failed = false;
        for (e, ty) in elems.into_iter().zip(&f.ret) {
            if matches!(e, SExpr::Infer(_)) {
                targets.push(None);
                continue;
            }
            match self.assign_target(e) {
                Ok(var) if self.kernel.vars[var].ty == *ty => targets.push(Some(var)),
                Ok(var) => {
                    let has = scalar_type_name(self.kernel.vars[var].ty);
                    let message = format!(
                        "this variable is a {has}; `{}` returns a {} here",
                        f.ident,
                        scalar_type_name(*ty)
                    );
                    self.fail(e, message);
                    failed = true;
                }
                Err(Fail) => failed = true,
            }
        }
        if failed {
            return Err(Fail);
        }
        let values = self.inline(c, f, out)?;
        let span = self.span(whole);
        // A parallel assignment: a result that reads a target must see the target's old value.
        let clobbers = targets.len() > 1
            && targets
                .iter()
                .flatten()
                .any(|t| values.iter().any(|v| reads(v, *t)));
        let values: Vec<Expr> = if clobbers {
            let mut temps = Vec::new();
            for (value, ty) in values.into_iter().zip(&f.ret) {
                let tmp = self.kernel.new_var(format!("{}.result", f.ident), *ty);
                out.push(Stmt::at(StmtKind::Let { var: tmp, value }, span));
                temps.push(Expr::Var(tmp));
            }
            temps
        } else {
            values
        };
        for (var, value) in targets.into_iter().zip(values) {
            if let Some(var) = var {
                out.push(Stmt::at(StmtKind::Assign { var, value }, span));
            }
        }
        Ok(())
    }

    /// Checks that `n` names (`tuple`: written as a tuple) take `f`'s results; `form` is the
    /// statement's prefix in the suggestion (`let ` or nothing).
    fn check_count(
        &mut self,
        at: &impl ToTokens,
        f: &TileFnDef,
        n: usize,
        tuple: bool,
        form: &str,
    ) -> Res<()> {
        if f.broken {
            self.silent = true;
            return Err(Fail);
        }
        let (name, want, ret) = (&f.ident, f.ret.len(), f.ret_text());
        let message = match want {
            0 => format!("`{name}` returns nothing; call it as a statement: `{name}(…);`"),
            1 if !tuple => return Ok(()),
            1 => format!("`{name}` returns one {ret}; take it with `{form}x = {name}(…);`"),
            _ if !tuple => {
                let names: Vec<String> = (0..want).map(|i| format!("x{i}")).collect();
                let names = names.join(", ");
                format!(
                    "`{name}` returns {want} values, {ret}; destructure them: `{form}({names}) = {name}(…);`"
                )
            }
            _ if n == want => return Ok(()),
            _ => format!("`{name}` returns {want} values, {ret}; this takes {n}"),
        };
        Err(self.fail(at, message))
    }

    /// Inlines the call `c` of `f` into `out`; returns one value per declared result.
    fn inline(&mut self, c: &syn::ExprCall, f: &'a TileFnDef, out: &mut Block) -> Res<Vec<Expr>> {
        let name = f.ident.to_string();
        let active = self.spans.current_calls();
        if active.iter().any(|s| s.callee == name) {
            let mut chain: Vec<&str> = active.iter().rev().map(|s| s.callee.as_str()).collect();
            chain.push(&name);
            let message = format!(
                "recursive call of tile function `{name}` ({}); tile functions are inlined at each call, so they cannot recurse",
                chain.join(" → ")
            );
            return Err(self.fail(&c.func, message));
        }
        if f.broken {
            self.silent = true;
            return Err(Fail);
        }
        if c.args.len() != f.params.len() {
            let (want, found) = (f.params.len(), c.args.len());
            let usage = f.usage();
            return Err(self.fail(
                c,
                format!("`{name}` takes {want} argument(s): `{usage}`; found {found}"),
            ));
        }
        // Arguments, in the caller's scope; every bad one is reported.
        let mut bound = Vec::new();
        let mut failed = false;
        for (p, a) in f.params.iter().zip(&c.args) {
            match self.bind_arg(f, p, a, out) {
                Ok(local) => bound.push((&p.ident, local)),
                Err(Fail) => failed = true,
            }
        }
        if failed {
            return Err(Fail);
        }
        // The body, above the caller's scopes.
        let call = (span_range(&c.func).0, c.paren_token.span.close());
        let caller_base = std::mem::replace(&mut self.env_base, self.env.len());
        self.spans.enter(call, &name);
        self.push_scope();
        let mut params_ok = true;
        for (ident, local) in bound {
            params_ok &= self.bind(ident, local).is_ok();
        }
        let values = if params_ok {
            self.body(f, out)
        } else {
            Err(Fail)
        };
        self.pop_scope();
        self.spans.leave();
        self.env_base = caller_base;
        values
    }

    /// The body of `f` into `out`, then its results.
    fn body(&mut self, f: &'a TileFnDef, out: &mut Block) -> Res<Vec<Expr>> {
        let stmts = &f.body.stmts;
        self.push_scope();
        let values = match stmts.split_last() {
            _ if f.ret.is_empty() => {
                self.stmts_into(stmts, out);
                Ok(Vec::new())
            }
            Some((syn::Stmt::Expr(tail, None), init)) => {
                self.stmts_into(init, out);
                self.results(f, tail, out)
            }
            _ => {
                self.stmts_into(stmts, out);
                let message = format!(
                    "`{}` returns {}: end its body with the value, without a `;`",
                    f.ident,
                    f.ret_text()
                );
                Err(self.fail(&f.ret_at, message))
            }
        };
        self.pop_scope();
        values
    }

    /// The values of `f`'s tail expression: a scalar, a tuple of scalars, or a call of a tile
    /// function with the same results.
    fn results(&mut self, f: &'a TileFnDef, tail: &SExpr, out: &mut Block) -> Res<Vec<Expr>> {
        if let SExpr::Call(c) = strip_parens(tail)
            && let Some(g) = self.tile_fn_of(&c.func)
        {
            if !g.broken && g.ret != f.ret {
                let message = format!(
                    "`{}` returns {}; this call of `{}` returns {}",
                    f.ident,
                    f.ret_text(),
                    g.ident,
                    g.ret_text()
                );
                return Err(self.fail(tail, message));
            }
            return self.inline(c, g, out);
        }
        let parts: Vec<&SExpr> = match (f.ret.len(), strip_parens(tail)) {
            (1, _) => vec![tail],
            (n, SExpr::Tuple(t)) if t.elems.len() == n => t.elems.iter().collect(),
            (n, _) => {
                let message = format!(
                    "`{}` returns {}: end its body with a tuple of {n} values",
                    f.ident,
                    f.ret_text()
                );
                return Err(self.fail(tail, message));
            }
        };
        let mut values = Vec::new();
        let mut failed = false;
        for (e, ty) in parts.into_iter().zip(&f.ret) {
            match self.scalar(e) {
                Ok(v) if self.ty(&v) == *ty => values.push(v),
                Ok(v) => {
                    let (want, found) = (scalar_type_name(*ty), scalar_type_name(self.ty(&v)));
                    let message = format!("`{}` returns a {want} here; this is a {found}", f.ident);
                    self.fail(e, message);
                    failed = true;
                }
                Err(Fail) => failed = true,
            }
        }
        if failed { Err(Fail) } else { Ok(values) }
    }

    /// What parameter `p` of `f` binds to for the argument `a` (read in the caller's scope);
    /// a scalar that needs evaluating is evaluated into `out` first.
    fn bind_arg(&mut self, f: &TileFnDef, p: &TileParam, a: &SExpr, out: &mut Block) -> Res<Local> {
        let mismatch = |found: String| {
            format!(
                "argument `{}` of `{}` is {} (`{}: {}`); {found}",
                p.ident,
                f.ident,
                p.kind.describe(),
                p.ident,
                p.kind.type_name()
            )
        };
        let named = path_ident(a).map(|id| (id, self.local(&id.to_string())));
        if let ParamKind::Scalar(ty) = p.kind {
            if let Some((
                id,
                Some(
                    Local::Buf(_)
                    | Local::Bar(_)
                    | Local::Pipe(_)
                    | Local::Tensor(_)
                    | Local::Arg(_),
                ),
            )) = named
            {
                let found = self.describe(&id.to_string()).unwrap_or("not a scalar");
                return Err(self.fail(a, mismatch(format!("`{id}` is {found}"))));
            }
            let v = self.scalar(a)?;
            if self.ty(&v) != ty {
                let found = format!("this is a {}", scalar_type_name(self.ty(&v)));
                return Err(self.fail(a, mismatch(found)));
            }
            return Ok(match v {
                Expr::Var(var) if !p.mutable => Local::Var {
                    var,
                    mutable: false,
                },
                Expr::Imm(..) | Expr::Dim(_) | Expr::Special(_) if !p.mutable => {
                    self.values.push(v);
                    Local::Value(self.values.len() - 1)
                }
                value => {
                    let var = self.kernel.new_var(p.ident.to_string(), ty);
                    let span = self.span(a);
                    out.push(Stmt::at(StmtKind::Let { var, value }, span));
                    Local::Var {
                        var,
                        mutable: p.mutable,
                    }
                }
            });
        }
        let Some((id, local)) = named else {
            return Err(self.fail(a, mismatch("pass its name, not an expression".into())));
        };
        let fits = match (p.kind, local) {
            (_, Some(Local::Poison)) => return Err(Fail),
            (ParamKind::Buf(space), Some(Local::Buf(b))) => self.kernel.buffers[b].space == space,
            (ParamKind::Bar, Some(Local::Bar(_)))
            | (ParamKind::Pipe, Some(Local::Pipe(_)))
            | (ParamKind::Global, Some(Local::Tensor(_)))
            | (ParamKind::Arg, Some(Local::Arg(_))) => true,
            _ => false,
        };
        match (fits, local, self.describe(&id.to_string())) {
            (true, Some(local), _) => Ok(local),
            (_, _, Some(found)) => Err(self.fail(a, mismatch(format!("`{id}` is {found}")))),
            _ => Err(self.not_found(id)),
        }
    }
}

/// Whether `e` reads `var`.
fn reads(e: &Expr, var: Handle<Var>) -> bool {
    match e {
        Expr::Var(v) => *v == var,
        Expr::Imm(..) | Expr::Dim(_) | Expr::Special(_) => false,
        Expr::Bin(_, l, r) | Expr::Cmp(_, l, r) | Expr::AndP(l, r) => {
            reads(l, var) || reads(r, var)
        }
        Expr::Not(x) => reads(x, var),
    }
}

/// Every name a pattern binds.
fn pattern_names<'p>(pat: &'p Pat, out: &mut Vec<&'p Ident>) {
    match pat {
        Pat::Ident(i) => out.push(&i.ident),
        Pat::Tuple(t) => t.elems.iter().for_each(|p| pattern_names(p, out)),
        Pat::Paren(p) => pattern_names(&p.pat, out),
        Pat::Type(t) => pattern_names(&t.pat, out),
        _ => {}
    }
}
