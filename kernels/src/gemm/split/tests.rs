//! Split-K's choice without a GPU: the cost model splits the decode shapes and leaves the
//! square ones to the one-launch kernels, the tune cache overrides it both ways, and the plan
//! refuses workspaces with empty slices and problems it does not compute.

use super::*;
use crate::catalogue;
use crate::dispatch::tune::{Cache, Entry, Measured};
use crate::dispatch::{Device, ProblemDef, Source, choose, judge};
use crate::gemm::request::GemmTypes;
use tirx::abi::ElemType::{Bf16, F16, F32};
use tirx::problem::{Act, BLayout};

/// The model's choice for a TN request and, for a split-K artifact, its slices.
fn chosen(request: &GemmRequest) -> (String, &'static KernelArtifact, Option<usize>) {
    let h200 = Device::h200();
    let c = choose(request, &catalogue::all(), &h200, &Cache::default())
        .unwrap_or_else(|e| panic!("{:?}: {e}", request.shape));
    let splits =
        is_partial(c.artifact).then(|| best_split(request, c.artifact, &h200).expect("ranked").0);
    (c.label(), c.artifact, splits)
}

fn plain(types: GemmTypes, shape: (usize, usize, usize)) -> GemmRequest {
    GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, types, shape)
}

/// The decode and skinny shapes issue #32 measured take a split of K (S > 1); the square
/// ones, whose tiles fill the SMs, keep S = 1 (a one-launch kernel). (127×8192×8192 fills 128
/// SMs with 128×64 tiles and is left to them by the model.)
#[test]
fn decode_shapes_split_k_and_square_ones_do_not() {
    let bf16 = GemmTypes::BF16;
    for shape in [(16, 4096, 4096), (1, 4096, 4096), (64, 64, 4104)] {
        let (label, _, splits) = chosen(&plain(bf16, shape));
        assert!(
            splits.is_some_and(|s| s > 1),
            "{shape:?}: {label}, slices {splits:?}"
        );
    }
    for shape in [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048)] {
        let (label, art, splits) = chosen(&plain(bf16, shape));
        assert!(!is_partial(art) && splits.is_none(), "{shape:?}: {label}");
    }
    // The scaled f16 → f32 form splits too, finished by the scaled reduce.
    let mut scaled = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::Scaled,
        GemmTypes {
            input: F16,
            output: F32,
        },
        (16, 4096, 4096),
    );
    scaled.scalars = (1.5, -0.5);
    let (label, art, splits) = chosen(&scaled);
    assert!(splits.is_some_and(|s| s > 1), "{label}");
    assert_eq!(art.elem_of("a"), Some(F16));
    let reduce = reduce_of(art, &scaled).expect("an f32 reduce");
    assert!((reduce.signature)().tensors.iter().any(|t| t.name == "c"));
}

/// Slices are never more than the K tiles (each slice holds one), and fewer SMs never take
/// more slices for a shape whose tiles alone fill them.
#[test]
fn the_slices_stay_within_the_k_tiles() {
    let art = catalogue::find("gemm_sm90_splitk")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.config == "n64")
        .expect("n64");
    for (shape, k_tiles) in [((64, 64, 4104), 65), ((1, 64, 130), 3), ((8, 64, 128), 2)] {
        let (s, _) =
            best_split(&plain(GemmTypes::BF16, shape), art, &Device::h200()).expect("ranked");
        assert!((2..=k_tiles).contains(&s), "{shape:?}: {s}");
    }
    let one_tile = best_split(&plain(GemmTypes::BF16, (8, 64, 64)), art, &Device::h200());
    assert!(matches!(one_tile, Err(Reject::Launch(_))), "{one_tile:?}");
}

/// A workspace with an empty slice (S above the K tiles), one slice, or another M×N is
/// refused with what it must be.
#[test]
fn a_workspace_with_empty_slices_is_refused() {
    let art = &catalogue::find("gemm_sm90_splitk")
        .expect("shipped")
        .artifacts[0];
    let shape = (7, 264, 200); // 4 K tiles of 64
    assert!(check_workspace(art, shape, &[4, 7, 264]).is_ok());
    assert!(check_workspace(art, shape, &[3, 7, 264]).is_ok());
    for bad in [[5, 7, 264], [1, 7, 264], [4, 8, 264], [4, 7, 256]] {
        let err = check_workspace(art, shape, &bad).unwrap_err();
        assert!(err.to_string().contains("2 ≤ S ≤ 4"), "{bad:?}: {err}");
    }
}

