//! check-wgmma-registers — register tiles an asynchronous wgmma still uses are not touched.
//!
//! Phase: Tile, after dispatch (the variants say which MMAs are wgmma). `wgmma.mma_async`
//! reads its A operand from registers (the RS form) and writes its accumulator registers
//! asynchronously: until a `wgmma.wait_group` retires the group that holds it, "accessing the
//! accumulator register or the input register containing fragments of matrix A … is undefined
//! behavior" (PTX ISA §9.7.15.5.2 "wgmma.mma_async", and §9.7.15.7 wait_group). Another wgmma
//! on the same accumulator may follow (the chain of a K loop is ordered by the hardware).
//!
//! The pass walks the body in order with the MMAs that may be in flight: the open (not yet
//! committed) ones and the committed groups, oldest first; `wgmma::commit()` closes the open
//! set into a group, `wgmma::wait(n)` keeps the `n` most recent groups. An op that reads a tile
//! an in-flight MMA writes (its accumulator), or writes a tile an in-flight MMA reads or
//! writes, is an error at that op, naming the tile, the MMA's role for it and the wait that
//! would retire it. The walk is check-protocol's ([`flow`]): branches join by union, aligned
//! on the most recent group (what `wait(n)` keeps); loops are walked to a fixed point of that
//! join (it is reached: the groups are bounded by [`MAX_GROUPS`], beyond which the state is
//! unknown and nothing is reported until a `wait(0)` — a kernel the check cannot judge is
//! accepted).

use super::Pass;
use super::check_protocol::flow::{self, Flow, Sink};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::ir::{Buffer, Completion, Kernel, Op, Space, Span, TileRef};
use crate::valid::scope::ScopeSet;

/// The pass.
pub struct CheckWgmmaRegs;

/// Committed groups tracked before the state is given up as unknown.
const MAX_GROUPS: usize = 8;

/// What an in-flight MMA does with a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Use {
    /// Its accumulator: written until the MMA completes.
    Acc,
    /// Its register A operand: read until the MMA completes.
    A,
}

type Group = Vec<(Handle<Buffer>, Use)>;

/// The MMAs that may be in flight.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct State {
    /// Issued since the last commit.
    open: Group,
    /// Committed groups, oldest first.
    groups: Vec<Group>,
    /// Too much to follow: nothing is reported until everything is retired.
    unknown: bool,
}

fn union(a: &Group, b: &Group) -> Group {
    let mut g = a.clone();
    for x in b {
        if !g.contains(x) {
            g.push(*x);
        }
    }
    g.sort();
    g
}

impl State {
    /// Both paths' in-flight MMAs, groups aligned on the most recent.
    fn join(&self, o: &State) -> State {
        let n = self.groups.len().max(o.groups.len());
        let at = |s: &State, i: usize| -> Group {
            // i-th group from the most recent end.
            s.groups
                .len()
                .checked_sub(i + 1)
                .map(|k| s.groups[k].clone())
                .unwrap_or_default()
        };
        let mut groups: Vec<Group> = (0..n).map(|i| union(&at(self, i), &at(o, i))).collect();
        groups.reverse();
        State {
            open: union(&self.open, &o.open),
            groups,
            unknown: self.unknown || o.unknown,
        }
    }

    fn in_flight(&self) -> impl Iterator<Item = &(Handle<Buffer>, Use)> {
        self.groups.iter().flatten().chain(&self.open)
    }

    fn commit(&mut self) {
        let g = std::mem::take(&mut self.open);
        if !g.is_empty() || !self.groups.is_empty() {
            self.groups.push(g);
        }
        if self.groups.len() > MAX_GROUPS {
            // Nothing is reported until a wait retires everything, so the oldest groups no
            // longer matter; dropping them keeps the state finite (the loop walk converges).
            self.unknown = true;
            self.groups.drain(..self.groups.len() - MAX_GROUPS);
        }
    }

    fn wait(&mut self, n: u32) {
        let keep = (n as usize).min(self.groups.len());
        self.groups.drain(..self.groups.len() - keep);
        if self.groups.is_empty() && self.open.is_empty() {
            self.unknown = false;
        }
    }
}

/// A register tile, if `t` is one.
fn reg_tile(k: &Kernel, t: &TileRef) -> Option<Handle<Buffer>> {
    match t {
        TileRef::Buf { buf, .. } if k.buffers[*buf].space == Space::Reg => Some(*buf),
        _ => None,
    }
}

