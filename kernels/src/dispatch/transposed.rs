//! The cost model and the transposed-tile GEMM (`gemm_sm90_t`, `gemm/transposed.rs`, issue
//! #32): where the model ranks it (TN, M in 65…256 and not a multiple of 128) and where it
//! refuses to (everywhere else, so the choice there is the one measured before it existed).

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

/// At the shapes (0.66–0.87 of cuBLASLt with the row-major tiles; cuBLAS runs a
/// transposed 64×96 tile at 192×4096×4096) the model takes the transposed 64×96 tile where
/// it makes one wave without zero-filled rows: two row blocks of 96 at M = 192 (128 CTAs at
/// N = 4096), two of 96 at M = 160 (32 rows of fill, against 96 in a 128-row tile). At
/// M = 224 the 96-row tile needs three row blocks (two waves) and the 128-row one is no
/// wider than `gemm_sm90_ws/n64`'s, which the model keeps (one wave, persistent); at
/// N = 8192 the 64×96 tile makes 256 CTAs (two waves) and the two-warpgroup 128×96 one
/// (128 CTAs) is ranked behind the persistent 128×128 tiles (its ×1.25 for a grid that is not
/// persistent). Only a GPU run can say whether these last three are right.
#[test]
fn the_model_takes_the_transposed_tile_where_m_is_not_a_multiple_of_128() {
    let cases = [
        ((160, 4096, 4096), "gemm_sm90_t/n96"),
        ((192, 4096, 4096), "gemm_sm90_t/n96"),
        ((224, 4096, 4096), "gemm_sm90_ws/n64"),
        ((150, 4096, 4096), "gemm_sm90_t/n96"),
        // One 96-row block, 128 CTAs: measured 0.763 of the fastest with the split plan.
        ((96, 8192, 8192), "gemm_sm90_t/n96"),
        ((192, 8192, 4096), "gemm_sm90_ws/n128"),
        ((192, 8192, 8192), "gemm_sm90_tma_epi/n128"),
    ];
    let got: Vec<(_, String)> = cases
        .iter()
        .map(|(s, _)| (*s, choice(BLayout::Tn, *s)))
        .collect();
    let want: Vec<(_, String)> = cases.iter().map(|(s, c)| (*s, c.to_string())).collect();
    assert_eq!(got, want);
}

/// Outside its range the transposed tile is not ranked at all: M a multiple of 128, M ≤ 64,
/// M > 256, and every NN request (its `nn` configs run by name only).
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
    }
    assert_eq!(ranked_transposed(BLayout::Nn, (192, 4096, 4096)), 0);
    assert!(ranked_transposed(BLayout::Tn, (192, 4096, 4096)) >= 4);
}
