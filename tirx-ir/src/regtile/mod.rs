//! Register tiles lowered to per-thread instructions: the type rules of tile expressions,
//! the thread coordinates a layout gives each thread, and the lowering of `compute`
//! ([`compute`], with `exp2_poly3` in [`exp2_poly`]), `reduce` ([`reduce`]) and the register loads and stores the copy variants
//! use ([`access`]).
//!
//! A register tile is a vector of virtual registers per thread (`Lower::frags`), register `i`
//! holding the element its layout assigns to (thread, `i`). Every loop over elements here is
//! unrolled at build time: a thread's registers are named, never indexed at run time.

pub mod access;
pub mod atomic;
pub mod compute;
pub mod exp2_poly;
pub mod gather;
pub mod reduce;
pub mod shared;
pub mod vote;

use crate::abi::ElemType;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::ir::{
    BinOp, Buffer, Expr, Kernel, LayoutError, RegLayout, ScalarType, Space, Special, TBin, TExpr,
    TType, TUn, Var,
};
use crate::lower::Lower;

/// A register-tile op that does not fit its tiles.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegTileError {
    /// A buffer used as a register tile that is not one.
    #[error("`{name}` is not a register tile (declare it with `regs::<T>([R, C], layout = …)`)")]
    NotRegTile {
        /// The buffer.
        name: String,
    },
    /// A tile read by an op whose layout is neither the destination's nor a statistic of it.
    #[error(
        "`{tile}` has another layout than `{dst}` and is not a row or column statistic of it; elementwise ops combine tiles of one layout (and statistics reduced from it)"
    )]
    Layout {
        /// The tile read.
        tile: String,
        /// The destination.
        dst: String,
    },
    /// Operand types an operator does not take.
    #[error("`{op}` takes {want}; this operand is {got}")]
    Type {
        /// The operator or function.
        op: &'static str,
        /// What it takes.
        want: &'static str,
        /// What it got.
        got: &'static str,
    },
    /// A value of one type assigned to a tile of another without a cast.
    #[error(
        "`{dst}` holds {want}; this value is {got} (round explicitly with `cast::<{want}>(…)`; widening is implicit, narrowing never is)"
    )]
    Assign {
        /// The destination.
        dst: String,
        /// Its element type.
        want: &'static str,
        /// The value's type.
        got: &'static str,
    },
    /// The op runs on other threads than the ones that own the tile.
    #[error("`{tile}` is spread over {owner} threads, but this op runs on {threads}")]
    Threads {
        /// The tile.
        tile: String,
        /// Threads of its layout.
        owner: u32,
        /// The op's threads, described.
        threads: String,
    },
    /// A tile used by other threads than the ones that first used it.
    #[error(
        "`{tile}` lives in the registers of the threads of scope {first}, where it is first used; this op runs in scope {here}, whose registers are others'"
    )]
    Owner {
        /// The tile.
        tile: String,
        /// The scope of its first use.
        first: String,
        /// This op's scope.
        here: String,
    },
    /// A reduction whose rows span warps, in a tile owned by less than the whole CTA.
    #[error(
        "reducing `{tile}` combines values across warps through shared memory and a CTA barrier; the tile must be owned by the whole CTA ({cta} threads), not {owner}"
    )]
    CrossWarp {
        /// The tile.
        tile: String,
        /// Its threads.
        owner: u32,
        /// The CTA's threads.
        cta: u32,
    },
    /// A reduction across the cluster where there is no cluster, or not by the whole CTA.
    #[error(
        "reducing `{tile}` across the cluster exchanges values through distributed shared memory and a cluster barrier: the kernel needs a cluster of 2 or more CTAs (it has {cluster}) and the tile must be owned by the whole CTA ({cta} threads, not {owner})"
    )]
    CrossCluster {
        /// The tile.
        tile: String,
        /// The kernel's cluster size.
        cluster: u32,
        /// Its threads.
        owner: u32,
        /// The CTA's threads.
        cta: u32,
    },
    /// The layout of a statistic is not the one its tile reduces to.
    #[error("`{dst}` does not have the layout `{src}` reduces to along axis {axis}")]
    ReduceLayout {
        /// The statistic.
        dst: String,
        /// The tile.
        src: String,
        /// The axis.
        axis: u8,
    },
    /// A layout that cannot be built or reduced.
    #[error(transparent)]
    Layout2(#[from] LayoutError),
    /// A register tile touched while an asynchronous wgmma still uses it.
    #[error(
        "`{tile}` is {access} here while a wgmma issued earlier {role} and may still be running: retire it first with `wgmma::commit()` and `wgmma::wait(0)` (or a `wait(n)` that leaves only later groups pending)"
    )]
    InFlight {
        /// The tile.
        tile: String,
        /// "read" or "overwritten".
        access: &'static str,
        /// What the MMA does with it.
        role: &'static str,
    },
    /// A copy between a register tile and memory the variant cannot do.
    #[error("{0}")]
    Copy(String),
}