/// The fused bias + activation at a decode shape splits too, finished by the bias reduce of
/// that activation.
#[test]
fn the_fused_epilogue_splits_at_decode_shapes() {
    for (act, shape) in Act::ALL
        .into_iter()
        .flat_map(|act| [(act, (16, 4096, 4096)), (act, (3, 1032, 2056))])
    {
        let bias =
            GemmRequest::contiguous(BLayout::Tn, Epilogue::Bias(act), GemmTypes::BF16, shape);
        let (label, art, splits) = chosen(&bias);
        assert!(splits.is_some_and(|s| s > 1), "{act:?} {shape:?}: {label}");
        let reduce = reduce_of(art, &bias).expect("a bias reduce");
        assert_eq!(reduce.int("ACT").and_then(Act::of_code), Some(act));
    }
}

/// Split K computes the plain, scaled and fused GEMMs of 16-bit inputs (TN, and NN through
/// `gemm_sm90_splitk`'s `nn` configs) and the FP8 TN GEMMs of 8-bit ones: B in the other
/// layout than a partial's, the FP8 scales on 16-bit inputs, a 16-bit epilogue on 8-bit ones
/// and an input type a partial was not compiled for are refusals in the table, not choices.
#[test]
fn split_k_refuses_what_it_does_not_compute() {
    let h200 = Device::h200();
    let eight_bit = |a: &KernelArtifact| {
        matches!(
            a.elem_of("a"),
            Some(tirx::abi::ElemType::E4m3 | tirx::abi::ElemType::E5m2)
        )
    };
    let takes_nn = |a: &KernelArtifact| matches!(a.problem, Some(tirx::problem::Problem::Gemm(g)) if g.b == BLayout::Nn);
    // The refusals of the TN partials of 16-bit inputs (`splitk.rs`) or of 8-bit ones (the NN
    // partials refuse every TN request as another problem; NN requests are judged below).
    let refusal_of = |request: &GemmRequest, fp8: bool| {
        judge(request, &catalogue::all(), &h200)
            .into_iter()
            .filter(|v| {
                is_partial(v.artifact) && eight_bit(v.artifact) == fp8 && !takes_nn(v.artifact)
            })
            .map(|v| v.outcome)
            .collect::<Vec<_>>()
    };
    let refusal = |request: &GemmRequest| refusal_of(request, false);
    let fp8 = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::ScaleTensor,
        GemmTypes::BF16,
        (16, 4096, 4096),
    );
    let nn = GemmRequest::contiguous(
        BLayout::Nn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (16, 4096, 4096),
    );
    for outcome in refusal(&fp8) {
        assert!(
            matches!(outcome, Err(Reject::Problem { .. })),
            "{outcome:?}"
        );
    }
    // NN: the TN partials refuse it as another problem; the bf16 `nn` configs (four of
    // `gemm_sm90_splitk`, two of the transposed decode partial) accept it, the f16 ones refuse
    // its type.
    let nn_verdicts = judge(&nn, &catalogue::all(), &h200);
    let mut nn_accepted = 0;
    for v in nn_verdicts
        .iter()
        .filter(|v| is_partial(v.artifact) && !eight_bit(v.artifact))
    {
        if takes_nn(v.artifact) && v.artifact.elem_of("a") == Some(Bf16) {
            assert!(v.outcome.is_ok(), "{}: {:?}", v.artifact.config, v.outcome);
            nn_accepted += 1;
        } else if takes_nn(v.artifact) {
            assert!(
                matches!(v.outcome, Err(Reject::Types { .. })),
                "{:?}",
                v.outcome
            );
        } else {
            assert!(
                matches!(v.outcome, Err(Reject::Problem { .. })),
                "{:?}",
                v.outcome
            );
        }
    }
    assert_eq!(
        nn_accepted, 6,
        "gemm_sm90_splitk's four bf16 `nn` configs and gemm_sm90_splitk_t's two"
    );
    let e4m3 = plain(
        GemmTypes {
            input: tirx::abi::ElemType::E4m3,
            output: Bf16,
        },
        (16, 4096, 4096),
    );
    for outcome in refusal(&e4m3) {
        assert!(matches!(outcome, Err(Reject::Types { .. })), "{outcome:?}");
    }
    // The FP8 partials: a plain or scaled GEMM of 8-bit inputs is not their problem; FP8
    // scales on BF16 inputs are not their type.
    let fp8_refusals = refusal_of(&e4m3, true);
    assert!(!fp8_refusals.is_empty());
    for outcome in fp8_refusals {
        assert!(
            matches!(outcome, Err(Reject::Problem { .. })),
            "{outcome:?}"
        );
    }
    let bf16_scaled = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::ScaleRows,
        GemmTypes::BF16,
        (16, 4096, 4096),
    );
    for outcome in refusal_of(&bf16_scaled, true) {
        assert!(matches!(outcome, Err(Reject::Types { .. })), "{outcome:?}");
    }
}

