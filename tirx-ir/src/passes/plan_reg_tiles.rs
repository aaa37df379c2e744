//! plan-reg-tiles — checks every register-tile op against its tiles and its threads, and
//! gives each reduction whose rows span warps its shared-memory scratch.
//!
//! Phase: Tile. Preconditions: scopes verified. Postconditions: every `compute` and `reduce`
//! runs on exactly the threads its tiles are spread over, every tile it reads has the
//! destination's layout or is a statistic of it, every value has the destination's type (or
//! widens into it); every `reduce` whose statistic combines warps has `scratch` set (a fresh
//! shared `f32` buffer of `threads · registers` elements, named `<dst>.scratch`) and is owned
//! by the whole CTA, and `again` set when it sits in a loop; every `reduce … across = cluster`
//! has `cluster_scratch` (`<dst>.cluster`) and is owned by the whole CTA of a kernel with a
//! cluster: in the pull form (`across = cluster_pull`) `threads · registers` f32; in the push
//! form one slot per (thread group of the statistic, cluster rank), in two sets when the op
//! runs again, and `cluster_bar` (`<dst>.cluster.full`, one mbarrier per set, one arrival). Violations are errors at the op.

use super::Pass;
use crate::abi::{ElemType, Swizzle};
use crate::arena::Handle;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Buffer, Kernel, Layout, Op, Scope, Space, Stmt, StmtKind, TileRef, VotePred};
use crate::passes::walk::visit_mut_with;
use crate::regtile::{RegTileError, check_owner, layout};
use crate::valid::scope::Threads;
use std::collections::HashMap;

/// The pass.
pub struct PlanRegTiles;

/// What an op sees from its enclosing statements.
#[derive(Clone)]
struct Ctx {
    threads: Threads,
    /// The enclosing scopes' intersection (whose `threads` is `threads`).
    set: crate::valid::scope::ScopeSet,
    in_loop: bool,
    /// The innermost enclosing scope (`Cta` at the top).
    scope: Scope,
}

fn enter(c: &Ctx, s: &Stmt) -> Ctx {
    match &s.kind {
        StmtKind::Scope { scope, .. } => {
            let set = c.set.enter(scope).unwrap_or(crate::valid::scope::ScopeSet {
                threads: c.threads.enter(scope),
                ..c.set
            });
            Ctx {
                threads: set.threads,
                set,
                scope: scope.clone(),
                ..c.clone()
            }
        }
        StmtKind::For { .. } | StmtKind::Loop { .. } => Ctx {
            in_loop: true,
            ..c.clone()
        },
        _ => c.clone(),
    }
}

/// The tiles an op touches.
fn tiles_of(op: &Op) -> Vec<Handle<Buffer>> {
    match op {
        Op::Compute { dst, value } => {
            let mut v = vec![*dst];
            value.tiles(&mut v);
            v
        }
        Op::Reduce {
            dst, src, value, ..
        } => {
            let mut v = vec![*src, *dst];
            if let Some(e) = value {
                e.tiles(&mut v);
            }
            v
        }
        Op::WarpVote {
            pred: VotePred::Tile { src, value },
            ..
        } => {
            let mut v = vec![*src];
            value.tiles(&mut v);
            v
        }
        Op::Copy {
            dst, src, atomic, ..
        } => [
            Some(dst),
            Some(src),
            atomic.as_ref().and_then(|a| a.old.as_ref()),
        ]
        .into_iter()
        .flatten()
        .filter_map(|t| match t {
            TileRef::Buf { buf, .. } => Some(*buf),
            TileRef::Global { .. } => None,
        })
        .collect(),
        _ => Vec::new(),
    }
}

/// A scratch buffer to add: for the reduce at this statement (`cluster`: its exchange across
/// the cluster).
struct Scratch {
    elements: u32,
    name: String,
    cluster: bool,
    /// Receive barriers of the push form (0: none).
    bars: u32,
}

