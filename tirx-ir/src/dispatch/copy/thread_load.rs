//! `thread_load` — a global tile into a shared buffer, copied by the threads themselves.
//!
//! When: `copy(smem_tile, tensor.tile(i, j))` with no barrier, run by every thread of the CTA
//! (outside any scope); a 2-D bf16/f16 tensor; a dense row-major shared tile of the same
//! element type with swizzle none, or B128 with 128-byte rows (the K-major layout wgmma's
//! descriptors read); the tile's elements a multiple of the CTA's threads.
//! Before: `copy @a_s <- global a[%m, %k]`
//! After: thread t owns a fixed grid of the R×C tile: with g = gcd(T, C) and TR = T / g, the
//! columns t % g + g·j (j < C / g) of the rows t / g + TR·i (i < R / TR), so consecutive
//! threads read consecutive elements of a row. Per element:
//! `mov.b16 h, 0; @in ld.global.b16 h, [row_addr + 2·g·j]; st.shared.b16 [s], h` with
//! - `row_addr` = `p_a_ptr` + (row·`p_a_stride0` + col)·2, advanced by TR rows per `i`;
//! - `in` = row < M ∧ col < K (shape parameters): outside the tensor the tile holds zeros;
//! - `s` = the tile's address + swizzle(row·RB + col·2), the swizzle of PTX ISA §5.5.7
//!   "Swizzling Modes" (`encode::swizzle::swizzle_offset`: for B128, 16-byte chunk c of row r
//!   lands at chunk c ^ (r % 8)), so the tile is byte for byte what a TMA box with the same
//!   swizzle writes, and the MMA reads it with the same descriptors.
//!
//! Completion: nothing to wait for — each thread's stores are done when it moves on. But they
//! are generic-proxy stores, and wgmma / tcgen05.mma read shared memory through the async
//! proxy: before the MMA the kernel writes `fence::proxy_async()` (each thread orders its own
//! stores before later async-proxy reads, PTX ISA §9.7.13.4 and §8.6 "Proxies") and then
//! `sync_threads()` (every thread's stores and fence are done). The variant does not emit
//! them, so a kernel can copy several tiles under one fence and one barrier.
//! PTX used: §9.7.9.8 (ld), §9.7.9.10 (st), §9.7.9.1 (mov), §9.7.9.21 (cvt), §9.7.1 (integer
//! arithmetic), §9.7.7.1 (setp).

use crate::abi::{AbiParam, ElemType, Swizzle};
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::inst::reg;
use crate::ir::{
    BinOp, Buffer, CmpOp, Expr, Inst, Kernel, Op, Operand, ScalarType as T, Space, Special,
    TileRef, Var,
};
use crate::lower::{Lower, add, mul};
use crate::valid::scope::Threads;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::ThreadLoad,
    priority: 0,
    applies,
    lower,
};

/// The copy, checked: the shared tile and the global tile it reads.
struct Tile<'o> {
    buf: Handle<Buffer>,
    index: &'o [Expr],
    rows: u32,
    cols: u32,
    elem: ElemType,
    swizzle: Swizzle,
    tensor: &'o str,
    coords: &'o [Expr],
}

/// How the CTA's threads divide an R×C tile: thread t owns the columns `t % g + g·j`
/// (`j < nc`) of the rows `t / g + tr·i` (`i < nr`), with `g = gcd(T, C)` and `tr = T / g`.
///
/// Every element has exactly one owner: `T | R·C` makes `tr` divide R (`tr` is coprime to
/// `C / g`), so the `tr × g` thread grid tiles the R×C tile `nr × nc` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    g: u32,
    tr: u32,
    nr: u32,
    nc: u32,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Plan {
    fn new(rows: u32, cols: u32, threads: u32) -> Result<Plan, Reject> {
        let elems = rows as u64 * cols as u64;
        if threads == 0 || !elems.is_multiple_of(threads as u64) {
            return Err(Reject::ThreadShare {
                rows,
                cols,
                threads,
            });
        }
        let g = gcd(threads, cols);
        let tr = threads / g;
        Ok(Plan {
            g,
            tr,
            nr: rows / tr,
            nc: cols / g,
        })
    }
    /// Tile (row, column) of thread `t`'s element `(i, j)`.
    #[cfg(test)]
    fn element(&self, t: u32, i: u32, j: u32) -> (u32, u32) {
        (t / self.g + self.tr * i, t % self.g + self.g * j)
    }
}

