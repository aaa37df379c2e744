//! What the macro extracted from the attribute and the function, checked: configs, targets,
//! tensor parameters, and which tensors the body writes.
//!
//! A `KernelDef` is always produced, even when the input has errors (they go to the sink and
//! the bad parts are left out), so the expansion can emit the module skeleton with the same
//! launcher the user expects.

use crate::args::{self, KernelArgs, path_ident};
use crate::error::{ErrorSink, span_range};
use crate::module::{ParamKind, TileFns};
use proc_macro2::TokenStream;
use std::collections::BTreeSet;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, FnArg, Ident, Pat, Stmt, Token, Type, Visibility};
use tirx_ir::Major;
use tirx_ir::abi::{ElemType, Target, TensorDecl};

/// Names the launcher uses for its own parameters; a tensor may not take them.
const RESERVED: [&str; 2] = ["rt", "config"];

pub use crate::configs::{ConfigDef, SymKind};

/// A tensor parameter's element type as written: a type name, or a config symbol whose value
/// is an element type (`Tensor<TA>`), which makes the generated launcher generic over it.
#[derive(Clone, Debug)]
pub enum ElemRef {
    /// `bf16`, `f16` or `f32`.
    Lit(ElemType),
    /// A config's element-type entry.
    Sym(Ident),
}

/// One dimension of a tensor's `#[shape(...)]`.
#[derive(Clone, Debug)]
pub enum ShapeDim {
    /// A shape symbol (`M`): the launched tensor's extent, bound at launch.
    Sym(Ident),
    /// A fixed extent: a literal or a constant expression over config constants
    /// (`1`, `HALF`, `2 * HALF`), folded in each config; the launch checks the tensor has it.
    Fixed(Expr),
    /// A dimension whose error was reported (a name of another kind of config entry).
    Poison(Ident),
}

impl ShapeDim {
    /// The symbol, if it is one.
    pub fn sym(&self) -> Option<&Ident> {
        match self {
            ShapeDim::Sym(id) => Some(id),
            ShapeDim::Fixed(_) | ShapeDim::Poison(_) => None,
        }
    }

    /// As written (`M`, `2 * HALF`).
    pub fn text(&self) -> String {
        match self {
            ShapeDim::Sym(id) | ShapeDim::Poison(id) => id.to_string(),
            ShapeDim::Fixed(e) => quote::quote!(#e).to_string(),
        }
    }

    /// In `config`: the symbol's name, or the fixed extent's value in decimal (positive).
    pub fn in_config(&self, config: &ConfigDef) -> Result<String, args::ConstError> {
        match self {
            ShapeDim::Sym(id) => Ok(id.to_string()),
            ShapeDim::Poison(_) => Ok("1".into()),
            ShapeDim::Fixed(e) => {
                let consts = config.consts();
                let lookup = |s: &str| consts.iter().find(|(n, _)| n == s).map(|(_, v)| *v);
                match args::eval_const(e, &lookup) {
                    Ok(v) if v >= 1 && v <= i64::from(u32::MAX) => Ok(v.to_string()),
                    Ok(v) => Err((
                        span_range(e),
                        format!("a fixed extent must be between 1 and 2³² − 1, found {v}"),
                    )),
                    Err((r, why)) => Err((
                        r,
                        format!(
                            "a fixed extent is a constant expression over config constants: {why}"
                        ),
                    )),
                }
            }
        }
    }
}

/// A tensor parameter: `#[shape(M, N)] name: Tensor<bf16>` or `Tensor<TA>`, optionally
/// `#[major(mn)]` (or `#[major(MB)]` with a config's majorness entry) and `#[independent]`.
#[derive(Clone, Debug)]
pub struct ParamDef {
    /// Parameter name.
    pub ident: Ident,
    /// Element type.
    pub elem: ElemRef,
    /// Shape symbols and fixed extents, outermost first: the logical shape (`[N, K]` for a B
    /// operand).
    pub shape: Vec<ShapeDim>,
    /// `#[major(…)]`: which of a tensor's last two dimensions is contiguous in memory. `None`
    /// or `k`: the last (row-major, as declared); `mn`: the one before — the tensor is stored
    /// with its last two logical dimensions swapped (`#[shape(N, K)] #[major(mn)]` is a K×N
    /// row-major array, `#[shape(B, N, K)] #[major(mn)]` a B×K×N one).
    pub major: Option<MajorRef>,
    /// `#[independent]`: no kernel before this one on the stream writes the tensor (or reads
    /// it, when this kernel writes it), so a kernel that calls `grid::dependency_wait()` may
    /// access it before the wait (`tirx_ir::passes::CheckGridDep`).
    pub independent: bool,
}

/// A tensor's majorness as written: `k`/`mn`, or a config's majorness entry.
#[derive(Clone, Debug)]
pub enum MajorRef {
    /// A literal majorness.
    Lit(Major),
    /// A config's majorness entry (`MB`).
    Sym(Ident),
}

impl ParamDef {
    /// The element type in `config` (`None`: a symbol `config` does not define as a type,
    /// reported by [`KernelDef::new`]).
    pub fn elem_in(&self, config: &ConfigDef) -> Option<ElemType> {
        match &self.elem {
            ElemRef::Lit(e) => Some(*e),
            ElemRef::Sym(id) => config.elem_type(&id.to_string()),
        }
    }

