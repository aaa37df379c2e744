//! The dispatcher on the shipped catalogue, without a GPU: acceptance, the cost model's
//! choices, the rejection table, and the tune cache's precedence.

use super::tune::{Cache, Entry, Measured, alignment, bucket};
use super::*;
use crate::catalogue;
use crate::gemm::request::GemmRequest;
use crate::gemm::request::GemmTypes;
use tirx::abi::ElemType::{Bf16, F16, F32};
use tirx::problem::{BLayout, Epilogue};

fn types(input: tirx::abi::ElemType, output: tirx::abi::ElemType) -> GemmTypes {
    GemmTypes { input, output }
}

/// The cost model's choice (no cache) as `kernel/config`.
fn model(
    device: &Device,
    layout: BLayout,
    epi: Epilogue,
    t: GemmTypes,
    shape: (usize, usize, usize),
) -> String {
    let req = GemmRequest::contiguous(layout, epi, t, shape);
    choose(&req, &catalogue::all(), device, &Cache::default())
        .unwrap_or_else(|e| panic!("{shape:?}: {e}"))
        .label()
}

/// The choices the measured rules of the 2026-11-30 sessions made (docs/perf/gemm-h200.md),
/// reproduced by the cost model from the artifacts' data alone.
#[test]
fn the_cost_model_takes_the_measured_best_tiles_and_kernels() {
    let h200 = Device::h200();
    let bf16 = GemmTypes::BF16;
    let (tn, nn) = (BLayout::Tn, BLayout::Nn);
    let (plain, scaled) = (Epilogue::Plain, Epilogue::Scaled);
    type Case = (
        BLayout,
        Epilogue,
        GemmTypes,
        (usize, usize, usize),
        &'static str,
    );
    let cases: &[Case] = &[
        (
            tn,
            plain,
            bf16,
            (8192, 8192, 8192),
            "gemm_sm90_tma_epi/default",
        ),
        (
            tn,
            plain,
            bf16,
            (4096, 4096, 4096),
            "gemm_sm90_tma_epi/default",
        ),
        (
            tn,
            plain,
            bf16,
            (2048, 2048, 2048),
            "gemm_sm90_tma_epi/default",
        ),
        // D's rows not 16-byte aligned: no TMA store; 128-wide tiles fill the waves best.
        (
            tn,
            plain,
            bf16,
            (4095, 4097, 4096),
            "gemm_sm90_cluster/n128",
        ),
        (
            tn,
            plain,
            bf16,
            (2000, 1000, 1000),
            "gemm_sm90_tma_epi/n128",
        ),
        (
            tn,
            plain,
            bf16,
            (2000, 1001, 1000),
            "gemm_sm90_cluster/n128",
        ),
        // 128×64: A shared by a pair when its rows are not 128-byte aligned.
        (
            tn,
            plain,
            bf16,
            (1000, 1000, 1000),
            "gemm_sm90_pair_n/default",
        ),
        (
            tn,
            plain,
            bf16,
            (1000, 1000, 4000),
            "gemm_sm90_pair_n/default",
        ),
        (tn, plain, bf16, (1024, 1024, 1024), "gemm_sm90_ws/n64"),
        (tn, plain, bf16, (1000, 1001, 1000), "gemm_sm90_ws/n64"),
        (
            tn,
            plain,
            bf16,
            (1536, 1536, 1536),
            "gemm_sm90_tma_epi/n192",
        ),
        (
            tn,
            plain,
            bf16,
            (1536, 1538, 1536),
            "gemm_sm90_cluster/n192",
        ),
        // An f32 D: 128×256 from registers beats 128×128 through the TMA store.
        (
            tn,
            plain,
            types(F16, F32),
            (4096, 4096, 4096),
            "gemm_sm90_cluster/f16_f32",
        ),
        (
            tn,
            plain,
            types(F16, F32),
            (2000, 1000, 1000),
            "gemm_sm90_tma_epi/f16_f32",
        ),
        (
            tn,
            plain,
            types(F16, F16),
            (4096, 4096, 4096),
            "gemm_sm90_tma_epi/f16",
        ),
        (
            tn,
            plain,
            types(F16, F16),
            (2000, 1000, 1000),
            "gemm_sm90_tma_epi/f16_n128",
        ),
        (
            tn,
            plain,
            types(F16, F16),
            (1000, 1000, 1000),
            "gemm_sm90_pair_n/f16",
        ),
        (nn, plain, bf16, (8192, 8192, 8192), "gemm_sm90_tma_epi/nn"),
        (nn, plain, bf16, (1000, 1000, 1000), "gemm_sm90_pair_n/nn"),
        (nn, plain, bf16, (1024, 1024, 1024), "gemm_sm90_ws/nn_n64"),
        (
            nn,
            plain,
            bf16,
            (3072, 3072, 3072),
            "gemm_sm90_pair_n/nn_n192",
        ),
        (
            nn,
            plain,
            types(Bf16, F32),
            (3072, 3072, 3072),
            "gemm_sm90_tma_epi/nn_bf16_f32",
        ),
        (
            tn,
            scaled,
            bf16,
            (8192, 8192, 8192),
            "gemm_sm90_tma_epi_abc/default",
        ),
        (
            tn,
            scaled,
            bf16,
            (1000, 1000, 1000),
            "gemm_sm90_pair_n_abc/default",
        ),
        (
            tn,
            scaled,
            bf16,
            (1536, 1536, 1536),
            "gemm_sm90_pair_n_abc/n192",
        ),
        (
            nn,
            scaled,
            bf16,
            (1000, 1000, 1000),
            "gemm_sm90_pair_n_abc/nn",
        ),
    ];
    for &(layout, epi, t, shape, want) in cases {
        let got = model(&h200, layout, epi, t, shape);
        assert_eq!(got, want, "{layout:?} {epi:?} {t} {shape:?}");
    }
    // On 114 SMs 2048² is two waves of 128×256 tiles; 128×192 fills them better.
    let h100 = Device::hopper_with_sms(114);
    assert_eq!(
        model(&h100, tn, plain, bf16, (2048, 2048, 2048)),
        "gemm_sm90_tma_epi/n192"
    );
}

