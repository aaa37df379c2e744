//! Warp votes: `let any = warp_any(p);`, `warp_all(p)`, `warp_ballot(p)` (also `x = …` on a
//! `let mut` variable of the result's type). The 32 lanes of each warp vote with `p` — a
//! scalar predicate (`lane_id < 4`) or a predicate over a register tile (`c != 1.0`: a lane's
//! vote is the `||` of its elements, `&&` for `warp_all`) — and every lane gets the result: a
//! predicate (`warp_any`, `warp_all`) or the `u32` whose bit `l` is lane `l`'s vote
//! (`warp_ballot`). Lowering: `tirx-ir/src/regtile/vote.rs` (`vote.sync`, PTX ISA §9.7.13).
//!
//! Checked here: the argument is a predicate; the result is bound. The scope (whole warps) is
//! checked by `verify-scopes`, the tile's owner by `plan-reg-tiles`.

use super::stmt::strip_parens;
use super::vocab::{self, Id, Kind, Word};
use super::{Fail, Local, Lowerer, Res};
use syn::{Expr as SExpr, Ident};
use tirx_ir::{Block, Op, ScalarType, Stmt, StmtKind, TType, VoteKind, VotePred};

/// If `e` is a vote call (`warp_any(…)`, `warp_all(…)`, `warp_ballot(…)`), its word and call.
pub(crate) fn vote_of(e: &SExpr) -> Option<(&'static Word, &syn::ExprCall)> {
    let SExpr::Call(c) = strip_parens(e) else {
        return None;
    };
    let name = crate::args::path_ident(&c.func)?.to_string();
    let w = vocab::lookup(None, &name, &[Kind::Op])?;
    matches!(w.id, Id::WarpAny | Id::WarpAll | Id::WarpBallot).then_some((w, c))
}

/// The vote a word names.
fn kind(w: &Word) -> VoteKind {
    match w.id {
        Id::WarpAny => VoteKind::Any,
        Id::WarpAll => VoteKind::All,
        _ => VoteKind::Ballot,
    }
}

/// The type of a vote's result.
fn result_type(w: &Word) -> ScalarType {
    if w.id == Id::WarpBallot {
        ScalarType::U32
    } else {
        ScalarType::Pred
    }
}

impl Lowerer<'_> {
    /// `let x = warp_any(p);`: a new variable bound to the vote.
    pub(crate) fn vote_let(
        &mut self,
        ident: &Ident,
        mutable: bool,
        (word, c): (&'static Word, &syn::ExprCall),
        l: &syn::Local,
        out: &mut Block,
    ) -> Res<()> {
        let pred = self.vote_pred(word, c, out)?;
        let dst = self.kernel.new_var(ident.to_string(), result_type(word));
        let span = self.span(l);
        let op = Op::WarpVote {
            dst,
            kind: kind(word),
            pred,
        };
        out.push(Stmt::at(StmtKind::Op(op), span));
        self.bind(ident, Local::Var { var: dst, mutable })
    }

    /// `x = warp_any(p);` into an existing `let mut` variable of the result's type.
    pub(crate) fn vote_assign(
        &mut self,
        left: &SExpr,
        (word, c): (&'static Word, &syn::ExprCall),
        whole: &SExpr,
        out: &mut Block,
    ) -> Res<()> {
        let dst = self.assign_target(left)?;
        let ty = result_type(word);
        if self.kernel.vars[dst].ty != ty {
            let have = self.kernel.vars[dst].ty.name();
            return Err(self.fail(
                left,
                format!(
                    "`{}` gives a {}; this variable is a {have}",
                    word.name,
                    ty.name()
                ),
            ));
        }
        let pred = self.vote_pred(word, c, out)?;
        let span = self.span(whole);
        let op = Op::WarpVote {
            dst,
            kind: kind(word),
            pred,
        };
        out.push(Stmt::at(StmtKind::Op(op), span));
        Ok(())
    }

    /// The predicate each lane votes with: a tile predicate (over the layout of the tile it
    /// reads) or a scalar one.
    fn vote_pred(
        &mut self,
        word: &'static Word,
        c: &syn::ExprCall,
        out: &mut Block,
    ) -> Res<VotePred> {
        let args = self.word_args(word, &c.args, c)?;
        let a = args.pos[0];
        let how = "a comparison or a mask: `lane_id < 4`, `c != 1.0`";
        if self.is_tile_expr(a) || self.mentions_float(a) {
            let mut carriers = Vec::new();
            let value = self.texpr(a, out, &mut carriers)?;
            match tirx_ir::regtile::ttype(&self.kernel, &value) {
                Ok(TType::Pred) => {}
                Ok(t) => {
                    return Err(self.fail(
                        a,
                        format!(
                            "`{}` takes a predicate ({how}); this is a {} tile",
                            word.name,
                            t.name()
                        ),
                    ));
                }
                Err(why) => return Err(self.fail(a, why.to_string())),
            }
            let src = self.template(a, &value, &carriers)?;
            return Ok(VotePred::Tile { src, value });
        }
        let e = self.scalar(a)?;
        if self.ty(&e) != ScalarType::Pred {
            return Err(self.fail(
                a,
                format!(
                    "`{}` takes a predicate ({how}); this is a {} value",
                    word.name,
                    self.ty(&e).name()
                ),
            ));
        }
        Ok(VotePred::Scalar(e))
    }

    /// A vote written as a statement: its value would be lost.
    pub(crate) fn vote_unbound(&mut self, w: &Word, c: &syn::ExprCall) -> Fail {
        self.fail(
            c,
            format!(
                "`{}` gives a value; bind it: `let v = {}(…);`",
                w.name, w.name
            ),
        )
    }
}
