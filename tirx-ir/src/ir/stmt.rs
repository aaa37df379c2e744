//! Statements and what they hold: scopes, tile operands, tile and synchronisation ops
//! (`Op`), PTX instructions (`Inst`, `Operand`), `StmtKind`, `Stmt` and `Block`.
//! Re-exported from `ir` (see its module docs for the phases).

use super::{
    Barrier, Buffer, CopyVariant, Expr, MmaVariant, Pipeline, ReduceKind, Span, TExpr, Var,
};
use crate::arena::Handle;

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
        /// Tile coordinates, outermost first (element offsets when `elements` is set).
        coords: Vec<Expr>,
        /// `x.at(e0, e1, …)`: `coords` are the element offsets of the tile's first element,
        /// not tile coordinates (a sequence of a packed variable-length batch starts at any
        /// row). `Some(bounds)`: the element form, with `bounds` either empty or one per
        /// dimension (`x.at(…).within(b0, b1, …)`): elements at index `b_k` or past along
        /// dimension `k` lie outside the tile — not stored, loaded as 0 — as those past the
        /// tensor's own extents do. `None`: tile coordinates.
        elements: Option<Box<Bounds>>,
    },
}

/// The bounds of a tile at element offsets (`x.at(…).within(b0, b1, …)`): empty, or one per
/// dimension. Boxed in [`TileRef::Global`] to keep tile operands (and so every op) small.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Bounds(pub Vec<Expr>);

impl TileRef {
    /// A global tile's `.within(…)` bounds when it is at element offsets (`x.at(…)`): `None`
    /// for tile coordinates, `Some(&[])` for element offsets with no bounds.
    pub fn element_bounds(&self) -> Option<&[Expr]> {
        match self {
            TileRef::Global {
                elements: Some(b), ..
            } => Some(&b.0),
            _ => None,
        }
    }
}

