//! The CTA pair's MMA in the language (`tcgen05::mma(..., cta_group = 2)`, PTX ISA §9.7.16.5,
//! sm_100a): a 2×1 cluster computes a 256-row tile of D = A·Bᵀ, each CTA loading its 128 rows
//! of A and its half of B's rows into its own shared memory, the even CTA issuing the pair's
//! MMA and its multicast commit, each CTA reading its own 128 rows of D from its own TMEM.
//! Run in the emulator against an f64 reference on random data (no Blackwell GPU here),
//! assembled by ptxas with the 2-CTA MMA in the SASS, the commit without multicast planted
//! and diagnosed as the peer's deadlock, and the IR through the text form.

use half::bf16;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::{Device, SimError};

use super::sim_exec::sim_launch_ptx;

/// D = A·Bᵀ, A M×K, B N×K, bf16 in, f32 accumulate in TMEM, bf16 out. CTA `x` of the grid
/// holds rows `128x..` of A and of D; the pair `x / 2` shares the N tile `cta.y`, CTA rank `r`
/// loading B rows `BN·y + r·BN/2 ..` (its half of the pair's N).
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 256), cdiv(N, BN)),
    configs(default = (BN = 64, BK = 64)),
)]
pub fn pair_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN / 2, BK], swizzle = B128);
    let acc = tmem::<f32>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    let m = cta.x;
    let n = cta.y;

    // One warp in each CTA allocates the pair's columns.
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
        // Both CTAs' halves have landed before the even CTA's MMA reads them.
        cluster_sync();
        #[scope(warp = 1, elect)]
        {
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0, cta_group = 2);
            tcgen05::commit(done, cta_group = 2);
        }
        // The commit arrives on `done` in both CTAs: each may then refill its halves.
        done.wait(k % 2);
    }

    tcgen05::fence_after();
    copy(d.tile(m, n), acc);
    // The peer's last TMEM read precedes the pair's release.
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

/// Runs `ptx` (`pair_gemm`'s, perhaps edited) on m×n×k random data; returns (D, reference).
fn run(
    ptx: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Vec<bf16>, Vec<f64>), SimError> {
    let mut rng = Rng::new(seed);
    let (a, b) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let mut dev = Device::new();
    let ta = upload(&mut dev, &a, &[m, k]);
    let tb = upload(&mut dev, &b, &[n, k]);
    let td = upload(&mut dev, &vec![bf16::ZERO; m * n], &[m, n]);
    let sig = (pair_gemm::KERNEL.artifacts[0].signature)();
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

#[test]
fn the_pairs_mma_matches_the_reference_in_the_emulator() {
    let ptx = pair_gemm::KERNEL.artifacts[0].ptx;
    // A partial pair (M = 384: the second pair's odd CTA lies wholly outside A and D), a
    // partial N tile (96 = 64 + 32) and partial K tiles (136, 72) included.
    for (shape, seed) in [
        ((256, 64, 64), 1),
        ((512, 192, 192), 2),
        ((256, 128, 136), 3),
        ((384, 96, 72), 4),
    ] {
        let (got, want) = run(ptx, shape, seed).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let err = (g.to_f64() - w).abs();
            assert!(
                err <= 1e-2 * w.abs().max(1.0),
                "{shape:?}: D[{}][{}] = {g}, want {w}",
                i / shape.1,
                i % shape.1
            );
        }
    }
}

#[test]
fn the_pair_emits_cta_group_2() {
    let ptx = pair_gemm::KERNEL.artifacts[0].ptx;
    for want in [
        "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
        "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned",
        "tcgen05.mma.cta_group::2.kind::f16",
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
        "tcgen05.dealloc.cta_group::2.sync.aligned.b32",
    ] {
        assert!(ptx.contains(want), "{want}\n{ptx}");
    }
}

#[test]
fn the_pair_assembles_with_the_2cta_mma_in_the_sass() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("pair_gemm", &pair_gemm::KERNEL.artifacts[0]).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    let has = |op: &str| c.sass.keys().any(|k| k == op);
    assert!(
        has("UTCHMMA.2CTA") && has("UTCBAR.2CTA.MULTICAST"),
        "{:?}",
        c.sass
    );
}

/// Planted bug: the pair's commit without `.multicast::cluster` (the PTX edited, since the
/// language refuses to write it): the MMA completes but only the even CTA's `done` hears of
/// it, so the odd CTA waits for ever — the emulator names the peer's barrier.
#[test]
fn a_pair_commit_without_multicast_deadlocks_on_the_peers_barrier() {
    let ptx = pair_gemm::KERNEL.artifacts[0].ptx;
    let edited: String = ptx
        .lines()
        .map(|l| {
            if l.contains("tcgen05.commit.cta_group::2") {
                let at = l.find('[').unwrap();
                let end = l.find(']').unwrap();
                let guard = &l[..l.find("tcgen05").unwrap()];
                format!(
                    "{guard}tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 {};",
                    &l[at..=end]
                )
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(edited, ptx);
    let e = run(&edited, (256, 64, 64), 1).unwrap_err();
    let SimError::Deadlock(blocked) = &e else {
        panic!("{e}")
    };
    assert!(
        blocked
            .iter()
            .any(|b| b.cta == [1, 0, 0] && matches!(b.on, tirx_sim::exec::WaitOn::Mbarrier { .. })),
        "{e}"
    );
    assert!(
        e.to_string().contains("CTA (1,0,0)") && e.to_string().contains("mbarrier at shared+"),
        "{e}"
    );
}

/// The text form carries the pair (`cta_group 2` on the mma, commit, alloc, relinquish and
/// dealloc): the IR parses back to the same text after every pass, and the parsed IR
/// recompiles to the PTX the macro emitted.
#[test]
fn the_pair_kernel_round_trips_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let art = &pair_gemm::KERNEL.artifacts[0];
    let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.to_string(), art.ir);
    assert!(art.ir.contains("cta_group 2"));
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
    for s in &snaps {
        let again = parse_module(&s.text).unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
        assert_eq!(again.to_string(), s.text, "after {}", s.pass);
    }
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}

/// Level 7 of the Blackwell ladder (`gemm_sm100_pair`) in the SASS: the pair's MMA, its
/// multicast commit and the pair's TMA load (`.cta_group::2`), with no spills.
#[test]
fn the_pair_gemm_level_assembles_with_the_2cta_forms() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let k = tirx_kernels::catalogue::find("gemm_sm100_pair").expect("shipped");
    for a in k.artifacts {
        let c = check_artifact(k.name, a).expect("assembles");
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.spills, 0, "{}", a.config);
        let has = |op: &str| c.sass.keys().any(|k| k == op);
        assert!(
            has("UTCHMMA.2CTA") && has("UTCBAR.2CTA.MULTICAST") && has("UTMALDG.2D.2CTA"),
            "{}: {:?}",
            a.config,
            c.sass
        );
    }
}
