//! Parsing of the register-tile forms (the inverse of `print/tile.rs`, whose docs give the
//! syntax): a register buffer's layout, tile expressions, `compute` and `reduce`.

use super::lexer::Tok;
use super::{ParseError, Parser};
use crate::ir::*;
use crate::print::{CMPS, cmp_word};

impl Parser<'_> {
    /// `regs (MODES) (MODES)` after a buffer's layout, if present.
    pub(super) fn opt_reg_layout(&mut self) -> Result<Option<RegLayout>, ParseError> {
        if !self.c.eat_kw("regs") {
            return Ok(None);
        }
        let threads = self.modes()?;
        let values = self.modes()?;
        Ok(Some(RegLayout { threads, values }))
    }

    fn modes(&mut self) -> Result<Vec<Mode>, ParseError> {
        self.c
            .expect_punct("(", "before a register layout's modes")?;
        let mut out = Vec::new();
        while !self.c.eat_punct(")") {
            let size = self.c.expect_u32("a mode's size")?;
            self.c.expect_punct(":", "after a mode's size")?;
            let row = self.c.expect_u32("a mode's row stride")?;
            self.c.expect_punct(":", "after a mode's row stride")?;
            let col = self.c.expect_u32("a mode's column stride")?;
            out.push(Mode {
                size,
                stride: [row, col],
            });
        }
        Ok(out)
    }

    /// A tile expression.
    pub(super) fn texpr(&mut self) -> Result<TExpr, ParseError> {
        if self.c.is_punct("@") {
            return Ok(TExpr::Tile(self.buffer_ref()?));
        }
        self.c
            .expect_punct("(", "a tile expression (`@tile` or `(op …)`)")?;
        let at = self.c.pos();
        let word = self.c.expect_ident("a tile function or operator")?;
        let e = match word.as_str() {
            "f32" => match self.c.bump() {
                Tok::F32(bits) => TExpr::F32(bits),
                _ => {
                    self.c.reset(at);
                    return Err(self.c.error("expected `0f` + 8 hex digits after `f32`"));
                }
            },
            "arg" => TExpr::Arg(self.c.expect_name("a scalar argument")?),
            "int" => TExpr::Int(self.expr()?),
            "row" => TExpr::Index(0),
            "col" => TExpr::Index(1),
            "fma" => TExpr::Fma(
                Box::new(self.texpr()?),
                Box::new(self.texpr()?),
                Box::new(self.texpr()?),
            ),
            "select" => TExpr::Select(
                Box::new(self.texpr()?),
                Box::new(self.texpr()?),
                Box::new(self.texpr()?),
            ),
            // `(gather NAME INDEX…)`: indices until the closing parenthesis.
            // `(gather_or_zero NAME INDEX…)`: `oob = zero`.
            "gather" | "gather_or_zero" => {
                let tensor = self.c.expect_name("a tensor")?;
                let mut index = Vec::new();
                while !self.c.is_punct(")") {
                    index.push(self.texpr()?);
                }
                TExpr::Gather {
                    tensor,
                    index,
                    oob_zero: word == "gather_or_zero",
                }
            }
            w => {
                if let Some(f) = TUn::ALL.iter().find(|f| f.name() == w) {
                    TExpr::Un(*f, Box::new(self.texpr()?))
                } else if let Some(op) = TBin::ALL.iter().find(|o| o.name() == w) {
                    TExpr::Bin(*op, Box::new(self.texpr()?), Box::new(self.texpr()?))
                } else if let Some(c) = CMPS.iter().find(|c| cmp_word(**c) == w) {
                    TExpr::Cmp(*c, Box::new(self.texpr()?), Box::new(self.texpr()?))
                } else {
                    self.c.reset(at);
                    return Err(self.c.error(format!("unknown tile function `{w}`")));
                }
            }
        };
        self.c.expect_punct(")", "to close the tile expression")?;
        Ok(e)
    }

    /// `compute …` and `reduce …` after the op name (`None`: another op).
    pub(super) fn reg_tile_op(&mut self, name: &str) -> Result<Option<Op>, ParseError> {
        Ok(Some(match name {
            "compute" => {
                let dst = self.buffer_ref()?;
                self.c.expect_punct("=", "after the computed tile")?;
                Op::Compute {
                    dst,
                    value: self.texpr()?,
                }
            }
            "reduce" => {
                let dst = self.buffer_ref()?;
                self.c.expect_punct("<-", "after the reduction's result")?;
                let src = self.buffer_ref()?;
                let kind = match self
                    .c
                    .expect_ident("`max`, `sum`, `min`, `argmax` or `argmin`")?
                    .as_str()
                {
                    "max" => ReduceKind::Max,
                    "sum" => ReduceKind::Sum,
                    "min" => ReduceKind::Min,
                    "argmax" => ReduceKind::ArgMax,
                    "argmin" => ReduceKind::ArgMin,
                    other => return Err(self.c.error(format!("unknown reduction `{other}`"))),
                };
                self.c.expect_kw("axis", "after the reduction kind")?;
                let axis = self.c.expect_u32("an axis (0 or 1)")? as u8;
                let value = if self.c.eat_kw("of") {
                    Some(self.texpr()?)
                } else {
                    None
                };
                let scratch = if self.c.eat_kw("scratch") {
                    Some(self.buffer_ref()?)
                } else {
                    None
                };
                let cluster = self.c.eat_kw("cluster");
                let pull = cluster && self.c.eat_kw("pull");
                let cluster_scratch = if cluster && self.c.is_punct("@") {
                    Some(self.buffer_ref()?)
                } else {
                    None
                };
                let cluster_bar = if cluster && self.c.eat_kw("bar") {
                    Some(self.barrier_ref_name()?)
                } else {
                    None
                };
                Op::Reduce {
                    dst,
                    src,
                    value,
                    kind,
                    axis,
                    scratch,
                    again: self.c.eat_kw("again"),
                    cluster,
                    pull,
                    cluster_scratch,
                    cluster_bar,
                }
            }
            "warp_vote" => {
                let k = self.c.expect_ident("`any`, `all` or `ballot`")?;
                let Some(kind) = VoteKind::ALL.into_iter().find(|v| v.name() == k) else {
                    return Err(self.c.error(format!("unknown vote `{k}`")));
                };
                let dst = self.var_ref()?;
                self.c.expect_punct("<-", "before the vote's predicate")?;
                let pred = if self.c.is_punct("@") {
                    let src = self.buffer_ref()?;
                    self.c.expect_kw("of", "after the vote's tile")?;
                    VotePred::Tile {
                        src,
                        value: self.texpr()?,
                    }
                } else {
                    VotePred::Scalar(self.expr()?)
                };
                Op::WarpVote { dst, kind, pred }
            }
            _ => return Ok(None),
        }))
    }
}