/// The layout of a register tile, or why `b` is not one. A register buffer declared without
/// a layout is a wgmma accumulator: its layout is the fragment's.
pub fn layout(k: &Kernel, b: Handle<Buffer>) -> Result<RegLayout, RegTileError> {
    let buf = &k.buffers[b];
    let not = || RegTileError::NotRegTile {
        name: buf.name.clone(),
    };
    match (&buf.regs, buf.space, &buf.layout.shape[..]) {
        (Some(l), Space::Reg, _) => Ok(l.clone()),
        (None, Space::Reg, &[m, n]) => RegLayout::wgmma_acc(m, n).map_err(|_| not()),
        _ => Err(not()),
    }
}

fn is_float(t: TType) -> bool {
    matches!(t, TType::Elem(_))
}

fn is_int(t: TType) -> bool {
    matches!(t, TType::I32 | TType::U32 | TType::I64 | TType::U64)
}

/// Whether `t` is a 64-bit integer (`i64`, `u64`).
pub fn is_int64(t: TType) -> bool {
    matches!(t, TType::I64 | TType::U64)
}

/// The value type of a tile of `elem`: floats as themselves, integers as `i32`/`u32`.
pub fn tile_ttype(elem: ElemType) -> TType {
    match elem {
        ElemType::I32 => TType::I32,
        ElemType::U32 => TType::U32,
        ElemType::I64 => TType::I64,
        ElemType::U64 => TType::U64,
        e => TType::Elem(e),
    }
}

/// The element type a tile holding values of `t` takes (`None` for predicates).
pub fn ttype_elem(t: TType) -> Option<ElemType> {
    match t {
        TType::Elem(e) => Some(e),
        TType::I32 => Some(ElemType::I32),
        TType::U32 => Some(ElemType::U32),
        TType::I64 => Some(ElemType::I64),
        TType::U64 => Some(ElemType::U64),
        TType::Pred => None,
    }
}

/// Whether `e` is an index expression: `row_index`/`col_index`, integer scalars and integer
/// arithmetic on them, reading no integer tile and casting to no integer type. Its `u32`
/// value takes the type of the `i32` tile it meets (indices of a tile are below 2³¹).
pub fn index_like(k: &Kernel, e: &TExpr) -> bool {
    let sub = |x: &TExpr| index_like(k, x);
    match e {
        TExpr::Tile(b) => !k.buffers[*b].elem.is_int(),
        TExpr::F32(_) | TExpr::Arg(_) | TExpr::Int(_) | TExpr::Index(_) => true,
        TExpr::Un(TUn::Cast(to), _) if to.is_int() => false,
        // An f32's bits are data, not an index.
        TExpr::Un(TUn::ToBits, _) => false,
        TExpr::Un(_, a) => sub(a),
        TExpr::Bin(_, a, b) | TExpr::Cmp(_, a, b) => sub(a) && sub(b),
        TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => sub(a) && sub(b) && sub(c),
        // Loaded data is not an index (a gathered float is a float, as a float tile is).
        TExpr::Gather { tensor, .. } => !gather::tensor_elem(k, tensor).is_ok_and(|e| e.is_int()),
    }
}

