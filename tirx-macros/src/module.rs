//! What the macro extracted from a `#[tile_module] mod … { … }`: its tile functions, with
//! checked signatures, and its other items, sorted into kernels and pass-through items.
//!
//! The language of a module:
//! - `#[tile_kernel(...)] fn` — a kernel, expanded exactly as outside a module, with the
//!   module's tile functions callable from its body.
//! - `#[tile_fn] fn name(p: Kind, …) -> R { … }` — a tile function, inlined at every call (see
//!   `parse/inline.rs`); it leaves no item behind. Parameter kinds are the scalars `u32` and
//!   `bool` and the markers `Smem`, `Tmem`, `Regs` (buffers), `Bar` (an mbarrier array),
//!   `Pipe` (a pipeline) and `Global` (a tensor parameter of the kernel). `R` is nothing, a
//!   scalar, or a tuple of two or more scalars.
//! - Anything else (`use`, `const`, plain functions, nested modules) passes through unchanged;
//!   a nested module is ordinary Rust, so kernels inside it do not see this module's tile
//!   functions.
//!
//! The attributes are recognised by their last path segment (`tile_kernel`, `tile_fn`), and
//! the expansion keeps one `use <path> as _;` per path so that the attribute must resolve like
//! any other (and the module's `use tirx::prelude::*;` counts as used).
//!
//! A tile function's body is checked where it is inlined (it needs the calling kernel's
//! constants and declarations), so one that no kernel calls is checked for its signature only.
//!
//! A `TileFnDef` is produced even for a bad signature (`broken`, errors in the sink): calls to
//! it then fail silently instead of repeating the signature's errors at every call.

use crate::error::{ErrorSink, span_range};
use proc_macro2::TokenStream;
use syn::{FnArg, Ident, Item, Pat, ReturnType, Type};
use tirx_ir::{ScalarType, Space};

/// The parameter types a tile function accepts, for error messages.
const PARAM_TYPES: &str = "u32, bool (scalars), f32 (a scalar argument of the kernel), Smem, Tmem, \
                           Regs (buffers), Bar (an mbarrier), Pipe (a pipeline), Global (a tensor)";

/// What a tile function parameter binds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A scalar value (`u32` or `bool`).
    Scalar(ScalarType),
    /// A buffer in this memory space (`Smem`, `Tmem`, `Regs`).
    Buf(Space),
    /// An mbarrier array (`Bar`).
    Bar,
    /// A pipeline (`Pipe`).
    Pipe,
    /// A tensor parameter of the calling kernel (`Global`).
    Global,
    /// A scalar (`f32`) argument of the calling kernel, passed on by name (`f32`).
    Arg,
}

impl ParamKind {
    /// The kind written as the type `name`.
    fn from_type_name(name: &str) -> Option<ParamKind> {
        Some(match name {
            "u32" => ParamKind::Scalar(ScalarType::U32),
            "bool" => ParamKind::Scalar(ScalarType::Pred),
            "Smem" => ParamKind::Buf(Space::Shared),
            "Tmem" => ParamKind::Buf(Space::Tmem),
            "Regs" => ParamKind::Buf(Space::Reg),
            "Bar" => ParamKind::Bar,
            "Pipe" => ParamKind::Pipe,
            "Global" => ParamKind::Global,
            "f32" => ParamKind::Arg,
            _ => return None,
        })
    }

    /// The type as the user writes it.
    pub fn type_name(self) -> &'static str {
        match self {
            ParamKind::Scalar(ty) => scalar_type_name(ty),
            ParamKind::Buf(Space::Shared) => "Smem",
            ParamKind::Buf(Space::Tmem) => "Tmem",
            ParamKind::Buf(Space::Reg) => "Regs",
            ParamKind::Bar => "Bar",
            ParamKind::Pipe => "Pipe",
            ParamKind::Global => "Global",
            ParamKind::Arg => "f32",
        }
    }

    /// What an argument must be, in words (`a smem buffer`).
    pub fn describe(self) -> &'static str {
        match self {
            ParamKind::Scalar(ScalarType::Pred) => "a predicate",
            ParamKind::Scalar(_) => "a u32 scalar",
            ParamKind::Buf(Space::Shared) => "a smem buffer",
            ParamKind::Buf(Space::Tmem) => "a tmem buffer",
            ParamKind::Buf(Space::Reg) => "a reg buffer",
            ParamKind::Bar => "an mbarrier",
            ParamKind::Pipe => "a pipeline",
            ParamKind::Global => "a global tensor",
            ParamKind::Arg => "an f32 argument of the kernel",
        }
    }
}

