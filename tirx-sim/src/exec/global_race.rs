//! Races on global memory between CTAs, where atomics are involved (issue #30 item 3): an
//! atomic is not an ordinary store.
//!
//! - Two atomics from different CTAs into the same bytes are no race when the scope of both
//!   covers both CTAs (`.gpu`; `.cluster` within one cluster): split-K partial sums, column
//!   sums and histograms add into one place on purpose (PTX ISA §8.5 "Scope", §8.7
//!   "Morally strong operations": atomic operations are morally strong only when each is in
//!   the other's scope).
//! - A plain store (`st.global`, a TMA store) and an atomic (`red`/`atom`, a TMA
//!   reduce-store) from CTAs of different clusters to the same bytes is a race: nothing
//!   orders them, and the store may land before or after the update, or between two.
//! - An atomic whose scope is too narrow for the other CTA (`.cta` from two CTAs, `.cluster`
//!   from two clusters) is a race too.
//!
//! Not judged: two plain stores (tirx kernels do not write one place from two CTAs today,
//! and this shadow is only kept for programs that have atomics); pairs within one cluster
//! (a cluster barrier may order them); reads. The shadow is kept only when the program holds
//! a global atomic or a TMA reduce-store, so other kernels pay nothing.

use std::collections::HashMap;

/// A scope qualifier of an atomic (`.cta`, `.cluster`, `.gpu`, `.sys`; `.gpu` by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum AtomScope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl AtomScope {
    /// The scope named by an instruction's modifiers (§9.7.13.5: `.gpu` when absent).
    pub(crate) fn of(modifiers: &[String]) -> AtomScope {
        for m in modifiers {
            match m.as_str() {
                "cta" => return AtomScope::Cta,
                "cluster" => return AtomScope::Cluster,
                "sys" => return AtomScope::Sys,
                _ => {}
            }
        }
        AtomScope::Gpu
    }
}

/// How a byte was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// An ordinary store.
    Plain,
    /// An atomic of this scope.
    Atomic(AtomScope),
}

/// Who wrote: the cluster's index in the grid and the CTA's rank in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Writer {
    pub cluster: [u32; 3],
    pub rank: u32,
}

#[derive(Clone, Copy, Debug)]
struct Tag {
    who: Writer,
    access: Access,
    line: u32,
}

/// The last writer of each global byte written during the launch.
#[derive(Clone, Debug, Default)]
pub(crate) struct GlobalShadow {
    bytes: HashMap<u64, Tag>,
}

impl GlobalShadow {
    /// Records a write of `size` bytes at `addr`; the message of the race it makes with the
    /// previous writer, if any.
    pub(crate) fn write(
        &mut self,
        addr: u64,
        size: u32,
        who: Writer,
        access: Access,
        line: u32,
    ) -> Option<String> {
        let mut race = None;
        for a in addr..addr + u64::from(size) {
            let tag = Tag { who, access, line };
            if let Some(prev) = self.bytes.insert(a, tag)
                && race.is_none()
            {
                race = conflict(&prev, &tag).map(|why| {
                    format!(
                        "global {a:#x}: {} of CTA rank {} of cluster {:?} (line {}) and {} of CTA rank {} of cluster {:?} (line {}): {why}",
                        name(prev.access),
                        prev.who.rank,
                        prev.who.cluster,
                        prev.line,
                        name(access),
                        who.rank,
                        who.cluster,
                        line
                    )
                });
            }
        }
        race
    }
}

fn name(a: Access) -> &'static str {
    match a {
        Access::Plain => "a plain store",
        Access::Atomic(_) => "an atomic",
    }
}

/// Why two writes of one byte by different CTAs race, if they do.
fn conflict(a: &Tag, b: &Tag) -> Option<&'static str> {
    if a.who == b.who {
        return None;
    }
    let same_cluster = a.who.cluster == b.who.cluster;
    match (a.access, b.access) {
        (Access::Atomic(x), Access::Atomic(y)) => {
            let need = if same_cluster {
                AtomScope::Cluster
            } else {
                AtomScope::Gpu
            };
            (x.min(y) < need && !same_cluster).then_some(
                "the atomics' scope does not hold both CTAs (write `scope = gpu`), so they are not atomic with each other",
            )
        }
        (Access::Plain, Access::Plain) => None,
        _ if same_cluster => None,
        _ => Some(
            "an atomic and a plain store from CTAs of different clusters, unordered: the store may land before, between or after the updates",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Writer = Writer {
        cluster: [0, 0, 0],
        rank: 0,
    };
    const B: Writer = Writer {
        cluster: [1, 0, 0],
        rank: 0,
    };

    #[test]
    fn atomics_of_gpu_scope_share_bytes_and_plain_stores_do_not() {
        let gpu = Access::Atomic(AtomScope::Gpu);
        let mut s = GlobalShadow::default();
        assert_eq!(s.write(0x100, 4, A, gpu, 1), None);
        assert_eq!(s.write(0x100, 4, B, gpu, 2), None);
        let race = s.write(0x102, 4, A, Access::Plain, 3).expect("a race");
        assert!(race.contains("an atomic and a plain store"), "{race}");
        let mut s = GlobalShadow::default();
        s.write(0x0, 4, A, Access::Atomic(AtomScope::Cta), 1);
        let race = s.write(0x0, 4, B, gpu, 2).expect("a race");
        assert!(race.contains("scope = gpu"), "{race}");
        let mut s = GlobalShadow::default();
        s.write(0x0, 4, A, Access::Plain, 1);
        assert_eq!(s.write(0x0, 4, B, Access::Plain, 2), None);
    }
}
