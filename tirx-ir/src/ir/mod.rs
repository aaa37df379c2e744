//! Every node of the tile IR, in one place.
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

use crate::abi::{ElemType, Signature, Swizzle, Target};
use crate::arena::{Arena, Handle};
pub use crate::encode::Major;

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

/// Scalar (register) types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// Predicate.
    Pred,
    /// 16-bit untyped (holds a bf16/f16).
    B16,
    /// 32-bit unsigned.
    U32,
    /// 32-bit signed.
    S32,
    /// 64-bit unsigned (addresses, descriptors).
    U64,
    /// 32-bit float.
    F32,
}

impl ScalarType {
    /// PTX type suffix (`u32`, `pred`, …).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Pred => "pred",
            ScalarType::B16 => "b16",
            ScalarType::U32 => "u32",
            ScalarType::S32 => "s32",
            ScalarType::U64 => "u64",
            ScalarType::F32 => "f32",
        }
    }
    /// Parses a PTX type suffix.
    pub fn from_name(s: &str) -> Option<ScalarType> {
        Some(match s {
            "pred" => ScalarType::Pred,
            "b16" => ScalarType::B16,
            "u32" => ScalarType::U32,
            "s32" => ScalarType::S32,
            "u64" => ScalarType::U64,
            "f32" => ScalarType::F32,
            _ => return None,
        })
    }
}

/// A virtual register.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// The user's name, or a compiler-chosen hint; printed in the declaration only.
    pub name: String,
    /// Type.
    pub ty: ScalarType,
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
    /// Where it was declared.
    pub span: Span,
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
    /// Signalled by the producer (expect-tx + TMA bytes), waited on by consumers.
    pub full: Handle<Barrier>,
    /// Signalled by consumers when a stage may be overwritten, waited on by the producer.
    pub empty: Handle<Barrier>,
    /// CTAs of the cluster whose producers write into this CTA's stages (multicast): a
    /// consumer release arrives on the empty barrier of each of them. 1 without multicast.
    pub peers: u32,
    /// Where it was declared.
    pub span: Span,
}

/// Special registers and derived thread coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// `%tid.x`.
    TidX,
    /// `%ctaid.{x,y,z}`.
    CtaId(u8),
    /// `%nctaid.{x,y,z}`.
    NCtaId(u8),
    /// `%cluster_ctarank`.
    ClusterCtaRank,
    /// Warp index within the CTA (`%tid.x / 32`).
    WarpId,
    /// Lane index (`%tid.x % 32`).
    LaneId,
    /// Base address of dynamic shared memory in the shared window.
    SmemBase,
}

impl Special {
    /// Text spelling.
    pub fn name(self) -> &'static str {
        match self {
            Special::TidX => "tid.x",
            Special::CtaId(0) => "ctaid.x",
            Special::CtaId(1) => "ctaid.y",
            Special::CtaId(_) => "ctaid.z",
            Special::NCtaId(0) => "nctaid.x",
            Special::NCtaId(1) => "nctaid.y",
            Special::NCtaId(_) => "nctaid.z",
            Special::ClusterCtaRank => "cluster_ctarank",
            Special::WarpId => "warp_id",
            Special::LaneId => "lane_id",
            Special::SmemBase => "smem_base",
        }
    }
    /// Every special, for parsing.
    pub const ALL: [Special; 11] = [
        Special::TidX,
        Special::CtaId(0),
        Special::CtaId(1),
        Special::CtaId(2),
        Special::NCtaId(0),
        Special::NCtaId(1),
        Special::NCtaId(2),
        Special::ClusterCtaRank,
        Special::WarpId,
        Special::LaneId,
        Special::SmemBase,
    ];
}

/// Binary operators on scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer: truncating)
    Div,
    /// `%`
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// Ceiling division.
    CeilDiv,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

/// The scaling of an accumulator epilogue, `dst = alpha · src + beta · dst`: both factors are
/// scalar (`f32`) kernel arguments, named as in the signature's `scalars`. Without `beta` the
/// destination is only written; with it, it is read first — except where `beta` is zero at
/// run time, where it is not read at all (BLAS's convention: C may then hold anything).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The factor of the source (the accumulator).
    pub alpha: String,
    /// The factor of the destination's previous contents.
    pub beta: Option<String>,
}

/// Comparisons (produce a predicate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// A scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Integer or predicate constant (predicates: 0/1).
    Imm(i64, ScalarType),
    /// A variable.
    Var(Handle<Var>),
    /// A runtime shape symbol (kernel parameter `Dim`).
    Dim(String),
    /// A special register.
    Special(Special),
    /// Binary operation; both sides have the result type.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Comparison; a predicate.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// Logical not of a predicate.
    Not(Box<Expr>),
    /// Logical and of predicates.
    AndP(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// `u32` immediate.
    pub fn u32(v: u32) -> Expr {
        Expr::Imm(v as i64, ScalarType::U32)
    }
    /// Builds `lhs op rhs`.
    pub fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Bin(op, Box::new(lhs), Box::new(rhs))
    }
    /// Builds `lhs cmp rhs`.
    pub fn cmp(op: CmpOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Cmp(op, Box::new(lhs), Box::new(rhs))
    }
    /// Whether the expression is an atom (allowed in the `Ptx` phase).
    pub fn is_atom(&self) -> bool {
        matches!(self, Expr::Imm(..) | Expr::Var(_))
    }
}

