//! Text form: parsing. [`parse_module`] reads back what `Display for Module` (`print.rs`)
//! writes, exactly: `parse_module(&m.to_string()) == Ok(m)` for every module whose buffer,
//! barrier and pipeline names are unique within their arenas and whose handles are in range.
//!
//! A small hand-written lexer (`lexer.rs`, shared with `abi_text.rs`) and a recursive-descent
//! parser (declarations here, statements and ops in `stmt.rs`, expressions and operands in
//! `expr.rs`). The grammar is line-oriented: each declaration and statement is one line; a block
//! statement's header line ends with `{`, its body follows, and `}` closes it on its own line
//! (`} else {`, `} until %n`). Indentation is not read. `//` starts a comment.
//!
//! Names resolve while parsing: `%n` must be declared by a `var` line (in index order) before
//! the body, and `@name` is looked up among the buffers, barriers or pipelines declared so far,
//! as the position requires. Spans: a ` !<id>` suffix at the end of a statement's or
//! declaration's header line sets its span; without one it is `Span::NONE`.

mod expr;
#[cfg(test)]
mod fixture;
pub(crate) mod lexer;
mod stmt;
#[cfg(test)]
mod tests;
mod tile;

use std::collections::HashMap;

use crate::abi_text::{parse_elem, parse_signature, parse_swizzle};
use crate::arena::{Arena, Handle};
use crate::ir::*;
use lexer::{Cursor, Tok};

/// A syntax or name error in the text form, at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, col {col}: {message}")]
pub struct ParseError {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
    /// What was expected and what was found.
    pub message: String,
}

/// Parses a module: zero or more kernels.
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let mut c = Cursor::new(text)?;
    let mut kernels = Vec::new();
    loop {
        c.skip_newlines();
        if matches!(c.peek(), Tok::Eof) {
            return Ok(Module { kernels });
        }
        kernels.push(Parser::new(&mut c).kernel()?);
    }
}

/// Parses text holding exactly one kernel.
pub fn parse_kernel(text: &str) -> Result<Kernel, ParseError> {
    let mut c = Cursor::new(text)?;
    c.skip_newlines();
    let k = Parser::new(&mut c).kernel()?;
    c.skip_newlines();
    match c.peek() {
        Tok::Eof => Ok(k),
        _ => Err(c.expected("end of input after the kernel")),
    }
}

/// Parses one kernel, resolving names against its declarations.
struct Parser<'c> {
    c: &'c mut Cursor,
    vars: Arena<Var>,
    buffers: Arena<Buffer>,
    barriers: Arena<Barrier>,
    pipelines: Arena<Pipeline>,
    buffer_names: HashMap<String, Handle<Buffer>>,
    barrier_names: HashMap<String, Handle<Barrier>>,
    pipeline_names: HashMap<String, Handle<Pipeline>>,
}

/// Which arena an `@name` refers to.
#[derive(Clone, Copy)]
enum Kind {
    Buffer,
    Barrier,
    Pipeline,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Buffer => "buffer",
            Kind::Barrier => "barrier",
            Kind::Pipeline => "pipeline",
        }
    }
}

impl<'c> Parser<'c> {
    fn new(c: &'c mut Cursor) -> Self {
        Parser {
            c,
            vars: Arena::new(),
            buffers: Arena::new(),
            barriers: Arena::new(),
            pipelines: Arena::new(),
            buffer_names: HashMap::new(),
            barrier_names: HashMap::new(),
            pipeline_names: HashMap::new(),
        }
    }

