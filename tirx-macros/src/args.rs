//! The `#[tile_kernel(...)]` attribute: syntax and meaning.
//!
//! Grammar (one comma-separated list of `key = value` or `key(list)`):
//! `targets(sm_90a, sm_100a)` or `target = sm_90a`; `threads = N`; `cluster = (x[, y[, z]])`;
//! `grid = (e[, e[, e]])`; `configs(name = (C = v, …), …)`.
//!
//! A config entry's value is either an integer constant expression (`BM = 128`) or an element
//! type (`TA = f16`, or the name of an earlier element-type entry: `TB = TA`). A name must be
//! the same kind in every config, so a symbol is an integer or a type, never both.
//!
//! Hand-written rather than darling, which needs syn 2. Every problem is reported at its token
//! and parsing continues, so one build shows every attribute mistake. Grid entries stay syntax
//! here: they fold differently per config (see [`grid_for`]).

use crate::configs::ConfigDef;
use crate::error::{ErrorSink, SpanRange, span_range};
use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Token};
use tirx_ir::abi::{ElemType, SymExpr, Target};
use tirx_ir::problem::{PROBLEM_KINDS, ProblemKind};

/// The attribute's keys, for the "unknown argument" message.
const KEYS: &str = "targets, target, threads, cluster, grid, configs, solves";

/// The attribute, checked. Missing or bad values have been reported and replaced by defaults.
#[derive(Clone, Debug)]
pub struct KernelArgs {
    /// Targets in declaration order (deduplicated).
    pub targets: Vec<Target>,
    /// Threads per CTA (128 when not written; a config-dependent count is in `threads_expr`).
    pub threads: u32,
    /// `threads = T` when it names config constants: evaluated per config
    /// ([`threads_for`]).
    pub threads_expr: Option<Expr>,
    /// Cluster shape (1s where a dimension names config constants: see `cluster_exprs`).
    pub cluster: [u32; 3],
    /// `cluster = (CS, 1, 1)` when an entry names config constants: evaluated per config
    /// ([`cluster_for`]).
    pub cluster_exprs: Option<Vec<Expr>>,
    /// Grid entries (1–3), as written.
    pub grid: Vec<Expr>,
    /// Configs; one config `default` with no constants when none is written.
    pub configs: Vec<ConfigDef>,
    /// `solves = kind`: the problem kind the kernel declares, and where.
    pub solves: Option<(ProblemKind, SpanRange)>,
}

/// One `key = value` or `key(list)` entry, before interpretation.
struct RawArg {
    key: Ident,
    value: RawValue,
}

enum RawValue {
    Eq(Box<Expr>),
    List(Punctuated<Expr, Token![,]>),
    Flag,
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            RawValue::Eq(Box::new(input.parse()?))
        } else if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            RawValue::List(content.parse_terminated(Expr::parse, Token![,])?)
        } else {
            RawValue::Flag
        };
        Ok(RawArg { key, value })
    }
}

/// Parses and checks the attribute's tokens. `name` is the function's name (the place for
/// "missing argument" errors).
pub fn parse_args(tokens: TokenStream, name: &Ident, sink: &mut ErrorSink) -> KernelArgs {
    let mut args = KernelArgs {
        targets: Vec::new(),
        threads: 128,
        threads_expr: None,
        cluster: [1, 1, 1],
        cluster_exprs: None,
        grid: Vec::new(),
        configs: Vec::new(),
        solves: None,
    };
    let mut seen: Vec<String> = Vec::new();
    match Punctuated::<RawArg, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(raw) => {
            for arg in &raw {
                // `target` and `targets` are one argument.
                let key = arg.key.to_string().replace("targets", "target");
                if seen.contains(&key) {
                    sink.push(
                        span_range(&arg.key),
                        format!("duplicate argument `{}`", arg.key),
                    );
                    continue;
                }
                seen.push(key);
                apply(&mut args, arg, sink);
            }
            let missing = |what: &str| format!("`#[tile_kernel]` needs {what}");
            for (key, what) in [
                ("target", "`target = sm_90a` or `targets(sm_90a, sm_100a)`"),
                ("threads", "`threads = N` (threads per CTA)"),
                (
                    "grid",
                    "`grid = (x, y, z)` (CTAs, over shape symbols and constants)",
                ),
            ] {
                if !seen.iter().any(|s| s == key) {
                    sink.push(span_range(name), missing(what));
                }
            }
        }
        Err(e) => sink.push_syn(e),
    }
    if args.targets.is_empty() {
        args.targets.push(Target::Sm90a);
    }
    if args.configs.is_empty() {
        args.configs.push(ConfigDef::default_config());
    }
    args
}

