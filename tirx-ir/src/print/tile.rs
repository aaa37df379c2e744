//! The text form of register tiles: a buffer's register layout and the `compute` / `reduce`
//! ops. Parsed back by `parse/tile.rs`.
//!
//! - layout, after a register buffer's swizzle: `regs (4:0:2 8:1:0) (2:0:1 16:0:8)` — thread
//!   modes, then value modes, each `size:row_stride:col_stride`, fastest first;
//! - `compute @dst = EXPR`, `EXPR` in prefix form: `@tile`, `(f32 0f3FB8AA3B)`, `(arg alpha)`,
//!   `(int EXPR)`, `(row)`, `(col)`, `(FN x)` for a unary function, `(OP a b)` for a binary
//!   operator or a comparison (`eq`, `lt`, …), `(fma a b c)`, `(select c a b)`;
//! - `reduce @dst <- @src KIND axis N [of EXPR] [scratch @buf] [cluster [@buf]] [again]`;
//! - `warp_vote KIND %dst <- SCALAR` or `warp_vote KIND %dst <- @src of EXPR` (KIND `any`,
//!   `all`, `ballot`; a scalar predicate, or a tile predicate over `@src`'s layout).

use super::{Printer, write_expr};
use crate::ir::*;
use std::fmt::{self, Write};

/// The text spelling of a comparison inside a tile expression.
pub(crate) fn cmp_word(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

/// Every comparison, for parsing.
pub(crate) const CMPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];

pub(super) fn write_reg_layout(out: &mut dyn Write, l: &RegLayout) -> fmt::Result {
    out.write_str(" regs")?;
    for modes in [&l.threads, &l.values] {
        out.write_str(" (")?;
        for (i, m) in modes.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(out, "{sep}{}:{}:{}", m.size, m.stride[0], m.stride[1])?;
        }
        out.write_str(")")?;
    }
    Ok(())
}

impl Printer<'_, '_> {
    pub(super) fn texpr(&mut self, e: &TExpr) -> fmt::Result {
        match e {
            TExpr::Tile(b) => {
                let b = self.buf(*b);
                write!(self.out, "{b}")
            }
            TExpr::F32(bits) => write!(self.out, "(f32 0f{bits:08X})"),
            TExpr::Arg(name) => write!(self.out, "(arg {})", crate::parse::lexer::Name(name)),
            TExpr::Int(x) => {
                self.out.write_str("(int ")?;
                write_expr(self.out, x, 0)?;
                self.out.write_str(")")
            }
            TExpr::Index(0) => self.out.write_str("(row)"),
            TExpr::Index(_) => self.out.write_str("(col)"),
            TExpr::Un(f, a) => self.call(f.name(), &[a]),
            TExpr::Bin(op, a, b) => self.call(op.name(), &[a, b]),
            TExpr::Cmp(c, a, b) => self.call(cmp_word(*c), &[a, b]),
            TExpr::Fma(a, b, c) => self.call("fma", &[a, b, c]),
            TExpr::Select(c, a, b) => self.call("select", &[c, a, b]),
            TExpr::Gather {
                tensor,
                index,
                oob_zero,
            } => {
                let name = crate::parse::lexer::Name(tensor);
                let word = if *oob_zero {
                    "gather_or_zero"
                } else {
                    "gather"
                };
                write!(self.out, "({word} {name}")?;
                for a in index {
                    self.out.write_str(" ")?;
                    self.texpr(a)?;
                }
                self.out.write_str(")")
            }
        }
    }

    fn call(&mut self, name: &str, args: &[&TExpr]) -> fmt::Result {
        write!(self.out, "({name}")?;
        for a in args {
            self.out.write_str(" ")?;
            self.texpr(a)?;
        }
        self.out.write_str(")")
    }

    /// The operands of `compute` and `reduce` (after the op's name).
    pub(super) fn tile_op(&mut self, op: &Op) -> fmt::Result {
        match op {
            Op::Compute { dst, value } => {
                let d = self.buf(*dst);
                write!(self.out, " {d} = ")?;
                self.texpr(value)
            }
            Op::Reduce {
                dst,
                src,
                value,
                kind,
                axis,
                scratch,
                again,
                cluster,
                pull,
                cluster_scratch,
                cluster_bar,
            } => {
                let (d, s) = (self.buf(*dst), self.buf(*src));
                write!(self.out, " {d} <- {s} {} axis {axis}", kind.name())?;
                if let Some(v) = value {
                    self.out.write_str(" of ")?;
                    self.texpr(v)?;
                }
                if let Some(b) = scratch {
                    let b = self.buf(*b);
                    write!(self.out, " scratch {b}")?;
                }
                if *cluster {
                    self.out.write_str(" cluster")?;
                    if *pull {
                        self.out.write_str(" pull")?;
                    }
                    if let Some(b) = cluster_scratch {
                        let b = self.buf(*b);
                        write!(self.out, " {b}")?;
                    }
                    if let Some(b) = cluster_bar {
                        let b = self.bar(*b);
                        write!(self.out, " bar {b}")?;
                    }
                }
                if *again {
                    self.out.write_str(" again")?;
                }
                Ok(())
            }
            Op::WarpVote { dst, kind, pred } => {
                write!(self.out, " {} %{} <- ", kind.name(), dst.index())?;
                match pred {
                    VotePred::Scalar(e) => super::write_expr(self.out, e, 0),
                    VotePred::Tile { src, value } => {
                        let s = self.buf(*src);
                        write!(self.out, "{s} of ")?;
                        self.texpr(value)
                    }
                }
            }
            _ => Ok(()),
        }
    }
}