/// The scale-factor operands of a block-scaled MMA (PTX ISA §9.7.16.10.7 "Block Scaling"):
/// TMEM tiles of A's factors (one row per row of A) and of B's (one row per row of B, i.e.
/// per column of D), each `tmem::<ue8m0>([R, 4])`.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockScale {
    /// A's factors (`scale_a`).
    pub a: TileRef,
    /// B's factors (`scale_b`).
    pub b: TileRef,
    /// `kind = mxf4`: MXFP4 emitted as `.kind::mxf4.block_scale.scale_vec::2X` (PTX ISA
    /// §9.7.16.10.9) rather than the `kind::mxf4nvf4 … ::2X` the types select by default (the
    /// same product and descriptor, §9.7.16.4.2 Table "… .kind::mxf4 and .kind::mxf4nvf4").
    pub mxf4: bool,
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
        /// Forced (`tma::load`) or chosen (`dispatch-ops`) hardware path.
        variant: Option<CopyVariant>,
        /// TMA loads, `cta_group = 2` (PTX ISA §9.7.9.25.5.1, `.cta_group::2`): the box lands
        /// in this CTA's shared memory, and its bytes complete on the barrier at `bar`'s
        /// offset in the even CTA of the pair, whose MMA reads both CTAs' halves. A shared →
        /// TMEM copy (`tcgen05::cp(.., cta_group = 2)`, §9.7.16.9.2): the even CTA's
        /// `tcgen05.cp.cta_group::2`, each CTA's source into its own tensor memory.
        pair: bool,
        /// An atomic reduction into the (global) destination instead of a store
        /// (`atomic::add`, `tma::reduce_add`, …): `reg_atomic` or `tma_reduce`.
        atomic: Option<super::Atomic>,
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
        /// Forced (`wgmma::mma`) or chosen (`dispatch-ops`) hardware path.
        variant: Option<MmaVariant>,
        /// `cta_group = 2`: the CTA pair's MMA (PTX ISA §9.7.16.5), M = 2 × `acc`'s rows
        /// across the pair, issued by the even CTA; `a` and `b` are this CTA's halves.
        pair: bool,
        /// `scale_a = …, scale_b = …`: the block-scaled form (`tcgen05.mma …
        /// .block_scale`, §9.7.16.10.7), `(A·scale_a)·(B·scale_b)ᵀ`.
        scale: Option<Box<BlockScale>>,
        /// `saturate = true`: `kind::i8`'s D clamps to the s32 range instead of wrapping (the
        /// instruction descriptor's bit 3, "Saturate for integer types", §9.7.16.4.2).
        saturate: bool,
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
    /// `griddepcontrol.wait`: the thread waits until the grids this launch depends on
    /// (programmatic dependent launch) have completed and their memory operations are visible.
    GridDepWait,
    /// `griddepcontrol.launch_dependents`: the grid that depends on this one may be scheduled
    /// once every CTA of this grid has issued it or exited.
    GridDepLaunch,
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
        /// `.cta_group::2`: one warp of each CTA of the pair allocates the same columns.
        pair: bool,
    },
    /// `tcgen05.relinquish_alloc_permit` (whole warp).
    TmemRelinquish {
        /// `.cta_group::2`.
        pair: bool,
    },
    /// `tcgen05.dealloc` (whole warp).
    TmemDealloc {
        /// The TMEM buffer.
        buf: Handle<Buffer>,
        /// `.cta_group::2`.
        pair: bool,
    },
    /// `tcgen05.shift.cta_group::N.down` (PTX ISA §9.7.16.9.3) over a TMEM tile (one thread):
    /// in each 32-lane partition of the tile, the rows of its first 256 bits (8 columns) move
    /// down one lane, all but the partition's last (the implicit `.31x256b` shape,
    /// §9.7.16.2.3); asynchronous, pipelined with the thread's MMAs and copies and completed
    /// by its `tcgen05.commit`. With `pair` the shift is done in both CTAs of the pair, issued
    /// by the even CTA.
    Tcgen05Shift {
        /// The TMEM tile (a buffer, or a stage of one).
        tile: TileRef,
        /// `.cta_group::2`.
        pair: bool,
    },
    /// `tcgen05.commit` to an mbarrier (one thread): arrives when prior MMAs complete.
    /// With `pair` (`.cta_group::2`) the even CTA commits the pair's MMAs and the arrival is
    /// multicast to `bar`'s offset in both CTAs of the pair.
    Tcgen05Commit {
        /// Barrier.
        bar: BarRef,
        /// `.cta_group::2` with `.multicast::cluster` over the pair.
        pair: bool,
        /// With `pair`, the CTAs the arrival is multicast to when that is more than the pair
        /// (a constant mask of whole pairs: `tcgen05::commit(bar, cta_group = 2, multicast =
        /// M)`); `None`: the pair's own two CTAs.
        multicast: Option<u32>,
    },
    /// Cluster launch control (PTX ISA §9.7.13.17): ask to cancel the launch of a cluster
    /// that has not started; the 16-byte response lands in `resp` (16-byte aligned shared
    /// memory) and `bar` gets `complete_tx` of 16 bytes (`derive_signals` adds the expect-tx).
    /// One thread. With `multicast`, only the cluster's CTA of rank 0 issues it (each CTA's
    /// thread still expects the bytes on its own barrier) and the response and the signal go
    /// to every CTA of the cluster, at `resp`'s and `bar`'s offsets.
    ClcTryCancel {
        /// The 16-byte response buffer.
        resp: TileRef,
        /// The barrier the response signals.
        bar: BarRef,
        /// `.multicast::cluster::all`.
        multicast: bool,
    },
    /// `let dst = gather(tensor, index…)` of integer scalars: one 32-bit word of an `i32` or
    /// `u32` global tensor at indices known per thread (a page-table entry, a `cu_seqlens`
    /// offset), loaded by every thread of the scope with a guarded `ld.global.b32` (PTX ISA
    /// §9.7.9.8); 0 when an index is out of range. `dst` is a `u32` variable, usable as a
    /// tile coordinate.
    LoadScalar {
        /// Receives the word.
        dst: Handle<Var>,
        /// Tensor parameter name.
        tensor: String,
        /// One `u32` index per dimension, outermost first.
        index: Vec<Expr>,
        /// `oob = zero`: an index out of range reads 0 by intent (no emulator check).
        oob_zero: bool,
    },
    /// `let dst = warp_any(p)` / `warp_all(p)` / `warp_ballot(p)`: a vote of the 32 lanes of
    /// each warp of the scope (`vote.sync` with a full member mask, PTX ISA §9.7.13 "vote.sync");
    /// `dst` is a predicate (`Any`, `All`) or a `u32` (`Ballot`), the same in every lane.
    WarpVote {
        /// Receives the vote.
        dst: Handle<Var>,
        /// Any, all or ballot.
        kind: super::VoteKind,
        /// Each lane's predicate.
        pred: super::VotePred,
    },
    /// Decode a completed response (PTX ISA §9.7.13.18): `ld.shared.b128` of `resp`, then
    /// `query_cancel.is_canceled` into the predicate `dst`.
    ClcIsCanceled {
        /// The response buffer.
        resp: TileRef,
        /// Receives whether the request cancelled a cluster.
        dst: Handle<Var>,
    },
    /// Decode a completed, successful response (PTX ISA §9.7.13.18): `ld.shared.b128` of
    /// `resp`, then `query_cancel.get_first_ctaid::{x,y,z}` into `dsts` (x first; one to three).
    ClcFirstCta {
        /// The response buffer.
        resp: TileRef,
        /// Receive the first CTA's x, y, z (as many as given).
        dsts: Vec<Handle<Var>>,
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
    /// the 128 threads of one warpgroup while other roles run on; with `arrive`,
    /// `bar.arrive id, threads`: these threads count toward the barrier without waiting (a
    /// producer signalling threads that `bar.sync` on it, e.g. one warpgroup handing the
    /// tensor core to another).
    NamedBarrier {
        /// Barrier id (1..=15; 0 is `sync_threads`).
        id: Expr,
        /// Threads that arrive in all, syncing or arriving (a multiple of 32).
        threads: u32,
        /// `bar.arrive`: arrive without waiting.
        arrive: bool,
    },
    /// `dst = value`, elementwise over the register tile `dst` (every tile `value` reads has
    /// `dst`'s layout or is a statistic of it, broadcast); run by the threads that own `dst`.
    Compute {
        /// The register tile written.
        dst: Handle<Buffer>,
        /// The value of each element.
        value: TExpr,
    },
    /// `dst = reduce(src)` along `axis` (1: one value per row): in each thread, then across
    /// the lanes that share a row (`shfl.sync.bfly`), then across warps through `scratch`.
    Reduce {
        /// The statistic (layout `src.reduce(axis)`).
        dst: Handle<Buffer>,
        /// The tile reduced (with `value`: the tile whose layout the values have).
        src: Handle<Buffer>,
        /// The values reduced, when they are an expression over `src`'s layout rather than
        /// `src` itself: evaluated per element and combined as they are made, never stored.
        value: Option<TExpr>,
        /// Max or sum.
        kind: ReduceKind,
        /// 0: down the rows; 1: along the columns.
        axis: u8,
        /// Shared memory for the exchange across warps (set by `plan-reductions` when the
        /// statistic's threads span warps).
        scratch: Option<Handle<Buffer>>,
        /// The exchange may run again before every thread read its result (the op is in a
        /// loop): synchronise once more after reading.
        again: bool,
        /// The statistic also combines the CTAs of the cluster (`across = cluster`): each
        /// CTA's value is pushed with `st.async` into slot `[its rank]` of every CTA's
        /// `cluster_scratch`, completing bytes on that CTA's `cluster_bar`; each CTA waits on
        /// its own barrier and combines the slots in rank order (`regtile::reduce`).
        cluster: bool,
        /// The cluster exchange in its pull form (`across = cluster_pull`): publish into the
        /// own slot, a cluster barrier, read every rank's slot (`ld.shared::cluster`).
        pull: bool,
        /// Shared memory for the exchange across the cluster (set by `plan-reg-tiles`).
        cluster_scratch: Option<Handle<Buffer>>,
        /// The push form's receive barriers (one, or two alternating when `again`; set by
        /// `plan-reg-tiles`).
        cluster_bar: Option<Handle<Barrier>>,
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
