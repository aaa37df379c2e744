//! `#[tile_kernel]`: the front end of tirx.
//!
//! The attribute reads a function as a tile program (Rust syntax, DSL semantics; the body is
//! never compiled as Rust), lowers it to the tile IR once per config (`parse`), compiles every
//! config × target through the pass pipeline and the PTX writer, and replaces the function by a
//! module holding the PTX, the IR text, the signatures and a typed launcher (`expand`).
//!
//! `#[tile_module]` lets kernels share pieces: on an inline `mod`, it expands every
//! `#[tile_kernel]` inside as above, with the module's `#[tile_fn]` functions inlined at each
//! call (`module` has the language of a module, `parse/inline.rs` the semantics of a call).
//!
//! Layout: `args` (the attribute), `model` (what was extracted from a kernel), `module` (from a
//! tile module), `parse` (body → IR), `expand` (code generation), `error` (span table and
//! error collection). This file is the entry point only.

mod args;
mod configs;
mod error;
mod expand;
mod model;
mod module;
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

/// Compiles the kernels of an inline module, which share the module's tile functions.
///
/// ```ignore
/// #[tile_module]
/// pub mod gemm {
///     use tirx::prelude::*;   // ordinary Rust, passed through
///
///     /// Output tile (m, n) of linear tile index t, row-major.
///     #[tile_fn]
///     fn tile_of(t: u32, tiles_n: u32) -> (u32, u32) {
///         (t / tiles_n, t % tiles_n)
///     }
///
///     #[tile_kernel(target = sm_90a, threads = 384, grid = (SMS, 1), configs(…))]
///     pub fn persistent(#[shape(M, K)] a: Tensor<bf16>, …) {
///         …
///         let (m, n) = tile_of(t, tiles_n);
///         it = load_k(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
///     }
/// }
/// ```
///
/// **Items.** Each `#[tile_kernel]` fn becomes exactly the module a lone `#[tile_kernel]`
/// makes (`ARTIFACTS`, `launch`). Each `#[tile_fn]` fn is inlined into the kernels that call
/// it and leaves no item. Everything else (`use`, `const`, docs, plain fns, nested modules)
/// passes through unchanged; kernels in a nested module do not see these tile functions. The
/// two attributes must resolve like any attribute (import them, e.g. with the prelude).
///
/// **Tile functions.** Parameters are `u32` and `bool` scalars (a `mut` one is a variable of
/// the body) and the markers `Smem`, `Tmem`, `Regs` (buffers), `Bar` (an mbarrier array),
/// `Pipe` (a pipeline), `Global` (a tensor parameter of the kernel) and `f32` (a scalar
/// argument of the kernel, passed by name; read as the kernel would read it, in a copy's scale
/// or in register-tile math). The result is
/// nothing, a scalar, or a tuple of two or more scalars: the value of the body's tail
/// expression (which may itself be a call of a tile function with the same results). The body
/// sees its parameters, the calling kernel's config constants and shape symbols (so `BM`,
/// `STAGES` work and fold per config) and the built-ins (`tid`, `cta.x`, …), but no local of
/// the caller. Buffers, barriers and pipelines are declared in the kernel, not in a tile
/// function. `#[scope(...)]` works inside; scope checks apply at each call site. A body is
/// checked where it is inlined, so a tile function that no kernel calls is checked for its
/// signature only.
///
/// **Calls** are statements: `f(…);`, `let x = f(…);`, `let (x, y) = f(…);`, `x = f(…);`,
/// `(x, y) = f(…);`. Each is inlined: a scalar argument that is not a variable, constant,
/// shape symbol or built-in is evaluated once, before the body; a buffer, barrier, pipeline or
/// tensor argument is a name whose kind must match the marker. A tile function may call
/// another; recursion is an error at the recursive call.
///
/// **Errors** point at the user's tokens: a bad argument at the argument; an error inside an
/// inlined body at the body's token, followed by one "in this call" error at each call site
/// it was reached through. An unknown callee lists the module's tile functions.
#[proc_macro_attribute]
pub fn tile_module(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tile_module(attr.into(), item.into()).into()
}

/// Marks a tile function inside a `#[tile_module]`, which reads it; anywhere else it is an
/// error (a tile function exists only to be inlined into the kernels of its module).
#[proc_macro_attribute]
pub fn tile_fn(_attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::lone_tile_fn(item.into()).into()
}

#[cfg(test)]
mod tests;