/// Every choice computes what was asked, in the types asked, for the target of the device.
#[test]
fn every_choice_solves_the_problem_in_its_types() {
    let h200 = Device::h200();
    let shapes: [(usize, usize, usize); 5] = [
        (8192, 8192, 8192),
        (4096, 4097, 4096),
        (1000, 1000, 1000),
        (1, 8, 8),
        (2000, 1000, 1000),
    ];
    for t in GemmTypes::ALL {
        for layout in [BLayout::Tn, BLayout::Nn] {
            for epi in [Epilogue::Plain, Epilogue::Scaled] {
                for &(m, n, k) in &shapes {
                    // NN, and a scaled D (C and D by TMA), need N a multiple of 8.
                    let n = if layout == BLayout::Nn || epi == Epilogue::Scaled {
                        n.next_multiple_of(8)
                    } else {
                        n
                    };
                    let req = GemmRequest::contiguous(layout, epi, t, (m, n, k));
                    let c = choose(&req, &catalogue::all(), &h200, &Cache::default())
                        .unwrap_or_else(|e| panic!("{} : {e}", req.describe()));
                    let want = tirx::problem::Problem::Gemm(tirx::problem::GemmProblem {
                        b: layout,
                        epilogue: epi,
                    });
                    assert_eq!(c.artifact.problem, Some(want), "{}", c.label());
                    assert_eq!(c.artifact.elem_of("a"), Some(t.input), "{}", c.label());
                    assert_eq!(c.artifact.elem_of("d"), Some(t.output), "{}", c.label());
                    assert_eq!(c.artifact.target, tirx::Target::Sm90a);
                }
            }
        }
    }
}

/// Nothing takes f32 inputs: the error lists every candidate with its reason.
#[test]
fn no_fit_prints_the_table_of_candidates_and_reasons() {
    let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, types(F32, F32), (64, 64, 64));
    let err = choose(&req, &catalogue::all(), &Device::h200(), &Cache::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("no kernel fits gemm tn plain, f32 -> f32, 64x64x64; the candidates:\n"),
        "{text}"
    );
    let line = |label: &str, rest: &str| {
        text.lines()
            .any(|l| l.trim_start().starts_with(label) && l.ends_with(rest))
    };
    assert!(
        line("tma_copy/default ", "sm_90a   refused: solves copy"),
        "{text}"
    );
    assert!(
        text.contains("gemm_sm100/default") && text.contains("refused: compiled for sm_100a"),
        "{text}"
    );
    assert!(
        text.contains("gemm_sm90_tma_epi/default") && text.contains("refused: takes bf16 -> bf16"),
        "{text}"
    );
    assert!(
        text.contains("gemm_sm90_tma_epi/nn")
            && text.contains("refused: solves gemm(b = nn, epilogue = plain)"),
        "{text}"
    );
    assert!(!text.contains("accepted"), "{text}");
}

/// A launch the planner refuses is a refusal with the planner's reason (here a K×N B whose
/// rows are not 16-byte aligned: every NN kernel reads B by TMA).
#[test]
fn a_launch_the_runtime_would_refuse_is_a_refusal() {
    let req = GemmRequest::contiguous(
        BLayout::Nn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (64, 1001, 64),
    );
    let verdicts = judge(&req, &catalogue::all(), &Device::h200());
    let nn: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.kernel.name == "gemm_sm90_ws" && v.artifact.config.starts_with("nn"))
        .collect();
    assert!(!nn.is_empty());
    for v in nn {
        match &v.outcome {
            Err(Reject::Launch(why)) => assert!(why.contains("16"), "{why}"),
            Err(Reject::Types { .. }) => {}
            other => panic!("{}: {other:?}", v.artifact.config),
        }
    }
}

