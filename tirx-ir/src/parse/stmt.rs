//! Parsing of statements: blocks, `let`/assignments, `if`/`for`/`loop`/`scope` blocks,
//! instructions (`inst`) and the tile and synchronisation ops (`op`), each through the end
//! of its line.
//!
//! Invariant: every form here is the exact inverse of its printer in `print.rs`.

use super::lexer::Tok;
use super::{ParseError, Parser};
use crate::ir::*;

impl Parser<'_> {
    /// `{`, line end, statements, `}` (the caller ends the line after it).
    pub(super) fn body(&mut self, ctx: &str) -> Result<Block, ParseError> {
        self.c.expect_punct("{", ctx)?;
        self.c.expect_eol("after `{`")?;
        let mut stmts = Vec::new();
        loop {
            self.c.skip_newlines();
            match self.c.peek() {
                Tok::Punct("}") => {
                    self.c.bump();
                    return Ok(stmts);
                }
                Tok::Eof => return Err(self.c.expected("`}` to close the block")),
                _ => stmts.push(self.stmt()?),
            }
        }
    }

    /// One statement, through the end of its line.
    fn stmt(&mut self) -> Result<Stmt, ParseError> {
        let word = match self.c.peek() {
            Tok::Ident(w) => w.clone(),
            Tok::Var(_) => String::new(),
            _ => return Err(self.c.expected("a statement")),
        };
        let kind = match word.as_str() {
            "" | "let" => {
                let is_let = self.c.eat_kw("let");
                let var = self.var_ref()?;
                self.c.expect_punct("=", "after the variable")?;
                let value = self.expr()?;
                if is_let {
                    StmtKind::Let { var, value }
                } else {
                    StmtKind::Assign { var, value }
                }
            }
            "if" | "for" | "loop" | "scope" => return self.block_stmt(&word),
            "op" => {
                self.c.bump();
                StmtKind::Op(self.op()?)
            }
            "inst" => {
                self.c.bump();
                StmtKind::Inst(self.inst()?)
            }
            w => {
                return Err(self.c.error(format!(
                    "expected a statement (`let`, `%n = …`, `if`, `for`, `loop`, `scope`, `op` or `inst`), found `{w}`"
                )));
            }
        };
        let span = self.c.opt_span()?;
        self.c.expect_eol("after the statement")?;
        Ok(Stmt { kind, span })
    }

    /// `if`, `for`, `loop` and `scope`, through the end of the closing line.
    fn block_stmt(&mut self, word: &str) -> Result<Stmt, ParseError> {
        self.c.bump();
        let ctx = format!("after {word}");
        let (kind, span) = match word {
            "if" => {
                let cond = self.expr()?;
                let span = self.c.opt_span()?;
                let then_body = self.body(&ctx)?;
                let else_body = if self.c.eat_kw("else") {
                    self.body("after else")?
                } else {
                    Vec::new()
                };
                (
                    StmtKind::If {
                        cond,
                        then_body,
                        else_body,
                    },
                    span,
                )
            }
            "for" => {
                let var = self.var_ref()?;
                self.c.expect_punct("=", "after the loop variable")?;
                let start = self.expr()?;
                self.c.expect_kw("to", "after the loop start")?;
                let end = self.expr()?;
                self.c.expect_kw("step", "after the loop bound")?;
                let step = self.expr()?;
                let span = self.c.opt_span()?;
                (
                    StmtKind::For {
                        var,
                        start,
                        end,
                        step,
                        body: self.body(&ctx)?,
                    },
                    span,
                )
            }
            "loop" => {
                let span = self.c.opt_span()?;
                let body = self.body(&ctx)?;
                self.c.expect_kw("until", "after the loop body")?;
                (
                    StmtKind::Loop {
                        body,
                        until: self.var_ref()?,
                    },
                    span,
                )
            }
            _ => {
                let scope = self.scope()?;
                let span = self.c.opt_span()?;
                (
                    StmtKind::Scope {
                        scope,
                        body: self.body(&ctx)?,
                    },
                    span,
                )
            }
        };
        self.c.expect_eol(&format!("after the `{word}` block"))?;
        Ok(Stmt { kind, span })
    }

    /// `cta`, `warpgroup A..=B`, `warp A..=B`, `thread N` or `elect`.
    fn scope(&mut self) -> Result<Scope, ParseError> {
        let at = self.c.pos();
        let word = self
            .c
            .expect_ident("a scope (`cta`, `warpgroup`, `warp`, `thread` or `elect`)")?;
        Ok(match word.as_str() {
            "cta" => Scope::Cta,
            "elect" => Scope::Elect,
            "leader" => Scope::Leader,
            "thread" => Scope::Thread(self.c.expect_u32("a thread index")?),
            "warp" | "warpgroup" => {
                let first = self.c.expect_u32(&format!("the first {word}"))?;
                self.c
                    .expect_punct("..=", &format!("in the {word} range (`{word} 0..=1`)"))?;
                let last = self.c.expect_u32(&format!("the last {word}"))?;
                if word == "warp" {
                    Scope::Warp(first, last)
                } else {
                    Scope::Warpgroup(first, last)
                }
            }
            _ => {
                self.c.reset(at);
                return Err(self
                    .c
                    .expected("a scope (`cta`, `warpgroup`, `warp`, `thread` or `elect`)"));
            }
        })
    }

    /// `[@GUARD] [DSTS =] OPCODE [SRCS]` after `inst`.
    fn inst(&mut self) -> Result<Inst, ParseError> {
        let guard = if self.c.eat_punct("@") {
            Some(self.operand()?)
        } else {
            None
        };
        // Destinations are present exactly when an operand list is followed by `=`.
        let at = self.c.pos();
        let dsts = match self.operands() {
            Ok(d) if !d.is_empty() && self.c.eat_punct("=") => d,
            _ => {
                self.c.reset(at);
                Vec::new()
            }
        };
        let opcode = self.c.expect_name("an opcode")?;
        let srcs = self.operands()?;
        Ok(Inst {
            opcode,
            dsts,
            srcs,
            guard,
        })
    }

    /// The op after `op`.
    fn op(&mut self) -> Result<Op, ParseError> {
        let at = self.c.pos();
        let name = self.c.expect_ident("an op name")?;
        if let Some(op) = self.reg_tile_op(&name)? {
            return Ok(op);
        }
        match self.tile_op(&name)? {
            Some(op) => Ok(op),
            None => self.sync_op(&name).transpose().unwrap_or_else(|| {
                self.c.reset(at);
                Err(self.c.error(format!("unknown op `{name}`")))
            }),
        }
    }

    /// The tile and pipeline ops (`None`: `name` is not one of them).
    fn tile_op(&mut self, name: &str) -> Result<Option<Op>, ParseError> {
        Ok(Some(match name {
            "copy" => {
                let dst = self.tile()?;
                self.c.expect_punct("<-", "after the copy's destination")?;
                let src = self.tile()?;
                let atomic = if self.c.eat_kw("atomic") {
                    Some(self.atomic()?)
                } else {
                    None
                };
                let bar = if self.c.eat_kw("bar") {
                    Some(self.bar_ref()?)
                } else {
                    None
                };
                let multicast = if self.c.eat_kw("multicast") {
                    Some(self.expr()?)
                } else {
                    None
                };
                let scale = if self.c.eat_kw("alpha") {
                    let alpha = self.c.expect_name("a scalar argument after `alpha`")?;
                    let beta = if self.c.eat_kw("beta") {
                        Some(self.c.expect_name("a scalar argument after `beta`")?)
                    } else {
                        None
                    };
                    Some(crate::ir::Scale { alpha, beta })
                } else {
                    None
                };
                let pair = self.pair()?;
                Op::Copy {
                    dst,
                    src,
                    bar,
                    multicast,
                    scale,
                    variant: self.variant()?,
                    pair,
                    atomic,
                }
            }
            "mma" => {
                let acc = self.tile()?;
                self.c.expect_punct("<-", "after the accumulator")?;
                let a = self.tile()?;
                self.c.expect_punct(",", "between the mma operands")?;
                let b = self.tile()?;
                self.c.expect_kw("accumulate", "after the mma operands")?;
                let accumulate = self.expr()?;
                let scale = if self.c.eat_kw("scale") {
                    let sa = self.tile()?;
                    self.c.expect_punct(",", "between the scale operands")?;
                    let b = self.tile()?;
                    Some(Box::new(BlockScale {
                        a: sa,
                        b,
                        mxf4: self.c.eat_kw("mxf4"),
                    }))
                } else {
                    None
                };
                let saturate = self.c.eat_kw("saturate");
                let pair = self.pair()?;
                Op::Mma {
                    acc,
                    a,
                    b,
                    accumulate,
                    pair,
                    scale,
                    saturate,
                    variant: self.variant()?,
                }
            }
            "producer_acquire" | "consumer_wait" => {
                let pipe = self.pipeline_ref()?;
                self.c.expect_kw("iter", "after the pipeline")?;
                let iter = self.expr()?;
                self.c.expect_punct("->", "before the stage variable")?;
                let stage = self.var_ref()?;
                if name == "producer_acquire" {
                    Op::ProducerAcquire { pipe, iter, stage }
                } else {
                    Op::ConsumerWait { pipe, iter, stage }
                }
            }
            "consumer_release" => {
                let pipe = self.pipeline_ref()?;
                self.c.expect_kw("stage", "after the pipeline")?;
                Op::ConsumerRelease {
                    pipe,
                    stage: self.expr()?,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// The barrier, fence and wait ops (`None`: `name` is not one of them).
    fn sync_op(&mut self, name: &str) -> Result<Option<Op>, ParseError> {
        Ok(Some(match name {
            "mbar_init" => Op::MbarInit {
                bar: self.barrier_ref_name()?,
            },
            "mbar_arrive" => Op::MbarArrive {
                bar: self.bar_ref()?,
            },
            "mbar_arrive_expect_tx" => Op::MbarArriveExpectTx {
                bar: self.bar_ref()?,
                bytes: self.opt_u32("bytes")?,
            },
            "mbar_wait" => {
                let bar = self.bar_ref()?;
                self.c.expect_kw("parity", "after the barrier")?;
                Op::MbarWait {
                    bar,
                    parity: self.expr()?,
                }
            }
            "tma_wait_group" => {
                let n = self.c.expect_u32("the number of groups left pending")?;
                Op::TmaWaitGroup {
                    n,
                    read: self.c.eat_kw("read"),
                }
            }
            "tmem_alloc" => Op::TmemAlloc {
                buf: self.buffer_ref()?,
                pair: self.pair()?,
            },
            "tmem_dealloc" => Op::TmemDealloc {
                buf: self.buffer_ref()?,
                pair: self.pair()?,
            },
            "tmem_relinquish" => Op::TmemRelinquish { pair: self.pair()? },
            "tcgen05_commit" => Op::Tcgen05Commit {
                bar: self.bar_ref()?,
                pair: self.pair()?,
                multicast: if self.c.eat_kw("multicast") {
                    Some(self.c.expect_u32("the commit's multicast mask")?)
                } else {
                    None
                },
            },
            "clc_try_cancel" => {
                let resp = self.tile()?;
                self.c.expect_kw("bar", "after the response buffer")?;
                Op::ClcTryCancel {
                    resp,
                    bar: self.bar_ref()?,
                    multicast: self.c.eat_kw("multicast"),
                }
            }
            "tcgen05_shift" => Op::Tcgen05Shift {
                tile: self.tile()?,
                pair: self.pair()?,
            },
            "load_scalar" => {
                let TileRef::Global {
                    tensor,
                    coords: index,
                    elements: None,
                } = self.tile()?
                else {
                    return Err(self.c.error("expected `global tensor[index, …]`"));
                };
                self.c.expect_punct("->", "before the loaded variable")?;
                Op::LoadScalar {
                    dst: self.var_ref()?,
                    tensor,
                    index,
                    oob_zero: self.c.eat_kw("oob_zero"),
                }
            }
            "clc_is_canceled" => {
                let resp = self.tile()?;
                self.c.expect_punct("->", "before the predicate variable")?;
                Op::ClcIsCanceled {
                    resp,
                    dst: self.var_ref()?,
                }
            }
            "clc_first_cta" => {
                let resp = self.tile()?;
                self.c
                    .expect_punct("->", "before the coordinate variables")?;
                let mut dsts = vec![self.var_ref()?];
                while self.c.eat_punct(",") {
                    dsts.push(self.var_ref()?);
                }
                Op::ClcFirstCta { resp, dsts }
            }
            "setmaxnreg" => {
                let inc = if self.c.eat_kw("inc") {
                    true
                } else if self.c.eat_kw("dec") {
                    false
                } else {
                    return Err(self.c.expected("`inc` or `dec`"));
                };
                Op::SetMaxNReg {
                    inc,
                    count: self.c.expect_u32("the register count")?,
                }
            }
            "wgmma_wait" => Op::WgmmaWait {
                n: self.c.expect_u32("the number of groups left pending")?,
            },
            "fence_mbarrier_init" => Op::FenceMbarrierInit,
            "cluster_sync" => Op::ClusterSync,
            "named_barrier" | "named_barrier_arrive" => {
                let id = self.expr()?;
                self.c.expect_kw("threads", "after the barrier id")?;
                Op::NamedBarrier {
                    id,
                    threads: self.c.expect_u32("the thread count")?,
                    arrive: name == "named_barrier_arrive",
                }
            }
            "fence_proxy_async" => Op::FenceProxyAsync,
            "grid_dep_wait" => Op::GridDepWait,
            "grid_dep_launch" => Op::GridDepLaunch,
            "sync_threads" => Op::SyncThreads,
            "tma_commit_group" => Op::TmaCommitGroup,
            "tcgen05_fence_before" => Op::Tcgen05FenceBefore,
            "tcgen05_fence_after" => Op::Tcgen05FenceAfter,
            "wgmma_fence" => Op::WgmmaFence,
            "wgmma_commit" => Op::WgmmaCommit,
            _ => return Ok(None),
        }))
    }

    /// An optional `cta_group 2` clause (the CTA pair); absent is `cta_group::1`.
    /// The clause after `atomic`: `OP SCOPE SEM [old TILE]` (`add gpu relaxed`).
    fn atomic(&mut self) -> Result<crate::ir::Atomic, ParseError> {
        use crate::ir::{AtomicOp, MemScope, MemSem};
        fn word<T>(
            p: &mut Parser<'_>,
            what: &str,
            from: fn(&str) -> Option<T>,
            all: &[&str],
        ) -> Result<T, ParseError> {
            let n = p.c.expect_name(what)?;
            from(&n).ok_or_else(|| {
                p.c.error(format!(
                    "unknown {what} `{n}`; expected one of {}",
                    all.join(", ")
                ))
            })
        }
        let ops: Vec<&str> = AtomicOp::ALL.iter().map(|v| v.name()).collect();
        let scopes: Vec<&str> = MemScope::ALL.iter().map(|v| v.name()).collect();
        let sems: Vec<&str> = MemSem::ALL.iter().map(|v| v.name()).collect();
        let op = word(self, "atomic operation", AtomicOp::from_name, &ops)?;
        let scope = word(self, "memory scope", MemScope::from_name, &scopes)?;
        let sem = word(self, "memory semantics", MemSem::from_name, &sems)?;
        let old = if self.c.eat_kw("old") {
            Some(self.tile()?)
        } else {
            None
        };
        Ok(crate::ir::Atomic {
            op,
            scope,
            sem,
            old,
        })
    }

    fn pair(&mut self) -> Result<bool, ParseError> {
        if !self.c.eat_kw("cta_group") {
            return Ok(false);
        }
        match self.c.expect_u32("the cta_group")? {
            2 => Ok(true),
            g => Err(self
                .c
                .error(format!("cta_group {g}: only `cta_group 2` is written"))),
        }
    }

    /// An optional `variant NAME` clause: a name of the op's variants (`V::ALL`), else an
    /// error at the name listing them.
    fn variant<V: VariantId>(&mut self) -> Result<Option<V>, ParseError> {
        if !self.c.eat_kw("variant") {
            return Ok(None);
        }
        let at = self.c.error(String::new());
        let name = self.c.expect_name("a variant name")?;
        V::from_name(&name).map(Some).ok_or_else(|| {
            let known: Vec<&str> = V::ALL.iter().map(|v| v.name()).collect();
            ParseError {
                message: format!(
                    "no {} variant named `{name}`; known: {}",
                    V::OP,
                    known.join(", ")
                ),
                ..at
            }
        })
    }
}
