//! lower-scopes — scopes become guarded blocks.
//!
//! Phase: Thread. Preconditions: scope rules already verified. Postconditions: no `Scope`
//! remains. `warp = a..=b` guards on `tid / 32`, `warpgroup` on `tid / 128`, `thread = t` on
//! `tid == t`, and `elect` on the predicate of `elect.sync` (PTX ISA §9.7.13.12), which all
//! lanes of the warp execute before the guarded block.
//!
//! Adjacent warp/warpgroup scopes over disjoint warps become one if / else-if chain: the
//! thread sets are disjoint, so the meaning is the same, and it tells ptxas that the roles are
//! exclusive branches — which `setmaxnreg` needs before ptxas gives each role its own
//! register budget.

use super::Pass;
use crate::diag::Diagnostics;
use crate::ir::{
    BinOp, Block, CmpOp, Expr, Inst, Kernel, ScalarType, Scope, Special, Stmt, StmtKind,
};

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

/// The warps a warp/warpgroup scope selects.
fn warps(scope: &Scope) -> Option<(u32, u32)> {
    match scope {
        Scope::Warpgroup(a, b) => Some((4 * a, 4 * b + 3)),
        Scope::Warp(a, b) => Some((*a, *b)),
        _ => None,
    }
}

fn guard(scope: &Scope) -> Option<Expr> {
    let tid = Expr::Special(Special::TidX);
    match scope {
        Scope::Warpgroup(a, b) => Some(range(Expr::bin(BinOp::Div, tid, Expr::u32(128)), *a, *b)),
        Scope::Warp(a, b) => Some(range(Expr::Special(Special::WarpId), *a, *b)),
        Scope::Thread(t) => Some(Expr::cmp(CmpOp::Eq, tid, Expr::u32(*t))),
        Scope::Leader => Some(Expr::cmp(
            CmpOp::Eq,
            Expr::bin(BinOp::Rem, tid, Expr::u32(128)),
            Expr::u32(0),
        )),
        Scope::Cta | Scope::Elect => None,
    }
}

fn lower_block(k: &mut Kernel, block: Block) -> Block {
    let mut out = Vec::with_capacity(block.len());
    let mut it = block.into_iter().peekable();
    while let Some(mut s) = it.next() {
        let kind = std::mem::replace(&mut s.kind, StmtKind::Inst(Inst::bar_sync()));
        match kind {
            StmtKind::Scope { scope, body } => {
                let body = lower_block(k, body);
                let Some(mut taken) = warps(&scope) else {
                    out.extend(lower_single(k, scope, body, s.span));
                    continue;
                };
                // A run of adjacent, disjoint warp ranges: one if / else-if chain.
                let mut chain = vec![(scope, body, s.span)];
                while let Some(next) = it.peek() {
                    let StmtKind::Scope { scope: sc, .. } = &next.kind else {
                        break;
                    };
                    let Some((a, b)) = warps(sc) else { break };
                    if b < taken.0 || a > taken.1 {
                        taken = (taken.0.min(a), taken.1.max(b));
                        let Some(Stmt {
                            kind: StmtKind::Scope { scope, body },
                            span,
                        }) = it.next()
                        else {
                            unreachable!()
                        };
                        let body = lower_block(k, body);
                        chain.push((scope, body, span));
                    } else {
                        break;
                    }
                }
                let mut else_body = Vec::new();
                for (scope, body, span) in chain.into_iter().rev() {
                    let cond = guard(&scope).expect("warp scopes have guards");
                    else_body = vec![Stmt::at(
                        StmtKind::If {
                            cond,
                            then_body: body,
                            else_body,
                        },
                        span,
                    )];
                }
                out.extend(else_body);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                s.kind = StmtKind::If {
                    cond,
                    then_body: lower_block(k, then_body),
                    else_body: lower_block(k, else_body),
                };
                out.push(s);
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
            } => {
                s.kind = StmtKind::For {
                    var,
                    start,
                    end,
                    step,
                    body: lower_block(k, body),
                };
                out.push(s);
            }
            StmtKind::Loop { body, until } => {
                s.kind = StmtKind::Loop {
                    body: lower_block(k, body),
                    until,
                };
                out.push(s);
            }
            other => {
                s.kind = other;
                out.push(s);
            }
        }
    }
    out
}

fn lower_single(k: &mut Kernel, scope: Scope, body: Block, span: crate::ir::Span) -> Vec<Stmt> {
    match scope {
        Scope::Cta => body,
        Scope::Elect => {
            let lane = k.new_var("elected_lane", ScalarType::U32);
            let p = k.new_var("elected", ScalarType::Pred);
            let elect = Stmt::at(StmtKind::Inst(Inst::elect_sync(lane, p)), span);
            let guarded = Stmt::at(
                StmtKind::If {
                    cond: Expr::Var(p),
                    then_body: body,
                    else_body: vec![],
                },
                span,
            );
            vec![elect, guarded]
        }
        other => {
            let cond = guard(&other).expect("thread scopes have guards");
            vec![Stmt::at(
                StmtKind::If {
                    cond,
                    then_body: body,
                    else_body: vec![],
                },
                span,
            )]
        }
    }
}

impl Pass for LowerScopes {
    fn name(&self) -> &'static str {
        "lower-scopes"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let body = std::mem::take(&mut k.body);
        k.body = lower_block(k, body);
        Ok(())
    }
}
