//! Parsing of the pieces inside a statement: scalar expressions (precedence climbing with the
//! printer's table, `print::bin_info`), instruction operands, tile and barrier references.
//!
//! Invariant: every form here is the exact inverse of its printer in `print.rs`; in particular
//! an expression ends at the first token that cannot continue it (a keyword such as `to`,
//! `step`, `variant`, or `->`, `{`, a ` !<id>` span or the line end).

use super::lexer::Tok;
use super::{ParseError, Parser};
use crate::arena::Handle;
use crate::ir::*;
use crate::print::bin_info;

/// Infix operators by spelling: the node they build and their precedence.
enum Infix {
    Bin(BinOp),
    Cmp(CmpOp),
    AndP,
}

const INFIX: [(&str, Infix); 17] = [
    ("&&", Infix::AndP),
    ("==", Infix::Cmp(CmpOp::Eq)),
    ("!=", Infix::Cmp(CmpOp::Ne)),
    ("<", Infix::Cmp(CmpOp::Lt)),
    ("<=", Infix::Cmp(CmpOp::Le)),
    (">", Infix::Cmp(CmpOp::Gt)),
    (">=", Infix::Cmp(CmpOp::Ge)),
    ("|", Infix::Bin(BinOp::Or)),
    ("^", Infix::Bin(BinOp::Xor)),
    ("&", Infix::Bin(BinOp::And)),
    ("<<", Infix::Bin(BinOp::Shl)),
    (">>", Infix::Bin(BinOp::Shr)),
    ("+", Infix::Bin(BinOp::Add)),
    ("-", Infix::Bin(BinOp::Sub)),
    ("*", Infix::Bin(BinOp::Mul)),
    ("/", Infix::Bin(BinOp::Div)),
    ("%", Infix::Bin(BinOp::Rem)),
];

impl Infix {
    fn prec(&self) -> u8 {
        match self {
            Infix::AndP => 1,
            Infix::Cmp(_) => 2,
            Infix::Bin(op) => bin_info(*op).1,
        }
    }
}

