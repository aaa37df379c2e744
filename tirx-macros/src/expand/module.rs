//! `#[tile_module] mod name { … }` → the same module with every kernel expanded (as
//! `super::kernel`, with the module's tile functions), the tile functions removed (they are
//! inlined into the kernels and are not Rust), every other item unchanged, and a
//! `pub static KERNELS: &[&tirx::Kernel]` listing the module's kernels in source order.
//!
//! One `#[allow(unused_imports)] use <attribute path> as _;` per consumed attribute path keeps
//! `#[tile_kernel]` / `#[tile_fn]` resolving like ordinary attributes (a typo or a missing
//! import is still an error at the attribute) and marks the module's own
//! `use tirx::prelude::*;` as used.
//!
//! The module's errors (attribute, tile function signatures) come first in the module; each
//! kernel's errors sit next to its generated module, as outside a module.

use crate::error::{ErrorSink, error_at, span_range};
use crate::module::{ModuleDef, ModuleItem};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Item;
use syn::spanned::Spanned;

/// `#[tile_module(attr)] item` → the module (plus `compile_error!`s on errors).
pub fn tile_module(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut module: syn::ItemMod = match syn::parse2(item) {
        Ok(m) => m,
        Err(e) => {
            let message = format!("`#[tile_module]` applies to a module `mod name {{ … }}`: {e}");
            return syn::Error::new(e.span(), message).into_compile_error();
        }
    };
    let mut sink = ErrorSink::new();
    match ModuleAttr::parse(attr) {
        Ok(ModuleAttr::Plain) => {}
        Ok(ModuleAttr::Library) => return library(module),
        Ok(ModuleAttr::Uses(paths)) => return uses(module, &paths),
        Err(e) => sink.push(span_range(&e.0), e.1),
    }
    let Some((brace, items)) = module.content.take() else {
        sink.push(
            span_range(&module),
            "`#[tile_module]` needs the module's items inline, `mod name { … }`: a macro cannot read another file",
        );
        let errors = sink.into_compile_errors();
        return quote!(#errors #module);
    };
    let def = ModuleDef::new(items, &mut sink);
    let mut out: Vec<Item> = Vec::new();
    let mut kernels = Vec::new();
    for item in def.items {
        out.push(match item {
            ModuleItem::Kernel { attr, item } => {
                kernels.push(item.sig.ident.clone());
                Item::Verbatim(super::kernel(attr, item, &def.fns))
            }
            ModuleItem::Other(item) => item,
        });
    }
    out.push(Item::Verbatim(quote! {
        /// Every kernel of this module, in source order: what a catalogue is built from.
        pub static KERNELS: &[&::tirx::Kernel] = &[#(&#kernels::KERNEL),*];
    }));
    for path in &def.markers {
        out.push(Item::Verbatim(quote_spanned! {path.span()=>
            #[allow(unused_imports)]
            use #path as _;
        }));
    }
    if !sink.is_empty() {
        out.insert(0, Item::Verbatim(sink.into_compile_errors()));
    }
    module.content = Some((brace, out));
    quote!(#module)
}

/// What `#[tile_module(…)]` was asked for.
enum ModuleAttr {
    /// `#[tile_module]`: kernels and tile functions.
    Plain,
    /// `#[tile_module(library)]`: tile functions for other modules, in other files.
    Library,
    /// `#[tile_module(uses(path::lib, …))]`: kernels and tile functions, plus the tile
    /// functions of these libraries.
    Uses(Vec<syn::Path>),
}

impl ModuleAttr {
    const USAGE: &'static str = "expected `#[tile_module]`, `#[tile_module(library)]` or `#[tile_module(uses(path::to::library, …))]`";

    fn parse(attr: TokenStream) -> Result<ModuleAttr, (TokenStream, &'static str)> {
        if attr.is_empty() {
            return Ok(ModuleAttr::Plain);
        }
        let bad = |t: &TokenStream| (t.clone(), ModuleAttr::USAGE);
        if let Ok(id) = syn::parse2::<syn::Ident>(attr.clone()) {
            return if id == "library" {
                Ok(ModuleAttr::Library)
            } else {
                Err(bad(&attr))
            };
        }
        let list: syn::MetaList = syn::parse2(attr.clone()).map_err(|_| bad(&attr))?;
        if !list.path.is_ident("uses") {
            return Err(bad(&attr));
        }
        let paths = list
            .parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .map_err(|_| bad(&attr))?;
        if paths.is_empty() {
            return Err(bad(&attr));
        }
        Ok(ModuleAttr::Uses(paths.into_iter().collect()))
    }
}

/// `#[tile_module(library)] mod lib { #[tile_fn] fn … }` → a `macro_rules! lib` that puts
/// these tile functions into a module and expands it as a `#[tile_module]` (with the
/// attribute it is handed), and `pub(crate) use lib;` so other files name it by path. The
/// functions' tokens keep their spans, so an error in one points at this file. A library
/// holds only tile functions; `#[tile_fn]` is written out as `::tirx::tile_fn`.
fn library(module: syn::ItemMod) -> TokenStream {
    let name = module.ident.clone();
    let Some((_, items)) = module.content else {
        return error_at(
            span_range(&module),
            "`#[tile_module(library)]` needs its items inline, `mod name { … }`",
        )
        .into_compile_error();
    };
    let is_tile_fn = |a: &syn::Attribute| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "tile_fn")
    };
    let mut fns = Vec::new();
    let mut errors = TokenStream::new();
    for item in items {
        match item {
            Item::Fn(mut f) if f.attrs.iter().any(is_tile_fn) => {
                f.attrs.retain(|a| !is_tile_fn(a));
                fns.push(quote!(#[::tirx::tile_fn] #f));
            }
            // The library's own `use tirx::prelude::*;` is for readers; the using module has its own.
            Item::Use(_) => {}
            other => errors.extend(
                error_at(
                    span_range(&other),
                    "a tile library holds only tile functions (`#[tile_fn] fn …`)",
                )
                .into_compile_error(),
            ),
        }
    }
    let doc = format!(
        "The tile functions of library `{name}`: `#[tile_module(uses({name}))]` on a module adds them to it."
    );
    quote! {
        #errors
        #[doc = #doc]
        #[allow(unused_macros)]
        macro_rules! #name {
            ({ $($attr:tt)* } $(#[$m:meta])* $v:vis mod $n:ident { $($body:tt)* }) => {
                #[::tirx::tile_module($($attr)*)]
                $(#[$m])* $v mod $n { #(#fns)* $($body)* }
            };
        }
        #[allow(unused_imports)]
        pub(crate) use #name;
    }
}

/// `#[tile_module(uses(a, b))] mod m { … }` → `a! { { uses(b) } mod m { … } }`: the first
/// library adds its tile functions and hands the module on with the rest of the list.
fn uses(module: syn::ItemMod, paths: &[syn::Path]) -> TokenStream {
    let (first, rest) = paths.split_first().expect("a uses list is not empty");
    let attr = if rest.is_empty() {
        quote!()
    } else {
        quote!(uses(#(#rest),*))
    };
    quote!(#first! { { #attr } #module })
}

/// A `#[tile_fn]` outside a `#[tile_module]` (rustc expanded it on its own): an error at its
/// name, and no item (its body is not Rust).
pub fn lone_tile_fn(item: TokenStream) -> TokenStream {
    let at = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(f) => span_range(&f.sig.ident),
        Err(_) => span_range(&item),
    };
    error_at(
        at,
        "a `#[tile_fn]` is inlined into the kernels of its module: put it inside a `#[tile_module] mod … { … }`",
    )
    .into_compile_error()
}
