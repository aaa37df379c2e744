//! The kernel body (syn) → a `Tile`-phase `Kernel` for one config.
//!
//! [`lower`] walks the body once, resolving names lexically (locals shadow outer locals;
//! config constants, shape symbols, tensors and built-ins are global and cannot be shadowed),
//! folding constant subexpressions (config constants are immediates) and recording one span
//! per statement, buffer, barrier and pipeline in a [`SpanTable`].
//!
//! Errors do not stop the walk: each failing statement records its error and the next one is
//! lowered. A `let` whose value failed binds its name to a poison entry, so later uses do not
//! report a second, derived error.
//!
//! Tensor parameters live in the outermost scope. A call of a tile function is inlined
//! (`inline`): its body is lowered in a fresh environment above `env_base`, so it sees its
//! parameters and the global names but none of the caller's locals.
//!
//! Submodules: `expr` (scalars), `stmt` (statements, control flow, scopes), `ops` (op calls),
//! `operand` (tiles and barriers), `decl` (buffers, barriers, pipelines), `inline` (tile
//! function calls).

mod atomic;
mod clc;
mod decl;
mod expr;
mod gather;
mod inline;
mod operand;
mod ops;
mod shape_assert;
mod stmt;
mod tile;
mod vocab;
mod vote;

pub(crate) use vocab::reserved_call;

use crate::error::{Diag, SpanRange, SpanTable, span_range};
use crate::model::{ConfigDef, KernelDef};
use crate::module::TileFns;
use quote::ToTokens;
use tirx_ir::abi::Signature;
use tirx_ir::{Arena, Barrier, Block, Buffer, Expr, Handle, Kernel, Phase, Pipeline, Var};

/// A lowered body: the kernel and the table its span ids index.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The `Tile`-phase kernel (its signature is the one passed to [`lower`]).
    pub kernel: Kernel,
    /// Span ids → user tokens.
    pub spans: SpanTable,
}

/// One error of a lowering: where, what, and through which tile function calls.
pub type LowerError = Diag;

/// Lowers `def`'s body for `config` into a `Tile`-phase kernel with signature `sig`; `fns`
/// are the tile functions it may call.
///
/// An empty error list means a failure already reported elsewhere (a call of a tile function
/// whose signature is wrong).
pub fn lower(
    def: &KernelDef,
    fns: &TileFns,
    config: &ConfigDef,
    sig: Signature,
) -> Result<Lowered, Vec<LowerError>> {
    let kernel = Kernel {
        name: def.name.to_string(),
        config: config.name.clone(),
        consts: config.consts(),
        phase: Phase::Tile,
        sig,
        vars: Arena::new(),
        buffers: Arena::new(),
        barriers: Arena::new(),
        pipelines: Arena::new(),
        body: Vec::new(),
    };
    // An `f32` or 64-bit integer scalar is an argument of tile expressions; a 32-bit integer
    // one a runtime `u32` value like a shape symbol (`Expr::Dim` of its name: its own
    // parameter, see `Signature::int_scalar`).
    let mut values = Vec::new();
    let args: Vec<(String, Local)> = def
        .scalars
        .iter()
        .enumerate()
        .map(
            |(i, s)| match def.scalar_types[i].is_int() && !def.scalar_types[i].is_int64() {
                true => {
                    values.push(tirx_ir::ir::Expr::Dim(s.to_string()));
                    (s.to_string(), Local::Value(values.len() - 1))
                }
                false => (s.to_string(), Local::Arg(i)),
            },
        )
        .collect();
    let tensors = def
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.ident.to_string(), Local::Tensor(i)))
        .chain(args)
        .collect();
    let mut cx = Lowerer {
        def,
        fns,
        config,
        kernel,
        spans: SpanTable::new(def.name.span()),
        env: vec![tensors],
        env_base: 0,
        values,
        depth: 0,
        errors: Vec::new(),
        silent: false,
        tile_aliases: Vec::new(),
        mutable_tiles: Vec::new(),
        pre: Vec::new(),
    };
    let body = cx.block(&def.body.stmts);
    cx.kernel.body = body;
    if cx.errors.is_empty() && !cx.silent {
        Ok(Lowered {
            kernel: cx.kernel,
            spans: cx.spans,
        })
    } else {
        Err(cx.errors)
    }
}

/// What a local name refers to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Local {
    /// A scalar variable.
    Var { var: Handle<Var>, mutable: bool },
    /// A scalar parameter of a tile function bound to a value that needs no variable (an
    /// immediate, a shape symbol, a built-in): an index into `Lowerer::values`.
    Value(usize),
    /// A buffer.
    Buf(Handle<Buffer>),
    /// An mbarrier array.
    Bar(Handle<Barrier>),
    /// A pipeline.
    Pipe(Handle<Pipeline>),
    /// A tensor parameter of the kernel: an index into `KernelDef::params`.
    Tensor(usize),
    /// A scalar (`f32`) argument of the kernel: an index into `KernelDef::scalars`.
    Arg(usize),
    /// A mask or index tile bound by `let`: an index into `Lowerer::tile_aliases`.
    TileExpr(usize),
    /// A name whose declaration failed (already reported).
    Poison,
}

