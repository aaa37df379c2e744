//! tirx-runtime: loads and launches kernels compiled by `#[tile_kernel]` on a CUDA GPU.
//!
//! - [`Runtime`] (`device.rs`) opens one GPU through cudarc with dynamic loading, and never
//!   panics on a machine without a driver or a GPU.
//! - [`Tensor`] (`tensor.rs`) is device memory with a shape and strides; [`TensorArg`] is its
//!   type-erased launch argument.
//! - [`plan_launch`] (`plan.rs`) checks arguments against a kernel [`Signature`] and the
//!   device limits, purely, before any driver call.
//! - `tma.rs` validates and encodes TMA descriptors; `launch.rs` holds [`KernelArtifact`],
//!   [`select`] and the launch itself; [`WordHasher`] (`hash.rs`) is the hash of its launch cache
//!   and of `tirx-py`'s per-thread choices.
//!
//! Invariants: every failure is a [`RuntimeError`]; raw driver calls (`cudarc::driver::sys`)
//! appear only where the safe cudarc API has no equivalent (JIT logs, TMA encoding, cluster
//! launch, parameter introspection), each with a `SAFETY` comment.
//!
//! Tests: the CPU tests need no GPU; `--features gpu` adds `gpu_tests.rs`, which launches
//! hand-written PTX (pointer kernel, TMA copy with and without 128B swizzle in 2-CTA clusters,
//! > 48 KB shared memory) on an sm_90a device and checks the results.

mod device;
mod error;
mod f6f4;
mod fp4;
mod fp8;
#[cfg(all(test, feature = "gpu"))]
mod gpu_tests;
mod hash;
mod launch;
mod plan;
mod scale;
mod tensor;
mod tma;

pub use device::{DEFAULT_DYN_SMEM, Runtime, driver_present, target_for};
pub use error::{RuntimeError, TmaReason};
pub use f6f4::{e2m1, e2m3, e3m2};
pub use fp4::{e2m1x2, ue4m3};
pub use fp8::{e4m3, e5m2};
pub use hash::WordHasher;
pub use launch::{Kernel, KernelArtifact, ParamBuffer, PreparedLaunch, select};
pub use plan::{
    DeviceLimits, LaunchPlan, PlannedParam, ScalarArg, TensorMeta, layout_params, plan_launch,
    plan_launch_args, plan_launch_with, row_major_strides,
};
pub use scale::{image_offset, image_shape, scale_image, ue8m0};
pub use tensor::{Element, Tensor, TensorArg};
pub use tma::{MAX_BOX_EXTENT, MAX_RANK, TensorMap, TmaEncoding, tiled_encoding, validate_tiled};

pub use tirx_ir::abi::{ElemType, Signature, Swizzle, Target};
