//! Register tiles: the layout that says which thread holds which element (`RegLayout`), and the
//! elementwise expressions computed on them (`TExpr`). Re-exported from `ir`.
//!
//! A register tile is a 2-D `Space::Reg` buffer of shape `[R, C]` spread over the `T` threads
//! of its owner (a warpgroup, a CTA, …). Its layout is a list of *thread modes* and a list of
//! *value modes*, each mode a `size` and a `(row, col)` stride, the first mode the fastest:
//! thread `t` (its index within the owner) and register `i` of that thread hold element
//!
//! ```text
//! (row, col) = Σ_k digit_k(t) · threads[k].stride  +  Σ_k digit_k(i) · values[k].stride
//! ```
//!
//! where `digit_k(x) = (x / Π_{j<k} size_j) % size_k`. Every access — loads, stores,
//! elementwise ops, broadcasts, reductions — is derived from this one description, so the
//! compiler knows the `(row, col)` of every register of every thread.
//!
//! A *reduced* layout (a row or column statistic) keeps the modes of the other axis: its value
//! modes are those of the tile that do not move along the reduced axis, and its thread modes
//! are those of the tile with their stride along the reduced axis set to zero — the threads
//! that shared a row now hold the same value (replicated), which is what lets a later op
//! broadcast it back onto the tile without any data movement.

use super::CmpOp;
use super::Expr;
use crate::abi::ElemType;

/// One mode of a register layout: `size` digits, each step moving by `stride` = (rows, cols).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mode {
    /// Number of digits.
    pub size: u32,
    /// Step of one digit, (row, col).
    pub stride: [u32; 2],
}

/// A register-tile layout (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegLayout {
    /// Modes of the thread index within the owner, fastest first.
    pub threads: Vec<Mode>,
    /// Modes of the register index within a thread, fastest first.
    pub values: Vec<Mode>,
}

/// Why a layout cannot be built or used as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A blocked layout whose pieces do not divide the tile.
    #[error(
        "a {rows}×{cols} tile cannot be spread over {threads} threads with {vec} consecutive elements each: {why}"
    )]
    Blocked {
        /// Tile rows.
        rows: u32,
        /// Tile columns.
        cols: u32,
        /// Threads.
        threads: u32,
        /// Vector width.
        vec: u32,
        /// What does not divide.
        why: &'static str,
    },
    /// The wgmma accumulator fragment needs M a multiple of 64 and N of 8.
    #[error("the wgmma accumulator fragment is m64·i × n8·j; {rows}×{cols} is not")]
    Fragment {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
    },
    /// A TMEM shape's layout of a tile whose columns are not whole `.x1` repeats.
    #[error("`tmem_{shape}` moves {per} columns per repeat; {cols} columns are not a multiple")]
    TmemShape {
        /// The shape.
        shape: &'static str,
        /// Tile columns.
        cols: u32,
        /// Columns per `.x1`.
        per: u32,
    },
    /// A reduction over a mode that moves along both axes, or whose thread digits are not
    /// whole bits of the thread index.
    #[error("this layout cannot be reduced along {axis}: {why}")]
    Reduce {
        /// "rows" or "columns".
        axis: &'static str,
        /// Which mode is in the way.
        why: String,
    },
}

fn mode(size: u32, row: u32, col: u32) -> Mode {
    Mode {
        size,
        stride: [row, col],
    }
}

fn push(modes: &mut Vec<Mode>, m: Mode) {
    if m.size > 1 {
        modes.push(m);
    }
}

