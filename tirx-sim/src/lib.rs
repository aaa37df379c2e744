//! `tirx-sim`: the tirx emulator (issue #10, DESIGN.md §2): it runs the PTX tirx emits on
//! the CPU and checks the asynchronous protocols while it runs.
//!
//! - [`ptx`], the front end: a lexer and parser for the subset of PTX that tirx emits
//!   (`tirx-ptx/src/writer.rs`), producing a typed AST. The parser never panics: any input,
//!   however truncated or garbled, gives a `Module` or a [`ptx::ParseError`] with its line and
//!   column.
//! - [`exec`], the executor: [`Program`] decodes an entry (an instruction outside the
//!   supported subset is an error naming it and its line), [`run`] executes it on a grid of
//!   CTAs with a seeded scheduler — threads and warps, shared and global memory with bounds,
//!   barriers and mbarriers, shuffles, votes and reductions, atomics, `setmaxnreg` budgets,
//!   TMA copies, wgmma (both forms), tcgen05 and tensor memory, cluster launch control
//!   — and returns [`Stats`] or a typed [`SimError`] (deadlocks with every barrier's state,
//!   out-of-bounds and misaligned accesses, uninitialised registers, tx-count underflow,
//!   races with asynchronous copies, missing proxy fences). `docs/emulator.md` describes the
//!   machine model.
//!
//! The crate depends on no tirx crate: its decoders are written from the PTX ISA, not
//! derived from tirx's encoders.

pub mod exec;
pub mod ptx;

pub use exec::{
    ClcMode, Device, Launch, OobFill, ParamValue, Policy, Program, SimError, Stats, TensorMapDesc,
    Timeline, TmaElem, TmaSwizzle, run, run_program,
};
