//! TMA stores still reading their source: bulk async-groups followed through the body.
//!
//! A TMA store (`cp.async.bulk.tensor … .bulk_group`) reads its shared source asynchronously;
//! `tma::commit_group()` closes the stores issued since the last commit into a bulk
//! async-group, and `tma::wait_group_read(n)` / `tma::wait_group(n)` wait until at most the
//! `n` most recent groups are pending (PTX ISA §9.7.9.25.6.1 `cp.async.bulk.commit_group`,
//! §9.7.9.25.6.2 `cp.async.bulk.wait_group`: "`.read` … waits until all the bulk async
//! operations in the group have completed reading from their source locations"). Until then
//! the source must not change. Two rules:
//!
//! - **Overwritten source.** A write into a store's source — by threads (the `thread_load`,
//!   `shared_store`, `stmatrix`, `stmatrix_trans` and `reg_stage` copies) or by a TMA load —
//!   while the store may be pending is an error at the write.
//! - **Released stage.** A `consumer_release` of a pipeline stage that a pending store reads
//!   lets the producer refill it: an error at the release.
//!
//! The walk keeps the stores not yet committed and the committed groups, oldest first (an
//! empty commit is a group too); a wait keeps the `n` most recent groups; branches join
//! aligned on the most recent group, as `wait(n)` counts. Beyond [`MAX_GROUPS`] the oldest
//! groups are forgotten (a miss, never a false report).
//!
//! Which part of a buffer a write touches is decided as [`tiles`](super::tiles) says: a
//! run-time index that may name another buffer of a double-buffered ring is accepted.

use super::ProtocolError;
use super::flow::{self, Flow, Sink};
use super::tiles::{Source, overlaps, pipeline_stages};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{Buffer, Completion, Expr, Kernel, Mem, Op, Pipeline, Space, Span, TileRef, Var};
use crate::valid::scope::ScopeSet;

/// Committed groups followed before the oldest are forgotten.
const MAX_GROUPS: usize = 8;

type Group = Vec<Source>;

/// The stores that may be pending.
#[derive(Clone, Debug, Default, PartialEq)]
struct State {
    /// Issued since the last commit.
    open: Group,
    /// Committed groups, oldest first.
    groups: Vec<Group>,
}

fn union(a: &Group, b: &Group) -> Group {
    let mut g = a.clone();
    for x in b {
        if !g.contains(x) {
            g.push(x.clone());
        }
    }
    g
}

impl State {
    fn commit(&mut self) {
        self.groups.push(std::mem::take(&mut self.open));
        if self.groups.len() > MAX_GROUPS {
            self.groups.remove(0);
        }
    }

    fn wait(&mut self, n: u32) {
        let keep = (n as usize).min(self.groups.len());
        self.groups.drain(..self.groups.len() - keep);
    }

    /// The pending stores with the `n` of the `wait_group_read(n)` that retires each
    /// (`None`: not committed yet), most demanding first: the uncommitted ones, then the
    /// groups from the most recent (so the first match names the wait that retires them all).
    fn pending(&self) -> impl Iterator<Item = (&Source, Option<usize>)> {
        let open = self.open.iter().map(|s| (s, None));
        let committed = self
            .groups
            .iter()
            .rev()
            .enumerate()
            .flat_map(|(n, g)| g.iter().map(move |s| (s, Some(n))));
        open.chain(committed)
    }
}

struct Bulk<'k> {
    k: &'k Kernel,
    /// Each pipeline with the buffers its TMA loads fill (its stages).
    stages: Vec<(Handle<Pipeline>, Vec<Handle<Buffer>>)>,
}

