//! The DSL's vocabulary: every op, declaration, scalar function, method and built-in name, in
//! one table ([`VOCABULARY`]).
//!
//! Everything that lists names is derived from it: the parser's dispatch (`ops.rs`, `decl.rs`,
//! `expr.rs` look a call up here and match on its [`Id`], checking its arguments against the
//! word's arity, named arguments and usage text), the names a tile function may not take
//! ([`reserved_call`], used by `module.rs`), the names a `let` may not shadow
//! ([`is_builtin`]), and the "unknown op … ops are …; did you mean …" hints.
//!
//! Invariants: a (namespace, name, kind) triple appears once; the order of the table is the
//! order of every list shown to the user (so messages are stable); every [`Id`] is handled by
//! an exhaustive `match` in the parser, so a word added here without a lowering is a build
//! error of the macro, not a silent hole.

use std::ops::RangeInclusive;

/// What a word is, and so where it may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An op statement: `copy(…)`, `tma::load(…)`.
    Op,
    /// A declaration bound by `let`: `let t = smem::<bf16>(…);`.
    Decl,
    /// A scalar function in expressions: `cdiv(a, b)`.
    Function,
    /// A build-time check statement: `static_assert(…)`.
    Assert,
    /// A method of an mbarrier: `bar.wait(p)`.
    BarrierMethod,
    /// A method of a pipeline: `pipe.consumer_release(s)`.
    PipeMethod,
    /// A built-in scalar name (`tid`, `cta.x`); not called.
    Builtin,
    /// An elementwise function or reduction of register tiles: `exp2_approx(x)`.
    TileFn,
}

/// Which word a lookup found; the parser matches on it exhaustively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum Id {
    Copy,
    Mma,
    SyncThreads,
    ClusterSync,
    NamedBarrier,
    NamedBarrierArrive,
    WarpAny,
    WarpAll,
    WarpBallot,
    StaticAssert,
    Smem,
    Tmem,
    Regs,
    Mbarrier,
    Pipeline,
    ClcResponse,
    Cdiv,
    Min,
    Max,
    TmaLoad,
    TmaStore,
    TmaCommitGroup,
    TmaWaitGroup,
    TmaWaitGroupRead,
    TmaReduceAdd,
    TmaReduceMin,
    TmaReduceMax,
    AtomicAdd,
    AtomicMin,
    AtomicMax,
    WgmmaMma,
    WgmmaFence,
    WgmmaCommit,
    WgmmaWait,
    Tcgen05Mma,
    Tcgen05Cp,
    Tcgen05Commit,
    Tcgen05Alloc,
    Tcgen05Dealloc,
    Tcgen05Shift,
    Tcgen05Relinquish,
    Tcgen05FenceBefore,
    Tcgen05FenceAfter,
    ClcTryCancel,
    ClcIsCanceled,
    ClcFirstCta,
    FenceProxyAsync,
    FenceMbarrierInit,
    GridDependencyWait,
    GridLaunchDependents,
    SetMaxNRegInc,
    SetMaxNRegDec,
    Arrive,
    ExpectTx,
    Wait,
    ProducerAcquire,
    ConsumerWait,
    ConsumerRelease,
    Cta,
    NCta,
    CtaRank,
    Tid,
    WarpIndex,
    LaneIndex,
    Exp2Approx,
    Exp2Poly3,
    Log2Approx,
    RsqrtApprox,
    RcpApprox,
    Rcp,
    Sqrt,
    TanhApprox,
    ToBits,
    FromBits,
    Abs,
    Fma,
    Select,
    Cast,
    RowIndex,
    ColIndex,
    ReduceMax,
    ReduceSum,
    ReduceMin,
    ArgMax,
    ArgMin,
    Gather,
}

/// One word of the DSL.
#[derive(Debug)]
pub(crate) struct Word {
    /// Which word (the parser's dispatch key).
    pub(crate) id: Id,
    /// `tma` in `tma::load`; `None` for plain names and methods.
    pub(crate) namespace: Option<&'static str>,
    /// The name as written.
    pub(crate) name: &'static str,
    /// Where it is written.
    pub(crate) kind: Kind,
    /// How many positional arguments it takes (empty range for a built-in name).
    pub(crate) arity: RangeInclusive<usize>,
    /// The `name = value` arguments it accepts.
    pub(crate) named: &'static [&'static str],
    /// Its usage, shown in argument errors: `tma::load(dst, src, bar)`.
    pub(crate) usage: &'static str,
}