/// The choice reads artifacts' constants, not their names: a config renamed keeps its
/// cost, so it still wins where it won.
#[test]
fn a_renamed_config_still_routes_by_its_constants() {
    let real = catalogue::find("gemm_sm90_tma_epi").expect("shipped");
    let renamed: Vec<tirx::KernelArtifact> = real
        .artifacts
        .iter()
        .map(|a| {
            let mut a = *a;
            a.config = if a.config == "n192" {
                "wide_tiles"
            } else {
                a.config
            };
            a
        })
        .collect();
    let kernel: &'static Kernel = Box::leak(Box::new(Kernel {
        name: "renamed",
        artifacts: Box::leak(renamed.into_boxed_slice()),
        pruned: &[],
    }));
    let req = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (1536, 1536, 1536),
    );
    let c = choose(&req, &[kernel], &Device::h200(), &Cache::default()).expect("fits");
    assert_eq!(c.artifact.config, "wide_tiles");
    assert_eq!(c.artifact.int("BN"), Some(192));
}

fn entry(req: &GemmRequest, measured: &[(&str, &str, f64)]) -> Entry {
    let (m, n, k) = req.shape;
    Entry {
        key: req.cache_key(&Device::h200()),
        shape: [m, n, k],
        date: "2026-12-01T00:00:00Z".into(),
        measured: measured
            .iter()
            .map(|&(kernel, config, median_us)| Measured {
                kernel: kernel.into(),
                config: config.into(),
                median_us,
            })
            .collect(),
    }
}

/// A cache entry wins over the model; an entry's artifact the dispatcher refuses for these
/// tensors is skipped; another device's entry is not read.
#[test]
fn the_cache_is_read_first_and_only_where_it_fits() {
    let all = catalogue::all();
    let h200 = Device::h200();
    let req = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (8192, 8192, 8192),
    );
    let mut cache = Cache::default();
    cache.insert(entry(
        &req,
        &[
            ("gemm_sm90_ws", "n128", 1500.0),
            ("no_such_kernel", "default", 1.0),
            ("gemm_sm90_cluster", "default", 1400.0),
        ],
    ));
    // Sorted fastest first on insert; the unknown kernel is skipped.
    let c = choose(&req, &all, &h200, &cache).expect("fits");
    assert_eq!(c.label(), "gemm_sm90_cluster/default");
    assert_eq!(c.source, Source::Measured(1400.0));
    // Another alignment is another key; and an entry whose artifact these tensors refuse is
    // skipped (a key forged to match: an unaligned D refuses the TMA-store kernels), so the
    // model decides.
    let odd = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (8191, 8191, 8192),
    );
    assert_ne!(odd.cache_key(&h200), req.cache_key(&h200));
    let mut only_tma = Cache::default();
    let mut forged = entry(&req, &[("gemm_sm90_tma_epi", "default", 1000.0)]);
    forged.key = odd.cache_key(&h200);
    only_tma.insert(forged);
    let c = choose(&odd, &all, &h200, &only_tma).expect("fits");
    assert_eq!(c.source, Source::Model);
    assert_ne!(c.kernel.name, "gemm_sm90_tma_epi");
    // Another SM count is another key.
    let h100 = Device::hopper_with_sms(114);
    assert_eq!(
        choose(&req, &all, &h100, &cache).expect("fits").source,
        Source::Model
    );
}