    /// The majorness in `config` (K-major unless `#[major(…)]` says otherwise; an undefined
    /// symbol was reported by [`KernelDef::new`]).
    pub fn major_in(&self, config: &ConfigDef) -> Major {
        match &self.major {
            None => Major::K,
            Some(MajorRef::Lit(m)) => *m,
            Some(MajorRef::Sym(id)) => config.major(&id.to_string()).unwrap_or(Major::K),
        }
    }

    /// The shape symbols, outermost first (fixed extents left out).
    pub fn symbols(&self) -> impl Iterator<Item = &Ident> {
        self.shape.iter().filter_map(ShapeDim::sym)
    }

    /// The signature's declaration of this tensor in `config`: its shape as stored (an
    /// MN-major tensor's last two logical dimensions swapped), which is what the host passes;
    /// a fixed extent is its value in decimal. (A fixed extent that does not fold is reported
    /// by [`crate::expand::lower_configs`]; nothing is compiled then.)
    pub fn decl(&self, config: &ConfigDef) -> TensorDecl {
        let mut shape: Vec<String> = self
            .shape
            .iter()
            .map(|d| d.in_config(config).unwrap_or_else(|_| "1".into()))
            .collect();
        if self.major_in(config) == Major::MN {
            let r = shape.len();
            shape.swap(r - 2, r - 1);
        }
        TensorDecl {
            name: self.ident.to_string(),
            // An undefined symbol was reported; nothing is compiled then.
            elem: self.elem_in(config).unwrap_or(ElemType::Bf16),
            shape,
        }
    }
}

/// Everything the macro knows about one `#[tile_kernel]` function.
#[derive(Clone, Debug)]
pub struct KernelDef {
    /// The function's name (also the generated module's name).
    pub name: Ident,
    /// The function's visibility (given to the module).
    pub vis: Visibility,
    /// `#[doc]` and `#[cfg]` attributes, forwarded to the module.
    pub attrs: Vec<Attribute>,
    /// The checked attribute.
    pub args: KernelArgs,
    /// Tensor parameters in order (bad ones left out).
    pub params: Vec<ParamDef>,
    /// Scalar parameters in order: the signature's `scalars`, passed by value after the
    /// tensors. An `f32` one is a float of tile expressions and a copy's scale (`alpha =
    /// alpha`); an `i32`/`u32` one a runtime `u32` scalar, like a shape symbol.
    pub scalars: Vec<Ident>,
    /// The type of each of `scalars`: `F32`, `I32` or `U32`.
    pub scalar_types: Vec<tirx_ir::abi::ElemType>,
    /// Names of tensors the body writes (launched as `&mut`).
    pub written: BTreeSet<String>,
    /// The body.
    pub body: syn::Block,
}

impl KernelDef {
    /// Reads the attribute tokens and the function; `fns` are the tile functions it may call.
    pub fn new(
        attr: TokenStream,
        item: syn::ItemFn,
        fns: &TileFns,
        sink: &mut ErrorSink,
    ) -> KernelDef {
        let name = item.sig.ident.clone();
        check_signature(&item.sig, sink);
        let args = args::parse_args(attr, &name, sink);
        let mut attrs = Vec::new();
        for a in &item.attrs {
            if a.path().is_ident("doc") || a.path().is_ident("cfg") {
                attrs.push(a.clone());
            } else {
                sink.push(span_range(a), "a tile kernel accepts only `#[doc]` and `#[cfg]` attributes besides `#[tile_kernel]`");
            }
        }
        let (mut params, mut scalars, mut scalar_types) = (Vec::new(), Vec::new(), Vec::new());
        for p in item.sig.inputs.iter().filter_map(|arg| param(arg, sink)) {
            match p {
                Param::Tensor(t) => params.push(t),
                Param::Scalar(id, ty) => {
                    scalars.push(id);
                    scalar_types.push(ty);
                }
            }
        }
        check_params(&mut params, &args, sink);
        let written = written_tensors(&item.block.stmts, fns);
        KernelDef {
            name,
            vis: item.vis,
            attrs,
            args,
            params,
            scalars,
            scalar_types,
            written,
            body: *item.block,
        }
    }