impl Word {
    /// `tma::load` / `copy`.
    pub(crate) fn full_name(&self) -> String {
        match self.namespace {
            Some(ns) => format!("{ns}::{}", self.name),
            None => self.name.to_string(),
        }
    }
}

/// Shorthand for a table row.
const fn w(
    id: Id,
    namespace: Option<&'static str>,
    name: &'static str,
    kind: Kind,
    arity: (usize, usize),
    named: &'static [&'static str],
    usage: &'static str,
) -> Word {
    Word {
        id,
        namespace,
        name,
        kind,
        arity: RangeInclusive::new(arity.0, arity.1),
        named,
        usage,
    }
}

use Kind::{Assert, BarrierMethod, Builtin, Decl, Function, Op, PipeMethod, TileFn};

const TMA: Option<&str> = Some("tma");
const WGMMA: Option<&str> = Some("wgmma");
const TCGEN05: Option<&str> = Some("tcgen05");
const CLC: Option<&str> = Some("clc");
const FENCE: Option<&str> = Some("fence");
const GRID: Option<&str> = Some("grid");
const ATOMIC: Option<&str> = Some("atomic");
const ATOMIC_ARGS: &[&str] = &["scope", "sem", "old"];
const SETMAXNREG: Option<&str> = Some("setmaxnreg");
const ACC: &[&str] = &["accumulate"];
const PAIR: &[&str] = &["cta_group"];

