//! Cluster launch control (PTX ISA §9.7.13.17 `clusterlaunchcontrol.try_cancel`, §9.7.13.18
//! `clusterlaunchcontrol.query_cancel`): a running CTA asks to cancel the launch of a cluster
//! not yet started and takes over its work.
//!
//! - `clc::try_cancel(resp, bar)` / `clc::try_cancel(resp, bar, multicast = true)`: one thread
//!   asks; the 16-byte response lands in `resp` and completes on `bar` (the expected 16 bytes
//!   are derived, as for TMA loads). With `multicast = true` every CTA of the cluster runs it
//!   (each expecting the bytes on its own barrier) and the CTA of rank 0 alone issues the
//!   request, answered into every CTA's `resp`.
//! - `let ok = clc::is_canceled(resp);` (or `ok = …` on a `let mut` predicate) and
//!   `let (x, y, z) = clc::first_cta(resp);` (one to three names, x first) decode a completed
//!   response; the first CTA is defined only when `ok`.
//!
//! Checked here: the response is a 16-byte tile of shared memory, unswizzled, at a 16-byte
//! aligned offset (buffers start at least 128-byte aligned; the leading indices' strides must
//! keep it so); the value a query gives is bound. Scope, byte counts and the wait before a
//! query are checked by the IR passes (`verify_scopes`, `derive_signals`, `check_protocol`).

use super::ops::CallArgs;
use super::stmt::strip_parens;
use super::vocab::{self, Id, Kind, Word};
use super::{Fail, Local, Lowerer, Res};
use crate::error::span_range;
use syn::{Expr as SExpr, Ident};
use tirx_ir::abi::Swizzle;
use tirx_ir::{Handle, Op, ScalarType, Space, Stmt, StmtKind, TileRef, Var};

/// The bytes of a response (PTX ISA §9.7.13.17).
const RESPONSE_BYTES: u64 = 16;

/// If `e` is a query call (`clc::is_canceled(..)` / `clc::first_cta(..)`), its word and call.
pub(crate) fn query_of(e: &SExpr) -> Option<(&'static Word, &syn::ExprCall)> {
    let SExpr::Call(c) = strip_parens(e) else {
        return None;
    };
    let SExpr::Path(p) = strip_parens(&c.func) else {
        return None;
    };
    let names: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let [ns, n] = names.as_slice() else {
        return None;
    };
    let w = vocab::lookup(Some(ns), n, &[Kind::Op])?;
    matches!(w.id, Id::ClcIsCanceled | Id::ClcFirstCta).then_some((w, c))
}

