//! Dispatch variants as typed values: which hardware path a copy or an mma takes, and the
//! properties of that path the checks ask about — which memory it reads and writes, through
//! which proxy, how its completion is observed, which threads its instruction fixes.
//!
//! `Op::Copy` holds an `Option<CopyVariant>` and `Op::Mma` an `Option<MmaVariant>`: `None`
//! until `dispatch-ops` chooses, or forced by the front end (`tma::load` → `TmaLoad`, …). The
//! dispatch table (`dispatch::COPY`, `dispatch::MMA`) holds one entry per value, each with its
//! predicate and lowering; the entry is found by value, never by name.
//!
//! Invariants: every property is an exhaustive `match`, so a new variant does not compile
//! until it answers each one (no check can be skipped by a name it does not know); `name` is
//! the variant's text form (`variant tma_load` in the IR, the rejection table's first column)
//! and `from_name` its exact inverse (`ALL` lists every value once).

use std::fmt;

/// Where a variant reads or writes data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mem {
    /// A tile of a global tensor.
    Global,
    /// Shared memory of the CTA.
    Shared,
    /// Tensor memory (sm_100a).
    Tmem,
    /// Registers of the issuing threads.
    Reg,
}

/// The proxy a variant's shared-memory accesses go through (PTX ISA §8.6 "Proxies"): a
/// generic-proxy write is seen by an async-proxy read (TMA, wgmma, tcgen05) only after
/// `fence.proxy.async` (§9.7.13.4) and a barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proxy {
    /// Ordinary loads and stores of the threads (`ld`/`st`, `ldmatrix`/`stmatrix`); also the
    /// variants that touch no shared memory.
    Generic,
    /// The async proxy: TMA (`cp.async.bulk.tensor`) and `tcgen05.cp`.
    Async,
}

/// How the issuing threads learn that a variant's op is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Completion {
    /// Done when the issuing threads move on: their own loads and stores, or a TMEM access
    /// the lowering follows with its `tcgen05.wait` (§9.7.16.8.5).
    InOrder,
    /// The bytes complete on the barrier the op names (`mbarrier::complete_tx`, §9.7.9.25.5.1):
    /// the destination is loading until a wait on that barrier.
    TxBytes,
    /// A bulk async-group (`cp.async.bulk.commit_group` / `wait_group.read`, §9.7.9.25.5.1):
    /// the source is being read until the group is waited on.
    BulkGroup,
    /// A wgmma group (`wgmma.commit_group` / `wait_group`, §9.7.15.5.3/4): the accumulator
    /// and register operands are in flight until the wait.
    WgmmaGroup,
    /// The issuing thread's next `tcgen05.commit` to an mbarrier (§9.7.16.6.2).
    Tcgen05Commit,
}

/// The threads an instruction is issued by, where the instruction alone fixes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Issuer {
    /// One thread.
    Thread,
    /// Whole warpgroups.
    Warpgroup,
}

/// The tensor-core generation an MMA variant issues to: the target feature it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorCore {
    /// `tcgen05.mma` (sm_100a).
    Tcgen05,
    /// `wgmma.mma_async` (sm_90a).
    Wgmma,
}

/// What the dispatcher and the parser need of either variant type.
pub trait VariantId: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// The op the variants belong to (`copy`, `mma`).
    const OP: &'static str;
    /// Every value, once, in name order.
    const ALL: &'static [Self];
    /// The text form (`tma_load`).
    fn name(self) -> &'static str;
    /// Whether the dispatcher never chooses it for an op that did not force it (an atomic
    /// copy is spelled by its word: a plain `copy` never becomes one).
    fn only_forced(self) -> bool {
        false
    }
    /// The value spelled `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
}