#[test]
fn a_cache_round_trips_through_its_file_and_merges_by_key() {
    let req = GemmRequest::contiguous(
        BLayout::Nn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (3000, 5000, 2048),
    );
    let mut cache = Cache::default();
    cache.insert(entry(&req, &[("gemm_sm90_tma_epi", "nn", 90.0)]));
    let dir = std::env::temp_dir().join(format!("tirx-tune-test-{}", std::process::id()));
    let path = dir.join("sub/tune.json");
    cache.save(&path).expect("writes");
    let back = Cache::load(&path).expect("reads");
    assert_eq!(back, cache);
    let newer = {
        let mut c = Cache::default();
        c.insert(entry(&req, &[("gemm_sm90_pair_n", "nn_n192", 80.0)]));
        c
    };
    let merged = back.merged_with(newer);
    assert_eq!(merged.entries.len(), 1);
    assert_eq!(merged.entries[0].measured[0].config, "nn_n192");
    assert!(
        Cache::load(&dir.join("missing.json"))
            .expect("empty")
            .entries
            .is_empty()
    );
    std::fs::write(dir.join("bad.json"), "{ not json").expect("writes");
    let err = Cache::load(&dir.join("bad.json")).unwrap_err().to_string();
    assert!(err.contains("is not a tirx tune cache"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        (bucket(1000), bucket(1024), bucket(1536), bucket(2048)),
        (40, 40, 42, 44)
    );
    let classes = (
        alignment(1000),
        alignment(1024),
        alignment(4095),
        alignment(4097),
    );
    assert_eq!(classes, (3, 6, 0, 0));
}

/// The shipped cache parses, and each of its entries names an artifact of the catalogue.
#[test]
fn the_shipped_cache_names_shipped_artifacts() {
    for e in Cache::shipped().entries {
        for m in &e.measured {
            let k = catalogue::find(&m.kernel).unwrap_or_else(|| panic!("{}", m.kernel));
            assert!(
                k.artifacts.iter().any(|a| a.config == m.config),
                "{}/{}",
                m.kernel,
                m.config
            );
        }
    }
}

/// On a Blackwell device (a B200 described; nothing launched, there is none here) a TN GEMM
/// goes to a kernel compiled for sm_100a, chosen by the same dispatcher as on Hopper, and the
/// Hopper kernels are refused by target; NN goes to the production level's MN-major config.
#[test]
fn blackwell_gemms_go_to_a_blackwell_kernel() {
    let b200 = Device::b200();
    for shape in [(8192, 8192, 8192), (1000, 1000, 1000), (256, 512, 64)] {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, GemmTypes::BF16, shape);
        let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
        assert_eq!(c.artifact.target, tirx::Target::Sm100a, "{}", c.label());
        assert!(c.kernel.name.starts_with("gemm_sm100"), "{}", c.label());
        let verdicts = judge(&req, &catalogue::all(), &b200);
        let hopper = verdicts
            .iter()
            .find(|v| v.kernel.name == "gemm_sm90_ws")
            .expect("judged");
        assert_eq!(
            hopper.outcome,
            Err(Reject::Target {
                found: tirx::Target::Sm90a
            })
        );
    }
    // NN: B given K×N, an MN-major B for the pair's tcgen05 (level 10).
    let req = GemmRequest::contiguous(
        BLayout::Nn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (256, 256, 256),
    );
    let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
        .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
    assert_eq!(c.label(), "gemm_sm100_prod/nn");
}

/// The production Blackwell GEMMs (ladder level 10) on a B200 (described; nothing launched,
/// there is none here): NN, f16 and f32 outputs, the scaled and the fused requests each choose
/// a level-10 sm_100a artifact, and the launch plan of the choice — the persistent grid of
/// whole 2×1 clusters (one CTA per SM), the cluster, and the dynamic shared memory of six
/// operand stages plus D's staging tile — is planned without launching.
#[test]
fn blackwell_production_requests_choose_level_10_and_plan_their_launch() {
    let b200 = Device::b200();
    let (tn, nn) = (BLayout::Tn, BLayout::Nn);
    let gelu = Epilogue::Bias(tirx::problem::Act::Gelu);
    // (layout, epilogue, types, the choice, D's staging bytes)
    let cases = [
        (
            nn,
            Epilogue::Plain,
            GemmTypes::BF16,
            "gemm_sm100_prod/nn",
            32 << 10,
        ),
        (
            tn,
            Epilogue::Plain,
            types(F16, F16),
            "gemm_sm100_prod/f16",
            32 << 10,
        ),
        (
            tn,
            Epilogue::Plain,
            types(Bf16, F32),
            "gemm_sm100_prod/bf16_f32",
            64 << 10,
        ),
        (
            nn,
            Epilogue::Plain,
            types(F16, F32),
            "gemm_sm100_prod/nn_f16_f32",
            64 << 10,
        ),
        (
            tn,
            Epilogue::Scaled,
            GemmTypes::BF16,
            "gemm_sm100_abc/default",
            32 << 10,
        ),
        (
            nn,
            Epilogue::Scaled,
            types(F16, F32),
            "gemm_sm100_abc/nn_f16_f32",
            64 << 10,
        ),
        (
            tn,
            gelu,
            GemmTypes::BF16,
            "gemm_sm100_bias_act/gelu",
            32 << 10,
        ),
        (
            nn,
            gelu,
            GemmTypes::BF16,
            "gemm_sm100_bias_act/nn_gelu",
            32 << 10,
        ),
    ];
    for (layout, epi, t, want, staging) in cases {
        let req = GemmRequest::contiguous(layout, epi, t, (4096, 4096, 4096));
        let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
        assert_eq!(c.label(), want, "{}", req.describe());
        assert_eq!(c.artifact.target, tirx::Target::Sm100a);
        let (tensors, scalars) = req.arguments(c.artifact);
        let plan = plan_launch_with(&(c.artifact.signature)(), &tensors, &scalars, &b200.limits)
            .unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!(plan.grid, [148, 1, 1], "{want}");
        assert_eq!(plan.cluster, [2, 1, 1], "{want}");
        assert_eq!(plan.block, [256, 1, 1], "{want}");
        // Six stages of A's 128×64 and B's 64×64 halves (24 KiB), D's staging tile, and 2064
        // bytes more (the 1 KiB alignment of the swizzled tiles, the barriers, the TMEM slot and
        // the scheduler's response): 178 KiB with a 16-bit D, 210 KiB with an f32 D, within
        // the 227 KiB.
        let operands = 6 * (24 << 10);
        assert_eq!(plan.smem_bytes, operands + staging + 2064, "{want}");
    }
}

