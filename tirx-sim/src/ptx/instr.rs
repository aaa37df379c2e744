//! The PTX parser, instruction level: guards, opcodes and operands (PTX ISA §9.3
//! "Predicated Execution", §9.7 "Instructions", §6 "Instruction Operands").
//!
//! ```text
//! instr    := [@[!]PRED] opcode [operand {, operand}] ;
//! opcode   := NAME {.part}            the parts joined to the name, no space between
//! operand  := simple [| simple]       a pair: `%r|%p` (setp, elect.sync)
//!           | !REG | { simple {, simple} } | [ addr ] | [ REG|SYM , { simple {, simple} } ]
//! simple   := REG[.x|.y|.z|.w] | SYM | _ | [-]INT | 0fXXXXXXXX | 0dX…X | DECIMAL
//! addr     := REG|SYM [ + [-]INT | - INT ] | INT
//! ```
//!
//! A register is an identifier starting with `%`; a special register's component joined to
//! it (`%tid.x`) is part of its name. `_` is the sink; any other identifier is a symbol
//! (variable, parameter, label). Vectors do not nest, so parsing never recurses deeper than
//! one level whatever the input.

use super::ast::{AddrBase, Address, Guard, Instr, Opcode, Operand};
use super::error::{ParseError, ParseErrorKind};
use super::lexer::Tok;
use super::parser::Parser;

