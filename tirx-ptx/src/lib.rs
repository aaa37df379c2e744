//! tirx-ptx: prints tile-IR kernels in `Phase::Ptx` as PTX text for `sm_90a` and `sm_100a`, and
//! runs NVIDIA's offline tools (`ptxas`, `nvdisasm`) on the result.
//!
//! Entry point: [`write_string`]. The printer accepts only fully lowered kernels; anything else
//! is a [`PtxError`], never a panic.

pub mod error;
pub mod namer;
pub mod tools;
pub mod writer;

pub use error::PtxError;
pub use namer::Namer;
pub use writer::{PTX_VERSION, SMEM_SYMBOL, Writer};

/// Prints one kernel in `Phase::Ptx` as a complete PTX module (see [`writer`] for the exact
/// form). The output depends only on the kernel, byte for byte.
pub fn write_string(kernel: &tirx_ir::Kernel) -> Result<String, PtxError> {
    Writer::new(kernel).write()
}

/// [`write_string`] with the origin of each body line: `(PTX line, span)` pairs (see
/// [`Writer::write_with_lines`]), from which the macro builds the artifact's line map.
pub fn write_with_lines(
    kernel: &tirx_ir::Kernel,
) -> Result<(String, Vec<(u32, tirx_ir::Span)>), PtxError> {
    Writer::new(kernel).write_with_lines()
}