/// NN and the fused epilogues on the 256×256 pair tiles (`nn_n256*`, and `n256_*` /
/// `nn_n256_*` of `gemm_sm100_bias_act` and `gemm_sm100_bias_act_res`) on a B200 (described;
/// nothing launched): at 8192³ they win as the TN `n256` tile does (half the waves at full
/// efficiency), at 4096³ the 256×128 tiles stay the choice; the plan holds five 32 KiB stages
/// and the 64 KiB staging tile.
#[test]
fn blackwell_nn_and_fused_large_shapes_choose_the_256x256_pair_tile() {
    let b200 = Device::b200();
    let (tn, nn) = (BLayout::Tn, BLayout::Nn);
    let gelu = Epilogue::Bias(tirx::problem::Act::Gelu);
    let silu_res = Epilogue::BiasResidual(tirx::problem::Act::Silu);
    let big = (8192, 8192, 8192);
    for (layout, epi, t, shape, want) in [
        (
            nn,
            Epilogue::Plain,
            GemmTypes::BF16,
            big,
            "gemm_sm100_prod/nn_n256",
        ),
        (
            nn,
            Epilogue::Plain,
            types(Bf16, F32),
            big,
            "gemm_sm100_prod/nn_n256_bf16_f32",
        ),
        (
            tn,
            gelu,
            GemmTypes::BF16,
            big,
            "gemm_sm100_bias_act/n256_gelu",
        ),
        (
            nn,
            gelu,
            GemmTypes::BF16,
            big,
            "gemm_sm100_bias_act/nn_n256_gelu",
        ),
        (
            tn,
            silu_res,
            GemmTypes::BF16,
            big,
            "gemm_sm100_bias_act_res/n256_silu",
        ),
        (
            nn,
            silu_res,
            GemmTypes::BF16,
            big,
            "gemm_sm100_bias_act_res/nn_n256_silu",
        ),
        (
            nn,
            Epilogue::Plain,
            GemmTypes::BF16,
            (4096, 4096, 4096),
            "gemm_sm100_prod/nn",
        ),
        (
            tn,
            gelu,
            GemmTypes::BF16,
            (4096, 4096, 4096),
            "gemm_sm100_bias_act/gelu",
        ),
    ] {
        let req = GemmRequest::contiguous(layout, epi, t, shape);
        let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
        assert_eq!(c.label(), want, "{}", req.describe());
        let (tensors, scalars) = req.arguments(c.artifact);
        let plan = plan_launch_with(&(c.artifact.signature)(), &tensors, &scalars, &b200.limits)
            .unwrap_or_else(|e| panic!("{want}: {e}"));
        if c.artifact.int("BN") == Some(256) {
            let staging = if t == GemmTypes::BF16 {
                64 << 10
            } else {
                128 << 10
            };
            let stages = if t == GemmTypes::BF16 { 5 } else { 3 };
            assert_eq!(
                plan.smem_bytes,
                stages * (32 << 10) + staging + 2064,
                "{want}"
            );
            assert_eq!((c.artifact.signature)().tmem_cols, 512, "{want}");
        }
    }
}

/// Small N on a B200 (described; nothing launched): at N = 64 a 128-column tile is half
/// empty, and M = 25600 gives 100 pair row tiles. The production kernel's 256×64 configs
/// (`n64*`: each CTA of the pair 128×64) compute those rows at half the MMA columns of the
/// single-CTA 128×128 tiles (`gemm_sm100_persistent/n128`, 200 tiles, two waves of 148 SMs
/// in the cost model) and of the 256×128 default, so the cost model picks them; at 4096³ the
/// narrower tile's lower efficiency and twice the tiles lose to the wider ones. The launch plan
/// of the small-N choice: whole clusters, eight 20 KiB stages and D's staging tile.
#[test]
fn blackwell_small_n_chooses_the_256x64_pair_tile() {
    let b200 = Device::b200();
    for (t, want, staging) in [
        (GemmTypes::BF16, "gemm_sm100_prod/n64", 16 << 10),
        (types(Bf16, F32), "gemm_sm100_prod/n64_bf16_f32", 32 << 10),
    ] {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, t, (25600, 64, 4096));
        let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
        assert_eq!(c.label(), want, "{}", req.describe());
        assert_eq!(c.artifact.int("BN"), Some(64));
        let (tensors, scalars) = req.arguments(c.artifact);
        let plan = plan_launch_with(&(c.artifact.signature)(), &tensors, &scalars, &b200.limits)
            .unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!(plan.cluster, [2, 1, 1], "{want}");
        assert!(
            plan.smem_bytes >= 8 * (20 << 10) + staging && plan.smem_bytes <= 227 << 10,
            "{want}: {} bytes",
            plan.smem_bytes
        );
    }
    let req = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (4096, 4096, 4096),
    );
    let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
        .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
    assert!(c.artifact.int("BN") >= Some(128), "{}", c.label());
}

