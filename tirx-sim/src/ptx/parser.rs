//! The PTX parser, module level: header directives, module-scope variables, entries with
//! their parameters, tuning directives, declarations and bodies. Instructions and operands
//! are in `instr.rs`.
//!
//! Grammar (the subset tirx emits, PTX ISA §11 "Directives", §5 "State Spaces, Types, and
//! Variables"):
//!
//! ```text
//! module    := .version D.D  .target name{, name}  [.address_size N]  item*
//! item      := [linkage] (entry | var ;)            linkage := .extern | .visible | .weak
//! entry     := .entry NAME ( [param {, param}] ) tuning* { body }
//! param     := .param [.align N] .type NAME [ '[' N ']' ]
//! tuning    := .maxntid|.reqntid|.reqnctapercluster N{, N} | .maxnreg|.minnctapersm|
//!              .maxclusterrank N | .explicitcluster
//! body      := ( .reg .type reg{, reg} ; | var ; | LABEL : | instr )*   reg := NAME[<N>]
//! var       := .shared|.global|.const [.align N] .type NAME [ '[' [N] ']' ]
//! ```
//!
//! Anything else PTX has (`.func`, nested `{}` scopes, `.loc`, vector variables) is a
//! [`ParseErrorKind::Unsupported`] naming the construct, not a panic and not a silent skip.

use super::ast::{
    ArrayLen, Directive, Entry, Linkage, Module, Param, RegDecl, StateSpace, Statement, Type,
    VarDecl, Version,
};
use super::error::{ParseError, ParseErrorKind};
use super::lexer::{Tok, Token};

/// A cursor over the tokens; the last token is always [`Tok::Eof`].
pub(super) struct Parser {
    toks: Vec<Token>,
    pos: usize,
}

/// The `Eof` a cursor past the end reads (never reached: `lex` ends with one, and `bump`
/// stops there).
const EOF: Token = Token {
    tok: Tok::Eof,
    line: 0,
    col: 0,
    joined: false,
};

impl Parser {
    pub(super) fn new(toks: Vec<Token>) -> Parser {
        Parser { toks, pos: 0 }
    }

    pub(super) fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    pub(super) fn peek_at(&self, ahead: usize) -> &Token {
        self.toks
            .get(self.pos + ahead)
            .or(self.toks.last())
            .unwrap_or(&EOF)
    }

    pub(super) fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    /// An error at the next token.
    pub(super) fn error(&self, what: ParseErrorKind) -> ParseError {
        let t = self.peek();
        ParseError::new(t.line, t.col, what)
    }

    pub(super) fn expected(&self, expected: &'static str) -> ParseError {
        self.error(ParseErrorKind::Expected {
            expected,
            found: self.peek().tok.describe(),
        })
    }