/// The common integer type of two integer operands: their own when equal; `i32`, `i64` or
/// `u64` when one is of that type and the other an index expression ([`index_like`]).
fn int_pair(k: &Kernel, a: &TExpr, ta: TType, b: &TExpr, tb: TType) -> Option<TType> {
    let takes_index = |t: TType| matches!(t, TType::I32 | TType::I64 | TType::U64);
    match (ta, tb) {
        (x, y) if x == y && is_int(x) => Some(x),
        (x, TType::U32) if takes_index(x) && index_like(k, b) => Some(x),
        (TType::U32, y) if takes_index(y) && index_like(k, a) => Some(y),
        _ => None,
    }
}

const FLOAT_OR_INT: &str =
    "two floats or two integers of one type (convert with `cast::<f32>(…)` or `cast::<i32>(…)`)";
const INTS: &str = "two integers of one type (`i32`, `i64` or `u64` tiles with tiles of their type or indices, `u32` with `u32`)";

/// The type of `a OP b`.
fn bin_ttype(k: &Kernel, op: TBin, a: &TExpr, b: &TExpr) -> Result<TType, RegTileError> {
    let (ta, tb) = (ttype(k, a)?, ttype(k, b)?);
    let odd = |want: fn(TType) -> bool| if want(ta) { tb } else { ta };
    let fail = |want: &'static str, got: TType| RegTileError::Type {
        op: op.name(),
        want,
        got: got.name(),
    };
    match op {
        TBin::And | TBin::Or => match (ta, tb) {
            (TType::Pred, TType::Pred) => Ok(TType::Pred),
            _ => Err(fail("two predicates", odd(|t| t == TType::Pred))),
        },
        // The shift count is any integer (`shl.b32`'s count is a `.u32`); the result has the
        // shifted value's type.
        TBin::Shl | TBin::Shr => match (ta, tb) {
            _ if is_int(ta) && is_int(tb) => Ok(ta),
            _ => Err(fail("integers", odd(is_int))),
        },
        TBin::Rem | TBin::BitAnd | TBin::BitOr | TBin::BitXor => {
            int_pair(k, a, ta, b, tb).ok_or_else(|| fail(INTS, odd(is_int)))
        }
        TBin::Add | TBin::Sub | TBin::Mul | TBin::Div | TBin::Min | TBin::Max => {
            if is_float(ta) && is_float(tb) {
                return Ok(TType::Elem(ElemType::F32));
            }
            int_pair(k, a, ta, b, tb).ok_or_else(|| {
                fail(
                    FLOAT_OR_INT,
                    if is_float(ta) || is_int(ta) { tb } else { ta },
                )
            })
        }
    }
}

/// The type of `cast::<to>(a)`, `a` of type `t`.
fn cast_ttype(to: ElemType, t: TType) -> Result<TType, RegTileError> {
    let fail = |want| RegTileError::Type {
        op: TUn::Cast(to).name(),
        want,
        got: t.name(),
    };
    match (t, to) {
        (TType::Pred, _) => Err(fail("a float or an integer")),
        // Integers convert to f32 only: an integer rounded to f32 and then to a 16-bit float
        // would round twice.
        (t, ElemType::F32) if is_int(t) => Ok(TType::Elem(ElemType::F32)),
        (t, to) if is_int(t) && to.is_int() => Ok(tile_ttype(to)),
        (_, _) if is_int(t) => Err(fail(
            "a float (an integer converts to f32 only: `cast::<bf16>(cast::<f32>(i))`)",
        )),
        (_, to) => Ok(tile_ttype(to)),
    }
}

