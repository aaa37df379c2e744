//! Split-K in the emulator (issue #32): the partial-product kernel and the reduce kernel run
//! one after the other as the host runs them (`gemm::family::simulate_split_plan`), on shapes
//! with tails in M, N and K, with slice counts that do not divide the K tiles, each element
//! against the f64 reference within the GEMM family's bound (`sim_gemm.rs`'s: the f32
//! accumulation-order error plus half an ulp of D's type); and a planted bug in the reduce.

use tirx::KernelArtifact;
use tirx::runtime::{ElemType, Target};
use tirx_kernels::catalogue;
use tirx_kernels::family::SimRun;
use tirx_kernels::gemm::family::{SplitSim, simulate_split_plan};

fn splitk(config: &str) -> &'static KernelArtifact {
    catalogue::find("gemm_sm90_splitk")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == config)
        .expect("the sm_90a config")
}

fn run(config: &str, shape: (usize, usize, usize), plan: SplitSim, seed: u64) -> String {
    simulate_split_plan(splitk(config), shape, &SimRun::seeded(seed), plan)
        .unwrap_or_else(|e| panic!("{config} {shape:?} {plan:?}: {e}"))
        .1
}

/// Slices that do not divide the K tiles (6 tiles in 4 slices: 1, 2, 1, 2), a K tail inside
/// the last tile (328 = 5·64 + 8), tails in M and N; as many slices as K tiles; and slice
/// counts that take every path of the reduce's loop.
#[test]
fn split_k_sums_uneven_slices_with_tails() {
    let plan = |splits| SplitSim {
        splits: Some(splits),
        ..SplitSim::default()
    };
    println!("{}", run("default", (70, 136, 328), plan(4), 3));
    println!("{}", run("n64", (7, 264, 200), plan(4), 4));
    println!("{}", run("n64", (65, 72, 136), plan(2), 5));
    // The reduce's rounds of four slices and the slices left over: 10 K tiles in 6 slices
    // (one round of four, one left), in 9 (two rounds) and in 10 (two rounds, one left).
    for (splits, seed) in [(6, 10), (9, 11), (10, 12)] {
        println!("{}", run("n64", (7, 136, 632), plan(splits), seed));
    }
}

/// The scaled reduce (D = α·Σ + β·C, α = 1.5, β = −0.75) into f32 and f16, f16 inputs, and
/// three slices of five K tiles.
#[test]
fn split_k_scaled_into_f32_and_f16() {
    let plan = |output| SplitSim {
        splits: Some(3),
        scaled: true,
        output: Some(output),
        act: None,
        residual: false,
        rows: false,
    };
    println!("{}", run("f16", (33, 72, 264), plan(ElemType::F32), 6));
    println!("{}", run("f16_n64", (9, 136, 296), plan(ElemType::F16), 7));
    println!("{}", run("default", (17, 40, 320), plan(ElemType::Bf16), 8));
}

/// The fused epilogue after the reduce: D = act(A·Bᵀ + bias) for every activation, five
/// slices (one round of four, one left) of six K tiles.
#[test]
fn split_k_fused_bias_and_every_activation() {
    for (i, act) in tirx::problem::Act::ALL.into_iter().enumerate() {
        let plan = SplitSim {
            splits: Some(5),
            act: Some(act),
            ..SplitSim::default()
        };
        println!("{act:?}: {}", run("n64", (9, 72, 360), plan, 20 + i as u64));
    }
}

/// The fused epilogue with a residual after the reduce: D = act(A·Bᵀ + bias) + R (R in D's
/// type, added in f32 after the activation, `splitk_reduce_bias_res`), GELU and SiLU, five
/// slices of six K tiles.
#[test]
fn split_k_fused_bias_with_a_residual() {
    for (i, act) in [tirx::problem::Act::Gelu, tirx::problem::Act::Silu]
        .into_iter()
        .enumerate()
    {
        let plan = SplitSim {
            splits: Some(5),
            act: Some(act),
            residual: true,
            ..SplitSim::default()
        };
        println!("{act:?}: {}", run("n64", (9, 72, 360), plan, 30 + i as u64));
    }
}

/// The host's own choice of slices (the cost model on 132 SMs) at a decode-like shape with
/// an odd K, as `tirx sim gemm_sm90_splitk --m 7 --n 264 --k 4104` runs it.
#[test]
fn split_k_at_the_models_slices() {
    println!("{}", run("n64", (7, 264, 4104), SplitSim::default(), 9));
}