    pub(super) fn eat_punct(&mut self, c: char) -> bool {
        if self.peek().tok == Tok::Punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(super) fn expect_punct(&mut self, c: char, what: &'static str) -> Result<(), ParseError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn eat_dot(&mut self, word: &str) -> bool {
        if matches!(&self.peek().tok, Tok::Dot(w) if w == word) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(super) fn expect_ident(&mut self, what: &'static str) -> Result<String, ParseError> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// A non-negative integer that fits `u32`.
    fn expect_u32(&mut self, what: &'static str) -> Result<u32, ParseError> {
        match self.peek().tok {
            Tok::Int(v) => match u32::try_from(v) {
                Ok(v) => {
                    self.bump();
                    Ok(v)
                }
                Err(_) => Err(self.error(ParseErrorKind::BadNumber(v.to_string()))),
            },
            _ => Err(self.expected(what)),
        }
    }

    /// `.type`.
    fn expect_type(&mut self) -> Result<Type, ParseError> {
        match &self.peek().tok {
            Tok::Dot(w) => match Type::from_name(w) {
                Some(ty) => {
                    self.bump();
                    Ok(ty)
                }
                None => Err(self.error(ParseErrorKind::UnknownType(w.clone()))),
            },
            _ => Err(self.expected("a type (`.b32`, `.u64`, `.pred`, …)")),
        }
    }

    /// The whole module.
    pub(super) fn module(&mut self) -> Result<Module, ParseError> {
        let version = self.version()?;
        let target = self.target()?;
        let address_size = if self.eat_dot("address_size") {
            Some(self.expect_u32("an address size")?)
        } else {
            None
        };
        let mut m = Module {
            version,
            target,
            address_size,
            globals: Vec::new(),
            kernels: Vec::new(),
            checks: Vec::new(),
        };
        while self.peek().tok != Tok::Eof {
            let linkage = self.linkage();
            if matches!(&self.peek().tok, Tok::Dot(w) if w == "entry") {
                let visible = linkage == Linkage::Visible;
                m.kernels.push(self.entry(visible)?);
            } else {
                m.globals.push(self.var_decl(linkage)?);
            }
        }
        Ok(m)
    }

    /// `.version major.minor` (§11.1.1).
    fn version(&mut self) -> Result<Version, ParseError> {
        if !self.eat_dot("version") {
            return Err(self.error(ParseErrorKind::Missing("version")));
        }
        let bad = |p: &Parser| p.expected("a version `major.minor`");
        let Tok::Decimal(text) = &self.peek().tok else {
            return Err(bad(self));
        };
        let parsed = text
            .split_once('.')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
        let Some((major, minor)) = parsed else {
            return Err(bad(self));
        };
        self.bump();
        Ok(Version { major, minor })
    }

    /// `.target name{, name}` (§11.1.2).
    fn target(&mut self) -> Result<Vec<String>, ParseError> {
        if !self.eat_dot("target") {
            return Err(self.error(ParseErrorKind::Missing("target")));
        }
        let mut names = vec![self.expect_ident("a target name")?];
        while self.eat_punct(',') {
            names.push(self.expect_ident("a target name")?);
        }
        Ok(names)
    }

    fn linkage(&mut self) -> Linkage {
        for (word, linkage) in [
            ("extern", Linkage::Extern),
            ("visible", Linkage::Visible),
            ("weak", Linkage::Weak),
        ] {
            if self.eat_dot(word) {
                return linkage;
            }
        }
        Linkage::None
    }

    /// `.entry NAME ( params ) tuning* { body }` (§11.2.1).
    fn entry(&mut self, visible: bool) -> Result<Entry, ParseError> {
        let line = self.bump().line; // `.entry`
        let name = self.expect_ident("the entry's name")?;
        let params = self.params()?;
        let directives = self.directives()?;
        let mut entry = Entry {
            name,
            visible,
            params,
            directives,
            regs: Vec::new(),
            shared: Vec::new(),
            body: Vec::new(),
            line,
        };
        self.expect_punct('{', "`{` opening the entry's body")?;
        self.body(&mut entry)?;
        Ok(entry)
    }

    /// `( [param {, param}] )`.
    fn params(&mut self) -> Result<Vec<Param>, ParseError> {
        self.expect_punct('(', "`(` opening the parameter list")?;
        let mut params = Vec::new();
        if self.eat_punct(')') {
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            if self.eat_punct(')') {
                return Ok(params);
            }
            self.expect_punct(',', "`,` or `)` in the parameter list")?;
        }
    }

    /// `.param [.align N] .type NAME [ '[' N ']' ]` (§5.1.6.1).
    fn param(&mut self) -> Result<Param, ParseError> {
        let line = self.peek().line;
        if !self.eat_dot("param") {
            return Err(self.expected("`.param`"));
        }
        let align = self.align()?;
        let ty = self.expect_type()?;
        let name = self.expect_ident("the parameter's name")?;
        let array = match self.array_len()? {
            ArrayLen::Scalar => None,
            ArrayLen::Sized(n) => Some(n),
            ArrayLen::Unsized => {
                return Err(self.error(ParseErrorKind::Unsupported(
                    "unsized parameter array".to_owned(),
                )));
            }
        };
        Ok(Param {
            name,
            ty,
            align,
            array,
            line,
        })
    }

    fn align(&mut self) -> Result<Option<u32>, ParseError> {
        if self.eat_dot("align") {
            Ok(Some(self.expect_u32("an alignment")?))
        } else {
            Ok(None)
        }
    }

    /// `[N]`, `[]` or nothing.
    fn array_len(&mut self) -> Result<ArrayLen, ParseError> {
        if !self.eat_punct('[') {
            return Ok(ArrayLen::Scalar);
        }
        if self.eat_punct(']') {
            return Ok(ArrayLen::Unsized);
        }
        let n = self.expect_u32("an array length")?;
        self.expect_punct(']', "`]` closing the array length")?;
        Ok(ArrayLen::Sized(n))
    }

    /// Performance-tuning directives (§11.4, §11.5) up to the body's `{`.
    fn directives(&mut self) -> Result<Vec<Directive>, ParseError> {
        let mut out = Vec::new();
        while let Tok::Dot(word) = &self.peek().tok {
            let word = word.clone();
            let d = match word.as_str() {
                "maxntid" | "reqntid" | "reqnctapercluster" => {
                    self.bump();
                    let dims = self.dims()?;
                    match word.as_str() {
                        "maxntid" => Directive::MaxNtid(dims),
                        "reqntid" => Directive::ReqNtid(dims),
                        _ => Directive::ReqNctaPerCluster(dims),
                    }
                }
                "maxnreg" | "minnctapersm" | "maxclusterrank" => {
                    self.bump();
                    let n = self.expect_u32("a count")?;
                    match word.as_str() {
                        "maxnreg" => Directive::MaxNreg(n),
                        "minnctapersm" => Directive::MinNctaPerSm(n),
                        _ => Directive::MaxClusterRank(n),
                    }
                }
                "explicitcluster" => {
                    self.bump();
                    Directive::ExplicitCluster
                }
                _ => {
                    return Err(self.error(ParseErrorKind::Unsupported(format!(
                        "entry directive `.{word}`"
                    ))));
                }
            };
            out.push(d);
        }
        Ok(out)
    }

    /// `x[, y[, z]]`, the missing ones 1.
    fn dims(&mut self) -> Result<[u32; 3], ParseError> {
        let mut dims = [1; 3];
        for (i, d) in dims.iter_mut().enumerate() {
            if i > 0 && !self.eat_punct(',') {
                break;
            }
            *d = self.expect_u32("an extent")?;
        }
        Ok(dims)
    }

    /// The statements up to the closing `}` (§4.3).
    fn body(&mut self, entry: &mut Entry) -> Result<(), ParseError> {
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Punct('}') => {
                    self.bump();
                    return Ok(());
                }
                Tok::Punct('{') => {
                    return Err(
                        self.error(ParseErrorKind::Unsupported("nested `{}` scope".to_owned()))
                    );
                }
                Tok::Dot(w) if w == "reg" => {
                    self.bump();
                    self.reg_decl(entry, t.line)?;
                }
                Tok::Dot(w) if w == "shared" => {
                    let var = self.var_decl(Linkage::None)?;
                    entry.shared.push(var);
                }
                Tok::Dot(w) => {
                    return Err(self.error(ParseErrorKind::Unsupported(format!(
                        "directive `.{w}` in a body"
                    ))));
                }
                Tok::Ident(name) if self.peek_at(1).tok == Tok::Punct(':') => {
                    let name = name.clone();
                    self.bump();
                    self.bump();
                    entry.body.push(Statement::Label { name, line: t.line });
                }
                Tok::Ident(_) | Tok::Punct('@') => {
                    entry.body.push(Statement::Instr(self.instr()?));
                }
                _ => return Err(self.expected("an instruction, a label, `.reg` or `}`")),
            }
        }
    }

    /// After `.reg`: `.type reg{, reg} ;` with `reg := NAME[<N>]` (§5.1.1, §5.4.1).
    fn reg_decl(&mut self, entry: &mut Entry, line: u32) -> Result<(), ParseError> {
        if let Tok::Dot(w) = &self.peek().tok
            && matches!(w.as_str(), "v2" | "v4" | "v8")
        {
            return Err(self.error(ParseErrorKind::Unsupported(format!(
                "vector register `.{w}`"
            ))));
        }
        let ty = self.expect_type()?;
        loop {
            let name = self.expect_ident("a register name")?;
            let count = if self.eat_punct('<') {
                let n = self.expect_u32("a register count")?;
                self.expect_punct('>', "`>` closing the register range")?;
                Some(n)
            } else {
                None
            };
            entry.regs.push(RegDecl {
                ty,
                name,
                count,
                line,
            });
            if self.eat_punct(';') {
                return Ok(());
            }
            self.expect_punct(',', "`,` or `;` in a `.reg` declaration")?;
        }
    }

    /// `.shared|.global|.const [.align N] .type NAME [ '[' [N] ']' ] ;` (§5.4).
    fn var_decl(&mut self, linkage: Linkage) -> Result<VarDecl, ParseError> {
        let line = self.peek().line;
        let space = match &self.peek().tok {
            Tok::Dot(w) => match w.as_str() {
                "shared" => StateSpace::Shared,
                "global" => StateSpace::Global,
                "const" => StateSpace::Const,
                "func" => {
                    return Err(self.error(ParseErrorKind::Unsupported("`.func`".to_owned())));
                }
                _ => {
                    return Err(self.error(ParseErrorKind::Unsupported(format!(
                        "module directive `.{w}`"
                    ))));
                }
            },
            _ => return Err(self.expected("`.entry` or a variable declaration")),
        };
        self.bump();
        let align = self.align()?;
        let ty = self.expect_type()?;
        let name = self.expect_ident("the variable's name")?;
        let len = self.array_len()?;
        self.expect_punct(';', "`;` ending the declaration")?;
        Ok(VarDecl {
            linkage,
            space,
            align,
            ty,
            name,
            len,
            line,
        })
    }
}