/// `u32` / `bool`: a scalar type as the user writes it.
pub fn scalar_type_name(ty: ScalarType) -> &'static str {
    if ty == ScalarType::Pred {
        "bool"
    } else {
        "u32"
    }
}

/// One parameter of a tile function.
#[derive(Clone, Debug)]
pub struct TileParam {
    /// Its name.
    pub ident: Ident,
    /// What it binds to.
    pub kind: ParamKind,
    /// `mut p: u32`: the body may assign it (it gets its own variable).
    pub mutable: bool,
}

/// A `#[tile_fn]`.
#[derive(Clone, Debug)]
pub struct TileFnDef {
    /// Its name.
    pub ident: Ident,
    /// Its parameters (a bad one is left out and `broken` set).
    pub params: Vec<TileParam>,
    /// Its results: none, one, or a tuple's elements.
    pub ret: Vec<ScalarType>,
    /// The written return type (`fn` name when there is none), for "end the body with…".
    pub ret_at: TokenStream,
    /// The body; its tail expression is the result.
    pub body: syn::Block,
    /// The signature had an error (already reported).
    pub broken: bool,
}

impl TileFnDef {
    /// Reads a tile function whose `#[tile_fn]` attribute was removed.
    pub fn new(item: syn::ItemFn, sink: &mut ErrorSink) -> TileFnDef {
        let before = sink.pushes();
        for a in &item.attrs {
            if !a.path().is_ident("doc") {
                sink.push(
                    span_range(a),
                    "a tile function accepts only `#[doc]` attributes besides `#[tile_fn]`",
                );
            }
        }
        let sig = &item.sig;
        check_modifiers(sig, sink);
        let name = sig.ident.to_string();
        // Built-in ops, declarations and scalar functions are called with the same syntax.
        if crate::parse::reserved_call(&name) {
            sink.push(
                span_range(&sig.ident),
                format!(
                    "`{name}` is a built-in of the language; name the tile function differently"
                ),
            );
        }
        let mut params: Vec<TileParam> = Vec::new();
        for arg in &sig.inputs {
            let Some(p) = param(arg, sink) else { continue };
            if params.iter().any(|q| q.ident == p.ident) {
                sink.push(
                    span_range(&p.ident),
                    format!("parameter `{}` declared twice", p.ident),
                );
                continue;
            }
            params.push(p);
        }
        let (ret, ret_at) = match &sig.output {
            ReturnType::Default => (Vec::new(), quote::ToTokens::to_token_stream(&sig.ident)),
            ReturnType::Type(_, ty) => (results(ty, sink), quote::quote!(#ty)),
        };
        TileFnDef {
            ident: sig.ident.clone(),
            params,
            ret,
            ret_at,
            body: *item.block,
            broken: sink.pushes() > before,
        }
    }

    /// `name(p: Kind, …)`, for arity errors.
    pub fn usage(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{}: {}", p.ident, p.kind.type_name()))
            .collect();
        format!("{}({})", self.ident, params.join(", "))
    }

    /// The results as written: `nothing`, `u32`, `(u32, u32)`.
    pub fn ret_text(&self) -> String {
        let names: Vec<&str> = self.ret.iter().map(|t| scalar_type_name(*t)).collect();
        match names.as_slice() {
            [] => "nothing".into(),
            [one] => (*one).into(),
            _ => format!("({})", names.join(", ")),
        }
    }
}

/// A tile function is a plain `fn`: no `const`, `async`, `unsafe`, ABI, generics or variadics.
fn check_modifiers(sig: &syn::Signature, sink: &mut ErrorSink) {
    let bad = |what: &str| format!("a tile function cannot be {what}");
    if let Some(t) = &sig.constness {
        sink.push(span_range(t), bad("`const`"));
    }
    if let Some(t) = &sig.asyncness {
        sink.push(span_range(t), bad("`async`"));
    }
    if let syn::Safety::Unsafe(t) = &sig.safety {
        sink.push(span_range(t), bad("`unsafe`"));
    }
    if let Some(abi) = &sig.abi {
        sink.push(span_range(abi), bad("`extern`"));
    }
    if !sig.generics.params.is_empty() {
        sink.push(
            span_range(&sig.generics),
            "a tile function takes no generic parameters; config constants are visible in its body",
        );
    }
    if let Some(v) = &sig.variadic {
        sink.push(span_range(v), bad("variadic"));
    }
}

/// One parameter `name: Kind` / `mut name: u32`, or `None` after reporting why not.
fn param(arg: &FnArg, sink: &mut ErrorSink) -> Option<TileParam> {
    let FnArg::Typed(pt) = arg else {
        sink.push(span_range(arg), "a tile function takes no `self`");
        return None;
    };
    if let Some(a) = pt.attrs.first() {
        sink.push(
            span_range(a),
            "attributes on tile function parameters are not supported",
        );
    }
    let Pat::Ident(pi) = &*pt.pat else {
        sink.push(span_range(&pt.pat), "expected a parameter name");
        return None;
    };
    if pi.by_ref.is_some() || pi.subpat.is_some() {
        sink.push(span_range(&pt.pat), "expected a parameter name");
        return None;
    }
    let kind = type_ident(&pt.ty).and_then(|i| ParamKind::from_type_name(&i.to_string()));
    let Some(kind) = kind else {
        sink.push(
            span_range(&pt.ty),
            format!("unknown parameter type; expected {PARAM_TYPES}"),
        );
        return None;
    };
    let mutable = pi.mutability.is_some();
    if mutable && !matches!(kind, ParamKind::Scalar(_)) {
        sink.push(
            span_range(&pi.mutability),
            format!(
                "only scalar parameters can be `mut`; `{}` is not a variable",
                kind.type_name()
            ),
        );
    }
    Some(TileParam {
        ident: pi.ident.clone(),
        kind,
        mutable,
    })
}

/// The single identifier a type path consists of (`u32`, `Smem`).
fn type_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Type::Group(g) => type_ident(&g.elem),
        _ => None,
    }
}