impl Bulk<'_> {
    fn shared<'t>(&self, t: &'t TileRef) -> Option<(Handle<Buffer>, &'t [Expr])> {
        match t {
            TileRef::Buf { buf, index } if self.k.buffers[*buf].space == Space::Shared => {
                Some((*buf, index))
            }
            _ => None,
        }
    }

    /// A write of `dst` by `threads`, by `writer`.
    fn write(
        &self,
        dst: &TileRef,
        writer: String,
        threads: ScopeSet,
        st: &State,
        span: Span,
        out: &mut Sink,
    ) {
        let Some((buf, index)) = self.shared(dst) else {
            return;
        };
        if let Some((_, n)) = st.pending().find(|(s, _)| overlaps(s, buf, index, threads)) {
            out.push(
                span,
                ProtocolError::StoreSourceOverwritten {
                    buffer: self.k.buffers[buf].name.clone(),
                    writer,
                    pending: pending_words(n),
                    n: n.unwrap_or(0),
                },
            );
        }
    }

    /// `consumer_release(stage)` of `pipe` by `threads`.
    fn release(
        &self,
        pipe: Handle<Pipeline>,
        stage: &Expr,
        threads: ScopeSet,
        st: &State,
        span: Span,
        out: &mut Sink,
    ) {
        let Some((_, bufs)) = self.stages.iter().find(|(p, _)| *p == pipe) else {
            return;
        };
        let hit = st.pending().find(|(s, _)| {
            bufs.contains(&s.buf) && overlaps(s, s.buf, std::slice::from_ref(stage), threads)
        });
        if let Some((s, n)) = hit {
            out.push(
                span,
                ProtocolError::ReleasedWhileStored {
                    buffer: self.k.buffers[s.buf].name.clone(),
                    pipe: self.k.pipelines[pipe].name.clone(),
                    pending: pending_words(n),
                    n: n.unwrap_or(0),
                },
            );
        }
    }
}

fn pending_words(n: Option<usize>) -> &'static str {
    match n {
        None => "it is not even committed: no `tma::commit_group()` after it",
        Some(_) => "its bulk group is still pending: no wait since its commit retires it",
    }
}

impl Flow for Bulk<'_> {
    type State = State;

    fn op(&mut self, op: &Op, span: Span, threads: ScopeSet, st: &mut State, out: &mut Sink) {
        match op {
            Op::TmaCommitGroup => st.commit(),
            Op::TmaWaitGroup { n, .. } => st.wait(*n),
            Op::ConsumerRelease { pipe, stage } => {
                self.release(*pipe, stage, threads, st, span, out)
            }
            Op::Copy {
                dst,
                src,
                variant: Some(v),
                ..
            } => {
                if v.writes() == Mem::Shared {
                    let w = match v.completion() {
                        Completion::TxBytes => "a TMA load".to_string(),
                        _ => format!("the `{v}` copy"),
                    };
                    self.write(dst, w, threads, st, span, out);
                }
                if v.completion() == Completion::BulkGroup
                    && let Some((buf, index)) = self.shared(src)
                {
                    let s = Source::new(buf, index, threads);
                    if !st.open.contains(&s) {
                        st.open.push(s);
                    }
                }
            }
            _ => {}
        }
    }

    fn join(&self, a: &State, b: &State) -> State {
        let n = a.groups.len().max(b.groups.len());
        // The i-th group from the most recent end (what `wait(n)` counts).
        let at = |s: &State, i: usize| -> Group {
            s.groups
                .len()
                .checked_sub(i + 1)
                .map(|j| s.groups[j].clone())
                .unwrap_or_default()
        };
        let mut groups: Vec<Group> = (0..n).map(|i| union(&at(a, i), &at(b, i))).collect();
        groups.reverse();
        State {
            open: union(&a.open, &b.open),
            groups,
        }
    }

    fn define(&mut self, var: Handle<Var>, st: &mut State) {
        for s in st.open.iter_mut().chain(st.groups.iter_mut().flatten()) {
            s.forget(var);
        }
    }
}

/// The bulk-group rules over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    let mut b = Bulk {
        k,
        stages: pipeline_stages(k),
    };
    flow::run(k, &mut b, State::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(i: usize) -> Source {
        Source {
            buf: Handle::from_index(i),
            index: vec![],
            threads: ScopeSet::cta(128),
        }
    }

    #[test]
    fn wait_read_keeps_the_most_recent_groups() {
        let mut s = State::default();
        s.open.push(src(0));
        s.commit();
        s.open.push(src(1));
        s.commit();
        s.wait(1);
        assert_eq!(s.groups, vec![vec![src(1)]]);
        let pending: Vec<_> = s.pending().map(|(x, n)| (x.buf, n)).collect();
        assert_eq!(pending, vec![(Handle::from_index(1), Some(0))]);
    }
}
