//! check-grid-dep — no global access of a dependent tensor before `grid::dependency_wait()`.
//!
//! A kernel whose body waits (`Op::GridDepWait`, `griddepcontrol.wait`) is launched as a
//! programmatic dependent: it may start while the kernel before it on the stream still runs,
//! and only the wait tells the thread that kernel has completed and its writes are visible
//! (PTX ISA §9.7.13, `griddepcontrol`). So every global access of a tensor parameter that can
//! execute before the wait — a load (`ld.global`, a TMA load), a gather, a scalar load, a
//! store (`st.global`, a TMA store) or an atomic reduction — races with that kernel, unless
//! the user declared the tensor `#[independent]`: neither written nor read by the kernels
//! before this one on the stream (weights, a table, the caller's inputs), so it may be read
//! (or written) in the prologue that overlaps the earlier kernel's tail. A kernel that never
//! waits is launched as always and is not checked.
//!
//! Phase: Tile, on the front end's output (the user's ops and scopes), before the pipeline:
//! the `#[independent]` declarations are the source's, not the IR's, so the macro runs this
//! check on each lowered config with the names it read (`CheckGridDep::independent`). Reads
//! the kernel; changes nothing.
//!
//! **The rule, per thread, on structured control flow.** A statement is *after the wait*
//! when every path from the kernel's entry to it, in the threads that run it, passes a
//! `grid::dependency_wait()`:
//! - in a block, after a wait statement, or after an `if` both of whose branches are after a
//!   wait at their end;
//! - after a `for` only when the loop runs at least once (constant bounds) and its body ends
//!   after a wait; a loop whose trip count is a run-time value may run zero times;
//! - after a spin `loop` (it runs at least once) whose body ends after a wait;
//! - a wait inside a `#[scope(..)]` covers the rest of that scope only: the threads outside
//!   the scope never waited (`griddepcontrol.wait` blocks the thread that executes it).
//!
//! Inside a loop the body is judged in the state it is entered with, which is its first
//! iteration's (waiting is never undone, so later iterations are after at least as much).
//! An access that is not after the wait is an error at the access, whether no path or only
//! some path (the branch that skips the wait) reaches it without waiting. The rule does not
//! look at conditions: a wait under `if cta.x == 0` covers no access outside that `if`.

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Block, CopyVariant, Expr, Kernel, Op, Scope, Span, StmtKind, TExpr, TileRef};

/// The check, with the tensors the user declared independent of the kernels before.
pub struct CheckGridDep<'a> {
    /// Tensor parameters declared `#[independent]`: never checked.
    pub independent: &'a [String],
}

/// A global access of a dependent tensor that may run before `grid::dependency_wait()`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GridDepError {
    /// A read (load, TMA load, gather, scalar load) before the wait.
    #[error(
        "read before the grid dependency wait: this {what} reads `{tensor}` and may execute before `grid::dependency_wait()` {path}. A kernel that waits is launched as a programmatic dependent: it may start while the kernel before it on the stream is still running, and may read `{tensor}` before that kernel has written it. Move the {what} after `grid::dependency_wait()`; or, if no kernel before this one on the stream writes `{tensor}` (weights, a table the host uploaded), declare it independent: `#[independent] {tensor}: Tensor<..>`"
    )]
    ReadBeforeWait {
        /// The tensor parameter.
        tensor: String,
        /// The access, in words (`load`, `TMA load`, `gather`).
        what: &'static str,
        /// On which paths.
        path: &'static str,
    },
    /// A write (store, TMA store, atomic reduction) before the wait.
    #[error(
        "write before the grid dependency wait: this {what} writes `{tensor}` and may execute before `grid::dependency_wait()` {path}. A kernel that waits is launched as a programmatic dependent: it may start while the kernel before it on the stream is still running, and may overwrite `{tensor}` while that kernel still reads or writes it. Move the {what} after `grid::dependency_wait()`; or, if no kernel before this one on the stream reads or writes `{tensor}`, declare it independent: `#[independent] {tensor}: Tensor<..>`"
    )]
    WriteBeforeWait {
        /// The tensor parameter.
        tensor: String,
        /// The access, in words (`store`, `TMA store`, `atomic reduction`).
        what: &'static str,
        /// On which paths.
        path: &'static str,
    },
}

/// Whether the wait has run: on every path to a point (`must`), on some path (`may`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Waited {
    must: bool,
    may: bool,
}

impl Waited {
    const NOT: Waited = Waited {
        must: false,
        may: false,
    };
    const YES: Waited = Waited {
        must: true,
        may: true,
    };
    /// Either of two paths.
    fn join(self, o: Waited) -> Waited {
        Waited {
            must: self.must && o.must,
            may: self.may || o.may,
        }
    }
}

/// One global access of a tensor: which tensor, a read or a write, in words.
struct Access<'k> {
    tensor: &'k str,
    write: bool,
    what: &'static str,
}

