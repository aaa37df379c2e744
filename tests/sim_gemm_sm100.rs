//! The emulator running the production Blackwell GEMMs (ladder level 10,
//! `kernels/src/gemm/level_10_prod_tcgen05.rs`): every input and output type, B given N×K
//! (TN) and K×N (NN), on shapes with tails in M, N and K and more tiles than clusters (the
//! walks wrap and the staging tile is reused while earlier stores may be in flight), against
//! the f64 reference with `sim_gemm.rs`'s bound. No Blackwell GPU was used.

use tirx_sim::{ClcMode, Policy};

use super::sim_exec::report;
use super::sim_gemm::{schedules, sm100, sms, typed_gemm_beta_zero, typed_gemm_on_device};

/// `gemm_sm100_prod` in a TN and an NN config of each output width (16-bit and f32), with
/// each input type among them: 6 tiles of 256×128 on two clusters (M = 300: a second pair
/// row of 44 rows, N = 264: a third column tile of 8, K = 136: a K tail), under every CLC
/// mode.
#[test]
fn gemm_sm100_prod_covers_types_and_b_layouts() {
    let mut runs = Vec::new();
    for (ci, (config, clc)) in [
        ("default", ClcMode::Random),
        ("f16_f32", ClcMode::Fail),
        ("nn", ClcMode::Succeed),
        ("nn_f16_bf16", ClcMode::Random),
        ("nn_bf16_f32", ClcMode::Fail),
    ]
    .into_iter()
    .enumerate()
    {
        runs.push(run_prod(config, clc, ci, (300, 264, 136), 201));
    }
    report("gemm_sm100_prod", &runs);
}

/// One emulator run of `gemm_sm100_prod`'s `config` on four SMs (two clusters) under CLC mode
/// `clc` and the `ci`-th schedule, seed `seed + ci`, against the f64 reference.
fn run_prod(
    config: &str,
    clc: ClcMode,
    ci: usize,
    shape: (usize, usize, usize),
    seed: u64,
) -> tirx_sim::Stats {
    let art = sm100("gemm_sm100_prod", config);
    let policy = Policy {
        clc,
        ..schedules()[ci % 3]
    };
    typed_gemm_on_device(art, art.ptx, shape, seed + ci as u64, &policy, &sms(4))
        .unwrap_or_else(|e| panic!("gemm_sm100_prod {config} {clc:?}: {e}"))
}

/// `gemm_sm100_prod`'s 256×64 pair tiles for small N (the `n64` configs: each CTA 128×64, its
/// half of B 32 rows, eight stages), a 16-bit and an f32 D: M = 300 (a second pair row of 44
/// rows), N = 72 (a second column tile of 8), K = 136 (a K tail) — 4 tiles on two clusters,
/// so the walks wrap — under two CLC modes.
#[test]
fn gemm_sm100_prod_n64_tiles_are_right_on_odd_shapes() {
    let mut runs = Vec::new();
    for (ci, (config, clc)) in [
        ("n64", ClcMode::Random),
        ("n64_bf16_f32", ClcMode::Succeed),
        ("n64_f16", ClcMode::Fail),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(
            sm100("gemm_sm100_prod", config).int("BN"),
            Some(64),
            "{config}"
        );
        runs.push(run_prod(config, clc, ci, (300, 72, 136), 301));
    }
    report("gemm_sm100_prod n64", &runs);
}

/// `gemm_sm100_prod`'s 256×256 pair tiles (the `n256` configs: each CTA 128×256 of D, its
/// half of B 128 rows, 512 TMEM columns for the two accumulator stages, the epilogue reading
/// one staging block of 64 — 32 for an f32 D — columns at a time), TN and NN (B K×N: each
/// CTA's 128 columns of B two 64-wide MN-major boxes), a 16-bit and an f32 D: M =
/// 300 (a second pair row of 44 rows), N = 520 (a third column tile of 8), K = 136 (a K tail)
/// — 6 tiles on two clusters, so the walks wrap and the staging tile is reused — under every
/// CLC mode.
#[test]
fn gemm_sm100_prod_n256_tiles_are_right_on_odd_shapes() {
    let mut runs = Vec::new();
    for (ci, (config, clc, stages)) in [
        ("n256", ClcMode::Random, 5),
        ("n256_bf16_f32", ClcMode::Succeed, 3),
        ("n256_f16", ClcMode::Fail, 5),
        ("nn_n256", ClcMode::Succeed, 5),
        ("nn_n256_bf16_f32", ClcMode::Random, 3),
        ("nn_n256_f16", ClcMode::Fail, 5),
    ]
    .into_iter()
    .enumerate()
    {
        let art = sm100("gemm_sm100_prod", config);
        assert_eq!(
            (art.int("BN"), art.int("STAGES")),
            (Some(256), Some(stages))
        );
        assert_eq!((art.signature)().tmem_cols, 512, "{config}");
        runs.push(run_prod(config, clc, ci, (300, 520, 136), 401));
    }
    report("gemm_sm100_prod n256", &runs);
}

