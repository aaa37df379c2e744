//! Block walkers shared by the passes: rewrite every statement of a kernel (children first),
//! collecting diagnostics from all statements instead of stopping at the first.

use crate::diag::Diagnostics;
use crate::ir::{Block, Kernel, Stmt, StmtKind};

/// A statement rewriter: gets the kernel (for new variables) and one statement whose nested
/// blocks were already rewritten; returns its replacement.
pub type Rewrite<'a> = dyn FnMut(&mut Kernel, Stmt) -> Result<Vec<Stmt>, Diagnostics> + 'a;

/// Rewrites the kernel body.
pub fn rewrite_body(k: &mut Kernel, f: &mut Rewrite<'_>) -> Result<(), Diagnostics> {
    let body = std::mem::take(&mut k.body);
    let result = rewrite_block(k, body, f);
    match result {
        Ok(b) => {
            k.body = b;
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Rewrites one block.
pub fn rewrite_block(
    k: &mut Kernel,
    block: Block,
    f: &mut Rewrite<'_>,
) -> Result<Block, Diagnostics> {
    let mut out = Vec::with_capacity(block.len());
    let mut errors = Vec::new();
    for stmt in block {
        let stmt = match rewrite_children(k, stmt, f) {
            Ok(s) => s,
            Err(e) => {
                errors.extend(e);
                continue;
            }
        };
        match f(k, stmt) {
            Ok(v) => out.extend(v),
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn rewrite_children(
    k: &mut Kernel,
    mut stmt: Stmt,
    f: &mut Rewrite<'_>,
) -> Result<Stmt, Diagnostics> {
    match &mut stmt.kind {
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => {
            *then_body = rewrite_block(k, std::mem::take(then_body), f)?;
            *else_body = rewrite_block(k, std::mem::take(else_body), f)?;
        }
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => {
            *body = rewrite_block(k, std::mem::take(body), f)?;
        }
        _ => {}
    }
    Ok(stmt)
}

/// Visits every statement (pre-order) with the chain of enclosing statements' kinds.
pub fn visit<'a>(block: &'a Block, f: &mut dyn FnMut(&'a Stmt, &[&'a Stmt])) {
    fn go<'a>(
        block: &'a Block,
        stack: &mut Vec<&'a Stmt>,
        f: &mut dyn FnMut(&'a Stmt, &[&'a Stmt]),
    ) {
        for s in block {
            f(s, stack);
            stack.push(s);
            match &s.kind {
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    go(then_body, stack, f);
                    go(else_body, stack, f);
                }
                StmtKind::For { body, .. }
                | StmtKind::Loop { body, .. }
                | StmtKind::Scope { body, .. } => go(body, stack, f),
                _ => {}
            }
            stack.pop();
        }
    }
    go(block, &mut Vec::new(), f)
}
