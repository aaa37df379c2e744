//! The emulator (`tirx-sim`, issue #10) running the shipped GEMMs: one config of every Hopper
//! kind (wgmma; TN and NN; bf16/f16 in; bf16/f16/f32 out; α/β epilogues; clusters with
//! multicast TMA; TMA-store epilogues) and the Blackwell GEMM (tcgen05 and tensor memory), on
//! shapes with tails in M, N and K, against the f64 reference; and planted bugs in both.
//! Parameters are planned as the runtime plans them (`sim_exec.rs`'s `sim_launch`).
//!
//! Bound, per element of D: the f32 accumulation-order error `acc = (K + 2)·2⁻²³·(|α|·Σ|a·b| +
//! |β·c|)` (the emulator sums each K = 16 step's exact products in f64 and rounds once into
//! the f32 accumulator; the tensor core's order and rounding differ) plus half an ulp of D's
//! type at the accumulated value.

use tirx::KernelArtifact;
use tirx::problem::{Epilogue, GemmProblem, Problem};
use tirx::runtime::{DeviceLimits, ElemType, Target, TensorMeta};
use tirx_kernels::catalogue;
use tirx_kernels::gemm::reference::activate;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{decode, random_values};
use tirx_sim::{ClcMode, Device, Policy, Stats};

use super::sim_exec::{EMULATED, report, sim_launch_on};

pub(crate) fn sm90(kernel: &str, config: &str) -> &'static KernelArtifact {
    catalogue::find(kernel)
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == config)
        .expect("the sm_90a config")
}

