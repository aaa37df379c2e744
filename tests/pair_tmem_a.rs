//! The CTA pair with A in tensor memory (`tcgen05::mma(acc, a_t, b_s, ..., cta_group = 2)`,
//! the `[a-tmem]` form of `tcgen05.mma.cta_group::2`, PTX ISA §9.7.16.10.9): each CTA's 128
//! rows of A copied from its own shared memory into its own TMEM by the even CTA's
//! `tcgen05::cp(a_t, a_s, cta_group = 2)` (§9.7.16.9.2), then read by the pair's M = 256 MMA
//! (Layout A: row `m` in lane `m` of each CTA), and the pair's M = 128 with each CTA's 64 rows
//! copied into both lane halves (`.64x128b.warpx2::02_13`, the 2x2 data path of
//! §9.7.16.10.5.2). Run in the emulator against an f64 reference
//! on random data with row, column and K tails and a NaN-poisoned D (no Blackwell GPU here),
//! assembled by ptxas `-arch=sm_100a`; a planted copy of the wrong K of A, and an M = 128 copy
//! into the wrong lanes, are caught.

use half::bf16;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::{Device, SimError};

use super::sim_exec::sim_launch_ptx;

/// D = A·Bᵀ, A M×K, B N×K, bf16 in, f32 accumulate in TMEM, bf16 out; A through TMEM. CTA `x`
/// holds rows `128x..` of A and of D; the pair shares the N tile `cta.y`.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 256), cdiv(N, BN)),
    configs(default = (BN = 64, BK = 64), n128 = (BN = 128, BK = 64)),
)]
pub fn pair_tmem_a_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN / 2, BK], swizzle = B128);
    let a_t = tmem::<bf16>([128, BK]); // this CTA's 128 rows of A: BK / 2 columns
    let acc = tmem::<f32>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    let m = cta.x;
    let n = cta.y;

    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(a_t, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();

    for k in 0..cdiv(K, BK) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(m, k), full);
            tma::load(b_s, b.tile(2 * n + cta_rank, k), full);
        }
        full.wait(k % 2);
        cluster_sync();
        #[scope(warp = 1, elect)]
        {
            // Both CTAs' A halves into their own TMEM, then the pair's MMA reads them there.
            tcgen05::cp(a_t, a_s, cta_group = 2);
            tcgen05::mma(acc, a_t, b_s, accumulate = k > 0, cta_group = 2);
            tcgen05::commit(done, cta_group = 2);
        }
        done.wait(k % 2);
    }

    tcgen05::fence_after();
    copy(d.tile(m, n), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
        tcgen05::dealloc(a_t, cta_group = 2);
    }
}

/// The pair's M = 128 with A in TMEM: each CTA's 64 rows of A copied by the even CTA's
/// `tcgen05::cp(a_t, a_s, cta_group = 2)` from a `[64, BK]` tile into both lane halves of a
/// `tmem::<bf16>([64, BK])` tile (`.64x128b.warpx2::02_13`), which the 2x2 data path reads
/// from lanes 0-63 for D's first BN/2 columns and from 64-127 for the rest.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 128), cdiv(N, BN)),
    configs(default = (BN = 64, BK = 64), n128 = (BN = 128, BK = 64)),
)]
pub fn pair_tmem_a_m128_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([64, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN / 2, BK], swizzle = B128);
    let a_t = tmem::<bf16>([64, BK]); // this CTA's 64 rows of A, in both lane halves
    let acc = tmem::<f32>([64, BN]);
    let full = mbarrier();
    let done = mbarrier();
    let m = cta.x;
    let n = cta.y;

    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(a_t, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();

    for k in 0..cdiv(K, BK) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(m, k), full);
            tma::load(b_s, b.tile(2 * n + cta_rank, k), full);
        }
        full.wait(k % 2);
        cluster_sync();
        #[scope(warp = 1, elect)]
        {
            tcgen05::cp(a_t, a_s, cta_group = 2);
            tcgen05::mma(acc, a_t, b_s, accumulate = k > 0, cta_group = 2);
            tcgen05::commit(done, cta_group = 2);
        }
        done.wait(k % 2);
    }

    tcgen05::fence_after();
    copy(d.tile(m, n), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
        tcgen05::dealloc(a_t, cta_group = 2);
    }
}

/// The artifact of config `name` (of the M = 256 kernel, or with `m128` of the M = 128 one).
fn artifact_of(m128: bool, name: &str) -> &'static tirx::KernelArtifact {
    let k = if m128 {
        &pair_tmem_a_m128_gemm::KERNEL
    } else {
        &pair_tmem_a_gemm::KERNEL
    };
    k.artifacts
        .iter()
        .find(|a| a.config == name)
        .expect("config")
}

/// The M = 256 kernel's artifact of config `name`.
fn artifact(name: &str) -> &'static tirx::KernelArtifact {
    artifact_of(false, name)
}

/// Runs `ptx` (config `cfg`'s, perhaps edited) on m×n×k random data, D poisoned with NaN;
/// returns (D, reference).
fn run(
    ptx: &str,
    cfg: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Vec<bf16>, Vec<f64>), SimError> {
    run_of(false, ptx, cfg, (m, n, k), seed)
}

/// [`run`] of the M = 256 kernel, or with `m128` the M = 128 one.
fn run_of(
    m128: bool,
    ptx: &str,
    cfg: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Vec<bf16>, Vec<f64>), SimError> {
    let mut rng = Rng::new(seed);
    let (a, b) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let mut dev = Device::new();
    let ta = upload(&mut dev, &a, &[m, k]);
    let tb = upload(&mut dev, &b, &[n, k]);
    let td = upload(&mut dev, &vec![bf16::NAN; m * n], &[m, n]);
    let sig = (artifact_of(m128, cfg).signature)();
    sim_launch_ptx(ptx, &sig, &mut dev, &[ta, tb, td.clone()], &[], seed)?;
    let mut want = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k)
                .map(|q| a[i * k + q].to_f64() * b[j * k + q].to_f64())
                .sum();
        }
    }
    Ok((download(&dev, &td), want))
}

