//! The PTX lexer: text to [`Token`]s (PTX ISA §4 "Syntax": §4.1 source format, §4.2 comments,
//! §4.4 identifiers, §4.5 constants).
//!
//! Tokens:
//! - identifiers `[A-Za-z_$%][A-Za-z0-9_$]*` (registers keep their `%`, labels their `$`);
//! - dotted words `.name`, whose characters may include `::` (`.shared::cta`,
//!   `.mbarrier::complete_tx::bytes`) and may start with a digit (`.32x32b`): directives,
//!   types and instruction modifiers alike, the parser tells them apart;
//! - integers (decimal, `0x` hex, `0b` binary, leading-`0` octal, optional `U` suffix),
//!   kept as their 64-bit pattern (§4.5.1: integer constants are 64 bits);
//! - floats: `0f` + 8 hex digits (f32 bits), `0d` + 16 hex digits (f64 bits), and decimal
//!   `1.5`/`2e3` (f64, §4.5.2), the decimal text kept (`.version 8.7` needs it);
//! - punctuation `, ; : ( ) [ ] { } < > + - @ ! |`.
//!
//! Each token records its 1-based line and column and whether whitespace or a comment
//! separates it from the previous token (`joined`): an opcode is an identifier followed by
//! *joined* dotted words, and `%tid.x` is a register followed by a joined `.x`.
//!
//! Invariant: `lex` never panics; it walks `char`s, never byte offsets, and all arithmetic on
//! constants is checked.

use super::error::{ParseError, ParseErrorKind};

/// One token's kind and value.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier: `mov`, `%r12`, `$L_end_0`, `tirx_smem`, `_`.
    Ident(String),
    /// A dotted word without its dot: `version`, `shared::cta`, `32x32b`.
    Dot(String),
    /// An integer constant, as its 64-bit pattern.
    Int(u64),
    /// `0fXXXXXXXX`: the bits of an f32.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the bits of an f64.
    F64(u64),
    /// A decimal float (`8.7`, `1e-3`), as written.
    Decimal(String),
    /// One punctuation character.
    Punct(char),
    /// The end of the input.
    Eof,
}

/// A token with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// Kind and value.
    pub tok: Tok,
    /// 1-based line of its first character.
    pub line: u32,
    /// 1-based column of its first character.
    pub col: u32,
    /// No whitespace or comment between this token and the previous one.
    pub joined: bool,
}

impl Tok {
    /// The token as it reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Dot(s) => format!("`.{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::F32(b) => format!("`0f{b:08X}`"),
            Tok::F64(b) => format!("`0d{b:016X}`"),
            Tok::Decimal(s) => format!("`{s}`"),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::Eof => "end of input".to_owned(),
        }
    }
}

/// Splits `src` into tokens, ending with one [`Tok::Eof`].
pub fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
    };
    let mut out = Vec::new();
    loop {
        let spaced = lx.skip_space()?;
        let joined = !spaced && !out.is_empty();
        let (line, col) = (lx.line, lx.col);
        let tok = match lx.peek(0) {
            None => Tok::Eof,
            Some(c) => lx.token(c)?,
        };
        let end = tok == Tok::Eof;
        out.push(Token {
            tok,
            line,
            col,
            joined,
        });
        if end {
            return Ok(out);
        }
    }
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
}

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%')
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$')
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
        } else {
            self.col = self.col.saturating_add(1);
        }
        Some(c)
    }

    fn error(&self, line: u32, col: u32, what: ParseErrorKind) -> ParseError {
        ParseError::new(line, col, what)
    }

    /// Skips whitespace and comments (§4.2); whether it skipped anything.
    fn skip_space(&mut self) -> Result<bool, ParseError> {
        let start = self.pos;
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let (line, col) = (self.line, self.col);
                    self.bump();
                    self.bump();
                    loop {
                        match (self.peek(0), self.peek(1)) {
                            (Some('*'), Some('/')) => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            (Some(_), _) => {
                                self.bump();
                            }
                            (None, _) => {
                                return Err(self.error(
                                    line,
                                    col,
                                    ParseErrorKind::UnterminatedComment,
                                ));
                            }
                        }
                    }
                }
                _ => return Ok(self.pos != start),
            }
        }
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek(0).filter(|&c| keep(c)) {
            s.push(c);
            self.bump();
        }
        s
    }

    fn token(&mut self, c: char) -> Result<Tok, ParseError> {
        let (line, col) = (self.line, self.col);
        if ident_start(c) {
            self.bump();
            let mut s = String::from(c);
            s.push_str(&self.take_while(ident_char));
            return Ok(Tok::Ident(s));
        }
        if c == '.' {
            self.bump();
            let word = self.take_while(|c| ident_char(c) || c == ':');
            if word.is_empty() {
                return Err(self.error(line, col, ParseErrorKind::UnexpectedChar('.')));
            }
            return Ok(Tok::Dot(word));
        }
        if c.is_ascii_digit() {
            return self.number(line, col);
        }
        if ",;:()[]{}<>+-@!|".contains(c) {
            self.bump();
            return Ok(Tok::Punct(c));
        }
        Err(self.error(line, col, ParseErrorKind::UnexpectedChar(c)))
    }

    /// A numeric constant (§4.5): the whole alphanumeric run, then its reading.
    fn number(&mut self, line: u32, col: u32) -> Result<Tok, ParseError> {
        let mut text = self.take_while(|c| c.is_ascii_alphanumeric());
        // A decimal fraction or exponent: `8.7`, `1.5e-3`, `2e+3`.
        let digits = text.chars().all(|c| c.is_ascii_digit());
        if digits && self.peek(0) == Some('.') && self.peek(1).is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            text.push('.');
            text.push_str(&self.take_while(|c| c.is_ascii_alphanumeric()));
        }
        if (text.ends_with('e') || text.ends_with('E'))
            && matches!(self.peek(0), Some('+' | '-'))
            && self.peek(1).is_some_and(|c| c.is_ascii_digit())
            && text[..text.len() - 1]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.')
        {
            text.push(self.bump().unwrap_or('+'));
            text.push_str(&self.take_while(|c| c.is_ascii_digit()));
        }
        read_number(&text).ok_or_else(|| self.error(line, col, ParseErrorKind::BadNumber(text)))
    }
}

/// Reads one constant's text; `None` if it is not a PTX constant.
fn read_number(text: &str) -> Option<Tok> {
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0f") {
        return (hex.len() == 8)
            .then(|| u32::from_str_radix(hex, 16).ok())
            .flatten()
            .map(Tok::F32);
    }
    if let Some(hex) = lower.strip_prefix("0d") {
        return (hex.len() == 16)
            .then(|| u64::from_str_radix(hex, 16).ok())
            .flatten()
            .map(Tok::F64);
    }
    let body = lower.strip_suffix('u').unwrap_or(&lower);
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = body.strip_prefix("0b") {
        (2, b)
    } else if body.len() > 1 && body.starts_with('0') && body.chars().all(|c| c.is_ascii_digit()) {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)) {
        return u64::from_str_radix(digits, radix).ok().map(Tok::Int);
    }
    // Decimal float: digits with a fraction and/or exponent, no suffix.
    let float = text.contains(['.', 'e', 'E'])
        && text.chars().next().is_some_and(|c| c.is_ascii_digit())
        && text.parse::<f64>().is_ok_and(f64::is_finite);
    float.then(|| Tok::Decimal(text.to_owned()))
}