    /// Every shape symbol, in first-use order.
    pub fn shape_symbols(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.params.iter().flat_map(|p| p.symbols()) {
            if !out.iter().any(|o| s == o) {
                out.push(s.to_string());
            }
        }
        out
    }

    /// The tensor declarations in `config`, in parameter order.
    pub fn tensors(&self, config: &ConfigDef) -> Vec<TensorDecl> {
        self.params.iter().map(|p| p.decl(config)).collect()
    }

    /// The tensors declared `#[independent]`, by name.
    pub fn independent_tensors(&self) -> Vec<String> {
        self.params
            .iter()
            .filter(|p| p.independent)
            .map(|p| p.ident.to_string())
            .collect()
    }

    /// The config symbols tensor parameters use as element types, in first-use order: the
    /// type parameters of the generated launcher.
    pub fn type_params(&self) -> Vec<&Ident> {
        let mut out: Vec<&Ident> = Vec::new();
        for p in &self.params {
            if let ElemRef::Sym(id) = &p.elem
                && !out.contains(&id)
            {
                out.push(id);
            }
        }
        out
    }

    /// The targets.
    pub fn targets(&self) -> &[Target] {
        &self.args.targets
    }
}

/// A tile kernel is a plain `fn` with tensor parameters and no result.
fn check_signature(sig: &syn::Signature, sink: &mut ErrorSink) {
    let bad = |what: &str| format!("a tile kernel cannot be {what}");
    if let Some(t) = &sig.constness {
        sink.push(span_range(t), bad("`const`"));
    }
    if let Some(t) = &sig.asyncness {
        sink.push(span_range(t), bad("`async`"));
    }
    if let Some(abi) = &sig.abi {
        sink.push(span_range(abi), bad("`extern`"));
    }
    if !sig.generics.params.is_empty() {
        sink.push(
            span_range(&sig.generics),
            "a tile kernel takes no generic parameters; put comptime values in `configs(...)`",
        );
    }
    if let syn::ReturnType::Type(arrow, ty) = &sig.output {
        let range = (span_range(arrow).0, span_range(ty).1);
        sink.push(
            range,
            "a tile kernel returns nothing; write results with `copy` to an output tensor",
        );
    }
    if let Some(v) = &sig.variadic {
        sink.push(span_range(v), bad("variadic"));
    }
}

/// A kernel parameter: a tensor, or a scalar (`name: f32`, `n: i32`, `n: u32`).
enum Param {
    Tensor(ParamDef),
    Scalar(Ident, tirx_ir::abi::ElemType),
}

/// One parameter, or `None` after reporting why not.
fn param(arg: &FnArg, sink: &mut ErrorSink) -> Option<Param> {
    let FnArg::Typed(pt) = arg else {
        sink.push(span_range(arg), "a tile kernel takes no `self`");
        return None;
    };
    let Pat::Ident(pi) = &*pt.pat else {
        sink.push(span_range(&pt.pat), "expected a parameter name");
        return None;
    };
    let ident = pi.ident.clone();
    if RESERVED.contains(&ident.to_string().as_str()) {
        sink.push(
            span_range(&ident),
            format!("`{ident}` is a parameter of the generated launcher; rename this tensor"),
        );
        return None;
    }
    if let Type::Path(tp) = &*pt.ty
        && tp.qself.is_none()
        && let Some(ty) = ["f32", "i32", "u32", "i64", "u64"]
            .iter()
            .find(|t| tp.path.is_ident(t))
            .and_then(|t| tirx_ir::abi::ElemType::from_name(t))
    {
        if let Some(a) = pt.attrs.first() {
            sink.push(span_range(a), "a scalar parameter takes no attributes");
            return None;
        }
        return Some(Param::Scalar(ident, ty));
    }
    let elem = tensor_elem(&pt.ty, sink)?;
    let mut shape = None;
    let mut major = None;
    let mut independent = false;
    for a in &pt.attrs {
        if a.path().is_ident("shape") && shape.is_none() {
            match a.parse_args_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
                Ok(list) if !list.is_empty() => {
                    // A name is a shape symbol until `check_params` finds it among the config
                    // constants; anything else is a fixed extent.
                    let dims = list.into_iter().map(|e| match path_ident(&e) {
                        Some(id) => ShapeDim::Sym(id.clone()),
                        None => ShapeDim::Fixed(e),
                    });
                    shape = Some(dims.collect::<Vec<_>>())
                }
                Ok(_) => sink.push(span_range(a), "`#[shape(...)]` needs at least one symbol"),
                Err(e) => sink.push(span_range(a), format!("expected `#[shape(M, N)]`: {e}")),
            }
        } else if a.path().is_ident("major") && major.is_none() {
            match a.parse_args::<Ident>() {
                Ok(id) => {
                    major = Some(match Major::from_name(&id.to_string()) {
                        Some(m) => MajorRef::Lit(m),
                        None => MajorRef::Sym(id),
                    })
                }
                Err(_) => sink.push(
                    span_range(a),
                    "expected `#[major(k)]`, `#[major(mn)]` or `#[major(MB)]` with a config's majorness entry",
                ),
            }
        } else if a.path().is_ident("independent") && !independent {
            match &a.meta {
                syn::Meta::Path(_) => independent = true,
                _ => sink.push(
                    span_range(a),
                    "`#[independent]` takes no arguments: it says that no kernel before this one on the stream writes this tensor (or reads it, if this kernel writes it)",
                ),
            }
        } else {
            sink.push(
                span_range(a),
                "expected one `#[shape(M, N)]`, at most one `#[major(k | mn | MB)]` and at most one `#[independent]` attribute on a tensor parameter",
            );
        }
    }
    let Some(shape) = shape else {
        sink.push(
            span_range(&ident),
            format!("tensor `{ident}` needs its shape: `#[shape(M, N)] {ident}: Tensor<…>`"),
        );
        return None;
    };
    if major.is_some() && shape.len() < 2 {
        sink.push(
            span_range(&ident),
            format!(
                "`#[major(…)]` is for a tensor of rank 2 or more (which of its last two dimensions is contiguous); `{ident}` has rank {}",
                shape.len()
            ),
        );
        return None;
    }
    Some(Param::Tensor(ParamDef {
        ident,
        elem,
        shape,
        major,
        independent,
    }))
}

