//! `tirx-sim`: the tirx emulator (issue #10, DESIGN.md §2).
//!
//! Today this crate holds the first piece, the PTX front end ([`ptx`]): a lexer and parser
//! for the subset of PTX that tirx emits (`tirx-ptx/src/writer.rs`), producing a typed AST
//! that the executor will run. The parser never panics: any input, however truncated or
//! garbled, gives a `Module` or a [`ptx::ParseError`] with its line and column.
//!
//! The machine model (threads, warps, CTAs, clusters, asynchronous units) comes next; it
//! will match on [`ptx::Opcode`] values, whose list over the shipped kernels
//! [`ptx::inventory`] gives.

pub mod exec;
pub mod ptx;

pub use exec::{
    Device, Launch, OobFill, ParamValue, Program, SimError, Stats, TensorMapDesc, TmaElem,
    TmaSwizzle, run, run_program,
};
