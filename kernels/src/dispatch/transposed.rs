//! The cost model and the transposed-tile GEMM (`gemm_sm90_t`, `gemm/transposed.rs`, issue
//! #32): where the model ranks it (TN, M in 65…256 and not a multiple of 128), against its
//! first measurement (H100, stop 56), and where it refuses to (everywhere else, so the choice
//! there is the one measured before it existed).

use super::tune::Cache;
use super::*;
use crate::catalogue;
use crate::gemm::request::{GemmRequest, GemmTypes};
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