/// More slices than K tiles would leave a slice empty: refused before anything runs.
#[test]
fn split_k_refuses_empty_slices() {
    let plan = SplitSim {
        splits: Some(5),
        ..SplitSim::default()
    };
    let err = simulate_split_plan(splitk("default"), (7, 264, 200), &SimRun::seeded(1), plan)
        .unwrap_err();
    assert!(err.contains("2 ≤ S ≤ 4"), "{err}");
}

/// The transposed decode partial (`gemm_sm90_splitk_t`: B's rows on the MMA's 64-row side, A's
/// on its 16-column side, each slice stored as [N, M]) and its transposing reduce
/// (`splitk_reduce_t`), against the f64 reference with D poisoned: M = 1, 3 and 16 (a full
/// column block), N odd and not a multiple of 64 or of the reduce's vector, K with a tail
/// inside its last tile, slice counts that do not divide the K tiles and that take every path
/// of the reduce's loop.
fn transposed(config: &str) -> &'static KernelArtifact {
    catalogue::find("gemm_sm90_splitk_t")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == config)
        .expect("the sm_90a config")
}

/// The sm_90a config `config` of the FP8 split-K partial kernel (`fp8_splitk.rs`).
fn fp8_splitk(config: &str) -> &'static KernelArtifact {
    catalogue::find("gemm_sm90_fp8_splitk")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == config)
        .expect("the sm_90a config")
}

fn run_t(config: &str, shape: (usize, usize, usize), plan: SplitSim, seed: u64) -> String {
    simulate_split_plan(transposed(config), shape, &SimRun::seeded(seed), plan)
        .unwrap_or_else(|e| panic!("{config} {shape:?} {plan:?}: {e}"))
        .1
}

#[test]
fn split_k_transposed_decode_shapes() {
    let plan = |splits| SplitSim {
        splits: Some(splits),
        ..SplitSim::default()
    };
    println!("{}", run_t("m16", (1, 131, 328), plan(4), 40));
    println!("{}", run_t("m16_s10", (3, 77, 200), plan(2), 41));
    println!("{}", run_t("m16", (16, 129, 136), plan(3), 42));
    // 10 K tiles in 6 (one round of four, one left), 9 and 10 slices; f16 inputs.
    for (splits, seed) in [(6, 43), (9, 44), (10, 45)] {
        println!("{}", run_t("f16_m16", (5, 72, 632), plan(splits), seed));
    }
    // M past one column block: two row blocks of A, two of the reduce's.
    println!("{}", run_t("m16", (19, 65, 200), plan(2), 46));
}

/// The host's own choice of slices at a decode shape with an odd K tail (`K = 4104`).
#[test]
fn split_k_transposed_at_the_models_slices() {
    println!("{}", run_t("m16", (2, 200, 4104), SplitSim::default(), 47));
}

/// The transposing reduces of the other epilogues after the transposed partial: scaled
/// (α = 1.5, β = −0.75, C read) into f32, f16 and bf16; the fused bias and every activation;
/// bias, activation and a residual.
#[test]
fn split_k_transposed_every_epilogue() {
    let scaled = |output| SplitSim {
        splits: Some(3),
        scaled: true,
        output: Some(output),
        act: None,
        residual: false,
        rows: false,
    };
    println!(
        "{}",
        run_t("f16_m16", (3, 72, 264), scaled(ElemType::F32), 50)
    );
    println!(
        "{}",
        run_t("f16_m16", (9, 136, 296), scaled(ElemType::F16), 51)
    );
    println!(
        "{}",
        run_t("m16", (17, 40, 320), scaled(ElemType::Bf16), 52)
    );
    for (i, act) in tirx::problem::Act::ALL.into_iter().enumerate() {
        let plan = SplitSim {
            splits: Some(5),
            act: Some(act),
            ..SplitSim::default()
        };
        println!(
            "{act:?}: {}",
            run_t("m16", (3, 72, 360), plan, 53 + i as u64)
        );
    }
    for (i, act) in [tirx::problem::Act::Gelu, tirx::problem::Act::Silu]
        .into_iter()
        .enumerate()
    {
        let plan = SplitSim {
            splits: Some(5),
            act: Some(act),
            residual: true,
            ..SplitSim::default()
        };
        println!(
            "{act:?} + R: {}",
            run_t("m16", (5, 131, 360), plan, 60 + i as u64)
        );
    }
}