/// The tune cache overrides the model both ways: a measured one-launch kernel wins at a decode
/// shape, and a measured split-K artifact at a square one.
#[test]
fn the_tune_cache_overrides_the_split() {
    let h200 = Device::h200();
    let entry = |request: &GemmRequest, kernel: &str, config: &str| Entry {
        key: request.cache_key(&h200),
        shape: [request.shape.0, request.shape.1, request.shape.2],
        date: "2026-12-03T00:00:00Z".into(),
        measured: vec![Measured {
            kernel: kernel.into(),
            config: config.into(),
            median_us: 10.0,
        }],
    };
    let decode = plain(GemmTypes::BF16, (16, 4096, 4096));
    let square = plain(GemmTypes::BF16, (4096, 4096, 4096));
    let mut cache = Cache::default();
    cache.insert(entry(&decode, "gemm_sm90_ws", "n64"));
    cache.insert(entry(&square, "gemm_sm90_splitk", "default"));
    let all = catalogue::all();
    let c = choose(&decode, &all, &h200, &cache).expect("fits");
    assert_eq!(c.label(), "gemm_sm90_ws/n64");
    let c = choose(&square, &all, &h200, &cache).expect("fits");
    assert_eq!(c.label(), "gemm_sm90_splitk/default");
    assert_eq!(c.source, Source::Measured(10.0));
}

/// At M ≤ 64 with N and K of 4096 or more the time is B's bytes: the model takes a split plan
/// (every CTA streaming its slice of B, as many resident as fit) rather than a one-launch
/// kernel whose tiles leave B to fewer CTAs, and among the split configs one with the most
/// bytes of B in flight a CTA (`n256`: measured on the H200 on 2026-12-04, ws/n64 pulled
/// 1.76 TB/s at 1×8192×8192, split-K/default 2.8 and cuBLASLt 3.7; or, since 2026-12-05, the
/// transposed `gemm_sm90_splitk_t`, whose stages are nearly all B).
#[test]
fn decode_shapes_stream_b_through_the_deepest_split() {
    for shape in [
        (1, 8192, 8192),
        (16, 8192, 8192),
        (1, 14336, 4096),
        (16, 14336, 4096),
        (1, 4096, 14336),
        (8, 4096, 4096),
    ] {
        let request = plain(GemmTypes::BF16, shape);
        let (label, art, splits) = chosen(&request);
        println!("{shape:?}: {label}, S = {splits:?}");
        let deepest = art.int("BN") == Some(256) || is_transposed(art);
        assert!(
            splits.is_some_and(|s| s > 1) && deepest,
            "{shape:?}: {label}, S = {splits:?}"
        );
    }
    for shape in [
        (1, 4096, 4096),
        (16, 4096, 4096),
        (64, 4096, 4096),
        (64, 14336, 4096),
        (64, 8192, 8192),
        (128, 4096, 14336),
        (128, 8192, 8192),
        (256, 14336, 4096),
        (4096, 16, 4096),
        (64, 64, 4104),
    ] {
        let (label, _, splits) = chosen(&plain(GemmTypes::BF16, shape));
        println!("{shape:?}: {label}, S = {splits:?}");
    }
}

fn transposed_art(config: &str) -> &'static KernelArtifact {
    catalogue::find("gemm_sm90_splitk_t")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.config == config)
        .expect("the config")
}

/// At M ≤ 16 with N and K of 4096 or more (and at odd N and K) the model takes the transposed
/// plan (`gemm_sm90_splitk_t`: B's rows fill the MMA's 64-row side, so a stage is nearly all
/// B) over the untransposed split configs, whose 64-row A box is TMA's zero fill at M = 1;
/// the GPU test `gpu_gemv::the_host_takes_the_transposed_plan_at_decode_shapes` runs these.
#[test]
fn decode_shapes_take_the_transposed_plan() {
    for shape in [
        (1, 4096, 4096),
        (16, 4096, 4096),
        (1, 8192, 8192),
        (16, 8192, 8192),
        (8, 4096, 14336),
        (3, 4097, 4104),
    ] {
        let (label, art, splits) = chosen(&plain(GemmTypes::BF16, shape));
        println!("{shape:?}: {label}, S = {splits:?}");
        assert!(
            is_transposed(art) && splits.is_some_and(|s| s > 1),
            "{shape:?}: {label}, S = {splits:?}"
        );
    }
    // Square shapes never take it.
    for shape in [(4096, 4096, 4096), (2048, 2048, 2048)] {
        let (label, art, _) = chosen(&plain(GemmTypes::BF16, shape));
        assert!(!is_transposed(art), "{shape:?}: {label}");
    }
}

