//! The catalogue: every shipped kernel, found in the family folders, and every problem family
//! ([`FAMILIES`]).
//!
//! `build.rs` reads each family folder's files (`kernels/build/families.rs`) and lists every
//! `#[tile_kernel]`'s `KERNEL` and every `#[tile_module]`'s `KERNELS` (`FOUND`); the
//! catalogue is those that declare the problem they solve. Adding a kernel is its file:
//! nothing here names it. Everything else — what a kernel solves, its element types, tiles
//! and target — is read from the artifacts (see [`crate::dispatch`]).

use std::sync::OnceLock;

use tirx::{Kernel, KernelArtifact};

use crate::family::Family;

include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

/// Every shipped kernel: the family folders' kernels that declare their problem, folders and
/// files in name order (`tirx list`'s order; the dispatcher's choice does not depend on it).
pub fn all() -> Vec<&'static Kernel> {
    static ALL: OnceLock<Vec<&'static Kernel>> = OnceLock::new();
    ALL.get_or_init(|| {
        FOUND
            .iter()
            .flat_map(|l| l.iter().copied())
            .filter(|k| k.problem().is_some())
            .collect()
    })
    .clone()
}

/// The shipped kernel named `name`.
pub fn find(name: &str) -> Option<&'static Kernel> {
    all().into_iter().find(|k| k.name == name)
}

/// The shipped kernel `art` is an artifact of, by address (an artifact lives in its kernel's
/// slice): identity without comparing names.
pub fn kernel_of(art: &KernelArtifact) -> Option<&'static Kernel> {
    let at = std::ptr::from_ref(art);
    all()
        .into_iter()
        .find(|k| k.artifacts.as_ptr_range().contains(&at))
}

/// Every problem family: adding one is its folder (found by `build.rs`) plus a line here.
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