impl RegLayout {
    /// A thread-distributed layout of an `[rows, cols]` tile over `threads` threads: each
    /// thread owns runs of `vec` consecutive elements of a row; consecutive threads own
    /// consecutive runs (so a warp's accesses to a row are contiguous), threads wrap onto
    /// further rows when a row has fewer runs than threads, and a thread holds further runs
    /// (every `threads·vec` columns, then every few rows) when there are more.
    pub fn blocked(rows: u32, cols: u32, threads: u32, vec: u32) -> Result<RegLayout, LayoutError> {
        let err = |why| LayoutError::Blocked {
            rows,
            cols,
            threads,
            vec,
            why,
        };
        if vec == 0 || threads == 0 || !cols.is_multiple_of(vec) {
            return Err(err("the row length is not a multiple of the vector width"));
        }
        let runs = cols / vec;
        let tc = threads.min(runs);
        if !runs.is_multiple_of(tc) {
            return Err(err("the runs of a row are not a multiple of the threads"));
        }
        if !threads.is_multiple_of(tc) {
            return Err(err("the threads are not a multiple of the runs of a row"));
        }
        let tr = threads / tc;
        if !rows.is_multiple_of(tr) {
            return Err(err(
                "the rows are not a multiple of the rows the threads span",
            ));
        }
        let mut t = Vec::new();
        push(&mut t, mode(tc, 0, vec));
        push(&mut t, mode(tr, 1, 0));
        let mut v = Vec::new();
        push(&mut v, mode(vec, 0, 1));
        push(&mut v, mode(runs / tc, 0, tc * vec));
        push(&mut v, mode(rows / tr, tr, 0));
        Ok(RegLayout {
            threads: t,
            values: v,
        })
    }

    /// The wgmma accumulator fragment of an `[m, n]` tile over one warpgroup (PTX ISA
    /// §9.7.15.5.1.1, figure "WGMMA .m64nNk16 register fragment layout for accumulator matrix
    /// D"): in each m64 slice, thread `t` (warp `w`, lane `l`) holds row `16w + l/4 + 8h`,
    /// column `8j + 2(l%4) + c` in register `4j + 2h + c`; slices follow each other.
    pub fn wgmma_acc(m: u32, n: u32) -> Result<RegLayout, LayoutError> {
        if !m.is_multiple_of(64) || !n.is_multiple_of(8) || m == 0 || n == 0 {
            return Err(LayoutError::Fragment { rows: m, cols: n });
        }
        let mut values = vec![mode(2, 0, 1), mode(2, 8, 0)];
        push(&mut values, mode(n / 8, 0, 8));
        push(&mut values, mode(m / 64, 64, 0));
        Ok(RegLayout {
            threads: vec![mode(4, 0, 2), mode(8, 1, 0), mode(4, 16, 0)],
            values,
        })
    }

    /// The fragment `tcgen05.ld.sync.aligned.32x32b.xN` produces from a 128-lane TMEM tile
    /// over one warpgroup (PTX ISA §9.7.16.8.3, "Matrix fragments for tcgen05.ld 32x32b"):
    /// thread `t` holds TMEM lane (row) `t`, and register `i` column `i`.
    pub fn tmem_32x32b(n: u32) -> RegLayout {
        RegLayout {
            threads: vec![mode(32, 1, 0), mode(4, 32, 0)],
            values: if n > 1 { vec![mode(n, 0, 1)] } else { vec![] },
        }
    }

    /// Threads the layout spreads over.
    pub fn thread_count(&self) -> u32 {
        self.threads.iter().map(|m| m.size).product()
    }

    /// Registers each thread holds.
    pub fn value_count(&self) -> u32 {
        self.values.iter().map(|m| m.size).product()
    }

    /// The (row, col) offset register `i` adds to its thread's origin.
    pub fn value_coord(&self, i: u32) -> [u32; 2] {
        coord(&self.values, i)
    }

    /// The (row, col) origin of thread `t` (a number; the lowering builds the same sum as an
    /// expression of the thread index).
    pub fn thread_coord(&self, t: u32) -> [u32; 2] {
        coord(&self.threads, t)
    }

