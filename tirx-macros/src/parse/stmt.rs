//! Statements: `let`, assignment, `for`, `if`, blocks, `#[scope(...)]`, and the dispatch of
//! expression statements to ops (`ops.rs`).
//!
//! Spans: a `for` or `if` statement's span is its header (keyword to the end of the range or
//! condition), an op's is the call, a scope's is its attribute, a `let`'s is the statement.
//! Declarations (`smem`, `mbarrier`, `pipeline`, …) are allowed only at the top level of the
//! body: buffers and barriers are static allocations of the whole CTA.

use super::vocab::{self, Id, Kind};
use super::{Fail, Local, Lowerer, Res};
use crate::args::path_ident;
use crate::error::span_range;
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr as SExpr, Ident, Token};
use tirx_ir::{BinOp, Block, Expr, ScalarType, Scope, Stmt, StmtKind};

/// Scope keys, for the "unknown scope key" message.
const SCOPE_KEYS: &str = "warp, warps, warpgroup, warpgroups, thread, leader, cta, elect";

impl Lowerer<'_> {
    /// Lowers a block in a new lexical scope.
    pub(crate) fn block(&mut self, stmts: &[syn::Stmt]) -> Block {
        self.push_scope();
        let mut out = Vec::new();
        self.stmts_into(stmts, &mut out);
        self.pop_scope();
        out
    }

    /// Lowers statements into `out`, in the current lexical scope.
    pub(crate) fn stmts_into(&mut self, stmts: &[syn::Stmt], out: &mut Block) {
        for s in stmts {
            let _ = self.stmt(s, out);
        }
    }

    /// Lowers a block nested in control flow or a scope.
    fn nested(&mut self, stmts: &[syn::Stmt]) -> Block {
        self.depth += 1;
        let b = self.block(stmts);
        self.depth -= 1;
        b
    }

    fn stmt(&mut self, s: &syn::Stmt, out: &mut Block) -> Res<()> {
        match s {
            syn::Stmt::Local(l) => self.let_stmt(l, out),
            syn::Stmt::Expr(e, _) => self.expr_stmt(e, out),
            syn::Stmt::Item(i) => Err(self.fail(
                i,
                "items (fn, struct, use, …) are not allowed in a tile kernel body",
            )),
            syn::Stmt::Macro(m) => {
                Err(self.fail(m, "macros are not supported in a tile kernel body"))
            }
        }
    }

    /// An expression statement, with its `#[scope(...)]` attributes.
    fn expr_stmt(&mut self, e: &SExpr, out: &mut Block) -> Res<()> {
        let scopes = self.scope_attrs(expr_attrs(e))?;
        if scopes.is_empty() {
            return self.unscoped(e, out);
        }
        let mut body = Vec::new();
        self.depth += 1;
        let inner = match e {
            SExpr::Block(b) => {
                body = self.block(&b.block.stmts);
                Ok(())
            }
            _ => self.unscoped(e, &mut body),
        };
        self.depth -= 1;
        inner?;
        for (scope, span) in scopes.into_iter().rev() {
            body = vec![Stmt::at(StmtKind::Scope { scope, body }, span)];
        }
        out.extend(body);
        Ok(())
    }

    /// An expression statement without scope attributes.
    fn unscoped(&mut self, e: &SExpr, out: &mut Block) -> Res<()> {
        let stmt = match e {
            SExpr::ForLoop(f) => self.for_stmt(f)?,
            SExpr::If(i) => self.if_stmt(i)?,
            SExpr::Block(b) => {
                let inner = self.nested(&b.block.stmts);
                out.extend(inner);
                return Ok(());
            }
            SExpr::Assign(a) if self.assigns_tile(&a.left) => {
                return self.assign_tile(&a.left, &a.right, None, e, out);
            }
            SExpr::Binary(b) if self.assigns_tile(&b.left) && tile_compound(&b.op).is_some() => {
                return self.assign_tile(&b.left, &b.right, tile_compound(&b.op), e, out);
            }
            SExpr::Assign(a) if let Some(v) = super::vote::vote_of(&a.right) => {
                return self.vote_assign(&a.left, v, e, out);
            }
            SExpr::Assign(a) if let Some(q) = super::clc::query_of(&a.right) => {
                self.clc_assign(&a.left, q)?
            }
            SExpr::Assign(a) => match strip_parens(&a.right) {
                SExpr::Call(c) if let Some(f) = self.tile_fn_of(&c.func) => {
                    return self.assign_call(&a.left, c, f, e, out);
                }
                _ => self.assign(&a.left, &a.right, None, e)?,
            },
            SExpr::Binary(b) => match compound_op(&b.op) {
                Some(op) => self.assign(&b.left, &b.right, Some(op), e)?,
                None => return Err(self.fail(e, "this value is unused; expected a statement")),
            },
            SExpr::Call(c) if let Some(f) = self.tile_fn_of(&c.func) => {
                return self.call_stmt(c, f, out);
            }
            SExpr::Call(c)
                if path_ident(&c.func).is_some_and(|i| i == vocab::word(Id::StaticAssert).name) =>
            {
                return self.static_assert(c);
            }
            SExpr::Call(c) => self.op_call(c)?,
            SExpr::MethodCall(m) => self.op_method(m)?,
            SExpr::While(w) => self.while_stmt(w)?,
            SExpr::Loop(_) => {
                return Err(self.fail(
                    e,
                    "only `for k in a..b { … }` and `while cond { … }` loops are supported",
                ));
            }
            _ => return Err(self.fail(
                e,
                "expected a statement: an op call, `let`, an assignment, `for`, `if` or a block",
            )),
        };
        out.append(&mut self.pre);
        out.push(stmt);
        Ok(())
    }

    /// `static_assert(cond, "why")` (the reason optional): a condition over config constants
    /// and literals that must hold in every config the code is compiled in; it compiles to
    /// nothing. A false one is an error at the call, with the message; a condition known only at
    /// run time is an error too, except one over shape symbols, which the launch checks
    /// (`shape_assert.rs`).
    fn static_assert(&mut self, c: &syn::ExprCall) -> Res<()> {
        let word = vocab::word(Id::StaticAssert);
        let usage = word.usage;
        let args = self.word_args(word, &c.args, c)?;
        let why = match args.pos.get(1).map(|a| strip_parens(a)) {
            None => None,
            Some(SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(why),
                ..
            })) => Some(why.value()),
            Some(other) => {
                return Err(self.fail(other, format!("expected a string literal: `{usage}`")));
            }
        };
        if self.mentions_shape(args.pos[0]) {
            return self.shape_assert(c, args.pos[0], why);
        }
        let why = why.unwrap_or_else(|| {
            let cond = args.pos[0];
            format!("`{}`", quote::quote!(#cond))
        });
        match self.pred(args.pos[0])? {
            Expr::Imm(1, _) => Ok(()),
            Expr::Imm(..) => Err(self.fail_assertion(c, format!("static assertion failed: {why}"))),
            _ => Err(self.fail(
                args.pos[0],
                "a static assertion's condition must be known at build time (literals and \
                 config constants) or at launch (shape symbols)",
            )),
        }
    }

    /// `let x = …;`: a declaration, a pipeline stage, or a scalar.
    fn let_stmt(&mut self, l: &syn::Local, out: &mut Block) -> Res<()> {
        if let Some(a) = l.attrs.first() {
            return Err(self.fail(
                a,
                "attributes on `let` are not supported; put `#[scope(...)]` on a block",
            ));
        }
        // A cluster-launch-control query binds its decoded values.
        if let Some(init) = &l.init
            && init.diverge.is_none()
            && let Some(q) = super::clc::query_of(&init.expr)
        {
            let stmt = self.clc_let(l, q)?;
            out.push(stmt);
            return Ok(());
        }
        // A tile function's results bind to any pattern of names (`let (m, n) = f(…);`).
        if let Some(init) = &l.init
            && init.diverge.is_none()
            && let SExpr::Call(c) = strip_parens(&init.expr)
            && let Some(f) = self.tile_fn_of(&c.func)
        {
            return self.let_call(l, c, f, out);
        }
        let (ident, mutable) = match &l.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                (&p.ident, p.mutability.is_some())
            }
            syn::Pat::Type(t) => {
                return Err(self.fail(
                    &t.ty,
                    "type annotations are not supported: scalars are u32 or predicates",
                ));
            }
            p => return Err(self.fail(p, "expected `let name = …`")),
        };
        let Some(init) = &l.init else {
            return Err(self.fail(l, format!("`{ident}` needs a value: `let {ident} = …;`")));
        };
        if let Some((else_token, _)) = &init.diverge {
            return Err(self.fail(else_token, "`let … else` is not supported"));
        }
        let result = self.let_value(ident, mutable, &init.expr, l, out);
        if result.is_err() {
            self.poison(ident);
        }
        result
    }

    fn let_value(
        &mut self,
        ident: &Ident,
        mutable: bool,
        init: &SExpr,
        l: &syn::Local,
        out: &mut Block,
    ) -> Res<()> {
        if let SExpr::Call(c) = init
            && super::decl::decl_kind(&c.func).is_some()
        {
            if self.spans.in_call() {
                return Err(self.fail(
                    &c.func,
                    "declare buffers, barriers and pipelines in the kernel body and pass them to \
                     the tile function (parameters `Smem`, `Tmem`, `Regs`, `Bar`, `Pipe`)",
                ));
            }
            if self.depth > 0 {
                return Err(self.fail(
                    &c.func,
                    "declare buffers, barriers and pipelines at the top level of the kernel body",
                ));
            }
            if mutable {
                return Err(self.fail(ident, "a declaration is not a variable; drop `mut`"));
            }
            let local = self.declare(ident, c, l)?;
            return self.bind(ident, local);
        }
        if let SExpr::MethodCall(m) = init
            && vocab::lookup(None, &m.method.to_string(), &[Kind::PipeMethod])
                .is_some_and(|w| w.id != Id::ConsumerRelease)
        {
            let stmt = self.acquire(ident, m)?;
            out.push(stmt);
            return Ok(());
        }
        if let Some(v) = super::vote::vote_of(init) {
            return self.vote_let(ident, mutable, v, l, out);
        }
        if let Some(c) = self.scalar_gather(init) {
            return self.let_scalar_gather(ident, mutable, c, l, out);
        }
        if self.is_tile_expr(init) || self.mentions_float(init) {
            return self.let_tile(ident, mutable, init, out);
        }
        let value = self.scalar(init)?;
        let var = self.kernel.new_var(ident.to_string(), self.ty(&value));
        let span = self.span(l);
        out.push(Stmt::at(StmtKind::Let { var, value }, span));
        self.bind(ident, Local::Var { var, mutable })
    }

    /// `x = e;` and `x op= e;`.
    fn assign(
        &mut self,
        left: &SExpr,
        right: &SExpr,
        op: Option<BinOp>,
        whole: &SExpr,
    ) -> Res<Stmt> {
        let var = self.assign_target(left)?;
        let Some(ident) = crate::args::path_ident(left) else {
            return Err(self.fail(left, "only variables can be assigned"));
        };
        let value = match op {
            Some(op) => {
                let rhs = self.int(right)?;
                if self.kernel.vars[var].ty != ScalarType::U32 {
                    return Err(self.fail(
                        ident,
                        format!("`{ident}` is a predicate; compound assignment needs an integer"),
                    ));
                }
                self.fold_bin(whole, op, Expr::Var(var), rhs)?
            }
            None => {
                let v = self.scalar(right)?;
                if self.ty(&v) != self.kernel.vars[var].ty {
                    let want = self.kernel.vars[var].ty.name();
                    return Err(self.fail(
                        right,
                        format!(
                            "`{ident}` is a {want}; this value is a {}",
                            self.ty(&v).name()
                        ),
                    ));
                }
                v
            }
        };
        let span = self.span(whole);
        Ok(Stmt::at(StmtKind::Assign { var, value }, span))
    }

    /// The variable `left` names, if it can be assigned.
    pub(crate) fn assign_target(&mut self, left: &SExpr) -> Res<tirx_ir::Handle<tirx_ir::Var>> {
        let Some(ident) = crate::args::path_ident(left) else {
            return Err(self.fail(left, "only variables can be assigned"));
        };
        match self.local(&ident.to_string()) {
            Some(Local::Var { var, mutable: true }) => Ok(var),
            Some(Local::Var { .. } | Local::Value(_)) => Err(self.fail(
                ident,
                format!("cannot assign to `{ident}`: declare it with `let mut {ident}`"),
            )),
            Some(Local::Poison) => Err(Fail),
            Some(_) => Err(self.fail(ident, format!("`{ident}` is not a variable"))),
            None => Err(self.not_found(ident)),
        }
    }

    /// `while p { body }` on a predicate: `if p { do { body } until !p }`, the condition
    /// evaluated again after each pass (e.g. a work-stealing loop that runs while
    /// `clc::is_canceled` says another tile was taken).
    fn while_stmt(&mut self, w: &syn::ExprWhile) -> Res<Stmt> {
        if let Some(label) = &w.label {
            return Err(self.fail(label, "loop labels are not supported"));
        }
        if let SExpr::Let(l) = &*w.cond {
            return Err(self.fail(
                &l.let_token,
                "`while let` is not supported; conditions are predicates",
            ));
        }
        let cond = self.pred(&w.cond);
        let span = self
            .spans
            .intern_range((span_range(&w.while_token).0, span_range(&w.cond).1));
        let mut body = self.nested(&w.body.stmts);
        let cond = cond?;
        let done = self.kernel.new_var("done", ScalarType::Pred);
        let again = Expr::Not(Box::new(cond.clone()));
        body.push(Stmt::at(
            StmtKind::Let {
                var: done,
                value: again,
            },
            span,
        ));
        Ok(Stmt::at(
            StmtKind::If {
                cond,
                then_body: vec![Stmt::at(StmtKind::Loop { body, until: done }, span)],
                else_body: Vec::new(),
            },
            span,
        ))
    }

    /// `for k in a..b { }` and `for k in (a..b).step_by(s) { }`.
    fn for_stmt(&mut self, f: &syn::ExprForLoop) -> Res<Stmt> {
        if let Some(label) = &f.label {
            return Err(self.fail(label, "loop labels are not supported"));
        }
        let (range, step) = match &*f.expr {
            SExpr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (&*m.receiver, Some(&m.args[0]))
            }
            e => (e, None),
        };
        let range = match strip_parens(range) {
            SExpr::Range(r) => r,
            e => {
                return Err(self.fail(
                    e,
                    "expected a range: `a..b`, `a..=b` or `(a..b).step_by(s)`",
                ));
            }
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return Err(self.fail(range, "a loop range needs both ends: `a..b`"));
        };
        let (start, end_v) = (self.int(start), self.int(end));
        let step = match step {
            Some(s) => Some((self.int(s)?, s)),
            None => None,
        };
        let (start, mut end) = (start?, end_v?);
        if let syn::RangeLimits::Closed(_) = range.limits {
            end = self.fold_bin(range, BinOp::Add, end, Expr::u32(1))?;
        }
        let step = match step {
            Some((Expr::Imm(0, _), s)) => {
                return Err(self.fail(s, "the loop step must be positive"));
            }
            Some((v, _)) => v,
            None => Expr::u32(1),
        };
        // A loop whose bounds are constants and that never runs is a config that does not fit
        // the code (`0..BN / 128` with BN = 64): its body would silently vanish.
        if let (Expr::Imm(a, _), Expr::Imm(b, _)) = (&start, &end)
            && a >= b
        {
            return Err(self.fail(
                range,
                format!(
                    "this loop never runs: its range is {a}..{b}, so its body would be left \
                     out; fix the config or the bounds"
                ),
            ));
        }
        let span = self
            .spans
            .intern_range((span_range(&f.for_token).0, span_range(&f.expr).1));
        self.push_scope();
        let var = match &*f.pat {
            syn::Pat::Ident(p) if p.mutability.is_none() => {
                let var = self.kernel.new_var(p.ident.to_string(), ScalarType::U32);
                self.bind(
                    &p.ident,
                    Local::Var {
                        var,
                        mutable: false,
                    },
                )
                .map(|_| var)
            }
            syn::Pat::Wild(_) => Ok(self.kernel.new_var("_", ScalarType::U32)),
            p => Err(self.fail(p, "expected a loop variable name")),
        };
        let body = self.nested(&f.body.stmts);
        self.pop_scope();
        Ok(Stmt::at(
            StmtKind::For {
                var: var?,
                start,
                end,
                step,
                body,
            },
            span,
        ))
    }

    /// `if c { } else if d { } else { }`.
    fn if_stmt(&mut self, i: &syn::ExprIf) -> Res<Stmt> {
        if let SExpr::Let(l) = &*i.cond {
            return Err(self.fail(
                &l.let_token,
                "`if let` is not supported; conditions are predicates",
            ));
        }
        let cond = self.pred(&i.cond);
        let span = self
            .spans
            .intern_range((span_range(&i.if_token).0, span_range(&i.cond).1));
        let then_body = self.nested(&i.then_branch.stmts);
        let else_body = match &i.else_branch {
            None => Vec::new(),
            Some((_, e)) => match &**e {
                SExpr::Block(b) => self.nested(&b.block.stmts),
                SExpr::If(inner) => {
                    self.depth += 1;
                    let s = self.if_stmt(inner);
                    self.depth -= 1;
                    vec![s?]
                }
                other => return Err(self.fail(other, "expected a block or `if` after `else`")),
            },
        };
        // A condition known at build time (`if ACT == 2` over config constants) keeps only
        // the branch taken: the other is checked but not compiled.
        let cond = cond?;
        let (cond, then_body, else_body) = match cond {
            Expr::Imm(v, _) => {
                let taken = if v != 0 { then_body } else { else_body };
                (Expr::Imm(1, ScalarType::Pred), taken, Vec::new())
            }
            c => (c, then_body, else_body),
        };
        Ok(Stmt::at(
            StmtKind::If {
                cond,
                then_body,
                else_body,
            },
            span,
        ))
    }

    /// The scopes named by a statement's attributes, outermost first, each with its span.
    fn scope_attrs(&mut self, attrs: &[syn::Attribute]) -> Res<Vec<(Scope, tirx_ir::Span)>> {
        let mut out = Vec::new();
        for a in attrs {
            if !a.path().is_ident("scope") {
                let path = a.path().to_token_stream().to_string().replace(' ', "");
                return Err(self.fail(
                    a,
                    format!("unknown attribute `#[{path}]`; statements accept `#[scope(...)]`"),
                ));
            }
            let items = match a.meta.require_list() {
                Ok(list) => {
                    Punctuated::<ScopeItem, Token![,]>::parse_terminated.parse2(list.tokens.clone())
                }
                Err(e) => Err(e),
            };
            let items = match items {
                Ok(items) => items,
                Err(e) => {
                    return Err(self.fail_at(
                        (e.span(), e.span()),
                        format!("expected `#[scope(warp = 0)]`-style keys: {e}"),
                    ));
                }
            };
            let scopes = self.scope_items(a, &items)?;
            let span = self.span(a);
            out.extend(scopes.into_iter().map(|s| (s, span)));
        }
        Ok(out)
    }
}