/// The results of `-> ty`: a scalar, `()`, or a tuple of two or more scalars.
fn results(ty: &Type, sink: &mut ErrorSink) -> Vec<ScalarType> {
    let scalar = |t: &Type| match type_ident(t).map(Ident::to_string).as_deref() {
        Some("u32") => Some(ScalarType::U32),
        Some("bool") => Some(ScalarType::Pred),
        _ => None,
    };
    let expected = "a tile function returns nothing, a scalar (`u32`, `bool`) or a tuple of scalars (`(u32, u32)`)";
    match ty {
        Type::Tuple(t) if t.elems.is_empty() => Vec::new(),
        Type::Tuple(t) if t.elems.len() == 1 => {
            sink.push(
                span_range(ty),
                "a one-element tuple; write the scalar type itself",
            );
            Vec::new()
        }
        Type::Tuple(t) => {
            let mut out = Vec::new();
            for e in &t.elems {
                match scalar(e) {
                    Some(s) => out.push(s),
                    None => sink.push(span_range(e), expected),
                }
            }
            out
        }
        Type::Paren(p) => results(&p.elem, sink),
        _ => match scalar(ty) {
            Some(s) => vec![s],
            None => {
                sink.push(span_range(ty), expected);
                Vec::new()
            }
        },
    }
}

/// The tile functions of one module (empty for a kernel outside a module).
#[derive(Clone, Debug, Default)]
pub struct TileFns {
    fns: Vec<TileFnDef>,
}

impl TileFns {
    /// The tile function named `name`.
    pub fn get(&self, name: &str) -> Option<&TileFnDef> {
        self.fns.iter().find(|f| f.ident == name)
    }

    /// Their names, in definition order.
    pub fn names(&self) -> Vec<String> {
        self.fns.iter().map(|f| f.ident.to_string()).collect()
    }

    /// Adds `f`, or reports a second definition of its name.
    fn add(&mut self, f: TileFnDef, sink: &mut ErrorSink) {
        if self.get(&f.ident.to_string()).is_some() {
            let message = format!("tile function `{}` defined twice", f.ident);
            sink.push(span_range(&f.ident), message);
            return;
        }
        self.fns.push(f);
    }
}

