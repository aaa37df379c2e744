//! The block-scaled GEMM's host side without a GPU: the checks before any choice (typed
//! errors), the choice and the launch plan on a B200 (described; nothing launched, there is
//! none here), the refusal table, and the Hopper refusal that names the target.

use super::*;
use crate::catalogue;
use crate::dispatch::tune::Cache;
use crate::dispatch::{Device, ProblemDef, Reject, choose, judge};
use tirx::abi::ElemType::{Bf16, E2m1x2, E4m3, F16, Ue4m3, Ue8m0};
use tirx::problem::{GemmProblem, Problem};
use tirx::runtime::{plan_launch_with, ue8m0};

/// Contiguous tensors of an M×N×K block-scaled GEMM (K in `a`'s elements), the factor
/// images of `scale_image`'s shapes: `[a, sfa, b, sfb, d]`.
fn tensors(factors: Factors, input: ElemType, (m, n, k): (usize, usize, usize)) -> [TensorMeta; 5] {
    let meta = |elem, shape: &[usize]| TensorMeta::row_major(elem, shape, 0);
    let (sfa, sfb) = image_shapes(factors, input, (m, n, k));
    [
        meta(input, &[m, k]),
        meta(factors.elem(), &sfa),
        meta(input, &[n, k]),
        meta(factors.elem(), &sfb),
        meta(Bf16, &[m, n]),
    ]
}

fn request_of(t: &[TensorMeta; 5]) -> Result<GemmRequest, RuntimeError> {
    factor_request(FactorTensors {
        a: &t[0],
        sfa: &t[1],
        b: &t[2],
        sfb: &t[3],
        d: &t[4],
    })
}

/// The image shapes are `scale_image`'s: MXFP8 at K = 208 has 7 factors a row (two cells of
/// 4: 32 bytes), NVFP4 at K = 208 bytes (416 values) 26 (seven cells: 112 bytes); 200 rows
/// are two 128-row blocks (64 image rows).
#[test]
fn the_factor_images_are_scale_images_of_the_rows_and_factors() {
    assert_eq!(factor_cols(Factors::Mx, E4m3, 208), 7);
    assert_eq!(factor_cols(Factors::Nv, E2m1x2, 208), 26);
    assert_eq!(
        image_shapes(Factors::Mx, E4m3, (200, 264, 208)),
        ([64, 32], [96, 32])
    );
    assert_eq!(
        image_shapes(Factors::Nv, E2m1x2, (200, 264, 208)),
        ([64, 112], [96, 112])
    );
    let f = vec![ue8m0(127); 200 * 7];
    assert_eq!(tirx::runtime::scale_image(&f, 200, 7, ue8m0(0)).1, [64, 32]);
}

