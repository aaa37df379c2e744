//! `ParseError`: why a PTX text could not be parsed, and where.
//!
//! Every failure of the lexer and the parser is one of these values, never a panic. The
//! position is 1-based: `line` counts `\n`s, `column` counts characters (a tab is one column),
//! both at the first character of the offending token (for an unexpected end of input, the
//! position just past the last character).

/// A parse failure at a position of the PTX text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PTX line {line}, column {column}: {what}")]
pub struct ParseError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What went wrong.
    pub what: ParseErrorKind,
}

/// What went wrong, by kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// A character no PTX token starts with (PTX ISA §4.1, character set).
    #[error("unexpected character {0:?}")]
    UnexpectedChar(char),
    /// A `/*` comment with no `*/` (PTX ISA §4.2).
    #[error("unterminated block comment")]
    UnterminatedComment,
    /// A number that is not a PTX constant, or overflows 64 bits (PTX ISA §4.5).
    #[error("malformed number `{0}`")]
    BadNumber(String),
    /// A token other than the grammar allows here.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the grammar allows, in words.
        expected: &'static str,
        /// The token found, as text (`end of input` at the end).
        found: String,
    },
    /// A `.type` that is not a PTX fundamental type (PTX ISA §5.2.2).
    #[error("unknown type `.{0}`")]
    UnknownType(String),
    /// A directive or construct PTX has but the subset tirx emits does not use.
    #[error("unsupported {0} (outside the PTX subset tirx emits)")]
    Unsupported(String),
    /// A module without a required header directive (PTX ISA §11.1).
    #[error("missing `.{0}` directive")]
    Missing(&'static str),
}

impl ParseError {
    /// An error of kind `what` at `line`:`column`.
    pub fn new(line: u32, column: u32, what: ParseErrorKind) -> ParseError {
        ParseError { line, column, what }
    }
}