/// Interprets one argument into `args`.
fn apply(args: &mut KernelArgs, arg: &RawArg, sink: &mut ErrorSink) {
    let key = arg.key.to_string();
    match key.as_str() {
        "targets" | "target" => args.targets = parse_targets(arg, sink),
        "threads" => {
            if let Some(e) = expect_eq(arg, "threads = 128", sink) {
                // A count that names config constants is checked per config.
                match eval_const(e, &|_| None) {
                    Err(_) => args.threads_expr = Some(e.clone()),
                    Ok(_) => args.threads = positive(e, 1024, "`threads`", sink).unwrap_or(128),
                }
            }
        }
        "cluster" => {
            if let Some(dims) = tuple_arg(arg, "cluster = (2, 1, 1)", sink) {
                // Dimensions that name config constants are checked per config.
                if dims.iter().any(|e| eval_const(e, &|_| None).is_err())
                    && (1..=3).contains(&dims.len())
                {
                    args.cluster_exprs = Some(dims);
                } else {
                    args.cluster = cluster_dims(arg, &dims, sink);
                }
            }
        }
        "grid" => {
            if let Some(dims) = tuple_arg(arg, "grid = (cdiv(N, BN), cdiv(M, BM))", sink) {
                if dims.is_empty() || dims.len() > 3 {
                    sink.push(span_range(&arg.key), "`grid` takes 1 to 3 entries");
                }
                args.grid = dims.into_iter().take(3).collect();
            }
        }
        "configs" => match &arg.value {
            RawValue::List(list) => {
                let items: Vec<&Expr> = list.iter().collect();
                args.configs = crate::configs::parse_configs(&items, span_range(&arg.key), sink);
            }
            _ => sink.push(
                span_range(&arg.key),
                "expected `configs(default = (BM = 64, BN = 64), …)`",
            ),
        },
        "solves" => args.solves = parse_solves(arg, sink),
        _ => sink.push(
            span_range(&arg.key),
            format!("unknown argument `{key}`; expected {KEYS}"),
        ),
    }
}

/// `targets(a, b)` or `target = a`.
fn parse_targets(arg: &RawArg, sink: &mut ErrorSink) -> Vec<Target> {
    let items: Vec<&Expr> = match (&arg.value, arg.key == "target") {
        (RawValue::Eq(e), true) => vec![&**e],
        (RawValue::List(list), false) => list.iter().collect(),
        _ => {
            let hint = if arg.key == "target" {
                "target = sm_90a"
            } else {
                "targets(sm_90a, sm_100a)"
            };
            sink.push(span_range(&arg.key), format!("expected `{hint}`"));
            return Vec::new();
        }
    };
    if items.is_empty() {
        sink.push(
            span_range(&arg.key),
            "`targets` needs at least one target: sm_90a, sm_100a",
        );
    }
    let mut out = Vec::new();
    for item in items {
        let Some(name) = path_ident(item) else {
            sink.push(span_range(item), "expected a target name: sm_90a, sm_100a");
            continue;
        };
        match Target::from_name(&name.to_string()) {
            Ok(t) if out.contains(&t) => {
                sink.push(span_range(item), format!("target `{name}` listed twice"))
            }
            Ok(t) => out.push(t),
            Err(message) => sink.push(span_range(item), message),
        }
    }
    out
}

/// `cluster = (x[, y[, z]])`: 1–3 positive constants.
fn cluster_dims(arg: &RawArg, dims: &[Expr], sink: &mut ErrorSink) -> [u32; 3] {
    let mut out = [1u32; 3];
    if dims.is_empty() || dims.len() > 3 {
        sink.push(span_range(&arg.key), "`cluster` takes 1 to 3 entries");
    }
    for (slot, e) in out.iter_mut().zip(dims) {
        *slot = positive(e, 16, "a cluster dimension", sink).unwrap_or(1);
    }
    if let Err(message) = cluster_size(out) {
        sink.push(span_range(&dims[0]), message);
    }
    out
}

