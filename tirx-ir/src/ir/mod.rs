//! Every node of the tile IR: here the phases, spans, buffers, barriers, pipelines, `Kernel`
//! and `Module`; scalar expressions in `expr.rs`, statements and ops in `stmt.rs`, the dispatch variants
//! and their properties in `variant.rs`, all
//! re-exported from here.
//!
//! A `Kernel` is one compiled instance: one user function × one config × one target. It goes
//! through three phases (`Phase`), each a subset of the same node types:
//!
//! - `Tile`: what the macro builds. Statements may hold tile ops (`Op::Copy`, `Op::Mma`, the
//!   pipeline ops), scopes, and scalar expressions of any depth.
//! - `Thread`: tile ops have been dispatched and lowered; what remains are synchronisation ops
//!   and plain instructions (`StmtKind::Inst`), still under scopes and with nested expressions.
//! - `Ptx`: only `Inst`, `If`, `For`, `Loop` and `Let`/`Assign` of atoms remain; every
//!   expression is an atom (a variable, an immediate or a special register read into a
//!   variable). `tirx-ptx` accepts only this phase.
//!
//! Values live in `Kernel::vars` (mutable virtual registers with a scalar type); printed as
//! `%<index>`. Buffers, barriers and pipelines live in their own arenas, printed as
//! `@<name>`. Spans (`Span`) are ids into the front end's span table; `Span::NONE` for
//! compiler-made nodes.

mod atomic;
mod expr;
mod stmt;
mod tile;
mod tmem_shape;
mod variant;
mod vote;

use crate::abi::{ElemType, Signature, Swizzle, Target};
use crate::arena::{Arena, Handle};
pub use crate::encode::Major;
pub use atomic::*;
pub use expr::*;
pub use stmt::*;
pub use tile::*;
pub use tmem_shape::TmemShape;
pub use variant::*;
pub use vote::*;

/// Which subset of the IR a kernel is in (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Tile ops, scopes, nested expressions.
    Tile,
    /// Tile ops lowered; sync ops and instructions under scopes.
    Thread,
    /// PTX-level instructions and structured control flow on variables.
    Ptx,
}

/// A source location id: an index into the front end's span table. `Span::NONE` marks
/// compiler-made nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span(pub u32);

impl Span {
    /// No user location.
    pub const NONE: Span = Span(u32::MAX);
}

/// Memory space of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Shared memory of the CTA (dynamic shared memory, laid out by `plan_memory`).
    Shared,
    /// Tensor memory (Blackwell): 128 lanes × columns of 32-bit cells.
    Tmem,
    /// Registers of the threads of the owning scope (accumulator fragments).
    Reg,
}

impl Space {
    /// Text spelling.
    pub fn name(self) -> &'static str {
        match self {
            Space::Shared => "smem",
            Space::Tmem => "tmem",
            Space::Reg => "reg",
        }
    }
}

/// A layout: shape and strides in elements, outermost first, plus the shared-memory swizzle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Extents, outermost first.
    pub shape: Vec<u32>,
    /// Strides in elements, outermost first.
    pub stride: Vec<u32>,
    /// Swizzle applied to byte offsets within each 8-row atom.
    pub swizzle: Swizzle,
    /// Which operand dimension the innermost (contiguous) dimension holds when the buffer is
    /// an MMA operand: K ([`Major::K`], the default) or M/N ([`Major::MN`]). It does not change
    /// addresses; it says how an MMA reads the tile: an MN-major tile is
    /// `[.., MN/atom chunks, K rows, atom]`, chunks of one swizzle span of M/N elements (64 bf16
    /// for 128B) each K rows deep — a K×N B loaded in TMA boxes of `[BK, 64]`. Declared with
    /// `major = mn` on `smem::<T>(..)`; printed as ` major mn` after the swizzle.
    pub major: Major,
}

