//! The emulator's timeline recorder (`tirx_sim::exec` `timeline.rs`, `tirx sim --timeline`) on
//! the shipped pipelined Hopper GEMM: the recorded events are well formed (per warp, spans in
//! order and disjoint; every operation completes no earlier than it was issued), the producer
//! warp's TMA loads are in flight while the consumer warpgroup's wgmma groups are (the pipeline
//! overlaps the engines), recording changes nothing about the run, and the SVG has the lanes.

use tirx_kernels::timeline;
use tirx_sim::Policy;
use tirx_sim::exec::{OpSpan, Timeline, Unit, WaitKind, WarpState};

use super::sim_gemm::{sm90, typed_gemm_with};

/// `gemm_sm90` on 130×136×320 (five K tiles on four stages) with the recorder on or off.
fn gemm_sm90(seed: u64, record: bool) -> tirx_sim::Stats {
    let art = sm90("gemm_sm90", "default");
    let policy = Policy {
        timeline: record,
        ..Policy::default()
    };
    typed_gemm_with(art, art.ptx, (130, 136, 320), seed, &policy)
        .unwrap_or_else(|e| panic!("gemm_sm90 seed {seed}: {e}"))
}

/// Per warp: spans inside the run, in time order, disjoint. Every operation completed, no
/// earlier than its issue.
fn assert_well_formed(tl: &Timeline) {
    for cta in 0..tl.ctas.len() as u32 {
        for w in 0..tl.warps_per_cta {
            let mine: Vec<_> = tl
                .warps
                .iter()
                .filter(|s| s.cta == cta && s.warp == w)
                .collect();
            for s in &mine {
                assert!(s.start < s.end && s.end <= tl.end, "{s:?}");
            }
            for p in mine.windows(2) {
                assert!(
                    p[0].end <= p[1].start,
                    "warp {w}: {:?} overlaps {:?}",
                    p[0],
                    p[1]
                );
            }
        }
    }
    for op in &tl.ops {
        let done = op
            .complete
            .unwrap_or_else(|| panic!("{op:?} never completed"));
        assert!(done >= op.issue && done <= tl.end, "{op:?}");
    }
}

/// Steps at which both `a` and `b` are in flight.
fn overlap(a: &OpSpan, b: &OpSpan) -> u64 {
    let (ea, eb) = (a.complete.unwrap(), b.complete.unwrap());
    ea.min(eb).saturating_sub(a.issue.max(b.issue))
}

#[test]
fn gemm_sm90_timeline_shows_tma_loads_overlapping_the_tensor_core() {
    for seed in [1, 2] {
        let mut stats = gemm_sm90(seed, true);
        let tl = *stats.timeline.take().expect("recorded");
        assert_eq!(tl.cluster, [0, 0, 0]);
        assert_eq!(tl.dropped, 0);
        assert_well_formed(&tl);
        let of = |u: Unit| -> Vec<&OpSpan> { tl.ops.iter().filter(|o| o.unit == u).collect() };
        let (loads, mmas) = (of(Unit::TmaLoad), of(Unit::Wgmma));
        // Five K tiles of A and B, and one wgmma group per K tile of the one consumer
        // warpgroup, kept by its first warp.
        assert_eq!(loads.len(), 10, "seed {seed}");
        assert_eq!(mmas.len(), 5, "seed {seed}");
        let producer = loads[0].warp;
        assert!(
            loads.iter().all(|o| o.warp == producer),
            "one producer warp"
        );
        assert!(
            mmas.iter()
                .all(|o| o.warp.is_multiple_of(4) && o.warp / 4 != producer / 4)
        );
        let both: u64 = loads
            .iter()
            .flat_map(|l| mmas.iter().map(move |m| overlap(l, m)))
            .max()
            .unwrap_or(0);
        assert!(
            both > 0,
            "seed {seed}: no TMA load in flight during a wgmma group"
        );
        // The consumer waits for stages on the mbarrier at some time.
        let consumer = mmas[0].warp;
        assert!(
            tl.warps
                .iter()
                .any(|s| s.warp == consumer && s.state == WarpState::Blocked(WaitKind::Mbarrier))
        );
        // The recorder draws no random numbers: the same run without it is the same run.
        let plain = gemm_sm90(seed, false);
        assert!(plain.timeline.is_none());
        assert_eq!(plain.thread_instructions, stats.thread_instructions);
        assert_eq!(plain.async_ops, stats.async_ops);
    }
}

#[test]
fn the_timeline_svg_has_a_lane_per_warp_and_per_engine() {
    let mut stats = gemm_sm90(3, true);
    let tl = stats.timeline.take().expect("recorded");
    let svg = timeline::svg(&tl, "gemm_sm90 default sm_90a 130x136x320 seed 3");
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("gemm_sm90 default sm_90a 130x136x320 seed 3"));
    let lanes: Vec<&str> = svg
        .split("data-lane=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    let mut want: Vec<String> = (0..8).map(timeline::warp_label).collect();
    want.extend(["TMA".to_owned(), "tensor core".to_owned()]);
    assert_eq!(lanes, want);
    for legend in [
        "warp busy",
        "blocked: mbarrier.try_wait",
        "TMA load",
        "wgmma",
    ] {
        assert!(
            svg.contains(&format!(">{legend}</text>")),
            "legend {legend}"
        );
    }
    assert!(
        svg.contains("url(#wait-Mbarrier)"),
        "blocked spans are hatched"
    );
    let json: serde_json::Value =
        serde_json::from_str(&timeline::json(&tl, "t")).expect("valid JSON");
    assert_eq!(
        json["timeline"]["ops"].as_array().map(Vec::len),
        Some(tl.ops.len())
    );
    assert_eq!(json["timeline"]["warps"][0]["state"], "busy");
}