/// The vocabulary, in the order every list of names is shown.
#[rustfmt::skip]
pub(crate) const VOCABULARY: &[Word] = &[
    // Plain ops (the compiler picks the variant).
    w(Id::Copy, None, "copy", Op, (2, 3), &["multicast", "alpha", "beta", "transpose"], "copy(dst, src[, bar])"),
    w(Id::Mma, None, "mma", Op, (3, 3), ACC, "mma(acc, a, b, accumulate = …)"),
    w(Id::SyncThreads, None, "sync_threads", Op, (0, 0), &[], "sync_threads()"),
    w(Id::ClusterSync, None, "cluster_sync", Op, (0, 0), &[], "cluster_sync()"),
    w(Id::NamedBarrier, None, "named_barrier", Op, (2, 2), &[], "named_barrier(id, threads)"),
    w(Id::NamedBarrierArrive, None, "named_barrier_arrive", Op, (2, 2), &[], "named_barrier_arrive(id, threads)"),
    w(Id::WarpAny, None, "warp_any", Op, (1, 1), &[], "warp_any(pred)"),
    w(Id::WarpAll, None, "warp_all", Op, (1, 1), &[], "warp_all(pred)"),
    w(Id::WarpBallot, None, "warp_ballot", Op, (1, 1), &[], "warp_ballot(pred)"),
    w(Id::StaticAssert, None, "static_assert", Assert, (1, 2), &[], "static_assert(condition, \"why it must hold\")"),
    // Declarations.
    w(Id::Smem, None, "smem", Decl, (1, 1), &["swizzle", "major", "alias"], "smem::<bf16>([BM, BK], swizzle = B128)"),
    w(Id::Tmem, None, "tmem", Decl, (1, 1), &["alias", "unpacked"], "tmem::<f32>([BM, BN]), tmem::<bf16>([BM, BN], alias = s) or tmem::<f16>([BM, BN], unpacked = true)"),
    w(Id::Regs, None, "regs", Decl, (1, 1), &["layout"], "regs::<f32>([R, C], layout = blocked(vec = 8))"),
    w(Id::Mbarrier, None, "mbarrier", Decl, (0, 0), &["count", "arrivals"], "mbarrier(count = 1, arrivals = 1)"),
    w(Id::Pipeline, None, "pipeline", Decl, (0, 0), &["consumers", "peers", "writers"], "pipeline::<STAGES>(consumers = 1, peers = 1, writers = 0)"),
    w(Id::ClcResponse, None, "clc_response", Decl, (0, 0), &["stages"], "clc_response(stages = 1)"),
    // Scalar functions.
    w(Id::Cdiv, None, "cdiv", Function, (2, 2), &[], "cdiv(a, b)"),
    w(Id::Min, None, "min", Function, (2, 2), &[], "min(a, b)"),
    w(Id::Max, None, "max", Function, (2, 2), &[], "max(a, b)"),
    // Namespaced ops (the namespace forces the variant).
    w(Id::TmaLoad, TMA, "load", Op, (3, 3), &["multicast", "cta_group"], "tma::load(dst, src, bar)"),
    w(Id::TmaStore, TMA, "store", Op, (2, 2), &[], "tma::store(dst, src)"),
    w(Id::TmaCommitGroup, TMA, "commit_group", Op, (0, 0), &[], "tma::commit_group()"),
    w(Id::TmaWaitGroup, TMA, "wait_group", Op, (1, 1), &[], "tma::wait_group(n)"),
    w(Id::TmaWaitGroupRead, TMA, "wait_group_read", Op, (1, 1), &[], "tma::wait_group_read(n)"),
    w(Id::TmaReduceAdd, TMA, "reduce_add", Op, (2, 2), &[], "tma::reduce_add(dst, src)"),
    w(Id::TmaReduceMin, TMA, "reduce_min", Op, (2, 2), &[], "tma::reduce_min(dst, src)"),
    w(Id::TmaReduceMax, TMA, "reduce_max", Op, (2, 2), &[], "tma::reduce_max(dst, src)"),
    w(Id::AtomicAdd, ATOMIC, "add", Op, (2, 2), ATOMIC_ARGS, "atomic::add(dst, src, scope = gpu[, sem = release][, old = o])"),
    w(Id::AtomicMin, ATOMIC, "min", Op, (2, 2), ATOMIC_ARGS, "atomic::min(dst, src, scope = gpu[, sem = release][, old = o])"),
    w(Id::AtomicMax, ATOMIC, "max", Op, (2, 2), ATOMIC_ARGS, "atomic::max(dst, src, scope = gpu[, sem = release][, old = o])"),
    w(Id::WgmmaMma, WGMMA, "mma", Op, (3, 3), ACC, "wgmma::mma(acc, a, b, accumulate = …)"),
    w(Id::WgmmaFence, WGMMA, "fence", Op, (0, 0), &[], "wgmma::fence()"),
    w(Id::WgmmaCommit, WGMMA, "commit", Op, (0, 0), &[], "wgmma::commit()"),
    w(Id::WgmmaWait, WGMMA, "wait", Op, (1, 1), &[], "wgmma::wait(n)"),
    w(Id::Tcgen05Mma, TCGEN05, "mma", Op, (3, 3), &["accumulate", "cta_group", "scale_a", "scale_b", "kind", "saturate"], "tcgen05::mma(acc, a, b, accumulate = …[, cta_group = 2][, scale_a = sfa, scale_b = sfb[, kind = mxf4]][, saturate = true])"),
    w(Id::Tcgen05Cp, TCGEN05, "cp", Op, (2, 2), PAIR, "tcgen05::cp(tmem_dst, smem_src[, cta_group = 2])"),
    w(Id::Tcgen05Commit, TCGEN05, "commit", Op, (1, 1), &["cta_group", "multicast"], "tcgen05::commit(bar[, cta_group = 2[, multicast = M]])"),
    w(Id::Tcgen05Alloc, TCGEN05, "alloc", Op, (1, 1), PAIR, "tcgen05::alloc(tmem_buffer[, cta_group = 2])"),
    w(Id::Tcgen05Dealloc, TCGEN05, "dealloc", Op, (1, 1), PAIR, "tcgen05::dealloc(tmem_buffer[, cta_group = 2])"),
    w(Id::Tcgen05Shift, TCGEN05, "shift", Op, (1, 1), PAIR, "tcgen05::shift(tmem_tile[, cta_group = 2])"),
    w(Id::Tcgen05Relinquish, TCGEN05, "relinquish", Op, (0, 0), PAIR, "tcgen05::relinquish([cta_group = 2])"),
    w(Id::Tcgen05FenceBefore, TCGEN05, "fence_before", Op, (0, 0), &[], "tcgen05::fence_before()"),
    w(Id::Tcgen05FenceAfter, TCGEN05, "fence_after", Op, (0, 0), &[], "tcgen05::fence_after()"),
    w(Id::ClcTryCancel, CLC, "try_cancel", Op, (2, 2), &["multicast"], "clc::try_cancel(resp, bar[, multicast = true])"),
    w(Id::ClcIsCanceled, CLC, "is_canceled", Op, (1, 1), &[], "clc::is_canceled(resp)"),
    w(Id::ClcFirstCta, CLC, "first_cta", Op, (1, 1), &[], "clc::first_cta(resp)"),
    w(Id::FenceProxyAsync, FENCE, "proxy_async", Op, (0, 0), &[], "fence::proxy_async()"),
    w(Id::FenceMbarrierInit, FENCE, "mbarrier_init", Op, (0, 0), &[], "fence::mbarrier_init()"),
    w(Id::GridDependencyWait, GRID, "dependency_wait", Op, (0, 0), &[], "grid::dependency_wait()"),
    w(Id::GridLaunchDependents, GRID, "launch_dependents", Op, (0, 0), &[], "grid::launch_dependents()"),
    w(Id::SetMaxNRegInc, SETMAXNREG, "inc", Op, (1, 1), &[], "setmaxnreg::inc(count)"),
    w(Id::SetMaxNRegDec, SETMAXNREG, "dec", Op, (1, 1), &[], "setmaxnreg::dec(count)"),
    // Methods.
    w(Id::Arrive, None, "arrive", BarrierMethod, (0, 0), &[], "arrive()"),
    w(Id::ExpectTx, None, "expect_tx", BarrierMethod, (0, 1), &[], "expect_tx(bytes)"),
    w(Id::Wait, None, "wait", BarrierMethod, (1, 1), &[], "wait(parity)"),
    w(Id::ProducerAcquire, None, "producer_acquire", PipeMethod, (1, 1), &[], "producer_acquire(k)"),
    w(Id::ConsumerWait, None, "consumer_wait", PipeMethod, (1, 1), &[], "consumer_wait(k)"),
    w(Id::ConsumerRelease, None, "consumer_release", PipeMethod, (1, 1), &[], "consumer_release(stage)"),
    // Built-in scalars.
    w(Id::Cta, None, "cta", Builtin, (1, 0), &[], "cta.x|y|z"),
    w(Id::NCta, None, "ncta", Builtin, (1, 0), &[], "ncta.x|y|z"),
    w(Id::CtaRank, None, "cta_rank", Builtin, (1, 0), &[], "cta_rank"),
    w(Id::Tid, None, "tid", Builtin, (1, 0), &[], "tid"),
    w(Id::WarpIndex, None, "warp_id", Builtin, (1, 0), &[], "warp_id"),
    w(Id::LaneIndex, None, "lane_id", Builtin, (1, 0), &[], "lane_id"),
    // Register-tile functions (elementwise, indices, reductions).
    w(Id::Exp2Approx, None, "exp2_approx", TileFn, (1, 1), &[], "exp2_approx(x)"),
    w(Id::Exp2Poly3, None, "exp2_poly3", TileFn, (1, 1), &[], "exp2_poly3(x)"),
    w(Id::Log2Approx, None, "log2_approx", TileFn, (1, 1), &[], "log2_approx(x)"),
    w(Id::RsqrtApprox, None, "rsqrt_approx", TileFn, (1, 1), &[], "rsqrt_approx(x)"),
    w(Id::RcpApprox, None, "rcp_approx", TileFn, (1, 1), &[], "rcp_approx(x)"),
    w(Id::Rcp, None, "rcp", TileFn, (1, 1), &[], "rcp(x)"),
    w(Id::Sqrt, None, "sqrt", TileFn, (1, 1), &[], "sqrt(x)"),
    w(Id::TanhApprox, None, "tanh_approx", TileFn, (1, 1), &[], "tanh_approx(x)"),
    w(Id::ToBits, None, "to_bits", TileFn, (1, 1), &[], "to_bits(x)"),
    w(Id::FromBits, None, "from_bits", TileFn, (1, 1), &[], "from_bits(i)"),
    w(Id::Abs, None, "abs", TileFn, (1, 1), &[], "abs(x)"),
    w(Id::Fma, None, "fma", TileFn, (3, 3), &[], "fma(a, b, c)"),
    w(Id::Select, None, "select", TileFn, (3, 3), &[], "select(cond, a, b)"),
    w(Id::Cast, None, "cast", TileFn, (1, 1), &[], "cast::<bf16>(x)"),
    w(Id::RowIndex, None, "row_index", TileFn, (1, 1), &[], "row_index(tile)"),
    w(Id::ColIndex, None, "col_index", TileFn, (1, 1), &[], "col_index(tile)"),
    w(Id::ReduceMax, None, "reduce_max", TileFn, (1, 1), &["axis", "across"], "reduce_max(tile, axis = 1[, across = cluster])"),
    w(Id::ReduceSum, None, "reduce_sum", TileFn, (1, 1), &["axis", "across"], "reduce_sum(tile, axis = 1[, across = cluster])"),
    w(Id::ReduceMin, None, "reduce_min", TileFn, (1, 1), &["axis", "across"], "reduce_min(tile, axis = 1[, across = cluster])"),
    w(Id::ArgMax, None, "argmax", TileFn, (1, 1), &["axis", "across"], "argmax(tile, axis = 1[, across = cluster])"),
    w(Id::ArgMin, None, "argmin", TileFn, (1, 1), &["axis", "across"], "argmin(tile, axis = 1[, across = cluster])"),
    w(Id::Gather, None, "gather", TileFn, (2, 3), &["oob"], "gather(tensor, row, col[, oob = zero]) or gather(vector, i[, oob = zero])"),
];

