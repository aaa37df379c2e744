//! `#[tile_kernel]`: the front end of tirx.
//!
//! The attribute reads a function as a tile program (Rust syntax, DSL semantics; the body is
//! never compiled as Rust), lowers it to the tile IR once per config (`parse`), compiles every
//! config × target through the pass pipeline and the PTX writer, and replaces the function by a
//! module holding the PTX, the IR text, the signatures and a typed launcher (`expand`).
//!
//! Layout: `args` (the attribute), `model` (what was extracted), `parse` (body → IR),
//! `expand` (code generation), `error` (span table and error collection). This file is the
//! entry point only.

mod args;
mod error;
mod expand;
mod model;
mod parse;

use proc_macro::TokenStream;

/// Compiles a tile kernel; see the crate documentation of `tirx` for the language.
///
/// ```ignore
/// #[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
/// pub fn tma_copy(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) { … }
/// ```
#[proc_macro_attribute]
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tile_kernel(attr.into(), item.into()).into()
}

#[cfg(test)]
mod tests;