    /// `kernel NAME config NAME phase PHASE`, the declarations, then `{ body }`.
    fn kernel(mut self) -> Result<Kernel, ParseError> {
        let c = &mut *self.c;
        c.expect_kw("kernel", "to start a kernel")?;
        let name = c.expect_name("a kernel name after `kernel`")?;
        c.expect_kw("config", "after the kernel name")?;
        let config = c.expect_name("a config name after `config`")?;
        c.expect_kw("phase", "after the config name")?;
        let phase = match c.peek() {
            Tok::Ident(p) if p == "tile" => Phase::Tile,
            Tok::Ident(p) if p == "thread" => Phase::Thread,
            Tok::Ident(p) if p == "ptx" => Phase::Ptx,
            _ => return Err(c.expected("a phase (`tile`, `thread` or `ptx`)")),
        };
        c.bump();
        c.expect_eol("after the kernel header")?;
        let (mut consts, mut sig) = (Vec::new(), None);
        loop {
            self.c.skip_newlines();
            match self.c.peek() {
                Tok::Punct("{") => break,
                Tok::Ident(w) if w == "const" => {
                    self.c.bump();
                    let name = self.c.expect_name("a constant name after `const`")?;
                    self.c.expect_punct("=", "after the constant name")?;
                    consts.push((name, self.c.expect_i64("the constant's value")?));
                    self.c.expect_eol("after the constant")?;
                }
                Tok::Ident(w) if w == "signature" => {
                    if sig.is_some() {
                        return Err(self
                            .c
                            .error("a kernel has one signature; this is the second"));
                    }
                    sig = Some(parse_signature(self.c)?);
                }
                Tok::Ident(w) if w == "var" => self.var_decl()?,
                Tok::Ident(w) if w == "buffer" => self.buffer_decl()?,
                Tok::Ident(w) if w == "barrier" => self.barrier_decl()?,
                Tok::Ident(w) if w == "pipeline" => self.pipeline_decl()?,
                _ => {
                    return Err(self.c.expected(
                        "a declaration (`const`, `signature`, `var`, `buffer`, `barrier`, `pipeline`) or `{`",
                    ));
                }
            }
        }
        let Some(sig) = sig else {
            return Err(self
                .c
                .error("the kernel has no `signature` before its body"));
        };
        let body = self.body("to open the kernel body")?;
        self.c.expect_eol("after the kernel's closing `}`")?;
        Ok(Kernel {
            name,
            config,
            consts,
            phase,
            sig,
            vars: self.vars,
            buffers: self.buffers,
            barriers: self.barriers,
            pipelines: self.pipelines,
            body,
        })
    }

    /// `var %N: TYPE "name"`; `N` must be the next index.
    fn var_decl(&mut self) -> Result<(), ParseError> {
        self.c.bump();
        let next = self.vars.len();
        match *self.c.peek() {
            Tok::Var(i) if i as usize == next => self.c.bump(),
            Tok::Var(i) => {
                return Err(self.c.error(format!(
                    "variables are declared in index order: expected %{next}, found %{i}"
                )));
            }
            _ => return Err(self.c.expected(&format!("`%{next}` after `var`"))),
        };
        self.c.expect_punct(":", "after the variable")?;
        let ty = self.scalar_type()?;
        let name = self
            .c
            .expect_str("the variable's name as a quoted string")?;
        self.vars.append(Var { name, ty });
        self.c.expect_eol("after the variable declaration")
    }

    /// `@name:` of a declaration, checked to be new within its arena.
    fn decl_name(&mut self, kind: Kind) -> Result<String, ParseError> {
        self.c.bump();
        self.c
            .expect_punct("@", &format!("before the {} name", kind.word()))?;
        let at = self.c.pos();
        let name = self.c.expect_name(&format!("a {} name", kind.word()))?;
        let taken = match kind {
            Kind::Buffer => self.buffer_names.contains_key(&name),
            Kind::Barrier => self.barrier_names.contains_key(&name),
            Kind::Pipeline => self.pipeline_names.contains_key(&name),
        };
        if taken {
            self.c.reset(at);
            return Err(self.c.error(format!(
                "a {} named `@{name}` is already declared",
                kind.word()
            )));
        }
        self.c
            .expect_punct(":", &format!("after the {} name", kind.word()))?;
        Ok(name)
    }

    /// An optional `word <u32>` clause.
    fn opt_u32(&mut self, word: &str) -> Result<Option<u32>, ParseError> {
        if self.c.eat_kw(word) {
            Ok(Some(
                self.c.expect_u32(&format!("a number after `{word}`"))?,
            ))
        } else {
            Ok(None)
        }
    }

    /// A declaration's optional span and the end of its line.
    fn decl_end(&mut self, kind: Kind) -> Result<Span, ParseError> {
        let span = self.c.opt_span()?;
        self.c
            .expect_eol(&format!("after the {} declaration", kind.word()))?;
        Ok(span)
    }

