//! Op statements: calls and method calls → `Op`.
//!
//! - Calls: `copy`, `mma`, `sync_threads` (the compiler picks the variant) and the namespaced
//!   forms `tma::…`, `wgmma::…`, `tcgen05::…`, `fence::…` (the namespace forces the variant).
//! - Methods on barriers (`arrive`, `expect_tx`, `wait`) and pipelines (`consumer_release`, and
//!   `producer_acquire` / `consumer_wait`, which `let` binds to the stage).
//!
//! Every unknown name lists the names allowed at that place. [`CallArgs`] (positional and
//! `name = value` arguments, checked against a usage string) is shared with `operand.rs` and
//! `decl.rs`.

use super::stmt::strip_parens;
use super::vocab::{self, Id, Kind, Word};
use super::{Fail, Local, Lowerer, Res, did_you_mean};
use crate::error::span_range;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Expr as SExpr, Ident, Token};
use tirx_ir::{
    BinOp, BlockScale, CopyVariant, Expr, MmaVariant, Op, ScalarType, Scale, Stmt, StmtKind,
    TileRef,
};

/// A call's arguments split into positional ones and `name = value` ones.
pub(crate) struct CallArgs<'e> {
    pub(crate) pos: Vec<&'e SExpr>,
    pub(crate) named: Vec<(&'e Ident, &'e SExpr)>,
}