// The table is in `Id` order, so `word` is an index (checked when the macro is built).
const _: () = {
    assert!(VOCABULARY.len() == Id::Gather as usize + 1);
    let mut i = 0;
    while i < VOCABULARY.len() {
        assert!(
            VOCABULARY[i].id as usize == i,
            "VOCABULARY is in `Id` order"
        );
        i += 1;
    }
};

/// The word `id`.
pub(crate) const fn word(id: Id) -> &'static Word {
    &VOCABULARY[id as usize]
}

/// The word `namespace::name` (or plain `name`) of one of `kinds`.
pub(crate) fn lookup(namespace: Option<&str>, name: &str, kinds: &[Kind]) -> Option<&'static Word> {
    VOCABULARY
        .iter()
        .find(|w| w.namespace == namespace && w.name == name && kinds.contains(&w.kind))
}

/// The names of the words of `kind` without a namespace, in table order.
pub(crate) fn names(kind: Kind) -> Vec<&'static str> {
    VOCABULARY
        .iter()
        .filter(|w| w.kind == kind && w.namespace.is_none())
        .map(|w| w.name)
        .collect()
}

/// The op namespaces, in table order.
pub(crate) fn namespaces() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for ns in VOCABULARY.iter().filter_map(|w| w.namespace) {
        if !out.contains(&ns) {
            out.push(ns);
        }
    }
    out
}