/// The orientation is read from the signature: the transposed kernel's workspace is
/// [S, N, M], the other split kernel's [S, M, N]; a workspace of the other orientation is
/// refused with the one it must be.
#[test]
fn the_transposed_workspace_is_n_by_m() {
    let t = transposed_art("m16");
    let plain_art = &catalogue::find("gemm_sm90_splitk")
        .expect("shipped")
        .artifacts[0];
    assert!(is_transposed(t) && !is_transposed(plain_art));
    assert_eq!(workspace_shape(t, 4, (3, 264)), [4, 264, 3]);
    assert_eq!(workspace_shape(plain_art, 4, (3, 264)), [4, 3, 264]);
    let shape = (3, 264, 200); // 4 K tiles
    assert!(check_workspace(t, shape, &[4, 264, 3]).is_ok());
    let err = check_workspace(t, shape, &[4, 3, 264]).unwrap_err();
    assert!(err.to_string().contains("[S, 264, 3]"), "{err}");
}

/// The transposed plan computes every epilogue split K does (a transposing reduce of each:
/// α; α and β·C; bias and activation; and a residual), and the model takes it for them at a
/// decode shape; the FP8 scales are refused in the dispatcher's table (`Reject::Problem`).
#[test]
fn the_transposed_plan_takes_every_split_epilogue() {
    let shape = (16, 4096, 4096);
    let mut requests = Vec::new();
    // The GPU test `gpu_gemv::the_host_takes_the_transposed_plan_for_fused_epilogues` runs
    // the fused ones at both shapes.
    for shape in [shape, (3, 4104, 4104)] {
        let mut with_c =
            GemmRequest::contiguous(BLayout::Tn, Epilogue::Scaled, GemmTypes::BF16, shape);
        with_c.scalars = (1.5, -0.5);
        let mut alpha_only = with_c.clone();
        alpha_only.scalars = (0.5, 0.0);
        requests.extend([with_c, alpha_only]);
        for act in Act::ALL {
            for epilogue in [Epilogue::Bias(act), Epilogue::BiasResidual(act)] {
                requests.push(GemmRequest::contiguous(
                    BLayout::Tn,
                    epilogue,
                    GemmTypes::BF16,
                    shape,
                ));
            }
        }
    }
    for request in &requests {
        let (label, art, splits) = chosen(request);
        println!("{}: {label}, S = {splits:?}", request.describe());
        assert!(is_transposed(art), "{}: {label}", request.describe());
        let reduce = reduce_of(art, request).expect("a transposing reduce");
        assert!(
            reduce.kernel.starts_with("splitk_reduce_t"),
            "{}",
            reduce.kernel
        );
        if let Epilogue::Bias(act) | Epilogue::BiasResidual(act) = request.epilogue {
            assert_eq!(reduce.int("ACT").and_then(Act::of_code), Some(act));
        }
        assert_eq!(
            (reduce.signature)().tensors.iter().any(|t| t.name == "c"),
            reads_c(request)
        );
    }
    let h200 = Device::h200();
    let fp8 = GemmRequest::contiguous(BLayout::Tn, Epilogue::ScaleTensor, GemmTypes::BF16, shape);
    for v in judge(&fp8, &catalogue::all(), &h200)
        .into_iter()
        .filter(|v| is_transposed(v.artifact))
    {
        assert!(
            matches!(v.outcome, Err(Reject::Problem { .. })),
            "{:?}",
            v.outcome
        );
    }
}