/// An error has been recorded; the caller skips what it was building.
#[derive(Debug)]
pub(crate) struct Fail;

/// Result of a lowering step.
pub(crate) type Res<T> = Result<T, Fail>;

/// The walk's state.
pub(crate) struct Lowerer<'a> {
    /// The kernel definition (params, configs).
    pub(crate) def: &'a KernelDef,
    /// The tile functions the body may call.
    pub(crate) fns: &'a TileFns,
    /// The config being lowered (its element types resolve `smem::<TA>` etc.).
    pub(crate) config: &'a ConfigDef,
    /// The kernel being built.
    pub(crate) kernel: Kernel,
    /// Spans of the built nodes.
    pub(crate) spans: SpanTable,
    /// Lexical scopes, innermost last; the first holds the tensor parameters.
    env: Vec<Vec<(String, Local)>>,
    /// The first scope visible: 0 in the kernel body, the callee's parameters' scope inside
    /// an inlined tile function.
    env_base: usize,
    /// The values of `Local::Value` bindings.
    values: Vec<Expr>,
    /// Nesting depth of blocks below the body (declarations only at depth 0).
    pub(crate) depth: usize,
    /// Errors so far.
    errors: Vec<LowerError>,
    /// A failure reported elsewhere (a call of a broken tile function).
    silent: bool,
    /// The expressions of `Local::TileExpr` bindings.
    tile_aliases: Vec<tirx_ir::TExpr>,
    /// Register tiles that may be assigned (declared with `regs`, or `let mut`).
    mutable_tiles: Vec<Handle<Buffer>>,
    /// Statements an operand needs before its op (a tile expression computed into a
    /// temporary), flushed by the statement that holds the op.
    pre: Block,
}

