//! dispatch-ops — picks the hardware path of every copy and mma.
//!
//! Phase: Tile. Preconditions: scopes verified. Postconditions: every `Op::Copy` and
//! `Op::Mma` has `variant: Some(name)` naming an entry of `dispatch::COPY` / `dispatch::MMA`
//! whose predicate holds; a forced variant that does not apply, or an op no variant fits, is
//! an error at the op listing every candidate and why it refused.

use super::Pass;
use crate::diag::{Diagnostic, Diagnostics};
use crate::dispatch::{Cx, select};
use crate::ir::{Kernel, Op, Stmt, StmtKind};
use crate::passes::walk::visit_mut_with;
use crate::valid::scope::Threads;

/// The pass.
pub struct DispatchOps;

/// Chooses the variant of one copy or mma (any other statement is left alone).
fn dispatch(k: &Kernel, s: &mut Stmt, threads: Threads, errs: &mut Diagnostics) {
    let StmtKind::Op(op @ (Op::Copy { .. } | Op::Mma { .. })) = &mut s.kind else {
        return;
    };
    let forced = match op {
        Op::Copy { variant, .. } | Op::Mma { variant, .. } => variant.clone(),
        _ => None,
    };
    let chosen = select(&Cx { k, op, threads }, forced.as_deref()).map(|v| v.name);
    match (chosen, op) {
        (Ok(name), Op::Copy { variant, .. } | Op::Mma { variant, .. }) => {
            *variant = Some(name.to_string())
        }
        (Err(e), _) => errs.push(Diagnostic::new(s.span, e)),
        _ => {}
    }
}

/// The thread set of a nested block: narrowed by a scope, inherited otherwise.
fn enter(threads: &Threads, s: &Stmt) -> Threads {
    match &s.kind {
        StmtKind::Scope { scope, .. } => threads.enter(scope),
        _ => *threads,
    }
}

impl Pass for DispatchOps {
    fn name(&self) -> &'static str {
        "dispatch-ops"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        let mut body = std::mem::take(&mut k.body);
        let cta = Threads::Cta(k.sig.threads);
        visit_mut_with(&mut body, &cta, &enter, &mut |s, t| {
            dispatch(k, s, *t, &mut errs)
        });
        k.body = body;
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