/// Tensors that cannot be a block-scaled GEMM are typed errors before any choice: an image
/// one factor cell short (`ShapeMismatch` naming `KS`), B with another K, UE4M3 factors on
/// E4M3 operands and a BF16 A (`ElemMismatch`), factors of two types, a vector (`RankMismatch`).
#[test]
fn wrong_block_scaled_tensors_are_typed_errors_before_the_choice() {
    let shape = (200, 264, 208);
    let good = tensors(Factors::Mx, E4m3, shape);
    let req = request_of(&good).expect("MXFP8 tensors");
    assert_eq!(req.epilogue, Epilogue::ScaleFactors(Factors::Mx));
    assert_eq!(req.shape, shape);
    assert_eq!(
        req.describe(),
        "gemm tn scale-mx, e4m3 -> bf16, 200x264x208"
    );
    let with = |i: usize, t: TensorMeta| {
        let mut ts = good.clone();
        ts[i] = t;
        request_of(&ts)
    };
    let meta = |elem, shape: &[usize]| TensorMeta::row_major(elem, shape, 0);
    match with(1, meta(Ue8m0, &[64, 16])) {
        Err(RuntimeError::ShapeMismatch {
            tensor,
            dim: 1,
            symbol,
            got: 16,
            expected: 32,
            ..
        }) => assert_eq!((tensor.as_str(), symbol.as_str()), ("sfa", "KS")),
        other => panic!("{other:?}"),
    }
    match with(3, meta(Ue8m0, &[64, 32])) {
        Err(RuntimeError::ShapeMismatch { tensor, symbol, .. }) => {
            assert_eq!((tensor.as_str(), symbol.as_str()), ("sfb", "NS"))
        }
        other => panic!("{other:?}"),
    }
    match with(2, meta(E4m3, &[264, 192])) {
        Err(RuntimeError::ShapeMismatch { tensor, symbol, .. }) => {
            assert_eq!((tensor.as_str(), symbol.as_str()), ("b", "K"))
        }
        other => panic!("{other:?}"),
    }
    let nv_images = tensors(Factors::Nv, E4m3, shape);
    let mut mixed = good.clone();
    mixed[1] = nv_images[1].clone();
    assert!(matches!(
        request_of(&mixed),
        Err(RuntimeError::ElemMismatch { ref tensor, got: Ue4m3, expected: Ue8m0 }) if tensor == "sfa"
    ));
    assert!(matches!(
        with(3, meta(Ue4m3, &[96, 32])),
        Err(RuntimeError::ElemMismatch { ref tensor, got: Ue4m3, expected: Ue8m0 }) if tensor == "sfb"
    ));
    let mut bf16_in = good.clone();
    bf16_in[0] = meta(Bf16, &[200, 208]);
    assert!(matches!(
        request_of(&bf16_in),
        Err(RuntimeError::ElemMismatch { ref tensor, got: Bf16, .. }) if tensor == "a"
    ));
    assert!(matches!(
        with(1, meta(Ue8m0, &[64 * 32])),
        Err(RuntimeError::RankMismatch { ref tensor, got: 1, expected: 2, .. }) if tensor == "sfa"
    ));
}

/// On a B200 (described; nothing launched) MXFP8 and NVFP4 requests choose a block-scaled
/// sm_100a artifact of their own recipe — the CTA pair's production kernel at 8192³, whose
/// persistent grid of whole 2×1 clusters the planner plans — and the refusal table says why
/// each other artifact cannot: the other recipe's kernels solve another problem, every other
/// GEMM another epilogue, the Hopper kernels another target; nothing is refused for its launch.
#[test]
fn block_scaled_requests_choose_their_recipes_kernel_on_a_blackwell_device() {
    let b200 = Device::b200();
    // (recipe, A's type, the other recipe, the choice, its shared memory: the headers' 7 and
    // 6 stages of operands and factors, D's staging tile, barriers and alignment)
    for (factors, input, other, want, smem) in [
        (
            Factors::Mx,
            E4m3,
            Factors::Nv,
            "gemm_sm100_block_scaled_prod/mxfp8",
            214_032,
        ),
        (
            Factors::Nv,
            E2m1x2,
            Factors::Mx,
            "gemm_sm100_block_scaled_prod/nvfp4",
            206_864,
        ),
    ] {
        // K in `a`'s elements: 8192 E4M3 values, or 8192 FP4 values in 4096 bytes.
        let k = 8192 / values_per_elem(input);
        let req = request_of(&tensors(factors, input, (8192, 8192, k))).expect("tensors");
        let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
        assert_eq!(c.label(), want);
        let (ts, scalars) = req.arguments(c.artifact);
        let plan = plan_launch_with(&(c.artifact.signature)(), &ts, &scalars, &b200.limits)
            .unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!(
            (plan.grid, plan.cluster, plan.block),
            ([148, 1, 1], [2, 1, 1], [256, 1, 1]),
            "{want}"
        );
        assert_eq!(plan.smem_bytes, smem, "{want}");
        // A small problem too: the one-CTA kernels and the pair's both take it.
        let small = request_of(&tensors(factors, input, (200, 264, 208))).expect("tensors");
        let verdicts = judge(&small, &catalogue::all(), &b200);
        let solves = |f| {
            Some(Problem::Gemm(GemmProblem {
                b: BLayout::Tn,
                epilogue: Epilogue::ScaleFactors(f),
            }))
        };
        let mut accepted = 0;
        for v in &verdicts {
            let label = format!("{}/{}", v.kernel.name, v.artifact.config);
            match &v.outcome {
                Ok(_) => {
                    accepted += 1;
                    assert_eq!(v.artifact.problem, solves(factors), "{label}");
                }
                Err(Reject::Problem { found }) if *found == solves(other) => {}
                Err(Reject::Problem {
                    found: Some(Problem::Gemm(g)),
                }) => {
                    assert!(!matches!(g.epilogue, Epilogue::ScaleFactors(_)), "{label}")
                }
                Err(Reject::Problem { .. }) | Err(Reject::Target { .. }) => {}
                Err(why) => panic!("{label}: {why}"),
            }
        }
        // The one-CTA kernel's two configs and the pair's one.
        assert_eq!(accepted, 3, "{}", crate::dispatch::table(&verdicts));
    }
}

