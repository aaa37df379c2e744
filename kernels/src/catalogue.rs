//! The catalogue: every shipped kernel, built from the kernel files' own lists, and every
//! problem family ([`FAMILIES`]).
//!
//! Each `#[tile_module]` lists its kernels (`KERNELS`, in source order) and each kernel outside
//! a module has its `KERNEL`; this file names each list once, so adding a kernel to a module
//! adds it here, and a new file adds one line. Everything else — what a kernel solves, its
//! element types, tiles and target — is read from the artifacts (see [`crate::dispatch`]).

use tirx::{Kernel, KernelArtifact};

use crate::family::Family;

use crate::attention::{blackwell, hopper, hopper_persistent};
use crate::copy::tma_copy;
use crate::gemm::{
    fp8, fp8_pingpong, fused, level_01_sync, level_02_tma, level_03_pipeline_tcgen05,
    level_03_pipeline_wgmma, level_04_ws_tcgen05, level_04_ws1, level_05_2wg, level_06_persistent,
    level_06_persistent_tcgen05, level_07_cluster, level_07_pair_tcgen05, level_08_clc_tcgen05,
    level_08_tma_epi, level_09_tma_epi_tcgen05, level_10_epi_tcgen05, level_10_prod_tcgen05,
    pair_n, scaled, splitk,
};
use crate::row_kernels::{
    cluster, layernorm, norm_long, rmsnorm, softmax, softmax_long, staged, swiglu,
};

/// The lists the catalogue is made of, in the order `tirx list` prints them.
const LISTS: &[&[&Kernel]] = &[
    &[&tma_copy::tma_copy::KERNEL],
    &[&level_01_sync::gemm_sm90_sync::KERNEL],
    &[&level_02_tma::gemm_sm90_tma::KERNEL],
    &[&level_03_pipeline_wgmma::gemm_sm90::KERNEL],
    level_04_ws1::kernels::KERNELS,
    level_05_2wg::kernels::KERNELS,
    level_06_persistent::kernels::KERNELS,
    level_07_cluster::kernels::KERNELS,
    level_08_tma_epi::kernels::KERNELS,
    pair_n::kernels::KERNELS,
    scaled::kernels::KERNELS,
    fused::kernels::KERNELS,
    fp8::kernels::KERNELS,
    fp8_pingpong::kernels::KERNELS,
    splitk::kernels::KERNELS,
    &[&level_03_pipeline_tcgen05::gemm_sm100::KERNEL],
    level_04_ws_tcgen05::kernels::KERNELS,
    level_06_persistent_tcgen05::kernels::KERNELS,
    level_07_pair_tcgen05::kernels::KERNELS,
    level_08_clc_tcgen05::kernels::KERNELS,
    level_09_tma_epi_tcgen05::kernels::KERNELS,
    level_10_prod_tcgen05::kernels::KERNELS,
    level_10_epi_tcgen05::kernels::KERNELS,
    // Staged before the register kernel: at 32k columns (their one shared capacity) it was
    // measured faster (docs/perf/rows-h200-2026-12-02b.md); the dispatcher keeps this order
    // among equal costs.
    &[&staged::softmax_staged::KERNEL],
    &[&softmax::softmax::KERNEL],
    &[&softmax_long::softmax_long::KERNEL],
    &[&cluster::softmax_cluster::KERNEL],
    &[&rmsnorm::rmsnorm::KERNEL],
    &[&staged::rmsnorm_staged::KERNEL],
    &[&cluster::rmsnorm_cluster::KERNEL],
    &[&layernorm::layernorm::KERNEL],
    &[&norm_long::rmsnorm_long::KERNEL],
    &[&norm_long::layernorm_long::KERNEL],
    &[&swiglu::silu_mul::KERNEL],
    &[
        &hopper_persistent::attention_sm90_persistent::KERNEL,
        &hopper::attention_sm90::KERNEL,
    ],
    &[&blackwell::attention_sm100::KERNEL],
];

/// Every shipped kernel.
pub fn all() -> Vec<&'static Kernel> {
    LISTS.iter().flat_map(|l| l.iter().copied()).collect()
}

/// The shipped kernel named `name`.
pub fn find(name: &str) -> Option<&'static Kernel> {
    all().into_iter().find(|k| k.name == name)
}

/// Every problem family: adding one is its folder plus a line here.
pub const FAMILIES: &[&dyn Family] = &[
    &crate::copy::family::Copy,
    &crate::gemm::family::Gemm,
    &crate::row_kernels::family::Rows,
    &crate::attention::family::Attention,
];

/// The family that owns `art`'s problem ([`crate::family::of`] over [`FAMILIES`]).
pub fn family_of(art: &KernelArtifact) -> Option<&'static dyn Family> {
    crate::family::of(FAMILIES, art)
}

#[cfg(test)]
mod tests;
