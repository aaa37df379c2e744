//! Block-scale factors reach tensor memory before the MMA that reads them.
//!
//! A block-scaled `tcgen05.mma` reads its factors from TMEM tiles (`scale_a`, `scale_b`,
//! PTX ISA §9.7.16.10.7) that a `tcgen05::cp` fills from shared memory. Both are
//! asynchronous tensor-core operations; the ISA orders a `tcgen05.cp` before a later
//! `tcgen05.mma` only when one thread issues both (the pipelined pair `tcgen05.cp →
//! tcgen05.mma`, §9.7.16.6.5 "Pipelined tcgen05 instructions"). A copy issued by other
//! threads is ordered before the MMA only through its completion: a `tcgen05::commit` by the
//! copying thread, and a wait on the barrier that commit signals before the MMA
//! (§9.7.16.10.10 tcgen05.commit: the barrier "tracks the completion of all prior async
//! tcgen05 operations").
//!
//! Followed through the body per scale buffer (any stage of a staged one counts as the
//! buffer): whether some path reaches the MMA with no copy into it at all — an error at the
//! MMA, "never filled" — and, when every path copied, whether the copy is the MMA's own
//! thread's or completed and waited on — else an error at the MMA naming the copy's scope.

use super::ProtocolError;
use super::flow::{self, Flow, Sink};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{Barrier, Buffer, Kernel, Op, Space, Span, TileRef};
use crate::valid::scope::ScopeSet;

/// What may hold of one scale buffer's copies at a point of the body.
#[derive(Clone, Debug, PartialEq)]
struct Fill {
    buf: Handle<Buffer>,
    /// Some path has no copy into it.
    empty: bool,
    /// The threads of the last copy, when every path agrees on them.
    by: Option<ScopeSet>,
    /// Barriers the copying threads' commits signalled since the copy.
    commits: Vec<Handle<Barrier>>,
    /// On every path, a wait on one of `commits` followed the copy.
    waited: bool,
}

struct Scales<'k> {
    k: &'k Kernel,
}

impl Scales<'_> {
    fn scale_buf(&self, t: &TileRef) -> Option<Handle<Buffer>> {
        match t {
            TileRef::Buf { buf, .. }
                if self.k.buffers[*buf].space == Space::Tmem
                    && self.k.buffers[*buf].elem.is_scale() =>
            {
                Some(self.k.buffers[*buf].alias.unwrap_or(*buf))
            }
            _ => None,
        }
    }

    /// The error, if the MMA run by `threads` reads the factors in `t` unordered.
    fn read(
        &self,
        t: &TileRef,
        which: &'static str,
        threads: ScopeSet,
        st: &[Fill],
    ) -> Option<ProtocolError> {
        let b = self.scale_buf(t)?;
        let f = st.iter().find(|f| f.buf == b)?;
        let buffer = self.k.buffers[b].name.clone();
        if f.empty {
            return Some(ProtocolError::ScaleNotCopied { which, buffer });
        }
        if f.by == Some(threads) || f.waited {
            return None;
        }
        Some(ProtocolError::ScaleCopyUnordered {
            which,
            buffer,
            by: f
                .by
                .map_or("threads that differ by path".into(), |s| s.describe()),
        })
    }
}

impl Flow for Scales<'_> {
    type State = Vec<Fill>;

    fn op(&mut self, op: &Op, span: Span, threads: ScopeSet, st: &mut Vec<Fill>, out: &mut Sink) {
        match op {
            Op::Copy { dst, .. } => {
                if let Some(b) = self.scale_buf(dst)
                    && let Some(f) = st.iter_mut().find(|f| f.buf == b)
                {
                    *f = Fill {
                        buf: b,
                        empty: false,
                        by: Some(threads),
                        commits: Vec::new(),
                        waited: false,
                    };
                }
            }
            Op::Mma {
                scale: Some(sc), ..
            } => {
                for (t, which) in [(&sc.a, "scale_a"), (&sc.b, "scale_b")] {
                    if let Some(e) = self.read(t, which, threads, st) {
                        out.push(span, e);
                    }
                }
            }
            Op::Tcgen05Commit { bar, .. } => {
                for f in st.iter_mut().filter(|f| f.by == Some(threads)) {
                    if !f.commits.contains(&bar.bar) {
                        f.commits.push(bar.bar);
                    }
                }
            }
            Op::MbarWait { bar, .. } => waited(st, bar.bar),
            Op::ConsumerWait { pipe, .. } => waited(st, self.k.pipelines[*pipe].full),
            Op::ProducerAcquire { pipe, .. } => waited(st, self.k.pipelines[*pipe].empty),
            _ => {}
        }
    }

    fn join(&self, a: &Vec<Fill>, b: &Vec<Fill>) -> Vec<Fill> {
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                let mut commits = x.commits.clone();
                commits.extend(y.commits.iter().filter(|c| !x.commits.contains(c)));
                Fill {
                    buf: x.buf,
                    empty: x.empty || y.empty,
                    by: x.by.filter(|s| Some(*s) == y.by),
                    commits,
                    waited: x.waited && y.waited,
                }
            })
            .collect()
    }
}

/// Marks the copies whose commits signalled `bar` as waited on.
fn waited(st: &mut [Fill], bar: Handle<Barrier>) {
    for f in st.iter_mut().filter(|f| f.commits.contains(&bar)) {
        f.waited = true;
    }
}

/// The scale-copy rule over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let init: Vec<Fill> = k
        .buffers
        .iter()
        .filter(|(_, b)| b.space == Space::Tmem && b.elem.is_scale() && b.alias.is_none())
        .map(|(buf, _)| Fill {
            buf,
            empty: true,
            by: None,
            commits: Vec::new(),
            waited: false,
        })
        .collect();
    if init.is_empty() {
        return Vec::new();
    }
    flow::run(k, &mut Scales { k }, init)
}