/// `gemm_sm100_abc` (D = α·A·op(B) + β·C: C loaded by TMA into the staging tile while the
/// tile's MMAs finish, the accumulator read back in 64- or 32-column blocks) in TN and NN
/// configs with 16-bit and f32 outputs, α = 1.5, β = −0.75, on the same shape: 6 tiles on two
/// clusters, so C's loads into the staging tile follow earlier stores from it.
#[test]
fn gemm_sm100_abc_scales_and_adds_c() {
    let mut runs = Vec::new();
    for (ci, (config, clc)) in [
        ("default", ClcMode::Fail),
        ("nn_f16_f32", ClcMode::Random),
        ("bf16_f16", ClcMode::Succeed),
    ]
    .into_iter()
    .enumerate()
    {
        let art = sm100("gemm_sm100_abc", config);
        let policy = Policy {
            clc,
            ..schedules()[ci % 3]
        };
        let stats = typed_gemm_on_device(
            art,
            art.ptx,
            (300, 264, 136),
            211 + ci as u64,
            &policy,
            &sms(4),
        )
        .unwrap_or_else(|e| panic!("gemm_sm100_abc {config} {clc:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm100_abc", &runs);
}

/// `gemm_sm100_bias_act` (D = act(A·op(B) + bias), the bias loaded per 64-column block in the
/// accumulator's column-statistic layout): GELU and SiLU (the transcendental ones) in TN, ReLU
/// in NN and the plain bias in f16, on the same shape.
#[test]
fn gemm_sm100_bias_act_matches_the_reference() {
    let mut runs = Vec::new();
    for (ci, config) in ["gelu", "silu", "nn_relu", "bias_f16"]
        .into_iter()
        .enumerate()
    {
        let art = sm100("gemm_sm100_bias_act", config);
        let stats = typed_gemm_on_device(
            art,
            art.ptx,
            (300, 264, 136),
            221 + ci as u64,
            &schedules()[ci % 3],
            &sms(4),
        )
        .unwrap_or_else(|e| panic!("gemm_sm100_bias_act {config}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm100_bias_act", &runs);
}

/// `gemm_sm100_bias_act_res` (D = act(A·op(B) + bias) + R: R loaded by TMA into the staging
/// tile as `gemm_sm100_abc` loads C, each 64-column block through the bias and activation of
/// `gemm_sm100_bias_act`, R added in f32): GELU and SiLU in TN, ReLU in NN, the plain bias in
/// f16, on the same shape as the others (tails in M, N and K; 6 tiles on two clusters, so R's
/// loads into the staging tile follow earlier stores from it), under every CLC mode.
#[test]
fn gemm_sm100_bias_act_res_matches_the_reference() {
    let mut runs = Vec::new();
    for (ci, (config, clc)) in [
        ("gelu", ClcMode::Random),
        ("silu", ClcMode::Fail),
        ("nn_relu", ClcMode::Succeed),
        ("bias_f16", ClcMode::Random),
    ]
    .into_iter()
    .enumerate()
    {
        let art = sm100("gemm_sm100_bias_act_res", config);
        let policy = Policy {
            clc,
            ..schedules()[ci % 3]
        };
        let stats = typed_gemm_on_device(
            art,
            art.ptx,
            (300, 264, 136),
            251 + ci as u64,
            &policy,
            &sms(4),
        )
        .unwrap_or_else(|e| panic!("gemm_sm100_bias_act_res {config} {clc:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm100_bias_act_res", &runs);
}

/// A planted bug in the residual kernel: the epilogue's wait for R's TMA loads into the staging
/// tile removed (`r_bar`'s `try_wait` loop made one `test_wait`), so the warpgroup reads the
/// staged R while the loads may still be writing it — the emulator names the read.
#[test]
fn reading_the_staged_residual_before_its_load_lands_is_diagnosed() {
    let art = sm100("gemm_sm100_bias_act_res", "gelu");
    // The residual's wait: the first try_wait loop right after the epilogue's
    // `tcgen05.fence::after_thread_sync` (found by shape, not by register numbers, which
    // every compiler change renumbers). Planted: one test_wait, no retry.
    let lines: Vec<&str> = art.ptx.lines().collect();
    let wait = (0..lines.len())
        .filter(|&i| lines[i].contains("tcgen05.fence::after_thread_sync"))
        .find_map(|i| (i + 1..(i + 6).min(lines.len())).find(|&j| lines[j].contains("try_wait")))
        .expect("the epilogue waits for the staged residual after its fence");
    assert!(
        lines[wait + 1].contains("bra $L_loop_"),
        "the wait's retry branch follows it: {}",
        lines[wait + 1]
    );
    let no_wait: String = lines
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != wait + 1)
        .map(|(i, l)| {
            let l = if i == wait {
                l.replace("try_wait", "test_wait")
            } else {
                l.to_string()
            };
            l + "\n"
        })
        .collect();
    assert_ne!(
        no_wait, art.ptx,
        "the residual's wait is where the test expects it"
    );
    // Async completions held back (one in 40 steps), so R's loads are still in flight when
    // the MMAs of a short K are done.
    let late = schedules()[2];
    let errors: Vec<String> = (1..=4)
        .filter_map(|seed| {
            typed_gemm_on_device(art, &no_wait, (130, 136, 72), seed, &late, &sms(2)).err()
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("while the TMA load issued at line") && e.contains("reads shared")),
        "no early read of the staged residual diagnosed: {errors:?}"
    );
}

/// `gemm_sm100_abc` with β = 0 and C all NaN: D = α·A·op(B) exactly as BLAS says (C never
/// used: the staged C is loaded but the `selp` on β ≠ 0 drops it), α = −2, one cluster with
/// a one-tile walk (tails in M, N and K). A planted bug — the test `β ≠ 0` made always true
/// (compared with NaN, which `setp.neu` finds unequal to anything) — lets the NaNs through.
#[test]
fn gemm_sm100_abc_never_uses_c_when_beta_is_zero() {
    for config in ["default", "bf16_f32"] {
        let art = sm100("gemm_sm100_abc", config);
        let stats = typed_gemm_beta_zero(art, art.ptx, (130, 136, 72), 231, &sms(2), -2.0)
            .unwrap_or_else(|e| panic!("gemm_sm100_abc {config} with beta = 0: {e}"));
        report("gemm_sm100_abc, beta = 0", &[stats]);
    }
    let art = sm100("gemm_sm100_abc", "default");
    let planted: String = art
        .ptx
        .lines()
        .map(|l| {
            if l.starts_with("\tsetp.neu.f32") && l.ends_with(", 0f00000000;") {
                l.replace(", 0f00000000;", ", 0f7FC00000;")
            } else {
                l.to_string()
            }
        })
        .flat_map(|l| [l, "\n".to_string()])
        .collect();
    assert_ne!(planted, art.ptx);
    let e = typed_gemm_beta_zero(art, &planted, (130, 136, 72), 231, &sms(2), -2.0).unwrap_err();
    assert!(e.contains("NaN"), "{e}");
}

/// The fused epilogues on the 256×256 pair tiles (`n256_*`: TN, `nn_n256_*`: NN, five stages,
/// 512 TMEM columns, the bias — and R — read per 64-column block as on the 256×128 tiles), on
/// M = 300, N = 520, K = 136 (tails in every dimension; 6 tiles on two clusters, so the walks
/// wrap and R's loads follow earlier stores from the staging tile), under every CLC mode.
#[test]
fn the_fused_epilogues_on_n256_tiles_match_the_reference() {
    let mut runs = Vec::new();
    for (ci, (kernel, config, clc)) in [
        ("gemm_sm100_bias_act", "n256_gelu", ClcMode::Random),
        ("gemm_sm100_bias_act", "nn_n256_silu", ClcMode::Fail),
        ("gemm_sm100_bias_act_res", "n256_relu", ClcMode::Succeed),
        ("gemm_sm100_bias_act_res", "nn_n256_gelu", ClcMode::Random),
    ]
    .into_iter()
    .enumerate()
    {
        let art = sm100(kernel, config);
        assert_eq!(
            (art.int("BN"), art.int("STAGES")),
            (Some(256), Some(5)),
            "{kernel} {config}"
        );
        assert_eq!((art.signature)().tmem_cols, 512, "{kernel} {config}");
        let policy = Policy {
            clc,
            ..schedules()[ci % 3]
        };
        let stats = typed_gemm_on_device(
            art,
            art.ptx,
            (300, 520, 136),
            611 + ci as u64,
            &policy,
            &sms(4),
        )
        .unwrap_or_else(|e| panic!("{kernel} {config} {clc:?}: {e}"));
        runs.push(stats);
    }
    report("the fused epilogues on n256 tiles", &runs);
}
