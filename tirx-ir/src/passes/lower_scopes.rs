//! lower-scopes — scopes become guarded blocks.
//!
//! Phase: Thread. Preconditions: scope rules already verified. Postconditions: no `Scope`
//! remains. `warp = a..=b` guards on `tid / 32`, `warpgroup` on `tid / 128`, `thread = t` on
//! `tid == t`, and `elect` on the predicate of `elect.sync` (PTX ISA §9.7.13.12), which all
//! lanes of the warp execute before the guarded block.

use super::Pass;
use super::walk::rewrite_body;
use crate::diag::Diagnostics;
use crate::ir::{BinOp, CmpOp, Expr, Inst, Kernel, ScalarType, Scope, Special, Stmt, StmtKind};

/// The pass.
pub struct LowerScopes;

fn range(of: Expr, a: u32, b: u32) -> Expr {
    if a == b {
        return Expr::cmp(CmpOp::Eq, of, Expr::u32(a));
    }
    let lo = Expr::cmp(CmpOp::Ge, of.clone(), Expr::u32(a));
    let hi = Expr::cmp(CmpOp::Le, of, Expr::u32(b));
    if a == 0 {
        hi
    } else {
        Expr::AndP(Box::new(lo), Box::new(hi))
    }
}

impl Pass for LowerScopes {
    fn name(&self) -> &'static str {
        "lower-scopes"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        rewrite_body(k, &mut |k, s| {
            let StmtKind::Scope { scope, body } = s.kind else {
                return Ok(vec![s]);
            };
            let tid = Expr::Special(Special::TidX);
            let cond = match scope {
                Scope::Cta => return Ok(body),
                Scope::Warpgroup(a, b) => range(Expr::bin(BinOp::Div, tid, Expr::u32(128)), a, b),
                Scope::Warp(a, b) => range(Expr::Special(Special::WarpId), a, b),
                Scope::Thread(t) => Expr::cmp(CmpOp::Eq, tid, Expr::u32(t)),
                Scope::Elect => {
                    let lane = k.new_var("elected_lane", ScalarType::U32);
                    let p = k.new_var("elected", ScalarType::Pred);
                    let elect = Stmt::at(StmtKind::Inst(Inst::elect_sync(lane, p)), s.span);
                    let guarded = Stmt::at(
                        StmtKind::If {
                            cond: Expr::Var(p),
                            then_body: body,
                            else_body: vec![],
                        },
                        s.span,
                    );
                    return Ok(vec![elect, guarded]);
                }
            };
            Ok(vec![Stmt::at(
                StmtKind::If {
                    cond,
                    then_body: body,
                    else_body: vec![],
                },
                s.span,
            )])
        })
    }
}
