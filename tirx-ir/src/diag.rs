//! Diagnostics: every error the verifier and the passes report carries the span of the
//! statement or declaration it is about, so the macro can put it on the user's token.
//!
//! Each area has its own `thiserror` enum whose variants hold the data of the problem (names,
//! numbers) and whose `Display` is the message the user reads; [`DiagKind`] is the union of
//! the areas. A [`Diagnostic`] is a kind at a span. Its `message` is the kind's text, computed
//! once when it is made, so that callers which only print keep reading a field.

use crate::dispatch::DispatchError;
use crate::ir::Span;
use crate::lower::LowerError;
use crate::passes::{MemoryError, PairError, PassError, ScopeError, SignalError};
use crate::valid::VerifyError;
use std::fmt;

/// What went wrong, by area.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiagKind {
    /// Structural invariants (`valid::verify`).
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// Ops run by the wrong threads, or on a target without them (`verify-scopes`).
    #[error(transparent)]
    Scope(#[from] ScopeError),
    /// The CTA pair's agreements (`verify-pair`).
    #[error(transparent)]
    Pair(#[from] PairError),
    /// TMA completion signals (`derive-signals`).
    #[error(transparent)]
    Signal(#[from] SignalError),
    /// Shared- and tensor-memory layout (`plan-memory`).
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// No variant fits an op (`dispatch-ops`).
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// Lowering a tile op (the variants' `lower`, `lower-*` passes).
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// Asynchronous-protocol rules (`check-protocol`).
    #[error(transparent)]
    Protocol(#[from] crate::passes::ProtocolError),
    /// A dependent tensor accessed before `grid::dependency_wait()` (`check-grid-dep`).
    #[error(transparent)]
    GridDep(#[from] crate::passes::GridDepError),
    /// Register-tile ops that do not fit their tiles or threads (`plan-reg-tiles`).
    #[error(transparent)]
    RegTile(#[from] crate::regtile::RegTileError),
    /// The pipeline itself (the verifier after a pass).
    #[error(transparent)]
    Pass(#[from] PassError),
}

/// One error at one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where (`Span::NONE` when the compiler made the node).
    pub span: Span,
    /// What is wrong, as data.
    pub kind: DiagKind,
    /// What is wrong and what would be right: `kind`'s text.
    pub message: String,
    /// Secondary places the cause lies, each with what to look at there: the declaration of a
    /// buffer whose layout an op refused, shown beside the op.
    pub notes: Vec<(Span, String)>,
}

impl Diagnostic {
    /// An error of `kind` at `span`.
    pub fn new(span: Span, kind: impl Into<DiagKind>) -> Diagnostic {
        let kind = kind.into();
        Diagnostic {
            span,
            message: kind.to_string(),
            kind,
            notes: Vec::new(),
        }
    }

    /// The same error with a note at `span` (a declaration the error is about).
    pub fn with_note(mut self, span: Span, note: impl Into<String>) -> Diagnostic {
        self.notes.push((span, note.into()));
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}

/// Result of a pass or check: several diagnostics at once when there are several.
pub type Diagnostics = Vec<Diagnostic>;
