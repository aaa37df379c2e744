//! Warp votes (`warp_any`, `warp_all`, `warp_ballot`): what an `Op::WarpVote` combines.
//! Re-exported from `ir`. Lowered by `regtile/vote.rs` to `vote.sync` (PTX ISA §9.7.13,
//! "Parallel Synchronization and Communication Instructions: vote.sync") with a full member
//! mask, so every lane of the warp must reach it, converged.

use super::{Buffer, Expr, TExpr};
use crate::arena::Handle;

/// Which vote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteKind {
    /// True in every lane when the predicate holds in some lane (`vote.sync.any.pred`).
    Any,
    /// True in every lane when the predicate holds in every lane (`vote.sync.all.pred`).
    All,
    /// Every lane gets the `u32` whose bit `l` is lane `l`'s predicate
    /// (`vote.sync.ballot.b32`).
    Ballot,
}

impl VoteKind {
    /// The text spelling (`any`, `all`, `ballot`), also the `vote.sync` mode.
    pub fn name(self) -> &'static str {
        match self {
            VoteKind::Any => "any",
            VoteKind::All => "all",
            VoteKind::Ballot => "ballot",
        }
    }
    /// Every kind, for parsing.
    pub const ALL: [VoteKind; 3] = [VoteKind::Any, VoteKind::All, VoteKind::Ballot];
}

/// The predicate a lane votes with.
#[derive(Clone, Debug, PartialEq)]
pub enum VotePred {
    /// A scalar predicate of the thread (`lane_id < 4`).
    Scalar(Expr),
    /// A predicate over the elements of register tile `src`'s layout (`c != 1.0`): a lane
    /// votes with the `||` of its elements' values (`&&` for `All`), so `Any` and `All` are
    /// over every element the warp holds.
    Tile {
        /// The tile whose layout the expression takes.
        src: Handle<Buffer>,
        /// The predicate per element.
        value: TExpr,
    },
}