/// The register tiles an op (other than a wgmma) reads and writes.
fn accesses(k: &Kernel, op: &Op) -> (Vec<Handle<Buffer>>, Vec<Handle<Buffer>>) {
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    match op {
        Op::Compute { dst, value } => {
            value.tiles(&mut reads);
            writes.push(*dst);
        }
        Op::Reduce {
            dst, src, value, ..
        } => {
            match value {
                Some(v) => v.tiles(&mut reads),
                None => reads.push(*src),
            }
            writes.push(*dst);
        }
        Op::WarpVote {
            pred: crate::ir::VotePred::Tile { value, .. },
            ..
        } => value.tiles(&mut reads),
        Op::Copy { dst, src, .. } => {
            reads.extend(reg_tile(k, src));
            writes.extend(reg_tile(k, dst));
        }
        Op::Mma { acc, a, .. } => {
            reads.extend(reg_tile(k, a));
            reads.extend(reg_tile(k, acc));
            writes.extend(reg_tile(k, acc));
        }
        _ => {}
    }
    (reads, writes)
}

/// The rule, for the shared walk ([`flow`]).
struct Regs<'k> {
    k: &'k Kernel,
}

impl Regs<'_> {
    fn fail(&self, span: Span, tile: Handle<Buffer>, u: Use, wrote: bool, out: &mut Sink) {
        let name = &self.k.buffers[tile].name;
        let (role, access) = match (u, wrote) {
            (Use::Acc, false) => ("writes its accumulator", "read"),
            (Use::Acc, true) => ("writes its accumulator", "overwritten"),
            (Use::A, _) => ("reads it as its A operand", "overwritten"),
        };
        let e = crate::regtile::RegTileError::InFlight {
            tile: name.clone(),
            access,
            role,
        };
        out.push(span, e);
    }
}

impl Flow for Regs<'_> {
    type State = State;

    // Scopes do not matter: a wgmma's registers are its warpgroup's, and the ops that touch
    // them run there too.
    fn op(&mut self, op: &Op, span: Span, _: ScopeSet, s: &mut State, out: &mut Sink) {
        match op {
            Op::WgmmaCommit => return s.commit(),
            Op::WgmmaWait { n } => return s.wait(*n),
            _ => {}
        }
        // An MMA retired by a wgmma group (the only kind whose registers are in flight).
        let wgmma = matches!(
            op,
            Op::Mma { variant: Some(v), .. } if v.completion() == Completion::WgmmaGroup
        );
        if !s.unknown {
            let (reads, writes) = accesses(self.k, op);
            let flights: Vec<_> = s.in_flight().copied().collect();
            for (tile, u) in flights {
                // A wgmma may chain onto an accumulator in flight and share an A operand.
                if wgmma {
                    continue;
                }
                if u == Use::Acc && reads.contains(&tile) {
                    self.fail(span, tile, u, false, out);
                } else if writes.contains(&tile) {
                    self.fail(span, tile, u, true, out);
                }
            }
        }
        if let Op::Mma { acc, a, .. } = op
            && wgmma
        {
            for (t, u) in [(acc, Use::Acc), (a, Use::A)] {
                if let Some(b) = reg_tile(self.k, t)
                    && !s.open.contains(&(b, u))
                {
                    s.open.push((b, u));
                    s.open.sort();
                }
            }
        }
    }

    fn join(&self, a: &State, b: &State) -> State {
        a.join(b)
    }
}

impl Pass for CheckWgmmaRegs {
    fn name(&self) -> &'static str {
        "check-wgmma-registers"
    }

    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let errs = flow::run(k, &mut Regs { k }, State::default());
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(ids: &[u32]) -> Group {
        ids.iter()
            .map(|&i| (Handle::from_index(i as usize), Use::Acc))
            .collect()
    }

    #[test]
    fn wait_keeps_the_most_recent_groups() {
        let mut s = State {
            open: g(&[2]),
            groups: vec![g(&[0]), g(&[1])],
            unknown: false,
        };
        s.wait(1);
        assert_eq!(s.groups, vec![g(&[1])]);
        assert_eq!(s.open, g(&[2]), "uncommitted MMAs are not waited for");
        s.commit();
        s.wait(0);
        assert_eq!(s, State::default());
    }

    #[test]
    fn too_many_groups_are_unknown_and_stay_bounded() {
        let mut s = State::default();
        for i in 0..3 * MAX_GROUPS as u32 {
            s.open = g(&[i]);
            s.commit();
            assert!(s.groups.len() <= MAX_GROUPS);
        }
        assert!(s.unknown);
        assert_eq!(s.groups.last(), Some(&g(&[3 * MAX_GROUPS as u32 - 1])));
        s.wait(1);
        assert!(s.unknown, "a group may still be in flight");
        s.wait(0);
        assert_eq!(s, State::default());
    }

    #[test]
    fn joins_align_on_the_most_recent_group() {
        let a = State {
            open: vec![],
            groups: vec![g(&[0]), g(&[1])],
            unknown: false,
        };
        let b = State {
            open: vec![],
            groups: vec![g(&[2])],
            unknown: false,
        };
        let j = a.join(&b);
        assert_eq!(j.groups, vec![g(&[0]), g(&[1, 2])]);
    }
}
