//! Atomic reductions into global memory (issue #30 item 3): `atomic::add/min/max` (a register
//! tile, `red`/`atom`, PTX ISA §9.7.13.5–6) and `tma::reduce_add/min/max` (a shared tile,
//! `cp.reduce.async.bulk.tensor`, §9.7.9.25.5.2), both an `Op::Copy` with `atomic` and its
//! variant forced.
//!
//! - `atomic::add(y.tile(i, j), t, scope = gpu)`: `scope` is required (`cta`, `cluster`,
//!   `gpu`: which threads the update is atomic with), `sem` is `relaxed` unless given
//!   (`release`; with `old = o` also `acquire`, `acq_rel`); `old = o` names a register tile
//!   of `t`'s layout and `y`'s type that receives the values before the update.
//! - `tma::reduce_add(y.tile(i, j), s)`: one thread; scope and semantics are the
//!   instruction's (relaxed, gpu), so neither is written.
//!
//! Checked here, at the user's token: the scope and semantics words, `acquire` without old
//! values, and the operation against the tensor's element type. The layout, the threads and
//! the box are the variants' predicates (`reg_atomic`, `tma_reduce`).

use super::ops::CallArgs;
use super::stmt::strip_parens;
use super::vocab::{Id, Word};
use super::{Lowerer, Res};
use syn::Expr as SExpr;
use tirx_ir::{Atomic, AtomicOp, CopyVariant, MemScope, MemSem, Op, TileRef};

impl Lowerer<'_> {
    /// `atomic::<op>(dst, src, scope = …[, sem = …][, old = o])` and
    /// `tma::reduce_<op>(dst, src)`.
    pub(crate) fn atomic_op(&mut self, w: &Word, args: &CallArgs, c: &syn::ExprCall) -> Res<Op> {
        let (op, tma) = match w.id {
            Id::AtomicAdd => (AtomicOp::Add, false),
            Id::AtomicMin => (AtomicOp::Min, false),
            Id::AtomicMax => (AtomicOp::Max, false),
            Id::TmaReduceAdd => (AtomicOp::Add, true),
            Id::TmaReduceMin => (AtomicOp::Min, true),
            _ => (AtomicOp::Max, true),
        };
        let dst = self.tile_ref(args.pos[0]);
        let src = self.tile_ref(args.pos[1]);
        let (dst, src) = (dst?, src?);
        let TileRef::Global { tensor, .. } = &dst else {
            return Err(self.fail(
                args.pos[0],
                format!(
                    "`{}` reduces into a tile of a global tensor (`y.tile(i, j)`)",
                    w.full_name()
                ),
            ));
        };
        if let Some(elem) = self
            .kernel
            .sig
            .tensors
            .iter()
            .find(|t| &t.name == tensor)
            .map(|t| t.elem)
        {
            let fits = if tma {
                tirx_ir::dispatch::copy::tma_reduce::op_fits(op, elem)
            } else {
                tirx_ir::dispatch::copy::reg_atomic::op_fits(op, elem)
            };
            if let Err(why) = fits {
                return Err(self.fail(args.pos[0], why));
            }
            // A register tile's values convert into the tensor's type as a store's would: an
            // integer tile adds into a tensor of its own type only.
            if let (false, TileRef::Buf { buf, .. }) = (tma, &src) {
                let tile = self.kernel.buffers[*buf].elem;
                if let Err(why) = tirx_ir::regtile::access::check_types(tile, elem, true) {
                    return Err(self.fail(args.pos[1], why.to_string()));
                }
            }
        }
        let (scope, sem, old) = if tma {
            (MemScope::Gpu, MemSem::Relaxed, None)
        } else {
            self.atomic_args(w, args, c)?
        };
        Ok(Op::Copy {
            dst,
            src,
            bar: None,
            multicast: None,
            scale: None,
            variant: Some(if tma {
                CopyVariant::TmaReduce
            } else {
                CopyVariant::RegAtomic
            }),
            pair: false,
            atomic: Some(Atomic {
                op,
                scope,
                sem,
                old,
            }),
        })
    }

    /// `scope = …`, `sem = …`, `old = o` of a register-tile atomic.
    fn atomic_args(
        &mut self,
        w: &Word,
        args: &CallArgs,
        c: &syn::ExprCall,
    ) -> Res<(MemScope, MemSem, Option<TileRef>)> {
        let Some(s) = args.get("scope") else {
            return Err(self.fail(
                c,
                format!(
                    "`{}` needs `scope = cta`, `cluster` or `gpu`: the threads it is atomic with (a split-K sum from CTAs of different clusters is `gpu`)",
                    w.full_name()
                ),
            ));
        };
        let scope = self.word_arg(
            s,
            "scope",
            MemScope::ALL,
            MemScope::name,
            "`sys` is not offered: tirx kernels share no memory with the host while they run",
        )?;
        let sem = match args.get("sem") {
            Some(e) => self.word_arg(e, "sem", MemSem::ALL, MemSem::name, "")?,
            None => MemSem::Relaxed,
        };
        let old = args.get("old").map(|o| self.tile_ref(o)).transpose()?;
        if old.is_none()
            && matches!(sem, MemSem::Acquire | MemSem::AcqRel)
            && let Some(e) = args.get("sem")
        {
            return Err(self.fail(
                e,
                format!(
                    "`sem = {sem}` orders later reads after the atomic's read, and without `old = o` it reads nothing back (`red`, which is `relaxed` or `release`); ask for the old values or write `sem = release`"
                ),
            ));
        }
        Ok((scope, sem, old))
    }

    /// A named argument that is one of `all`'s names.
    fn word_arg<T: Copy>(
        &mut self,
        e: &SExpr,
        key: &str,
        all: &[T],
        name: fn(T) -> &'static str,
        note: &str,
    ) -> Res<T> {
        let given = crate::args::path_ident(strip_parens(e)).map(|i| i.to_string());
        if let Some(v) = all
            .iter()
            .copied()
            .find(|v| given.as_deref() == Some(name(*v)))
        {
            return Ok(v);
        }
        let names: Vec<String> = all.iter().map(|v| format!("`{}`", name(*v))).collect();
        let note = if note.is_empty() || given.as_deref() != Some("sys") {
            String::new()
        } else {
            format!("; {note}")
        };
        Err(self.fail(e, format!("`{key}` is one of {}{note}", names.join(", "))))
    }
}