fn run_fp8(config: &str, shape: (usize, usize, usize), plan: SplitSim, seed: u64) -> String {
    simulate_split_plan(fp8_splitk(config), shape, &SimRun::seeded(seed), plan)
        .unwrap_or_else(|e| panic!("fp8 {config} {shape:?} {plan:?}: {e}"))
        .1
}

/// FP8 split-K with per-tensor scales (issue #29): the partials of E4M3 and E5M2 inputs over
/// K tiles of 128, then the reduce applying `scale_a·scale_b` to the sum, against the f64
/// reference of the same FP8 values — tails in M (130 = 128 + 2, 70), N (136 = 128 + 8,
/// 264 = 256 + 8) and K (400 = 3·128 + 16: the last tile's tail), slice counts that do not
/// divide the K tiles (4 tiles in 3 slices: 1, 1, 2), as many slices as K tiles, every output
/// type, D and the workspace poisoned first.
#[test]
fn fp8_split_k_per_tensor_with_tails() {
    let plan = |splits, output| SplitSim {
        splits: Some(splits),
        output: Some(output),
        ..SplitSim::default()
    };
    println!(
        "{}",
        run_fp8("default", (130, 136, 400), plan(3, ElemType::Bf16), 41)
    );
    println!(
        "{}",
        run_fp8("n256", (70, 264, 400), plan(4, ElemType::F32), 42)
    );
    println!(
        "{}",
        run_fp8("e5m2", (9, 136, 272), plan(2, ElemType::F16), 43)
    );
    println!(
        "{}",
        run_fp8("e5m2_n256", (130, 8, 656), plan(5, ElemType::Bf16), 44)
    );
}

/// FP8 split-K with row-wise scales: `sa[i]·sb[j]` (random, both signs) applied by the reduce
/// after the fixed-order sum, into BF16, FP16 and FP32, odd shapes and uneven slices.
#[test]
fn fp8_split_k_row_wise_with_tails() {
    let plan = |splits, output| SplitSim {
        splits: Some(splits),
        output: Some(output),
        rows: true,
        ..SplitSim::default()
    };
    println!(
        "{}",
        run_fp8("default", (130, 136, 400), plan(3, ElemType::Bf16), 51)
    );
    println!(
        "{}",
        run_fp8("n256", (70, 264, 528), plan(2, ElemType::F16), 52)
    );
    println!(
        "{}",
        run_fp8("e5m2", (33, 72, 400), plan(4, ElemType::F32), 53)
    );
}

/// FP8 split-K with promoted accumulation (`promoted`, `promoted_e5m2`: each slice's K tiles
/// summed in `part` and added into the f32 accumulator tile by tile, issue #29), per-tensor
/// and row-wise, slices of one and of several K tiles, a partial last K tile (400 = 3·128 + 16).
/// The emulator's wgmma accumulates exactly in f32, so this checks the promoted loop's
/// arithmetic and protocol, not the tensor core's precision (the GPU tests do).
#[test]
fn fp8_split_k_promoted_with_tails() {
    let plan = |splits, output, rows| SplitSim {
        splits: Some(splits),
        output: Some(output),
        rows,
        ..SplitSim::default()
    };
    println!(
        "{}",
        run_fp8(
            "promoted",
            (130, 136, 400),
            plan(3, ElemType::Bf16, false),
            71
        )
    );
    println!(
        "{}",
        run_fp8("promoted", (70, 264, 528), plan(2, ElemType::F32, true), 72)
    );
    println!(
        "{}",
        run_fp8(
            "promoted_e5m2",
            (33, 72, 400),
            plan(4, ElemType::F16, true),
            73
        )
    );
}

/// The host's own slices for an FP8 plan (the cost model on 132 SMs) at a shape with an odd
/// K, row-wise; and more slices than K tiles refused before anything runs.
#[test]
fn fp8_split_k_at_the_models_slices_and_refuses_empty_ones() {
    let rows = SplitSim {
        rows: true,
        ..SplitSim::default()
    };
    println!("{}", run_fp8("default", (72, 136, 1040), rows, 61));
    let plan = SplitSim {
        splits: Some(3),
        ..SplitSim::default()
    };
    let err = simulate_split_plan(
        fp8_splitk("default"),
        (7, 136, 208),
        &SimRun::seeded(1),
        plan,
    )
    .unwrap_err();
    assert!(err.contains("2 ≤ S ≤ 2"), "{err}");
}