impl Layout {
    /// Row-major (last dimension contiguous) K-major layout of `shape`.
    pub fn row_major(shape: &[u32], swizzle: Swizzle) -> Layout {
        let mut stride = vec![1u32; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            stride[i] = stride[i + 1] * shape[i + 1];
        }
        Layout {
            shape: shape.to_vec(),
            stride,
            swizzle,
            major: Major::K,
        }
    }
    /// Whether the strides are the dense row-major ones of the shape (any swizzle, any
    /// majorness: majorness says how an MMA reads the tile, not where elements are).
    pub fn is_row_major(&self) -> bool {
        *self
            == Layout {
                major: self.major,
                ..Layout::row_major(&self.shape, self.swizzle)
            }
    }
    /// Number of elements.
    pub fn elements(&self) -> u64 {
        self.shape.iter().map(|&d| d as u64).product()
    }
}

/// A buffer: a tile-shaped allocation in one memory space.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    /// User name.
    pub name: String,
    /// Memory space.
    pub space: Space,
    /// Element type.
    pub elem: ElemType,
    /// Layout.
    pub layout: Layout,
    /// Byte offset in dynamic shared memory (shared buffers; set by `plan_memory`), or the
    /// offset of the shared-memory slot that receives the TMEM base address (TMEM buffers).
    pub offset: Option<u32>,
    /// TMEM columns (TMEM buffers; set by `plan_memory`).
    pub tmem_cols: Option<u32>,
    /// Register tiles: which thread holds which element (`None` for other spaces).
    pub regs: Option<RegLayout>,
    /// A view: the buffer whose memory this one names, with no allocation of its own. TMEM:
    /// its columns from the first (the same address slot; e.g. a 16-bit P written over the
    /// columns of the f32 S it was computed from). Shared: its bytes from its offset, in
    /// another shape (G boxes of a few rows filling one MMA operand tile).
    pub alias: Option<Handle<Buffer>>,
    /// Where it was declared.
    pub span: Span,
}

impl Buffer {
    /// The lanes and columns one `[rows, cols]` tile of this TMEM buffer (its trailing two
    /// dimensions) takes: 32-bit cells, so 16-bit elements two to a column; a block-scale
    /// factor tile `[rows, factors]` (`ue8m0`) keeps row `r`'s factors in lane `r % 32` of
    /// every 32-lane quarter, four to a cell, at column `(f / 4)·(rows / 32) + r / 32` (PTX ISA
    /// §9.7.16.10.7, the layout `tcgen05.cp.32x128b.warpx4` writes): 128 lanes and
    /// `rows / 32 · factors / 4` columns. `None` below rank 2.
    /// An unpacked 16-bit tile ([`Buffer::tmem_unpacked`]) takes one column per element.
    /// A 64-row accumulator tile (one element to a cell: f32, i32 or an unpacked f16) is the
    /// CTA pair's M = 128 half of D in the 2x2 data path ([`Buffer::tmem_pair_half`]): 128
    /// lanes and `N / 2` columns.
    pub fn tmem_tile(&self) -> Option<(u32, u32)> {
        let [.., r, c] = self.layout.shape[..] else {
            return None;
        };
        let spread = if self.tmem_unpacked() { 2 } else { 1 };
        Some(if self.elem.is_scale() {
            (128, r.div_ceil(32) * c.div_ceil(4))
        } else if self.tmem_pair_half() {
            (128, c.div_ceil(2))
        } else {
            (r, c * spread * self.elem.bytes() / 4)
        })
    }