/// The portable cluster size (CUDA C Programming Guide, "Thread Block Clusters": 8 CTAs; more
/// needs the non-portable opt-in, which the runtime does not set).
pub const MAX_CLUSTER_SIZE: u32 = 8;

/// A cluster's CTA count against [`MAX_CLUSTER_SIZE`].
pub fn cluster_size(c: [u32; 3]) -> Result<u32, String> {
    let n = c.iter().product::<u32>();
    if n > MAX_CLUSTER_SIZE {
        return Err(format!(
            "a cluster of {}×{}×{} = {n} CTAs: the portable maximum is {MAX_CLUSTER_SIZE} \
             (a larger cluster needs the non-portable opt-in, which tirx's launch does not set)",
            c[0], c[1], c[2]
        ));
    }
    Ok(n)
}

/// `solves = kind`: one of [`PROBLEM_KINDS`].
fn parse_solves(arg: &RawArg, sink: &mut ErrorSink) -> Option<(ProblemKind, SpanRange)> {
    let names: Vec<&str> = PROBLEM_KINDS.iter().map(|k| k.name()).collect();
    let expected = format!(
        "expected `solves = kind` with kind one of: {}",
        names.join(", ")
    );
    let e = expect_eq(arg, "solves = gemm", sink)?;
    let Some(id) = path_ident(e) else {
        sink.push(span_range(e), expected);
        return None;
    };
    match ProblemKind::from_name(&id.to_string()) {
        Some(kind) => Some((kind, span_range(e))),
        None => {
            sink.push(
                span_range(e),
                format!("unknown problem kind `{id}`; {expected}"),
            );
            None
        }
    }
}

/// A constant in `1..=max`, or an error at it.
fn positive(e: &Expr, max: i64, what: &str, sink: &mut ErrorSink) -> Option<u32> {
    match eval_const(e, &|_| None) {
        Ok(v) if (1..=max).contains(&v) => Some(v as u32),
        Ok(v) => {
            sink.push(
                span_range(e),
                format!("{what} must be between 1 and {max}, found {v}"),
            );
            None
        }
        Err((range, why)) => {
            sink.push(range, format!("{what}: {why}"));
            None
        }
    }
}

/// The value of `key = value`, or an error showing `example`.
fn expect_eq<'a>(arg: &'a RawArg, example: &str, sink: &mut ErrorSink) -> Option<&'a Expr> {
    match &arg.value {
        RawValue::Eq(e) => Some(e),
        _ => {
            sink.push(span_range(&arg.key), format!("expected `{example}`"));
            None
        }
    }
}

/// The entries of `key = (a, b)` (also `key = a` and `key(a, b)`).
fn tuple_arg(arg: &RawArg, example: &str, sink: &mut ErrorSink) -> Option<Vec<Expr>> {
    match &arg.value {
        RawValue::Eq(e) => Some(tuple_elems(e).into_iter().cloned().collect()),
        RawValue::List(list) => Some(list.iter().cloned().collect()),
        RawValue::Flag => {
            sink.push(span_range(&arg.key), format!("expected `{example}`"));
            None
        }
    }
}

/// The elements of a tuple expression; a parenthesised or bare expression is one element.
pub fn tuple_elems(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Tuple(t) => t.elems.iter().collect(),
        Expr::Paren(p) => vec![&*p.expr],
        Expr::Group(g) => tuple_elems(&g.expr),
        _ => vec![e],
    }
}

/// The identifier of a one-segment path expression.
pub fn path_ident(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Expr::Group(g) => path_ident(&g.expr),
        _ => None,
    }
}

/// An identity for a token range (spans have no `PartialEq`; their debug form identifies
/// them), to group the configs one `product` generated.
pub type SpanKey = String;

/// The [`SpanKey`] of `range`.
pub fn span_key(range: &SpanRange) -> SpanKey {
    format!("{:?}{:?}", range.0, range.1)
}