/// The ops of namespace `ns`, in table order.
pub(crate) fn namespace_ops(ns: &str) -> Vec<&'static str> {
    VOCABULARY
        .iter()
        .filter(|w| w.namespace == Some(ns))
        .map(|w| w.name)
        .collect()
}

/// Every op's full name (`copy`, `tma::load`), for "did you mean".
pub(crate) fn all_ops() -> Vec<String> {
    VOCABULARY
        .iter()
        .filter(|w| w.kind == Op)
        .map(Word::full_name)
        .collect()
}

/// A plain name written with call syntax (`name(…)`) that the language defines, so a tile
/// function may not take it: ops, declarations, scalar functions and `static_assert`.
pub(crate) fn reserved_call(name: &str) -> bool {
    VOCABULARY.iter().any(|w| {
        w.namespace.is_none()
            && w.name == name
            && matches!(w.kind, Op | Decl | Function | Assert | TileFn)
    })
}

/// A built-in scalar name (`tid`, `cta`, …), which a `let` may not shadow.
pub(crate) fn is_builtin(name: &str) -> bool {
    lookup(None, name, &[Builtin]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_once() {
        for (i, a) in VOCABULARY.iter().enumerate() {
            for b in &VOCABULARY[i + 1..] {
                assert!(
                    a.id != b.id && (a.namespace, a.name, a.kind) != (b.namespace, b.name, b.kind),
                    "{a:?} and {b:?}"
                );
            }
        }
    }

    #[test]
    fn usage_names_the_word() {
        for w in VOCABULARY.iter().filter(|w| w.kind != Builtin) {
            assert!(w.usage.starts_with(&w.full_name()), "{w:?}");
        }
    }
}