/// `Tensor<bf16 | f16 | f32 | SYM>` → the element type as written; a symbol is checked
/// against the configs by [`check_params`].
fn tensor_elem(ty: &Type, sink: &mut ErrorSink) -> Option<ElemRef> {
    let expected = "expected `Tensor<bf16>`, `Tensor<f16>`, `Tensor<f32>` or `Tensor<T>` with `T` a config's element type, or `f32`, `i32`, `u32`, `i64` or `u64` for a scalar";
    let Type::Path(tp) = ty else {
        sink.push(span_range(ty), expected);
        return None;
    };
    let last = tp.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(ab) = &last.arguments else {
        sink.push(span_range(ty), expected);
        return None;
    };
    if last.ident != "Tensor" || ab.args.len() != 1 {
        sink.push(span_range(ty), expected);
        return None;
    }
    let arg = &ab.args[0];
    let ident = match arg {
        syn::GenericArgument::Type(Type::Path(p)) if p.qself.is_none() => p.path.get_ident(),
        _ => None,
    };
    let Some(ident) = ident else {
        sink.push(
            span_range(arg),
            "unknown element type; expected bf16, f16, f32, i32, u32, i64, u64 or a config's element type",
        );
        return None;
    };
    Some(match ElemType::from_name(&ident.to_string()) {
        Some(e) => ElemRef::Lit(e),
        None => ElemRef::Sym(ident.clone()),
    })
}

