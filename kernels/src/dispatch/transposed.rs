//! The cost model and the transposed-tile GEMM (`gemm_sm90_t`, `gemm/transposed.rs`, issue
//! #32): where the model ranks it (TN, M in 65…256 and not a multiple of 128), against its
//! first measurement (H100, stop 56), and where it refuses to (everywhere else, so the choice
//! there is the one measured before it existed).

use super::tune::Cache;
use super::*;
use crate::catalogue;
use crate::gemm::request::{GemmRequest, GemmTypes};
use crate::gemm::untimed::{UNTIMED_REASON, WithUntimed, is_untimed};
use tirx::problem::{BLayout, Epilogue};

/// The model's `kernel/config` on an H100 for a bf16 request.
fn choice(layout: BLayout, shape: (usize, usize, usize)) -> String {
    let req = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
    choose(&req, &catalogue::all(), &Device::h100(), &Cache::default())
        .unwrap_or_else(|e| panic!("{shape:?}: {e}"))
        .label()
}

/// The model's verdicts for `gemm_sm90_t`'s artifacts at one request: how many it ranks.
fn ranked_transposed(layout: BLayout, shape: (usize, usize, usize)) -> usize {
    let req = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
    let t = catalogue::find("gemm_sm90_t").expect("shipped");
    judge(&req, &[t], &Device::h100())
        .iter()
        .filter(|v| v.outcome.is_ok())
        .count()
}

/// The model's choice at the shapes of issue #32 against the H100 measurement of stop 56
/// (`docs/perf/h100-2026-12-07-stop56.md`, the first GPU run of `gemm_sm90_t`; TFLOP/s, the
/// fastest config first):
/// - 160×4096×4096: `t/w2n96` 244, `t/n96` 219; the model takes `t/w2n96` (until the re-read
///   term, `gemm/reread.rs`, it took `t/n96`, 0.898: nothing charged `n96`'s 128 CTAs for
///   their boxes through the L2, a third of them zero fill);
/// - 192×4096×4096: `t/n96` 300, `t/w2n96` 294; the model takes `t/n96`;
/// - 224×4096×4096: `ws/n64` 293, `t/n128` 284; the model takes `t/n128` (0.969: one wave of
///   128 CTAs, which a grid that is not persistent runs as a persistent one would);
/// - 96×8192×8192: `t/n96` 258, `t/w2n96` 249; the model takes `t/n96`;
/// - 80×8192×4096: `t/n96` 189, `t/w2n96` 183; the model takes `t/w2n96` (0.969);
/// - 192×8192×4096: `t/w2n96` 375, `tma_epi/n128` 337, `ws/n128` 325; and 192×8192×8192:
///   `t/w2n96` 408, `cluster/n192` 378, `tma_epi/n128` 371. The model takes `t/w2n96`, one
///   wave of 128 two-warpgroup CTAs, where `t/n96`'s 256 one-warpgroup CTAs make two waves
///   (until stop 56 it charged the one wave ×1.25 for a grid that is not persistent and took
///   `ws/n128` and `tma_epi/n128`, 0.868 and 0.908).
///
/// 150×4096×4096 is not measured: `t/w2n96`, as at M = 160.
#[test]
fn the_model_takes_the_transposed_tile_where_m_is_not_a_multiple_of_128() {
    let cases = [
        ((160, 4096, 4096), "gemm_sm90_t/w2n96"),
        ((192, 4096, 4096), "gemm_sm90_t/n96"),
        ((224, 4096, 4096), "gemm_sm90_t/n128"),
        ((150, 4096, 4096), "gemm_sm90_t/w2n96"),
        ((96, 8192, 8192), "gemm_sm90_t/n96"),
        ((80, 8192, 4096), "gemm_sm90_t/w2n96"),
        ((192, 8192, 4096), "gemm_sm90_t/w2n96"),
        ((192, 8192, 8192), "gemm_sm90_t/w2n96"),
    ];
    let got: Vec<(_, String)> = cases
        .iter()
        .map(|(s, _)| (*s, choice(BLayout::Tn, *s)))
        .collect();
    let want: Vec<(_, String)> = cases.iter().map(|(s, c)| (*s, c.to_string())).collect();
    assert_eq!(got, want);
}

/// Outside its range the transposed tile is not ranked at all: M a multiple of 128, M ≤ 64,
/// M > 256, in TN and NN alike; inside it its NN configs are ranked for NN requests (stop 56:
/// `nn_n96` 0.939 of cuBLASLt at 192×4096×4096, where the other NN configs reached 0.737).
#[test]
fn the_transposed_tile_is_unranked_outside_its_range() {
    for shape in [
        (128, 4096, 4096),
        (256, 4096, 4096),
        (64, 4096, 4096),
        (8, 4096, 4096),
        (300, 4096, 4096),
        (4096, 4096, 4096),
    ] {
        assert_eq!(ranked_transposed(BLayout::Tn, shape), 0, "{shape:?}");
        assert_eq!(ranked_transposed(BLayout::Nn, shape), 0, "NN {shape:?}");
    }
    assert!(ranked_transposed(BLayout::Tn, (192, 4096, 4096)) >= 4);
    assert!(ranked_transposed(BLayout::Nn, (192, 4096, 4096)) >= 3);
}

