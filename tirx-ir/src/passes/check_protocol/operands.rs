//! Pipeline stages released while an MMA may still read them.
//!
//! Both MMAs read their shared operands asynchronously: a `wgmma.mma_async` until the
//! `wgmma.wait_group` that retires its group (PTX ISA §9.7.15.5.2, §9.7.15.7.4), a
//! `tcgen05.mma` until the mbarrier of a later `tcgen05.commit` completes (§9.7.16.10.9,
//! §9.7.16.10.10). A `consumer_release(s)` of a pipeline stage an MMA in flight reads lets the
//! producer's next `producer_acquire` pass and its TMA load overwrite the operands under the
//! MMA: an error at the release, naming the stage buffer and the wait (or the commit) that
//! would make it safe.
//!
//! Followed through the body like the register rule of `check-wgmma-registers`: wgmma
//! operands by commit groups (`wgmma::commit()` closes a group, `wgmma::wait(n)` keeps the `n`
//! most recent, joins align on the most recent), tcgen05 operands with the barriers their
//! commits signal (a wait on one of them, any index, retires them). Which stage a release
//! names and which an MMA reads is decided as [`tiles`](super::tiles) says; the release of the
//! previous stage one step later (`consumer_release((it + STAGES - 1) % STAGES)` after
//! `wgmma::wait(1)`, GEMM levels 4–8) names another expression and is accepted.

use super::ProtocolError;
use super::flow::{self, Flow, Sink};
use super::tiles::{Source, overlaps, pipeline_stages};
use crate::arena::Handle;
use crate::diag::Diagnostic;
use crate::ir::{
    Barrier, Buffer, Completion, Expr, Kernel, Op, Pipeline, Space, Span, TileRef, Var,
};
use crate::valid::scope::ScopeSet;

/// Committed wgmma groups followed before the oldest are forgotten (a miss, never a false
/// report).
const MAX_GROUPS: usize = 8;

/// The MMA operands that may be in flight.
#[derive(Clone, Debug, Default, PartialEq)]
struct State {
    /// wgmma operands issued since the last `wgmma::commit()`.
    open: Vec<Source>,
    /// Committed wgmma groups, oldest first.
    groups: Vec<Vec<Source>>,
    /// tcgen05 operands, with the barriers the commits after them signal.
    tc: Vec<(Source, Vec<Handle<Barrier>>)>,
}

fn push<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

fn union<T: PartialEq + Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = a.to_vec();
    for x in b {
        push(&mut out, x.clone());
    }
    out
}

struct Operands<'k> {
    k: &'k Kernel,
    stages: Vec<(Handle<Pipeline>, Vec<Handle<Buffer>>)>,
}

impl Operands<'_> {
    /// The shared operands of an MMA.
    fn sources(&self, a: &TileRef, b: &TileRef, threads: ScopeSet) -> Vec<Source> {
        [a, b]
            .into_iter()
            .filter_map(|t| match t {
                TileRef::Buf { buf, index } if self.k.buffers[*buf].space == Space::Shared => {
                    Some(Source::new(*buf, index, threads))
                }
                _ => None,
            })
            .collect()
    }

    /// The wait that retires a pending operand, in words.
    fn fix(&self, st: &State, src: &Source) -> String {
        if st.open.contains(src) {
            return "it is not committed yet: `wgmma::commit()` and `wgmma::wait(0)` first".into();
        }
        let len = st.groups.len();
        if let Some(i) = st.groups.iter().rposition(|g| g.contains(src)) {
            return format!(
                "its wgmma group is still pending: `wgmma::wait({})` first, or release the stage one step later",
                len - 1 - i
            );
        }
        match st.tc.iter().find(|(s, _)| s == src).map(|(_, b)| b.last()) {
            Some(Some(bar)) => format!(
                "no wait on `{}` that its `tcgen05::commit` signals: release with `tcgen05::commit(pipe.empty(s))`, which arrives when the MMAs are done",
                self.k.barriers[*bar].name
            ),
            _ => "no `tcgen05::commit` after it: release with `tcgen05::commit(pipe.empty(s))`, which arrives when the MMAs are done".into(),
        }
    }

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
        let pending = st
            .open
            .iter()
            .chain(st.groups.iter().flatten())
            .chain(st.tc.iter().map(|(s, _)| s));
        let hit = |s: &&Source| {
            bufs.contains(&s.buf) && overlaps(s, s.buf, std::slice::from_ref(stage), threads)
        };
        if let Some(src) = pending.clone().find(hit) {
            let e = ProtocolError::ReleasedUnderMma {
                buffer: self.k.buffers[src.buf].name.clone(),
                pipe: self.k.pipelines[pipe].name.clone(),
                fix: self.fix(st, src),
            };
            out.push(span, e);
        }
    }

    fn waited(&self, bar: Handle<Barrier>, st: &mut State) {
        st.tc.retain(|(_, bars)| !bars.contains(&bar));
    }
}

