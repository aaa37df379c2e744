//! The lexer and token cursor shared by the kernel parser (`parse.rs`) and the signature parser
//! (`abi_text.rs`), plus the name-quoting rule the printers use.
//!
//! Invariants:
//! - The text form is line-oriented: the lexer keeps newlines as `Tok::Newline` (runs of blank
//!   lines and `//` comments collapse into one), so every item and statement ends at a line end.
//! - Whitespace is otherwise insignificant; indentation is never read.
//! - A name prints bare exactly when [`is_plain_name`] holds, which is exactly when the lexer
//!   reads it back as one `Tok::Ident`; every other name prints as a quoted string
//!   ([`write_name`]), so any `String` round-trips.

use std::fmt;

use super::ParseError;
use crate::ir::Span;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_.]*`, where `::` may also join segments (`shared::cta`).
    Ident(String),
    /// A double-quoted string, escapes resolved.
    Str(String),
    /// An unsigned decimal integer (a leading `-` is a separate token).
    Int(u64),
    /// A PTX float immediate `0f` + 8 hex digits: its bits.
    F32(u32),
    /// `%<index>`: a variable.
    Var(u32),
    /// Punctuation.
    Punct(&'static str),
    /// End of a line.
    Newline,
    /// End of the input.
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "string {}", Quoted(s)),
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::F32(b) => write!(f, "`0f{b:08X}`"),
            Tok::Var(i) => write!(f, "`%{i}`"),
            Tok::Punct(p) => write!(f, "`{p}`"),
            Tok::Newline => f.write_str("end of line"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

/// Punctuation, longest first so that greedy matching picks `<=` over `<`.
const PUNCTS: [&str; 31] = [
    "..=", "->", "<-", "==", "!=", "<=", ">=", "<<", ">>", "&&", "@", ":", ",", "(", ")", "[", "]",
    "{", "}", "=", "!", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^",
];

/// A token with its 1-based position.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
}

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Whether `s` lexes back as exactly one identifier token (and so may print unquoted).
pub(crate) fn is_plain_name(s: &str) -> bool {
    let b: Vec<char> = s.chars().collect();
    if b.is_empty() || !ident_start(b[0]) {
        return false;
    }
    let mut i = 1;
    while i < b.len() {
        if ident_continue(b[i]) {
            i += 1;
        } else if b[i] == ':'
            && b.get(i + 1) == Some(&':')
            && b.get(i + 2).is_some_and(|&c| ident_continue(c))
        {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

/// A string printed in double quotes with `\\`, `\"`, `\n`, `\t`, `\r` and `\u{…}` escapes.
pub(crate) struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '\\' => f.write_str("\\\\")?,
                '"' => f.write_str("\\\"")?,
                '\n' => f.write_str("\\n")?,
                '\t' => f.write_str("\\t")?,
                '\r' => f.write_str("\\r")?,
                c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// A name: bare when [`is_plain_name`], else quoted.
pub(crate) struct Name<'a>(pub &'a str);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_plain_name(self.0) {
            f.write_str(self.0)
        } else {
            Quoted(self.0).fmt(f)
        }
    }
}