impl Lowerer<'_> {
    /// Records an error at `node` and returns the marker.
    /// An error at `node` that reads a name whose `let` failed is a follow-up of that error:
    /// it is not recorded (the build fails on the first one), so an error is never blamed on
    /// valid code that only uses a broken value.
    pub(crate) fn fail(&mut self, node: &impl ToTokens, message: impl Into<String>) -> Fail {
        if self.reads_poison(node.to_token_stream()) {
            return Fail;
        }
        self.fail_at(span_range(node), message)
    }

    /// Whether `tokens` name a poisoned local, outside `{ … }` blocks (an error at a whole
    /// statement with a block is about the statement, not a value inside it). A name after `.`
    /// or `:` is a field, method or path segment (`cta.x`, `tma::load`), not the local.
    fn reads_poison(&self, tokens: proc_macro2::TokenStream) -> bool {
        use proc_macro2::{Delimiter, TokenTree};
        let any_poison = self.env[self.env_base..]
            .iter()
            .flatten()
            .any(|(_, l)| matches!(l, Local::Poison));
        if !any_poison {
            return false;
        }
        let mut after_dot = false;
        for t in tokens {
            let hit = match &t {
                TokenTree::Ident(i) => {
                    !after_dot && matches!(self.local(&i.to_string()), Some(Local::Poison))
                }
                TokenTree::Group(g) if g.delimiter() != Delimiter::Brace => {
                    self.reads_poison(g.stream())
                }
                _ => false,
            };
            if hit {
                return true;
            }
            after_dot = matches!(&t, TokenTree::Punct(p) if matches!(p.as_char(), '.' | ':'));
        }
        false
    }

    /// Records an error at `range` and returns the marker.
    pub(crate) fn fail_at(&mut self, range: SpanRange, message: impl Into<String>) -> Fail {
        let calls = self.spans.current_calls();
        self.errors.push(Diag {
            range,
            message: message.into(),
            calls,
            assertion: false,
            notes: Vec::new(),
        });
        Fail
    }

    /// Records a failed `static_assert` at `node` (see [`Diag::assertion`]).
    pub(crate) fn fail_assertion(&mut self, node: &impl ToTokens, message: String) -> Fail {
        self.fail(node, message);
        if let Some(last) = self.errors.last_mut() {
            last.assertion = true;
        }
        Fail
    }

    /// Whether the walk is inside an inlined tile function.
    pub(crate) fn in_tile_fn(&self) -> bool {
        self.env_base > 0
    }

    /// Interns `node`'s range.
    pub(crate) fn span(&mut self, node: &impl ToTokens) -> tirx_ir::Span {
        self.spans.intern(node)
    }

    /// Opens a lexical scope.
    pub(crate) fn push_scope(&mut self) {
        self.env.push(Vec::new());
    }

    /// Closes the innermost lexical scope.
    pub(crate) fn pop_scope(&mut self) {
        self.env.pop();
    }

    /// The innermost local named `name`.
    pub(crate) fn local(&self, name: &str) -> Option<Local> {
        self.env[self.env_base..]
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, l)| *l)
    }

    /// Binds `ident` in the innermost scope; global names cannot be shadowed.
    pub(crate) fn bind(&mut self, ident: &syn::Ident, local: Local) -> Res<()> {
        let name = ident.to_string();
        let clash = if self.kernel.const_value(&name).is_some() {
            Some("a config constant")
        } else if self.config.elem_type(&name).is_some() {
            Some("a config element type")
        } else if self
            .def
            .params
            .iter()
            .any(|p| p.symbols().any(|s| *s == name))
        {
            Some("a shape symbol")
        } else if matches!(self.local(&name), Some(Local::Tensor(_))) {
            Some("a tensor parameter")
        } else if matches!(self.local(&name), Some(Local::Arg(_))) {
            Some("a scalar argument of the kernel")
        } else if vocab::is_builtin(&name) {
            Some("a built-in")
        } else {
            None
        };
        if let Some(what) = clash {
            return Err(self.fail(ident, format!("`{name}` is {what}; choose another name")));
        }
        self.push_local(name, local);
        Ok(())
    }

    /// Binds `ident` to a poison entry after its declaration failed (no further checks, so
    /// no second error).
    pub(crate) fn poison(&mut self, ident: &syn::Ident) {
        self.push_local(ident.to_string(), Local::Poison);
    }

    /// Adds a binding to the innermost scope (opening one if none is).
    fn push_local(&mut self, name: String, local: Local) {
        match self.env.last_mut() {
            Some(scope) => scope.push((name, local)),
            None => self.env.push(vec![(name, local)]),
        }
    }

    /// Every name visible here (for "did you mean" hints).
    pub(crate) fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.env[self.env_base..]
            .iter()
            .flatten()
            .map(|(n, _)| n.clone())
            .collect();
        names.extend(self.kernel.consts.iter().map(|(n, _)| n.clone()));
        names.extend(self.def.shape_symbols());
        names.extend(
            vocab::names(vocab::Kind::Builtin)
                .iter()
                .map(|s| s.to_string()),
        );
        names
    }

    /// "cannot find `name`" with a suggestion when a visible name is close.
    pub(crate) fn not_found(&mut self, ident: &syn::Ident) -> Fail {
        let name = ident.to_string();
        if let Some(t) = self.config.elem_type(&name) {
            let config = &self.config.name;
            return self.fail(
                ident,
                format!(
                    "`{name}` is an element type in config `{config}` ({}), not a value; use it as a type: `Tensor<{name}>`, `smem::<{name}>(..)`",
                    t.name()
                ),
            );
        }
        let hint = did_you_mean(&name, &self.visible_names());
        let Some(call) = self.spans.current_calls().into_iter().next() else {
            return self.fail(ident, format!("cannot find `{name}` in this kernel{hint}"));
        };
        // Inside a tile function: the caller's names are hidden on purpose.
        let callers = self.env[..self.env_base].iter().flatten();
        let hint = if callers.clone().any(|(n, _)| *n == name) {
            format!("; the caller's `{name}` is not visible here: pass it as a parameter")
        } else {
            hint
        };
        let f = call.callee;
        self.fail(
            ident,
            format!("cannot find `{name}` in tile function `{f}`{hint}"),
        )
    }
}

/// The candidates nearest to `name`, nearest first, at most three: those a few edits away (a
/// typo), then, for a name of three or more letters, those it begins or is a `_`-separated
/// word of (`exp` → `exp2_approx`, `sum` → `reduce_sum`). A name shorter than three letters
/// gets only its nearest typo.
pub(crate) fn nearest<'c>(name: &str, candidates: &'c [String]) -> Vec<&'c str> {
    let limit = (name.len() / 3).clamp(1, 3);
    let mut near: Vec<(usize, usize, &str)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let d = edit_distance(name, c);
        let word = name.len() >= 3
            && c != name
            && (c.starts_with(name) || c.split(['_', ':']).any(|w| w == name));
        if d <= limit {
            near.push((d, i, c));
        } else if word {
            near.push((limit + 1, i, c));
        }
    }
    near.sort();
    let mut out: Vec<&str> = Vec::new();
    for (_, _, c) in near {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out.truncate(if name.len() < 3 { 1 } else { 3 });
    out
}

/// "; did you mean `a`?", "; did you mean `a` or `b`?" or "; did you mean `a`, `b` or `c`?"
/// over the [`nearest`] candidates, or nothing when none is near.
pub(crate) fn did_you_mean(name: &str, candidates: &[String]) -> String {
    let near: Vec<String> = nearest(name, candidates)
        .iter()
        .map(|c| format!("`{c}`"))
        .collect();
    match near.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
    }
}

/// Edit distance over chars where an insertion, a deletion, a substitution or a swap of two
/// adjacent chars costs 1 (optimal string alignment), so `tlie` is one edit from `tile`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}