    /// The layout of the statistic a reduction along `axis` (0: down the rows, giving one value
    /// per column; 1: along the columns, one value per row) leaves (see the module docs).
    /// Every mode must move along one axis only, and each thread mode along `axis` must be a
    /// power of two behind powers of two (whole bits of the thread index), so the threads
    /// that share a statistic are found by flipping bits.
    pub fn reduce(&self, axis: usize) -> Result<RegLayout, LayoutError> {
        let name = if axis == 1 { "columns" } else { "rows" };
        let fail = |why: String| LayoutError::Reduce { axis: name, why };
        for m in self.threads.iter().chain(&self.values) {
            if m.stride[0] != 0 && m.stride[1] != 0 {
                return Err(fail(format!(
                    "a mode of {} steps by ({}, {}), along both axes",
                    m.size, m.stride[0], m.stride[1]
                )));
            }
        }
        let mut below = 1u32;
        for m in &self.threads {
            if m.stride[axis] != 0 && (!m.size.is_power_of_two() || !below.is_power_of_two()) {
                return Err(fail(format!(
                    "the {} threads along the {name} are not whole bits of the thread index",
                    m.size
                )));
            }
            below *= m.size;
        }
        let threads = self
            .threads
            .iter()
            .map(|m| {
                let mut s = m.stride;
                s[axis] = 0;
                Mode {
                    size: m.size,
                    stride: s,
                }
            })
            .collect();
        let values = self
            .values
            .iter()
            .filter(|m| m.stride[axis] == 0)
            .copied()
            .collect();
        Ok(RegLayout { threads, values })
    }

    /// For a tile of this layout and its statistic along `axis` (`self.reduce(axis)`), the
    /// statistic's register that register `i` of the tile reads when the statistic is
    /// broadcast back onto it.
    pub fn broadcast_index(&self, axis: usize, i: u32) -> u32 {
        let (mut out, mut scale, mut rest) = (0, 1, i);
        for m in &self.values {
            let d = rest % m.size;
            rest /= m.size;
            if m.stride[axis] == 0 {
                out += d * scale;
                scale *= m.size;
            }
        }
        out
    }

    /// The bits of the thread index whose threads share one statistic along `axis` (their
    /// digits move along it): the lanes a shuffle combines (bits 0..5) and the warps a
    /// shared-memory exchange combines (bits 5..). Precondition: `reduce(axis)` is `Ok`.
    pub fn reduce_bits(&self, axis: usize) -> Vec<u32> {
        let (mut bits, mut low) = (Vec::new(), 0u32);
        for m in &self.threads {
            let n = m.size.trailing_zeros();
            if m.stride[axis] != 0 {
                bits.extend(low..low + n);
            }
            low += n;
        }
        bits
    }

    /// The tile's `[rows, cols]` extent the modes cover (the largest coordinate + 1).
    pub fn extent(&self) -> [u32; 2] {
        let mut e = [1u32; 2];
        for m in self.threads.iter().chain(&self.values) {
            for (a, ext) in e.iter_mut().enumerate() {
                *ext += (m.size - 1) * m.stride[a];
            }
        }
        e
    }
}

fn coord(modes: &[Mode], mut x: u32) -> [u32; 2] {
    let mut c = [0u32; 2];
    for m in modes {
        let d = x % m.size;
        x /= m.size;
        c[0] += d * m.stride[0];
        c[1] += d * m.stride[1];
    }
    c
}

/// The register type of a tile-expression value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TType {
    /// A float element: `f32`, or a 16-bit float (read widened to `f32` in arithmetic).
    Elem(ElemType),
    /// A predicate (comparisons, masks).
    Pred,
    /// A 32-bit unsigned integer: an index (`row_index`, `col_index`, integer scalars) or a
    /// `u32` tile.
    U32,
    /// A 32-bit signed integer (an `i32` tile).
    I32,
    /// A 64-bit signed integer (an `i64` tile).
    I64,
    /// A 64-bit unsigned integer (a `u64` tile).
    U64,
}

impl TType {
    /// Text spelling.
    pub fn name(self) -> &'static str {
        match self {
            TType::Elem(e) => e.name(),
            TType::Pred => "pred",
            TType::U32 => "u32",
            TType::I32 => "i32",
            TType::I64 => "i64",
            TType::U64 => "u64",
        }
    }
}

