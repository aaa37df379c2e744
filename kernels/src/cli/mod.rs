//! The `tirx` tool's subcommands that outgrew `main.rs`.

pub mod gemm;
pub mod list;
pub mod rows;
pub mod sim;
