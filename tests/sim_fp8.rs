//! The FP8 GEMMs (`kernels/src/gemm/fp8.rs`) in the emulator: per-tensor and row-wise scales,
//! E4M3 and E5M2 inputs, BF16 / FP16 / FP32 outputs, on shapes with tails in M, N and K and
//! more tiles than clusters (the persistent walk wraps), against the f64 reference of the same
//! FP8 values (`fp8_ref`). The emulator accumulates in f32 exactly per K = 32 step, so the
//! bound here is the f32 one; the GPU tests bound the tensor core's own FP8 accumulation —
//! and the gain of the `promoted*` configs over it, which the emulator cannot show.

use tirx::KernelArtifact;
use tirx::runtime::{DeviceLimits, ElemType, TensorMeta};
use tirx_kernels::check::{Checked, check_artifact};
use tirx_kernels::gemm::fp8::kernels::{gemm_sm90_fp8, gemm_sm90_fp8_rowwise};
use tirx_kernels::gemm::fp8_pingpong::kernels::{
    gemm_sm90_fp8_pingpong, gemm_sm90_fp8_rowwise_pingpong,
};
use tirx_kernels::gemm::fp8_ref::{Fp8Scales, check, scaled_mm_f64};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{decode, put, random_values};
use tirx_sim::{Device, Policy};

use super::sim_exec::{EMULATED, sim_launch_on};