/// Unary elementwise functions. The `*Approx` ones are PTX's approximate instructions, named
/// as such in the language (`exp2_approx`, …) with their error bounds in the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TUn {
    /// `-x` (`neg.f32`).
    Neg,
    /// `abs(x)` (`abs.f32`).
    Abs,
    /// `2^x`, `ex2.approx.ftz.f32` (PTX ISA §9.7.3.21).
    Exp2Approx,
    /// `2^x` on the FMA units: a floor by `add.rm`, a degree-3 minimax polynomial, an
    /// exponent by `shl` (no MUFU; `regtile/exp2_poly.rs`). Relative error ≤ 8.6e-5 for
    /// `x` in [-126, 128); 0 below, inf above, NaN kept.
    Exp2Poly3,
    /// `log2(x)`, `lg2.approx.ftz.f32` (§9.7.3.20).
    Log2Approx,
    /// `1/sqrt(x)`, `rsqrt.approx.ftz.f32` (§9.7.3.18).
    RsqrtApprox,
    /// `1/x`, `rcp.approx.ftz.f32` (§9.7.3.16).
    RcpApprox,
    /// `1/x` rounded to nearest, `rcp.rn.f32` (§9.7.3.16).
    Rcp,
    /// `sqrt(x)` rounded to nearest, `sqrt.rn.f32` (§9.7.3.17).
    Sqrt,
    /// `tanh(x)`, `tanh.approx.f32` (§9.7.3.23, sm_75+).
    TanhApprox,
    /// `to_bits(x)`: an f32's 32 bits as a `u32` (Rust's `f32::to_bits`), `mov.b32` (§9.7.9.1).
    ToBits,
    /// `from_bits(i)`: the f32 whose bits a 32-bit integer holds (`f32::from_bits`), `mov.b32`.
    FromBits,
    /// Logical not of a predicate.
    Not,
    /// Round to a 16-bit float (`cvt.rn.bf16.f32` / `cvt.rn.f16.f32`), or widen to f32;
    /// integers to f32 rounded to nearest (`cvt.rn.f32.s32` / `.u32`), floats to integers
    /// truncated toward zero (`cvt.rzi.s32.f32` / `.u32.f32`: NaN gives 0, out-of-range
    /// values saturate, §9.7.9.21), `i32` ↔ `u32` the same bits.
    Cast(ElemType),
}

impl TUn {
    /// Text / language spelling.
    pub fn name(self) -> &'static str {
        match self {
            TUn::Neg => "neg",
            TUn::Abs => "abs",
            TUn::Exp2Approx => "exp2_approx",
            TUn::Exp2Poly3 => "exp2_poly3",
            TUn::Log2Approx => "log2_approx",
            TUn::RsqrtApprox => "rsqrt_approx",
            TUn::RcpApprox => "rcp_approx",
            TUn::Rcp => "rcp",
            TUn::Sqrt => "sqrt",
            TUn::TanhApprox => "tanh_approx",
            TUn::ToBits => "to_bits",
            TUn::FromBits => "from_bits",
            TUn::Not => "not",
            TUn::Cast(ElemType::Bf16) => "cast_bf16",
            TUn::Cast(ElemType::F16) => "cast_f16",
            TUn::Cast(ElemType::F32) => "cast_f32",
            // Refused by the front end: no register tile holds an 8-bit float.
            TUn::Cast(ElemType::E4m3) => "cast_e4m3",
            TUn::Cast(ElemType::E5m2) => "cast_e5m2",
            TUn::Cast(ElemType::Ue8m0) => "cast_ue8m0",
            TUn::Cast(ElemType::Ue4m3) => "cast_ue4m3",
            TUn::Cast(ElemType::E2m1x2) => "cast_e2m1x2",
            TUn::Cast(ElemType::E3m2) => "cast_e3m2",
            TUn::Cast(ElemType::E2m3) => "cast_e2m3",
            TUn::Cast(ElemType::E2m1) => "cast_e2m1",
            TUn::Cast(ElemType::I8) => "cast_i8",
            TUn::Cast(ElemType::U8) => "cast_u8",
            TUn::Cast(ElemType::I32) => "cast_i32",
            TUn::Cast(ElemType::U32) => "cast_u32",
            TUn::Cast(ElemType::I64) => "cast_i64",
            TUn::Cast(ElemType::U64) => "cast_u64",
        }
    }
    /// Every function, for parsing.
    pub const ALL: [TUn; 20] = [
        TUn::Neg,
        TUn::Abs,
        TUn::Exp2Approx,
        TUn::Exp2Poly3,
        TUn::Log2Approx,
        TUn::RsqrtApprox,
        TUn::RcpApprox,
        TUn::Rcp,
        TUn::Sqrt,
        TUn::TanhApprox,
        TUn::ToBits,
        TUn::FromBits,
        TUn::Not,
        TUn::Cast(ElemType::Bf16),
        TUn::Cast(ElemType::F16),
        TUn::Cast(ElemType::F32),
        TUn::Cast(ElemType::I32),
        TUn::Cast(ElemType::U32),
        TUn::Cast(ElemType::I64),
        TUn::Cast(ElemType::U64),
    ];
}