/// A remembered choice is the fresh judgement's, under a key that tells apart everything the
/// judgement reads (here: an address off the 16-byte alignment TMA needs, β = 0 or not), and a
/// refusal is not remembered.
#[test]
fn remembered_choices_are_fresh_choices_under_keys_that_tell_layouts_apart() {
    let h200 = Device::h200();
    let at = |addr: u64, epi: Epilogue, shape| {
        let mut r = GemmRequest::contiguous(BLayout::Tn, epi, GemmTypes::BF16, shape);
        r.a.addr = addr;
        r
    };
    let key = |r: &GemmRequest| {
        let mut t = vec![&r.a, &r.b, &r.d];
        t.extend(r.c.as_ref());
        remember::key(r, &t, &[r.scalars.0, r.scalars.1], &h200)
    };
    let aligned = at(0x10_0000, Epilogue::Plain, (200, 4096, 4104));
    let off = at(0x10_0002, Epilogue::Plain, (200, 4096, 4104));
    assert_ne!(key(&aligned), key(&off));
    assert_eq!(
        key(&aligned),
        key(&at(0x20_0000, Epilogue::Plain, (200, 4096, 4104)))
    );
    let mut beta = at(0x10_0000, Epilogue::Scaled, (200, 4096, 4104));
    let k0 = key(&beta);
    beta.scalars.1 = 0.5;
    assert_ne!(k0, key(&beta));
    for r in [&aligned, &off] {
        let tensors = [&r.a, &r.b, &r.d];
        let fresh = choose(r, &catalogue::all(), &h200, Cache::host());
        let first = choose_remembered(r, &tensors, &[1.0, 0.0], &h200);
        let again = choose_remembered(r, &tensors, &[1.0, 0.0], &h200);
        match (fresh, first, again) {
            (Ok(f), Ok(a), Ok(b)) => {
                assert_eq!((a.label(), b.label()), (f.label(), f.label()));
                assert!(remember::is_remembered(&key(r)));
            }
            (Err(_), Err(_), Err(_)) => assert!(!remember::is_remembered(&key(r))),
            (f, a, b) => panic!("{f:?} / {a:?} / {b:?}"),
        }
    }
    // The misaligned A is refused by every TMA kernel: its choice is not the aligned one's.
    let aligned_choice = choose_remembered(
        &aligned,
        &[&aligned.a, &aligned.b, &aligned.d],
        &[1.0, 0.0],
        &h200,
    )
    .unwrap()
    .label();
    let off_choice = choose(&off, &catalogue::all(), &h200, Cache::host()).map(|c| c.label());
    assert_ne!(Some(aligned_choice), off_choice.ok());
}

/// The waves of a CTA pair (ladder levels 7–10 on a B200, described; nothing launched): a
/// 256-row pair tile occupies two SMs, so 148 SMs run 74 pair tiles at once. At 4096³ the
/// production kernel's 256×128 tiles are 16 × 32 = 512 pair tiles, 7 waves of one CTA's 128×128
/// each — where counting pair tiles over all 148 SMs (4 waves, each charged as two 128-row
/// tiles: 8) made it dearer than the single-CTA 128×128 tiles (`gemm_sm100_persistent/n128`,
/// 1024 tiles, 7 waves) and sent 4096³ there. The production kernel's default is chosen over
/// ladder level 9 (`gemm_sm100_tma_epi`, the same PTX but for the entry's name) by the tie
/// rule, never by the catalogue's order.
#[test]
fn blackwell_pair_tiles_count_waves_over_sm_pairs() {
    let b200 = Device::b200();
    let choice = |shape, t| {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, t, shape);
        choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()))
            .label()
    };
    // (shape, the choice): square, odd (12 × 40 pair tiles: 7 waves), and skinny N = 64 (the
    // 256×64 pair tiles: one 64-column MMA a CTA instead of half-empty 128-column ones).
    for (shape, want) in [
        ((4096, 4096, 4096), "gemm_sm100_prod/default"),
        ((3000, 5000, 2000), "gemm_sm100_prod/default"),
        ((8192, 64, 8192), "gemm_sm100_prod/n64"),
        ((16384, 64, 2048), "gemm_sm100_prod/n64"),
    ] {
        assert_eq!(choice(shape, GemmTypes::BF16), want, "{shape:?}");
    }
    assert_eq!(
        choice((4096, 4096, 4096), types(F16, F16)),
        "gemm_sm100_prod/f16"
    );
    // The wave count itself: the production default at 4096³ costs 7 waves of 128 columns
    // (×0.98 for the pair's multicast) plus one pipeline fill, not 4 × 2.
    let req = GemmRequest::contiguous(
        BLayout::Tn,
        Epilogue::Plain,
        GemmTypes::BF16,
        (4096, 4096, 4096),
    );
    let verdicts = judge(&req, &catalogue::all(), &b200);
    let cost = |kernel: &str, config: &str| {
        let v = verdicts
            .iter()
            .find(|v| v.kernel.name == kernel && v.artifact.config == config)
            .expect("judged");
        *v.outcome.as_ref().expect("accepted")
    };
    let fill = crate::gemm::request::fill_units(1, 4096);
    let want = 7.0 * 128.0 / crate::gemm::request::efficiency(128) * 0.98 + fill;
    let prod = cost("gemm_sm100_prod", "default");
    assert!((prod - want).abs() < 1e-6, "{prod} against {want}");
    // Level 9 and the production default: the same cost and launch; the tie goes to the
    // kernel with more artifacts, in the catalogue's order and reversed.
    assert_eq!(prod, cost("gemm_sm100_tma_epi", "default"));
    let mut back = verdicts.clone();
    back.reverse();
    for v in [&verdicts, &back] {
        let best = ranked(v);
        assert_eq!(
            (best[0].0.kernel.name, best[1].0.kernel.name),
            ("gemm_sm100_prod", "gemm_sm100_tma_epi")
        );
    }
}

