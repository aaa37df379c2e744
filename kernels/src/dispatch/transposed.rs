//! The cost model and the transposed-tile GEMM (`gemm_sm90_t`, `gemm/transposed.rs`, issue
//! #32): where the model ranks it (TN, M in 65…256 and not a multiple of 128), against its
//! first measurement (H100, stop 56) and that of its two-row-block tiles (stop 59), where it
//! refuses to (everywhere else, so the choice there is the one measured before it existed),
//! and its NN choices against the first run of the NN two-row-block tiles (stop 59, call 3).

use super::tune::Cache;
use super::*;
use crate::catalogue;
use crate::gemm::request::{GemmRequest, GemmTypes};
use crate::gemm::untimed::{
    UNTIMED_REASON, WithUntimed, catalogue_with_untimed_nn_tiles, is_untimed,
};
use tirx::problem::{BLayout, Epilogue};
use tirx::{Kernel, KernelArtifact};

/// The model's `kernel/config` on an H100 for a bf16 request.
fn choice(layout: BLayout, shape: (usize, usize, usize)) -> String {
    let req = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
    choose(&req, &catalogue::all(), &Device::h100(), &Cache::default())
        .unwrap_or_else(|e| panic!("{shape:?}: {e}"))
        .label()
}

/// Asserts the model's choice at each shape, all shapes in one comparison (so a failure lists
/// every choice that moved).
fn assert_choices(layout: BLayout, cases: &[((usize, usize, usize), &str)]) {
    let got: Vec<_> = cases
        .iter()
        .map(|(s, _)| (*s, choice(layout, *s)))
        .collect();
    let want: Vec<_> = cases.iter().map(|(s, c)| (*s, c.to_string())).collect();
    assert_eq!(got, want, "{layout:?}");
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
/// fastest config first), and since stop 59 (`docs/perf/h100-2026-12-07-stop59.md`) with the
/// two-row-block tiles `n80`/`n112` ranked:
/// - 160×4096×4096: `t/w2n96` 244, `t/n96` 219 at stop 56; the model takes `t/n80`, the
///   fastest at stop 59 (20.2 µs against `t/w2n96`'s 22.0; the next test);
/// - 192×4096×4096: `t/n96` 300, `t/w2n96` 294; the model takes `t/n96`;
/// - 224×4096×4096: `ws/n64` 293, `t/n128` 284 at stop 56; the model takes `t/n112`, the
///   fastest at stop 59 (21.0 µs against `ws/n64`'s 25.4);
/// - 96×8192×8192: `t/n96` 258, `t/w2n96` 249; the model takes `t/n96`;
/// - 80×8192×4096: `t/n96` 189, `t/w2n96` 183 at stop 56; the model takes `t/n80` (stop 59:
///   28.2 µs against `t/n96`'s 28.1, 0.995);
/// - 192×8192×4096: `t/w2n96` 375, `tma_epi/n128` 337, `ws/n128` 325; and 192×8192×8192:
///   `t/w2n96` 408, `cluster/n192` 378, `tma_epi/n128` 371. The model takes `t/w2n96`, one
///   wave of 128 two-warpgroup CTAs, where `t/n96`'s 256 one-warpgroup CTAs make two waves
///   (until stop 56 it charged the one wave ×1.25 for a grid that is not persistent and took
///   `ws/n128` and `tma_epi/n128`, 0.868 and 0.908).
///
/// 150×4096×4096 is not measured: `t/m2n80`, as at M = 160. Since stop 61 ranks the
/// B-sharing clusters (`m2*`, timed there: the fastest config at every M = 144…240 ×
/// 4096×4096), the 4096×4096 shapes take them: 160 `t/m2n80` (20.0 µs against `t/n80`'s
/// 20.7), 192 `t/m2n96` (20.1 against 21.1), 224 `t/m2n112` (21.2 against 21.6).
#[test]
fn the_model_takes_the_transposed_tile_where_m_is_not_a_multiple_of_128() {
    let cases = [
        ((160, 4096, 4096), "gemm_sm90_t/m2n80"),
        ((192, 4096, 4096), "gemm_sm90_t/m2n96"),
        ((224, 4096, 4096), "gemm_sm90_t/m2n112"),
        ((150, 4096, 4096), "gemm_sm90_t/m2n80"),
        ((96, 8192, 8192), "gemm_sm90_t/n96"),
        ((80, 8192, 4096), "gemm_sm90_t/n80"),
        ((192, 8192, 4096), "gemm_sm90_t/w2n96"),
        ((192, 8192, 8192), "gemm_sm90_t/w2n96"),
    ];
    assert_choices(BLayout::Tn, &cases);
}

/// The model's choice at the 9 TN shapes of stop 59 (H100, 2026-12-07,
/// `docs/perf/h100-2026-12-07-stop59.md`, `call2/tn_all.json`: the first run of the
/// two-row-block tiles `n80`/`n112`; median µs, the fastest first):
/// - 144×4096×4096: `t/n80` 22.0, `t/w2n96` 22.5, `t/n96` 26.4 (cuBLASLt 18.3); the model
///   takes `t/n80` (1.000);
/// - 160×4096×4096: `t/n80` 20.2, `t/w2n96` 22.0, `t/n96` 24.3 (cuBLASLt 18.6): `t/n80`
///   (1.000), as predicted before it was timed (19.6 µs);
/// - 176×4096×4096: `t/w2n96` 22.1, `t/n96` 22.4 (cuBLASLt 19.0): `t/n96` (0.984);
/// - 192×4096×4096: `t/n96` 20.7, `t/w2n96` 22.0, `t/n112` 25.6: `t/n96` (1.000);
/// - 208×4096×4096: `t/n112` 22.6, `t/w2n128` 26.1, `ws/n128` 26.9, `t/n128` 27.6,
///   `tma_epi/n128` 29.4: `t/n112` (1.000; with `n112` untimed it took `tma_epi/n128`, 0.770);
/// - 224×4096×4096: `t/n112` 21.0, `ws/n64` 25.4, `t/n128` 26.5 (cuBLASLt 20.6): `t/n112`
///   (1.000), predicted 23.0 µs;
/// - 240×4096×4096: `ws/n64` 21.2, `t/n128` 22.8 (cuBLASLt 21.0): `t/n128` then (0.933);
/// - 176×6144×4096: `t/w2n96` 30.3, `tma_epi/n128` 33.9: `t/w2n96` (1.000);
/// - 80×8192×4096: `t/n96` 28.1, `t/n80` 28.2, `t/w2n96` 29.3, `t/n112` 29.3: `t/n80` (0.995).
///
/// Since stop 60 (H100, `docs/perf/h100-2026-12-07-stop60.md`, call 1: the first run of the
/// odd-block tiles `n72`/`n88`/`n104`/`n120`, added untimed, with the model's choice predicted
/// before it ran, each its M's two exact row blocks), at the four shapes it timed:
/// - 144×4096×4096: `t/n72` 20.2, `t/n80` 22.0, `t/w2n96` 22.4 (cuBLASLt 18.4): `t/n72` (1.000);
/// - 176×4096×4096: `t/n88` 20.9, `t/w2n96` 22.2, `t/n96` 22.4 (cuBLASLt 19.1): `t/n88` (1.000);
/// - 208×4096×4096: `t/n104` 21.2, `t/n112` 22.6 (cuBLASLt 20.3): `t/n104` (1.000);
/// - 240×4096×4096: `ws/n64` 21.6, `t/n120` 21.7, `t/n128` 22.9 (cuBLASLt 21.4): `t/n120`
///   (0.995; the known miss of `dispatch::measured` at stop 59, mended).
///
/// Since stop 61 (H100, `docs/perf/h100-2026-12-07-stop61.md`, the first run of the
/// B-sharing clusters `m2n72`…`m2n128`, predicted before it ran by the previous form of the
/// next test) the cluster of the same two row blocks is the fastest config at each M =
/// 144…240 × 4096×4096 and the model takes it (`dispatch::measured`'s stop-61 test).
#[test]
fn the_model_takes_the_two_row_block_tiles_where_they_measured_fastest() {
    let cases = [
        ((144, 4096, 4096), "gemm_sm90_t/m2n72"),
        ((160, 4096, 4096), "gemm_sm90_t/m2n80"),
        ((176, 4096, 4096), "gemm_sm90_t/m2n88"),
        ((192, 4096, 4096), "gemm_sm90_t/m2n96"),
        ((208, 4096, 4096), "gemm_sm90_t/m2n104"),
        ((224, 4096, 4096), "gemm_sm90_t/m2n112"),
        ((240, 4096, 4096), "gemm_sm90_t/m2n120"),
        ((176, 6144, 4096), "gemm_sm90_t/w2n96"),
        ((80, 8192, 4096), "gemm_sm90_t/n80"),
    ];
    assert_choices(BLayout::Tn, &cases);
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

/// The model's predictions at shapes no run has measured with its choice (TN and NN, H100),
/// pinned so that a change to the model says which it moves: TN 160×8192×4096 and
/// 150×4096×4096; NN 160×8192×4096 (the re-read term's, `gemm/reread.rs`). (NN 176 and
/// 240×4096×4096 left the list with stop 60's call 1, which timed their new choices
/// `nn_n88` and `nn_n120`: the previous test.) (TN 112×4096×8192 and 72×14336×4096 and NN 144×4096×4096 left the list
/// with stop 59's call 3, which timed the choices there: `dispatch::measured`, and for NN
/// `the_model_takes_the_nn_two_row_block_tiles_where_they_measured_fastest`; NN 80×8192×4096,
/// 112×4096×8192 and 72×14336×4096 with its call 4: `nn_n80` the fastest, `nn_n112` 0.975
/// and `nn_n80` 0.964 of the fastest, `dispatch::measured`'s `STOP59_NN4`.)
#[test]
fn the_models_predictions_for_unmeasured_choices() {
    let tn = [
        ((160, 8192, 4096), "gemm_sm90_t/w2n96"),
        ((150, 4096, 4096), "gemm_sm90_t/m2n80"),
    ];
    for (shape, want) in tn {
        assert_eq!(choice(BLayout::Tn, shape), want, "TN {shape:?}");
    }
    let nn = [((160, 8192, 4096), "gemm_sm90_t/nn_w2n96")];
    for (shape, want) in nn {
        assert_eq!(choice(BLayout::Nn, shape), want, "NN {shape:?}");
    }
}

/// The model's `kernel/config` on an H100 for a bf16 NN request among `kernels`, its untimed
/// guard lifted where `lifted` (`gemm/untimed.rs`).
fn nn_choice_among(
    kernels: &[&'static Kernel],
    lifted: bool,
    shape: (usize, usize, usize),
) -> String {
    let req = GemmRequest::contiguous(BLayout::Nn, Epilogue::Plain, GemmTypes::BF16, shape);
    let problem: &dyn ProblemDef = if lifted { &WithUntimed(&req) } else { &req };
    choose(problem, kernels, &Device::h100(), &Cache::default())
        .unwrap_or_else(|e| panic!("{shape:?}: {e}"))
        .label()
}

/// The model's NN choice at the five shapes of stop 59's call 3 (H100, 2026-12-07,
/// `docs/perf/h100-2026-12-07-stop59.md`, `call3/nn_all.json`: the first run of the NN
/// two-row-block tiles `nn_n80`/`nn_n112`, added untimed; median µs, the fastest first) is the
/// fastest config at each, as the model predicted with its untimed guard lifted:
/// - 144×4096×4096: `t/nn_n80` 23.0, `t/nn_w2n96` 23.3, `t/nn_n96` 25.9 (cuBLASLt 19.3);
/// - 160×4096×4096: `t/nn_n80` 21.2, `t/nn_w2n96` 22.2, `t/nn_n96` 24.0 (cuBLASLt 19.4);
/// - 192×4096×4096: `t/nn_n96` 21.4, `t/nn_w2n96` 22.2, `t/nn_n112` 25.0 (cuBLASLt 20.3);
/// - 208×4096×4096: `t/nn_n112` 22.7, `t/nn_n128` 27.4, `ws/nn_n64` 27.6 (cuBLASLt 20.7;
///   with `nn_n112` untimed the host took `splitk/nn_m128n64`, S = 2, 32.2: 0.706);
/// - 224×4096×4096: `t/nn_n112` 22.4, `ws/nn_n64` 24.9, `t/nn_n128` 25.9 (cuBLASLt 21.2).
///
/// Since stop 60's call 1 (the first run of `nn_n72`…`nn_n120`, as predicted with the guard
/// lifted): 144×4096×4096 `t/nn_n72` 20.0, `t/nn_n80` 21.2 (cuBLASLt 18.9): `nn_n72` (1.000);
/// 176×4096×4096 `t/nn_n88` 20.5, `t/nn_w2n96` 21.4 (cuBLASLt 19.6): `nn_n88` (1.000);
/// 208×4096×4096 `t/nn_n104` 20.9, `t/nn_n112` 21.9 (cuBLASLt 20.7): `nn_n104` (1.000);
/// 240×4096×4096 `ws/nn_n64` 20.9, `t/nn_n120` 21.2, `t/nn_n128` 22.4 (cuBLASLt 21.7):
/// `nn_n120` (0.986; `nn_n128` had been the prediction there, 0.934).
#[test]
fn the_model_takes_the_nn_two_row_block_tiles_where_they_measured_fastest() {
    let cases = [
        ((144, 4096, 4096), "gemm_sm90_t/nn_n72"),
        ((160, 4096, 4096), "gemm_sm90_t/nn_n80"),
        ((176, 4096, 4096), "gemm_sm90_t/nn_n88"),
        ((192, 4096, 4096), "gemm_sm90_t/nn_n96"),
        ((208, 4096, 4096), "gemm_sm90_t/nn_n104"),
        ((224, 4096, 4096), "gemm_sm90_t/nn_n112"),
        ((240, 4096, 4096), "gemm_sm90_t/nn_n120"),
    ];
    assert_choices(BLayout::Nn, &cases);
}

/// The untimed guard on the configs it last held back: with `nn_n80`/`nn_n112` marked
/// untimed (`UNTIMED = 1`, as they were until stop 59's call 3; no shipped config carries it
/// now), the model ranks neither, in either type, and its NN choices are those it made then
/// (`t/nn_w2n96` at 160, `splitk/nn_m128n64` at 208, `t/nn_n128` at 224×4096×4096); with the
/// guard lifted they are the shipped catalogue's with its guard lifted (the previous test's
/// choices, except where the untimed odd-block tiles, the next test, would take over).
#[test]
fn an_untimed_config_is_unranked_but_the_lifted_guard_ranks_it() {
    let marked = catalogue_with_untimed_nn_tiles();
    let all = catalogue::all();
    let cases = [
        ((160, 4096, 4096), "gemm_sm90_t/nn_w2n96"),
        ((208, 4096, 4096), "gemm_sm90_splitk/nn_m128n64"),
        ((224, 4096, 4096), "gemm_sm90_t/nn_n128"),
        ((192, 4096, 4096), "gemm_sm90_t/nn_n96"),
    ];
    for (shape, held_back) in cases {
        assert_eq!(
            nn_choice_among(&marked, false, shape),
            held_back,
            "{shape:?}"
        );
        assert_eq!(
            nn_choice_among(&marked, true, shape),
            nn_choice_among(&all, true, shape),
            "lifted {shape:?}"
        );
    }
    let t = marked
        .iter()
        .copied()
        .find(|k| k.name == "gemm_sm90_t")
        .expect("shipped");
    let f16 = GemmTypes {
        input: tirx::abi::ElemType::F16,
        output: tirx::abi::ElemType::F16,
    };
    for types in [GemmTypes::BF16, f16] {
        let req = GemmRequest::contiguous(BLayout::Nn, Epilogue::Plain, types, (160, 4096, 4096));
        let untimed: Vec<_> = judge(&req, &[t], &Device::h100())
            .into_iter()
            .filter(|v| {
                matches!(v.artifact.int("BN"), Some(80 | 112)) && req.solves(v.artifact).is_ok()
            })
            .collect();
        assert_eq!(untimed.len(), 2, "nn_n80, nn_n112 in {types}");
        for v in untimed {
            match &v.outcome {
                Err(Reject::Unranked(why)) => assert_eq!(why, UNTIMED_REASON),
                other => panic!("{}: {other:?}", v.artifact.config),
            }
        }
    }
}

/// The model's `kernel/config` on an H100 for a bf16 request with the untimed guard lifted
/// (`gemm/untimed.rs`: what it would choose once every config is timed).
fn choice_with_untimed(layout: BLayout, shape: (usize, usize, usize)) -> String {
    choice_with_untimed_among(layout, shape, &catalogue::all())
}

/// [`choice_with_untimed`] among `kernels`.
fn choice_with_untimed_among(
    layout: BLayout,
    shape: (usize, usize, usize),
    kernels: &[&'static Kernel],
) -> String {
    let req = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
    choose(
        &WithUntimed(&req),
        kernels,
        &Device::h100(),
        &Cache::default(),
    )
    .unwrap_or_else(|e| panic!("{shape:?}: {e}"))
    .label()
}

/// Whether `art` is one of `gemm_sm90_t`'s B-sharing cluster tiles (`CL = 2`, `m2*`).
fn shares_b(art: &KernelArtifact) -> bool {
    art.int("CL") == Some(2)
}

/// The 2×1 clusters that share B (`m2n72`…`m2n128`, TN: the CTAs of a pair compute
/// neighbouring row blocks of D against the same 64 rows of B, each loading half of B's box and
/// multicasting it; `gemm/transposed.rs`), after cuBLAS's
/// `nvjet_sm90_tst_64x96_64x10_2x1_v_bz_TNT`. The model halves B's rows in each CTA's re-read
/// (`reread.rs`' `b_parts`) and takes the cluster's ×0.98 (`request.rs`). Added untimed at stop
/// 60 with this prediction for their first GPU run (H100, bf16, ×4096×4096): `(M, TN, NN)`;
/// stop 61's run (`docs/perf/h100-2026-12-07-stop61.md`) confirmed every TN choice as the
/// fastest config measured (144: `m2n72` 19.7 µs against `n72` 20.5; 176: `m2n88` 20.1 against
/// `n88` 21.0; 192: `m2n96` 20.1 against `n96` 21.1; 208: `m2n104` 20.5 against `n104` 21.2;
/// 240: `m2n120` 21.5 against `n120` 21.8), so they are ranked since (no `UNTIMED`).
#[test]
fn the_b_sharing_clusters_are_ranked_for_tn_and_chosen_as_predicted() {
    let cases = [
        (144, "t/m2n72", "t/nn_n72"),
        (176, "t/m2n88", "t/nn_n88"),
        (192, "t/m2n96", "t/nn_n96"),
        (208, "t/m2n104", "t/nn_n104"),
        (240, "t/m2n120", "t/nn_n120"),
    ];
    let got: Vec<_> = cases
        .iter()
        .map(|&(m, ..)| {
            let shape = (m, 4096, 4096);
            (
                m,
                choice(BLayout::Tn, shape),
                choice_with_untimed(BLayout::Tn, shape),
                choice_with_untimed(BLayout::Nn, shape),
            )
        })
        .collect();
    let want: Vec<_> = cases
        .iter()
        .map(|&(m, a, b)| {
            let l = |s: &str| format!("gemm_sm90_{s}");
            (m, l(a), l(a), l(b))
        })
        .collect();
    assert_eq!(got, want);
    // Ranked by TN requests (none untimed); no NN request is solved by them (TN only, the
    // module docs say why).
    let t = catalogue::find("gemm_sm90_t").expect("shipped");
    for (layout, count) in [(BLayout::Tn, 8), (BLayout::Nn, 0)] {
        let req =
            GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, (176, 4096, 4096));
        let vs: Vec<_> = judge(&req, &[t], &Device::h100())
            .into_iter()
            .filter(|v| shares_b(v.artifact) && req.solves(v.artifact).is_ok())
            .collect();
        assert_eq!(vs.len(), count, "{layout:?}");
        for v in vs {
            assert!(!is_untimed(v.artifact), "{}", v.artifact.config);
            assert!(
                !matches!(&v.outcome, Err(Reject::Unranked(why)) if why == UNTIMED_REASON),
                "{}: {:?}",
                v.artifact.config,
                v.outcome
            );
        }
    }
}