/// Binary elementwise operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TBin {
    /// `+` (`add.f32` / `add.u32`).
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`: `div.rn.f32` (IEEE, §9.7.3.8); on integers `div.s32` / `div.u32` (§9.7.1.8: the
    /// signed quotient truncates toward zero, like Rust's `/`).
    Div,
    /// `min` (`min.f32`).
    Min,
    /// `max` (`max.f32`).
    Max,
    /// Logical and of predicates.
    And,
    /// Logical or of predicates.
    Or,
    /// `%` on integers: `rem.s32` / `rem.u32` (§9.7.1.9; the signed remainder takes the
    /// dividend's sign, like Rust's `%`).
    Rem,
    /// `<<` on integers: `shl.b32` (§9.7.8.7; shifts of 32 or more give 0).
    Shl,
    /// `>>` on integers: `shr.s32` (arithmetic, for `i32`) / `shr.u32` (logical) (§9.7.8.8).
    Shr,
    /// `&` on integers: `and.b32` (§9.7.8.1).
    BitAnd,
    /// `|` on integers: `or.b32` (§9.7.8.2).
    BitOr,
    /// `^` on integers: `xor.b32` (§9.7.8.3).
    BitXor,
}

impl TBin {
    /// Text spelling.
    pub fn name(self) -> &'static str {
        match self {
            TBin::Add => "add",
            TBin::Sub => "sub",
            TBin::Mul => "mul",
            TBin::Div => "div",
            TBin::Min => "min",
            TBin::Max => "max",
            TBin::And => "and",
            TBin::Or => "or",
            TBin::Rem => "rem",
            TBin::Shl => "shl",
            TBin::Shr => "shr",
            TBin::BitAnd => "bitand",
            TBin::BitOr => "bitor",
            TBin::BitXor => "xor",
        }
    }
    /// Every operator, for parsing.
    pub const ALL: [TBin; 14] = [
        TBin::Add,
        TBin::Sub,
        TBin::Mul,
        TBin::Div,
        TBin::Min,
        TBin::Max,
        TBin::And,
        TBin::Or,
        TBin::Rem,
        TBin::Shl,
        TBin::Shr,
        TBin::BitAnd,
        TBin::BitOr,
        TBin::BitXor,
    ];
}

/// An elementwise expression over register tiles, evaluated per element of the destination.
#[derive(Clone, Debug, PartialEq)]
pub enum TExpr {
    /// A register tile of the destination's layout, or a statistic of it (broadcast).
    Tile(crate::arena::Handle<super::Buffer>),
    /// An `f32` immediate, as its bits.
    F32(u32),
    /// An `f32` scalar argument of the kernel, by name.
    Arg(String),
    /// A `u32` scalar (uniform over the tile).
    Int(Expr),
    /// The element's row (0) or column (1) within the tile, `u32`.
    Index(u8),
    /// A unary function.
    Un(TUn, Box<TExpr>),
    /// A binary operator.
    Bin(TBin, Box<TExpr>, Box<TExpr>),
    /// `a · b + c` in one rounding (`fma.rn.f32`).
    Fma(Box<TExpr>, Box<TExpr>, Box<TExpr>),
    /// A comparison (a predicate).
    Cmp(CmpOp, Box<TExpr>, Box<TExpr>),
    /// `cond ? a : b` (`selp`).
    Select(Box<TExpr>, Box<TExpr>, Box<TExpr>),
    /// `gather(x, row, col)` (or `gather(x, i)` of a vector): the element of global tensor
    /// `tensor` at the integer indices `index` (one per dimension, evaluated per element),
    /// loaded by a guarded `ld.global`; an index outside the tensor (negative `i32`s
    /// included) reads 0. See `regtile/gather.rs`.
    Gather {
        /// Tensor parameter name.
        tensor: String,
        /// One integer index per dimension, outermost first.
        index: Vec<TExpr>,
        /// `oob = zero`: an index out of range reads 0 by intent. Without it, an index that
        /// depends on loaded data (a tile, a gathered value) is checked by the emulator and an
        /// out-of-range one is reported (`tirx.check` in the PTX, see `regtile/gather.rs`).
        oob_zero: bool,
    },
}

impl TExpr {
    /// Every tile the expression reads.
    pub fn tiles(&self, out: &mut Vec<crate::arena::Handle<super::Buffer>>) {
        match self {
            TExpr::Tile(b) => out.push(*b),
            TExpr::F32(_) | TExpr::Arg(_) | TExpr::Int(_) | TExpr::Index(_) => {}
            TExpr::Un(_, a) => a.tiles(out),
            TExpr::Bin(_, a, b) | TExpr::Cmp(_, a, b) => {
                a.tiles(out);
                b.tiles(out);
            }
            TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => {
                a.tiles(out);
                b.tiles(out);
                c.tiles(out);
            }
            TExpr::Gather { index, .. } => index.iter().for_each(|x| x.tiles(out)),
        }
    }
    /// The scalar expressions inside, read-only.
    pub fn exprs<'a>(&'a self, out: &mut Vec<&'a Expr>) {
        match self {
            TExpr::Int(e) => out.push(e),
            TExpr::Tile(_) | TExpr::F32(_) | TExpr::Arg(_) | TExpr::Index(_) => {}
            TExpr::Un(_, a) => a.exprs(out),
            TExpr::Bin(_, a, b) | TExpr::Cmp(_, a, b) => {
                a.exprs(out);
                b.exprs(out);
            }
            TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => {
                a.exprs(out);
                b.exprs(out);
                c.exprs(out);
            }
            TExpr::Gather { index, .. } => index.iter().for_each(|x| x.exprs(out)),
        }
    }
    /// The scalar expressions inside (for walks over every `Expr` of a kernel).
    pub fn exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            TExpr::Int(e) => f(e),
            TExpr::Tile(_) | TExpr::F32(_) | TExpr::Arg(_) | TExpr::Index(_) => {}
            TExpr::Un(_, a) => a.exprs_mut(f),
            TExpr::Bin(_, a, b) | TExpr::Cmp(_, a, b) => {
                a.exprs_mut(f);
                b.exprs_mut(f);
            }
            TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => {
                a.exprs_mut(f);
                b.exprs_mut(f);
                c.exprs_mut(f);
            }
            TExpr::Gather { index, .. } => index.iter_mut().for_each(|x| x.exprs_mut(f)),
        }
    }
}

/// What a reduction combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// Maximum (`max.f32`).
    Max,
    /// Sum (`add.f32`).
    Sum,
    /// Minimum (`min.f32`).
    Min,
    /// The index along the axis of the maximum (a `u32` statistic): ties to the lowest index,
    /// NaN above every number (as torch's `argmax`).
    ArgMax,
    /// The index along the axis of the minimum (a `u32` statistic): ties to the lowest index,
    /// NaN below every number (as torch's `argmin`).
    ArgMin,
}

impl ReduceKind {
    /// Text spelling.
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Max => "max",
            ReduceKind::Sum => "sum",
            ReduceKind::Min => "min",
            ReduceKind::ArgMax => "argmax",
            ReduceKind::ArgMin => "argmin",
        }
    }

    /// Whether the statistic is an index (`u32`) rather than a value of the reduced type.
    pub fn is_arg(self) -> bool {
        matches!(self, ReduceKind::ArgMax | ReduceKind::ArgMin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(l: &RegLayout) -> Vec<[u32; 2]> {
        let mut v = Vec::new();
        for t in 0..l.thread_count() {
            for i in 0..l.value_count() {
                let (a, b) = (l.thread_coord(t), l.value_coord(i));
                v.push([a[0] + b[0], a[1] + b[1]]);
            }
        }
        v.sort();
        v
    }

    fn all(rows: u32, cols: u32) -> Vec<[u32; 2]> {
        (0..rows)
            .flat_map(|r| (0..cols).map(move |c| [r, c]))
            .collect()
    }

    #[test]
    fn blocked_layouts_cover_each_element_once() {
        for (r, c, t, v) in [
            (1, 8192, 256, 8),
            (4, 1024, 128, 8),
            (2, 64, 128, 1),
            (8, 256, 64, 4),
        ] {
            let l = RegLayout::blocked(r, c, t, v).unwrap();
            assert_eq!(l.thread_count(), t);
            assert_eq!(elements(&l), all(r, c), "{r}x{c} over {t} threads, vec {v}");
            assert_eq!(l.extent(), [r, c]);
        }
        assert!(RegLayout::blocked(3, 64, 128, 1).is_err());
        assert!(RegLayout::blocked(1, 100, 32, 8).is_err());
    }

    #[test]
    fn wgmma_fragment_matches_the_isa_figure() {
        let l = RegLayout::wgmma_acc(128, 64).unwrap();
        assert_eq!(elements(&l), all(128, 64));
        // Thread 5 (warp 0, lane 5): row 5/4 = 1, column 2·(5%4) = 2; register 4j+2h+c.
        let t = l.thread_coord(5);
        let at = |i| {
            let v = l.value_coord(i);
            [t[0] + v[0], t[1] + v[1]]
        };
        assert_eq!(at(0), [1, 2]);
        assert_eq!(at(1), [1, 3]);
        assert_eq!(at(2), [9, 2]);
        assert_eq!(at(4), [1, 10]);
        assert_eq!(at(32), [65, 2]);
        assert!(RegLayout::wgmma_acc(96, 64).is_err());
    }

    #[test]
    fn tcgen05_ld_fragment_gives_each_thread_one_lane() {
        let l = RegLayout::tmem_32x32b(16);
        assert_eq!(l.thread_count(), 128);
        assert_eq!(elements(&l), all(128, 16));
        assert_eq!(l.thread_coord(77), [77, 0]);
        assert_eq!(l.value_coord(5), [0, 5]);
    }

    #[test]
    fn row_reduction_of_the_fragment_shuffles_the_quad() {
        let l = RegLayout::wgmma_acc(64, 32).unwrap();
        let r = l.reduce(1).unwrap();
        assert_eq!(l.reduce_bits(1), vec![0, 1]);
        assert_eq!(r.value_count(), 2);
        for i in 0..l.value_count() {
            let j = l.broadcast_index(1, i);
            assert_eq!(l.value_coord(i)[0], r.value_coord(j)[0]);
        }
        // A blocked row spanning 8 warps: lanes 0..5 and warps 5..8 share a row.
        let b = RegLayout::blocked(1, 8192, 256, 8).unwrap();
        assert_eq!(b.reduce_bits(1), (0..8).collect::<Vec<_>>());
        assert_eq!(b.reduce(1).unwrap().value_count(), 1);
    }

    #[test]
    fn mixed_modes_cannot_be_reduced() {
        let l = RegLayout {
            threads: vec![mode(32, 1, 1)],
            values: vec![],
        };
        assert!(matches!(l.reduce(1), Err(LayoutError::Reduce { .. })));
        let odd = RegLayout {
            threads: vec![mode(3, 0, 1)],
            values: vec![],
        };
        assert!(odd.reduce(1).is_err());
    }
}
