//! Atomic reductions into global memory: what an `Op::Copy` with `atomic: Some(…)` does to
//! its destination instead of overwriting it (issue #30 item 3).
//!
//! A register tile reduced into a global tile (`atomic::add(y.tile(i, j), t, scope = gpu)`,
//! the `reg_atomic` variant) is one `red` per element (PTX ISA §9.7.13.6), or one `atom`
//! (§9.7.13.5) when the old values are asked for (`old`); a shared tile reduced by TMA
//! (`tma::reduce_add(y.tile(i, j), s)`, the `tma_reduce` variant) is one
//! `cp.reduce.async.bulk.tensor` (§9.7.9.25.5.2), whose element updates are atomic too.
//!
//! Invariants: each enum's `name` is its text form in the IR and `from_name` its inverse;
//! the memory-model words are the PTX qualifiers (§8 "Memory Consistency Model": scopes
//! §8.5, semantics §8.4).

use super::TileRef;

/// The operation applied to each destination element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `dst = dst + v` (floats round to nearest even in the destination's type).
    Add,
    /// `dst = min(dst, v)` (integers; 16-bit floats by TMA only).
    Min,
    /// `dst = max(dst, v)`.
    Max,
}

/// The set of threads an atomic is atomic with respect to (PTX ISA §8.5 "Scope").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemScope {
    /// The threads of one CTA (`.cta`).
    Cta,
    /// The threads of one cluster (`.cluster`).
    Cluster,
    /// Every thread of the grid on this GPU (`.gpu`).
    Gpu,
}

/// The memory-ordering semantics of an atomic (PTX ISA §8.4 "Memory operations").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSem {
    /// `.relaxed`: atomic, no ordering of other accesses (the default).
    Relaxed,
    /// `.acquire`: later accesses of the thread are ordered after it (`atom` only).
    Acquire,
    /// `.release`: earlier accesses of the thread are ordered before it.
    Release,
    /// `.acq_rel`: both (`atom` only).
    AcqRel,
}

/// What an atomic copy does to its destination.
#[derive(Clone, Debug, PartialEq)]
pub struct Atomic {
    /// The operation.
    pub op: AtomicOp,
    /// Which threads it is atomic with.
    pub scope: MemScope,
    /// Its ordering.
    pub sem: MemSem,
    /// A register tile of the source's layout that receives each element's value before the
    /// update (`atom`); `None` for `red`.
    pub old: Option<TileRef>,
}

macro_rules! names {
    ($t:ty { $($v:ident => $n:literal),* $(,)? }) => {
        impl $t {
            /// Every value, in declaration order.
            pub const ALL: &'static [$t] = &[$(<$t>::$v),*];

            /// The text form (the PTX qualifier without its dot).
            pub fn name(self) -> &'static str {
                match self {
                    $(<$t>::$v => $n),*
                }
            }

            /// The value spelled `name`.
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.name() == name)
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

names!(AtomicOp { Add => "add", Min => "min", Max => "max" });
names!(MemScope { Cta => "cta", Cluster => "cluster", Gpu => "gpu" });
names!(MemSem { Relaxed => "relaxed", Acquire => "acquire", Release => "release", AcqRel => "acq_rel" });