/// Which threads execute a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every thread of the CTA.
    Cta,
    /// Warpgroups `first..=last` (4 consecutive warps each, starting at a multiple of 4).
    Warpgroup(u32, u32),
    /// Warps `first..=last`.
    Warp(u32, u32),
    /// One thread, by CTA-linear index.
    Thread(u32),
    /// One elected thread of each enclosing warp (`elect.sync`).
    Elect,
    /// The first thread of each enclosing warpgroup (`tid % 128 == 0`): one issuer per
    /// warpgroup, e.g. for a consumer warpgroup's own TMA store.
    Leader,
}

/// A reference to one barrier of an array.
#[derive(Clone, Debug, PartialEq)]
pub struct BarRef {
    /// The array.
    pub bar: Handle<Barrier>,
    /// Index into it.
    pub index: Expr,
}

/// A tile operand.
#[derive(Clone, Debug, PartialEq)]
pub enum TileRef {
    /// A buffer, indexed on its leading dimensions (`a_s[s]` picks stage `s`).
    Buf {
        /// The buffer.
        buf: Handle<Buffer>,
        /// Leading indices.
        index: Vec<Expr>,
    },
    /// A tile of a global tensor: tile coordinates (in units of the tile shape, outermost
    /// first); the tile shape is the shape of the buffer on the other side of the op.
    Global {
        /// Tensor parameter name.
        tensor: String,
        /// Tile coordinates, outermost first.
        coords: Vec<Expr>,
    },
}

/// Tile and synchronisation ops.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Copy a tile (`dst` ← `src`); dispatch picks TMA load/store or a register/TMEM epilogue.
    /// `bar` is the barrier a TMA load signals.
    Copy {
        /// Destination.
        dst: TileRef,
        /// Source.
        src: TileRef,
        /// Completion barrier (TMA loads).
        bar: Option<BarRef>,
        /// TMA loads: the CTAs of the cluster that receive the box (a constant bit mask), each
        /// at the same shared-memory offset and signalling its own barrier at `bar`'s offset.
        multicast: Option<Expr>,
        /// Accumulator epilogues: `dst = alpha · src (+ beta · dst)` with scalar arguments.
        scale: Option<Scale>,
        /// Forced or chosen variant.
        variant: Option<String>,
    },
    /// `acc (+)= a · bᵀ` on tiles (`a` M×K, `b` N×K, both K-major in shared memory);
    /// dispatch picks tcgen05 or wgmma. `accumulate` false overwrites `acc`.
    Mma {
        /// Accumulator (TMEM on tcgen05, registers on wgmma).
        acc: TileRef,
        /// Left operand.
        a: TileRef,
        /// Right operand.
        b: TileRef,
        /// Predicate: add to the accumulator (else overwrite).
        accumulate: Expr,
        /// Forced or chosen variant.
        variant: Option<String>,
    },
    /// Producer side of a pipeline: wait until stage `iter % stages` is empty, then bind
    /// `stage` to it. `derive_signals` adds the arrive-expect-tx on its full barrier.
    ProducerAcquire {
        /// Pipeline.
        pipe: Handle<Pipeline>,
        /// Iteration counter.
        iter: Expr,
        /// Receives the stage index.
        stage: Handle<Var>,
    },
    /// Consumer side: wait until stage `iter % stages` is full; bind `stage`.
    ConsumerWait {
        /// Pipeline.
        pipe: Handle<Pipeline>,
        /// Iteration counter.
        iter: Expr,
        /// Receives the stage index.
        stage: Handle<Var>,
    },
    /// Consumer side: mark a stage empty (plain arrive on its empty barrier).
    ConsumerRelease {
        /// Pipeline.
        pipe: Handle<Pipeline>,
        /// Stage index.
        stage: Expr,
    },
    /// `mbarrier.init` every barrier of an array with its arrival count.
    MbarInit {
        /// The array.
        bar: Handle<Barrier>,
    },
    /// `mbarrier.arrive`.
    MbarArrive {
        /// Barrier.
        bar: BarRef,
    },
    /// `mbarrier.arrive.expect_tx` with a byte count (`None`: derived by `derive_signals`).
    MbarArriveExpectTx {
        /// Barrier.
        bar: BarRef,
        /// Bytes.
        bytes: Option<u32>,
    },
    /// Wait until the barrier's phase with the given parity has completed.
    MbarWait {
        /// Barrier.
        bar: BarRef,
        /// Parity (0/1).
        parity: Expr,
    },
    /// `fence.mbarrier_init.release.cluster`.
    FenceMbarrierInit,
    /// `fence.proxy.async.shared::cta`.
    FenceProxyAsync,
    /// `bar.sync 0` over the whole CTA.
    SyncThreads,
    /// `cp.async.bulk.commit_group`.
    TmaCommitGroup,
    /// `cp.async.bulk.wait_group[.read] n`.
    TmaWaitGroup {
        /// Groups allowed to stay pending.
        n: u32,
        /// Wait only until the sources have been read.
        read: bool,
    },
    /// `tcgen05.alloc` of a TMEM buffer's columns (whole warp).
    TmemAlloc {
        /// The TMEM buffer.
        buf: Handle<Buffer>,
    },
    /// `tcgen05.relinquish_alloc_permit` (whole warp).
    TmemRelinquish,
    /// `tcgen05.dealloc` (whole warp).
    TmemDealloc {
        /// The TMEM buffer.
        buf: Handle<Buffer>,
    },
    /// `tcgen05.commit` to an mbarrier (one thread): arrives when prior MMAs complete.
    Tcgen05Commit {
        /// Barrier.
        bar: BarRef,
    },
    /// `tcgen05.fence::before_thread_sync`.
    Tcgen05FenceBefore,
    /// `tcgen05.fence::after_thread_sync`.
    Tcgen05FenceAfter,
    /// `wgmma.fence` (warpgroup).
    WgmmaFence,
    /// `wgmma.commit_group` (warpgroup).
    WgmmaCommit,
    /// `wgmma.wait_group n` (warpgroup).
    WgmmaWait {
        /// Groups allowed to stay pending.
        n: u32,
    },
    /// `barrier.cluster.arrive` + `barrier.cluster.wait`: every thread of every CTA of the
    /// cluster.
    ClusterSync,
    /// `bar.sync id, threads`: a named barrier among `threads` threads (whole warps), e.g.
    /// the 128 threads of one warpgroup while other roles run on.
    NamedBarrier {
        /// Barrier id (1..=15; 0 is `sync_threads`).
        id: Expr,
        /// Threads that arrive (a multiple of 32).
        threads: u32,
    },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (warpgroup): move registers between
    /// warpgroups of different roles.
    SetMaxNReg {
        /// Raise (true) or lower the per-thread register count.
        inc: bool,
        /// The new count (24..=256, a multiple of 8).
        count: u32,
    },
}

