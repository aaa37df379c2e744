//! The PTX front end of the emulator: [`parse`] turns the text tirx emits into a
//! [`Module`] (PTX ISA §4 "Syntax", §5 "State Spaces, Types, and Variables", §6
//! "Instruction Operands", §9.7 "Instructions", §11 "Directives").
//!
//! - `lexer.rs`: characters to tokens (§4);
//! - `parser.rs`: header, variables, entries, parameters, tuning directives, declarations;
//! - `instr.rs`: guards, opcodes, operands;
//! - `opcode.rs`: where an instruction's name ends and its modifiers begin;
//! - `ast.rs`: the nodes;
//! - `inventory.rs`: the distinct opcodes of a module, counted;
//! - `check.rs`: the `// tirx.check` notes tirx writes for the emulator.
//!
//! The accepted subset is what `tirx-ptx/src/writer.rs` prints, plus the neighbouring
//! spellings the ISA allows for the same constructs (`%r<10>` ranges, `.reqntid`, `.maxnreg`,
//! `.shared` variables in a body, hex/octal/binary integers, `0d`/decimal floats, block
//! comments). Everything else is a [`ParseError`] naming the construct and its position.
//!
//! Invariant: [`parse`] never panics, on any `&str`.

mod ast;
mod check;
mod error;
mod instr;
mod inventory;
mod lexer;
mod opcode;
mod parser;

pub use ast::{
    AddrBase, Address, ArrayLen, Directive, Entry, Guard, Instr, Linkage, Module, Operand, Param,
    RegDecl, StateSpace, Statement, Type, VarDecl, Version,
};
pub use check::{Check, checks};
pub use error::{ParseError, ParseErrorKind};
pub use inventory::{OpcodeCount, bases, inventory};
pub use lexer::{Tok, Token, lex};
pub use opcode::{NAMES, Opcode};

/// Parses one PTX module.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    let mut m = parser::Parser::new(lex(src)?).module()?;
    m.checks = checks(src);
    Ok(m)
}

#[cfg(test)]
mod tests;