/// Whether `name` is a Rust primitive number type (`i8`, `u64`, `f64`, `usize`, …).
fn is_rust_primitive(name: &str) -> bool {
    matches!(
        name,
        "i8" | "i16" | "i128" | "isize" | "u8" | "u16" | "u128" | "usize" | "f64" | "bool"
    )
}

/// A tensor's element-type symbol must be an element type in every config.
fn check_elem_sym(id: &Ident, args: &KernelArgs, sink: &mut ErrorSink) {
    let name = id.to_string();
    if args.configs.iter().all(|c| c.kind_of(&name).is_none()) {
        // A Rust primitive tirx does not have is not a config symbol to define: suggesting
        // one (`i64 = bf16`) would alias an integer to a float.
        let msg = if is_rust_primitive(&name) {
            format!(
                "unknown element type `{name}`; tensors hold bf16, f16, f32, i32, u32, i64, u64, the 8-bit \
                 MMA formats or a config's element type"
            )
        } else {
            format!(
                "unknown element type `{name}`; expected bf16, f16, f32, i32, u32, i64, u64 or a config's element type (`configs(default = (.., {name} = bf16))`)"
            )
        };
        sink.push(span_range(id), msg);
        return;
    }
    for c in &args.configs {
        let why = match c.kind_of(&name) {
            Some(SymKind::Type) => continue,
            Some(SymKind::Int) => "is an integer there, not an element type",
            Some(SymKind::Major) => "is a majorness there, not an element type",
            None => "is not defined there",
        };
        sink.push(
            span_range(id),
            format!(
                "`{name}` {why}: config `{}` needs `{name} = bf16`, `f16` or `f32`",
                c.name
            ),
        );
    }
}

/// Names must not collide: tensors with each other. A shape name that is an integer constant
/// of a config is a fixed extent; one that is an element type or a majorness is an error.
fn check_params(params: &mut [ParamDef], args: &KernelArgs, sink: &mut ErrorSink) {
    for p in params.iter_mut() {
        for d in &mut p.shape {
            let ShapeDim::Sym(s) = d else { continue };
            let name = s.to_string();
            let kinds: Vec<(&str, SymKind)> = args
                .configs
                .iter()
                .filter_map(|c| Some((c.name.as_str(), c.kind_of(&name)?)))
                .collect();
            if let Some((config, kind)) = kinds.iter().find(|(_, k)| *k != SymKind::Int) {
                sink.push(
                    span_range(s),
                    format!(
                        "`{s}` is {} in config `{config}`, not an extent: a dimension is a shape \
                         symbol or a constant expression over integer config constants",
                        kind.describe()
                    ),
                );
                *d = ShapeDim::Poison(s.clone());
            } else if !kinds.is_empty() {
                *d = ShapeDim::Fixed(syn::parse_quote!(#s));
            }
        }
    }
    let params = &*params;
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.ident == p.ident) {
            sink.push(
                span_range(&p.ident),
                format!("tensor `{}` declared twice", p.ident),
            );
        }
        if let ElemRef::Sym(id) = &p.elem {
            check_elem_sym(id, args, sink);
        }
        if let Some(MajorRef::Sym(id)) = &p.major {
            for c in &args.configs {
                if c.major(&id.to_string()).is_none() {
                    sink.push(
                        span_range(id),
                        format!(
                            "`{id}` is not a majorness in config `{}`: it needs `{id} = k` or `{id} = mn`",
                            c.name
                        ),
                    );
                    break;
                }
            }
        }
    }
}