/// FP8 (issue #29): at the decode-like 128×8192×8192 the model takes the FP8 split-K plan
/// (64 output tiles of 128×128 leave half of 132 SMs idle in every one-launch FP8 kernel;
/// measured on the H200 at 0.73× cuBLASLt, docs/perf/h200-2026-12-05.md), with slices the model
/// picks, finished by a reduce that writes D's type and applies the request's scales; at 8192³
/// and the LLM shapes, whose tiles fill the SMs, the one-launch kernels stay. Under the model
/// before FP8 split-K (no FP8 partial, or the 64-row tile's ×1.5 charged to the two-warpgroup
/// 128-row one) the decode shape stays unsplit and this test fails.
#[test]
fn fp8_decode_shapes_split_k_and_square_ones_do_not() {
    use tirx::abi::ElemType::{E4m3, E5m2};
    let types = [(E4m3, Bf16), (E4m3, F16), (E4m3, F32), (E5m2, Bf16)];
    for epilogue in [Epilogue::ScaleTensor, Epilogue::ScaleRows] {
        for (input, output) in types {
            let types = GemmTypes { input, output };
            let fp8 = |shape| GemmRequest::contiguous(BLayout::Tn, epilogue, types, shape);
            for shape in [(128, 8192, 8192), (127, 8192, 8192), (64, 8192, 8192)] {
                let request = fp8(shape);
                let (label, art, splits) = chosen(&request);
                println!("{epilogue:?} {types} {shape:?}: {label}, S = {splits:?}");
                assert!(
                    splits.is_some_and(|s| s > 1) && art.elem_of("a") == Some(input),
                    "{epilogue:?} {types} {shape:?}: {label}, S = {splits:?}"
                );
                let reduce = reduce_for(art.target, &request).expect("a reduce");
                assert_eq!(reduce.elem_of("d"), Some(output));
                let reads_rows = (reduce.signature)().tensors.iter().any(|t| t.name == "sa");
                assert_eq!(
                    reads_rows,
                    epilogue == Epilogue::ScaleRows,
                    "{}",
                    reduce.kernel
                );
            }
            for shape in [(8192, 8192, 8192), (8192, 28672, 4096), (8192, 4096, 14336)] {
                let (label, art, _) = chosen(&fp8(shape));
                println!("{epilogue:?} {types} {shape:?}: {label}");
                assert!(!is_partial(art), "{epilogue:?} {types} {shape:?}: {label}");
            }
        }
    }
    // The per-tensor reduce multiplies the two scales once, as the one-launch kernels do.
    let mut request = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::ScaleTensor,
        GemmTypes {
            input: E4m3,
            output: Bf16,
        },
        (128, 8192, 8192),
    );
    request.scalars = (0.375, -1.75);
    assert_eq!(reduce_scalars(&request), (0.375f32 * -1.75f32, 0.0));
}

/// NN (B given K×N) at the skinny and decode shapes of issue #32 takes the NN split-K plan
/// (`gemm_sm90_splitk`'s `nn` configs, and at M ≤ 16 the transposed decode partial's,
/// `gemm_sm90_splitk_t/nn_m16`, whose MMA reads B as its A operand MN-major) on an H200 and
/// an H100, by the TN plan's model (the same stage bytes: an MN-major box moves as many
/// elements as a K-major one), with the slices the model gives: the TN choices at these shapes
/// (the tests above and `dispatch::tests`, `gemm_sm90_splitk_t/m16` with S = 2 at M = 1, 8).
#[test]
fn nn_skinny_shapes_take_the_nn_split_plan() {
    type Case = ((usize, usize, usize), &'static str, usize);
    let h200: &[Case] = &[
        ((64, 8192, 8192), "gemm_sm90_splitk/nn", 2),
        ((64, 14336, 4096), "gemm_sm90_splitk/nn_n256", 2),
    ];
    let h100: &[Case] = &[
        ((64, 8192, 8192), "gemm_sm90_splitk/nn", 2),
        ((64, 14336, 4096), "gemm_sm90_splitk/nn_n256", 2),
    ];
    let chosen = |layout, shape, device: &Device| {
        let req = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
        let c = choose(&req, &catalogue::all(), device, &Cache::default())
            .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        let s =
            is_partial(c.artifact).then(|| best_split(&req, c.artifact, device).expect("ranked").0);
        (c, s)
    };
    for (device, cases) in [(Device::h200(), h200), (Device::h100(), h100)] {
        for &(shape, label, splits) in cases {
            let (c, s) = chosen(BLayout::Nn, shape, &device);
            assert_eq!(
                (c.label(), s),
                (label.to_string(), Some(splits)),
                "{} {shape:?}",
                device.name
            );
        }
        // M ≤ 16: the transposed decode plan, ranked as TN ranks it — the same tile and
        // stages in its `nn` form, the same slices.
        for shape in [
            (1, 4096, 4096),
            (16, 4096, 4096),
            (8, 8192, 8192),
            (3, 4096, 14336),
        ] {
            let (nn, s_nn) = chosen(BLayout::Nn, shape, &device);
            let (tn, s_tn) = chosen(BLayout::Tn, shape, &device);
            assert!(
                is_transposed(nn.artifact),
                "{} {shape:?}: {}",
                device.name,
                nn.label()
            );
            assert_eq!(
                (nn.artifact.kernel, nn.artifact.config, s_nn),
                (
                    tn.artifact.kernel,
                    format!("nn_{}", tn.artifact.config).as_str(),
                    s_tn
                ),
                "{} {shape:?}",
                device.name
            );
        }
    }
}