/// An instruction operand (`Ptx` phase and instructions in the `Thread` phase).
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(Handle<Var>),
    /// A negated predicate register (`!%p`).
    NotReg(Handle<Var>),
    /// An integer immediate.
    Imm(i64),
    /// A 32-bit float immediate, as its bits.
    F32Bits(u32),
    /// A symbol: a kernel parameter or label name.
    Sym(String),
    /// `[base + offset]`.
    Mem(Box<Operand>, i64),
    /// `[map, {c0, c1, …}]` (tensor-map addressing).
    TensorMem(Box<Operand>, Vec<Operand>),
    /// `{a, b, …}`.
    Vector(Vec<Operand>),
    /// `a|b`: the destination pair of `elect.sync` (and `setp` with two outputs).
    Pair(Box<Operand>, Box<Operand>),
}

/// One PTX instruction on virtual registers: `[@guard] opcode dsts…, srcs…;`.
/// Built only through the constructors in `inst.rs`, each citing the PTX ISA.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// Full opcode with modifiers, e.g. `add.u32` or
    /// `cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes`.
    pub opcode: String,
    /// Operands written.
    pub dsts: Vec<Operand>,
    /// Operands read.
    pub srcs: Vec<Operand>,
    /// Guard predicate (`@%p` / `@!%p`).
    pub guard: Option<Operand>,
}

/// A statement kind.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// Define (first assignment of) a variable.
    Let {
        /// Variable.
        var: Handle<Var>,
        /// Value.
        value: Expr,
    },
    /// Re-assign a variable.
    Assign {
        /// Variable.
        var: Handle<Var>,
        /// Value.
        value: Expr,
    },
    /// Conditional.
    If {
        /// Predicate.
        cond: Expr,
        /// Then-branch.
        then_body: Block,
        /// Else-branch.
        else_body: Block,
    },
    /// Counted loop: `var` from `start` while `var < end`, stepping by `step`.
    For {
        /// Induction variable.
        var: Handle<Var>,
        /// First value.
        start: Expr,
        /// Exclusive bound.
        end: Expr,
        /// Step (> 0).
        step: Expr,
        /// Body.
        body: Block,
    },
    /// Run `body`, then repeat while the predicate `until` is false (a spin loop).
    Loop {
        /// Body.
        body: Block,
        /// Exit when this predicate is true after the body.
        until: Handle<Var>,
    },
    /// A block executed by the threads of a scope.
    Scope {
        /// Which threads.
        scope: Scope,
        /// Body.
        body: Block,
    },
    /// A tile or synchronisation op.
    Op(Op),
    /// A PTX instruction.
    Inst(Inst),
}

/// A statement with its source location.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it came from.
    pub span: Span,
}

/// A sequence of statements.
pub type Block = Vec<Stmt>;

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

impl Stmt {
    /// A statement with no user location.
    pub fn new(kind: StmtKind) -> Stmt {
        Stmt {
            kind,
            span: Span::NONE,
        }
    }
    /// A statement at `span`.
    pub fn at(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }
}