/// Factor images the host did not check (a request built by hand) are refused by the
/// planner with the kernel's own shape assertion, as a launch refusal.
#[test]
fn an_image_of_the_wrong_shape_is_refused_by_the_kernels_assertion() {
    let b200 = Device::b200();
    let mut req = request_of(&tensors(Factors::Mx, E4m3, (200, 264, 208))).expect("tensors");
    let meta = |shape: &[usize]| TensorMeta::row_major(Ue8m0, shape, 0);
    req.factors = Some((meta(&[64, 16]), meta(&[96, 16])));
    let verdicts = judge(&req, &catalogue::all(), &b200);
    let launch: Vec<String> = verdicts
        .iter()
        .filter_map(|v| match &v.outcome {
            Err(Reject::Launch(why)) => Some(why.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(launch.len(), 3, "{}", crate::dispatch::table(&verdicts));
    // The one-CTA kernel's assertion names MXFP8's 128 elements an image column; the pair's,
    // over both formats, names them `BK / SFC`, with the values that fail it.
    assert!(
        launch.iter().all(|w| w.contains("KS == cdiv(K, 128)")
            || w.contains("KS == cdiv(K, BK / SFC)") && w.contains("KS = 16, K = 208")),
        "{launch:?}"
    );
}

/// On a Hopper device (an H200 described) no block-scaled request fits, and the table the
/// error carries names the target every block-scaled artifact is compiled for; MXFP4
/// (`e2m1x2` with UE8M0 factors) is a request the host takes and no kernel ships.
#[test]
fn on_hopper_the_block_scaled_refusal_names_the_target() {
    let h200 = Device::h200();
    let req = request_of(&tensors(Factors::Mx, E4m3, (4096, 4096, 4096))).expect("tensors");
    match choose(&req, &catalogue::all(), &h200, &Cache::default()) {
        Err(RuntimeError::NoKernelFits { problem, table }) => {
            assert_eq!(problem, "gemm tn scale-mx, e4m3 -> bf16, 4096x4096x4096");
            let row = table
                .lines()
                .find(|l| l.contains("gemm_sm100_block_scaled_prod/mxfp8"))
                .expect("a row");
            assert!(
                row.contains("sm_100a") && row.contains("refused: compiled for sm_100a"),
                "{row}"
            );
            assert!(table.lines().all(|l| !l.contains("accepted")), "{table}");
        }
        other => panic!("{:?}", other.map(|c| c.label())),
    }
    let mxfp4 = tensors(Factors::Mx, E2m1x2, (256, 256, 256));
    let req = request_of(&mxfp4).expect("MXFP4 is a request");
    assert_eq!(req.epilogue, Epilogue::ScaleFactors(Factors::Mx));
    assert!(matches!(
        choose(&req, &catalogue::all(), &Device::b200(), &Cache::default()),
        Err(RuntimeError::NoKernelFits { .. })
    ));
    let _ = F16;
}
