//! Dispatch: for each tile op, the hardware paths that can execute it, each with a named
//! predicate; the compiler picks the applicable one with the highest priority, a forced one
//! (`tma::load`, `wgmma::mma`, …) is checked instead of chosen, and when nothing fits the
//! error is a table of every candidate and why it refused.
//!
//! Registration is static: `COPY` and `MMA` list one entry per value of the typed variants
//! ([`CopyVariant`], [`MmaVariant`], whose properties the checks ask), tried in
//! `(-priority, name)` order. Each variant lives in its own file with a When / Before / After
//! header and holds both its predicate and its lowering; an op's variant finds its entry by
//! value ([`Table::entry`]), never by name.

pub mod copy;
pub mod mma;
mod reject;

pub use reject::Reject;

use crate::abi::Target;
use crate::diag::Diagnostics;
pub use crate::ir::{CopyVariant, MmaVariant, VariantId};
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

/// One hardware path for an op: the dispatch-table entry of the typed variant `id`.
pub struct Variant<V: 'static> {
    /// Which variant this entry is; its properties are `id`'s, its name `id.name()`.
    pub id: V,
    /// Higher wins among applicable variants.
    pub priority: i32,
    /// `Ok` when the variant can execute the op, else the reason it refuses.
    pub applies: fn(&Cx) -> Result<(), Reject>,
    /// Lowers the op (phase Tile → Thread statements).
    pub lower: fn(&mut Lower, &Op) -> Result<(), Diagnostics>,
}

impl<V: VariantId> Variant<V> {
    /// The variant's name (`tma_load`, `wgmma`, …).
    pub fn name(&self) -> &'static str {
        self.id.name()
    }
}

/// Copy variants.
pub static COPY: &[&Variant<CopyVariant>] = &[
    &copy::ldmatrix::VARIANT,
    &copy::ldmatrix_trans::VARIANT,
    &copy::reg_atomic::VARIANT,
    &copy::reg_epilogue::VARIANT,
    &copy::reg_load::VARIANT,
    &copy::reg_stage::VARIANT,
    &copy::reg_store::VARIANT,
    &copy::shared_load::VARIANT,
    &copy::shared_store::VARIANT,
    &copy::stmatrix::VARIANT,
    &copy::stmatrix_trans::VARIANT,
    &copy::tcgen05_cp::VARIANT,
    &copy::thread_load::VARIANT,
    &copy::tma_load::VARIANT,
    &copy::tma_reduce::VARIANT,
    &copy::tma_store::VARIANT,
    &copy::tmem_epilogue::VARIANT,
    &copy::tmem_regs::LOAD,
    &copy::tmem_regs::STORE,
];
/// Mma variants.
pub static MMA: &[&Variant<MmaVariant>] = &[&mma::tcgen05::VARIANT, &mma::wgmma::VARIANT];

/// The dispatch tables by variant type.
pub trait Table: VariantId {
    /// Every entry of the op's table.
    fn table() -> &'static [&'static Variant<Self>];
    /// Why this variant refuses `op` for the form of its global tiles — element offsets
    /// (`x.at(…)`) or bounds (`.within(…)`) it cannot address — checked before its own
    /// conditions, so no variant takes such a tile by ignoring the form.
    fn refuses_form(self, _op: &Op) -> Option<Reject> {
        None
    }
    /// This variant's entry (each value has exactly one: `tests::every_variant_has_one_entry`).
    fn entry(self) -> &'static Variant<Self> {
        Self::table()
            .iter()
            .copied()
            .find(|v| v.id == self)
            .expect("every variant value has a dispatch-table entry")
    }
}

impl Table for CopyVariant {
    fn table() -> &'static [&'static Variant<Self>] {
        COPY
    }
    fn refuses_form(self, op: &Op) -> Option<Reject> {
        let Op::Copy { dst, src, .. } = op else {
            return None;
        };
        let form = [dst, src]
            .into_iter()
            .find_map(|t| t.element_bounds().map(|b| !b.is_empty()))?;
        match self {
            // Element offsets: TMA coordinates are elements already (PTX ISA
            // §9.7.9.25.5.1); a TMA box clips at the tensor map's extents only.
            CopyVariant::TmaLoad | CopyVariant::TmaStore if form => Some(Reject::ElementOrigin {
                why: "a TMA box clips at the tensor's extents only, not at `.within(…)` bounds (`reg_epilogue`, `reg_store` and `reg_load` take them)",
            }),
            CopyVariant::TmaLoad
            | CopyVariant::TmaStore
            | CopyVariant::RegEpilogue
            | CopyVariant::RegStore
            | CopyVariant::RegLoad => None,
            _ => Some(Reject::ElementOrigin {
                why: "this path takes tile coordinates only (`x.tile(…)`); a tile at element offsets (`x.at(…)`) goes by `tma_load`, `tma_store`, `reg_epilogue`, `reg_store` or `reg_load`",
            }),
        }
    }
}

impl Table for MmaVariant {
    fn table() -> &'static [&'static Variant<Self>] {
        MMA
    }
}

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

/// Picks the variant for `cx.op` (a copy when `V` is [`CopyVariant`], an mma when it is
/// [`MmaVariant`]): the forced one if it applies, else the best applicable.
pub fn select<V: Table>(cx: &Cx, forced: Option<V>) -> Result<V, DispatchError> {
    let mut rejections = Vec::new();
    let fail = |rejections| DispatchError {
        op: V::OP,
        target: cx.k.target(),
        rejections,
    };
    if let Some(v) = forced {
        let v = v.entry();
        if let Some(why) = v.id.refuses_form(cx.op) {
            rejections.push((v.name(), why));
            return Err(fail(rejections));
        }
        return match (v.applies)(cx) {
            Ok(()) => Ok(v.id),
            Err(why) => {
                rejections.push((v.name(), why));
                Err(fail(rejections))
            }
        };
    }
    let mut sorted: Vec<&Variant<V>> = V::table()
        .iter()
        .copied()
        .filter(|v| !v.id.only_forced())
        .collect();
    sorted.sort_by_key(|v| (-v.priority, v.name()));
    for v in sorted {
        if let Some(why) = v.id.refuses_form(cx.op) {
            rejections.push((v.name(), why));
            continue;
        }
        match (v.applies)(cx) {
            Ok(()) => return Ok(v.id),
            Err(why) => rejections.push((v.name(), why)),
        }
    }
    Err(fail(rejections))
}

#[cfg(test)]
mod tests;
