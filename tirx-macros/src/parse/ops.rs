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

use super::decl::DECLS;
use super::stmt::strip_parens;
use super::{Fail, Local, Lowerer, Res, closest};
use crate::error::span_range;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Expr as SExpr, Ident, Token};
use tirx_ir::{Expr, Op, ScalarType, Scale, Stmt, StmtKind};

/// Namespaced ops, for "unknown op" messages.
const NAMESPACES: [(&str, &str); 5] = [
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
    ("setmaxnreg", "inc, dec"),
];

/// Un-namespaced ops.
const PLAIN: &str = "copy, mma, sync_threads, cluster_sync, named_barrier";

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
            "cluster_sync" => self.no_arg_op(c, "cluster_sync()", Op::ClusterSync),
            "named_barrier" => {
                let usage = "named_barrier(id, threads)";
                let args = self.call_args(&c.args, c, usage, 2..=2, &[])?;
                let id = self.int(args.pos[0]);
                let threads = self.const_u32(args.pos[1], "the number of threads");
                let (id, threads) = (id?, threads?);
                if threads == 0 || !threads.is_multiple_of(32) {
                    return Err(self.fail(args.pos[1], format!("a named barrier counts whole warps: {threads} is not a positive multiple of 32")));
                }
                Ok(Op::NamedBarrier { id, threads })
            }
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
                let spaces: Vec<String> = NAMESPACES
                    .iter()
                    .map(|(ns, _)| format!("{ns}::…"))
                    .collect();
                let hint = if self.fns.names().is_empty() {
                    closest(name, &all)
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default()
                } else {
                    self.tile_fn_hint(name, &all)
                };
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
            ("setmaxnreg", "inc" | "dec") => {
                let inc = name == "inc";
                let usage = format!("setmaxnreg::{name}(count)");
                return self.count_op(c, &usage, |count| Op::SetMaxNReg { inc, count });
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
        // The generic `copy` also scales an accumulator epilogue: `alpha = a, beta = b`.
        let allowed: &[&str] = if variant.is_none() {
            &["multicast", "alpha", "beta"]
        } else {
            &["multicast"]
        };
        let args = self.call_args(&c.args, c, usage, arity, allowed)?;
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
                let at = args.get("beta").expect("given");
                return Err(self.fail(
                    at,
                    "`beta` scales the destination's old contents and needs `alpha` too \
                     (`alpha = one` with a scalar parameter `one` set to 1.0)",
                ));
            }
        };
        Ok(Op::Copy {
            dst: dst?,
            src: src?,
            bar: bar?,
            multicast: multicast?,
            scale,
            variant: variant.map(String::from),
        })
    }

    /// The name of a scalar (`f32`) parameter of the kernel, given as an op argument.
    fn scalar_arg(&mut self, e: &SExpr) -> Res<String> {
        let local = crate::args::path_ident(e).map(|id| self.local(&id.to_string()));
        if let Some(Some(Local::Arg(i))) = local {
            return Ok(self.def.scalars[i].to_string());
        }
        let names: Vec<String> = self.def.scalars.iter().map(|s| format!("`{s}`")).collect();
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
}

/// Every op's full name, for "did you mean".
fn all_ops() -> Vec<String> {
    let mut out: Vec<String> = PLAIN.split(", ").map(String::from).collect();
    for (ns, ops) in NAMESPACES {
        out.extend(ops.split(", ").map(|o| format!("{ns}::{o}")));
    }
    out
}