/// Why a constant expression could not be evaluated, and where.
pub type ConstError = (SpanRange, String);

/// Evaluates an integer constant expression: literals, names `lookup` knows, parentheses,
/// unary `-`, `+ - * / % << >> & | ^`, `cdiv(a, b)`, `min(a, b)`, `max(a, b)`.
pub fn eval_const(e: &Expr, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, ConstError> {
    eval_const_with(e, lookup, &|_| None)
}

/// [`eval_const`] where `size_of(T)` is also a constant: the bytes of the element type `elems`
/// gives for `T` (a config's element-type entry).
pub fn eval_const_with(
    e: &Expr,
    lookup: &dyn Fn(&str) -> Option<i64>,
    elems: &dyn Fn(&str) -> Option<ElemType>,
) -> Result<i64, ConstError> {
    let eval_const =
        |e: &Expr, lookup: &dyn Fn(&str) -> Option<i64>| eval_const_with(e, lookup, elems);
    let fail = |what: String| Err((span_range(e), what));
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i
            .base10_parse::<i64>()
            .map_err(|err| (span_range(e), err.to_string())),
        Expr::Lit(_) => fail("expected an integer constant".into()),
        Expr::Paren(p) => eval_const(&p.expr, lookup),
        Expr::Group(g) => eval_const(&g.expr, lookup),
        Expr::Path(_) => match path_ident(e) {
            Some(id) => match lookup(&id.to_string()) {
                Some(v) => Ok(v),
                None => fail(format!("`{id}` is not a known constant here")),
            },
            None => fail("expected an integer constant".into()),
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => eval_const(&u.expr, lookup)?
            .checked_neg()
            .ok_or((span_range(e), "overflow".into())),
        Expr::Binary(b) => {
            let (l, r) = (eval_const(&b.left, lookup)?, eval_const(&b.right, lookup)?);
            let v = match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Div(_) => l.checked_div(r),
                syn::BinOp::Rem(_) => l.checked_rem(r),
                syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                syn::BinOp::Shr(_) => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
                syn::BinOp::BitAnd(_) => Some(l & r),
                syn::BinOp::BitOr(_) => Some(l | r),
                syn::BinOp::BitXor(_) => Some(l ^ r),
                _ => return fail("operator not allowed in a constant".into()),
            };
            v.ok_or((span_range(e), "overflow or division by zero".into()))
        }
        Expr::Call(c) => {
            let name = path_ident(&c.func)
                .map(|i| i.to_string())
                .unwrap_or_default();
            if name == "size_of" {
                let ty = match c.args.first().and_then(path_ident) {
                    Some(t) if c.args.len() == 1 => t.to_string(),
                    _ => return fail("expected `size_of(T)` with `T` an element type".into()),
                };
                return match ElemType::from_name(&ty).or_else(|| elems(&ty)) {
                    Some(elem) => Ok(i64::from(elem.bytes())),
                    None => fail(format!(
                        "`{ty}` is not an element type here (bf16, f16, f32 or an earlier element-type entry)"
                    )),
                };
            }
            let args: Vec<i64> = c
                .args
                .iter()
                .map(|a| eval_const(a, lookup))
                .collect::<Result<_, _>>()?;
            match (name.as_str(), args.as_slice()) {
                ("cdiv", [a, b]) if *b > 0 => {
                    Ok(a.div_euclid(*b) + i64::from(a.rem_euclid(*b) != 0))
                }
                ("min", [a, b]) => Ok(*a.min(b)),
                ("max", [a, b]) => Ok(*a.max(b)),
                _ => fail("expected `cdiv(a, b)`, `min(a, b)`, `max(a, b)` or `size_of(T)`".into()),
            }
        }
        _ => fail("expected an integer constant expression".into()),
    }
}

/// The threads per CTA in a config: the literal count, or `threads = T` evaluated over the
/// config's constants (1 to 1024).
pub fn threads_for(args: &KernelArgs, consts: &[(String, i64)]) -> Result<u32, ConstError> {
    let Some(e) = &args.threads_expr else {
        return Ok(args.threads);
    };
    let lookup = |s: &str| consts.iter().find(|(n, _)| n == s).map(|(_, v)| *v);
    match eval_const(e, &lookup) {
        Ok(v) if (1..=1024).contains(&v) => Ok(v as u32),
        Ok(v) => Err((
            span_range(e),
            format!("`threads` must be between 1 and 1024, found {v}"),
        )),
        Err((r, why)) => Err((r, format!("`threads`: {why}"))),
    }
}