/// The NN partial (`gemm_sm90_splitk`'s `nn` configs: B given K×N, read MN-major) through the
/// same reduces, against the f64 NN reference with D poisoned: tails in M, N (a multiple of 8,
/// as every NN kernel's TMA of B needs, not of 64: the last B box is part zero fill) and K,
/// slice counts that do not divide the K tiles, every path of the reduce's loop, bf16 and f16.
#[test]
fn split_k_nn_sums_uneven_slices_with_tails() {
    let plan = |splits| SplitSim {
        splits: Some(splits),
        ..SplitSim::default()
    };
    println!("{}", run("nn", (70, 136, 328), plan(4), 70));
    println!("{}", run("nn_n64", (1, 136, 1000), plan(3), 71));
    println!("{}", run("nn_n256", (37, 200, 4104), plan(5), 72));
    println!("{}", run("nn_f16", (64, 256, 2048), plan(2), 73));
    println!("{}", run("nn_f16_n64", (7, 264, 200), plan(4), 74));
    println!("{}", run("nn_f16_n256", (9, 264, 632), plan(6), 75));
}

/// The NN plan's scaled, fused and residual epilogues (the reduces are the TN plan's: they
/// never see B), and the host's own slices at a decode-like shape with an odd K.
#[test]
fn split_k_nn_every_epilogue_and_the_models_slices() {
    let scaled = SplitSim {
        splits: Some(3),
        scaled: true,
        output: Some(ElemType::F32),
        ..SplitSim::default()
    };
    println!("{}", run("nn_f16", (33, 72, 264), scaled, 76));
    let gelu = SplitSim {
        splits: Some(5),
        act: Some(tirx::problem::Act::Gelu),
        ..SplitSim::default()
    };
    println!("{}", run("nn_n64", (9, 72, 360), gelu, 77));
    let silu_res = SplitSim {
        act: Some(tirx::problem::Act::Silu),
        residual: true,
        ..gelu
    };
    println!("{}", run("nn", (5, 136, 360), silu_res, 78));
    println!("{}", run("nn_n64", (7, 264, 4104), SplitSim::default(), 79));
}

/// The NN decode partial (`gemm_sm90_splitk_t`'s `nn` configs: B given K×N, the MMA's A
/// operand read MN-major through wgmma's `imm-trans-a`) and the transposing reduces, against
/// the f64 NN reference with D poisoned: M = 1, 3 and 16 (a full column block) and past one
/// block, N a multiple of 8 (every NN kernel's TMA of B needs it) but not of 64 (the last B
/// box part zero fill), K with a tail inside its last tile, slice counts that do not divide
/// the K tiles and that take every path of the reduce's loop, bf16 and f16.
#[test]
fn split_k_transposed_nn_decode_shapes() {
    let plan = |splits| SplitSim {
        splits: Some(splits),
        ..SplitSim::default()
    };
    println!("{}", run_t("nn_m16", (1, 136, 328), plan(4), 80));
    println!("{}", run_t("nn_m16_s10", (3, 72, 200), plan(2), 81));
    println!("{}", run_t("nn_m16", (16, 200, 136), plan(3), 82));
    for (splits, seed) in [(6, 83), (9, 84), (10, 85)] {
        println!("{}", run_t("nn_f16_m16", (5, 72, 632), plan(splits), seed));
    }
    println!("{}", run_t("nn_f16_m16_s10", (19, 264, 200), plan(2), 86));
}

/// The NN decode plan's other epilogues (the transposing reduces never see B), and the host's
/// own slices at a decode shape with an odd K tail.
#[test]
fn split_k_transposed_nn_every_epilogue_and_the_models_slices() {
    let scaled = SplitSim {
        splits: Some(3),
        scaled: true,
        output: Some(ElemType::F16),
        ..SplitSim::default()
    };
    println!("{}", run_t("nn_f16_m16", (9, 136, 296), scaled, 87));
    let silu_res = SplitSim {
        splits: Some(5),
        act: Some(tirx::problem::Act::Silu),
        residual: true,
        ..SplitSim::default()
    };
    println!("{}", run_t("nn_m16", (3, 72, 360), silu_res, 88));
    println!(
        "{}",
        run_t("nn_m16", (2, 200, 4104), SplitSim::default(), 89)
    );
}