impl Flow for Operands<'_> {
    type State = State;

    fn op(&mut self, op: &Op, span: Span, threads: ScopeSet, st: &mut State, out: &mut Sink) {
        match op {
            Op::Mma {
                a,
                b,
                variant: Some(v),
                ..
            } => {
                for s in self.sources(a, b, threads) {
                    match v.completion() {
                        Completion::WgmmaGroup => push(&mut st.open, s),
                        Completion::Tcgen05Commit => push(&mut st.tc, (s, Vec::new())),
                        Completion::InOrder | Completion::TxBytes | Completion::BulkGroup => {}
                    }
                }
            }
            Op::WgmmaCommit => {
                st.groups.push(std::mem::take(&mut st.open));
                if st.groups.len() > MAX_GROUPS {
                    st.groups.remove(0);
                }
            }
            Op::WgmmaWait { n } => {
                let keep = (*n as usize).min(st.groups.len());
                st.groups.drain(..st.groups.len() - keep);
            }
            Op::Tcgen05Commit { bar, .. } => {
                for (_, bars) in &mut st.tc {
                    push(bars, bar.bar);
                }
            }
            Op::MbarWait { bar, .. } => self.waited(bar.bar, st),
            Op::ConsumerWait { pipe, .. } => self.waited(self.k.pipelines[*pipe].full, st),
            Op::ProducerAcquire { pipe, .. } => self.waited(self.k.pipelines[*pipe].empty, st),
            Op::ConsumerRelease { pipe, stage } => {
                self.release(*pipe, stage, threads, st, span, out)
            }
            _ => {}
        }
    }

    fn join(&self, a: &State, b: &State) -> State {
        let n = a.groups.len().max(b.groups.len());
        // The i-th group from the most recent end (what `wait(n)` counts).
        let at = |s: &State, i: usize| -> Vec<Source> {
            s.groups
                .len()
                .checked_sub(i + 1)
                .map(|j| s.groups[j].clone())
                .unwrap_or_default()
        };
        let mut groups: Vec<Vec<Source>> = (0..n).map(|i| union(&at(a, i), &at(b, i))).collect();
        groups.reverse();
        State {
            open: union(&a.open, &b.open),
            groups,
            tc: union(&a.tc, &b.tc),
        }
    }

    fn define(&mut self, var: Handle<Var>, st: &mut State) {
        let tc = st.tc.iter_mut().map(|(s, _)| s);
        for s in st
            .open
            .iter_mut()
            .chain(st.groups.iter_mut().flatten())
            .chain(tc)
        {
            s.forget(var);
        }
    }
}

/// The operand-release rule over `k`.
pub(super) fn check(k: &Kernel) -> Vec<Diagnostic> {
    if k.pipelines.is_empty() {
        return Vec::new();
    }
    let mut o = Operands {
        k,
        stages: pipeline_stages(k),
    };
    flow::run(k, &mut o, State::default())
}
