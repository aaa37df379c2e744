//! Ops, operands and declarations.
//!
//! - Op calls: `copy`, `mma`, `sync_threads` (the compiler picks the variant) and the
//!   namespaced forms `tma::…`, `wgmma::…`, `tcgen05::…`, `fence::…` (the namespace forces
//!   the variant). Method ops on barriers (`arrive`, `expect_tx`, `wait`) and pipelines
//!   (`consumer_release`, and `producer_acquire` / `consumer_wait` bound by `let`).
//! - Operands: tiles (`buf`, `buf[s]`, `tensor.tile(i, j)`) and barriers (`bar`, `bar[i]`,
//!   `pipe.full(s)`, `pipe.empty(s)`).
//! - Declarations: `smem::<T>([..], swizzle = B128)`, `tmem::<T>([..])`, `regs::<T>([..])`,
//!   `mbarrier(count = 1, arrivals = 1)`, `pipeline::<STAGES>(consumers = 1)`.
//!
//! Every unknown name lists the names allowed at that place.

use super::stmt::strip_parens;
use super::{Fail, Local, Lowerer, Res, closest};
use crate::error::span_range;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Expr as SExpr, Ident, Token};
use tirx_ir::abi::{ElemType, Swizzle};
use tirx_ir::{
    BarRef, Barrier, Buffer, Expr, Layout, Op, Pipeline, ScalarType, Space, Stmt, StmtKind, TileRef,
};

/// Namespaced ops, for "unknown op" messages.
const NAMESPACES: [(&str, &str); 4] = [
    (
        "tma",
        "load, store, commit_group, wait_group, wait_group_read",
    ),
    ("wgmma", "mma, fence, commit, wait"),
    (
        "tcgen05",
        "mma, commit, alloc, dealloc, relinquish, fence_before, fence_after",
    ),
    ("fence", "proxy_async, mbarrier_init"),
];

/// Un-namespaced ops.
const PLAIN: &str = "copy, mma, sync_threads";

/// Declaration constructors.
const DECLS: [&str; 5] = ["smem", "tmem", "regs", "mbarrier", "pipeline"];

/// If `func` names a declaration constructor (`smem`, `smem::<bf16>`, …), its name.
pub(crate) fn decl_kind(func: &SExpr) -> Option<String> {
    let SExpr::Path(p) = strip_parens(func) else {
        return None;
    };
    let [seg] = p.path.segments.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let name = seg.ident.to_string();
    DECLS.contains(&name.as_str()).then_some(name)
}

/// A call's arguments split into positional ones and `name = value` ones.
struct CallArgs<'e> {
    pos: Vec<&'e SExpr>,
    named: Vec<(&'e Ident, &'e SExpr)>,
}

impl<'e> CallArgs<'e> {
    /// The value of named argument `key`.
    fn get(&self, key: &str) -> Option<&'e SExpr> {
        self.named.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl Lowerer<'_> {
    /// Splits and checks `args` against `usage` (e.g. `tma::load(dst, src, bar)`): exactly
    /// `arity` positional arguments, named ones only from `allowed`.
    fn call_args<'e>(
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