fn tile<'o>(k: &Kernel, dst: &'o TileRef, src: &'o TileRef) -> Result<Tile<'o>, Reject> {
    let TileRef::Global { tensor, coords, .. } = src else {
        return Err(Reject::NotGlobal { side: "source" });
    };
    let TileRef::Buf { buf, index } = dst else {
        return Err(Reject::NotBuffer {
            what: "the destination",
        });
    };
    let b = &k.buffers[*buf];
    if b.space != Space::Shared {
        return Err(Reject::StoreSpace {
            buffer: b.name.clone(),
            space: b.space,
        });
    }
    let t = k
        .sig
        .tensors
        .iter()
        .find(|t| &t.name == tensor)
        .ok_or_else(|| Reject::UnknownTensor {
            tensor: tensor.clone(),
        })?;
    if !matches!(b.elem, ElemType::Bf16 | ElemType::F16) || t.elem != b.elem {
        return Err(Reject::ThreadElem {
            buffer: b.name.clone(),
            elem: b.elem,
            tensor: tensor.clone(),
            tensor_elem: t.elem,
        });
    }
    if t.shape.len() != 2 || coords.len() != 2 {
        return Err(Reject::ThreadRank {
            tensor: tensor.clone(),
            rank: t.shape.len(),
            coords: coords.len(),
        });
    }
    if !b.layout.is_row_major() {
        return Err(Reject::NotRowMajor {
            buffer: b.name.clone(),
        });
    }
    // Leading dimensions of the dense tile merge into rows, as for TMA boxes.
    let mut dims: Vec<u32> = b.layout.shape.get(index.len()..).unwrap_or(&[]).to_vec();
    while dims.len() > 2 {
        let outer = dims.remove(0);
        dims[0] *= outer;
    }
    let [rows, cols] = dims[..] else {
        return Err(Reject::TileRank {
            buffer: b.name.clone(),
            rank: dims.len(),
        });
    };
    let row_bytes = cols * b.elem.bytes();
    match b.layout.swizzle {
        Swizzle::None => {}
        Swizzle::B128 if row_bytes != 128 => {
            return Err(Reject::SwizzleRows {
                buffer: b.name.clone(),
                row_bytes,
            });
        }
        // The swizzle is computed on offsets within the tile, so every tile an index can pick
        // must start on a swizzle repeat (the buffer itself is aligned by plan-memory).
        Swizzle::B128 if !index.is_empty() && !(rows * row_bytes).is_multiple_of(1024) => {
            return Err(Reject::SwizzleRepeat {
                buffer: b.name.clone(),
                tile_bytes: rows * row_bytes,
            });
        }
        Swizzle::B128 => {}
        other => {
            return Err(Reject::SwizzleKind {
                buffer: b.name.clone(),
                swizzle: other,
            });
        }
    }
    Ok(Tile {
        buf: *buf,
        index,
        rows,
        cols,
        elem: b.elem,
        swizzle: b.layout.swizzle,
        tensor,
        coords,
    })
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy {
        dst,
        src,
        bar,
        multicast,
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp { expected: "a copy" });
    };
    let t = tile(cx.k, dst, src)?;
    if bar.is_some() || multicast.is_some() {
        return Err(Reject::ThreadCopySignals);
    }
    let Threads::Cta(threads) = cx.threads else {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "this path divides the tile over every thread of the CTA (call it outside any scope)",
        });
    };
    Plan::new(t.rows, t.cols, threads)?;
    Ok(())
}