/// One `key` or `key = value` in `#[scope(...)]`.
struct ScopeItem {
    key: Ident,
    value: Option<SExpr>,
}

impl syn::parse::Parse for ScopeItem {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let key = input.call(syn::ext::IdentExt::parse_any)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(ScopeItem { key, value })
    }
}

impl Lowerer<'_> {
    /// The scopes of one `#[scope(...)]`: the thread group (if any), then `Elect`.
    fn scope_items(
        &mut self,
        attr: &syn::Attribute,
        items: &Punctuated<ScopeItem, Token![,]>,
    ) -> Res<Vec<Scope>> {
        let mut group: Option<(Scope, &Ident)> = None;
        let mut elect = false;
        for item in items {
            let key = item.key.to_string();
            if let ("elect" | "cta" | "leader", Some(v)) = (key.as_str(), &item.value) {
                return Err(self.fail(v, format!("`{key}` takes no value")));
            }
            let scope = match key.as_str() {
                "elect" => {
                    elect = true;
                    continue;
                }
                "cta" => Scope::Cta,
                "leader" => Scope::Leader,
                "warp" | "warpgroup" | "thread" => {
                    let v = self.scope_value(item)?;
                    let n = self.const_u32(v, &format!("the {key} index"))?;
                    self.check_unit(&key, n, v)?;
                    match key.as_str() {
                        "warp" => Scope::Warp(n, n),
                        "warpgroup" => Scope::Warpgroup(n, n),
                        _ => Scope::Thread(n),
                    }
                }
                "warps" | "warpgroups" => {
                    let v = self.scope_value(item)?;
                    let (first, last) = self.unit_range(v, &key)?;
                    self.check_unit(&key, last, v)?;
                    if key == "warps" {
                        Scope::Warp(first, last)
                    } else {
                        Scope::Warpgroup(first, last)
                    }
                }
                _ => {
                    return Err(self.fail(
                        &item.key,
                        format!("unknown scope key `{key}`; expected {SCOPE_KEYS}"),
                    ));
                }
            };
            if let Some((_, prev)) = group {
                return Err(self.fail(
                    &item.key,
                    format!("a scope names one group of threads; found both `{prev}` and `{key}`"),
                ));
            }
            group = Some((scope, &item.key));
        }
        if matches!(group, Some((Scope::Thread(_) | Scope::Leader, _))) && elect {
            return Err(self.fail(attr, "`elect` inside a single-thread scope is redundant"));
        }
        if group.is_none() && !elect {
            return Err(self.fail(
                attr,
                format!("an empty scope; expected one of {SCOPE_KEYS}"),
            ));
        }
        let mut out: Vec<Scope> = group.map(|(s, _)| s).into_iter().collect();
        if elect {
            out.push(Scope::Elect);
        }
        Ok(out)
    }

    fn scope_value<'i>(&mut self, item: &'i ScopeItem) -> Res<&'i SExpr> {
        match &item.value {
            Some(v) => Ok(v),
            None => Err(self.fail(
                &item.key,
                format!("`{}` needs a value, e.g. `{} = 0`", item.key, item.key),
            )),
        }
    }

    /// `a..b` / `a..=b` of constants → (first, last), non-empty.
    fn unit_range(&mut self, v: &SExpr, key: &str) -> Res<(u32, u32)> {
        let SExpr::Range(r) = strip_parens(v) else {
            return Err(self.fail(v, format!("`{key}` takes a range, e.g. `{key} = 4..8`")));
        };
        let (Some(a), Some(b)) = (&r.start, &r.end) else {
            return Err(self.fail(v, "the range needs both ends"));
        };
        let first = self.const_u32(a, "the range start")?;
        let end = self.const_u32(b, "the range end")?;
        let last = match r.limits {
            syn::RangeLimits::HalfOpen(_) => end.checked_sub(1),
            syn::RangeLimits::Closed(_) => Some(end),
        };
        match last {
            Some(last) if last >= first => Ok((first, last)),
            _ => Err(self.fail(v, "the range is empty")),
        }
    }

    /// Checks that warp / warpgroup / thread `last` exists for the kernel's `threads`.
    fn check_unit(&mut self, key: &str, last: u32, at: &SExpr) -> Res<()> {
        let threads = self.kernel.sig.threads;
        let (unit, count) = match key {
            "warp" | "warps" => ("warps", threads.div_ceil(32)),
            "warpgroup" | "warpgroups" => ("warpgroups", threads / 128),
            _ => ("threads", threads),
        };
        if last >= count {
            return Err(self.fail(at, format!("{key} {last} does not exist: the kernel has {count} {unit} (threads = {threads})")));
        }
        Ok(())
    }
}

