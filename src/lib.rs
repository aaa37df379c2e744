//! tirx: a tile-kernel language embedded in Rust.
pub use tirx_macros::tile_kernel;