fn check(k: &Kernel, op: &mut Op, c: &Ctx) -> Result<Vec<Scratch>, RegTileError> {
    match op {
        Op::Compute { dst, value } => {
            let l = layout(k, *dst)?;
            check_owner(c.threads, &l, &k.buffers[*dst].name)?;
            let mut tiles = Vec::new();
            value.tiles(&mut tiles);
            for t in tiles {
                let lt = layout(k, t)?;
                if lt != l && !(0..2).any(|a| l.reduce(a).as_ref() == Ok(&lt)) {
                    return Err(RegTileError::Layout {
                        tile: k.buffers[t].name.clone(),
                        dst: k.buffers[*dst].name.clone(),
                    });
                }
            }
            crate::regtile::ttype(k, value)?;
            Ok(Vec::new())
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
            cluster_bar: _,
        } => {
            let ls = layout(k, *src)?;
            // The statistic holds the values' type: f32 for floats, the integer type for
            // integers (`regtile::reduce` combines in that type).
            let vt = match value {
                Some(v) => crate::regtile::ttype(k, v)?,
                None => crate::regtile::tile_ttype(k.buffers[*src].elem),
            };
            // An index statistic (`argmax`/`argmin`) is `u32` whatever the values.
            let want = match vt {
                _ if kind.is_arg() => Some(crate::abi::ElemType::U32),
                crate::ir::TType::I32
                | crate::ir::TType::U32
                | crate::ir::TType::I64
                | crate::ir::TType::U64 => crate::regtile::ttype_elem(vt),
                _ => Some(crate::abi::ElemType::F32),
            };
            if want != Some(k.buffers[*dst].elem) {
                return Err(RegTileError::Assign {
                    dst: k.buffers[*dst].name.clone(),
                    want: k.buffers[*dst].elem.name(),
                    got: vt.name(),
                });
            }
            if let Some(v) = value {
                let mut tiles = Vec::new();
                v.tiles(&mut tiles);
                for t in tiles {
                    let lt = layout(k, t)?;
                    if lt != ls && !(0..2).any(|a| ls.reduce(a).as_ref() == Ok(&lt)) {
                        return Err(RegTileError::Layout {
                            tile: k.buffers[t].name.clone(),
                            dst: k.buffers[*src].name.clone(),
                        });
                    }
                }
                if crate::regtile::ttype(k, v)? == crate::ir::TType::Pred {
                    return Err(RegTileError::Type {
                        op: "a reduction",
                        want: "float or integer values",
                        got: crate::regtile::ttype(k, v)?.name(),
                    });
                }
            }
            let ld = layout(k, *dst)?;
            check_owner(c.threads, &ls, &k.buffers[*src].name)?;
            if ls.reduce(*axis as usize)? != ld {
                return Err(RegTileError::ReduceLayout {
                    dst: k.buffers[*dst].name.clone(),
                    src: k.buffers[*src].name.clone(),
                    axis: *axis,
                });
            }
            let warps = ls.reduce_bits(*axis as usize).iter().any(|&b| b >= 5);
            // An index statistic exchanges (key, index) pairs, a 64-bit integer statistic
            // 8-byte values: two 4-byte slots per register.
            let slots = if kind.is_arg() || k.buffers[*dst].elem.is_int64() {
                2
            } else {
                1
            };
            let owner = ls.thread_count();
            let whole = c.threads == Threads::Cta(k.sig.threads) && owner == k.sig.threads;
            let mut out = Vec::new();
            if warps && scratch.is_none() {
                if !whole {
                    return Err(RegTileError::CrossWarp {
                        tile: k.buffers[*src].name.clone(),
                        owner,
                        cta: k.sig.threads,
                    });
                }
                *again = c.in_loop;
                out.push(Scratch {
                    elements: slots * owner * ld.value_count(),
                    name: format!("{}.scratch", k.buffers[*dst].name),
                    cluster: false,
                    bars: 0,
                });
            }
            if *cluster && cluster_scratch.is_none() {
                let size: u32 = k.sig.cluster.iter().product();
                if size < 2 || !whole {
                    return Err(RegTileError::CrossCluster {
                        tile: k.buffers[*src].name.clone(),
                        cluster: size,
                        owner,
                        cta: k.sig.threads,
                    });
                }
                *again = c.in_loop;
                // The pull form: one slot per thread group, read by every peer. The push form:
                // one slot per (group, rank) — the statistic's groups are the owner's threads
                // with the axis bits cleared — in two alternating sets when it runs again.
                let (elements, bars) = if *pull {
                    (slots * owner * ld.value_count(), 0)
                } else {
                    let groups = owner >> ls.reduce_bits(*axis as usize).len();
                    let sets = if c.in_loop { 2 } else { 1 };
                    (sets * size * groups * slots * ld.value_count(), sets)
                };
                out.push(Scratch {
                    elements,
                    name: format!("{}.cluster", k.buffers[*dst].name),
                    cluster: true,
                    bars,
                });
            }
            Ok(out)
        }
        Op::WarpVote {
            pred: VotePred::Tile { src, value },
            ..
        } => {
            let ls = layout(k, *src)?;
            check_owner(c.threads, &ls, &k.buffers[*src].name)?;
            let mut tiles = Vec::new();
            value.tiles(&mut tiles);
            for t in tiles {
                let lt = layout(k, t)?;
                if lt != ls && !(0..2).any(|a| ls.reduce(a).as_ref() == Ok(&lt)) {
                    return Err(RegTileError::Layout {
                        tile: k.buffers[t].name.clone(),
                        dst: k.buffers[*src].name.clone(),
                    });
                }
            }
            let got = crate::regtile::ttype(k, value)?;
            if got != crate::ir::TType::Pred {
                return Err(RegTileError::Type {
                    op: "a warp vote",
                    want: "a predicate",
                    got: got.name(),
                });
            }
            Ok(Vec::new())
        }
        _ => Ok(Vec::new()),
    }
}