/// The attributes of an expression statement.
fn expr_attrs(e: &SExpr) -> &[syn::Attribute] {
    match e {
        SExpr::ForLoop(x) => &x.attrs,
        SExpr::If(x) => &x.attrs,
        SExpr::Block(x) => &x.attrs,
        SExpr::Call(x) => &x.attrs,
        SExpr::MethodCall(x) => &x.attrs,
        SExpr::Assign(x) => &x.attrs,
        SExpr::Binary(x) => &x.attrs,
        _ => &[],
    }
}

/// `+=` etc. → the arithmetic op.
/// The tile operator of a compound assignment (`+=`, `-=`, `*=`, `/=`).
fn tile_compound(op: &syn::BinOp) -> Option<tirx_ir::TBin> {
    use tirx_ir::TBin;
    match op {
        syn::BinOp::AddAssign(_) => Some(TBin::Add),
        syn::BinOp::SubAssign(_) => Some(TBin::Sub),
        syn::BinOp::MulAssign(_) => Some(TBin::Mul),
        syn::BinOp::DivAssign(_) => Some(TBin::Div),
        _ => None,
    }
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as S;
    Some(match op {
        S::AddAssign(_) => BinOp::Add,
        S::SubAssign(_) => BinOp::Sub,
        S::MulAssign(_) => BinOp::Mul,
        S::DivAssign(_) => BinOp::Div,
        S::RemAssign(_) => BinOp::Rem,
        S::BitAndAssign(_) => BinOp::And,
        S::BitOrAssign(_) => BinOp::Or,
        S::BitXorAssign(_) => BinOp::Xor,
        S::ShlAssign(_) => BinOp::Shl,
        S::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

/// `e` without surrounding parentheses.
pub(crate) fn strip_parens(e: &SExpr) -> &SExpr {
    match e {
        SExpr::Paren(p) => strip_parens(&p.expr),
        SExpr::Group(g) => strip_parens(&g.expr),
        _ => e,
    }
}