    /// `buffer @NAME: SPACE ELEM (SHAPE):(STRIDE) swizzle SW [major mn] [regs (..) (..)] [offset N] [cols N] [alias @BUF]`.
    fn buffer_decl(&mut self) -> Result<(), ParseError> {
        let name = self.decl_name(Kind::Buffer)?;
        let space = match self.c.peek() {
            Tok::Ident(s) if s == "smem" => Space::Shared,
            Tok::Ident(s) if s == "tmem" => Space::Tmem,
            Tok::Ident(s) if s == "reg" => Space::Reg,
            _ => return Err(self.c.expected("a memory space (`smem`, `tmem` or `reg`)")),
        };
        self.c.bump();
        let elem = parse_elem(self.c)?;
        let shape = self.dims("shape")?;
        self.c.expect_punct(
            ":",
            "between the shape and the strides (`(64, 64):(64, 1)`)",
        )?;
        let stride = self.dims("stride")?;
        self.c.expect_kw("swizzle", "after the layout")?;
        let swizzle = parse_swizzle(self.c)?;
        let major = if self.c.eat_kw("major") {
            let m = match self.c.peek() {
                Tok::Ident(s) => Major::from_name(s),
                _ => None,
            };
            let Some(m) = m else {
                return Err(self.c.expected("a majorness (`k` or `mn`) after `major`"));
            };
            self.c.bump();
            m
        } else {
            Major::K
        };
        let regs = self.opt_reg_layout()?;
        let offset = self.opt_u32("offset")?;
        let tmem_cols = self.opt_u32("cols")?;
        let alias = if self.c.eat_kw("alias") {
            Some(self.buffer_ref()?)
        } else {
            None
        };
        let span = self.decl_end(Kind::Buffer)?;
        let layout = Layout {
            shape,
            stride,
            swizzle,
            major,
        };
        let h = self.buffers.append(Buffer {
            name: name.clone(),
            space,
            elem,
            layout,
            offset,
            tmem_cols,
            regs,
            alias,
            span,
        });
        self.buffer_names.insert(name, h);
        Ok(())
    }

    /// `(d0, d1, …)`.
    fn dims(&mut self, what: &str) -> Result<Vec<u32>, ParseError> {
        self.c
            .expect_punct("(", &format!("before the layout's {what}"))?;
        let mut out = Vec::new();
        while !self.c.eat_punct(")") {
            if !out.is_empty() {
                self.c
                    .expect_punct(",", &format!("between {what} entries"))?;
            }
            out.push(self.c.expect_u32(&format!("a {what} entry"))?);
        }
        Ok(out)
    }

    /// `barrier @NAME: count N arrivals N [offset N]`.
    fn barrier_decl(&mut self) -> Result<(), ParseError> {
        let name = self.decl_name(Kind::Barrier)?;
        self.c.expect_kw("count", "after the barrier name")?;
        let count = self.c.expect_u32("the number of barriers")?;
        self.c.expect_kw("arrivals", "after the barrier count")?;
        let arrivals = self.c.expect_u32("the arrival count")?;
        let offset = self.opt_u32("offset")?;
        let span = self.decl_end(Kind::Barrier)?;
        let h = self.barriers.append(Barrier {
            name: name.clone(),
            count,
            arrivals,
            offset,
            span,
        });
        self.barrier_names.insert(name, h);
        Ok(())
    }

    /// `pipeline @NAME: stages N full @BAR empty @BAR`.
    fn pipeline_decl(&mut self) -> Result<(), ParseError> {
        let name = self.decl_name(Kind::Pipeline)?;
        self.c.expect_kw("stages", "after the pipeline name")?;
        let stages = self.c.expect_u32("the number of stages")?;
        self.c.expect_kw("full", "after the stages")?;
        let full = self.barrier_ref_name()?;
        self.c.expect_kw("empty", "after the full barrier")?;
        let empty = self.barrier_ref_name()?;
        let peers = if self.c.eat_kw("peers") {
            self.c.expect_u32("the number of peer CTAs")?
        } else {
            1
        };
        let span = self.decl_end(Kind::Pipeline)?;
        let h = self.pipelines.append(Pipeline {
            name: name.clone(),
            stages,
            full,
            empty,
            peers,
            span,
        });
        self.pipeline_names.insert(name, h);
        Ok(())
    }

    /// `@name`, looked up in the arena of `kind`; returns the raw index.
    fn lookup(&mut self, kind: Kind) -> Result<usize, ParseError> {
        self.c
            .expect_punct("@", &format!("before a {} name", kind.word()))?;
        let at = self.c.pos();
        let name = self.c.expect_name(&format!("a {} name", kind.word()))?;
        let found = match kind {
            Kind::Buffer => self.buffer_names.get(&name).map(|h| h.index()),
            Kind::Barrier => self.barrier_names.get(&name).map(|h| h.index()),
            Kind::Pipeline => self.pipeline_names.get(&name).map(|h| h.index()),
        };
        found.ok_or_else(|| {
            self.c.reset(at);
            self.c
                .error(format!("no {} named `@{name}` is declared", kind.word()))
        })
    }

    fn buffer_ref(&mut self) -> Result<Handle<Buffer>, ParseError> {
        self.lookup(Kind::Buffer).map(Handle::from_index)
    }
    fn barrier_ref_name(&mut self) -> Result<Handle<Barrier>, ParseError> {
        self.lookup(Kind::Barrier).map(Handle::from_index)
    }
    fn pipeline_ref(&mut self) -> Result<Handle<Pipeline>, ParseError> {
        self.lookup(Kind::Pipeline).map(Handle::from_index)
    }
}