/// The Hopper GEMM through TMA, mbarriers and wgmma on odd shapes (tails in M, N and K, a
/// single K tile, more K tiles than stages).
#[test]
fn gemm_sm90_runs_through_wgmma() {
    let art = sm90("gemm_sm90", "default");
    let mut runs = Vec::new();
    // K = 320: five K tiles on four stages, so stages are reused. One thread of the consumer
    // warpgroup releases a stage after its own `wgmma.wait_group`; that is right only because
    // a warpgroup's MMA is one operation, retired for all four warps at once (an emulator that
    // retired each warp's share separately saw the stage refilled under the other warps).
    for (shape, seed) in [
        ((130, 136, 72), 31),
        ((64, 8, 16), 32),
        ((200, 136, 320), 1),
        ((200, 136, 320), 2),
    ] {
        let stats = typed_gemm_case(art, shape, seed)
            .unwrap_or_else(|e| panic!("gemm_sm90 {shape:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90", &runs);
}

/// A planted bug: the consumer's `wgmma.wait_group 0` removed, so the epilogue reads
/// accumulator registers an MMA still owns.
#[test]
fn reading_the_accumulator_before_wgmma_wait_group_is_diagnosed() {
    let art = sm90("gemm_sm90", "default");
    let text = art.ptx.replace("\twgmma.wait_group.sync.aligned 0;\n", "");
    assert_ne!(text, art.ptx);
    let e = typed_gemm_on(art, &text, (64, 64, 64), 3).unwrap_err();
    assert!(e.contains("still owns it"), "{e}");
}

/// A GEMM artifact of any element types, B given N×K (TN) or K×N (NN), with `c`, `alpha`,
/// `beta` when it takes them: D = α·A·op(B) + β·C against the f64 reference, each element within half an ulp of D's type
/// plus the f32 accumulation-order bound `(K + 2) · 2⁻²³ · (|α|·Σ|a·b| + |β·c|)`.
pub(crate) fn typed_gemm_case(
    art: &KernelArtifact,
    (m, n, kk): (usize, usize, usize),
    seed: u64,
) -> Result<Stats, String> {
    typed_gemm_on(art, art.ptx, (m, n, kk), seed)
}

/// [`typed_gemm_case`] on another PTX text for the artifact's signature (a planted bug).
fn typed_gemm_on(
    art: &KernelArtifact,
    ptx_text: &str,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<Stats, String> {
    typed_gemm_with(art, ptx_text, shape, seed, &Policy::default())
}

/// [`typed_gemm_on`] under a scheduling policy other than the default.
pub(crate) fn typed_gemm_with(
    art: &KernelArtifact,
    ptx_text: &str,
    shape: (usize, usize, usize),
    seed: u64,
    policy: &Policy,
) -> Result<Stats, String> {
    typed_gemm_on_device(art, ptx_text, shape, seed, policy, &EMULATED)
}

/// [`typed_gemm_with`] on a device of other limits (a persistent kernel's grid is its SMs).
pub(crate) fn typed_gemm_on_device(
    art: &KernelArtifact,
    ptx_text: &str,
    shape: (usize, usize, usize),
    seed: u64,
    policy: &Policy,
    limits: &DeviceLimits,
) -> Result<Stats, String> {
    typed_gemm_scaled(art, ptx_text, shape, seed, policy, limits, None)
}

/// [`typed_gemm_on_device`] with `alpha` and β = 0 for a kernel that takes C (instead of
/// α = 1.5, β = −0.75): C is filled with NaN, which BLAS's β = 0 says is never read.
pub(crate) fn typed_gemm_beta_zero(
    art: &KernelArtifact,
    ptx_text: &str,
    shape: (usize, usize, usize),
    seed: u64,
    limits: &DeviceLimits,
    alpha: f32,
) -> Result<Stats, String> {
    let policy = Policy::default();
    typed_gemm_scaled(art, ptx_text, shape, seed, &policy, limits, Some(alpha))
}

/// The run and the check behind [`typed_gemm_on_device`]; `beta_zero: Some(α)` runs a
/// kernel that takes C with that α, β = 0 and C all NaN.
fn typed_gemm_scaled(
    art: &KernelArtifact,
    ptx_text: &str,
    (m, n, kk): (usize, usize, usize),
    seed: u64,
    policy: &Policy,
    limits: &DeviceLimits,
    beta_zero: Option<f32>,
) -> Result<Stats, String> {
    let sig = (art.signature)();
    let elem = |name: &str| sig.tensors.iter().find(|t| t.name == name).map(|t| t.elem);
    let (ta, td) = (elem("a").expect("a"), elem("d").expect("d"));
    // `nn` kernels take B as K×N (MN-major for the tensor core), the others N×K.
    let nn = tirx_kernels::simulate::b_is_k_by_n(art);
    let mut rng = Rng::new(seed);
    let (ab, av) = random_values(&mut rng, ta, m * kk);
    let (bb, bv) = random_values(&mut rng, ta, n * kk);
    let tc = elem("c");
    let (mut cb, mut cv) = random_values(&mut rng, tc.unwrap_or(td), m * n);
    let (alpha, beta) = match (tc, beta_zero) {
        (Some(_), Some(alpha)) => {
            // NaN in every float type; the reference's C term is β·0.
            cb.fill(0xff);
            cv.fill(0.0);
            (alpha, 0.0)
        }
        (Some(_), None) => (1.5f32, -0.75f32),
        (None, _) => (1.0, 0.0),
    };
    let mut dev = Device::new();
    let mut put = |bytes: &[u8], elem: ElemType, shape: &[usize]| {
        let addr = dev.alloc(bytes.len());
        dev.write(addr, bytes).expect("in bounds");
        TensorMeta::row_major(elem, shape, addr)
    };
    let am = put(&ab, ta, &[m, kk]);
    let b_shape = if nn { [kk, n] } else { [n, kk] };
    let bm = put(&bb, ta, &b_shape);
    let cm = put(&cb, tc.unwrap_or(td), &[m, n]);
    // D = act(A·Bᵀ + bias) kernels: the activation from the artifact's problem, as data.
    let act = match art.problem {
        Some(Problem::Gemm(GemmProblem {
            epilogue: Epilogue::Bias(act) | Epilogue::BiasResidual(act),
            ..
        })) => Some(act),
        _ => None,
    };
    let tbias = elem("bias").unwrap_or(td);
    let (biasb, biasv) = random_values(&mut rng, tbias, n);
    let biasm = put(&biasb, tbias, &[n]);
    // D = act(A·op(B) + bias) + R kernels: R drawn after every other input.
    let residual = elem("res").map(|tr| {
        let (rb, rv) = random_values(&mut rng, tr, m * n);
        (put(&rb, tr, &[m, n]), rv)
    });
    let dbytes = m * n * td.bytes() as usize;
    let dm = put(&vec![0xff; dbytes], td, &[m, n]);
    let tensors: Vec<TensorMeta> = sig
        .tensors
        .iter()
        .map(|t| match t.name.as_str() {
            "a" => am.clone(),
            "b" => bm.clone(),
            "c" => cm.clone(),
            "d" => dm.clone(),
            "bias" => biasm.clone(),
            "res" => residual.as_ref().expect("drawn for `res`").0.clone(),
            other => panic!("a GEMM tensor {other}"),
        })
        .collect();
    let scalars: Vec<f32> = sig
        .scalars
        .iter()
        .map(|s| if s == "alpha" { alpha } else { beta })
        .collect();
    let planned = (&tensors[..], &scalars[..]);
    let stats = sim_launch_on(ptx_text, &sig, &mut dev, planned, seed, policy, limits)
        .map_err(|e| e.to_string())?;
    let got = decode(&dev.read(dm.addr, dbytes).expect("in bounds"), td);
    let half_ulp = match td {
        ElemType::Bf16 => 1.0 / 256.0,
        ElemType::F16 => 1.0 / 2048.0,
        ElemType::F32 => 1.0 / 16_777_216.0,
        ElemType::E4m3 => 1.0 / 16.0,
        ElemType::E5m2 => 1.0 / 8.0,
        ElemType::Ue8m0
        | ElemType::Ue4m3
        | ElemType::E2m1x2
        | ElemType::E3m2
        | ElemType::E2m3
        | ElemType::E2m1 => 1.0,
        ElemType::I32 | ElemType::U32 | ElemType::I8 | ElemType::U8 => 0.0,
        ElemType::I64 | ElemType::U64 => 0.0,
    };
    for i in 0..m {
        for j in 0..n {
            let (mut dot, mut mag) = (0.0, 0.0);
            for p in 0..kk {
                let b = if nn { bv[p * n + j] } else { bv[j * kk + p] };
                dot += av[i * kk + p] * b;
                mag += (av[i * kk + p] * b).abs();
            }
            let c = if tc.is_some() { cv[i * n + j] } else { 0.0 };
            let mut w = f64::from(alpha) * dot + f64::from(beta) * c;
            let scale = f64::from(alpha.abs()) * mag + (f64::from(beta) * c).abs();
            // D rounded (half an ulp of the result) after an f32 accumulation error `acc`.
            let mut acc = (kk as f64 + 2.0) * scale / 8_388_608.0;
            if let Some(act) = act {
                // The activations' slopes are below 1.2, and their f32 evaluation (tanh.approx,
                // ex2.approx and rcp.approx computed exactly here) adds a few f32 ulps.
                let x = w + biasv[j];
                w = activate(act, x);
                acc = 1.2 * acc + 4.0 * (x.abs() + 1.0) / 8_388_608.0;
            }
            if let Some((_, rv)) = &residual {
                // R added in f32 after the activation: one more f32 rounding.
                let r = rv[i * n + j];
                acc += (w.abs() + r.abs()) / 8_388_608.0;
                w += r;
            }
            let bound = (w.abs() + acc) * half_ulp + acc + 1e-30;
            let g = got[i * n + j];
            if (g - w).abs() > bound || g.is_nan() {
                return Err(format!("({i}, {j}): {g} vs {w:.6e} (bound {bound:.2e})"));
            }
        }
    }
    Ok(stats)
}

/// One config of every Hopper GEMM whose operands are K-major — the ladder from the
/// synchronous level to the persistent, clustered, TMA-epilogue and α/β kernels, with f16
/// inputs and f16/f32 outputs among them — on a shape with tails in M, N and K.
#[test]
fn every_hopper_gemm_kind_matches_the_reference() {
    let mut runs = Vec::new();
    for (kernel, config) in [
        ("gemm_sm90_sync", "default"),
        ("gemm_sm90_tma", "default"),
        ("gemm_sm90_ws1", "default"),
        ("gemm_sm90_2wg", "default"),
        ("gemm_sm90_ws", "f16_f32_n64"),
        ("gemm_sm90_cluster", "bf16_f32"),
        ("gemm_sm90_tma_epi", "f16"),
        ("gemm_sm90_pair_n", "bf16_f16"),
        ("gemm_sm90_tma_epi_abc", "n64"),
        ("gemm_sm90_pair_n_abc", "f16_f32"),
        // B given K×N: MN-major B operands.
        ("gemm_sm90_ws", "nn_n64"),
        ("gemm_sm90_cluster", "nn_f16_f32"),
        ("gemm_sm90_tma_epi_abc", "nn_bf16_f16_n128"),
    ] {
        let art = sm90(kernel, config);
        let stats = typed_gemm_case(art, (130, 136, 72), 41)
            .unwrap_or_else(|e| panic!("{kernel} {config}: {e}"));
        runs.push(stats);
    }
    report("hopper gemms", &runs);
}

/// The Blackwell GEMM (tcgen05.mma into tensor memory, tcgen05.commit to the pipeline's
/// mbarriers, tcgen05.ld in the epilogue) against the f64 reference on odd shapes: the first
/// numeric check of an sm_100a kernel here (no Blackwell GPU; the emulator verifies it).
#[test]
fn gemm_sm100_runs_through_tcgen05() {
    let k = catalogue::find("gemm_sm100").expect("shipped");
    let mut runs = Vec::new();
    for art in k.artifacts.iter().filter(|a| a.target == Target::Sm100a) {
        // Seeds 51..=54 on the odd shape: MMAs of one thread must complete in issue order
        // (seed 2 of `tirx sim` caught an emulator that let commits complete out of order).
        for (shape, seed) in [
            ((130, 136, 72), 51),
            ((130, 136, 72), 52),
            ((130, 136, 72), 53),
            ((130, 72, 200), 2),
            ((128, 256, 64), 54),
        ] {
            let stats = typed_gemm_case(art, shape, seed)
                .unwrap_or_else(|e| panic!("gemm_sm100 {} {shape:?}: {e}", art.config));
            runs.push(stats);
        }
    }
    report("gemm_sm100", &runs);
}

/// Planted bugs in the Blackwell GEMM: the epilogue's first `tcgen05.wait::ld` removed (its
/// registers read before the load completes), and the `tcgen05.dealloc` removed (the CTA
/// exits holding tensor memory).
#[test]
fn planted_bugs_in_the_blackwell_gemm_are_diagnosed() {
    let art = catalogue::find("gemm_sm100").expect("shipped").artifacts[0..]
        .iter()
        .find(|a| a.target == Target::Sm100a)
        .expect("an sm_100a artifact");
    let no_wait = art
        .ptx
        .replacen("\ttcgen05.wait::ld.sync.aligned;\n", "", 1);
    assert_ne!(no_wait, art.ptx);
    let e = typed_gemm_on(art, &no_wait, (128, 128, 64), 1).unwrap_err();
    assert!(e.contains("before tcgen05.wait::ld"), "{e}");
    let no_dealloc: String = art
        .ptx
        .lines()
        .filter(|l| !l.contains("tcgen05.dealloc"))
        .flat_map(|l| [l, "\n"])
        .collect();
    let e = typed_gemm_on(art, &no_dealloc, (128, 128, 64), 1).unwrap_err();
    assert!(e.contains("tensor memory still allocated"), "{e}");
}

/// A planted missing fence in the Blackwell GEMMs: every `tcgen05.fence::after_thread_sync`
/// removed, so the epilogue's `tcgen05.ld` after its wait on the MMA's commit is not ordered
/// after the MMA (PTX ISA §9.7.16.6.4) — the emulator names the load, the cell and the MMA.
#[test]
fn a_missing_tcgen05_fence_after_the_wait_is_diagnosed() {
    for kernel in ["gemm_sm100", "gemm_sm100_ws"] {
        let art = catalogue::find(kernel).expect("shipped").artifacts[0..]
            .iter()
            .find(|a| a.target == Target::Sm100a)
            .expect("an sm_100a artifact");
        let unfenced = art.ptx.replace("\ttcgen05.fence::after_thread_sync;\n", "");
        assert_ne!(unfenced, art.ptx);
        typed_gemm_on(art, art.ptx, (128, 128, 64), 1).expect("the shipped kernel runs");
        let e = typed_gemm_on(art, &unfenced, (128, 128, 64), 1).unwrap_err();
        assert!(
            e.contains("without a tcgen05.fence::after_thread_sync") && e.contains("tcgen05.ld"),
            "{kernel}: {e}"
        );
    }
}

/// Planted pipeline bugs in the Blackwell GEMM, five K tiles on four stages: the producer
/// waits on the wrong parity of the stage-free barrier (a deadlock naming each barrier's
/// phase), or tests it once instead of waiting (`test_wait`, no retry), so a TMA load
/// overwrites a stage an MMA still reads (or arms a full barrier twice in one phase); and the
/// Hopper TMA-store epilogue without its `fence.proxy.async`, so the TMA store reads
/// generic-proxy writes unfenced.
#[test]
fn planted_pipeline_and_fence_bugs_are_diagnosed() {
    let art = catalogue::find("gemm_sm100").expect("shipped").artifacts[0..]
        .iter()
        .find(|a| a.target == Target::Sm100a)
        .expect("an sm_100a artifact");
    let shape = (128, 256, 320);
    let wrong_parity = art.ptx.replacen(
        "\txor.b32 %r974, %r1003, 1;\n",
        "\tmov.b32 %r974, %r1003;\n",
        1,
    );
    assert_ne!(wrong_parity, art.ptx);
    let e = typed_gemm_on(art, &wrong_parity, shape, 1).unwrap_err();
    assert!(
        e.contains("deadlock") && e.contains("waits for parity 0"),
        "{e}"
    );
    let no_wait = art.ptx.replacen(
        "\tmbarrier.try_wait.parity.shared::cta.b64 %p975, [%r973], %r974;\n\t@!%p975 bra $L_loop_5;\n",
        "\tmbarrier.test_wait.parity.shared::cta.b64 %p975, [%r973], %r974;\n",
        1,
    );
    assert_ne!(no_wait, art.ptx);
    let errors: Vec<String> = (1..=6)
        .filter_map(|seed| typed_gemm_on(art, &no_wait, shape, seed).err())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("still reads")),
        "no overwrite of a stage in use diagnosed: {errors:?}"
    );
    let epi = sm90("gemm_sm90_tma_epi", "default");
    let no_fence = epi.ptx.replace("\tfence.proxy.async.shared::cta;\n", "");
    assert_ne!(no_fence, epi.ptx);
    let e = typed_gemm_on(epi, &no_fence, (130, 136, 72), 1).unwrap_err();
    assert!(
        e.contains("the TMA store reads") && e.contains("without a fence.proxy.async"),
        "{e}"
    );
}

/// The fused bias + activation GEMMs (D = act(A·Bᵀ + bias), act from the artifact's problem:
/// none, ReLU, GELU in its tanh form, SiLU) against the f64 reference.
#[test]
fn bias_activation_gemms_match_the_reference() {
    let mut runs = Vec::new();
    // GELU and SiLU: the two with transcendental functions (`bias` and `relu` ran once too).
    for config in ["gelu_n128", "silu_n128"] {
        let art = sm90("gemm_sm90_bias_act", config);
        let stats = typed_gemm_case(art, (130, 136, 72), 61)
            .unwrap_or_else(|e| panic!("gemm_sm90_bias_act {config}: {e}"));
        runs.push(stats);
    }
    report("bias/activation gemms", &runs);
}

/// The fused epilogue with a residual on Hopper (`gemm_sm90_bias_act_res`, D = act(A·Bᵀ +
/// bias) + R: R loaded by TMA into the staging tile before each tile's K loop, read back into
/// the accumulator's layout after it) against the f64 reference: 6 tiles of 128×128 on two
/// clusters (M = 300, N = 264, K = 136: tails in all three, and the staging tile refilled with
/// R while earlier stores from it may be in flight), GELU, SiLU and ReLU.
#[test]
fn residual_gemms_on_hopper_match_the_reference() {
    let mut runs = Vec::new();
    for (ci, config) in ["gelu", "silu", "relu"].into_iter().enumerate() {
        let art = sm90("gemm_sm90_bias_act_res", config);
        let stats = typed_gemm_on_device(
            art,
            art.ptx,
            (300, 264, 136),
            241 + ci as u64,
            &schedules()[ci % 3],
            &sms(4),
        )
        .unwrap_or_else(|e| panic!("gemm_sm90_bias_act_res {config}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90_bias_act_res", &runs);
}

/// `setmaxnreg` on a shipped warp-specialised GEMM (384 threads: the producer warpgroup
/// lowers its count to 40, the two consumer warpgroups raise theirs to 232). Launched at 168
/// registers per thread (what a 384-thread CTA gets of the 64K file) the split fits exactly:
/// 4·32·40 + 8·32·232 = 12·32·168. At 160 the consumers' `.inc` can never be granted, and the
/// deadlock report says so.
#[test]
fn the_warp_specialised_register_split_fits_its_launch() {
    let art = sm90("gemm_sm90_ws", "f16_f32_n64");
    let at = |regs: u32| Policy {
        launch_regs: Some(regs),
        ..Policy::default()
    };
    typed_gemm_with(art, art.ptx, (130, 136, 72), 41, &at(168)).expect("fits at 168");
    let e = typed_gemm_with(art, art.ptx, (130, 136, 72), 41, &at(160)).unwrap_err();
    assert!(
        e.contains("deadlock") && e.contains("setmaxnreg.inc to 232"),
        "{e}"
    );
}

/// The sm_100a artifact of `kernel`'s `config`.
pub(crate) fn sm100(kernel: &str, config: &str) -> &'static KernelArtifact {
    catalogue::find(kernel)
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm100a && a.config == config)
        .expect("the sm_100a config")
}

/// The schedules the Blackwell ladder runs under besides the seeds: the default policy; short
/// bursts with async operations completing almost at once and waits failing often; long
/// bursts with slow completion (a warp runs far ahead of the tensor core and TMA).
pub(crate) fn schedules() -> [Policy; 3] {
    [
        Policy::default(),
        Policy {
            max_burst: 2,
            complete_one_in: 2,
            spurious_wait_one_in: 3,
            ..Policy::default()
        },
        Policy {
            max_burst: 400,
            complete_one_in: 40,
            spurious_wait_one_in: 0,
            ..Policy::default()
        },
    ]
}

/// Level 4 on Blackwell (`gemm_sm100_ws`: a TMA warp, an MMA warp and a TMEM epilogue
/// warpgroup, registers moved between them by `setmaxnreg`) against the f64 reference: tails in
/// M, N and K, a single K tile, more K tiles than stages (five on four), under every schedule.
#[test]
fn gemm_sm100_ws_runs_through_its_warp_roles() {
    let art = sm100("gemm_sm100_ws", "default");
    let mut runs = Vec::new();
    for (i, policy) in schedules().iter().enumerate() {
        for (shape, seed) in [
            ((130, 136, 72), 71),
            ((64, 8, 16), 72),
            ((130, 300, 320), 73),
        ] {
            let seed = seed + 10 * i as u64;
            let stats = typed_gemm_with(art, art.ptx, shape, seed, policy)
                .unwrap_or_else(|e| panic!("gemm_sm100_ws {shape:?} schedule {i}: {e}"));
            runs.push(stats);
        }
    }
    report("gemm_sm100_ws", &runs);
}

/// A device of `sms` SMs: the persistent kernel's grid, so that the walk wraps.
pub(crate) fn sms(sms: u32) -> DeviceLimits {
    DeviceLimits {
        sm_count: sms,
        ..EMULATED
    }
}

/// Level 6 on Blackwell (`gemm_sm100_persistent`: the accumulator double-buffered in TMEM)
/// with more tiles than CTAs, so each CTA walks several tiles and both accumulator stages are
/// reused: 6 tiles of 128×256 on 2 CTAs (3 each), 9 tiles of 128×128 on 2 CTAs (5 and 4, eight
/// K tiles on six stages) and 6 on one CTA (each stage three times), with tails in M, N and K,
/// under every schedule.
#[test]
fn gemm_sm100_persistent_reuses_both_accumulator_stages() {
    let mut runs = Vec::new();
    for (i, policy) in schedules().iter().enumerate() {
        for (config, shape, ctas, seed) in [
            ("default", (260, 300, 136), 2, 81),
            ("n128", (300, 264, 456), 2, 82),
            ("n128", (130, 300, 72), 1, 83),
        ] {
            let art = sm100("gemm_sm100_persistent", config);
            let seed = seed + 10 * i as u64;
            let stats = typed_gemm_on_device(art, art.ptx, shape, seed, policy, &sms(ctas))
                .unwrap_or_else(|e| {
                    panic!(
                        "gemm_sm100_persistent {config} {shape:?} on {ctas} CTAs, schedule {i}: {e}"
                    )
                });
            runs.push(stats);
        }
    }
    report("gemm_sm100_persistent", &runs);
}

/// Level 7 on Blackwell (`gemm_sm100_pair`: 256-row tiles over a CTA pair, the pair's loads
/// completing on the even CTA's barriers, its MMAs and multicast commits issued by the even CTA)
/// with more pair tiles than clusters, so each cluster walks several tiles and both accumulator
/// stages are reused: 6 tiles of 256×256 on one cluster (M = 520: a third pair row whose odd
/// CTA holds 8 rows), 4 tiles of 256×128 on two clusters (nine K tiles on eight stages, an
/// N tail), and one K tile on one cluster, with tails in M, N and K, under every schedule.
#[test]
fn gemm_sm100_pair_walks_its_tiles_over_the_pair() {
    let mut runs = Vec::new();
    for (i, policy) in schedules().iter().enumerate() {
        for (config, shape, ctas, seed) in [
            ("default", (520, 300, 136), 2, 101),
            ("n128", (300, 200, 552), 4, 102),
            ("n128", (130, 136, 40), 2, 103),
        ] {
            let art = sm100("gemm_sm100_pair", config);
            let seed = seed + 10 * i as u64;
            let stats = typed_gemm_on_device(art, art.ptx, shape, seed, policy, &sms(ctas))
                .unwrap_or_else(|e| {
                    panic!("gemm_sm100_pair {config} {shape:?} on {ctas} CTAs, schedule {i}: {e}")
                });
            runs.push(stats);
        }
    }
    report("gemm_sm100_pair", &runs);
}

/// Level 8 on Blackwell (`gemm_sm100_clc`: level 7's pair with a scheduler warp stealing the
/// static walks of clusters that have not started) on three clusters (6 tiles of 256×256, two a
/// walk; tails in M, N and K) with every request failing (each cluster its own walk), every
/// request succeeding while a cluster is pending (the first cluster cancels the other two and
/// runs all three walks, then its third request fails) and at random by the seed, each under
/// two schedules: the result is the f64 reference's, every run ends (no deadlock), and the
/// clusters that ran are the mode's (cancelled ones never run).
#[test]
fn gemm_sm100_clc_is_right_whether_cancellations_fail_or_succeed() {
    let art = sm100("gemm_sm100_clc", "default");
    let mut runs = Vec::new();
    for (mi, clc) in [ClcMode::Fail, ClcMode::Succeed, ClcMode::Random]
        .into_iter()
        .enumerate()
    {
        for (i, policy) in schedules().iter().take(2).enumerate() {
            let policy = Policy { clc, ..*policy };
            let seed = 111 + 10 * mi as u64 + i as u64;
            let stats = typed_gemm_on_device(art, art.ptx, (520, 300, 136), seed, &policy, &sms(6))
                .unwrap_or_else(|e| panic!("gemm_sm100_clc {clc:?} schedule {i}: {e}"));
            // Cancelled clusters never run: all three when every request fails, the first
            // alone when every one succeeds.
            match clc {
                ClcMode::Fail => assert_eq!(stats.ctas, 6, "{clc:?}"),
                ClcMode::Succeed => assert_eq!(stats.ctas, 2, "{clc:?}"),
                ClcMode::Random => assert!((2..=6).contains(&stats.ctas), "{}", stats.ctas),
            }
            runs.push(stats);
        }
    }
    report("gemm_sm100_clc", &runs);
}

/// Levels 8 and 9 on `tirx sim`'s device (132 SMs: 66 clusters, most without a tile, so they
/// finish and ask again at once) at its GEMM shape, every CLC mode, three seeds:
/// the case where rank 0's next request once rewrote the odd CTA's response under its
/// scheduler's read (before the schedulers released the response too) — a race report.
#[test]
fn the_clc_levels_never_rewrite_a_response_under_a_reader() {
    let mut runs = Vec::new();
    for name in ["gemm_sm100_clc", "gemm_sm100_tma_epi"] {
        let art = sm100(name, "default");
        for clc in [ClcMode::Succeed, ClcMode::Random, ClcMode::Fail] {
            for seed in 1..=3 {
                let policy = Policy {
                    clc,
                    ..Policy::default()
                };
                let stats =
                    typed_gemm_on_device(art, art.ptx, (130, 136, 96), seed, &policy, &sms(132))
                        .unwrap_or_else(|e| panic!("{name} {clc:?} seed {seed}: {e}"));
                runs.push(stats);
            }
        }
    }
    report("gemm_sm100_clc and gemm_sm100_tma_epi", &runs);
}

/// Level 9 on Blackwell (`gemm_sm100_tma_epi`: level 8 with D stored by TMA from a swizzled
/// shared-memory tile, the accumulator stage released before the stores) on three clusters,
/// 9 tiles of 256×128 (three a walk, so the staging tile is reused while earlier stores may
/// be in flight; tails in M, N (296: D's rows must be a multiple of 16 bytes for TMA) and K —
/// the TMA store clips them), under every CLC mode and two schedules: the result is the f64
/// reference's.
#[test]
fn gemm_sm100_tma_epi_stores_every_tile_under_every_clc_mode() {
    let art = sm100("gemm_sm100_tma_epi", "default");
    let mut runs = Vec::new();
    for (mi, clc) in [ClcMode::Fail, ClcMode::Succeed, ClcMode::Random]
        .into_iter()
        .enumerate()
    {
        for (i, policy) in schedules().iter().take(2).enumerate() {
            let policy = Policy { clc, ..*policy };
            let seed = 121 + 10 * mi as u64 + i as u64;
            let stats = typed_gemm_on_device(art, art.ptx, (520, 296, 136), seed, &policy, &sms(6))
                .unwrap_or_else(|e| panic!("gemm_sm100_tma_epi {clc:?} schedule {i}: {e}"));
            runs.push(stats);
        }
    }
    report("gemm_sm100_tma_epi", &runs);
}

/// The pair's loads as `gemm_sm100_pair` emits them: each CTA's boxes land in its own shared
/// memory and complete on the even CTA's full barrier (`mapa` to rank `%cluster_ctarank & ~1`,
/// `.cta_group::2`), which only the even CTA arms, with both CTAs' bytes (2 × 24 KiB a stage at
/// `n128`).
#[test]
fn the_pairs_loads_complete_on_the_even_ctas_barrier() {
    let art = sm100("gemm_sm100_pair", "n128");
    let lines: Vec<&str> = art.ptx.lines().collect();
    let loads: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("cp.async.bulk.tensor"))
        .collect();
    assert_eq!(loads.len(), 2, "{}", art.ptx);
    for &i in &loads {
        assert!(
            lines[i].contains("complete_tx::bytes.cta_group::2 ")
                && lines[i - 1].starts_with("\tmapa.shared::cluster.u32")
                && lines[i - 2].contains(", 4294967294;"),
            "{}",
            lines[i - 2..=i].join("\n")
        );
    }
    let arm = lines
        .iter()
        .position(|l| l.contains("mbarrier.arrive.expect_tx"))
        .expect("the full barrier armed");
    assert!(lines[arm].ends_with(", 49152;"), "{}", lines[arm]);
    // Under the even-CTA test: `@!%p bra` over it, the predicate `rank & 1 == 0`.
    assert!(
        lines[arm - 6..arm]
            .iter()
            .any(|l| l.contains("and.b32") && l.ends_with(", 1;"))
            && lines[arm - 6..arm].iter().any(|l| l.contains("bra")),
        "{}",
        lines[arm - 6..=arm].join("\n")
    );
}

