//! The CTA pair's M = 128 form (`tcgen05::mma(..., cta_group = 2)` with a `tmem::<f32>([64,
//! N])` accumulator, PTX ISA §9.7.16.5): a 2×1 cluster computes a 128-row tile of D = A·Bᵀ,
//! each CTA holding 64 rows of A and half of B's rows in its own shared memory and its 64
//! rows of D in its own TMEM in the 2x2 data path (§9.7.16.10.5.2, Layout B: columns N/2..
//! of row m in lane 64 + m). Run in the emulator against an f64 reference on random data with
//! row, column and K tails and a NaN-poisoned D (no Blackwell GPU here), assembled by ptxas
//! `-arch=sm_100a` with the 2-CTA MMA in the SASS; a planted one-half epilogue (reading D as
//! if it were Layout A's) is caught by the reference.

use half::bf16;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::{Device, SimError};

use super::sim_exec::sim_launch_ptx;

/// D = A·Bᵀ, A M×K, B N×K, bf16 in, f32 accumulate in TMEM, bf16 out. CTA `x` of the grid
/// holds rows `64x..` of A and of D; the pair `x / 2` shares the N tile `cta.y`, CTA rank `r`
/// loading B rows `BN·y + r·BN/2 ..` (its half of the pair's N).
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 128), cdiv(N, BN)),
    configs(default = (BN = 64, BK = 64), n128 = (BN = 128, BK = 64), n256 = (BN = 256, BK = 64)),
)]
pub fn pair_m128_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([64, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN / 2, BK], swizzle = B128);
    // This CTA's 64 rows of the pair's 128: BN / 2 columns of all 128 lanes.
    let acc = tmem::<f32>([64, BN]);
    let full = mbarrier();
    let done = mbarrier();
    let m = cta.x;
    let n = cta.y;

    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
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
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0, cta_group = 2);
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
    }
}

/// The artifact of config `name`.
fn artifact(name: &str) -> &'static tirx::KernelArtifact {
    pair_m128_gemm::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == name)
        .expect("config")
}

/// Runs `ptx` (config `cfg`'s, perhaps edited) on m×n×k random data, D poisoned with NaN;
/// returns (D, reference).
fn run(
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
    let sig = (artifact(cfg).signature)();
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
fn the_pairs_m128_mma_matches_the_reference_in_the_emulator() {
    // A partial pair (M = 200: the second pair's odd CTA holds rows 192..199 only), a partial
    // N tile and partial K tiles included.
    for (cfg, shape, seed) in [
        ("default", (128, 64, 64), 1),
        ("default", (200, 96, 72), 2),
        ("n128", (256, 192, 136), 3),
        ("n256", (128, 256, 64), 4),
    ] {
        let (got, want) = run(artifact(cfg).ptx, cfg, shape, seed)
            .unwrap_or_else(|e| panic!("{cfg} {shape:?}: {e}"));
        if let Some(bad) = first_wrong(&got, &want, shape.1) {
            panic!("{cfg} {shape:?}: {bad}");
        }
    }
}

#[test]
fn the_pairs_m128_mma_carries_m_128_in_its_descriptor() {
    let ptx = artifact("default").ptx;
    assert!(ptx.contains("tcgen05.mma.cta_group::2.kind::f16"), "{ptx}");
    // The instruction descriptor (§9.7.16.4.2): f32 D (bit 4), bf16 A and B (bits 7, 10),
    // N >> 3 = 8 at bit 17, M >> 4 = 8 at bit 24.
    let idesc = (1u32 << 4) | (1 << 7) | (1 << 10) | (8 << 17) | (8 << 24);
    assert!(
        ptx.contains(&format!("{idesc}")),
        "{idesc:#x} not in\n{ptx}"
    );
    // 32 columns for the pair's 64-wide tile: D's N / 2 columns.
    assert!(
        ptx.contains("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32"),
        "{ptx}"
    );
}

#[test]
fn the_pairs_m128_mma_assembles_with_the_2cta_mma_in_the_sass() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for a in pair_m128_gemm::KERNEL.artifacts {
        let c = check_artifact("pair_m128_gemm", a).expect("assembles");
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

/// Planted bug: the epilogue reads D as Layout A's (warp quarter q its lanes as rows
/// `32·q + lane`, all from column 0 of the tile) — the PTX edited where the quarter `q` is
/// split into `q % 2` (`and.b32 r, q, 1`) and `q / 2` (`shr.u32 r, q, 1`) — and the
/// reference catches it: Layout B's upper lanes hold columns N/2.. of rows 0..63.
#[test]
fn reading_the_m128_half_as_layout_a_is_caught() {
    let ptx = artifact("default").ptx;
    let quarter: Vec<&str> = ptx
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("and.b32 ")?.strip_suffix(", 3;")?;
            l.split(", ").next()
        })
        .collect();
    let [q] = quarter[..] else {
        panic!("one `and.b32 q, warp, 3` expected, found {quarter:?}")
    };
    let mut edits = 0;
    let edited: String = ptx
        .lines()
        .map(|l| {
            let t = l.trim();
            let dst = |op: &str| {
                t.strip_prefix(op)?
                    .strip_suffix(&format!(", {q}, 1;"))
                    .map(str::to_owned)
            };
            if let Some(d) = dst("and.b32 ") {
                edits += 1;
                format!("\tmov.u32 {d}, {q};")
            } else if let Some(d) = dst("shr.u32 ") {
                edits += 1;
                format!("\tmov.u32 {d}, 0;")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(edits, 2, "the epilogue's q % 2 and q / 2");
    let shape = (128, 64, 64);
    let wrong = match run(&edited, "default", shape, 1) {
        Ok((got, want)) => first_wrong(&got, &want, shape.1),
        Err(e) => Some(e.to_string()),
    };
    assert!(wrong.is_some(), "the planted read went unnoticed");
}