    /// An op call statement (`copy(…)`, `tma::load(…)`, …).
    pub(crate) fn op_call(&mut self, c: &syn::ExprCall) -> Res<Stmt> {
        let SExpr::Path(p) = strip_parens(&c.func) else {
            return Err(self.fail(&c.func, "expected an op call such as `copy(dst, src)`"));
        };
        if let Some(seg) = p.path.segments.iter().find(|s| !s.arguments.is_none()) {
            let name = &seg.ident;
            if DECLS.contains(&name.to_string().as_str()) {
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
        let op = match names.as_slice() {
            [n] => self.plain_op(n, c)?,
            [ns, n] => self.namespaced_op(ns, n, c)?,
            _ => return Err(self.fail(&c.func, format!("unknown op `{}`", names.join("::")))),
        };
        Ok(Stmt::at(StmtKind::Op(op), span))
    }

    /// `copy`, `mma`, `sync_threads`.
    fn plain_op(&mut self, name: &str, c: &syn::ExprCall) -> Res<Op> {
        match name {
            "copy" => self.copy_op(c, "copy(dst, src[, bar])", 2..=3, None),
            "mma" => self.mma_op(c, "mma", None),
            "sync_threads" => self.no_arg_op(c, "sync_threads()", Op::SyncThreads),
            _ if DECLS.contains(&name) => Err(self.fail(
                &c.func,
                format!("`{name}` declares something; bind it: `let x = {name}(…);`"),
            )),
            "cdiv" | "min" | "max" => Err(self.fail(
                &c.func,
                format!("`{name}` is a scalar function; use its value in a `let` or an argument"),
            )),
            _ => {
                let all = all_ops();
                let hint = closest(name, &all)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                let spaces: Vec<String> = NAMESPACES
                    .iter()
                    .map(|(ns, _)| format!("{ns}::…"))
                    .collect();
                Err(self.fail(
                    &c.func,
                    format!(
                        "unknown op `{name}`; ops are {PLAIN}, {}{hint}",
                        spaces.join(", ")
                    ),
                ))
            }
        }
    }

    /// `tma::…`, `wgmma::…`, `tcgen05::…`, `fence::…`.
    fn namespaced_op(&mut self, ns: &str, name: &str, c: &syn::ExprCall) -> Res<Op> {
        let op = match (ns, name) {
            ("tma", "load") => {
                return self.copy_op(c, "tma::load(dst, src, bar)", 3..=3, Some("tma_load"));
            }
            ("tma", "store") => {
                return self.copy_op(c, "tma::store(dst, src)", 2..=2, Some("tma_store"));
            }
            ("tma", "commit_group") => Op::TmaCommitGroup,
            ("tma", "wait_group") => {
                return self.count_op(c, "tma::wait_group(n)", |n| Op::TmaWaitGroup {
                    n,
                    read: false,
                });
            }
            ("tma", "wait_group_read") => {
                return self.count_op(c, "tma::wait_group_read(n)", |n| Op::TmaWaitGroup {
                    n,
                    read: true,
                });
            }
            ("wgmma", "mma") => return self.mma_op(c, "wgmma::mma", Some("wgmma")),
            ("wgmma", "fence") => Op::WgmmaFence,
            ("wgmma", "commit") => Op::WgmmaCommit,
            ("wgmma", "wait") => {
                return self.count_op(c, "wgmma::wait(n)", |n| Op::WgmmaWait { n });
            }
            ("tcgen05", "mma") => return self.mma_op(c, "tcgen05::mma", Some("tcgen05")),
            ("tcgen05", "commit") => {
                let args = self.call_args(&c.args, c, "tcgen05::commit(bar)", 1..=1, &[])?;
                return Ok(Op::Tcgen05Commit {
                    bar: self.bar_ref(args.pos[0])?,
                });
            }
            ("tcgen05", "alloc" | "dealloc") => {
                let usage = format!("tcgen05::{name}(tmem_buffer)");
                let args = self.call_args(&c.args, c, &usage, 1..=1, &[])?;
                let buf = self.tmem_buffer(args.pos[0], name)?;
                return Ok(if name == "alloc" {
                    Op::TmemAlloc { buf }
                } else {
                    Op::TmemDealloc { buf }
                });
            }
            ("tcgen05", "relinquish") => Op::TmemRelinquish,
            ("tcgen05", "fence_before") => Op::Tcgen05FenceBefore,
            ("tcgen05", "fence_after") => Op::Tcgen05FenceAfter,
            ("fence", "proxy_async") => Op::FenceProxyAsync,
            ("fence", "mbarrier_init") => Op::FenceMbarrierInit,
            _ => return Err(self.unknown_namespaced(ns, name, c)),
        };
        self.no_arg_op(c, &format!("{ns}::{name}()"), op)
    }

    fn unknown_namespaced(&mut self, ns: &str, name: &str, c: &syn::ExprCall) -> Fail {
        match NAMESPACES.iter().find(|(n, _)| *n == ns) {
            Some((_, ops)) => self.fail(
                &c.func,
                format!("unknown op `{ns}::{name}`; {ns} ops are {ops}"),
            ),
            None => {
                let spaces: Vec<&str> = NAMESPACES.iter().map(|(n, _)| *n).collect();
                self.fail(
                    &c.func,
                    format!(
                        "unknown op namespace `{ns}` in `{ns}::{name}`; namespaces are {}",
                        spaces.join(", ")
                    ),
                )
            }
        }
    }

    fn no_arg_op(&mut self, c: &syn::ExprCall, usage: &str, op: Op) -> Res<Op> {
        self.call_args(&c.args, c, usage, 0..=0, &[])?;
        Ok(op)
    }

    /// An op with one build-time count (`wait_group(n)`, `wgmma::wait(n)`).
    fn count_op(&mut self, c: &syn::ExprCall, usage: &str, make: impl Fn(u32) -> Op) -> Res<Op> {
        let args = self.call_args(&c.args, c, usage, 1..=1, &[])?;
        Ok(make(
            self.const_u32(args.pos[0], "the number of pending groups")?,
        ))
    }

    /// `copy(dst, src[, bar])`, `tma::load(dst, src, bar)`, `tma::store(dst, src)`.
    fn copy_op(
        &mut self,
        c: &syn::ExprCall,
        usage: &str,
        arity: std::ops::RangeInclusive<usize>,
        variant: Option<&str>,
    ) -> Res<Op> {
        let args = self.call_args(&c.args, c, usage, arity, &[])?;
        let dst = self.tile_ref(args.pos[0]);
        let src = self.tile_ref(args.pos[1]);
        let bar = args.pos.get(2).map(|b| self.bar_ref(b)).transpose();
        Ok(Op::Copy {
            dst: dst?,
            src: src?,
            bar: bar?,
            variant: variant.map(String::from),
        })
    }

    /// `mma(acc, a, b, accumulate = p)` and its namespaced forms.
    fn mma_op(&mut self, c: &syn::ExprCall, op: &str, variant: Option<&str>) -> Res<Op> {
        let usage = format!("{op}(acc, a, b, accumulate = …)");
        let args = self.call_args(&c.args, c, &usage, 3..=3, &["accumulate"])?;
        let acc = self.tile_ref(args.pos[0]);
        let a = self.tile_ref(args.pos[1]);
        let b = self.tile_ref(args.pos[2]);
        let accumulate = match args.get("accumulate") {
            Some(e) => self.pred(e),
            None => Ok(Expr::Imm(1, ScalarType::Pred)),
        };
        Ok(Op::Mma {
            acc: acc?,
            a: a?,
            b: b?,
            accumulate: accumulate?,
            variant: variant.map(String::from),
        })
    }

    /// A method-call statement: barrier and pipeline methods.
    pub(crate) fn op_method(&mut self, m: &syn::ExprMethodCall) -> Res<Stmt> {
        let method = m.method.to_string();
        let span = self
            .spans
            .intern_range((span_range(&m.receiver).0, m.paren_token.span.close()));
        let receiver =
            crate::args::path_ident(&m.receiver).and_then(|id| self.local(&id.to_string()));
        let op = match (receiver, method.as_str()) {
            (Some(Local::Poison), _) => return Err(Fail),
            (Some(Local::Pipe(pipe)), "consumer_release") => {
                let args = self.call_args(&m.args, m, "consumer_release(stage)", 1..=1, &[])?;
                Op::ConsumerRelease {
                    pipe,
                    stage: self.int(args.pos[0])?,
                }
            }
            (Some(Local::Pipe(_)), "producer_acquire" | "consumer_wait") => {
                return Err(self.fail(
                    &m.method,
                    format!("`{method}` gives the stage; bind it: `let s = pipe.{method}(k);`"),
                ));
            }
            (Some(Local::Pipe(_)), _) => {
                return Err(self.fail(&m.method, format!("unknown pipeline method `{method}`; pipeline methods are producer_acquire, consumer_wait, consumer_release (and full, empty to name its barriers)")));
            }
            (_, "arrive") => {
                self.call_args(&m.args, m, "arrive()", 0..=0, &[])?;
                Op::MbarArrive {
                    bar: self.bar_ref(&m.receiver)?,
                }
            }
            (_, "expect_tx") => {
                let args = self.call_args(&m.args, m, "expect_tx(bytes)", 0..=1, &[])?;
                let bar = self.bar_ref(&m.receiver);
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
            (_, "wait") => {
                let args = self.call_args(&m.args, m, "wait(parity)", 1..=1, &[])?;
                let bar = self.bar_ref(&m.receiver);
                let parity = self.int(args.pos[0]);
                Op::MbarWait {
                    bar: bar?,
                    parity: parity?,
                }
            }
            _ => {
                return Err(self.fail(&m.method, format!("unknown method `{method}`; barrier methods are arrive, expect_tx, wait; pipeline methods are producer_acquire, consumer_wait, consumer_release")));
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
        let usage = format!("{method}(k)");
        let args = self.call_args(&m.args, m, &usage, 1..=1, &[])?;
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
        let op = if method == "producer_acquire" {
            Op::ProducerAcquire { pipe, iter, stage }
        } else {
            Op::ConsumerWait { pipe, iter, stage }
        };
        Ok(Stmt::at(StmtKind::Op(op), span))
    }

    /// What a name is, for "`x` is …, not a …" messages.
    fn describe(&self, name: &str) -> Option<&'static str> {
        match self.local(name) {
            Some(Local::Var { .. }) => Some("a scalar variable"),
            Some(Local::Buf(_)) => Some("a buffer"),
            Some(Local::Bar(_)) => Some("an mbarrier"),
            Some(Local::Pipe(_)) => Some("a pipeline"),
            Some(Local::Poison) => None,
            None if self.kernel.const_value(name).is_some() => Some("a config constant"),
            None if self.def.params.iter().any(|p| p.ident == name) => Some("a global tensor"),
            None if self
                .def
                .params
                .iter()
                .any(|p| p.shape.iter().any(|s| s == name)) =>
            {
                Some("a shape symbol")
            }
            None if super::BUILTINS.contains(&name) => Some("a built-in scalar"),
            None => None,
        }
    }

    /// The error for a name that is not the expected kind of thing.
    fn wrong_kind(&mut self, id: &Ident, expected: &str, hint: &str) -> Fail {
        let name = id.to_string();
        match self.describe(&name) {
            Some(what) => self.fail(id, format!("`{name}` is {what}, not {expected}{hint}")),
            None if matches!(self.local(&name), Some(Local::Poison)) => Fail,
            None => self.not_found(id),
        }
    }
}

/// Every op's full name, for "did you mean".
fn all_ops() -> Vec<String> {
    let mut out: Vec<String> = PLAIN.split(", ").map(String::from).collect();
    for (ns, ops) in NAMESPACES {
        out.extend(ops.split(", ").map(|o| format!("{ns}::{o}")));
    }
    out
}

impl Lowerer<'_> {
    /// A tile operand: `buf`, `buf[i]…`, `tensor.tile(c0, c1, …)`.
    pub(crate) fn tile_ref(&mut self, e: &SExpr) -> Res<TileRef> {
        const EXPECTED: &str = "expected a tile: a buffer (`a_s`), a stage of one (`a_s[s]`) or a tensor tile (`src.tile(i, j)`)";
        match strip_parens(e) {
            SExpr::Path(_) => {
                let id = crate::args::path_ident(e).ok_or_else(|| self.fail(e, EXPECTED))?;
                match self.local(&id.to_string()) {
                    Some(Local::Buf(buf)) => Ok(TileRef::Buf {
                        buf,
                        index: Vec::new(),
                    }),
                    _ if self.def.params.iter().any(|p| p.ident == *id) => Err(self.fail(
                        id,
                        format!(
                            "`{id}` is a global tensor; name one tile of it: `{id}.tile(i, j)`"
                        ),
                    )),
                    _ => Err(self.wrong_kind(id, "a tile", "")),
                }
            }
            SExpr::Index(_) => self.indexed_tile(e),
            SExpr::MethodCall(m) if m.method == "tile" => self.tensor_tile(m),
            other => Err(self.fail(other, EXPECTED)),
        }
    }

    /// `buf[i][j]…`: leading indices of a buffer.
    fn indexed_tile(&mut self, e: &SExpr) -> Res<TileRef> {
        let mut indices = Vec::new();
        let mut base = strip_parens(e);
        while let SExpr::Index(ix) = base {
            indices.push(&*ix.index);
            base = strip_parens(&ix.expr);
        }
        indices.reverse();
        let Some(id) = crate::args::path_ident(base) else {
            return Err(self.fail(base, "expected a buffer name before `[…]`"));
        };
        let buf = match self.local(&id.to_string()) {
            Some(Local::Buf(b)) => b,
            _ => {
                return Err(self.wrong_kind(id, "a buffer", "; only buffers are indexed as tiles"));
            }
        };
        let rank = self.kernel.buffers[buf].layout.shape.len();
        if indices.len() >= rank {
            return Err(self.fail(
                e,
                format!(
                    "`{id}` has {rank} dimension(s); index at most {} leading one(s)",
                    rank - 1
                ),
            ));
        }
        let mut index = Vec::new();
        let mut failed = false;
        for i in indices {
            match self.int(i) {
                Ok(v) => index.push(v),
                Err(_) => failed = true,
            }
        }
        if failed {
            Err(Fail)
        } else {
            Ok(TileRef::Buf { buf, index })
        }
    }

    /// `tensor.tile(c0, c1, …)`: one coordinate per dimension.
    fn tensor_tile(&mut self, m: &syn::ExprMethodCall) -> Res<TileRef> {
        let Some(id) = crate::args::path_ident(&m.receiver) else {
            return Err(self.fail(&m.receiver, "expected a tensor name before `.tile(…)`"));
        };
        let Some(param) = self.def.params.iter().find(|p| p.ident == *id) else {
            return Err(self.wrong_kind(
                id,
                "a global tensor",
                "; `.tile(…)` names a tile of a tensor parameter",
            ));
        };
        let rank = param.shape.len();
        let dims: Vec<String> = param.shape.iter().map(Ident::to_string).collect();
        if m.args.len() != rank {
            let found = m.args.len();
            return Err(self.fail(m, format!("`{id}` has {rank} dimension(s) ({}); `tile` takes {rank} coordinate(s), found {found}", dims.join(", "))));
        }
        let coords: Vec<Res<Expr>> = m.args.iter().map(|a| self.int(a)).collect();
        let coords = coords.into_iter().collect::<Res<Vec<_>>>()?;
        Ok(TileRef::Global {
            tensor: id.to_string(),
            coords,
        })
    }

    /// A barrier operand: `bar`, `bar[i]`, `pipe.full(s)`, `pipe.empty(s)`.
    pub(crate) fn bar_ref(&mut self, e: &SExpr) -> Res<BarRef> {
        const EXPECTED: &str =
            "expected a barrier: `bar`, `bar[i]`, `pipe.full(s)` or `pipe.empty(s)`";
        let (base, index) = match strip_parens(e) {
            SExpr::Index(ix) => (&*ix.expr, Some(&*ix.index)),
            SExpr::MethodCall(m) if m.method == "full" || m.method == "empty" => {
                return self.pipe_bar(m);
            }
            other => (other, None),
        };
        let Some(id) = crate::args::path_ident(base) else {
            return Err(self.fail(e, EXPECTED));
        };
        let bar = match self.local(&id.to_string()) {
            Some(Local::Bar(b)) => b,
            Some(Local::Pipe(_)) => {
                return Err(self.fail(id, format!("`{id}` is a pipeline; name one of its barriers: `{id}.full(s)` or `{id}.empty(s)`")));
            }
            _ => return Err(self.wrong_kind(id, "a barrier", "")),
        };
        let index_syntax = index;
        let index = match index {
            Some(i) => self.int(i)?,
            None => Expr::u32(0),
        };
        let count = self.kernel.barriers[bar].count;
        if let (Expr::Imm(v, _), Some(i)) = (&index, index_syntax)
            && *v >= i64::from(count)
        {
            return Err(self.fail(
                i,
                format!("barrier index {v} out of range: `{id}` has {count} barrier(s)"),
            ));
        }
        Ok(BarRef { bar, index })
    }

    /// `pipe.full(s)` / `pipe.empty(s)`.
    fn pipe_bar(&mut self, m: &syn::ExprMethodCall) -> Res<BarRef> {
        let pipe =
            match crate::args::path_ident(&m.receiver).and_then(|id| self.local(&id.to_string())) {
                Some(Local::Pipe(p)) => p,
                Some(Local::Poison) => return Err(Fail),
                _ => {
                    return Err(self.fail(
                        &m.receiver,
                        format!(
                            "`.{}(s)` names a barrier of a pipeline; this is not a pipeline",
                            m.method
                        ),
                    ));
                }
            };
        let usage = format!("{}(stage)", m.method);
        let args = self.call_args(&m.args, m, &usage, 1..=1, &[])?;
        let index = self.int(args.pos[0])?;
        let p = &self.kernel.pipelines[pipe];
        let bar = if m.method == "full" { p.full } else { p.empty };
        Ok(BarRef { bar, index })
    }

    /// The TMEM buffer named by `e` (`tcgen05::alloc`/`dealloc`).
    fn tmem_buffer(&mut self, e: &SExpr, op: &str) -> Res<tirx_ir::Handle<Buffer>> {
        let hint =
            format!("`tcgen05::{op}` takes a TMEM buffer declared with `tmem::<f32>([BM, BN])`");
        let Some(id) = crate::args::path_ident(e) else {
            return Err(self.fail(e, hint));
        };
        match self.local(&id.to_string()) {
            Some(Local::Buf(b)) if self.kernel.buffers[b].space == Space::Tmem => Ok(b),
            Some(Local::Poison) => Err(Fail),
            _ => Err(self.fail(id, hint)),
        }
    }
}

impl Lowerer<'_> {
    /// A declaration `let ident = smem::<T>(…)` etc.; returns what `ident` binds to.
    pub(crate) fn declare(
        &mut self,
        ident: &Ident,
        c: &syn::ExprCall,
        l: &syn::Local,
    ) -> Res<Local> {
        let kind = decl_kind(&c.func).expect("caller checked");
        let SExpr::Path(p) = strip_parens(&c.func) else {
            unreachable!("decl_kind matched a path")
        };
        let generics = match &p.path.segments[0].arguments {
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::AngleBracketed(ab) => ab.args.iter().collect(),
            other => return Err(self.fail(other, "expected `::<…>`")),
        };
        let span = self.span(l);
        let name = ident.to_string();
        match kind.as_str() {
            "smem" | "tmem" | "regs" => {
                let space = match kind.as_str() {
                    "smem" => Space::Shared,
                    "tmem" => Space::Tmem,
                    _ => Space::Reg,
                };
                let buffer = self.buffer(&kind, space, &generics, c, name, span)?;
                Ok(Local::Buf(self.kernel.buffers.append(buffer)))
            }
            "mbarrier" => {
                if let Some(g) = generics.first() {
                    return Err(self.fail(g, "`mbarrier` takes no generic arguments: `mbarrier(count = 1, arrivals = 1)`"));
                }
                let args = self.call_args(
                    &c.args,
                    c,
                    "mbarrier(count = 1, arrivals = 1)",
                    0..=0,
                    &["count", "arrivals"],
                )?;
                let count = self.positive_arg(&args, "count")?;
                let arrivals = self.positive_arg(&args, "arrivals")?;
                let bar = Barrier {
                    name,
                    count,
                    arrivals,
                    offset: None,
                    span,
                };
                Ok(Local::Bar(self.kernel.barriers.append(bar)))
            }
            _ => self.pipeline(&generics, c, name, span),
        }
    }

    /// `smem::<T>([d0, d1, …], swizzle = B128)` and the TMEM / register forms.
    fn buffer(
        &mut self,
        kind: &str,
        space: Space,
        generics: &[&syn::GenericArgument],
        c: &syn::ExprCall,
        name: String,
        span: tirx_ir::Span,
    ) -> Res<Buffer> {
        let usage = format!(
            "{kind}::<bf16>([BM, BK]{})",
            if space == Space::Shared {
                ", swizzle = B128"
            } else {
                ""
            }
        );
        let elem = match generics {
            [syn::GenericArgument::Type(syn::Type::Path(t))] => t
                .path
                .get_ident()
                .and_then(|i| ElemType::from_name(&i.to_string())),
            _ => None,
        };
        let Some(elem) = elem else {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!("expected an element type (bf16, f16, f32): `{usage}`"),
            ));
        };
        let allowed: &[&str] = if space == Space::Shared {
            &["swizzle"]
        } else {
            &[]
        };
        let args = self.call_args(&c.args, c, &usage, 1..=1, allowed)?;
        let SExpr::Array(dims) = strip_parens(args.pos[0]) else {
            return Err(self.fail(
                args.pos[0],
                format!("expected the shape as an array: `{usage}`"),
            ));
        };
        if dims.elems.is_empty() {
            return Err(self.fail(dims, "a buffer needs at least one dimension"));
        }
        let mut shape = Vec::new();
        for d in &dims.elems {
            match self.const_u32(d, "a buffer dimension")? {
                0 => return Err(self.fail(d, "a buffer dimension must be positive")),
                v => shape.push(v),
            }
        }
        let swizzle = match args.get("swizzle") {
            None => Swizzle::None,
            Some(s) => {
                let named =
                    crate::args::path_ident(s).and_then(|i| Swizzle::from_name(&i.to_string()));
                named
                    .ok_or_else(|| self.fail(s, "unknown swizzle; expected none, B32, B64, B128"))?
            }
        };
        let layout = Layout::row_major(&shape, swizzle);
        Ok(Buffer {
            name,
            space,
            elem,
            layout,
            offset: None,
            tmem_cols: None,
            span,
        })
    }