/// The production kernel's 256×256 pair tiles (`n256*`: each CTA 128×256 of D, 512 TMEM
/// columns) on a B200 (described; nothing launched): at large M and N their waves of 256
/// columns, D stored by TMA, cost less than the 256×128 tiles' twice as many waves of 128
/// (efficiency 1.0 against 0.92) and than level 7/8's 256×256 tiles that store D from
/// registers (×1.02); at 4096³ the 256 pair tiles take 4 waves of 256 columns against 7 of
/// 128 for the 256×128 tiles, which stay the choice. The launch plan: five 32 KiB stages and
/// a 64 KiB staging tile (2064 bytes more of alignment, barriers and slots) within the 227 KiB.
#[test]
fn blackwell_large_shapes_choose_the_256x256_pair_tile() {
    let b200 = Device::b200();
    for (shape, t, want) in [
        ((8192, 8192, 8192), GemmTypes::BF16, "gemm_sm100_prod/n256"),
        (
            (16384, 16384, 4096),
            GemmTypes::BF16,
            "gemm_sm100_prod/n256",
        ),
        ((8192, 28672, 4096), GemmTypes::BF16, "gemm_sm100_prod/n256"),
        (
            (8192, 8192, 8192),
            types(F16, F16),
            "gemm_sm100_prod/n256_f16",
        ),
        (
            (4096, 4096, 4096),
            GemmTypes::BF16,
            "gemm_sm100_prod/default",
        ),
    ] {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, t, shape);
        let c = choose(&req, &catalogue::all(), &b200, &Cache::default())
            .unwrap_or_else(|e| panic!("{}: {e}", req.describe()));
        assert_eq!(c.label(), want, "{}", req.describe());
        let (tensors, scalars) = req.arguments(c.artifact);
        let plan = plan_launch_with(&(c.artifact.signature)(), &tensors, &scalars, &b200.limits)
            .unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!(plan.cluster, [2, 1, 1], "{want}");
        if c.artifact.int("BN") == Some(256) {
            assert_eq!(
                plan.smem_bytes,
                5 * (32 << 10) + (64 << 10) + 2064,
                "{want}"
            );
            assert_eq!((c.artifact.signature)().tmem_cols, 512, "{want}");
        }
    }
}

/// The driver's memory clock and bus width give the peak by CUDA's convention (two transfers a
/// clock, `width / 8` bytes each), and a device of a measured kind streams at its measured share
/// of that peak: the H100 SXM's and the H200's copies exactly, an H100 PCIe (HBM2e, 1593 MHz ×
/// 5120 bits) the H100 SXM's share of its 2.04 TB/s, an unmeasured kind the H100's share.
#[test]
fn the_hbm_rate_is_the_peak_at_the_measured_share() {
    let h100 = hbm_peak_bytes_per_s(2_619_000, 5120);
    let h200 = hbm_peak_bytes_per_s(3_201_000, 6144);
    assert!((h100 - 3.352e12).abs() < 1e9, "H100 peak {h100:e}");
    assert!((h200 - 4.917e12).abs() < 1e9, "H200 peak {h200:e}");
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-3;
    let sxm = hbm_bytes_per_s("NVIDIA H100 80GB HBM3", Some(h100));
    assert!(close(sxm, H100_HBM_BYTES_PER_S), "{sxm:e}");
    let h200_rate = hbm_bytes_per_s("NVIDIA H200", Some(h200));
    assert!(close(h200_rate, H200_HBM_BYTES_PER_S), "{h200_rate:e}");
    let pcie_peak = hbm_peak_bytes_per_s(1_593_000, 5120);
    let pcie = hbm_bytes_per_s("NVIDIA H100 PCIe", Some(pcie_peak));
    assert!(close(pcie, pcie_peak * HBM_SUSTAINED_SHARE), "{pcie:e}");
    assert!((1.7e12..1.8e12).contains(&pcie), "H100 PCIe {pcie:e}");
    let other = hbm_bytes_per_s("NVIDIA H20", Some(h200));
    assert!(close(other, h200 * HBM_SUSTAINED_SHARE), "{other:e}");
    // Without a GPU the measured copies stand, and an unmeasured name takes the H200's.
    assert_eq!(
        hbm_bytes_per_s("NVIDIA H100 80GB HBM3", None),
        H100_HBM_BYTES_PER_S
    );
    assert_eq!(hbm_bytes_per_s("NVIDIA B200", None), H200_HBM_BYTES_PER_S);
    assert!((0.85..0.86).contains(&HBM_SUSTAINED_SHARE));
}