/// A planted bug in the pair's loads: the `mapa` dropped, so each CTA's boxes complete on its
/// own full barrier. The even CTA's barrier then never receives the odd CTA's bytes and its MMA
/// warp waits for ever: the emulator reports the deadlock on CTA (0,0,0)'s mbarrier.
#[test]
fn a_pair_load_on_its_own_ctas_barrier_deadlocks() {
    let art = sm100("gemm_sm100_pair", "n128");
    let lines: Vec<&str> = art.ptx.lines().collect();
    let mut planted = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("cp.async.bulk.tensor") && l.contains("cta_group::2") {
            // `mapa.shared::cluster.u32 %rR, %rL, %rK;`: the load's `[%rR]` back to `[%rL]`.
            let ops: Vec<&str> = lines[i - 1]
                .trim_end_matches(';')
                .split_whitespace()
                .skip(1)
                .map(|o| o.trim_end_matches(','))
                .collect();
            planted.push(l.replace(&format!("[{}]", ops[0]), &format!("[{}]", ops[1])));
        } else {
            planted.push(l.to_string());
        }
    }
    let planted = planted.join("\n") + "\n";
    assert_ne!(planted, art.ptx);
    let e = typed_gemm_on_device(
        art,
        &planted,
        (130, 136, 40),
        7,
        &Policy::default(),
        &sms(2),
    )
    .unwrap_err();
    assert!(
        e.contains("deadlock") && e.contains("CTA (0,0,0)") && e.contains("mbarrier"),
        "{e}"
    );
}

