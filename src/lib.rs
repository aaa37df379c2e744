//! tirx: a tile-kernel language embedded in Rust.
//!
//! A `#[tile_kernel]` function is compiled at `cargo build` time through the tile IR
//! (`tirx-ir`) into PTX (`tirx-ptx`) and becomes a module with the compiled artifacts and a
//! typed launcher that runs on the `tirx-runtime`. This crate is the one dependency a user
//! adds: generated code refers only to `::tirx::…` paths.

pub use half::{bf16, f16};
pub use tirx_ir::abi;
pub use tirx_ir::problem;
pub use tirx_macros::{tile_fn, tile_kernel, tile_module};
pub use tirx_runtime::{
    Element, Kernel, KernelArtifact, Runtime, RuntimeError, Target, Tensor, TensorArg, e2m1,
    e2m1x2, e2m3, e3m2, e4m3, e5m2, select, ue4m3, ue8m0,
};

/// The runtime crate, whole.
pub use tirx_runtime as runtime;

/// What a kernel file imports.
pub mod prelude {
    pub use crate::{
        e2m1, e2m1x2, e2m3, e3m2, e4m3, e5m2, tile_fn, tile_kernel, tile_module, ue4m3, ue8m0,
    };
    pub use half::{bf16, f16};
}