impl Parser<'_> {
    /// A scalar expression.
    pub(super) fn expr(&mut self) -> Result<Expr, ParseError> {
        self.expr_above(1)
    }

    fn peek_infix(&self) -> Option<&'static Infix> {
        match self.c.peek() {
            Tok::Punct(p) => INFIX.iter().find(|(s, _)| s == p).map(|(_, i)| i),
            _ => None,
        }
    }

    /// An expression whose infix operators all have precedence `>= min`.
    fn expr_above(&mut self, min: u8) -> Result<Expr, ParseError> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek_infix() {
            let p = op.prec();
            if p < min {
                break;
            }
            self.c.bump();
            // Left-associative: the right side takes only tighter operators.
            let rhs = self.expr_above(p + 1)?;
            lhs = match op {
                Infix::Bin(op) => Expr::bin(*op, lhs, rhs),
                Infix::Cmp(op) => Expr::cmp(*op, lhs, rhs),
                Infix::AndP => Expr::AndP(Box::new(lhs), Box::new(rhs)),
            };
            if matches!(op, Infix::Cmp(_)) && matches!(self.peek_infix(), Some(Infix::Cmp(_))) {
                return Err(self.c.error("comparisons do not chain; add parentheses"));
            }
        }
        Ok(lhs)
    }

    /// `!e`, `(e)`, an immediate, `%n`, `dim NAME`, a special register or `cdiv/min/max(a, b)`.
    fn unary(&mut self) -> Result<Expr, ParseError> {
        match self.c.peek().clone() {
            Tok::Punct("!") => {
                self.c.bump();
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Tok::Punct("(") => {
                self.c.bump();
                let e = self.expr()?;
                self.c.expect_punct(")", "to close the parenthesis")?;
                Ok(e)
            }
            Tok::Int(_) | Tok::Punct("-") => {
                let neg = self.c.eat_punct("-");
                let at = self.c.pos();
                let magnitude = self.c.expect_u64("an integer")? as i128;
                self.c
                    .expect_punct(":", "and a type after an integer immediate (`5:u32`)")?;
                let ty = self.scalar_type()?;
                let v = if neg { -magnitude } else { magnitude };
                // A u64 immediate is written as its unsigned value and stored as its bits.
                let fits = if ty == ScalarType::U64 && !neg {
                    u64::try_from(v).ok().map(|u| u as i64)
                } else {
                    i64::try_from(v).ok()
                };
                fits.map(|v| Expr::Imm(v, ty)).ok_or_else(|| {
                    self.c.reset(at);
                    self.c.error(format!("immediate {v} does not fit in i64"))
                })
            }
            Tok::Var(_) => Ok(Expr::Var(self.var_ref()?)),
            Tok::Ident(w) if w == "dim" => {
                self.c.bump();
                Ok(Expr::Dim(self.c.expect_name("a shape symbol after `dim`")?))
            }
            Tok::Ident(f) if matches!(self.c.peek_at(1), Tok::Punct("(")) => {
                let op = match f.as_str() {
                    "cdiv" => BinOp::CeilDiv,
                    "min" => BinOp::Min,
                    "max" => BinOp::Max,
                    _ => {
                        return Err(self.c.error(format!(
                            "unknown function `{f}`; expected `cdiv`, `min` or `max`"
                        )));
                    }
                };
                self.c.bump();
                self.c.bump();
                let a = self.expr()?;
                self.c
                    .expect_punct(",", &format!("between the arguments of `{f}`"))?;
                let b = self.expr()?;
                self.c
                    .expect_punct(")", &format!("after the arguments of `{f}`"))?;
                Ok(Expr::bin(op, a, b))
            }
            Tok::Ident(w) => match special(&w) {
                Some(s) => {
                    self.c.bump();
                    Ok(Expr::Special(s))
                }
                None => Err(self.c.error(format!(
                    "expected an expression, found `{w}` (shape symbols are written `dim {w}`)"
                ))),
            },
            _ => Err(self.c.expected("an expression")),
        }
    }

    /// A scalar type name.
    pub(super) fn scalar_type(&mut self) -> Result<ScalarType, ParseError> {
        if let Tok::Ident(s) = self.c.peek()
            && let Some(t) = ScalarType::from_name(s)
        {
            self.c.bump();
            return Ok(t);
        }
        Err(self
            .c
            .expected("a scalar type (`pred`, `b16`, `u32`, `s32`, `u64` or `f32`)"))
    }

    /// `%n`, which must be declared.
    pub(super) fn var_ref(&mut self) -> Result<Handle<Var>, ParseError> {
        match *self.c.peek() {
            Tok::Var(i) if (i as usize) < self.vars.len() => {
                self.c.bump();
                Ok(Handle::from_index(i as usize))
            }
            Tok::Var(i) => Err(self.c.error(format!(
                "use of undeclared %{i} (the kernel declares {} variables)",
                self.vars.len()
            ))),
            _ => Err(self.c.expected("a variable `%n`")),
        }
    }

    /// An instruction operand: `a|b` (right-grouping) or a single operand.
    pub(super) fn operand(&mut self) -> Result<Operand, ParseError> {
        let first = self.single_operand()?;
        if self.c.eat_punct("|") {
            return Ok(Operand::Pair(Box::new(first), Box::new(self.operand()?)));
        }
        Ok(first)
    }

    /// An operand other than a pair (or a parenthesised pair).
    fn single_operand(&mut self) -> Result<Operand, ParseError> {
        match self.c.peek().clone() {
            Tok::Punct("(") => {
                self.c.bump();
                let o = self.operand()?;
                self.c
                    .expect_punct(")", "to close the parenthesised operand")?;
                Ok(o)
            }
            Tok::Var(_) => Ok(Operand::Reg(self.var_ref()?)),
            Tok::Punct("!") => {
                self.c.bump();
                Ok(Operand::NotReg(self.var_ref()?))
            }
            Tok::Int(_) | Tok::Punct("-") => Ok(Operand::Imm(self.c.expect_i64("an integer")?)),
            Tok::F32(bits) => {
                self.c.bump();
                Ok(Operand::F32Bits(bits))
            }
            Tok::Ident(s) | Tok::Str(s) => {
                self.c.bump();
                Ok(Operand::Sym(s))
            }
            Tok::Punct("[") => {
                self.c.bump();
                let base = Box::new(self.operand()?);
                if self.c.eat_punct(",") {
                    self.c.expect_punct("{", "before the tensor coordinates")?;
                    let coords = self.operand_list("}")?;
                    self.c.expect_punct("]", "after the tensor coordinates")?;
                    return Ok(Operand::TensorMem(base, coords));
                }
                let off = match self.c.peek() {
                    Tok::Punct("+") => {
                        self.c.bump();
                        self.c.expect_i64("an address offset")?
                    }
                    Tok::Punct("-") => self.c.expect_i64("an address offset")?,
                    _ => 0,
                };
                self.c.expect_punct("]", "to close the address")?;
                Ok(Operand::Mem(base, off))
            }
            Tok::Punct("{") => {
                self.c.bump();
                Ok(Operand::Vector(self.operand_list("}")?))
            }
            _ => Err(self.c.expected("an operand")),
        }
    }

    /// Operands separated by commas, through the closing punctuation `close`.
    fn operand_list(&mut self, close: &str) -> Result<Vec<Operand>, ParseError> {
        let mut out = Vec::new();
        while !self.c.eat_punct(close) {
            if !out.is_empty() {
                self.c
                    .expect_punct(",", &format!("or `{close}` after an operand"))?;
            }
            out.push(self.operand()?);
        }
        Ok(out)
    }

    /// Operands separated by commas, up to the end of the statement (possibly none).
    pub(super) fn operands(&mut self) -> Result<Vec<Operand>, ParseError> {
        let mut out = Vec::new();
        if self.c.at_line_end() {
            return Ok(out);
        }
        out.push(self.operand()?);
        while self.c.eat_punct(",") {
            out.push(self.operand()?);
        }
        Ok(out)
    }

    /// Expressions separated by commas, through `]`.
    fn index_list(&mut self) -> Result<Vec<Expr>, ParseError> {
        let mut out = Vec::new();
        while !self.c.eat_punct("]") {
            if !out.is_empty() {
                self.c.expect_punct(",", "or `]` after an index")?;
            }
            out.push(self.expr()?);
        }
        Ok(out)
    }

    /// `@buf`, `@buf[i, …]`, `global tensor[c, …]` or `global_at tensor[e, …] [within [b, …]]`.
    pub(super) fn tile(&mut self) -> Result<TileRef, ParseError> {
        if self.c.eat_kw("global") {
            let tensor = self.c.expect_name("a tensor name after `global`")?;
            self.c.expect_punct("[", "before the tile coordinates")?;
            return Ok(TileRef::Global {
                tensor,
                coords: self.index_list()?,
                elements: None,
            });
        }
        if self.c.eat_kw("global_at") {
            let tensor = self.c.expect_name("a tensor name after `global_at`")?;
            self.c.expect_punct("[", "before the element offsets")?;
            let coords = self.index_list()?;
            let bounds = if self.c.eat_kw("within") {
                self.c.expect_punct("[", "before the bounds")?;
                self.index_list()?
            } else {
                Vec::new()
            };
            return Ok(TileRef::Global {
                tensor,
                coords,
                elements: Some(Box::new(crate::ir::Bounds(bounds))),
            });
        }
        if !self.c.is_punct("@") {
            return Err(self
                .c
                .expected("a tile (`@buffer[…]` or `global tensor[…]`)"));
        }
        let buf = self.buffer_ref()?;
        let index = if self.c.eat_punct("[") {
            self.index_list()?
        } else {
            Vec::new()
        };
        Ok(TileRef::Buf { buf, index })
    }

    /// `@barrier[index]`.
    pub(super) fn bar_ref(&mut self) -> Result<BarRef, ParseError> {
        let bar = self.barrier_ref_name()?;
        self.c
            .expect_punct("[", "after the barrier name (`@bar[i]`)")?;
        let index = self.expr()?;
        self.c.expect_punct("]", "after the barrier index")?;
        Ok(BarRef { bar, index })
    }
}

/// A special register by its text spelling (`print::special_name`).
fn special(w: &str) -> Option<Special> {
    if let Some(s) = Special::ALL.iter().find(|s| s.name() == w) {
        return Some(*s);
    }
    let (make, axis): (fn(u8) -> Special, &str) = if let Some(a) = w.strip_prefix("ctaid.") {
        (Special::CtaId, a)
    } else {
        (Special::NCtaId, w.strip_prefix("nctaid.")?)
    };
    axis.parse::<u8>().ok().filter(|&n| n > 2).map(make)
}
