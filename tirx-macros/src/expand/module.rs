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
    if !attr.is_empty() {
        sink.push(span_range(&attr), "`#[tile_module]` takes no arguments");
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
