//! The timeline recorder (`timeline.rs`) on the hand-written TMA copy kernel of `tma.rs`: a
//! load's span ends when its mbarrier completes, the warps waiting on that barrier are blocked
//! until then, the store's thread waits in `cp.async.bulk.wait_group` until the store
//! completes, and a run without the recorder records nothing.

use super::super::device::Device;
use super::tma::copy_kernel;
use super::*;

/// The copy kernel on one CTA of 4 warps with the recorder on; async ops complete only when
/// no warp can run (so every warp reaches the barrier first), no spurious `try_wait` failures.
fn recorded(seed: u64) -> (Stats, Timeline) {
    let mut dev = Device::new();
    let addr = dev.alloc(8 * 64 * 2);
    let map = TensorMapDesc {
        elem: TmaElem::Bf16,
        global_address: addr,
        dims: vec![64, 8],
        strides_bytes: vec![128],
        box_dims: vec![64, 8],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::B128,
        oob_fill: OobFill::Zero,
    };
    let params = [
        ParamValue::TensorMap(map.clone()),
        ParamValue::TensorMap(map),
    ];
    let policy = Policy {
        complete_one_in: u64::MAX,
        spurious_wait_one_in: 0,
        timeline: true,
        ..Policy::default()
    };
    let program = Program::new(&copy_kernel(true), "k").unwrap();
    let mut stats = run_program(
        &program,
        &one_cta(128, 3072),
        &params,
        &mut dev,
        seed,
        &policy,
    )
    .unwrap();
    let tl = *stats.timeline.take().expect("the recorder was on");
    (stats, tl)
}

/// Per warp, spans in time order, not overlapping, inside the run.
fn assert_spans_well_formed(tl: &Timeline) {
    for w in 0..tl.warps_per_cta {
        let mine: Vec<&WarpSpan> = tl.warps.iter().filter(|s| s.warp == w).collect();
        assert!(!mine.is_empty(), "warp {w} has no spans");
        for s in &mine {
            assert!(s.start < s.end && s.end <= tl.end, "{s:?}");
        }
        for p in mine.windows(2) {
            assert!(p[0].end <= p[1].start, "overlap {:?} {:?}", p[0], p[1]);
            assert!(
                p[0].end < p[1].start || p[0].state != p[1].state,
                "unmerged {p:?}"
            );
        }
    }
}

#[test]
fn a_tma_load_ends_when_its_mbarrier_completes_and_waiters_block_until_then() {
    for seed in 0..6 {
        let (stats, tl) = recorded(seed);
        assert_eq!(tl.warps_per_cta, 4);
        assert_eq!(tl.ctas, vec![[0, 0, 0]]);
        assert_eq!(
            tl.end, stats.warp_instructions,
            "one cluster: its steps are the run's"
        );
        assert_eq!(tl.dropped, 0);
        assert_spans_well_formed(&tl);
        let units: Vec<Unit> = tl.ops.iter().map(|o| o.unit).collect();
        assert_eq!(units, [Unit::TmaLoad, Unit::TmaStore], "seed {seed}");
        let (load, store) = (tl.ops[0], tl.ops[1]);
        for op in [load, store] {
            assert_eq!((op.cta, op.warp), (0, 0), "thread 0 issues both");
            assert!(op.complete.is_some_and(|c| c >= op.issue), "{op:?}");
        }
        let loaded = load.complete.unwrap();
        assert!(
            store.issue >= loaded,
            "the store follows the wait on the load"
        );
        // Nothing completes while a warp can run, so all four warps are blocked on the
        // mbarrier when the load completes; at most one of them (the last to step) blocked in
        // that same step, leaving no span. Every such span covers the completion: a phase
        // cannot be waited on after it completed, and a waiter wakes only once it has.
        let mut blocked = 0;
        for w in 0..4 {
            let waits: Vec<&WarpSpan> = tl
                .warps
                .iter()
                .filter(|s| s.warp == w && s.state == WarpState::Blocked(WaitKind::Mbarrier))
                .collect();
            blocked += u32::from(!waits.is_empty());
            for s in waits {
                assert!(
                    s.start <= loaded && loaded <= s.end,
                    "seed {seed}: {s:?} vs {loaded}"
                );
            }
        }
        assert!(
            blocked >= 3,
            "seed {seed}: {blocked} warps blocked on the mbarrier"
        );
        // Thread 0 waits for its store in wait_group until the store completes.
        let stored = store.complete.unwrap();
        let bulk = tl
            .warps
            .iter()
            .find(|s| s.warp == 0 && s.state == WarpState::Blocked(WaitKind::BulkWaitGroup))
            .expect("warp 0 blocks in cp.async.bulk.wait_group");
        assert!(
            bulk.start <= stored && stored <= bulk.end,
            "{bulk:?} vs {stored}"
        );
        // Warps 1..3 exit after the load; warp 0 is the last one busy.
        let last_busy = |w: u32| {
            tl.warps
                .iter()
                .filter(|s| s.warp == w && s.state == WarpState::Busy)
                .map(|s| s.end)
                .max()
                .unwrap()
        };
        assert!((1..4).all(|w| last_busy(w) > loaded));
        assert_eq!(last_busy(0), tl.end);
    }
}

#[test]
fn the_recorder_is_off_by_default() {
    let mut dev = Device::new();
    let m = module(
        OUT,
        &format!("{PROLOGUE}\tst.global.u32 [%rd1], %r0;\n\tret;\n"),
    );
    let out = dev.alloc(64 * 4);
    let stats = run(
        &m,
        "k",
        &one_cta(64, 0),
        &[ParamValue::U64(out)],
        &mut dev,
        3,
    )
    .unwrap();
    assert!(stats.timeline.is_none());
    assert!(!Policy::default().timeline);
}