impl Pass for PlanRegTiles {
    fn name(&self) -> &'static str {
        "plan-reg-tiles"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        let mut body = std::mem::take(&mut k.body);
        let top = Ctx {
            threads: Threads::Cta(k.sig.threads),
            set: crate::valid::scope::ScopeSet::cta(k.sig.threads),
            in_loop: false,
            scope: Scope::Cta,
        };
        // The scope each register tile is first used in: its owners. A tile's registers are
        // those threads'; another scope with as many threads holds other registers.
        let mut owners: HashMap<Handle<Buffer>, Scope> = HashMap::new();
        visit_mut_with(&mut body, &top, &enter, &mut |s, c| {
            let span = s.span;
            let StmtKind::Op(op) = &mut s.kind else {
                return;
            };
            for t in tiles_of(op) {
                if k.buffers[t].space != Space::Reg {
                    continue;
                }
                let owner = owners.entry(t).or_insert_with(|| c.scope.clone());
                if *owner != c.scope {
                    errs.push(Diagnostic::new(
                        span,
                        RegTileError::Owner {
                            tile: k.buffers[t].name.clone(),
                            first: format!("{owner:?}"),
                            here: format!("{:?}", c.scope),
                        },
                    ));
                    return;
                }
            }
            match check(k, op, c) {
                Ok(scratches) => {
                    for sc in scratches {
                        let h = k.buffers.append(Buffer {
                            name: sc.name.clone(),
                            space: Space::Shared,
                            elem: ElemType::F32,
                            layout: Layout::row_major(&[sc.elements], Swizzle::None),
                            offset: None,
                            tmem_cols: None,
                            alias: None,
                            regs: None,
                            span,
                        });
                        let bar = (sc.bars > 0).then(|| {
                            k.barriers.append(crate::ir::Barrier {
                                name: format!("{}.full", sc.name),
                                count: sc.bars,
                                arrivals: 1,
                                offset: None,
                                span,
                            })
                        });
                        if let Op::Reduce {
                            scratch,
                            cluster_scratch,
                            cluster_bar,
                            ..
                        } = op
                        {
                            if sc.cluster {
                                *cluster_scratch = Some(h);
                                *cluster_bar = bar;
                            } else {
                                *scratch = Some(h);
                            }
                        }
                    }
                }
                Err(e) => errs.push(Diagnostic::new(span, e)),
            }
        });
        k.body = body;
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