/// The global accesses of one op.
fn accesses(op: &Op) -> Vec<Access<'_>> {
    let mut out = Vec::new();
    match op {
        Op::Copy {
            dst,
            src,
            atomic,
            variant,
            bar,
            ..
        } => {
            // `tma::load`/`tma::store`/`tma::reduce_add` force their variant; a copy that
            // signals a barrier is a TMA load whatever dispatch picks.
            let tma = matches!(
                variant,
                Some(CopyVariant::TmaLoad | CopyVariant::TmaStore | CopyVariant::TmaReduce)
            );
            if let TileRef::Global { tensor, .. } = src {
                let what = if tma || bar.is_some() {
                    "TMA load"
                } else {
                    "load"
                };
                out.push(Access {
                    tensor,
                    write: false,
                    what,
                });
            }
            if let TileRef::Global { tensor, .. } = dst {
                let what = match (atomic.is_some(), tma) {
                    (true, true) => "TMA reduction",
                    (true, false) => "atomic reduction",
                    (false, true) => "TMA store",
                    (false, false) => "store",
                };
                out.push(Access {
                    tensor,
                    write: true,
                    what,
                });
            }
        }
        Op::LoadScalar { tensor, .. } => out.push(Access {
            tensor,
            write: false,
            what: "scalar load",
        }),
        Op::Compute { value, .. } => gathers(value, &mut out),
        Op::Reduce { value: Some(v), .. } => gathers(v, &mut out),
        _ => {}
    }
    out
}

/// The gathers of a tile expression.
fn gathers<'k>(e: &'k TExpr, out: &mut Vec<Access<'k>>) {
    match e {
        TExpr::Gather { tensor, index, .. } => {
            out.push(Access {
                tensor,
                write: false,
                what: "gather",
            });
            for i in index {
                gathers(i, out);
            }
        }
        TExpr::Tile(_) | TExpr::F32(_) | TExpr::Arg(_) | TExpr::Int(_) | TExpr::Index(_) => {}
        TExpr::Un(_, a) => gathers(a, out),
        TExpr::Bin(_, a, b) | TExpr::Cmp(_, a, b) => {
            gathers(a, out);
            gathers(b, out);
        }
        TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => {
            gathers(a, out);
            gathers(b, out);
            gathers(c, out);
        }
    }
}

/// Whether a block contains a wait anywhere.
fn has_wait(b: &Block) -> bool {
    let mut found = false;
    super::walk::visit(b, &mut |s, _| {
        found |= matches!(s.kind, StmtKind::Op(Op::GridDepWait));
    });
    found
}

/// The first wait of a block, in program order.
fn first_wait(b: &Block) -> Option<Span> {
    let mut at = None;
    super::walk::visit(b, &mut |s, _| {
        if at.is_none() && matches!(s.kind, StmtKind::Op(Op::GridDepWait)) {
            at = Some(s.span);
        }
    });
    at
}

/// Whether a `for` from `start` to `end` surely runs at least once (constant bounds).
fn runs_once(start: &Expr, end: &Expr) -> bool {
    matches!((start, end), (Expr::Imm(a, _), Expr::Imm(b, _)) if a < b)
}

impl CheckGridDep<'_> {
    /// Checks `k`: every error, at its access.
    pub fn check(&self, k: &Kernel) -> Result<(), Diagnostics> {
        let Some(wait) = first_wait(&k.body) else {
            return Ok(());
        };
        let mut errs = Vec::new();
        self.block(&k.body, Waited::NOT, wait, &mut errs);
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }

    /// Walks `b` entered in state `w`; returns the state at its end.
    fn block(&self, b: &Block, mut w: Waited, wait: Span, errs: &mut Diagnostics) -> Waited {
        for s in b {
            match &s.kind {
                StmtKind::Op(Op::GridDepWait) => w = Waited::YES,
                StmtKind::Op(op) if !w.must => {
                    // One error per statement: its first dependent access.
                    let first = accesses(op)
                        .into_iter()
                        .find(|a| !self.independent.iter().any(|t| t == a.tensor));
                    if let Some(a) = first {
                        let path = if w.may {
                            "on a path that skips it (a branch or a loop that may not run it, or a `#[scope]` these threads are not in)"
                        } else {
                            "(no wait comes before it)"
                        };
                        let kind = if a.write {
                            GridDepError::WriteBeforeWait {
                                tensor: a.tensor.to_string(),
                                what: a.what,
                                path,
                            }
                        } else {
                            GridDepError::ReadBeforeWait {
                                tensor: a.tensor.to_string(),
                                what: a.what,
                                path,
                            }
                        };
                        errs.push(Diagnostic::new(s.span, kind).with_note(
                            wait,
                            "the kernel's `grid::dependency_wait()`: the access must come after it on every path",
                        ));
                    }
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let t = self.block(then_body, w, wait, errs);
                    let e = self.block(else_body, w, wait, errs);
                    w = t.join(e);
                }
                StmtKind::For {
                    start, end, body, ..
                } => {
                    let after = self.block(body, w, wait, errs);
                    w = if runs_once(start, end) {
                        after
                    } else {
                        w.join(after)
                    };
                }
                StmtKind::Loop { body, .. } => w = self.block(body, w, wait, errs),
                StmtKind::Scope { scope, body } => {
                    let after = self.block(body, w, wait, errs);
                    // Only the scope's threads ran its wait; the whole CTA's scope is every
                    // thread.
                    if *scope == Scope::Cta {
                        w = after;
                    } else if has_wait(body) {
                        w.may = true;
                    }
                }
                _ => {}
            }
        }
        w
    }
}