/// The type of a tile expression (see `docs/language.md`, "Register tiles"): arithmetic on
/// floats is `f32` (16-bit tiles widen when read); on integers `i32` or `u32` (indices are
/// `u32` and take `i32` next to an `i32` value); comparisons and `&&`/`||` are predicates;
/// `cast::<T>` converts to `T`.
pub fn ttype(k: &Kernel, e: &TExpr) -> Result<TType, RegTileError> {
    let ty = |x: &TExpr| ttype(k, x);
    let got = |t: TType| t.name();
    Ok(match e {
        TExpr::Tile(b) => tile_ttype(k.buffers[*b].elem),
        TExpr::F32(_) => TType::Elem(ElemType::F32),
        // An `f32` argument, or an `i64`/`u64` one (32-bit integer arguments are `Int`).
        TExpr::Arg(name) => match k.sig.int_scalar(name) {
            Some(e) if e.is_int64() => tile_ttype(e),
            _ => TType::Elem(ElemType::F32),
        },
        TExpr::Int(_) | TExpr::Index(_) => TType::U32,
        TExpr::Un(TUn::Not, a) => match ty(a)? {
            TType::Pred => TType::Pred,
            t => {
                return Err(RegTileError::Type {
                    op: "!",
                    want: "a predicate",
                    got: got(t),
                });
            }
        },
        TExpr::Un(TUn::Cast(to), a) => cast_ttype(*to, ty(a)?)?,
        // The bits of an f32, and back (16-bit floats widen first: `to_bits` is f32's).
        TExpr::Un(TUn::ToBits, a) => match ty(a)? {
            TType::Elem(_) => TType::U32,
            t => {
                return Err(RegTileError::Type {
                    op: "to_bits",
                    want: "a float (its f32 bits)",
                    got: got(t),
                });
            }
        },
        TExpr::Un(TUn::FromBits, a) => match ty(a)? {
            TType::U32 | TType::I32 => TType::Elem(ElemType::F32),
            t => {
                return Err(RegTileError::Type {
                    op: "from_bits",
                    want: "a 32-bit integer (the bits of an f32)",
                    got: got(t),
                });
            }
        },
        // `-x` and `abs(x)` of an `i32` or `i64` (`neg.s32`, `abs.s32`: §9.7.1.6, §9.7.1.5).
        TExpr::Un(TUn::Neg | TUn::Abs, a) if matches!(ty(a)?, TType::I32 | TType::I64) => ty(a)?,
        TExpr::Un(f, a) => {
            let t = ty(a)?;
            if !is_float(t) {
                return Err(RegTileError::Type {
                    op: f.name(),
                    want: if matches!(f, TUn::Neg | TUn::Abs) {
                        "a float, an i32 or an i64"
                    } else {
                        "a float"
                    },
                    got: got(t),
                });
            }
            TType::Elem(ElemType::F32)
        }
        TExpr::Bin(op, a, b) => bin_ttype(k, *op, a, b)?,
        TExpr::Fma(a, b, c) => {
            for x in [a, b, c] {
                let t = ty(x)?;
                if !is_float(t) {
                    return Err(RegTileError::Type {
                        op: "fma",
                        want: "floats",
                        got: got(t),
                    });
                }
            }
            TType::Elem(ElemType::F32)
        }
        TExpr::Cmp(_, a, b) => {
            let (ta, tb) = (ty(a)?, ty(b)?);
            if !(is_float(ta) && is_float(tb)) && int_pair(k, a, ta, b, tb).is_none() {
                return Err(RegTileError::Type {
                    op: "a comparison",
                    want: FLOAT_OR_INT,
                    got: got(if is_float(ta) || is_int(ta) { tb } else { ta }),
                });
            }
            TType::Pred
        }
        TExpr::Gather { tensor, index, .. } => gather::ttype(k, tensor, index)?,
        TExpr::Select(c, a, b) => {
            let tc = ty(c)?;
            if tc != TType::Pred {
                return Err(RegTileError::Type {
                    op: "select",
                    want: "a predicate first",
                    got: got(tc),
                });
            }
            let (ta, tb) = (ty(a)?, ty(b)?);
            match (ta, tb) {
                (x, y) if x == y => x,
                (TType::Elem(_), TType::Elem(_)) => TType::Elem(ElemType::F32),
                _ => match int_pair(k, a, ta, b, tb) {
                    Some(t) => t,
                    None => {
                        return Err(RegTileError::Type {
                            op: "select",
                            want: "two values of one kind",
                            got: got(ta),
                        });
                    }
                },
            }
        }
    })
}

