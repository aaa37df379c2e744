//! The one statement visitor shared by the passes and the verifier. No pass recurses over
//! statements by hand; each picks one of these forms:
//!
//! - [`visit`]: read-only, pre-order, with the chain of enclosing statements;
//! - [`visit_mut_with`]: mutable, pre-order, with a context that each nested block inherits
//!   from its enclosing statement (the thread set of the enclosing scopes, say);
//! - [`Rewriter`] / [`rewrite_body_with`]: a rewrite with hooks before and after each block
//!   and each statement, whose statement hook may replace a statement by any number of
//!   statements and whose block hook sees a whole block (to merge siblings);
//! - [`rewrite_body`]: the common rewrite of one statement at a time, children first.
//!
//! Order is part of the contract: statements are visited in program order, a statement's
//! nested blocks (`then` before `else`) right after its `enter_stmt` and before its
//! `exit_stmt`, so a pass that makes variables makes them in the same order as a hand-written
//! recursion would (the PTX register names depend on it). A rewrite collects the diagnostics
//! of every statement instead of stopping at the first; a statement whose nested blocks
//! failed is dropped.

use crate::diag::Diagnostics;
use crate::ir::{Block, Kernel, Stmt, StmtKind};

/// A statement rewriter: gets the kernel (for new variables) and one statement whose nested
/// blocks were already rewritten; returns its replacement.
pub type Rewrite<'a> = dyn FnMut(&mut Kernel, Stmt) -> Result<Vec<Stmt>, Diagnostics> + 'a;

/// A rewrite of a kernel's statements with hooks around every block and statement. Every
/// hook has a default that keeps the IR as it is.
pub trait Rewriter {
    /// Before the statements of `block` are rewritten (sees the block as it came in).
    fn enter_block(&mut self, _k: &mut Kernel, _block: &Block) -> Result<(), Diagnostics> {
        Ok(())
    }
    /// Whether to rewrite the nested blocks of `s` (and call the hooks inside them).
    fn descend(&mut self, _k: &Kernel, _s: &Stmt) -> bool {
        true
    }
    /// Before the nested blocks of `s`: may rewrite `s`'s own fields (a condition, loop
    /// bounds) and returns statements to put before it.
    fn enter_stmt(&mut self, _k: &mut Kernel, _s: &mut Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        Ok(Vec::new())
    }
    /// After the nested blocks of `s` were rewritten: the statements that replace it.
    fn exit_stmt(&mut self, _k: &mut Kernel, s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        Ok(vec![s])
    }
    /// After every statement of a block was rewritten: the block's replacement.
    fn exit_block(&mut self, _k: &mut Kernel, block: Block) -> Result<Block, Diagnostics> {
        Ok(block)
    }
}

/// The closure form of [`Rewriter`]: only `exit_stmt`.
struct ExitStmt<'f, 'a>(&'f mut Rewrite<'a>);

impl Rewriter for ExitStmt<'_, '_> {
    fn exit_stmt(&mut self, k: &mut Kernel, s: Stmt) -> Result<Vec<Stmt>, Diagnostics> {
        (self.0)(k, s)
    }
}

/// Rewrites the kernel body one statement at a time, nested blocks first.
pub fn rewrite_body(k: &mut Kernel, f: &mut Rewrite<'_>) -> Result<(), Diagnostics> {
    rewrite_body_with(k, &mut ExitStmt(f))
}

/// Rewrites the kernel body with `r`'s hooks.
pub fn rewrite_body_with(k: &mut Kernel, r: &mut dyn Rewriter) -> Result<(), Diagnostics> {
    let body = std::mem::take(&mut k.body);
    k.body = rewrite_block_with(k, body, r)?;
    Ok(())
}

/// Rewrites one block with `r`'s hooks.
pub fn rewrite_block_with(
    k: &mut Kernel,
    block: Block,
    r: &mut dyn Rewriter,
) -> Result<Block, Diagnostics> {
    let mut errors = Vec::new();
    if let Err(e) = r.enter_block(k, &block) {
        errors.extend(e);
    }
    let mut out = Vec::with_capacity(block.len());
    for mut stmt in block {
        match r.enter_stmt(k, &mut stmt) {
            Ok(before) => out.extend(before),
            Err(e) => {
                errors.extend(e);
                continue;
            }
        }
        if r.descend(k, &stmt)
            && let Err(e) = rewrite_children(k, &mut stmt, r)
        {
            errors.extend(e);
            continue;
        }
        match r.exit_stmt(k, stmt) {
            Ok(v) => out.extend(v),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    r.exit_block(k, out)
}

fn rewrite_children(
    k: &mut Kernel,
    stmt: &mut Stmt,
    r: &mut dyn Rewriter,
) -> Result<(), Diagnostics> {
    match &mut stmt.kind {
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => {
            *then_body = rewrite_block_with(k, std::mem::take(then_body), r)?;
            *else_body = rewrite_block_with(k, std::mem::take(else_body), r)?;
        }
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => {
            *body = rewrite_block_with(k, std::mem::take(body), r)?;
        }
        _ => {}
    }
    Ok(())
}

/// The nested blocks of a statement, in order (`then` before `else`).
pub fn children(s: &Stmt) -> impl Iterator<Item = &Block> {
    let (a, b) = match &s.kind {
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => (Some(then_body), Some(else_body)),
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => {
            (Some(body), None)
        }
        _ => (None, None),
    };
    a.into_iter().chain(b)
}

/// The nested blocks of a statement, mutably, in order (`then` before `else`).
pub fn children_mut(s: &mut Stmt) -> impl Iterator<Item = &mut Block> {
    let (a, b) = match &mut s.kind {
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => (Some(then_body), Some(else_body)),
        StmtKind::For { body, .. } | StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => {
            (Some(body), None)
        }
        _ => (None, None),
    };
    a.into_iter().chain(b)
}

/// Visits every statement (pre-order) with the chain of enclosing statements, outermost first.
pub fn visit<'a>(block: &'a Block, f: &mut dyn FnMut(&'a Stmt, &[&'a Stmt])) {
    fn go<'a>(
        block: &'a Block,
        stack: &mut Vec<&'a Stmt>,
        f: &mut dyn FnMut(&'a Stmt, &[&'a Stmt]),
    ) {
        for s in block {
            f(s, stack);
            stack.push(s);
            for b in children(s) {
                go(b, stack, f);
            }
            stack.pop();
        }
    }
    go(block, &mut Vec::new(), f)
}

/// Visits every statement mutably (pre-order: a statement before its nested blocks). `cx` is
/// the context of `block`'s statements; the nested blocks of a statement `s` get
/// `enter(cx, s)`.
pub fn visit_mut_with<C>(
    block: &mut Block,
    cx: &C,
    enter: &dyn Fn(&C, &Stmt) -> C,
    f: &mut dyn FnMut(&mut Stmt, &C),
) {
    for s in block.iter_mut() {
        f(s, cx);
        let inner = enter(cx, s);
        for b in children_mut(s) {
            visit_mut_with(b, &inner, enter, f);
        }
    }
}