/// `k`'s artifact of config `name` (the FP8 tests' look-up, shared with `sim_fp8_block.rs` and
/// `sim_fp8_block_mn.rs`).
pub(crate) fn config(k: &'static tirx::Kernel, name: &str) -> &'static KernelArtifact {
    k.artifacts
        .iter()
        .find(|a| a.config == name)
        .unwrap_or_else(|| panic!("{} has no config {name}", k.name))
}

/// One emulator case: config, (M, N, K), SMs, seed.
pub(crate) type Case = (&'static str, (usize, usize, usize), u32, u64);

/// Runs each case's config of `kernel` through `run` (the file's emulator harness, returning
/// the worst error/bound ratio or why it failed), panicking with the case on a failure and
/// printing its worst ratio otherwise.
pub(crate) fn run_cases(
    kernel: &'static tirx::Kernel,
    cases: &[Case],
    run: impl Fn(&KernelArtifact, (usize, usize, usize), u32, u64) -> Result<f64, String>,
) {
    for &(cfg, shape, sms, seed) in cases {
        let worst = run(config(kernel, cfg), shape, sms, seed)
            .unwrap_or_else(|e| panic!("{} {cfg} {shape:?}: {e}", kernel.name));
        println!(
            "{} {cfg} {shape:?}: worst error/bound {worst:.3}",
            kernel.name
        );
    }
}

/// `kernel`'s config `a` assembled for its target and disassembled (`check_artifact`), its
/// registers, spills and SASS histogram printed, and asserted clean — no problems, its wgmma
/// pipeline kept as written, no spills — the FP8 tests' common part before each asserts its
/// own SASS counts.
pub(crate) fn assembled_clean(kernel: &'static tirx::Kernel, a: &KernelArtifact) -> Checked {
    let c = check_artifact(kernel.name, a)
        .unwrap_or_else(|e| panic!("{}/{}: {e}", kernel.name, a.config));
    println!(
        "{} {}: {} registers, {} spills, sass {:?}",
        kernel.name, a.config, c.registers, c.spills, c.sass
    );
    assert!(c.problems.is_empty(), "{}: {:?}", a.config, c.problems);
    assert!(
        c.pipeline_losses.is_empty(),
        "{}: {:?}",
        a.config,
        c.pipeline_losses
    );
    assert_eq!(c.spills, 0, "{}", a.config);
    c
}

/// Runs one FP8 GEMM in the emulator on `sms` SMs; returns the worst error/bound ratio.
fn run(
    art: &KernelArtifact,
    (m, n, k): (usize, usize, usize),
    rowwise: bool,
    sms: u32,
    seed: u64,
) -> Result<f64, String> {
    let sig = (art.signature)();
    let elem = |name: &str| sig.tensors.iter().find(|t| t.name == name).map(|t| t.elem);
    let (ta, td) = (elem("a").expect("a"), elem("d").expect("d"));
    let mut rng = Rng::new(seed);
    let (ab, av) = random_values(&mut rng, ta, m * k);
    let (bb, bv) = random_values(&mut rng, ta, n * k);
    let mut dev = Device::new();
    let am = put(&mut dev, &ab, ta, &[m, k]);
    let bm = put(&mut dev, &bb, ta, &[n, k]);
    let dm = put(
        &mut dev,
        &vec![0xff; m * n * td.bytes() as usize],
        td,
        &[m, n],
    );
    // Scales of both signs and several binades: row i's and column j's differ.
    let mut scale = || (rng.unit() + 1.5) * if rng.unit() < -0.5 { -1.0 } else { 1.0 };
    let scales = if rowwise {
        Fp8Scales::Rows(
            (0..m).map(|_| scale()).collect(),
            (0..n).map(|_| scale()).collect(),
        )
    } else {
        Fp8Scales::Tensor(0.375, -2.5)
    };
    let f32_bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (mut tensors, mut scalars) = (Vec::new(), Vec::new());
    for t in &sig.tensors {
        let meta: TensorMeta = match (t.name.as_str(), &scales) {
            ("a", _) => am.clone(),
            ("b", _) => bm.clone(),
            ("d", _) => dm.clone(),
            ("sa", Fp8Scales::Rows(sa, _)) => put(&mut dev, &f32_bytes(sa), ElemType::F32, &[m]),
            ("sb", Fp8Scales::Rows(_, sb)) => put(&mut dev, &f32_bytes(sb), ElemType::F32, &[n]),
            (other, _) => panic!("an FP8 GEMM tensor {other}"),
        };
        tensors.push(meta);
    }
    if let Fp8Scales::Tensor(a, b) = scales {
        scalars.extend([a, b]);
    }
    let limits = DeviceLimits {
        sm_count: sms,
        ..EMULATED
    };
    sim_launch_on(
        art.ptx,
        &sig,
        &mut dev,
        (&tensors, &scalars),
        seed,
        &Policy::default(),
        &limits,
    )
    .map_err(|e| e.to_string())?;
    let got = decode(
        &dev.read(dm.addr, m * n * td.bytes() as usize).expect("D"),
        td,
    );
    let (want, mag) = scaled_mm_f64(&av, &bv, (m, n, k), &scales);
    check(&got, (&want, &mag), (k, td, true), n)
}

/// Per-tensor scales: every output type and both input types, tails in M (200 = 128 + 72),
/// N (264 = 256 + 8, or 2·128 + 8) and K (208 = 128 + 80), more tiles than the one cluster
/// walking them.
#[test]
fn the_per_tensor_fp8_gemm_matches_the_reference_in_the_emulator() {
    let cases: [Case; 5] = [
        ("default", (200, 264, 208), 2, 1),
        ("n128", (136, 264, 400), 2, 2),
        ("f16", (72, 72, 208), 2, 3),
        ("f32", (200, 136, 144), 2, 4),
        ("e5m2", (136, 264, 80), 2, 5),
    ];
    run_cases(&gemm_sm90_fp8::KERNEL, &cases, |a, shape, sms, seed| {
        run(a, shape, false, sms, seed)
    });
}

/// Row-wise scales (one per row of A, one per row of B): the scale vectors loaded per tile
/// with guarded loads at the M and N tails.
#[test]
fn the_rowwise_fp8_gemm_matches_the_reference_in_the_emulator() {
    let cases: [Case; 3] = [
        ("default", (200, 264, 208), 2, 11),
        ("n128", (136, 136, 144), 2, 12),
        ("f32", (72, 264, 80), 2, 13),
    ];
    run_cases(
        &gemm_sm90_fp8_rowwise::KERNEL,
        &cases,
        |a, shape, sms, seed| run(a, shape, true, sms, seed),
    );
}

/// The ping-pong kernels (`fp8_pingpong.rs`: each consumer warpgroup owns whole 64×256
/// tiles — 128×128 in `m128`, two m64 wgmmas a K step — the two taking alternate tiles of the
/// cluster's walk): odd M (130 = 2·64 + 2, 257 = 4·64 + 1) so a warpgroup's last tile is a
/// tail, or it has one tile fewer than the other; N and K tails; one cluster walking many tiles (each warpgroup's pipeline counter
/// skips the other's tiles, the two pass the staging tile's turn) and two clusters, one of them
/// idle.
#[test]
fn the_pingpong_fp8_gemms_match_the_reference_in_the_emulator() {
    let (rows, tensor) = (
        &gemm_sm90_fp8_rowwise_pingpong::KERNEL,
        &gemm_sm90_fp8_pingpong::KERNEL,
    );
    for (kernel, rowwise, cfg, shape, sms, seed) in [
        (rows, true, "default", (130, 136, 208), 2, 21),
        (rows, true, "default", (257, 392, 384), 2, 22),
        (rows, true, "f16", (257, 264, 144), 4, 23),
        (tensor, false, "default", (130, 264, 208), 2, 24),
        (tensor, false, "e5m2", (200, 136, 400), 4, 25),
        (rows, true, "m128", (257, 392, 384), 2, 26),
        (rows, true, "m128", (130, 136, 208), 4, 27),
        (tensor, false, "f16_m128", (257, 264, 144), 2, 28),
        // One tile, two clusters: the second cluster has none, the first's warpgroup 1 none.
        (rows, true, "m128", (72, 72, 80), 4, 29),
    ] {
        let art = config(kernel, cfg);
        let worst = run(art, shape, rowwise, sms, seed)
            .unwrap_or_else(|e| panic!("{} {cfg} {shape:?}: {e}", kernel.name));
        println!(
            "{} {cfg} {shape:?}: worst error/bound {worst:.3}",
            kernel.name
        );
    }
}

/// The ping-pong kernels with more K steps than stages (`k_tiles ≥ STAGES`) and several tiles
/// per warpgroup on two clusters — the shape of the H200 fault at 2048×3000×1024 scaled down:
/// a warpgroup's first wait of a tile names a pipeline iteration `STAGES` or more past the
/// last one it waited for, so its parity alone cannot tell that iteration's phase from an
/// earlier one (PTX ISA §9.7.13.15.16 `mbarrier.test_wait`/`try_wait`: the parity names the
/// current or the immediately preceding phase). The two warpgroups' K loops must take turns.
#[test]
fn the_pingpong_fp8_gemms_walk_several_tiles_per_warpgroup_in_the_emulator() {
    let (rows, tensor) = (
        &gemm_sm90_fp8_rowwise_pingpong::KERNEL,
        &gemm_sm90_fp8_pingpong::KERNEL,
    );
    for (kernel, rowwise, cfg, shape, sms, seed) in [
        // 3 row pairs × 3 column tiles on 2 clusters: 5 and 4 tiles; 5 K steps, 4 stages.
        (tensor, false, "default", (257, 520, 528), 4, 31),
        // 8 K steps (twice the stages, as at K = 1024), 2 row pairs × 3 column tiles.
        (rows, true, "default", (256, 520, 1024), 4, 32),
        // m128: 7 K steps, 6 stages; 2 row pairs × 3 column tiles on 2 clusters.
        (tensor, false, "m128", (512, 264, 848), 4, 33),
    ] {
        let art = config(kernel, cfg);
        let worst = run(art, shape, rowwise, sms, seed)
            .unwrap_or_else(|e| panic!("{} {cfg} {shape:?}: {e}", kernel.name));
        println!(
            "{} {cfg} {shape:?}: worst error/bound {worst:.3}",
            kernel.name
        );
    }
}

/// The promoted configs (`promoted*`, issue #29: each K tile's four wgmmas into a fresh
/// `part`, waited for, and `acc += part` in f32), per-tensor and row-wise, every output type
/// and both inputs: tails in M, N and K, one partial K tile alone (K = 16, 80), several K
/// tiles with a partial last one (400 = 3·128 + 16, 656 = 5·128 + 16), more tiles than
/// clusters. The emulator's wgmma accumulates exactly in f32 (it does not model the tensor
/// core's narrower FP8 adder), so this checks the promoted loop — zeroing, one promotion per K
/// tile, the stage released after its wait — against the f64 reference at the f32 bound; the
/// precision gained is the GPU test's (`gpu_fp8.rs`, K = 4096).
#[test]
fn the_promoted_fp8_gemms_match_the_reference_in_the_emulator() {
    let (tensor, rows) = (&gemm_sm90_fp8::KERNEL, &gemm_sm90_fp8_rowwise::KERNEL);
    for (kernel, rowwise, cfg, shape, sms, seed) in [
        (tensor, false, "promoted", (200, 264, 400), 2, 41),
        (tensor, false, "promoted_f16", (72, 136, 16), 2, 42),
        (tensor, false, "promoted_f32", (136, 264, 656), 4, 43),
        (tensor, false, "promoted_e5m2", (200, 136, 80), 2, 44),
        (rows, true, "promoted", (257, 264, 400), 2, 45),
        (rows, true, "promoted_f32", (72, 136, 208), 4, 46),
        (rows, true, "promoted_f16", (136, 8, 656), 2, 47),
    ] {
        let art = config(kernel, cfg);
        let worst = run(art, shape, rowwise, sms, seed)
            .unwrap_or_else(|e| panic!("{} {cfg} {shape:?}: {e}", kernel.name));
        println!(
            "{} {cfg} {shape:?}: worst error/bound {worst:.3}",
            kernel.name
        );
    }
}

/// The promoted configs assemble with ptxas for sm_90a without spills, their wgmma pipeline as
/// written (no `pipeline_losses`: ptxas serialised nothing), four `QGMMA.64x128x32` a K tile
/// (one issue site) and the promotion's one `FADD` per accumulator register (64 a thread).
#[test]
fn the_promoted_fp8_gemms_assemble_without_spills() {
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for kernel in [&gemm_sm90_fp8::KERNEL, &gemm_sm90_fp8_rowwise::KERNEL] {
        for a in kernel
            .artifacts
            .iter()
            .filter(|a| a.int("PROMOTE") == Some(128))
        {
            let c = assembled_clean(kernel, a);
            let qgmma: usize = c
                .sass
                .iter()
                .filter(|(op, _)| op.starts_with("QGMMA.64x128x32.F32"))
                .map(|(_, n)| *n)
                .sum();
            assert_eq!(qgmma, 4, "{}", a.config);
            assert!(
                c.sass.get("FADD").is_some_and(|&n| n >= 64),
                "{}: {:?}",
                a.config,
                c.sass
            );
        }
    }
}

/// A planted bug: the row scales applied twice — the check must see it.
#[test]
fn a_wrong_scale_is_caught() {
    let (m, n, k) = (72usize, 72usize, 80usize);
    let mut rng = Rng::new(9);
    let (_, av) = random_values(&mut rng, ElemType::E4m3, m * k);
    let (_, bv) = random_values(&mut rng, ElemType::E4m3, n * k);
    let scales = Fp8Scales::Rows(vec![1.5; m], vec![0.5; n]);
    let (want, mag) = scaled_mm_f64(&av, &bv, (m, n, k), &scales);
    let twice: Vec<f64> = want.iter().map(|x| x * 1.5).collect();
    assert!(check(&twice, (&want, &mag), (k, ElemType::F32, true), n).is_err());
    assert!(check(&want, (&want, &mag), (k, ElemType::F32, true), n).is_ok());
}