/// The type a `compute` into a tile of `elem` takes from a value of type `ty`, or `None`:
/// floats into float tiles (widening implicit, narrowing never), integers into tiles of
/// their own type, an index expression ([`index_like`]) into `i32` tiles too.
pub fn assignable(k: &Kernel, elem: ElemType, value: &TExpr, ty: TType) -> bool {
    match (ty, elem) {
        (TType::Elem(a), b) if a == b => true,
        (TType::Elem(a), ElemType::F32) => a != ElemType::F32,
        (TType::I32, ElemType::I32) | (TType::U32, ElemType::U32) => true,
        (TType::I64, ElemType::I64) | (TType::U64, ElemType::U64) => true,
        (TType::U32, ElemType::I32 | ElemType::I64 | ElemType::U64) => index_like(k, value),
        _ => false,
    }
}

/// The register type that holds one element of a tile of `elem`.
pub fn reg_type(elem: ElemType) -> ScalarType {
    match elem {
        ElemType::F32 => ScalarType::F32,
        ElemType::Bf16 | ElemType::F16 => ScalarType::B16,
        ElemType::I32 => ScalarType::S32,
        ElemType::U32 => ScalarType::U32,
        ElemType::I64 => ScalarType::S64,
        ElemType::U64 => ScalarType::U64,
        ElemType::E4m3
        | ElemType::E5m2
        | ElemType::Ue8m0
        | ElemType::Ue4m3
        | ElemType::E2m1x2
        | ElemType::E3m2
        | ElemType::E2m3
        | ElemType::E2m1
        | ElemType::I8
        | ElemType::U8 => {
            unreachable!("the front end refuses register tiles of 8-/4-bit floats and scales")
        }
    }
}

/// The index of the executing thread within the owner of a layout of `l`'s threads: the
/// CTA-linear index modulo the layout's thread count (owners are aligned groups of threads —
/// a warpgroup, the CTA — which the scope checks ensure).
pub fn owner_thread(lw: &mut Lower, l: &RegLayout) -> Handle<Var> {
    let t = l.thread_count();
    let e = if t >= lw.k.sig.threads {
        Expr::Special(Special::TidX)
    } else {
        Expr::bin(BinOp::Rem, Expr::Special(Special::TidX), Expr::u32(t))
    };
    lw.let_("t", ScalarType::U32, e)
}

/// The (row, col) of the executing thread's register 0 within the tile: Σ digit · stride over
/// the thread modes, as `u32` variables.
pub fn origin(lw: &mut Lower, l: &RegLayout) -> [Handle<Var>; 2] {
    let t = owner_thread(lw, l);
    let mut acc = [Expr::u32(0), Expr::u32(0)];
    let mut below = 1u32;
    for m in &l.threads {
        let digit = Expr::bin(
            BinOp::Rem,
            Expr::bin(BinOp::Div, Expr::Var(t), Expr::u32(below)),
            Expr::u32(m.size),
        );
        for (a, sum) in acc.iter_mut().enumerate() {
            if m.stride[a] != 0 {
                let term = crate::lower::mul(digit.clone(), Expr::u32(m.stride[a]));
                *sum = crate::lower::add(sum.clone(), term);
            }
        }
        below *= m.size;
    }
    let [r, c] = acc;
    [
        lw.let_("tile_row", ScalarType::U32, r),
        lw.let_("tile_col", ScalarType::U32, c),
    ]
}

/// The registers of a tile (allocated by `lower-tile-ops`' prologue). For a packed tile
/// ([`packed_tiles`]) these are its 32-bit words: [`frag_values`] gives one register per
/// element.
pub fn frag(lw: &Lower, b: Handle<Buffer>) -> Result<Vec<Handle<Var>>, Diagnostics> {
    lw.frags
        .get(&b)
        .cloned()
        .ok_or_else(|| lw.internal("register tile not allocated"))
}

/// Whether the tile's registers are packed 32-bit words, two 16-bit elements each.
pub fn is_packed(lw: &Lower, b: Handle<Buffer>) -> bool {
    let elem = lw.k.buffers[b].elem;
    elem.bytes() == 2
        && lw
            .frags
            .get(&b)
            .and_then(|v| v.first())
            .is_some_and(|&v| lw.k.vars[v].ty == ScalarType::U32)
}