/// The hardware path of an `Op::Copy` (one file each under `dispatch/copy/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CopyVariant {
    /// Shared tile → 16-bit wgmma-fragment registers (`ldmatrix`).
    Ldmatrix,
    /// Shared tile holding the transpose → 16-bit wgmma-fragment registers
    /// (`ldmatrix….trans`): `copy(t, s, transpose = true)` only.
    LdmatrixTrans,
    /// wgmma accumulator registers → global tile, converted.
    RegEpilogue,
    /// Register tile reduced into a global tile atomically (`red` / `atom`).
    RegAtomic,
    /// Global tile → register tile, vectorized and masked.
    RegLoad,
    /// wgmma accumulator registers → shared TMA staging tile (`st.shared`).
    RegStage,
    /// Register tile → global tile, vectorized and masked.
    RegStore,
    /// Shared tile → register tile (`ld.shared`).
    SharedLoad,
    /// Register tile → shared tile (`st.shared`).
    SharedStore,
    /// wgmma-fragment registers → 16-bit shared tile (`stmatrix`).
    Stmatrix,
    /// wgmma-fragment registers → 16-bit shared tile, transposed (`stmatrix….trans`):
    /// `copy(s, t, transpose = true)` only.
    StmatrixTrans,
    /// Shared tile → tensor memory (`tcgen05.cp`).
    Tcgen05Cp,
    /// Global tile → shared tile by the CTA's threads (`ld.global` + `st.shared`).
    ThreadLoad,
    /// Global tile → shared tile by TMA, completing on an mbarrier.
    TmaLoad,
    /// Shared tile reduced into a global tile by TMA (`cp.reduce.async.bulk.tensor`), in a
    /// bulk group.
    TmaReduce,
    /// Shared tile → global tile by TMA, in a bulk group.
    TmaStore,
    /// TMEM accumulator → global tile, converted (`tcgen05.ld`).
    TmemEpilogue,
    /// TMEM → register tile (`tcgen05.ld`).
    TmemLoad,
    /// Register tile → TMEM (`tcgen05.st`).
    TmemStore,
}

impl VariantId for CopyVariant {
    const OP: &'static str = "copy";

    fn only_forced(self) -> bool {
        self.atomic() || self.transposes()
    }
    const ALL: &'static [Self] = &[
        CopyVariant::Ldmatrix,
        CopyVariant::LdmatrixTrans,
        CopyVariant::RegAtomic,
        CopyVariant::RegEpilogue,
        CopyVariant::RegLoad,
        CopyVariant::RegStage,
        CopyVariant::RegStore,
        CopyVariant::SharedLoad,
        CopyVariant::SharedStore,
        CopyVariant::Stmatrix,
        CopyVariant::StmatrixTrans,
        CopyVariant::Tcgen05Cp,
        CopyVariant::ThreadLoad,
        CopyVariant::TmaLoad,
        CopyVariant::TmaReduce,
        CopyVariant::TmaStore,
        CopyVariant::TmemEpilogue,
        CopyVariant::TmemLoad,
        CopyVariant::TmemStore,
    ];

    fn name(self) -> &'static str {
        match self {
            CopyVariant::Ldmatrix => "ldmatrix",
            CopyVariant::LdmatrixTrans => "ldmatrix_trans",
            CopyVariant::RegAtomic => "reg_atomic",
            CopyVariant::RegEpilogue => "reg_epilogue",
            CopyVariant::RegLoad => "reg_load",
            CopyVariant::RegStage => "reg_stage",
            CopyVariant::RegStore => "reg_store",
            CopyVariant::SharedLoad => "shared_load",
            CopyVariant::SharedStore => "shared_store",
            CopyVariant::Stmatrix => "stmatrix",
            CopyVariant::StmatrixTrans => "stmatrix_trans",
            CopyVariant::Tcgen05Cp => "tcgen05_cp",
            CopyVariant::ThreadLoad => "thread_load",
            CopyVariant::TmaLoad => "tma_load",
            CopyVariant::TmaReduce => "tma_reduce",
            CopyVariant::TmaStore => "tma_store",
            CopyVariant::TmemEpilogue => "tmem_epilogue",
            CopyVariant::TmemLoad => "tmem_load",
            CopyVariant::TmemStore => "tmem_store",
        }
    }
}