/// `o` with the buffer's swizzle applied (`regtile::shared::swizzled`, the formula of
/// `encode::swizzle::swizzle_offset`).
fn swizzled(sw: Swizzle, o: Handle<Var>) -> Expr {
    crate::regtile::shared::swizzled(sw, Expr::Var(o))
}

/// The 64-bit global address of `tensor[row, col]` (both u32 variables), and the row stride.
fn global_addr(
    lw: &mut Lower,
    tensor: &str,
    row: Handle<Var>,
    col: Handle<Var>,
    elem: ElemType,
) -> (Handle<Var>, Handle<Var>) {
    let ptr_name = lw.param(AbiParam::Pointer {
        tensor: tensor.into(),
    });
    let stride_name = lw.param(AbiParam::Stride {
        tensor: tensor.into(),
        dim: 0,
    });
    let ptr = lw.var("ptr", T::U64);
    lw.inst(Inst::ld_param("u64", ptr, &ptr_name));
    let stride = lw.var("stride", T::U64);
    lw.inst(Inst::ld_param("u64", stride, &stride_name));
    let r64 = lw.var("row64", T::U64);
    lw.inst(Inst::cvt("u64.u32", r64, reg(row)));
    let c64 = lw.var("col64", T::U64);
    lw.inst(Inst::cvt("u64.u32", c64, reg(col)));
    let off = lw.var("off", T::U64);
    lw.inst(Inst::binary("mul.lo.u64", off, reg(r64), reg(stride)));
    lw.inst(Inst::binary("add.u64", off, reg(off), reg(c64)));
    let shift = Operand::Imm(elem.bytes().trailing_zeros() as i64);
    lw.inst(Inst::binary("shl.b64", off, reg(off), shift));
    let addr = lw.var("gaddr", T::U64);
    lw.inst(Inst::binary("add.u64", addr, reg(ptr), reg(off)));
    (addr, stride)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("thread_load on a non-copy"));
    };
    let t = tile(lw.k, dst, src).map_err(|e| lw.error(e))?;
    let plan = Plan::new(t.rows, t.cols, lw.k.sig.threads).map_err(|e| lw.error(e))?;
    let eb = t.elem.bytes();
    let shape = lw.tensor_shape(t.tensor);
    let (rows, cols) = (lw.dim(&shape[0]), lw.dim(&shape[1]));

    // This thread's first row and column, in the tile and in the tensor.
    let tid = Expr::Special(Special::TidX);
    let tr = lw.let_(
        "tr",
        T::U32,
        Expr::bin(BinOp::Div, tid.clone(), Expr::u32(plan.g)),
    );
    let tc = lw.let_("tc", T::U32, Expr::bin(BinOp::Rem, tid, Expr::u32(plan.g)));
    let grow = add(mul(t.coords[0].clone(), Expr::u32(t.rows)), Expr::Var(tr));
    let grow = lw.let_("grow", T::U32, grow);
    let gcol = add(mul(t.coords[1].clone(), Expr::u32(t.cols)), Expr::Var(tc));
    let gcol = lw.let_("gcol", T::U32, gcol);

    let (mut gaddr, stride) = global_addr(lw, t.tensor, grow, gcol, t.elem);
    let step = lw.var("rowstep", T::U64);
    let step_scale = Operand::Imm((plan.tr * eb) as i64);
    lw.inst(Inst::binary("mul.lo.u64", step, reg(stride), step_scale));
    let col_ok: Vec<Handle<Var>> = (0..plan.nc)
        .map(|j| {
            let c = add(Expr::Var(gcol), Expr::u32(plan.g * j));
            lw.let_("col_in", T::Pred, Expr::cmp(CmpOp::Lt, c, cols.clone()))
        })
        .collect();
    let sbase = lw.smem_addr(t.buf, t.index)?;
    let sbase = lw.let_("sbase", T::U32, sbase);
    let row_bytes = t.cols * eb;
    let soff = add(
        mul(Expr::Var(tr), Expr::u32(row_bytes)),
        mul(Expr::Var(tc), Expr::u32(eb)),
    );
    let soff = lw.let_("soff", T::U32, soff);

    for i in 0..plan.nr {
        if i > 0 {
            let next = lw.var("gaddr", T::U64);
            lw.inst(Inst::binary("add.u64", next, reg(gaddr), reg(step)));
            gaddr = next;
        }
        let r = add(Expr::Var(grow), Expr::u32(plan.tr * i));
        let row_ok = lw.let_("row_in", T::Pred, Expr::cmp(CmpOp::Lt, r, rows.clone()));
        for (j, &col_in) in col_ok.iter().enumerate() {
            let j = j as u32;
            let inside = Expr::AndP(Box::new(Expr::Var(row_ok)), Box::new(Expr::Var(col_in)));
            let inside = lw.let_("in", T::Pred, inside);
            let h = lw.var("h", T::B16);
            lw.inst(Inst::mov("b16", h, Operand::Imm(0)));
            let goff = (plan.g * j * eb) as i64;
            lw.inst(Inst::ld_global("b16", h, gaddr, goff).guarded(inside, false));
            let o = add(
                Expr::Var(soff),
                Expr::u32(plan.tr * i * row_bytes + plan.g * j * eb),
            );
            let o = lw.let_("o", T::U32, o);
            let s = add(Expr::Var(sbase), swizzled(t.swizzle, o));
            let s = lw.let_("s", T::U32, s);
            lw.inst(Inst::st_shared("b16", s, 0, reg(h)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::swizzle::swizzle_offset;
    use crate::parse::parse_module;
    use crate::passes::run_pipeline;

    fn kernel(threads: u32, buffer: &str, body: &str) -> crate::ir::Kernel {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads {threads}
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  buffer @a_s: smem bf16 {buffer}
  barrier @bar: count 1 arrivals 1
{{
{body}}}
"
        );
        let m = parse_module(&text).expect("test input parses");
        m.kernels.into_iter().next().expect("one kernel")
    }

    fn errors(k: crate::ir::Kernel) -> String {
        match run_pipeline(k, false) {
            Ok(_) => panic!("expected an error"),
            Err(errs) => errs
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    const B128_TILE: &str = "(128, 64):(64, 1) swizzle B128";
    const COPY: &str = "  op copy @a_s <- global a[0:u32, 1:u32]\n";

    #[test]
    fn a_copy_without_a_barrier_in_cta_scope_is_a_thread_load() {
        let (k, snaps) = run_pipeline(kernel(128, B128_TILE, COPY), true).expect("compiles");
        let dispatched = &snaps
            .iter()
            .find(|s| s.pass == "dispatch-ops")
            .unwrap()
            .text;
        assert!(dispatched.contains("variant thread_load"), "{dispatched}");
        let ptx = k.to_string();
        // 128×64 over 128 threads: 64 elements each, one load and one store per element.
        assert_eq!(ptx.matches("ld.global.b16").count(), 64, "{ptx}");
        assert_eq!(ptx.matches("st.shared.b16").count(), 64, "{ptx}");
        assert!(
            ptx.contains("p_a_ptr") && ptx.contains("p_a_stride0"),
            "{ptx}"
        );
    }

    #[test]
    fn one_thread_is_refused_with_the_scope_it_needs() {
        let body = "  scope thread 0 {\n    op copy @a_s <- global a[0:u32, 0:u32]\n  }\n";
        let msg = errors(kernel(128, B128_TILE, body));
        assert!(
            msg.contains(
                "thread_load    refused: it runs on one thread; this path divides the tile over every thread of the CTA (call it outside any scope)"
            ),
            "{msg}"
        );
        assert!(
            msg.contains("tma_load       refused: a TMA load signals an mbarrier"),
            "{msg}"
        );
    }

    #[test]
    fn a_copy_with_a_barrier_stays_with_tma() {
        let body =
            "  scope thread 0 {\n    op copy @a_s <- global a[0:u32, 0:u32] bar @bar[0:u32]\n  }\n";
        let (_, snaps) = run_pipeline(kernel(128, B128_TILE, body), true).expect("compiles");
        let dispatched = &snaps
            .iter()
            .find(|s| s.pass == "dispatch-ops")
            .unwrap()
            .text;
        assert!(dispatched.contains("variant tma_load"), "{dispatched}");
    }

    #[test]
    fn layouts_it_cannot_write_are_refused() {
        let b128_narrow = errors(kernel(128, "(128, 32):(32, 1) swizzle B128", COPY));
        assert!(
            b128_narrow.contains("`a_s` has swizzle B128 and 64-byte rows; the 128B swizzle needs rows of exactly 128 bytes"),
            "{b128_narrow}"
        );
        let b64 = errors(kernel(128, "(128, 32):(32, 1) swizzle B64", COPY));
        assert!(
            b64.contains("`a_s` has swizzle B64; this path writes swizzle none or B128"),
            "{b64}"
        );
        let small = errors(kernel(128, "(8, 8):(8, 1) swizzle none", COPY));
        assert!(
            small.contains("the 8×8 tile has 64 elements, not a multiple of the CTA's 128 threads"),
            "{small}"
        );
    }

    #[test]
    fn an_unswizzled_tile_compiles() {
        let (k, _) = run_pipeline(kernel(128, "(64, 32):(32, 1) swizzle none", COPY), false)
            .expect("compiles");
        assert_eq!(k.to_string().matches("st.shared.b16").count(), 16);
    }

    #[test]
    fn every_element_has_exactly_one_owner() {
        for (rows, cols, threads) in [
            (128, 64, 128),
            (64, 64, 256),
            (8, 64, 128),
            (6, 64, 96),
            (256, 8, 128),
        ] {
            let plan = Plan::new(rows, cols, threads).unwrap();
            assert_eq!(plan.nr * plan.nc * threads, rows * cols);
            let mut seen = vec![0u32; (rows * cols) as usize];
            for t in 0..threads {
                for i in 0..plan.nr {
                    for j in 0..plan.nc {
                        let (r, c) = plan.element(t, i, j);
                        assert!(r < rows && c < cols, "{rows}×{cols}/{threads}: ({r}, {c})");
                        seen[(r * cols + c) as usize] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{rows}×{cols}/{threads}");
        }
        assert!(Plan::new(3, 64, 128).is_err());
    }

    /// Evaluates the expression `swizzled` builds, with its variable bound to `o`.
    fn eval(e: &Expr, o: u32) -> u32 {
        match e {
            Expr::Var(_) => o,
            Expr::Imm(v, _) => *v as u32,
            Expr::Bin(BinOp::Shr, a, b) => eval(a, o) >> eval(b, o),
            Expr::Bin(BinOp::And, a, b) => eval(a, o) & eval(b, o),
            Expr::Bin(BinOp::Xor, a, b) => eval(a, o) ^ eval(b, o),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_emitted_swizzle_is_swizzle_offset() {
        let mut k = kernel(128, B128_TILE, COPY);
        let o = k.new_var("o", T::U32);
        for sw in [Swizzle::None, Swizzle::B128] {
            let e = swizzled(sw, o);
            // Four 1024-byte repeats, at element (2-byte) granularity.
            for off in (0..4096).step_by(2) {
                assert_eq!(eval(&e, off), swizzle_offset(sw, off), "{sw:?} {off:#x}");
            }
        }
        // For B128 with 128-byte rows: chunk c of row r goes to chunk c ^ (r % 8).
        let e = swizzled(Swizzle::B128, o);
        for r in 0..16u32 {
            for c in 0..8u32 {
                assert_eq!(eval(&e, r * 128 + c * 16), r * 128 + (c ^ (r % 8)) * 16);
            }
        }
    }
}
