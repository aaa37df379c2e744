//! [`Op`]: the executable form of one PTX instruction, one variant per behaviour, with
//! operands resolved (`program.rs`) and modifiers read (`decode.rs`). Each variant names
//! the PTX ISA section it implements.

use super::float::Rnd;
use super::program::{Addr, Reg, Val};
use super::tcgen05_kind::Elem;
use crate::ptx::Type;

/// Integer and bitwise binary operations (§9.7.1 "Integer Arithmetic", §9.7.7 "Logic and
/// Shift"); on `.pred` operands the bitwise ones are the predicate logic of §9.7.7.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    MadLo,
    MadHi,
    MadWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// Integer unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntUn {
    Not,
    Cnot,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
}

/// Floating-point operations with up to three sources (§9.7.3 "Floating-Point").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FOp {
    Add,
    Sub,
    Mul,
    Fma,
    Div,
    Min,
    Max,
    /// `min.NaN`: the canonical NaN when either source is NaN (§9.7.3 `min`, sm_80+).
    MinNaN,
    /// `max.NaN` (§9.7.3 `max`, sm_80+).
    MaxNaN,
    Neg,
    Abs,
    /// `rcp.approx` / `rcp.rn`: computed as the correctly rounded `1/x`.
    Rcp,
    /// `sqrt.*`: correctly rounded.
    Sqrt,
    /// `rsqrt.approx`: `1/sqrt(x)` evaluated in f64, rounded once to f32.
    Rsqrt,
    /// `ex2.approx`: `2^x` in f64, rounded once to f32.
    Ex2,
    /// `lg2.approx`: `log2 x` in f64, rounded once to f32.
    Lg2,
    /// `tanh.approx`: `tanh x` in f64, rounded once to f32.
    Tanh,
    /// `sin.approx`.
    Sin,
    /// `cos.approx`.
    Cos,
}

/// A `setp` comparison (§9.7.5 "Comparison and Selection"; the `u`-suffixed float
/// comparisons are true also when an operand is NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// The boolean combination of a `setp` with a third predicate (`.and/.or/.xor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

/// `shfl.sync` modes (§9.7.9 "shfl.sync").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `vote.sync` modes (§9.7.13 "vote.sync").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// Where a `wgmma.mma_async` takes A from (§9.7.15.5.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum WgmmaA {
    /// A shared-memory matrix descriptor (the SS form).
    Desc(Val),
    /// Four `.b32` registers of packed 16-bit pairs, the A fragment (the RS form).
    Regs([Reg; 4]),
}

/// How a load or store names its state space (§5.1; none is generic addressing, §6.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemSpace {
    Generic,
    Global,
    SharedCta,
    SharedCluster,
    Param,
}

/// `cvt` (§9.7.9) options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CvtMode {
    /// `.rn/.rz/.rm/.rp/.rna` or the integer forms `.rni/.rzi/.rmi/.rpi` (then `int` is set).
    pub rnd: Option<Rnd>,
    /// Rounding to an integral value (`.rni` …).
    pub int: bool,
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
    pub satfinite: bool,
}

