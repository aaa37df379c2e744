//! Diagnostics: every error the verifier and the passes report carries the span of the
//! statement or declaration it is about, so the macro can put it on the user's token.

use crate::ir::Span;
use std::fmt;

/// One error at one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where (`Span::NONE` when the compiler made the node).
    pub span: Span,
    /// What is wrong and what would be right.
    pub message: String,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// Result of a pass or check: several diagnostics at once when there are several.
pub type Diagnostics = Vec<Diagnostic>;