/// The re-read term's predictions at shapes no run has measured (`gemm/reread.rs`' header, for
/// the GPU to confirm; TN and NN, H100), pinned so that a change to the model says which it
/// moves.
#[test]
fn the_reread_terms_predictions_for_unmeasured_shapes() {
    let cases = [
        ((176, 4096, 4096), "gemm_sm90_t/n96", "gemm_sm90_t/nn_n96"),
        (
            (208, 4096, 4096),
            "gemm_sm90_tma_epi/n128",
            "gemm_sm90_splitk/nn_m128n64",
        ),
        ((240, 4096, 4096), "gemm_sm90_t/n128", "gemm_sm90_t/nn_n128"),
        (
            (160, 8192, 4096),
            "gemm_sm90_t/w2n96",
            "gemm_sm90_t/nn_w2n96",
        ),
        (
            (144, 4096, 4096),
            "gemm_sm90_t/w2n96",
            "gemm_sm90_t/nn_w2n96",
        ),
    ];
    for (shape, tn, nn) in cases {
        assert_eq!(choice(BLayout::Tn, shape), tn, "TN {shape:?}");
        assert_eq!(choice(BLayout::Nn, shape), nn, "NN {shape:?}");
    }
}

/// The model's `kernel/config` on an H100 for a bf16 request with the untimed guard lifted
/// (`gemm/untimed.rs`: what it would choose once every config is timed).
fn choice_with_untimed(layout: BLayout, shape: (usize, usize, usize)) -> String {
    let req = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
    choose(
        &WithUntimed(&req),
        &catalogue::all(),
        &Device::h100(),
        &Cache::default(),
    )
    .unwrap_or_else(|e| panic!("{shape:?}: {e}"))
    .label()
}

/// The tiles that split M into exactly two row blocks (`n80`, `n112`, `c2n80`, `c2n112`:
/// issue #32's hypothesis, `gemm/transposed.rs`) are not timed yet (`UNTIMED = 1`): the model
/// ranks none of them, and its choices stay those of the measured configs. With the guard
/// lifted it would choose them where they make two full row blocks — the prediction for their
/// first GPU run (H100, the model's time in units of `unit_seconds(4096)` = 0.199 µs):
/// - 160×4096×4096: `t/n80` 98.7 (19.6 µs: 128 CTAs, no row of fill), `t/c2n80` 103.3, then
///   today's choice `t/w2n96` 133.0 (26.4 µs; measured 21.9 at stop 56);
/// - 224×4096×4096: `t/n112` 115.6 (23.0 µs), `t/c2n112` 121.2, then today's `t/n128` 154.5
///   (30.7 µs; measured 26.6 at stop 56);
/// - 240×4096×4096: `t/n128` 139.2, unchanged (112 would make three row blocks);
/// - 176×6144×4096: `t/w2n96` 133.0, unchanged (80 and 112 make three and two blocks with
///   fill, at 192 CTAs and more);
/// - 150, 144 and 208×4096×4096 and 80×8192×4096 move too (`n80`, `n80`, `n112`, `n80`): the
///   fill of a tile of 80 or 112 rows there is less than the measured tiles'.
#[test]
fn the_untimed_two_block_tiles_are_unranked_but_would_be_chosen() {
    let cases = [
        ((160, 4096, 4096), "gemm_sm90_t/w2n96", "gemm_sm90_t/n80"),
        ((224, 4096, 4096), "gemm_sm90_t/n128", "gemm_sm90_t/n112"),
        ((240, 4096, 4096), "gemm_sm90_t/n128", "gemm_sm90_t/n128"),
        ((176, 6144, 4096), "gemm_sm90_t/w2n96", "gemm_sm90_t/w2n96"),
        ((150, 4096, 4096), "gemm_sm90_t/w2n96", "gemm_sm90_t/n80"),
        ((144, 4096, 4096), "gemm_sm90_t/w2n96", "gemm_sm90_t/n80"),
        (
            (208, 4096, 4096),
            "gemm_sm90_tma_epi/n128",
            "gemm_sm90_t/n112",
        ),
        ((80, 8192, 4096), "gemm_sm90_t/w2n96", "gemm_sm90_t/n80"),
        ((192, 4096, 4096), "gemm_sm90_t/n96", "gemm_sm90_t/n96"),
    ];
    for (shape, now, lifted) in cases {
        assert_eq!(choice(BLayout::Tn, shape), now, "{shape:?}");
        assert_eq!(
            choice_with_untimed(BLayout::Tn, shape),
            lifted,
            "lifted {shape:?}"
        );
    }
    // Ranked by no request, in either type: the reason is the guard's, at a shape where they
    // would win.
    let t = catalogue::find("gemm_sm90_t").expect("shipped");
    let f16 = GemmTypes {
        input: tirx::abi::ElemType::F16,
        output: tirx::abi::ElemType::F16,
    };
    for types in [GemmTypes::BF16, f16] {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, types, (160, 4096, 4096));
        let untimed: Vec<_> = judge(&req, &[t], &Device::h100())
            .into_iter()
            .filter(|v| is_untimed(v.artifact) && req.solves(v.artifact).is_ok())
            .collect();
        assert_eq!(untimed.len(), 4, "n80, n112, c2n80, c2n112 in {types}");
        for v in untimed {
            match &v.outcome {
                Err(Reject::Unranked(why)) => assert_eq!(why, UNTIMED_REASON),
                other => panic!("{}: {other:?}", v.artifact.config),
            }
        }
    }
}