/// Splits `text` into tokens.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut line_start) = (0usize, 1usize, 0usize);
    let mut out: Vec<Token> = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        let col = i - line_start + 1;
        let err = |message: String| ParseError { line, col, message };
        let push = |out: &mut Vec<Token>, tok: Tok| out.push(Token { tok, line, col });
        if c == '\n' {
            if !matches!(
                out.last(),
                None | Some(Token {
                    tok: Tok::Newline,
                    ..
                })
            ) {
                push(&mut out, Tok::Newline);
            }
            i += 1;
            line += 1;
            line_start = i;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if ident_start(c) {
            let start = i;
            while i < chars.len() {
                if ident_continue(chars[i]) {
                    i += 1;
                } else if chars[i] == ':'
                    && chars.get(i + 1) == Some(&':')
                    && chars.get(i + 2).is_some_and(|&c| ident_continue(c))
                {
                    i += 2;
                } else {
                    break;
                }
            }
            push(&mut out, Tok::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let (tok, len) = lex_number(&chars[i..]).map_err(err)?;
            push(&mut out, tok);
            i += len;
        } else if c == '%' && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            let (tok, len) = lex_number(&chars[i + 1..]).map_err(err)?;
            let Tok::Int(v) = tok else {
                return Err(err("expected a variable index after `%`".into()));
            };
            let v =
                u32::try_from(v).map_err(|_| err(format!("variable index %{v} is too large")))?;
            push(&mut out, Tok::Var(v));
            i += 1 + len;
        } else if c == '"' {
            let (s, len) = lex_string(&chars[i..]).map_err(err)?;
            push(&mut out, Tok::Str(s));
            i += len;
        } else if let Some(p) = PUNCTS.iter().find(|p| {
            p.chars()
                .enumerate()
                .all(|(k, pc)| chars.get(i + k) == Some(&pc))
        }) {
            push(&mut out, Tok::Punct(p));
            i += p.len();
        } else {
            return Err(err(format!("unexpected character `{c}`")));
        }
    }
    let col = i - line_start + 1;
    out.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(out)
}

/// A decimal integer, or `0f` + 8 hex digits; returns the token and its length in chars.
fn lex_number(s: &[char]) -> Result<(Tok, usize), String> {
    if s.len() >= 10 && s[0] == '0' && s[1] == 'f' && s[2..10].iter().all(|c| c.is_ascii_hexdigit())
    {
        let hex: String = s[2..10].iter().collect();
        let bits = u32::from_str_radix(&hex, 16).expect("8 hex digits fit in u32");
        return Ok((Tok::F32(bits), 10));
    }
    let len = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let digits: String = s[..len].iter().collect();
    if s.get(len).is_some_and(|&c| ident_start(c)) {
        return Err(format!("malformed number `{digits}{}`", s[len]));
    }
    let v = digits
        .parse::<u64>()
        .map_err(|_| format!("integer `{digits}` is too large"))?;
    Ok((Tok::Int(v), len))
}