/// Tensors the body writes: the `x` of `copy(x.tile(..), …)` and `tma::store(x.tile(..), …)`,
/// also through a call of a tile function whose `Global` parameter is written so.
/// Syntactic, so it works even when the body has errors.
pub fn written_tensors(stmts: &[Stmt], fns: &TileFns) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut scan = Writes {
        fns,
        active: Vec::new(),
    };
    scan.stmts(stmts, &mut out);
    out
}

/// The scan of [`written_tensors`]; `active` are the tile functions being scanned (a
/// recursive call is skipped here and reported by the lowering).
struct Writes<'f> {
    fns: &'f TileFns,
    active: Vec<String>,
}

impl Writes<'_> {
    fn stmts(&mut self, stmts: &[Stmt], out: &mut BTreeSet<String>) {
        for s in stmts {
            match s {
                Stmt::Expr(e, _) => self.expr(e, out),
                Stmt::Local(l) => {
                    if let Some(init) = &l.init {
                        self.expr(&init.expr, out);
                    }
                }
                _ => {}
            }
        }
    }

    fn expr(&mut self, e: &Expr, out: &mut BTreeSet<String>) {
        match e {
            Expr::Block(b) => self.stmts(&b.block.stmts, out),
            Expr::ForLoop(f) => self.stmts(&f.body.stmts, out),
            Expr::If(i) => {
                self.stmts(&i.then_branch.stmts, out);
                if let Some((_, els)) = &i.else_branch {
                    self.expr(els, out);
                }
            }
            Expr::Assign(a) => self.expr(&a.right, out),
            Expr::Paren(p) => self.expr(&p.expr, out),
            Expr::Call(c) => {
                if let Some(id) = copy_destination(c) {
                    out.insert(id.to_string());
                } else {
                    self.call(c, out);
                }
            }
            _ => {}
        }
    }

    /// A call of a tile function: the arguments of its written `Global` parameters.
    fn call(&mut self, c: &syn::ExprCall, out: &mut BTreeSet<String>) {
        let Some(f) = path_ident(&c.func).and_then(|id| self.fns.get(&id.to_string())) else {
            return;
        };
        let name = f.ident.to_string();
        if self.active.contains(&name) {
            return;
        }
        self.active.push(name);
        let mut inner = BTreeSet::new();
        self.stmts(&f.body.stmts, &mut inner);
        self.active.pop();
        for (p, a) in f.params.iter().zip(&c.args) {
            if p.kind == ParamKind::Global
                && inner.contains(&p.ident.to_string())
                && let Some(id) = path_ident(a)
            {
                out.insert(id.to_string());
            }
        }
    }
}

/// The `x` of `copy(x.tile(..), …)` and `tma::store(x.tile(..), …)` (or `x.at(..)`,
/// `x.at(..).within(..)`).
fn copy_destination(c: &syn::ExprCall) -> Option<&Ident> {
    let Expr::Path(p) = c.func.as_ref() else {
        return None;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let is_copy = matches!(
        segs.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["copy"] | ["tma", "store"]
    );
    match c.args.first() {
        Some(Expr::MethodCall(m)) if is_copy && (m.method == "tile" || m.method == "at") => {
            path_ident(&m.receiver)
        }
        Some(Expr::MethodCall(w)) if is_copy && w.method == "within" => match w.receiver.as_ref() {
            Expr::MethodCall(m) if m.method == "at" => path_ident(&m.receiver),
            _ => None,
        },
        _ => None,
    }
}
