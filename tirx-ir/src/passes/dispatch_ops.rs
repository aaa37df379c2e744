//! dispatch-ops — picks the hardware path of every copy and mma.
//!
//! Phase: Tile. Preconditions: scopes verified. Postconditions: every `Op::Copy` and
//! `Op::Mma` has `variant: Some(name)` naming an entry of `dispatch::COPY` / `dispatch::MMA`
//! whose predicate holds; a forced variant that does not apply, or an op no variant fits, is
//! an error at the op listing every candidate and why it refused.

use super::Pass;
use crate::diag::{Diagnostic, Diagnostics};
use crate::dispatch::{Cx, select};
use crate::ir::{Block, Kernel, Op, StmtKind};
use crate::valid::scope::Threads;

/// The pass.
pub struct DispatchOps;

fn walk(k: &Kernel, block: &mut Block, threads: Threads, errs: &mut Diagnostics) {
    for s in block.iter_mut() {
        match &mut s.kind {
            StmtKind::Scope { scope, body } => walk(k, body, threads.enter(scope), errs),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                walk(k, then_body, threads, errs);
                walk(k, else_body, threads, errs);
            }
            StmtKind::For { body, .. } | StmtKind::Loop { body, .. } => {
                walk(k, body, threads, errs)
            }
            StmtKind::Op(op @ (Op::Copy { .. } | Op::Mma { .. })) => {
                let forced = match op {
                    Op::Copy { variant, .. } | Op::Mma { variant, .. } => variant.clone(),
                    _ => None,
                };
                let chosen = select(&Cx { k, op, threads }, forced.as_deref()).map(|v| v.name);
                match (chosen, op) {
                    (Ok(name), Op::Copy { variant, .. } | Op::Mma { variant, .. }) => {
                        *variant = Some(name.to_string())
                    }
                    (Err(e), _) => errs.push(Diagnostic::new(s.span, e.to_string())),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

impl Pass for DispatchOps {
    fn name(&self) -> &'static str {
        "dispatch-ops"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        let mut body = std::mem::take(&mut k.body);
        walk(k, &mut body, Threads::Cta(k.sig.threads), &mut errs);
        k.body = body;
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