    /// `pipeline::<STAGES>(consumers = n)`: the pipeline and its `.full` / `.empty` barriers.
    fn pipeline(
        &mut self,
        generics: &[&syn::GenericArgument],
        c: &syn::ExprCall,
        name: String,
        span: tirx_ir::Span,
    ) -> Res<Local> {
        const USAGE: &str = "pipeline::<STAGES>(consumers = 1)";
        let stages_expr: SExpr = match generics {
            [syn::GenericArgument::Const(e)] => e.clone(),
            [syn::GenericArgument::Type(syn::Type::Path(t))] if t.qself.is_none() => {
                SExpr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: t.path.clone(),
                })
            }
            _ => {
                return Err(self.fail(&c.func, format!("expected the number of stages: `{USAGE}`")));
            }
        };
        let args = self.call_args(&c.args, c, USAGE, 0..=0, &["consumers"]);
        let stages = self.const_u32(&stages_expr, "the number of stages");
        let (args, stages) = (args?, stages?);
        if stages == 0 {
            return Err(self.fail(&stages_expr, "a pipeline needs at least one stage"));
        }
        let consumers = self.positive_arg(&args, "consumers")?;
        let full = Barrier {
            name: format!("{name}.full"),
            count: stages,
            arrivals: 1,
            offset: None,
            span,
        };
        let empty = Barrier {
            name: format!("{name}.empty"),
            count: stages,
            arrivals: consumers,
            offset: None,
            span,
        };
        let full = self.kernel.barriers.append(full);
        let empty = self.kernel.barriers.append(empty);
        let pipe = Pipeline {
            name,
            stages,
            full,
            empty,
            span,
        };
        Ok(Local::Pipe(self.kernel.pipelines.append(pipe)))
    }

    /// A named count argument (default 1), positive.
    fn positive_arg(&mut self, args: &CallArgs, key: &str) -> Res<u32> {
        let Some(e) = args.get(key) else { return Ok(1) };
        match self.const_u32(e, &format!("`{key}`"))? {
            0 => Err(self.fail(e, format!("`{key}` must be at least 1"))),
            v => Ok(v),
        }
    }
}
