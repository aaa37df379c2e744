//! dispatch-ops — picks the hardware path of every copy and mma.
//!
//! Phase: Tile. Preconditions: scopes verified. Postconditions: every `Op::Copy` and
//! `Op::Mma` has `variant: Some(v)`, a typed variant whose entry of `dispatch::COPY` /
//! `dispatch::MMA` has a predicate that holds; a forced variant that does not apply, or an op no variant fits, is
//! an error at the op listing every candidate and why it refused.

use super::Pass;
use crate::diag::{Diagnostic, Diagnostics};
use crate::dispatch::{CopyVariant, Cx, DispatchError, Reject, select};
use crate::ir::{Kernel, Major, Op, Space, Span, Stmt, StmtKind};
use crate::passes::walk::visit_mut_with;
use crate::valid::scope::{ScopeSet, Threads};

/// The pass.
pub struct DispatchOps;

/// Chooses the variant of one copy or mma (any other statement is left alone).
fn dispatch(k: &Kernel, s: &mut Stmt, threads: Threads, errs: &mut Diagnostics) {
    let StmtKind::Op(op) = &mut s.kind else {
        return;
    };
    // Chosen with the op borrowed whole (the predicates read it), then stored.
    let cx = Cx { k, op, threads };
    let chosen = match &*op {
        Op::Copy {
            variant, atomic, ..
        } => select_copy(&cx, *variant, atomic.is_some()).map(|v| (Some(v), None)),
        Op::Mma { variant, .. } => select(&cx, *variant).map(|v| (None, Some(v))),
        _ => return,
    };
    match (chosen, op) {
        (Ok((Some(v), _)), Op::Copy { variant, .. }) => *variant = Some(v),
        (Ok((_, Some(v))), Op::Mma { variant, .. }) => *variant = Some(v),
        (Err(e), _) => {
            let notes = declaration_notes(k, &e);
            let diag = notes
                .into_iter()
                .fold(Diagnostic::new(s.span, e), |d, (span, note)| {
                    d.with_note(span, note)
                });
            errs.push(diag)
        }
        _ => {}
    }
}

/// A copy's variant: an atomic copy (`atomic: Some`) only by an atomic variant, a plain one
/// never by one (the dispatcher does not choose those; a forced one is refused here).
fn select_copy(
    cx: &Cx,
    forced: Option<CopyVariant>,
    atomic: bool,
) -> Result<CopyVariant, DispatchError> {
    let refuse = |v: CopyVariant, expected| DispatchError {
        op: "copy",
        target: cx.k.target(),
        rejections: vec![(v.name(), Reject::WrongOp { expected })],
    };
    match forced {
        Some(v) if v.atomic() != atomic => Err(refuse(
            v,
            if atomic {
                "an atomic copy: it stores, and this copy reduces (`atomic …`)"
            } else {
                "a plain copy: it reduces atomically, and this copy stores"
            },
        )),
        None if atomic => {
            let mut rejections = Vec::new();
            for v in [CopyVariant::RegAtomic, CopyVariant::TmaReduce] {
                match select(cx, Some(v)) {
                    Ok(v) => return Ok(v),
                    Err(e) => rejections.extend(e.rejections),
                }
            }
            Err(DispatchError {
                op: "copy",
                target: cx.k.target(),
                rejections,
            })
        }
        _ => select(cx, forced),
    }
}

/// A note at the declaration of each buffer the candidates refused for its declared
/// properties (once per buffer, in the order first named): the op's error is at the use, the
/// cause may be the declaration (a 64-byte swizzle where the consumer reads 128).
fn declaration_notes(k: &Kernel, e: &DispatchError) -> Vec<(Span, String)> {
    let mut named: Vec<&str> = Vec::new();
    for (_, why) in &e.rejections {
        if let Some(b) = why.buffer()
            && !named.contains(&b)
        {
            named.push(b);
        }
    }
    named
        .into_iter()
        .filter_map(|name| k.buffers.iter().map(|(_, b)| b).find(|b| b.name == name))
        .filter(|b| b.span != Span::NONE)
        .map(|b| {
            let l = &b.layout;
            let swizzle = match b.space {
                Space::Shared => format!(", swizzle {}", l.swizzle.name()),
                Space::Tmem | Space::Reg => String::new(),
            };
            let major = match l.major {
                Major::K => "",
                Major::MN => ", major mn",
            };
            let note = format!(
                "`{}` is declared here: {} {} {:?}{swizzle}{major}",
                b.name,
                b.space.name(),
                b.elem.name(),
                l.shape,
            );
            (b.span, note)
        })
        .collect()
}

/// The thread set of a nested block: narrowed by a scope (the intersection with the
/// enclosing ones; an empty one, which `verify-scopes` rejects, keeps the scope's own set),
/// inherited otherwise.
fn enter(set: &ScopeSet, s: &Stmt) -> ScopeSet {
    match &s.kind {
        StmtKind::Scope { scope, .. } => set.enter(scope).unwrap_or(ScopeSet {
            threads: set.threads.enter(scope),
            ..*set
        }),
        _ => *set,
    }
}

impl Pass for DispatchOps {
    fn name(&self) -> &'static str {
        "dispatch-ops"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        let mut body = std::mem::take(&mut k.body);
        let cta = ScopeSet::cta(k.sig.threads);
        visit_mut_with(&mut body, &cta, &enter, &mut |s, t| {
            dispatch(k, s, t.threads, &mut errs)
        });
        k.body = body;
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