impl Lowerer<'_> {
    /// `clc::try_cancel(resp, bar[, multicast = true])`.
    pub(crate) fn clc_try_cancel(&mut self, args: &CallArgs) -> Res<Op> {
        let resp = self.clc_response(args.pos[0]);
        let bar = self.bar_ref(args.pos[1]);
        let multicast = match args.get("multicast").map(strip_parens) {
            None => Ok(false),
            Some(SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            })) => Ok(b.value),
            Some(other) => Err(self.fail(
                other,
                "expected `multicast = true` (the response goes to every CTA of the cluster) or `multicast = false`",
            )),
        };
        Ok(Op::ClcTryCancel {
            resp: resp?,
            bar: bar?,
            multicast: multicast?,
        })
    }

    /// A response operand: a 16-byte, unswizzled tile of shared memory at a 16-byte-aligned
    /// offset (PTX ISA §9.7.13.17: "the naturally aligned address of the 16-byte wide shared
    /// memory location").
    fn clc_response(&mut self, e: &SExpr) -> Res<TileRef> {
        const HOW: &str = "declare one as `let resp = clc_response();` (or `clc_response(stages = S)` and pass a stage `resp[s]`)";
        let t = self.tile_ref(e)?;
        let TileRef::Buf { buf, index } = &t else {
            return Err(self.fail(
                e,
                format!("a cluster-launch-control response lives in shared memory: {HOW}"),
            ));
        };
        let b = &self.kernel.buffers[*buf];
        let (name, eb) = (b.name.clone(), b.elem.bytes() as u64);
        let why = if b.space != Space::Shared {
            Some(format!(
                "`{name}` is a {} tile; a cluster-launch-control response is 16 bytes of shared memory",
                b.space.name()
            ))
        } else if b.layout.swizzle != Swizzle::None {
            Some(format!(
                "`{name}` is swizzled; a cluster-launch-control response is 16 contiguous bytes"
            ))
        } else {
            let dims = b.layout.shape.get(index.len()..).unwrap_or(&[]);
            let bytes = dims.iter().map(|&d| d as u64).product::<u64>() * eb;
            let misaligned = b.layout.stride[..index.len().min(b.layout.stride.len())]
                .iter()
                .any(|&s| !(s as u64 * eb).is_multiple_of(RESPONSE_BYTES));
            if bytes != RESPONSE_BYTES {
                Some(format!(
                    "this tile of `{name}` is {bytes} bytes; a cluster-launch-control response is 16 bytes, 16-byte aligned (PTX ISA §9.7.13.17)"
                ))
            } else if misaligned || !b.layout.is_row_major() {
                Some(format!(
                    "this tile of `{name}` is not at a 16-byte-aligned offset (a response must be naturally aligned, PTX ISA §9.7.13.17)"
                ))
            } else {
                None
            }
        };
        match why {
            Some(why) => Err(self.fail(e, format!("{why}: {HOW}"))),
            None => Ok(t),
        }
    }

    /// `let ok = clc::is_canceled(resp);` / `let (x, y) = clc::first_cta(resp);`: new
    /// variables bound to the decoded values.
    pub(crate) fn clc_let(
        &mut self,
        l: &syn::Local,
        (word, c): (&'static Word, &syn::ExprCall),
    ) -> Res<Stmt> {
        let idents: Vec<(&Ident, bool)> = match &l.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                vec![(&p.ident, p.mutability.is_some())]
            }
            syn::Pat::Tuple(t) if word.id == Id::ClcFirstCta => {
                let mut v = Vec::new();
                for e in &t.elems {
                    match e {
                        syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            v.push((&p.ident, p.mutability.is_some()))
                        }
                        other => return Err(self.fail(other, "expected a name")),
                    }
                }
                v
            }
            p => {
                let want = if word.id == Id::ClcFirstCta {
                    "`let x = …` or `let (x, y, z) = …`"
                } else {
                    "`let ok = …`"
                };
                return Err(self.fail(p, format!("expected {want}")));
            }
        };
        if idents.is_empty() || idents.len() > 3 {
            return Err(self.fail(
                &l.pat,
                "`clc::first_cta` gives the first CTA's x, y and z: bind one to three names",
            ));
        }
        let ty = query_type(word);
        let mut dsts = Vec::new();
        for (ident, mutable) in idents {
            let var = self.kernel.new_var(ident.to_string(), ty);
            self.bind(ident, Local::Var { var, mutable })?;
            dsts.push(var);
        }
        self.clc_query(word, c, dsts)
    }

    /// `ok = clc::is_canceled(resp);` into an existing `let mut` variable.
    pub(crate) fn clc_assign(
        &mut self,
        left: &SExpr,
        (word, c): (&'static Word, &syn::ExprCall),
    ) -> Res<Stmt> {
        let var = self.assign_target(left)?;
        let ty = query_type(word);
        if self.kernel.vars[var].ty != ty {
            let have = self.kernel.vars[var].ty.name();
            return Err(self.fail(
                left,
                format!(
                    "`{}` gives a {}; this variable is a {have}",
                    word.full_name(),
                    ty.name()
                ),
            ));
        }
        self.clc_query(word, c, vec![var])
    }

    fn clc_query(
        &mut self,
        word: &'static Word,
        c: &syn::ExprCall,
        dsts: Vec<Handle<Var>>,
    ) -> Res<Stmt> {
        let args = self.word_args(word, &c.args, c)?;
        let resp = self.clc_response(args.pos[0])?;
        let span = self
            .spans
            .intern_range((span_range(&c.func).0, c.paren_token.span.close()));
        let op = match word.id {
            Id::ClcIsCanceled => Op::ClcIsCanceled { resp, dst: dsts[0] },
            _ => Op::ClcFirstCta { resp, dsts },
        };
        Ok(Stmt::at(StmtKind::Op(op), span))
    }

    /// A query written as a statement: its value would be lost.
    pub(crate) fn clc_unbound(&mut self, w: &Word, c: &syn::ExprCall) -> Fail {
        let bind = if w.id == Id::ClcFirstCta {
            "let (x, y) = clc::first_cta(resp);"
        } else {
            "let ok = clc::is_canceled(resp);"
        };
        self.fail(
            c,
            format!("`{}` gives a value; bind it: `{bind}`", w.full_name()),
        )
    }
}

/// The type of a query's values.
fn query_type(word: &Word) -> ScalarType {
    match word.id {
        Id::ClcIsCanceled => ScalarType::Pred,
        _ => ScalarType::U32,
    }
}
