//! tirx-ir: the tile IR, its text form, verifier, dispatch and lowering passes, and the kernel
//! signature ABI shared with the runtime.

pub mod abi;
pub mod abi_text;
pub mod arena;
pub mod diag;
pub mod dispatch;
pub mod encode;
pub mod inst;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod passes;
pub mod print;
pub mod problem;
pub mod regtile;
pub mod valid;

pub use arena::{Arena, Handle};
pub use diag::{Diagnostic, Diagnostics};
pub use ir::*;