/// The model's choice on an H100 at the shapes `docs/perf/h100-2026-12-06-stop48.md` timed
/// every accepted bf16 config at, with its slices where it splits K: the two where the
/// one-launch kernels' 128-row boxes are half zero fill take the 64-row split-K plan that
/// measured fastest (`gemm/request.rs`, `box_share`), and the choices that measured right stay.
#[test]
fn the_h100_takes_the_measured_split_plans_at_m64_and_keeps_the_rest() {
    let h100 = Device::h100();
    let choice = |shape: (usize, usize, usize)| {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, GemmTypes::BF16, shape);
        let c = choose(&req, &catalogue::all(), &h100, &Cache::default())
            .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        let splits = crate::gemm::split::is_partial(c.artifact).then(|| {
            crate::gemm::split::best_split(&req, c.artifact, &h100)
                .expect("a ranked plan has slices")
                .0
        });
        (c.label(), splits)
    };
    // M, N, K; the chosen `kernel/config`; its slices where it splits K.
    type Case = ((usize, usize, usize), &'static str, Option<usize>);
    let cases: &[Case] = &[
        // Mended: `ws/n64` 0.820 and `ws/n128` 0.952 of the fastest, which these were.
        ((64, 8192, 8192), "gemm_sm90_splitk/default", Some(2)),
        ((64, 14336, 4096), "gemm_sm90_splitk/n256", Some(2)),
        // Measured right (0.98–1.0 of the fastest config, or of cuBLASLt for the decode rows).
        ((1, 4096, 4096), "gemm_sm90_splitk_t/m16", Some(2)),
        ((8, 4096, 4096), "gemm_sm90_splitk_t/m16", Some(2)),
        ((64, 4096, 4096), "gemm_sm90_splitk/n64", Some(2)),
        ((128, 4096, 4096), "gemm_sm90_ws/n64", None),
        ((128, 8192, 8192), "gemm_sm90_ws/n64", None),
        ((256, 4096, 4096), "gemm_sm90_ws/n64", None),
        // The 128-row split-K tile, the fastest there (2026-12-07, 1.031 of cuBLASLt).
        ((128, 4096, 14336), "gemm_sm90_splitk/m128n64", Some(2)),
        // The large squares keep their tiles.
        ((4096, 4096, 4096), "gemm_sm90_tma_epi/default", None),
        ((8192, 8192, 8192), "gemm_sm90_tma_epi/default", None),
        ((5120, 5120, 5120), "gemm_sm90_tma_epi/n192", None),
    ];
    for (shape, label, splits) in cases {
        assert_eq!(choice(*shape), (label.to_string(), *splits), "{shape:?}");
    }
}

/// A one-launch kernel's boxes inside the tensors: all of them where the tiles divide M and N,
/// two thirds of a 128×64 tile's at M = 64 (64 + 64 of 192 rows), and a partial last tile
/// counted by its rows.
#[test]
fn the_box_share_counts_the_rows_inside_the_tensors() {
    use crate::gemm::request::box_share;
    let ws_n64 = catalogue::all()
        .iter()
        .flat_map(|k| k.artifacts.iter())
        .find(|a| a.kernel == "gemm_sm90_ws" && a.config == "n64")
        .expect("gemm_sm90_ws/n64 is shipped");
    let share = |shape| {
        let req = GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, GemmTypes::BF16, shape);
        box_share(&req, ws_n64)
    };
    assert_eq!(share((128, 8192, 8192)), 1.0);
    assert_eq!(share((4096, 4096, 4096)), 1.0);
    assert!((share((64, 8192, 8192)) - 2.0 / 3.0).abs() < 1e-12);
    // M = 192: two row tiles, the second half fill: (192·64 + 64·2) rows of 2·192 per column tile.
    assert!((share((192, 64, 4096)) - (192.0 + 128.0) / 384.0).abs() < 1e-12);
}
