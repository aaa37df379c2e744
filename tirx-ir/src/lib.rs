//! tirx-ir: the tile IR, its text form, verifier, dispatch and lowering passes, and the kernel
//! signature ABI shared with the runtime.

pub mod abi;
pub mod encode;
