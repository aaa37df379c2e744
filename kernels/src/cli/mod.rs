//! The `tirx` tool's subcommands that outgrew `main.rs`.

pub mod attention;
pub mod bench;
pub mod gemm;
pub mod list;
pub mod rows;
pub mod sim;
pub mod sim_cases;
pub mod sim_compare;
pub mod sim_dump;
pub mod time_passes;
