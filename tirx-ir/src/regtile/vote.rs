//! `warp_vote KIND %dst <- PRED`: a vote of the 32 lanes of each warp.
//!
//! Before: `warp_vote any %7 <- @c of (ne @c (f32 0f3F800000))`
//! After: per register `i` of `@c` the thread holds, the predicate (`setp.neu.f32 %q_i, %c_i,
//! 0f3F800000`), combined in the thread (`or.pred`; `and.pred` for `all`), then
//! `vote.sync.any.pred %7, %q, 0xffffffff`.
//!
//! A scalar predicate (`warp_vote all %7 <- lane_id < 4:u32`) is evaluated once per thread.
//! The member mask is always the full warp (PTX ISA §9.7.13 "vote.sync": every lane of the
//! mask must execute the same `vote.sync` before any resumes), so the op needs whole warps
//! (`verify-scopes`); a warp split by an `if` is diagnosed by the emulator. PTX used:
//! §9.7.13 (vote.sync), §9.7.7.1 (setp), §9.7.8 (and/or.pred).

use super::{compute, layout};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::inst::reg;
use crate::ir::{Inst, ScalarType as T, TType, Var, VoteKind, VotePred};
use crate::lower::Lower;

/// Lowers one vote into `dst` (a predicate, or a `u32` for `Ballot`).
pub fn lower(
    lw: &mut Lower,
    dst: Handle<Var>,
    kind: VoteKind,
    pred: &VotePred,
) -> Result<(), Diagnostics> {
    let p = match pred {
        VotePred::Scalar(e) => lw.let_("vp", T::Pred, e.clone()),
        VotePred::Tile { src, value } => {
            let l = layout(lw.k, *src).map_err(|e| lw.error(e))?;
            let ty = super::ttype(lw.k, value).map_err(|e| lw.error(e))?;
            if ty != TType::Pred {
                return Err(lw.internal(format!("warp vote of a {} tile", ty.name())));
            }
            let pp = compute::prepare(lw, *src, &l, value)?;
            let org = compute::uses_index(&pp).then(|| super::origin(lw, &l));
            let mut memo = compute::Memo::default();
            // `all`: every element of every lane; `any` and `ballot`: some element of the lane.
            let combine = if kind == VoteKind::All {
                "and.pred"
            } else {
                "or.pred"
            };
            let acc = lw.var("vp", T::Pred);
            for i in 0..l.value_count() {
                let (v, _) = compute::eval(lw, &l, org, &pp, i, &mut memo);
                if i == 0 {
                    lw.inst(Inst::mov("pred", acc, v));
                } else {
                    lw.inst(Inst::binary(combine, acc, reg(acc), v));
                }
            }
            acc
        }
    };
    if lw.k.vars[dst].ty
        != if kind == VoteKind::Ballot {
            T::U32
        } else {
            T::Pred
        }
    {
        return Err(lw.internal("warp vote into a variable of the wrong type"));
    }
    lw.inst(Inst::vote_sync(kind, dst, p));
    Ok(())
}