impl CopyVariant {
    /// The text form (`tma_load`).
    pub fn name(self) -> &'static str {
        VariantId::name(self)
    }

    /// (source, destination): where the copy reads and where it writes.
    pub fn moves(self) -> (Mem, Mem) {
        use Mem::*;
        match self {
            CopyVariant::Ldmatrix | CopyVariant::LdmatrixTrans | CopyVariant::SharedLoad => {
                (Shared, Reg)
            }
            CopyVariant::RegAtomic | CopyVariant::RegEpilogue | CopyVariant::RegStore => {
                (Reg, Global)
            }
            CopyVariant::RegLoad => (Global, Reg),
            CopyVariant::RegStage
            | CopyVariant::SharedStore
            | CopyVariant::Stmatrix
            | CopyVariant::StmatrixTrans => (Reg, Shared),
            CopyVariant::Tcgen05Cp => (Shared, Tmem),
            CopyVariant::ThreadLoad | CopyVariant::TmaLoad => (Global, Shared),
            CopyVariant::TmaReduce | CopyVariant::TmaStore => (Shared, Global),
            CopyVariant::TmemEpilogue => (Tmem, Global),
            CopyVariant::TmemLoad => (Tmem, Reg),
            CopyVariant::TmemStore => (Reg, Tmem),
        }
    }

    /// Where the copy reads.
    pub fn reads(self) -> Mem {
        self.moves().0
    }

    /// Where the copy writes.
    pub fn writes(self) -> Mem {
        self.moves().1
    }

    /// The proxy its shared-memory accesses go through.
    pub fn proxy(self) -> Proxy {
        match self {
            CopyVariant::TmaLoad
            | CopyVariant::TmaReduce
            | CopyVariant::TmaStore
            | CopyVariant::Tcgen05Cp => Proxy::Async,
            CopyVariant::Ldmatrix
            | CopyVariant::LdmatrixTrans
            | CopyVariant::RegAtomic
            | CopyVariant::RegEpilogue
            | CopyVariant::RegLoad
            | CopyVariant::RegStage
            | CopyVariant::RegStore
            | CopyVariant::SharedLoad
            | CopyVariant::SharedStore
            | CopyVariant::Stmatrix
            | CopyVariant::StmatrixTrans
            | CopyVariant::ThreadLoad
            | CopyVariant::TmemEpilogue
            | CopyVariant::TmemLoad
            | CopyVariant::TmemStore => Proxy::Generic,
        }
    }

    /// Whether it writes shared memory through the generic proxy: an async-proxy reader
    /// (TMA store, MMA) needs a proxy fence and a barrier after it.
    pub fn generic_shared_write(self) -> bool {
        self.writes() == Mem::Shared && self.proxy() == Proxy::Generic
    }

    /// How its completion is observed.
    pub fn completion(self) -> Completion {
        match self {
            CopyVariant::TmaLoad => Completion::TxBytes,
            CopyVariant::TmaReduce | CopyVariant::TmaStore => Completion::BulkGroup,
            CopyVariant::Tcgen05Cp => Completion::Tcgen05Commit,
            CopyVariant::Ldmatrix
            | CopyVariant::LdmatrixTrans
            | CopyVariant::RegAtomic
            | CopyVariant::RegEpilogue
            | CopyVariant::RegLoad
            | CopyVariant::RegStage
            | CopyVariant::RegStore
            | CopyVariant::SharedLoad
            | CopyVariant::SharedStore
            | CopyVariant::Stmatrix
            | CopyVariant::StmatrixTrans
            | CopyVariant::ThreadLoad
            | CopyVariant::TmemEpilogue
            | CopyVariant::TmemLoad
            | CopyVariant::TmemStore => Completion::InOrder,
        }
    }

    /// The threads `verify-scopes` requires of a forced copy before dispatch, where the op's
    /// word fixes them (`tma::load`/`tma::store`: one thread issues a bulk tensor copy).
    /// `None`: the variant's predicate checks the threads and names them in its rejection
    /// (`tcgen05_cp` one thread, the register and TMEM moves the tile's owners or whole
    /// warpgroups, `thread_load` the whole CTA).
    pub fn issuer(self) -> Option<Issuer> {
        match self {
            CopyVariant::TmaLoad | CopyVariant::TmaReduce | CopyVariant::TmaStore => {
                Some(Issuer::Thread)
            }
            CopyVariant::Ldmatrix
            | CopyVariant::LdmatrixTrans
            | CopyVariant::RegAtomic
            | CopyVariant::RegEpilogue
            | CopyVariant::RegLoad
            | CopyVariant::RegStage
            | CopyVariant::RegStore
            | CopyVariant::SharedLoad
            | CopyVariant::SharedStore
            | CopyVariant::Stmatrix
            | CopyVariant::StmatrixTrans
            | CopyVariant::Tcgen05Cp
            | CopyVariant::ThreadLoad
            | CopyVariant::TmemEpilogue
            | CopyVariant::TmemLoad
            | CopyVariant::TmemStore => None,
        }
    }

    /// Whether it reduces into its destination atomically instead of storing (an
    /// `Op::Copy` with `atomic`): never chosen for a plain copy, only forced by its word.
    pub fn atomic(self) -> bool {
        matches!(self, CopyVariant::RegAtomic | CopyVariant::TmaReduce)
    }

    /// Whether it transposes (`ldmatrix`/`stmatrix` `.trans`): never chosen for a plain
    /// copy, only forced by `copy(.., transpose = true)`.
    pub fn transposes(self) -> bool {
        matches!(
            self,
            CopyVariant::LdmatrixTrans | CopyVariant::StmatrixTrans
        )
    }

    /// The DSL op that forces it, for messages (`tma::load`; `copy` where none does).
    pub fn word(self) -> &'static str {
        match self {
            CopyVariant::TmaLoad => "tma::load",
            CopyVariant::TmaStore => "tma::store",
            CopyVariant::TmaReduce => "tma::reduce_*",
            CopyVariant::RegAtomic => "atomic::*",
            CopyVariant::Tcgen05Cp => "tcgen05::cp",
            CopyVariant::Ldmatrix
            | CopyVariant::LdmatrixTrans
            | CopyVariant::RegEpilogue
            | CopyVariant::RegLoad
            | CopyVariant::RegStage
            | CopyVariant::RegStore
            | CopyVariant::SharedLoad
            | CopyVariant::SharedStore
            | CopyVariant::Stmatrix
            | CopyVariant::StmatrixTrans
            | CopyVariant::ThreadLoad
            | CopyVariant::TmemEpilogue
            | CopyVariant::TmemLoad
            | CopyVariant::TmemStore => "copy",
        }
    }
}

