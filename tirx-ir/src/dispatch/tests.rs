//! The typed variants and the dispatch tables agree: every value has exactly one entry, the
//! text form parses back to the value, and the properties the checks ask are the ones the
//! variant files document (a TMA load completes on its barrier's bytes, the generic-proxy
//! shared writers are exactly the four `st.shared`/`stmatrix` paths, …).

use super::{COPY, MMA, Table};
use crate::ir::{Completion, CopyVariant, Issuer, Mem, MmaVariant, Proxy, TensorCore, VariantId};

/// Position of a copy variant in `ALL`. Exhaustive on purpose: a new variant does not compile
/// until it is counted here, and then the tests below require its table entry and name.
fn copy_index(v: CopyVariant) -> usize {
    match v {
        CopyVariant::Ldmatrix => 0,
        CopyVariant::LdmatrixTrans => 1,
        CopyVariant::RegAtomic => 2,
        CopyVariant::RegEpilogue => 3,
        CopyVariant::RegLoad => 4,
        CopyVariant::RegStage => 5,
        CopyVariant::RegStore => 6,
        CopyVariant::SharedLoad => 7,
        CopyVariant::SharedStore => 8,
        CopyVariant::Stmatrix => 9,
        CopyVariant::StmatrixTrans => 10,
        CopyVariant::Tcgen05Cp => 11,
        CopyVariant::ThreadLoad => 12,
        CopyVariant::TmaLoad => 13,
        CopyVariant::TmaReduce => 14,
        CopyVariant::TmaStore => 15,
        CopyVariant::TmemEpilogue => 16,
        CopyVariant::TmemLoad => 17,
        CopyVariant::TmemStore => 18,
    }
}

/// As `copy_index`, for mmas.
fn mma_index(v: MmaVariant) -> usize {
    match v {
        MmaVariant::Tcgen05 => 0,
        MmaVariant::Wgmma => 1,
    }
}

/// `ALL` holds every value once, in name order; each has exactly one table entry, and the
/// table has no other; the name parses back to the value.
fn one_entry_each<V: Table>(index: fn(V) -> usize, count: usize) {
    assert_eq!(V::ALL.len(), count, "{}: ALL misses a value", V::OP);
    for (i, &v) in V::ALL.iter().enumerate() {
        assert_eq!(index(v), i, "{}: ALL is not in order at {v:?}", V::OP);
        let entries = V::table().iter().filter(|e| e.id == v).count();
        assert_eq!(entries, 1, "{}: {v:?} has {entries} table entries", V::OP);
        assert_eq!(V::from_name(v.name()), Some(v));
        assert!(std::ptr::eq(v.entry(), v.entry()));
    }
    assert_eq!(
        V::table().len(),
        count,
        "{}: a table entry has no value",
        V::OP
    );
    let names: Vec<_> = V::ALL.iter().map(|v| v.name()).collect();
    assert!(names.is_sorted(), "{}: {names:?}", V::OP);
    assert_eq!(V::from_name("tma-load"), None);
}

#[test]
fn every_variant_has_one_entry() {
    one_entry_each::<CopyVariant>(copy_index, 19);
    one_entry_each::<MmaVariant>(mma_index, 2);
    assert_eq!(COPY.len() + MMA.len(), 21);
}

#[test]
fn the_shared_writers_and_their_proxies() {
    let writers = |p: Proxy| {
        CopyVariant::ALL
            .iter()
            .filter(|v| v.writes() == Mem::Shared && v.proxy() == p)
            .map(|v| v.name())
            .collect::<Vec<_>>()
    };
    // thread_load (§9.7.9.10 st), shared_store and reg_stage (st.shared), stmatrix and its
    // `.trans` form (§9.7.9.27 stmatrix): the generic proxy; a TMA load the async proxy
    // (§9.7.9.25).
    assert_eq!(
        writers(Proxy::Generic),
        [
            "reg_stage",
            "shared_store",
            "stmatrix",
            "stmatrix_trans",
            "thread_load"
        ]
    );
    assert_eq!(writers(Proxy::Async), ["tma_load"]);
    for v in CopyVariant::ALL {
        assert_eq!(
            v.generic_shared_write(),
            writers(Proxy::Generic).contains(&v.name())
        );
    }
}

#[test]
fn completions_and_issuers() {
    let by = |c: Completion| {
        CopyVariant::ALL
            .iter()
            .filter(|v| v.completion() == c)
            .map(|v| v.name())
            .collect::<Vec<_>>()
    };
    assert_eq!(by(Completion::TxBytes), ["tma_load"]);
    assert_eq!(by(Completion::BulkGroup), ["tma_reduce", "tma_store"]);
    assert_eq!(by(Completion::Tcgen05Commit), ["tcgen05_cp"]);
    assert_eq!(by(Completion::WgmmaGroup), Vec::<&str>::new());
    // Asynchronous paths read or write shared memory through the async proxy.
    for v in CopyVariant::ALL {
        let touches_shared = v.reads() == Mem::Shared || v.writes() == Mem::Shared;
        let asynchronous = v.completion() != Completion::InOrder;
        assert_eq!(
            asynchronous,
            touches_shared && v.proxy() == Proxy::Async,
            "{v}"
        );
        assert_ne!(v.reads(), v.writes(), "{v}");
    }
    let forced: Vec<_> = CopyVariant::ALL
        .iter()
        .filter_map(|v| v.issuer().map(|i| (v.word(), i)))
        .collect();
    assert_eq!(
        forced,
        [
            ("tma::load", Issuer::Thread),
            ("tma::reduce_*", Issuer::Thread),
            ("tma::store", Issuer::Thread)
        ]
    );
    let mma = |v: MmaVariant| (v.issuer(), v.accumulator(), v.completion(), v.tensor_core());
    assert_eq!(
        mma(MmaVariant::Tcgen05),
        (
            Issuer::Thread,
            Mem::Tmem,
            Completion::Tcgen05Commit,
            TensorCore::Tcgen05
        )
    );
    assert_eq!(
        mma(MmaVariant::Wgmma),
        (
            Issuer::Warpgroup,
            Mem::Reg,
            Completion::WgmmaGroup,
            TensorCore::Wgmma
        )
    );
}