impl<'e> CallArgs<'e> {
    /// The value of named argument `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&'e SExpr> {
        self.named.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl Lowerer<'_> {
    /// Splits and checks `args` against `usage` (e.g. `tma::load(dst, src, bar)`): exactly
    /// `arity` positional arguments, named ones only from `allowed`.
    pub(crate) fn call_args<'e>(
        &mut self,
        args: &'e Punctuated<SExpr, Token![,]>,
        at: &impl ToTokens,
        usage: &str,
        arity: std::ops::RangeInclusive<usize>,
        allowed: &[&str],
    ) -> Res<CallArgs<'e>> {
        let op = usage.split('(').next().unwrap_or(usage);
        let mut out = CallArgs {
            pos: Vec::new(),
            named: Vec::new(),
        };
        for a in args {
            let SExpr::Assign(assign) = a else {
                out.pos.push(a);
                continue;
            };
            let Some(key) = crate::args::path_ident(&assign.left) else {
                return Err(self.fail(&assign.left, "expected `name = value`"));
            };
            if !allowed.iter().any(|k| key == k) {
                let expected = if allowed.is_empty() {
                    format!("`{op}` takes no named arguments")
                } else {
                    format!("expected {}", allowed.join(", "))
                };
                return Err(self.fail(
                    key,
                    format!("unknown argument `{key}` of `{op}`; {expected}"),
                ));
            }
            if out.named.iter().any(|(k, _)| *k == key) {
                return Err(self.fail(key, format!("argument `{key}` given twice")));
            }
            out.named.push((key, &assign.right));
        }
        if !arity.contains(&out.pos.len()) {
            let n = if arity.start() == arity.end() {
                arity.start().to_string()
            } else {
                format!("{} to {}", arity.start(), arity.end())
            };
            let found = out.pos.len();
            return Err(self.fail(
                at,
                format!("`{op}` takes {n} argument(s): `{usage}`; found {found}"),
            ));
        }
        Ok(out)
    }

    /// Checks `args` against word `w`'s arity, named arguments and usage.
    pub(crate) fn word_args<'e>(
        &mut self,
        w: &Word,
        args: &'e Punctuated<SExpr, Token![,]>,
        at: &impl ToTokens,
    ) -> Res<CallArgs<'e>> {
        self.call_args(args, at, w.usage, w.arity.clone(), w.named)
    }

    /// An op call statement (`copy(…)`, `tma::load(…)`, …).
    pub(crate) fn op_call(&mut self, c: &syn::ExprCall) -> Res<Stmt> {
        let SExpr::Path(p) = strip_parens(&c.func) else {
            return Err(self.fail(&c.func, "expected an op call such as `copy(dst, src)`"));
        };
        if let Some(seg) = p.path.segments.iter().find(|s| !s.arguments.is_none()) {
            let name = &seg.ident;
            if vocab::lookup(None, &name.to_string(), &[Kind::Decl]).is_some() {
                return Err(self.fail(
                    &c.func,
                    format!("`{name}` declares something; bind it: `let x = {name}::<…>(…);`"),
                ));
            }
            return Err(self.fail(&seg.arguments, "generic arguments are only for declarations (`smem::<bf16>`, `pipeline::<STAGES>`)"));
        }
        let names: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let span = self
            .spans
            .intern_range((span_range(&c.func).0, c.paren_token.span.close()));
        let word = match names.as_slice() {
            [n] => vocab::lookup(None, n, &[Kind::Op]).ok_or_else(|| self.unknown_plain(n, c)),
            [ns, n] => vocab::lookup(Some(ns), n, &[Kind::Op])
                .ok_or_else(|| self.unknown_namespaced(ns, n, c)),
            _ => return Err(self.fail(&c.func, format!("unknown op `{}`", names.join("::")))),
        }?;
        let op = self.op(word, c)?;
        if let Some(tensor) = self.mn_tensor_of(&op) {
            return self.mn_load(op, &tensor, span, c);
        }
        if let Some((tile, tensor, stored)) = self.mn_tile_of_k_tensor(&op) {
            let what = "an MN-major tile (`major = mn`, stored as 64-element chunks an MMA reads transposed)";
            let why = if stored {
                format!(
                    "a TMA store writes boxes untransposed, so its bytes would land at `{tensor}`'s coordinates transposed; stage the output in a K-major tile (no `major = mn`)"
                )
            } else {
                format!(
                    "TMA copies boxes without transposing, so it is only filled from an MN-major tensor (`#[major(mn)]`), and `{tensor}` is K-major; load `{tensor}` into a K-major tile"
                )
            };
            return Err(self.fail(c, format!("`{tile}` is {what}: {why}")));
        }
        Ok(Stmt::at(StmtKind::Op(op), span))
    }

    /// The MN-major tensor (`#[major(mn)]` in this config) a copy names, if any.
    fn mn_tensor_of(&self, op: &Op) -> Option<String> {
        let Op::Copy { dst, src, .. } = op else {
            return None;
        };
        [dst, src].into_iter().find_map(|t| match t {
            TileRef::Global { tensor, .. } => self
                .def
                .params
                .iter()
                .find(|p| p.ident == tensor.as_str())
                .filter(|p| p.major_in(self.config) == tirx_ir::Major::MN)
                .map(|_| tensor.clone()),
            _ => None,
        })
    }

    /// An MN-major shared tile, the K-major tensor a copy moves it from or to, and whether the
    /// copy stores it, if the copy names both: the chunked bytes are not the tensor's box in
    /// either direction.
    fn mn_tile_of_k_tensor(&self, op: &Op) -> Option<(String, String, bool)> {
        let Op::Copy { dst, src, .. } = op else {
            return None;
        };
        let tensor = [dst, src].into_iter().find_map(|t| match t {
            TileRef::Global { tensor, .. } => Some(tensor.clone()),
            _ => None,
        })?;
        let tile = [dst, src].into_iter().find_map(|t| match t {
            TileRef::Buf { buf, .. } => Some(&self.kernel.buffers[*buf]),
            _ => None,
        })?;
        let stored = matches!(dst, TileRef::Global { .. });
        (tile.layout.major == tirx_ir::Major::MN).then(|| (tile.name.clone(), tensor, stored))
    }

    /// `tma::load(tile, t.tile(i, j), bar)` with `t` MN-major: the tile must be an MN-major
    /// buffer stage, stored as `[chunks, K, span]`; the load becomes one `[K, span]` box per
    /// chunk, `for c in 0..chunks { tile[c] ← t's stored tile (…, j, i · chunks + c) }` — a loop
    /// of constant bounds, so its boxes count toward the barrier's one expect-tx. Any other
    /// copy of an MN-major tensor is refused: TMA moves boxes, it does not transpose them.
    fn mn_load(
        &mut self,
        op: Op,
        tensor: &str,
        span: tirx_ir::Span,
        c: &syn::ExprCall,
    ) -> Res<Stmt> {
        let Op::Copy {
            dst: TileRef::Buf { buf, index },
            src: TileRef::Global {
                coords, elements, ..
            },
            bar,
            multicast,
            scale: None,
            variant: Some(variant),
            pair,
            atomic: None,
        } = op
        else {
            return Err(self.fail(
                c,
                format!(
                    "`{tensor}` is MN-major (`#[major(mn)]`): it is only read, by `tma::load(tile, {tensor}.tile(i, j), bar)` into an MN-major tile"
                ),
            ));
        };
        let b = &self.kernel.buffers[buf];
        let stored = b.layout.shape.get(index.len()..).unwrap_or(&[]).to_vec();
        let (name, major) = (b.name.clone(), b.layout.major);
        if variant != CopyVariant::TmaLoad || major != tirx_ir::Major::MN || stored.len() != 3 {
            let why = if variant != CopyVariant::TmaLoad {
                "only `tma::load` reads it".to_string()
            } else if major != tirx_ir::Major::MN {
                format!(
                    "`{name}` is K-major; TMA copies boxes without transposing, so declare it `major = mn` (or the same majorness entry as `{tensor}`)"
                )
            } else {
                format!(
                    "name one `[MN, K]` tile of `{name}`: index its leading dimensions (`{name}[s]`), {} of them here",
                    b.layout.shape.len().saturating_sub(3)
                )
            };
            return Err(self.fail(c, format!("`{tensor}` is MN-major (`#[major(mn)]`): {why}")));
        }
        // Leading coordinates (batch, head) stay; the last two are swapped as stored.
        let mut coords = coords;
        let (Some(j), Some(i)) = (coords.pop(), coords.pop()) else {
            return Err(self.fail(
                c,
                format!("`{tensor}` is MN-major: `tile` takes at least 2 coordinates"),
            ));
        };
        let chunks = stored[0];
        let var = self.kernel.new_var("chunk", ScalarType::U32);
        // Chunk `c` of the tile starts at MN tile coordinate `chunks·i + c`, or, at element
        // offsets (`v.at(…)`), at element `i + c·span`.
        let chunk_at = if elements.is_some() {
            Expr::bin(
                BinOp::Add,
                i,
                Expr::bin(BinOp::Mul, Expr::Var(var), Expr::u32(stored[2])),
            )
        } else {
            let first = Expr::bin(BinOp::Mul, Expr::u32(chunks), i);
            Expr::bin(BinOp::Add, first, Expr::Var(var))
        };
        let load = Op::Copy {
            dst: TileRef::Buf {
                buf,
                index: index.into_iter().chain([Expr::Var(var)]).collect(),
            },
            src: TileRef::Global {
                tensor: tensor.to_string(),
                coords: coords.into_iter().chain([j, chunk_at]).collect(),
                elements,
            },
            bar,
            multicast,
            scale: None,
            variant: Some(variant),
            pair,
            atomic: None,
        };
        Ok(Stmt::at(
            StmtKind::For {
                var,
                start: Expr::u32(0),
                end: Expr::u32(chunks),
                step: Expr::u32(1),
                body: vec![Stmt::at(StmtKind::Op(load), span)],
            },
            span,
        ))
    }

    /// The op word `w` applied to `c`'s arguments.
    fn op(&mut self, w: &'static Word, c: &syn::ExprCall) -> Res<Op> {
        let args = self.word_args(w, &c.args, c)?;
        Ok(match w.id {
            Id::Copy => {
                let variant = self.transpose_variant(&args)?;
                return self.copy_op(&args, variant);
            }
            Id::TmaLoad => return self.copy_op(&args, Some(CopyVariant::TmaLoad)),
            Id::TmaStore => return self.copy_op(&args, Some(CopyVariant::TmaStore)),
            Id::TmaReduceAdd
            | Id::TmaReduceMin
            | Id::TmaReduceMax
            | Id::AtomicAdd
            | Id::AtomicMin
            | Id::AtomicMax => return self.atomic_op(w, &args, c),
            Id::Mma => return self.mma_op(&args, None),
            Id::WgmmaMma => return self.mma_op(&args, Some(MmaVariant::Wgmma)),
            Id::Tcgen05Mma => return self.mma_op(&args, Some(MmaVariant::Tcgen05)),
            Id::Tcgen05Cp => return self.copy_op(&args, Some(CopyVariant::Tcgen05Cp)),
            Id::SyncThreads => Op::SyncThreads,
            Id::ClusterSync => Op::ClusterSync,
            Id::NamedBarrier | Id::NamedBarrierArrive => {
                let id = self.int(args.pos[0]);
                let threads = self.const_u32(args.pos[1], "the number of threads");
                let (id, threads) = (id?, threads?);
                if threads == 0 || !threads.is_multiple_of(32) {
                    return Err(self.fail(args.pos[1], format!("a named barrier counts whole warps: {threads} is not a positive multiple of 32")));
                }
                Op::NamedBarrier {
                    id,
                    threads,
                    arrive: w.id == Id::NamedBarrierArrive,
                }
            }
            Id::TmaCommitGroup => Op::TmaCommitGroup,
            Id::TmaWaitGroup => Op::TmaWaitGroup {
                n: self.count(&args)?,
                read: false,
            },
            Id::TmaWaitGroupRead => Op::TmaWaitGroup {
                n: self.count(&args)?,
                read: true,
            },
            Id::WgmmaFence => Op::WgmmaFence,
            Id::WgmmaCommit => Op::WgmmaCommit,
            Id::WgmmaWait => Op::WgmmaWait {
                n: self.count(&args)?,
            },
            Id::SetMaxNRegInc | Id::SetMaxNRegDec => Op::SetMaxNReg {
                inc: w.id == Id::SetMaxNRegInc,
                count: self.count(&args)?,
            },
            Id::Tcgen05Commit => self.commit_op(&args)?,
            Id::Tcgen05Alloc => Op::TmemAlloc {
                buf: self.tmem_buffer(args.pos[0], w.name)?,
                pair: self.cta_group(&args)?,
            },
            Id::Tcgen05Dealloc => Op::TmemDealloc {
                buf: self.tmem_buffer(args.pos[0], w.name)?,
                pair: self.cta_group(&args)?,
            },
            Id::Tcgen05Shift => Op::Tcgen05Shift {
                tile: self.shift_tile(args.pos[0])?,
                pair: self.cta_group(&args)?,
            },
            Id::Tcgen05Relinquish => Op::TmemRelinquish {
                pair: self.cta_group(&args)?,
            },
            Id::Tcgen05FenceBefore => Op::Tcgen05FenceBefore,
            Id::Tcgen05FenceAfter => Op::Tcgen05FenceAfter,
            Id::ClcTryCancel => return self.clc_try_cancel(&args),
            Id::ClcIsCanceled | Id::ClcFirstCta => return Err(self.clc_unbound(w, c)),
            Id::WarpAny | Id::WarpAll | Id::WarpBallot => return Err(self.vote_unbound(w, c)),
            Id::FenceProxyAsync => Op::FenceProxyAsync,
            Id::FenceMbarrierInit => Op::FenceMbarrierInit,
            Id::GridDependencyWait => Op::GridDepWait,
            Id::GridLaunchDependents => Op::GridDepLaunch,
            // `lookup` was asked for ops only.
            Id::StaticAssert
            | Id::Smem
            | Id::Tmem
            | Id::Regs
            | Id::Mbarrier
            | Id::Pipeline
            | Id::ClcResponse
            | Id::Cdiv
            | Id::Min
            | Id::Max
            | Id::Arrive
            | Id::ExpectTx
            | Id::Wait
            | Id::ConsumerRelease
            | Id::ProducerAcquire
            | Id::ConsumerWait
            | Id::Cta
            | Id::NCta
            | Id::CtaRank
            | Id::Tid
            | Id::WarpIndex
            | Id::LaneIndex
            | Id::Exp2Approx
            | Id::Exp2Poly3
            | Id::Log2Approx
            | Id::RsqrtApprox
            | Id::RcpApprox
            | Id::Rcp
            | Id::Sqrt
            | Id::TanhApprox
            | Id::ToBits
            | Id::FromBits
            | Id::Abs
            | Id::Fma
            | Id::Select
            | Id::Cast
            | Id::RowIndex
            | Id::ColIndex
            | Id::ReduceMax
            | Id::ReduceSum
            | Id::ReduceMin
            | Id::ArgMax
            | Id::ArgMin
            | Id::Gather => {
                return Err(self.fail(&c.func, format!("`{}` is not an op", w.full_name())));
            }
        })
    }

    /// An unknown plain callee: a declaration or scalar function in the wrong place, or a
    /// typo (with the ops and, in a module, its tile functions as hints).
    fn unknown_plain(&mut self, name: &str, c: &syn::ExprCall) -> Fail {
        if vocab::lookup(None, name, &[Kind::Decl]).is_some() {
            return self.fail(
                &c.func,
                format!("`{name}` declares something; bind it: `let x = {name}(…);`"),
            );
        }
        if vocab::lookup(None, name, &[Kind::TileFn]).is_some() {
            return self.fail(
                &c.func,
                format!(
                    "`{name}` computes on register tiles; bind its value: `let y = {name}(…);`"
                ),
            );
        }
        if vocab::lookup(None, name, &[Kind::Function]).is_some() {
            return self.fail(
                &c.func,
                format!("`{name}` is a scalar function; use its value in a `let` or an argument"),
            );
        }
        let all = vocab::all_ops();
        let spaces: Vec<String> = vocab::namespaces()
            .iter()
            .map(|ns| format!("{ns}::…"))
            .collect();
        let hint = if self.fns.names().is_empty() {
            self.or_own_fn(did_you_mean(name, &all))
        } else {
            self.tile_fn_hint(name, &all)
        };
        self.fail(
            &c.func,
            format!(
                "unknown op `{name}`; ops are {}, {}{hint}",
                vocab::names(Kind::Op).join(", "),
                spaces.join(", ")
            ),
        )
    }

    fn unknown_namespaced(&mut self, ns: &str, name: &str, c: &syn::ExprCall) -> Fail {
        let ops = vocab::namespace_ops(ns);
        if ops.is_empty() {
            self.fail(
                &c.func,
                format!(
                    "unknown op namespace `{ns}` in `{ns}::{name}`; namespaces are {}",
                    vocab::namespaces().join(", ")
                ),
            )
        } else {
            self.fail(
                &c.func,
                format!("unknown op `{ns}::{name}`; {ns} ops are {}", ops.join(", ")),
            )
        }
    }

    /// The one build-time count of `wait_group(n)`, `wgmma::wait(n)`, `setmaxnreg::inc(n)`.
    fn count(&mut self, args: &CallArgs) -> Res<u32> {
        self.const_u32(args.pos[0], "the number of pending groups")
    }

    /// `copy(dst, src[, bar])`, `tma::load(dst, src, bar)`, `tma::store(dst, src)`.
    fn copy_op(&mut self, args: &CallArgs, variant: Option<CopyVariant>) -> Res<Op> {
        // The generic `copy` also scales an accumulator epilogue: `alpha = a, beta = b` (the
        // vocabulary allows those named arguments only there).
        let dst = self.tile_ref(args.pos[0]);
        let src = self.tile_ref(args.pos[1]);
        let bar = args.pos.get(2).map(|b| self.bar_ref(b)).transpose();
        let multicast = args.get("multicast").map(|m| self.int(m)).transpose();
        let alpha = args.get("alpha").map(|e| self.scalar_arg(e)).transpose();
        let beta = args.get("beta").map(|e| self.scalar_arg(e)).transpose();
        let scale = match (alpha?, beta?) {
            (Some(alpha), beta) => Some(Scale { alpha, beta }),
            (None, None) => None,
            (None, Some(_)) => {
                let at = args.get("beta");
                return Err(self.fail(
                    &at,
                    "`beta` scales the destination's old contents and needs `alpha` too \
                     (`alpha = one` with a scalar parameter `one` set to 1.0)",
                ));
            }
        };
        // `tma::load(..., cta_group = 2)`: the pair's load, completing on the even CTA's barrier.
        // `tcgen05::cp(..., cta_group = 2)`: the pair's copy into both CTAs' tensor memory.
        let pair = if matches!(variant, Some(CopyVariant::TmaLoad | CopyVariant::Tcgen05Cp)) {
            self.cta_group(args)?
        } else {
            false
        };
        Ok(Op::Copy {
            dst: dst?,
            src: src?,
            bar: bar?,
            multicast: multicast?,
            scale,
            variant,
            pair,
            atomic: None,
        })
    }

    /// `copy(.., transpose = true)`: the `.trans` form of `ldmatrix` (registers ← a shared
    /// tile holding their transpose) or `stmatrix` (a shared tile ← the registers'
    /// transpose), by the sides' memories; `None` without it (or with `false`).
    fn transpose_variant(&mut self, args: &CallArgs) -> Res<Option<CopyVariant>> {
        let Some(t) = args.get("transpose") else {
            return Ok(None);
        };
        match t {
            SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) if !b.value => return Ok(None),
            SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(_),
                ..
            }) => {}
            _ => return Err(self.fail(t, "`transpose` takes `true` or `false`")),
        }
        if let Some((k, _)) = args.named.iter().find(|(k, _)| *k != "transpose") {
            return Err(self.fail(
                *k,
                format!("a transposing copy (`transpose = true`) takes no `{k}`"),
            ));
        }
        use tirx_ir::ir::Space;
        let space = |cx: &mut Self, e: &SExpr| match cx.tile_ref(e) {
            Ok(TileRef::Buf { buf, .. }) => Ok(Some(cx.kernel.buffers[buf].space)),
            Ok(_) => Ok(None),
            Err(f) => Err(f),
        };
        let (dst, src) = (space(self, args.pos[0])?, space(self, args.pos[1])?);
        let side = |s: Option<Space>| match s {
            Some(Space::Reg) => "a register tile",
            Some(Space::Shared) => "a shared tile",
            Some(Space::Tmem) => "tensor memory",
            None => "a global tile",
        };
        match (dst, src, args.pos.len()) {
            (Some(Space::Reg), Some(Space::Shared), 2) => Ok(Some(CopyVariant::LdmatrixTrans)),
            (Some(Space::Shared), Some(Space::Reg), 2) => Ok(Some(CopyVariant::StmatrixTrans)),
            (_, _, 3) => Err(self.fail(
                args.pos[2],
                "a transposing copy (`transpose = true`) completes in the issuing threads and \
                 signals no barrier: drop the third argument",
            )),
            _ => Err(self.fail(
                t,
                format!(
                    "a transposing copy (`transpose = true`, ldmatrix/stmatrix `.trans`) moves a \
                     register tile in the wgmma fragment layout to or from a shared tile holding \
                     its transpose: `copy(t, s, transpose = true)` or `copy(s, t, transpose = \
                     true)`; this one copies {} into {} (stage a global tile through shared \
                     memory)",
                    side(src),
                    side(dst)
                ),
            )),
        }
    }

    /// The name of a scalar (`f32`) parameter of the kernel, given as an op argument.
    fn scalar_arg(&mut self, e: &SExpr) -> Res<String> {
        let local = crate::args::path_ident(e).map(|id| self.local(&id.to_string()));
        if let Some(Some(Local::Arg(i))) = local
            && !self.def.scalar_types[i].is_int()
        {
            return Ok(self.def.scalars[i].to_string());
        }
        let names: Vec<String> = (self.def.scalars.iter().zip(&self.def.scalar_types))
            .filter(|(_, t)| !t.is_int())
            .map(|(s, _)| format!("`{s}`"))
            .collect();
        let have = if names.is_empty() {
            "the kernel has none: add a parameter `alpha: f32`".to_string()
        } else if self.spans.current_calls().is_empty() {
            format!("the kernel's are {}", names.join(", "))
        } else {
            "pass the kernel's to this tile function as a parameter `alpha: f32`".to_string()
        };
        Err(self.fail(
            e,
            format!("expected the name of a scalar (`f32`) argument; {have}"),
        ))
    }

    /// `mma(acc, a, b, accumulate = p)` and its namespaced forms.
    fn mma_op(&mut self, args: &CallArgs, variant: Option<MmaVariant>) -> Res<Op> {
        let acc = self.tile_ref(args.pos[0]);
        let a = self.tile_ref(args.pos[1]);
        let b = self.tile_ref(args.pos[2]);
        let accumulate = match args.get("accumulate") {
            Some(e) => self.pred(e),
            None => Ok(Expr::Imm(1, ScalarType::Pred)),
        };
        let pair = self.cta_group(args);
        let scale = self.block_scale(args);
        let saturate = match args.get("saturate").map(strip_parens) {
            None => Ok(false),
            Some(SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            })) => Ok(b.value),
            Some(other) => Err(self.fail(
                other,
                "expected `saturate = true` (kind::i8's s32 D clamps instead of wrapping) or `saturate = false`",
            )),
        };
        Ok(Op::Mma {
            acc: acc?,
            a: a?,
            b: b?,
            accumulate: accumulate?,
            variant,
            pair: pair?,
            scale: scale?,
            saturate: saturate?,
        })
    }

    /// `scale_a = sfa, scale_b = sfb` of a block-scaled `tcgen05::mma` (PTX ISA
    /// §9.7.16.10.7): both or neither — a block-scaled MMA scales both operands.
    fn block_scale(&mut self, args: &CallArgs) -> Res<Option<Box<BlockScale>>> {
        // `kind = mxf4`: MXFP4's own instruction (`.kind::mxf4`, §9.7.16.10.9) rather than
        // the `kind::mxf4nvf4 … ::2X` the types select; the only kind a user names.
        let mxf4 = match args.get("kind") {
            None => false,
            Some(k) => {
                let named = crate::args::path_ident(k).map(|i| i.to_string());
                if named.as_deref() != Some("mxf4") {
                    return Err(self.fail(
                        k,
                        "only `kind = mxf4` is written (MXFP4's `.kind::mxf4` instead of \
                         `kind::mxf4nvf4.scale_vec::2X`); every other kind comes from the \
                         operand and factor types",
                    ));
                }
                if args.get("scale_a").is_none() {
                    return Err(self.fail(
                        k,
                        "`kind = mxf4` is a block-scaled kind: it needs `scale_a = …, \
                         scale_b = …` (PTX ISA §9.7.16.10.7)",
                    ));
                }
                true
            }
        };
        match (args.get("scale_a"), args.get("scale_b")) {
            (None, None) => Ok(None),
            (Some(sa), Some(sb)) => {
                let a = self.tile_ref(sa);
                let b = self.tile_ref(sb);
                Ok(Some(Box::new(BlockScale { a: a?, b: b?, mxf4 })))
            }
            (Some(e), None) | (None, Some(e)) => {
                let (given, missing) = if args.get("scale_a").is_some() {
                    ("scale_a", "scale_b")
                } else {
                    ("scale_b", "scale_a")
                };
                Err(self.fail(
                    e,
                    format!(
                        "a block-scaled MMA scales both operands: `{given}` needs `{missing}` \
                         too (PTX ISA §9.7.16.10.7: D = (A·scale_A)·(B·scale_B) + D)"
                    ),
                ))
            }
        }
    }

    /// `cta_group = 1 | 2` of a tcgen05 op (absent: 1); 2 is the CTA pair (PTX ISA
    /// §9.7.16.5), which needs a cluster of an even number of CTAs: the pairs are cluster
    /// ranks 2k and 2k + 1.
    /// The operand of `tcgen05::shift`: a tile of tensor memory (a buffer, or a stage of one)
    /// whose rows are 32-bit cells, 8 columns wide at least (PTX ISA §9.7.16.9.3: one
    /// instruction moves 256 bits of each of 31 rows).
    fn shift_tile(&mut self, e: &SExpr) -> Res<TileRef> {
        let t = self.tile_ref(e)?;
        let TileRef::Buf { buf, index } = &t else {
            return Err(self.fail(e, "tcgen05::shift takes a tensor-memory tile (`tmem::<f32>([128, N])`), not a global tile"));
        };
        let b = &self.kernel.buffers[*buf];
        let lead = b.layout.shape.len().saturating_sub(2);
        let cols = b.tmem_tile().map_or(0, |(_, c)| c);
        if b.space != tirx_ir::Space::Tmem || index.len() != lead || b.elem.is_scale() || cols < 8 {
            return Err(self.fail(
                e,
                format!(
                    "tcgen05::shift moves rows of a tensor-memory tile down one lane, 256 bits \
                     (8 columns) of each: give it a `tmem::<f32>([128, N])` tile with N ≥ 8 \
                     (or a stage `t[s]` of a staged one), not `{}`",
                    b.name
                ),
            ));
        }
        Ok(t)
    }

    /// `tcgen05::commit(bar[, cta_group = 2[, multicast = M]])`: the pair's commit multicast
    /// to the whole pairs of the constant mask `M` (by default its own pair's two CTAs).
    fn commit_op(&mut self, args: &CallArgs) -> Res<Op> {
        let bar = self.bar_ref(args.pos[0]);
        let pair = self.cta_group(args)?;
        let multicast = match args.get("multicast") {
            None => None,
            Some(e) => {
                let m = self.const_u32(e, "the commit's multicast mask")?;
                let [x, y, z] = self.kernel.sig.cluster;
                let size = x * y * z;
                if !pair || m == 0 || m >> size != 0 || (m & 0x5555) << 1 != m & 0xaaaa {
                    return Err(self.fail(
                        e,
                        format!(
                            "the pair's commit (`cta_group = 2`) multicasts its arrival to whole \
                             pairs of the cluster (ranks 2k and 2k + 1, both bits set), a constant \
                             mask within its {size} CTAs — e.g. `multicast = 15` for two pairs — \
                             not {m:#b}"
                        ),
                    ));
                }
                Some(m)
            }
        };
        Ok(Op::Tcgen05Commit {
            bar: bar?,
            pair,
            multicast,
        })
    }

    fn cta_group(&mut self, args: &CallArgs) -> Res<bool> {
        let Some(e) = args.get("cta_group") else {
            return Ok(false);
        };
        match self.const_u32(e, "the cta_group")? {
            1 => Ok(false),
            2 => {
                let [x, y, z] = self.kernel.sig.cluster;
                if !(x * y * z).is_multiple_of(2) {
                    return Err(self.fail(
                        e,
                        format!(
                            "`cta_group = 2` is the CTA pair (cluster ranks 2k and 2k + 1, PTX ISA §9.7.16.5), \
                             so it needs a cluster of an even number of CTAs; this kernel's cluster is \
                             ({x}, {y}, {z}): declare e.g. `cluster = (2, 1, 1)`"
                        ),
                    ));
                }
                Ok(true)
            }
            g => Err(self.fail(
                e,
                format!("`cta_group = {g}`: a tcgen05 op runs on one CTA (1) or the CTA pair (2)"),
            )),
        }
    }

    /// A method-call statement: barrier and pipeline methods.
    pub(crate) fn op_method(&mut self, m: &syn::ExprMethodCall) -> Res<Stmt> {
        let method = m.method.to_string();
        let span = self
            .spans
            .intern_range((span_range(&m.receiver).0, m.paren_token.span.close()));
        let receiver =
            crate::args::path_ident(&m.receiver).and_then(|id| self.local(&id.to_string()));
        let word = vocab::lookup(None, &method, &[Kind::BarrierMethod, Kind::PipeMethod]);
        let pipe_methods = vocab::names(Kind::PipeMethod).join(", ");
        let op = match (receiver, word) {
            (Some(Local::Poison), _) => return Err(Fail),
            (Some(Local::Pipe(pipe)), Some(w)) if w.id == Id::ConsumerRelease => {
                let args = self.word_args(w, &m.args, m)?;
                Op::ConsumerRelease {
                    pipe,
                    stage: self.int(args.pos[0])?,
                }
            }
            (Some(Local::Pipe(_)), Some(w)) if w.kind == Kind::PipeMethod => {
                return Err(self.fail(
                    &m.method,
                    format!("`{method}` gives the stage; bind it: `let s = pipe.{method}(k);`"),
                ));
            }
            (Some(Local::Pipe(_)), _) => {
                return Err(self.fail(&m.method, format!("unknown pipeline method `{method}`; pipeline methods are {pipe_methods} (and full, empty to name its barriers)")));
            }
            (_, Some(w)) if w.kind == Kind::BarrierMethod => {
                let args = self.word_args(w, &m.args, m)?;
                let bar = self.bar_ref(&m.receiver);
                match w.id {
                    Id::Arrive => Op::MbarArrive { bar: bar? },
                    Id::ExpectTx => {
                        let bytes = args
                            .pos
                            .first()
                            .map(|b| self.const_u32(b, "the expected bytes"))
                            .transpose();
                        Op::MbarArriveExpectTx {
                            bar: bar?,
                            bytes: bytes?,
                        }
                    }
                    _ => {
                        let parity = self.int(args.pos[0]);
                        Op::MbarWait {
                            bar: bar?,
                            parity: parity?,
                        }
                    }
                }
            }
            _ => {
                let bar_methods = vocab::names(Kind::BarrierMethod).join(", ");
                return Err(self.fail(&m.method, format!("unknown method `{method}`; barrier methods are {bar_methods}; pipeline methods are {pipe_methods}")));
            }
        };
        Ok(Stmt::at(StmtKind::Op(op), span))
    }

    /// `let s = pipe.producer_acquire(k);` / `let s = pipe.consumer_wait(k);`.
    pub(crate) fn acquire(&mut self, ident: &Ident, m: &syn::ExprMethodCall) -> Res<Stmt> {
        let method = m.method.to_string();
        let pipe =
            match crate::args::path_ident(&m.receiver).and_then(|id| self.local(&id.to_string())) {
                Some(Local::Pipe(p)) => p,
                Some(Local::Poison) => return Err(Fail),
                _ => {
                    return Err(self.fail(
                        &m.receiver,
                        format!("`{method}` is a pipeline method; this is not a pipeline"),
                    ));
                }
            };
        let Some(word) = vocab::lookup(None, &method, &[Kind::PipeMethod]) else {
            return Err(self.fail(&m.method, format!("`{method}` is not a pipeline method")));
        };
        let args = self.word_args(word, &m.args, m)?;
        let iter = self.int(args.pos[0])?;
        let span = self
            .spans
            .intern_range((span_range(&m.receiver).0, m.paren_token.span.close()));
        let stage = self.kernel.new_var(ident.to_string(), ScalarType::U32);
        self.bind(
            ident,
            Local::Var {
                var: stage,
                mutable: false,
            },
        )?;
        let op = if word.id == Id::ProducerAcquire {
            Op::ProducerAcquire { pipe, iter, stage }
        } else {
            Op::ConsumerWait { pipe, iter, stage }
        };
        Ok(Stmt::at(StmtKind::Op(op), span))
    }
}