/// One register per element of the tile: its own registers, or for a packed tile each word
/// split into its two halves (`mov.b32 {lo, hi}`), element `2i` the low half of word `i`.
pub fn frag_values(lw: &mut Lower, b: Handle<Buffer>) -> Result<Vec<Handle<Var>>, Diagnostics> {
    let regs = frag(lw, b)?;
    if !is_packed(lw, b) {
        return Ok(regs);
    }
    let mut out = Vec::with_capacity(2 * regs.len());
    for w in regs {
        let (lo, hi) = (lw.var("lo", ScalarType::B16), lw.var("hi", ScalarType::B16));
        lw.inst(crate::ir::Inst::unpack_b32(lo, hi, w));
        out.extend([lo, hi]);
    }
    Ok(out)
}

/// Whether a layout pairs its registers along rows: register `2i + 1` holds the element to
/// the right of register `2i`'s (the first value mode steps one column and has an even size),
/// so each pair packs into one 32-bit word with the lower column in the low half — the order
/// of a 16-bit matrix row in memory and of wgmma's register A operand (PTX ISA §9.7.15.5.1,
/// "Register fragments and shared memory matrix layouts": A's pairs `a0, a1` are columns `2i`,
/// `2i + 1` of one row, packed into one `.b32`).
pub fn pairs_columns(l: &RegLayout) -> bool {
    l.values
        .first()
        .is_some_and(|m| m.stride == [0, 1] && m.size % 2 == 0)
}

/// The 16-bit register tiles held packed, two elements per 32-bit register: those whose
/// layout pairs columns ([`pairs_columns`]) and that only `compute` writes and reads,
/// `reduce` reads and wgmma takes as its register A operand. A copy to or from the tile, or
/// any other use, keeps it one register per element (ptxas gives a 16-bit register a 32-bit
/// one of its own, so packing halves the tile's registers: P of attention at 128 key columns
/// takes 32 instead of 64).
pub fn packed_tiles(k: &Kernel) -> std::collections::HashSet<Handle<Buffer>> {
    use crate::ir::{Op, StmtKind, TileRef};
    let mut out: std::collections::HashSet<Handle<Buffer>> = k
        .buffers
        .iter()
        .filter(|(_, b)| b.space == Space::Reg && b.elem.bytes() == 2)
        .filter(|&(h, _)| layout(k, h).is_ok_and(|l| pairs_columns(&l)))
        .map(|(h, _)| h)
        .collect();
    let buf = |t: &TileRef| match t {
        TileRef::Buf { buf, .. } => Some(*buf),
        TileRef::Global { .. } => None,
    };
    crate::passes::walk::visit(&k.body, &mut |s, _| {
        let StmtKind::Op(op) = &s.kind else { return };
        match op {
            Op::Compute { .. } => {}
            Op::Reduce { dst, .. } => {
                out.remove(dst);
            }
            Op::Mma { acc, b, .. } => {
                for t in [acc, b] {
                    if let Some(b) = buf(t) {
                        out.remove(&b);
                    }
                }
            }
            Op::Copy {
                dst, src, atomic, ..
            } => {
                let old = atomic.as_ref().and_then(|a| a.old.as_ref());
                for t in [Some(dst), Some(src), old].into_iter().flatten() {
                    if let Some(b) = buf(t) {
                        out.remove(&b);
                    }
                }
            }
            _ => {}
        }
    });
    out
}

/// Whether `threads` (an op's scope) own tiles of layout `l`: its `T` threads, or a multiple
/// of them, each aligned group of `T` holding its own tile.
pub fn check_owner(
    threads: crate::valid::scope::Threads,
    l: &RegLayout,
    name: &str,
) -> Result<(), RegTileError> {
    use crate::valid::scope::Threads as Th;
    let owner = l.thread_count();
    let n = match threads {
        Th::Cta(n) => Some(n),
        Th::Warpgroups(g) => Some(128 * g),
        Th::Warps(w, _) => Some(32 * w),
        Th::ElectPerWarp(_) | Th::Single => None,
    };
    // A scope of k·T threads holds k tiles, one per aligned group of T threads (the
    // accumulators of several consumer warpgroups).
    if n.is_some_and(|n| n >= owner && n % owner == 0) {
        Ok(())
    } else {
        Err(RegTileError::Threads {
            tile: name.into(),
            owner,
            threads: threads.describe(),
        })
    }
}
