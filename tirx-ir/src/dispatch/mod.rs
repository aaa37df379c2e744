//! Dispatch: for each tile op, the hardware paths that can execute it, each with a named
//! predicate; the compiler picks the applicable one with the highest priority, a forced one
//! (`tma::load`, `wgmma::mma`, …) is checked instead of chosen, and when nothing fits the
//! error is a table of every candidate and why it refused.
//!
//! Registration is static: `COPY` and `MMA` list the variants, ordered by
//! `(-priority, name)`. Each variant lives in its own file with a When / Before / After header
//! and holds both its predicate and its lowering.

pub mod copy;
pub mod mma;
mod reject;

pub use reject::Reject;

use crate::abi::Target;
use crate::diag::Diagnostics;
use crate::ir::{Kernel, Op};
use crate::lower::Lower;
use crate::valid::scope::Threads;
use std::fmt;

/// What a predicate sees.
pub struct Cx<'a> {
    /// The kernel.
    pub k: &'a Kernel,
    /// The op.
    pub op: &'a Op,
    /// The threads that run it.
    pub threads: Threads,
}

/// One hardware path for an op.
pub struct Variant {
    /// Name (`tma_load`, `wgmma`, …); also the name a user forces it with.
    pub name: &'static str,
    /// Higher wins among applicable variants.
    pub priority: i32,
    /// `Ok` when the variant can execute the op, else the reason it refuses.
    pub applies: fn(&Cx) -> Result<(), Reject>,
    /// Lowers the op (phase Tile → Thread statements).
    pub lower: fn(&mut Lower, &Op) -> Result<(), Diagnostics>,
}

/// Copy variants.
pub static COPY: &[&Variant] = &[
    &copy::ldmatrix::VARIANT,
    &copy::reg_epilogue::VARIANT,
    &copy::reg_load::VARIANT,
    &copy::reg_stage::VARIANT,
    &copy::reg_store::VARIANT,
    &copy::shared_load::VARIANT,
    &copy::shared_store::VARIANT,
    &copy::stmatrix::VARIANT,
    &copy::tcgen05_cp::VARIANT,
    &copy::thread_load::VARIANT,
    &copy::tma_load::VARIANT,
    &copy::tma_store::VARIANT,
    &copy::tmem_epilogue::VARIANT,
    &copy::tmem_regs::LOAD,
    &copy::tmem_regs::STORE,
];
/// Mma variants.
pub static MMA: &[&Variant] = &[&mma::tcgen05::VARIANT, &mma::wgmma::VARIANT];

/// No variant fits: every candidate and why it refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchError {
    /// The op (`copy`, `mma`).
    pub op: &'static str,
    /// The target.
    pub target: Target,
    /// (variant, reason) for every candidate considered.
    pub rejections: Vec<(&'static str, Reject)>,
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "no variant of `{}` fits on {}; candidates:",
            self.op,
            self.target.name()
        )?;
        let w = self
            .rejections
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(0);
        for (i, (name, why)) in self.rejections.iter().enumerate() {
            let nl = if i + 1 < self.rejections.len() {
                "\n"
            } else {
                ""
            };
            write!(f, "  {name:<w$}  refused: {why}{nl}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DispatchError {}

/// The variants of an op, and its name.
pub fn candidates(op: &Op) -> Option<(&'static str, &'static [&'static Variant])> {
    match op {
        Op::Copy { .. } => Some(("copy", COPY)),
        Op::Mma { .. } => Some(("mma", MMA)),
        _ => None,
    }
}

/// Picks the variant for `cx.op`: the forced one if it applies, else the best applicable.
pub fn select(cx: &Cx, forced: Option<&str>) -> Result<&'static Variant, DispatchError> {
    let (op, all) = candidates(cx.op).expect("select is only called on copy and mma");
    let mut rejections = Vec::new();
    if let Some(name) = forced {
        let Some(v) = all.iter().find(|v| v.name == name) else {
            rejections.push((
                "(forced)",
                Reject::UnknownVariant {
                    name: name.to_string(),
                    known: all.iter().map(|v| v.name).collect(),
                },
            ));
            return Err(DispatchError {
                op,
                target: cx.k.target(),
                rejections,
            });
        };
        return match (v.applies)(cx) {
            Ok(()) => Ok(v),
            Err(why) => {
                rejections.push((v.name, why));
                Err(DispatchError {
                    op,
                    target: cx.k.target(),
                    rejections,
                })
            }
        };
    }
    let mut sorted: Vec<&&Variant> = all.iter().collect();
    sorted.sort_by_key(|v| (-v.priority, v.name));
    for v in sorted {
        match (v.applies)(cx) {
            Ok(()) => return Ok(v),
            Err(why) => rejections.push((v.name, why)),
        }
    }
    Err(DispatchError {
        op,
        target: cx.k.target(),
        rejections,
    })
}

/// Looks a variant up by name (after dispatch set it).
pub fn by_name(op: &Op, name: &str) -> Option<&'static Variant> {
    candidates(op)?.1.iter().copied().find(|v| v.name == name)
}