/// The cluster shape in a config: the literal one, or each `cluster = (…)` entry evaluated
/// over the config's constants (1 to 16 each).
pub fn cluster_for(args: &KernelArgs, consts: &[(String, i64)]) -> Result<[u32; 3], ConstError> {
    let Some(dims) = &args.cluster_exprs else {
        return Ok(args.cluster);
    };
    let lookup = |s: &str| consts.iter().find(|(n, _)| n == s).map(|(_, v)| *v);
    let mut out = [1u32; 3];
    for (slot, e) in out.iter_mut().zip(dims) {
        match eval_const(e, &lookup) {
            Ok(v) if (1..=16).contains(&v) => *slot = v as u32,
            Ok(v) => {
                return Err((
                    span_range(e),
                    format!("a cluster dimension must be between 1 and 16, found {v}"),
                ));
            }
            Err((r, why)) => return Err((r, format!("a cluster dimension: {why}"))),
        }
    }
    cluster_size(out).map_err(|m| (span_range(&dims[0]), m))?;
    Ok(out)
}

/// The grid of one config: each entry folded into a `SymExpr` over `shapes`, padded to three
/// with 1. Errors carry their range.
pub fn grid_for(
    grid: &[Expr],
    consts: &[(String, i64)],
    shapes: &[String],
) -> Result<[SymExpr; 3], ConstError> {
    let mut out = [SymExpr::Const(1), SymExpr::Const(1), SymExpr::Const(1)];
    for (slot, e) in out.iter_mut().zip(grid) {
        *slot = grid_sym(e, consts, shapes)?;
    }
    Ok(out)
}

/// One grid entry: constants fold; shape symbols and `SMS` (the device's SM count) stay;
/// `cdiv`, `/` (floor) and `*` combine them.
fn grid_sym(e: &Expr, consts: &[(String, i64)], shapes: &[String]) -> Result<SymExpr, ConstError> {
    let lookup = |s: &str| consts.iter().find(|(n, _)| n == s).map(|(_, v)| *v);
    if let Ok(v) = eval_const(e, &lookup) {
        return u64::try_from(v)
            .map(SymExpr::Const)
            .map_err(|_| (span_range(e), format!("grid entry is negative ({v})")));
    }
    let sym = |x: &Expr| grid_sym(x, consts, shapes).map(Box::new);
    match e {
        Expr::Paren(p) => grid_sym(&p.expr, consts, shapes),
        Expr::Group(g) => grid_sym(&g.expr, consts, shapes),
        Expr::Path(_) => match path_ident(e) {
            Some(id) if shapes.contains(&id.to_string()) => Ok(SymExpr::Sym(id.to_string())),
            Some(id) if id == "SMS" => Ok(SymExpr::Sms),
            _ => Err((
                span_range(e),
                format!(
                    "unknown name `{}` in the grid; expected a shape symbol ({}), a config \
                     constant or `SMS` (the device's SM count)",
                    quote::quote!(#e),
                    shapes.join(", ")
                ),
            )),
        },
        Expr::Binary(b) if matches!(b.op, syn::BinOp::Mul(_)) => {
            Ok(SymExpr::Mul(sym(&b.left)?, sym(&b.right)?))
        }
        Expr::Binary(b) if matches!(b.op, syn::BinOp::Div(_)) => {
            Ok(SymExpr::Div(sym(&b.left)?, sym(&b.right)?))
        }
        Expr::Call(c) if path_ident(&c.func).is_some_and(|i| i == "cdiv") && c.args.len() == 2 => {
            Ok(SymExpr::CeilDiv(sym(&c.args[0])?, sym(&c.args[1])?))
        }
        _ => Err((
            span_range(e),
            "a grid entry is a constant, a shape symbol, `SMS`, or `cdiv(a, b)`, `a / b`, `a * b` \
             of those"
                .into(),
        )),
    }
}