/// The hardware path of an `Op::Mma` (one file each under `dispatch/mma/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MmaVariant {
    /// `tcgen05.mma`: accumulator in TMEM, one issuing thread.
    Tcgen05,
    /// `wgmma.mma_async`: accumulator in registers, one warpgroup.
    Wgmma,
}

impl VariantId for MmaVariant {
    const OP: &'static str = "mma";
    const ALL: &'static [Self] = &[MmaVariant::Tcgen05, MmaVariant::Wgmma];

    fn name(self) -> &'static str {
        match self {
            MmaVariant::Tcgen05 => "tcgen05",
            MmaVariant::Wgmma => "wgmma",
        }
    }
}

impl MmaVariant {
    /// The text form (`wgmma`).
    pub fn name(self) -> &'static str {
        VariantId::name(self)
    }

    /// The tensor core it issues to (the target feature it needs).
    pub fn tensor_core(self) -> TensorCore {
        match self {
            MmaVariant::Tcgen05 => TensorCore::Tcgen05,
            MmaVariant::Wgmma => TensorCore::Wgmma,
        }
    }

    /// Where the accumulator lives.
    pub fn accumulator(self) -> Mem {
        match self {
            MmaVariant::Tcgen05 => Mem::Tmem,
            MmaVariant::Wgmma => Mem::Reg,
        }
    }

    /// How its completion is observed: until then its operands are read and its accumulator
    /// written asynchronously.
    pub fn completion(self) -> Completion {
        match self {
            MmaVariant::Tcgen05 => Completion::Tcgen05Commit,
            MmaVariant::Wgmma => Completion::WgmmaGroup,
        }
    }

    /// The threads its instruction is issued by (checked by `verify-scopes` when forced).
    pub fn issuer(self) -> Issuer {
        match self {
            MmaVariant::Tcgen05 => Issuer::Thread,
            MmaVariant::Wgmma => Issuer::Warpgroup,
        }
    }

    /// The DSL op that forces it, for messages.
    pub fn word(self) -> &'static str {
        match self {
            MmaVariant::Tcgen05 => "tcgen05::mma",
            MmaVariant::Wgmma => "wgmma::mma",
        }
    }
}

impl fmt::Display for CopyVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for MmaVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