    /// Whether this TMEM tile is the CTA pair's half of an M = 128 D (`tmem::<f32>([64, N])`,
    /// or of i32 or unpacked f16): 64 rows, one element to a 32-bit cell, in the 2x2 data-path
    /// organisation of `tcgen05.mma.cta_group::2` with M = 128 (PTX ISA §9.7.16.10.5.2,
    /// Layout B; the "2x2" atom of CUTLASS `cute/atom/mma_traits_sm100.hpp` `tmem_frg` for
    /// two SMs and 64 rows): row `m` and column `n < N / 2` in lane `m`, column `n`; column
    /// `n ≥ N / 2` in lane `64 + m`, column `n − N / 2`. No other 64-row D layout exists in
    /// the language (one CTA's M = 64 is not supported), so the shape says it.
    pub fn tmem_pair_half(&self) -> bool {
        let one_per_cell =
            matches!(self.elem, ElemType::F32 | ElemType::I32) || self.tmem_unpacked();
        self.space == Space::Tmem && one_per_cell && matches!(self.layout.shape[..], [.., 64, _])
    }

    /// Whether this is an unpacked 16-bit TMEM tile (`tmem::<f16>([128, N], unpacked = true)`):
    /// one element in the low 16 bits of each 32-bit cell, the packing of a 16-bit
    /// accumulator D (PTX ISA §9.7.16.10.4.1 "Packing format for matrix D in Tensor Memory":
    /// sub-word elements of D are not packed). The layout says it: the innermost stride is 2
    /// elements (element `n` at 16-bit offset `2n` of its row) where a packed tile's is 1.
    pub fn tmem_unpacked(&self) -> bool {
        self.space == Space::Tmem && self.elem.bytes() == 2 && self.layout.stride.last() == Some(&2)
    }
}

/// An array of mbarriers in shared memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Barrier {
    /// User name (pipelines name theirs `<pipe>.full` / `<pipe>.empty`).
    pub name: String,
    /// Number of barriers in the array.
    pub count: u32,
    /// Expected arrivals per phase.
    pub arrivals: u32,
    /// Byte offset in dynamic shared memory (set by `plan_memory`).
    pub offset: Option<u32>,
    /// Where it was declared.
    pub span: Span,
}

/// A multi-stage producer/consumer pipeline: owns a full and an empty barrier per stage and
/// derives stage index and phase parity from an iteration counter.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// User name.
    pub name: String,
    /// Number of stages.
    pub stages: u32,
    /// Signalled by the producer (expect-tx + TMA bytes) and by the pipeline's writers, if
    /// any (threads that store part of a stage and arrive: its `arrivals` are `1 + writers`),
    /// waited on by consumers.
    pub full: Handle<Barrier>,
    /// Signalled by consumers when a stage may be overwritten, waited on by the producer.
    pub empty: Handle<Barrier>,
    /// CTAs of the cluster whose producers write into this CTA's stages (multicast): a
    /// consumer release arrives on the empty barrier of each of them. 1 without multicast.
    pub peers: u32,
    /// Where it was declared.
    pub span: Span,
}

/// One compiled instance of a kernel: function × config × target.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The user's function name.
    pub name: String,
    /// The config name (`default`, …).
    pub config: String,
    /// Comptime constants of the config, in declaration order.
    pub consts: Vec<(String, i64)>,
    /// Current phase.
    pub phase: Phase,
    /// Signature (its `smem_bytes`/`tmem_cols`/`params` are completed by the passes).
    pub sig: Signature,
    /// Virtual registers.
    pub vars: Arena<Var>,
    /// Buffers.
    pub buffers: Arena<Buffer>,
    /// mbarrier arrays.
    pub barriers: Arena<Barrier>,
    /// Pipelines.
    pub pipelines: Arena<Pipeline>,
    /// Body.
    pub body: Block,
}

/// A module: the unit the text form prints and parses.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// Kernels.
    pub kernels: Vec<Kernel>,
}

impl Kernel {
    /// The target.
    pub fn target(&self) -> Target {
        self.sig.target
    }
    /// Adds a variable.
    pub fn new_var(&mut self, name: impl Into<String>, ty: ScalarType) -> Handle<Var> {
        self.vars.append(Var {
            name: name.into(),
            ty,
        })
    }
    /// A comptime constant's value.
    pub fn const_value(&self, name: &str) -> Option<i64> {
        self.consts.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}