/// One item of the module, sorted.
pub enum ModuleItem {
    /// A `#[tile_kernel(attr)]` function (the attribute removed).
    Kernel {
        /// The attribute's arguments.
        attr: TokenStream,
        /// The function.
        item: syn::ItemFn,
    },
    /// Anything else, unchanged.
    Other(Item),
}

/// A `#[tile_module]`'s contents.
pub struct ModuleDef {
    /// The items, in order (tile functions left out).
    pub items: Vec<ModuleItem>,
    /// The tile functions.
    pub fns: TileFns,
    /// The distinct attribute paths consumed (`tile_kernel`, `tile_fn`, …), to keep resolving.
    pub markers: Vec<syn::Path>,
}

impl ModuleDef {
    /// Sorts `items`, checking the tile functions' signatures.
    pub fn new(items: Vec<Item>, sink: &mut ErrorSink) -> ModuleDef {
        let mut out = ModuleDef {
            items: Vec::new(),
            fns: TileFns::default(),
            markers: Vec::new(),
        };
        for item in items {
            out.item(item, sink);
        }
        out
    }

    fn item(&mut self, mut item: Item, sink: &mut ErrorSink) {
        let Some(attrs) = item_attrs(&mut item) else {
            self.items.push(ModuleItem::Other(item));
            return;
        };
        let kernel = take_attr(attrs, "tile_kernel");
        let tile_fn = take_attr(attrs, "tile_fn");
        for a in kernel.iter().chain(&tile_fn) {
            let path = a.path().clone();
            let text = quote::quote!(#path).to_string();
            if !self
                .markers
                .iter()
                .any(|m| quote::quote!(#m).to_string() == text)
            {
                self.markers.push(path);
            }
        }
        let func = match item {
            Item::Fn(f) => f,
            other => {
                if let Some(a) = kernel.iter().chain(&tile_fn).next() {
                    sink.push(span_range(a), "this attribute applies to a function");
                }
                self.items.push(ModuleItem::Other(other));
                return;
            }
        };
        match (kernel, tile_fn) {
            (Some(k), Some(_)) => {
                sink.push(
                    span_range(&k),
                    "a function is either a kernel (`#[tile_kernel]`) or a tile function (`#[tile_fn]`), not both",
                );
            }
            (Some(k), None) => {
                let attr = match &k.meta {
                    syn::Meta::Path(_) => TokenStream::new(),
                    syn::Meta::List(list) => list.tokens.clone(),
                    syn::Meta::NameValue(_) => {
                        sink.push(span_range(&k), "expected `#[tile_kernel(...)]`");
                        TokenStream::new()
                    }
                };
                self.items.push(ModuleItem::Kernel { attr, item: func });
            }
            (None, Some(t)) => {
                if !matches!(t.meta, syn::Meta::Path(_)) {
                    sink.push(span_range(&t), "`#[tile_fn]` takes no arguments");
                }
                let f = TileFnDef::new(func, sink);
                self.fns.add(f, sink);
            }
            (None, None) => self.items.push(ModuleItem::Other(Item::Fn(func))),
        }
    }
}

/// The attributes of the items that can carry ours.
fn item_attrs(item: &mut Item) -> Option<&mut Vec<syn::Attribute>> {
    Some(match item {
        Item::Fn(i) => &mut i.attrs,
        Item::Const(i) => &mut i.attrs,
        Item::Static(i) => &mut i.attrs,
        Item::Struct(i) => &mut i.attrs,
        Item::Enum(i) => &mut i.attrs,
        Item::Mod(i) => &mut i.attrs,
        Item::Use(i) => &mut i.attrs,
        Item::Type(i) => &mut i.attrs,
        _ => return None,
    })
}

/// Removes and returns the first attribute whose path ends in `name`.
fn take_attr(attrs: &mut Vec<syn::Attribute>, name: &str) -> Option<syn::Attribute> {
    let i = attrs
        .iter()
        .position(|a| a.path().segments.last().is_some_and(|s| s.ident == name))?;
    Some(attrs.remove(i))
}