impl Parser {
    /// One instruction, through its `;`.
    pub(super) fn instr(&mut self) -> Result<Instr, ParseError> {
        let line = self.peek().line;
        let pred = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let reg = self.expect_ident("a predicate register after `@`")?;
            if !reg.starts_with('%') {
                return Err(self.expected("a `%` predicate register after `@`"));
            }
            Some(Guard { reg, negated })
        } else {
            None
        };
        let opcode = self.opcode()?;
        let mut operands = Vec::new();
        if !self.eat_punct(';') {
            loop {
                operands.push(self.operand()?);
                if self.eat_punct(';') {
                    break;
                }
                self.expect_punct(',', "`,` or `;` after an operand")?;
            }
        }
        Ok(Instr {
            pred,
            opcode,
            operands,
            line,
        })
    }

    /// `NAME{.part}`, the parts joined to the name.
    fn opcode(&mut self) -> Result<Opcode, ParseError> {
        let (line, col) = (self.peek().line, self.peek().col);
        let name = self.expect_ident("an instruction mnemonic")?;
        if name.starts_with(['%', '$']) || name == "_" {
            return Err(ParseError::new(
                line,
                col,
                ParseErrorKind::Expected {
                    expected: "an instruction mnemonic",
                    found: format!("`{name}`"),
                },
            ));
        }
        let mut parts = vec![name];
        while let Tok::Dot(w) = &self.peek().tok {
            if !self.peek().joined {
                return Err(self.error(ParseErrorKind::Unsupported(format!(
                    "space before the modifier `.{w}`"
                ))));
            }
            parts.push(w.clone());
            self.bump();
        }
        Ok(Opcode::from_parts(&parts))
    }

    /// One operand, pairs `a|b` included.
    fn operand(&mut self) -> Result<Operand, ParseError> {
        match self.peek().tok {
            Tok::Punct('!') => {
                self.bump();
                match self.simple()? {
                    Operand::Reg(r) => Ok(Operand::NotReg(r)),
                    _ => Err(self.expected("a register after `!`")),
                }
            }
            Tok::Punct('{') => {
                self.bump();
                Ok(Operand::Vector(self.vector_rest()?))
            }
            Tok::Punct('[') => {
                self.bump();
                self.bracket_rest()
            }
            _ => {
                let first = self.simple()?;
                if self.eat_punct('|') {
                    let second = self.simple()?;
                    return Ok(Operand::Pair(Box::new(first), Box::new(second)));
                }
                Ok(first)
            }
        }
    }

    /// After `{`: `simple {, simple} }`.
    fn vector_rest(&mut self) -> Result<Vec<Operand>, ParseError> {
        let mut items = vec![self.simple()?];
        while !self.eat_punct('}') {
            self.expect_punct(',', "`,` or `}` in a vector operand")?;
            items.push(self.simple()?);
        }
        Ok(items)
    }

    /// After `[`: an address, or a tensor map with coordinates.
    fn bracket_rest(&mut self) -> Result<Operand, ParseError> {
        let base = match &self.peek().tok {
            Tok::Ident(s) if s == "_" => return Err(self.expected("an address")),
            Tok::Ident(s) if s.starts_with('%') => AddrBase::Reg(self.reg_name()?),
            Tok::Ident(s) => {
                let s = s.clone();
                self.bump();
                AddrBase::Sym(s)
            }
            Tok::Int(_) => {
                let offset = self.int()?;
                self.expect_punct(']', "`]` closing the address")?;
                return Ok(Operand::Mem(Address {
                    base: AddrBase::Absolute,
                    offset,
                }));
            }
            _ => return Err(self.expected("a register or symbol in an address")),
        };
        if self.eat_punct(',') {
            self.expect_punct('{', "`{` opening the tensor coordinates")?;
            let coords = self.vector_rest()?;
            self.expect_punct(']', "`]` closing the tensor operand")?;
            let map = match base {
                AddrBase::Reg(r) => Operand::Reg(r),
                AddrBase::Sym(s) => Operand::Sym(s),
                AddrBase::Absolute => Operand::Imm(0),
            };
            return Ok(Operand::Tensor {
                map: Box::new(map),
                coords,
            });
        }
        // `+off`, `+-off` (what tirx writes) or `-off`.
        let offset = if self.eat_punct('+') || self.peek().tok == Tok::Punct('-') {
            self.int()?
        } else {
            0
        };
        self.expect_punct(']', "`]` closing the address")?;
        Ok(Operand::Mem(Address { base, offset }))
    }

    /// `[-]INT`, as a signed 64-bit value (the pattern of the literal, §4.5.1).
    fn int(&mut self) -> Result<i64, ParseError> {
        let negative = self.eat_punct('-');
        match self.peek().tok {
            Tok::Int(v) => {
                self.bump();
                let v = v as i64; // the literal's 64-bit pattern
                Ok(if negative { v.wrapping_neg() } else { v })
            }
            _ => Err(self.expected("an integer")),
        }
    }

    /// A register name, its joined component (`%tid.x`) folded in.
    fn reg_name(&mut self) -> Result<String, ParseError> {
        let mut name = self.expect_ident("a register")?;
        if let Tok::Dot(w) = &self.peek().tok
            && self.peek().joined
            && matches!(w.as_str(), "x" | "y" | "z" | "w")
        {
            name.push('.');
            name.push_str(w);
            self.bump();
        }
        Ok(name)
    }

    /// A register, symbol, sink or constant.
    fn simple(&mut self) -> Result<Operand, ParseError> {
        let op = match &self.peek().tok {
            Tok::Ident(s) if s == "_" => {
                self.bump();
                Operand::Sink
            }
            Tok::Ident(s) if s.starts_with('%') => Operand::Reg(self.reg_name()?),
            Tok::Ident(s) => {
                let s = s.clone();
                self.bump();
                Operand::Sym(s)
            }
            Tok::Int(_) | Tok::Punct('-') => Operand::Imm(self.int()?),
            Tok::F32(bits) => {
                let bits = *bits;
                self.bump();
                Operand::F32(bits)
            }
            Tok::F64(bits) => {
                let bits = *bits;
                self.bump();
                Operand::F64(bits)
            }
            Tok::Decimal(text) => {
                // The lexer admits only texts that parse as finite f64.
                let value = text.parse::<f64>().unwrap_or(0.0);
                self.bump();
                Operand::F64(value.to_bits())
            }
            _ => return Err(self.expected("an operand")),
        };
        Ok(op)
    }
}
