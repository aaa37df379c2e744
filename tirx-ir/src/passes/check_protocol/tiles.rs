//! Which part of a shared buffer an asynchronous op still reads, and when another op provably
//! touches the same part — shared by the rules that follow pending reads (TMA stores, MMA
//! operands).
//!
//! A pending read is a [`Source`]: a buffer with the leading indices the op named
//! (`d_s[wg][cb]`, `a_s[s]`) and the threads that issued it. An index becomes unknown once a
//! variable it reads takes a new value (the walk's `define`). A later access of `buf[index]`
//! overlaps the source when, on every index both name, the two are provably the same:
//!
//! - two equal constants;
//! - the same expression, no variable of it changed since the read was issued, and some
//!   thread that runs the access also issued the read (so it evaluates the expression to the
//!   same value both times). Decided from the thread sets: equal, or one of them every thread
//!   of a range (a CTA, warpgroups, warps) that holds the other's range (a leader, an elected
//!   thread, a thread of it).
//!
//! Anything else — different constants, a changed variable, a run-time index read on
//! unrelated threads — is taken as another part (accepted, never reported on a guess). An
//! access with fewer indices names the whole of the rest, so it overlaps every part.

use crate::arena::Handle;
use crate::ir::{Barrier, Buffer, Expr, Kernel, Op, Pipeline, StmtKind, TileRef, Var};
use crate::passes::walk::visit;
use crate::valid::scope::{ScopeSet, Threads};

/// The shared tile a pending asynchronous op reads.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Source {
    /// The buffer.
    pub(super) buf: Handle<Buffer>,
    /// Leading indices; `None` once a variable the index reads has changed.
    pub(super) index: Vec<Option<Expr>>,
    /// The threads that issued the op.
    pub(super) threads: ScopeSet,
}

impl Source {
    /// `buf[index]` read by an op `threads` issue.
    pub(super) fn new(buf: Handle<Buffer>, index: &[Expr], threads: ScopeSet) -> Source {
        Source {
            buf,
            index: index.iter().cloned().map(Some).collect(),
            threads,
        }
    }

    /// `var` took a new value: the indices that read it are unknown from now on.
    pub(super) fn forget(&mut self, var: Handle<Var>) {
        for i in &mut self.index {
            if i.as_ref().is_some_and(|e| {
                let mut vs = Vec::new();
                super::vars_of(e, &mut vs);
                vs.contains(&var)
            }) {
                *i = None;
            }
        }
    }
}

/// Every thread of `[lo, hi)` runs the statement (not one per warp or warpgroup).
fn whole_range(t: ScopeSet) -> bool {
    matches!(
        t.threads,
        Threads::Cta(_) | Threads::Warpgroups(_) | Threads::Warps(..)
    )
}

/// Whether some thread is in both sets, provably (see the module docs).
pub(super) fn share_a_thread(a: ScopeSet, b: ScopeSet) -> bool {
    let holds = |x: ScopeSet, y: ScopeSet| whole_range(x) && x.lo <= y.lo && y.hi <= x.hi;
    a == b || holds(a, b) || holds(b, a)
}

/// Whether an access of `buf[index]` by `threads` provably touches `src`.
pub(super) fn overlaps(
    src: &Source,
    buf: Handle<Buffer>,
    index: &[Expr],
    threads: ScopeSet,
) -> bool {
    src.buf == buf
        && src.index.iter().zip(index).all(|(a, b)| match (a, b) {
            (Some(a @ Expr::Imm(..)), b @ Expr::Imm(..)) => a == b,
            (Some(a), b) => a == b && share_a_thread(src.threads, threads),
            (None, _) => false,
        })
}

/// Each pipeline with the shared buffers its TMA loads fill (its stages).
pub(super) fn pipeline_stages(k: &Kernel) -> Vec<(Handle<Pipeline>, Vec<Handle<Buffer>>)> {
    let full: Vec<(Handle<Pipeline>, Handle<Barrier>)> =
        k.pipelines.iter().map(|(h, p)| (h, p.full)).collect();
    let mut out: Vec<(Handle<Pipeline>, Vec<Handle<Buffer>>)> =
        full.iter().map(|(p, _)| (*p, Vec::new())).collect();
    visit(&k.body, &mut |s, _| {
        if let StmtKind::Op(Op::Copy {
            dst: TileRef::Buf { buf, .. },
            bar: Some(r),
            ..
        }) = &s.kind
            && let Some(i) = full.iter().position(|(_, f)| *f == r.bar)
            && !out[i].1.contains(buf)
        {
            out[i].1.push(*buf);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Scope;

    #[test]
    fn indices_overlap_only_when_provably_equal() {
        let t = ScopeSet::cta(128);
        let c = |v| Expr::u32(v);
        let s = Source {
            buf: Handle::from_index(0),
            index: vec![Some(c(1))],
            threads: t,
        };
        assert!(overlaps(&s, Handle::from_index(0), &[c(1)], t));
        assert!(!overlaps(&s, Handle::from_index(0), &[c(0)], t));
        assert!(
            overlaps(&s, Handle::from_index(0), &[], t),
            "the whole buffer"
        );
        let unknown = Source {
            index: vec![None],
            ..s.clone()
        };
        assert!(!overlaps(&unknown, Handle::from_index(0), &[c(1)], t));
        let v = Expr::Var(Handle::from_index(3));
        let by_var = Source {
            index: vec![Some(v.clone())],
            ..s
        };
        let cta = ScopeSet::cta(256);
        let one = |i| cta.enter(&Scope::Thread(i)).unwrap();
        let store = Source {
            threads: one(0),
            ..by_var
        };
        let idx = std::slice::from_ref(&v);
        assert!(overlaps(&store, Handle::from_index(0), idx, one(0)));
        assert!(
            overlaps(&store, Handle::from_index(0), idx, cta),
            "thread 0 also writes, with its own value of the index"
        );
        assert!(
            !overlaps(&store, Handle::from_index(0), idx, one(1)),
            "a run-time index on another thread may name another tile"
        );
        let wg1 = cta.enter(&Scope::Warpgroup(1, 1)).unwrap();
        let leader = wg1.enter(&Scope::Leader).unwrap();
        let warp5 = cta.enter(&Scope::Warp(5, 5)).unwrap();
        assert!(share_a_thread(wg1, leader));
        assert!(
            !share_a_thread(leader, warp5),
            "the leader of warpgroup 1 is thread 128, not in warp 5"
        );
    }
}