/// A quoted string starting at `s[0] == '"'`; returns its value and its length in chars.
fn lex_string(s: &[char]) -> Result<(String, usize), String> {
    let mut out = String::new();
    let mut i = 1;
    loop {
        match s.get(i) {
            None | Some('\n') => return Err("unterminated string".into()),
            Some('"') => return Ok((out, i + 1)),
            Some('\\') => {
                let esc = s.get(i + 1).copied();
                i += 2;
                match esc {
                    Some('\\') => out.push('\\'),
                    Some('"') => out.push('"'),
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some('0') => out.push('\0'),
                    Some('u') if s.get(i) == Some(&'{') => {
                        let len = s[i + 1..]
                            .iter()
                            .take_while(|&&c| c != '}' && c != '"')
                            .count();
                        let hex: String = s[i + 1..i + 1 + len].iter().collect();
                        let ch = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                        let ch = ch.ok_or_else(|| format!("invalid escape `\\u{{{hex}}}`"))?;
                        if s.get(i + 1 + len) != Some(&'}') {
                            return Err("unterminated `\\u{…}` escape".into());
                        }
                        out.push(ch);
                        i += len + 2;
                    }
                    Some(c) => return Err(format!("unknown escape `\\{c}` in string")),
                    None => return Err("unterminated string".into()),
                }
            }
            Some(&c) => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// A cursor over tokens with the helpers both parsers use.
pub(crate) struct Cursor {
    toks: Vec<Token>,
    pos: usize,
}

impl Cursor {
    /// Lexes `text`.
    pub fn new(text: &str) -> Result<Cursor, ParseError> {
        Ok(Cursor {
            toks: lex(text)?,
            pos: 0,
        })
    }
    /// Current position (for backtracking).
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Goes back to a position from [`Cursor::pos`].
    pub fn reset(&mut self, pos: usize) {
        self.pos = pos;
    }
    /// The token `n` ahead of the current one (`Eof` past the end).
    pub fn peek_at(&self, n: usize) -> &Tok {
        self.toks.get(self.pos + n).map_or(&Tok::Eof, |t| &t.tok)
    }
    /// The current token.
    pub fn peek(&self) -> &Tok {
        self.peek_at(0)
    }
    /// Takes the current token (never moves past `Eof`).
    pub fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    /// An error at the current token.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        let t = &self.toks[self.pos.min(self.toks.len() - 1)];
        ParseError {
            line: t.line,
            col: t.col,
            message: message.into(),
        }
    }
    /// "expected X, found Y" at the current token.
    pub fn expected(&self, what: &str) -> ParseError {
        self.error(format!("expected {what}, found {}", self.peek()))
    }
    /// Whether the current token is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    /// Whether the current token is the keyword `k`.
    pub fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == k)
    }
    /// Takes the punctuation `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> bool {
        let hit = self.is_punct(p);
        if hit {
            self.bump();
        }
        hit
    }
    /// Takes the keyword `k` if it is next.
    pub fn eat_kw(&mut self, k: &str) -> bool {
        let hit = self.is_kw(k);
        if hit {
            self.bump();
        }
        hit
    }
    /// Requires the punctuation `p`; `ctx` completes "expected `p` …".
    pub fn expect_punct(&mut self, p: &str, ctx: &str) -> Result<(), ParseError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{p}` {ctx}")))
        }
    }
    /// Requires the keyword `k`; `ctx` completes "expected `k` …".
    pub fn expect_kw(&mut self, k: &str, ctx: &str) -> Result<(), ParseError> {
        if self.eat_kw(k) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{k}` {ctx}")))
        }
    }
    /// An identifier (keywords included).
    pub fn expect_ident(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Tok::Ident(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }
    /// A name: an identifier or a quoted string.
    pub fn expect_name(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Tok::Ident(s) | Tok::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }
    /// A quoted string.
    pub fn expect_str(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Tok::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }
    /// An unsigned integer.
    pub fn expect_u64(&mut self, what: &str) -> Result<u64, ParseError> {
        match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(v)
            }
            _ => Err(self.expected(what)),
        }
    }
    /// An unsigned integer that fits `u32`.
    pub fn expect_u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let at = self.pos;
        let v = self.expect_u64(what)?;
        u32::try_from(v).map_err(|_| {
            self.reset(at);
            self.error(format!("{what} {v} does not fit in u32"))
        })
    }
    /// A signed integer: an optional `-` then digits.
    pub fn expect_i64(&mut self, what: &str) -> Result<i64, ParseError> {
        let neg = self.eat_punct("-");
        let at = self.pos;
        let v = self.expect_u64(what)? as i128;
        let v = if neg { -v } else { v };
        i64::try_from(v).map_err(|_| {
            self.reset(at);
            self.error(format!("{what} {v} does not fit in i64"))
        })
    }
    /// Whether the current token is a `!<id>` span suffix (followed by a line end or `{`).
    pub fn at_span(&self) -> bool {
        self.is_punct("!")
            && matches!(self.peek_at(1), Tok::Int(_))
            && matches!(self.peek_at(2), Tok::Newline | Tok::Eof | Tok::Punct("{"))
    }
    /// Takes an optional `!<id>` span suffix; `Span::NONE` when absent.
    pub fn opt_span(&mut self) -> Result<Span, ParseError> {
        if !self.at_span() {
            return Ok(Span::NONE);
        }
        self.bump();
        Ok(Span(self.expect_u32("a span id")?))
    }
    /// Whether the current token ends a statement (line end, end of input or a span suffix).
    pub fn at_line_end(&self) -> bool {
        matches!(self.peek(), Tok::Newline | Tok::Eof) || self.at_span()
    }
    /// Requires the end of a line (or of the input).
    pub fn expect_eol(&mut self, ctx: &str) -> Result<(), ParseError> {
        match self.peek() {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => Err(self.expected(&format!("end of line {ctx}"))),
        }
    }
    /// Skips line ends.
    pub fn skip_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.bump();
        }
    }
}