/// The first element of `got` off the reference by more than bf16's rounding, if any.
fn first_wrong(got: &[bf16], want: &[f64], n: usize) -> Option<String> {
    got.iter().zip(want).enumerate().find_map(|(i, (g, w))| {
        let err = (g.to_f64() - w).abs();
        (err.is_nan() || err > 1e-2 * w.abs().max(1.0))
            .then(|| format!("D[{}][{}] = {g}, want {w}", i / n, i % n))
    })
}

#[test]
fn the_pair_with_a_in_tmem_matches_the_reference_in_the_emulator() {
    // A partial pair (M = 300), a partial N tile and partial K tiles included.
    for (cfg, shape, seed) in [
        ("default", (256, 64, 64), 1),
        ("default", (300, 96, 136), 2),
        ("n128", (256, 128, 72), 3),
    ] {
        let (got, want) = run(artifact(cfg).ptx, cfg, shape, seed)
            .unwrap_or_else(|e| panic!("{cfg} {shape:?}: {e}"));
        if let Some(bad) = first_wrong(&got, &want, shape.1) {
            panic!("{cfg} {shape:?}: {bad}");
        }
    }
}

#[test]
fn the_pairs_m128_with_a_in_tmem_matches_the_reference_in_the_emulator() {
    for (cfg, shape, seed) in [
        ("default", (128, 64, 64), 4),
        ("default", (200, 96, 72), 5),
        ("n128", (256, 128, 136), 6),
    ] {
        let (got, want) = run_of(true, artifact_of(true, cfg).ptx, cfg, shape, seed)
            .unwrap_or_else(|e| panic!("M = 128 {cfg} {shape:?}: {e}"));
        if let Some(bad) = first_wrong(&got, &want, shape.1) {
            panic!("M = 128 {cfg} {shape:?}: {bad}");
        }
    }
}

/// Planted bug: the M = 128 copy of A with `::01_23` (rows 32-63 to lanes 32-63 *and*
/// 64-95) instead of `::02_13`: lanes 64-127 no longer repeat rows 0-63 in order, so D's
/// upper columns come out wrong — the reference catches it.
#[test]
fn the_m128_copy_of_a_must_fill_both_lane_halves() {
    let ptx = artifact_of(true, "default").ptx;
    assert!(ptx.contains("tcgen05.cp.cta_group::2.64x128b.warpx2::02_13"));
    let edited = ptx.replace("warpx2::02_13", "warpx2::01_23");
    let shape = (128, 64, 64);
    let wrong = match run_of(true, &edited, "default", shape, 4) {
        Ok((got, want)) => first_wrong(&got, &want, shape.1),
        Err(e) => Some(e.to_string()),
    };
    assert!(wrong.is_some(), "the planted copy went unnoticed");
}

#[test]
fn the_pair_with_a_in_tmem_emits_the_pairs_a_tmem_form() {
    let ptx = artifact("default").ptx;
    let mma = ptx
        .lines()
        .find(|l| l.contains("tcgen05.mma.cta_group::2.kind::f16"))
        .expect("the pair's MMA");
    // `[d], [a], bdesc, idesc, p`: A is an address in brackets, not a descriptor register.
    assert!(mma.matches('[').count() == 2, "{mma}");
    assert!(
        ptx.contains("tcgen05.cp.cta_group::2.128x256b"),
        "the pair's copy of A is missing"
    );
}

#[test]
fn the_pair_with_a_in_tmem_assembles() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let arts = pair_tmem_a_gemm::KERNEL.artifacts.iter();
    for a in arts.chain(pair_tmem_a_m128_gemm::KERNEL.artifacts) {
        let c = check_artifact("pair_tmem_a_gemm", a).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", a.config, c.problems);
        assert_eq!(c.spills, 0, "{}", a.config);
        let has = |op: &str| c.sass.keys().any(|k| k == op);
        assert!(
            has("UTCHMMA.2CTA") && has("UTCBAR.2CTA.MULTICAST"),
            "{}: {:?}",
            a.config,
            c.sass
        );
    }
}

/// Planted bug: the pair's copy of A moved one K-step back (the first copy's descriptor
/// start advanced by 32 bytes, so K 0..15 of A become K 16..31): the reference catches it.
#[test]
fn a_wrong_copy_of_a_into_tmem_is_caught() {
    let ptx = artifact("default").ptx;
    let mut edits = 0;
    let edited: String = ptx
        .lines()
        .map(|l| {
            if edits == 0 && l.contains("tcgen05.cp.cta_group::2.128x256b") {
                edits += 1;
                // `[taddr], sdesc;` → `[taddr], sdesc_plus_2;` via an added instruction.
                let desc = l.trim().trim_end_matches(';').rsplit(", ").next().unwrap();
                let guard = &l[..l.find("tcgen05").unwrap()];
                format!(
                    "\tadd.u64 {desc}, {desc}, 2;\n{guard}{};",
                    l.trim_start_matches(guard).trim().trim_end_matches(';')
                )
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(edits, 1);
    let shape = (256, 64, 64);
    let wrong = match run(&edited, "default", shape, 1) {
        Ok((got, want)) => first_wrong(&got, &want, shape.1),
        Err(e) => Some(e.to_string()),
    };
    assert!(wrong.is_some(), "the planted copy went unnoticed");
}