/// The Blackwell warp-specialised register split: at 256 threads ptxas launches the kernels
/// with 224 registers a thread (`tirx check`), and warpgroup 0's 56 plus warpgroup 1's 224 fit
/// (128·56 + 128·224 = 35840 ≤ 256·224). At a launch of 136 (34816 registers) the epilogue's
/// `.inc` can never be granted, and the deadlock report says so.
#[test]
fn the_blackwell_register_split_fits_its_launch() {
    let at = |regs: u32| Policy {
        launch_regs: Some(regs),
        ..Policy::default()
    };
    for (kernel, config) in [
        ("gemm_sm100_ws", "default"),
        ("gemm_sm100_persistent", "n128"),
    ] {
        let art = sm100(kernel, config);
        typed_gemm_on_device(art, art.ptx, (130, 136, 72), 91, &at(224), &sms(1))
            .unwrap_or_else(|e| panic!("{kernel} at 224: {e}"));
        let e =
            typed_gemm_on_device(art, art.ptx, (130, 136, 72), 91, &at(136), &sms(1)).unwrap_err();
        assert!(
            e.contains("deadlock") && e.contains("setmaxnreg.inc to 224"),
            "{kernel}: {e}"
        );
    }
}

/// A planted bug in the persistent Blackwell GEMM: the epilogue releases its accumulator
/// stage (`tcgen05.fence::before_thread_sync` + the arrive on `acc_empty[s]`) right after its
/// first `tcgen05.ld`, before that load's `tcgen05.wait::ld` and the other chunks' loads. The
/// MMA warp may then start the tile after next in that stage while the stage is still being
/// read: the emulator diagnoses an MMA over cells a load still reads, a later load of cells
/// that MMA will write before it completed, or the epilogue stores the next tile's partial
/// sums (a mismatch against the reference), on some schedule.
#[test]
fn releasing_an_accumulator_stage_before_wait_ld_is_diagnosed() {
    let art = sm100("gemm_sm100_persistent", "n128");
    let lines: Vec<&str> = art.ptx.lines().collect();
    let arrive = lines
        .iter()
        .rposition(|l| l.starts_with("\tmbarrier.arrive.shared::cta.b64 _,"))
        .expect("the epilogue's release");
    let fence = lines[..arrive]
        .iter()
        .rposition(|l| *l == "\ttcgen05.fence::before_thread_sync;")
        .expect("the fence before it");
    let first_ld = lines
        .iter()
        .position(|l| l.starts_with("\ttcgen05.ld.sync"))
        .expect("the epilogue's first load");
    assert!(first_ld < fence);
    let release = &lines[fence..=arrive];
    let mut planted: Vec<&str> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if (fence..=arrive).contains(&i) {
            continue;
        }
        planted.push(l);
        if i == first_ld {
            planted.extend_from_slice(release);
        }
    }
    let planted = planted.join("\n") + "\n";
    // One K tile a tile, eight tiles on one CTA: each stage is released and refilled four times.
    let errors: Vec<String> = (1..=6)
        .filter_map(|seed| {
            let policy = &schedules()[seed as usize % 3];
            typed_gemm_on_device(art, &planted, (256, 512, 64), seed, policy, &sms(1)).err()
        })
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("still reads")
            || e.contains("will write and has not completed")
            || e.contains(" vs ")),
        "the early release went unnoticed: {errors:?}"
    );
}