/// One executable instruction.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// `mov` (§9.7.9) of `bits` bits.
    Mov { d: Reg, a: Val, bits: u32 },
    /// `mov.bN d, {a, b, …}`: pack parts of `bits` bits, the first lowest (§9.7.9).
    Pack { d: Reg, parts: Vec<Val>, bits: u32 },
    /// `mov.bN {d0, d1, …}, a`: unpack (§9.7.9).
    Unpack {
        ds: Vec<Option<Reg>>,
        a: Val,
        bits: u32,
    },
    /// Integer/bitwise/predicate binary and ternary (`mad`) operations.
    Int {
        op: IntOp,
        ty: Type,
        d: Reg,
        a: Val,
        b: Val,
        c: Option<Val>,
    },
    /// Integer unary operations.
    IntUn { op: IntUn, ty: Type, d: Reg, a: Val },
    /// Floating-point operations (`b`, `c` unused by the unary ones). `rnd` is the rounding
    /// of `add`/`sub`/`mul` (`.rn` unless `.rz/.rm/.rp` is written: §9.7.3 `add`, `sub`, `mul`);
    /// the other operations round to nearest.
    Float {
        op: FOp,
        ty: Type,
        ftz: bool,
        sat: bool,
        rnd: Rnd,
        d: Reg,
        a: Val,
        b: Val,
        c: Val,
    },
    /// `setp.cmp[.bool].ty p[|q], a, b[, [!]c]` (§9.7.5).
    Setp {
        cmp: Cmp,
        ty: Type,
        ftz: bool,
        p: Option<Reg>,
        q: Option<Reg>,
        a: Val,
        b: Val,
        combine: Option<(BoolOp, Val, bool)>,
    },
    /// `selp.ty d, a, b, [!]c` (§9.7.5).
    Selp {
        bits: u32,
        d: Reg,
        a: Val,
        b: Val,
        c: Val,
        c_neg: bool,
    },
    /// `cvt.mode.dty.sty d, a` (§9.7.9).
    Cvt {
        dty: Type,
        sty: Type,
        mode: CvtMode,
        d: Reg,
        a: Val,
    },
    /// `cvt.rn.{f16x2,bf16x2}.f32 d, a, b`: `a` into the upper half, `b` the lower.
    CvtPack {
        dty: Type,
        mode: CvtMode,
        d: Reg,
        a: Val,
        b: Val,
    },
    /// `cvta[.to].space` (§9.7.9): between a space's addresses and generic ones.
    Cvta {
        to_generic: bool,
        space: MemSpace,
        d: Reg,
        a: Val,
    },
    /// `ld[.space][.vN].ty` (§9.7.9), `bits` per element.
    Ld {
        space: MemSpace,
        bits: u32,
        ds: Vec<Option<Reg>>,
        addr: Addr,
    },
    /// `st[.space][.vN].ty` (§9.7.9).
    St {
        space: MemSpace,
        bits: u32,
        vals: Vec<Val>,
        addr: Addr,
    },
    /// `tcgen05.fence::after_thread_sync` (PTX ISA §9.7.16.6.4): the thread's later tcgen05
    /// operations are ordered after its earlier thread synchronisation (an mbarrier wait, a
    /// barrier), so a `tcgen05.ld` may read what an MMA completed before that wait wrote.
    TcFenceAfter,
    /// `ldmatrix.sync.aligned.m8n8.xN[.trans].shared{::cta}.b16 {d…}, [a]` (PTX ISA
    /// "Warp-level matrix load instruction: ldmatrix"): `n` 8×8 matrices of 16-bit
    /// elements, one register per matrix per lane (`matrix.rs`).
    LdMatrix {
        n: u32,
        trans: bool,
        ds: Vec<Option<Reg>>,
        addr: Addr,
    },
    /// `stmatrix.sync.aligned.m8n8.xN[.trans].shared{::cta}.b16 [a], {r…}` (PTX ISA
    /// "Warp-level matrix store instruction: stmatrix"), the inverse of [`Op::LdMatrix`].
    StMatrix {
        n: u32,
        trans: bool,
        vals: Vec<Val>,
        addr: Addr,
    },
    /// `atom[.sem][.scope][.space].op.type d, [a], b[, c]` (§9.7.13.5) and `red…op.type [a],
    /// b` (§9.7.13.6, `d` none).
    Atom {
        op: super::atom::AtomOp,
        ty: Type,
        space: MemSpace,
        /// `.cta`/`.cluster`/`.gpu`/`.sys` (`.gpu` when absent): what the global-race
        /// shadow judges two CTAs' atomics by.
        scope: super::global_race::AtomScope,
        d: Option<Reg>,
        addr: Addr,
        b: Val,
        c: Option<Val>,
    },
    /// `red[.sem][.scope].global.op[.noftz].vN.type [a], {b…}` (§9.7.13.6, vector forms, PTX
    /// ISA 8.1, sm_90): `.add.v2/.v4.f32`, `.op.noftz.v2/.v4/.v8.f16|.bf16` and
    /// `.op.noftz.v2/.v4.f16x2|.bf16x2` (`op` add, min, max), global memory only. Each
    /// element is its own atomic operation (`atom.rs`).
    RedVec {
        op: super::atom::AtomOp,
        /// The element type (`.f32`, `.bf16x2`, …).
        ty: Type,
        scope: super::global_race::AtomScope,
        addr: Addr,
        vals: Vec<Val>,
    },
    /// `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
    /// [.multicast::cluster::all].b128 [resp], [mbar]` (`clc.rs`).
    ClcTryCancel {
        resp: Addr,
        mbar: Addr,
        multicast: bool,
    },
    /// `st.async[.weak].shared::cluster.mbarrier::complete_tx::bytes[.v2|.v4].type [a], v,
    /// [mbar]` (§9.7.9.12, PTX ISA 8.1, sm_90; `st_async.rs`): a store of `bits`-wide values
    /// into a CTA of the cluster that signals `complete_tx` of its bytes on the mbarrier at
    /// `mbar` of the same CTA.
    StAsync {
        bits: u32,
        vals: Vec<Val>,
        addr: Addr,
        mbar: Addr,
    },
    /// `clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, q` (`first: None`) and
    /// `….get_first_ctaid[::dim][.v4].b32.b128 d, q` (the dimension, or all three into a
    /// `.v4` with its fourth element ignored).
    ClcQuery {
        ds: Vec<Option<Reg>>,
        q: Reg,
        first: Option<Option<u8>>,
    },
    /// `bra[.uni] target` (§9.7.13 control flow).
    Bra { target: u32 },
    /// `ret` / `exit`.
    Exit,
    /// `bar.sync`/`bar.arrive`/`barrier.sync`/`barrier.arrive` (§9.7.13 "bar, barrier").
    Bar {
        id: Val,
        count: Option<Val>,
        wait: bool,
    },
    /// `barrier.cluster.arrive` (§9.7.13 "barrier.cluster").
    ClusterArrive,
    /// `barrier.cluster.wait`.
    ClusterWait,
    /// `mbarrier.init` (§9.7.13 "mbarrier").
    MbarInit { addr: Addr, count: Val },
    /// `mbarrier.arrive[.expect_tx]`, `mbarrier.arrive_drop` (`drop`).
    MbarArrive {
        d: Option<Reg>,
        addr: Addr,
        count: Option<Val>,
        tx: Option<Val>,
        cluster: bool,
        drop: bool,
    },
    /// `mbarrier.expect_tx` (`complete = false`) / `mbarrier.complete_tx`.
    MbarTx {
        addr: Addr,
        tx: Val,
        complete: bool,
        cluster: bool,
    },
    /// `mbarrier.try_wait[.parity]` (`block`) / `mbarrier.test_wait[.parity]`.
    MbarWait {
        d: Option<Reg>,
        addr: Addr,
        arg: Val,
        parity: bool,
        block: bool,
    },
    /// Ordering only, a no-op for this sequentially consistent machine: `fence`, `membar`,
    /// `fence.proxy.*`, `fence.mbarrier_init`, `prefetch`, `nanosleep`.
    Nop,
    /// `fence.proxy.async[.shared::cta]` (§9.7.13 "membar/fence"): orders the thread's
    /// generic-proxy shared-memory writes before later async-proxy reads (`shadow.rs`).
    FenceProxyAsync,
    /// `shfl.sync.mode.b32 d[|p], a, b, c, membermask` (§9.7.9).
    Shfl {
        mode: ShflMode,
        d: Reg,
        p: Option<Reg>,
        a: Val,
        b: Val,
        c: Val,
    },
    /// `vote.sync.mode` (§9.7.13).
    Vote {
        mode: VoteMode,
        d: Reg,
        a: Val,
        a_neg: bool,
    },
    /// `redux.sync.op.type d, a, membermask` (§9.7.13 "redux.sync"): `.add/.min/.max` on
    /// `.u32/.s32`, `.and/.or/.xor` on `.b32`, over the lanes of the mask.
    Redux {
        op: super::atom::AtomOp,
        ty: Type,
        d: Reg,
        a: Val,
    },
    /// `elect.sync d|p, membermask` (§9.7.13 "elect.sync").
    Elect { d: Option<Reg>, p: Option<Reg> },
    /// `activemask.b32 d`.
    ActiveMask { d: Reg },
    /// `mapa.shared::cluster d, a, rank` (§9.7.9 "mapa").
    Mapa { d: Reg, a: Val, rank: Val },
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`
    /// (§9.7.9.25), with the `.multicast::cluster` CTA mask if any; `pair`: `.cta_group::2`,
    /// whose mbarrier may be in the peer CTA of the destination's pair.
    TmaLoad {
        dst: Addr,
        map: Val,
        coords: Vec<Val>,
        mbar: Addr,
        multicast: Option<Val>,
        pair: bool,
    },
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group` (§9.7.9.25), or with `reduce`
    /// `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group` (§9.7.9.25.5.2).
    TmaStore {
        map: Val,
        coords: Vec<Val>,
        src: Addr,
        reduce: Option<super::atom::AtomOp>,
    },
    /// `cp.async.bulk.commit_group` (§9.7.9).
    BulkCommit,
    /// `cp.async.bulk.wait_group[.read] n` (§9.7.9).
    BulkWait { n: u32 },
    /// `wgmma.fence.sync.aligned` (§9.7.15).
    WgmmaFence,
    /// `wgmma.commit_group.sync.aligned` (§9.7.15).
    WgmmaCommit,
    /// `wgmma.wait_group.sync.aligned n` (§9.7.15).
    WgmmaWait { n: u32 },
    /// `wgmma.mma_async.sync.aligned.m64nNk16.f32.atype.atype d, a-desc, b-desc, scale-d,
    /// imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b` (§9.7.15.5.2), both operands in
    /// shared memory; or the RS form `d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a,
    /// imm-scale-b, imm-trans-b` with A from registers (`tnsp_a` false). The FP8 form
    /// `.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2} d, a-desc, b-desc, scale-d, imm-scale-a,
    /// imm-scale-b` has no transpose operands (both K-major).
    Wgmma {
        n: u32,
        /// K of one instruction: 16 (16-bit inputs) or 32 (FP8).
        k: u32,
        /// A's and B's element types.
        a_elem: Elem,
        b_elem: Elem,
        d: Vec<Reg>,
        a: WgmmaA,
        b: Val,
        scale_d: Val,
        neg_a: bool,
        neg_b: bool,
        tnsp_a: bool,
        tnsp_b: bool,
    },
    /// `tcgen05.alloc.cta_group::{1,2}.sync.aligned.shared::cta.b32 [dst], ncols` (§9.7.16.7.1);
    /// `pair`: `cta_group::2`, one warp of each CTA of the pair allocates the same columns.
    TcAlloc { dst: Addr, ncols: Val, pair: bool },
    /// `tcgen05.dealloc.cta_group::{1,2}.sync.aligned.b32 taddr, ncols`.
    TcDealloc { taddr: Val, ncols: Val, pair: bool },
    /// `tcgen05.relinquish_alloc_permit.cta_group::{1,2}.sync.aligned`.
    TcRelinquish,
    /// `tcgen05.ld.sync.aligned.<shape>.xN{.pack::16b}.b32 {…}, [taddr]{, split}`
    /// (§9.7.16.8.3; the shapes §9.7.16.2.3, see `tmem_shape.rs`).
    TcLd {
        ds: Vec<Reg>,
        taddr: Addr,
        shape: super::tmem_shape::TmemShape,
        pack: bool,
    },
    /// `tcgen05.wait::ld.sync.aligned` (§9.7.16).
    TcWaitLd,
    /// `tcgen05.st.sync.aligned.<shape>.xN{.unpack::16b}.b32 [taddr]{, split}, {…}`
    /// (§9.7.16.8.4; the shapes §9.7.16.2.3, see `tmem_shape.rs`).
    TcSt {
        taddr: Addr,
        vals: Vec<Val>,
        shape: super::tmem_shape::TmemShape,
        unpack: bool,
    },
    /// `tcgen05.wait::st.sync.aligned` (§9.7.16.8.5).
    TcWaitSt,
    /// `tcgen05.mma.cta_group::{1,2}.kind::{f16,tf32,f8f6f4} [d], a-desc, b-desc, idesc,
    /// enable-input-d`, or with `[a-tmem]` for A (§9.7.16.10.9); `pair`: `cta_group::2`, the
    /// MMA of a CTA pair (§9.7.16.5).
    TcMma {
        kind: super::tcgen05_kind::Kind,
        d: Addr,
        a: TcA,
        b: Val,
        idesc: Val,
        enable: Val,
        pair: bool,
        /// The block-scaled kinds' `[scale-A-tmem], [scale-B-tmem]` (§9.7.16.10.7).
        scale: Option<(Addr, Addr)>,
    },
    /// `tcgen05.commit.cta_group::{1,2}.mbarrier::arrive::one[.shared::cluster]
    /// [.multicast::cluster].b64 [mbar][, ctaMask]` (§9.7.16.10.10 `tcgen05.commit`).
    TcCommit {
        mbar: Addr,
        multicast: Option<Val>,
        pair: bool,
    },
    /// `tcgen05.cp.cta_group::{1,2}.<shape> [taddr], s-desc` (§9.7.16.9.2): `shape` the
    /// (lanes, bytes per lane) of `.128x256b`, `.128x128b` or `.4x256b`.
    TcCp {
        taddr: Addr,
        desc: Val,
        /// Rows, bytes a row, and the lanes each row lands in (the multicast).
        shape: crate::exec::tcgen05_cp::CpShape,
        /// `.cta_group::2`: into both CTAs' tensor memory of the pair.
        pair: bool,
    },
    /// `tcgen05.shift.cta_group::{1,2}.down [taddr]` (§9.7.16.9.3): rows of the matrix at
    /// `taddr` down one lane (`tcgen05_shift.rs`).
    TcShift { taddr: Addr, pair: bool },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (§9.7.19.6): the warp's register budget
    /// (`setmaxnreg.rs`).
    Setmaxnreg { inc: bool, count: u32 },
}

/// The A operand of a `tcgen05.mma` (§9.7.16.10.9): a shared-memory matrix descriptor, or
/// (`[a-tmem]`) the tensor-memory address of A.
#[derive(Clone, Debug)]
pub enum TcA {
    /// `a-desc`.
    Desc(Val),
    /// `[a-tmem]`.
    Tmem(Addr),
}
