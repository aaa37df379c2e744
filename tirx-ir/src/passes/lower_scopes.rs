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
use super::walk::{Rewriter, rewrite_body_with};
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

/// The rewrite: a thread or elect scope becomes its guarded block as soon as its body is
/// lowered (in program order, so the elect variables are made in the order a recursion would
/// make them); warp and warpgroup scopes wait for their block, where adjacent ones chain, and
/// so do CTA scopes, which are inlined there (a CTA scope between two warp scopes separates
/// them, even when it is empty).
struct Lowering;

impl Rewriter for Lowering {
    fn exit_stmt(&mut self, k: &mut Kernel, s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        match s.kind {
            StmtKind::Scope { scope, body } if warps(&scope).is_none() && scope != Scope::Cta => {
                Ok(lower_single(k, scope, body, s.span))
            }
            kind => Ok(vec![Stmt { kind, ..s }]),
        }
    }
    fn exit_block(&mut self, k: &mut Kernel, block: Block) -> Result<Block, Diagnostics> {
        Ok(chain_warp_scopes(k, block))
    }
}

/// Warp and warpgroup scopes (bodies already lowered) → guarded blocks; a run of adjacent,
/// disjoint warp ranges becomes one if / else-if chain. CTA scopes are inlined.
fn chain_warp_scopes(k: &mut Kernel, block: Block) -> Block {
    let mut out = Vec::with_capacity(block.len());
    let mut it = block.into_iter().peekable();
    while let Some(s) = it.next() {
        let (scope, body) = match s.kind {
            StmtKind::Scope { scope, body } => (scope, body),
            kind => {
                out.push(Stmt { kind, ..s });
                continue;
            }
        };
        let Some(mut taken) = warps(&scope) else {
            out.extend(lower_single(k, scope, body, s.span));
            continue;
        };
        let mut chain = vec![(scope, body, s.span)];
        while let Some(next) = it.peek() {
            let StmtKind::Scope { scope: sc, .. } = &next.kind else {
                break;
            };
            let Some((a, b)) = warps(sc) else { break };
            if !(b < taken.0 || a > taken.1) {
                break;
            }
            taken = (taken.0.min(a), taken.1.max(b));
            let Some(Stmt {
                kind: StmtKind::Scope { scope, body },
                span,
            }) = it.next()
            else {
                unreachable!("peeked a scope")
            };
            chain.push((scope, body, span));
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
        rewrite_body_with(k, &mut Lowering)
    }
}
