//! The CTA pair's load multicast to the other pair of a 2×2 cluster (`tma::load(..,
//! multicast = M, cta_group = 2)`, PTX ISA §9.7.9.25.5.1 `.multicast::cluster.cta_group::2`,
//! sm_100a): a cluster of four CTAs is two pairs side by side in N that compute D's 256 rows ×
//! 2·BN columns. The CTAs of one rank parity in the two pairs hold the same 128 rows of A; each
//! loads one 64-row half of them and multicasts it to itself and its counterpart (mask
//! `5 · (1 + rank % 2)`: ranks {0, 2} or {1, 3}), and every box completes on the barrier of the
//! receiving CTA's own pair's even CTA — which the compiler arms with both CTAs' bytes, as for
//! the pair's plain load. Run in the emulator against an f64 reference on random data with
//! tails (no Blackwell GPU here), assembled by ptxas with the 2-CTA multicast load in the
//! SASS, the IR through the text form, and a mask that includes the pair's peer refused.

use half::bf16;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::{Device, SimError};

use super::sim_exec::sim_launch_ptx;

/// D = A·Bᵀ, A M×K, B N×K, bf16 in, f32 accumulate in TMEM, bf16 out. Cluster `c = cta.x / 4`
/// holds D's rows `256c..`; its pair `p = rank / 2` the N tile `2·cta.y + p`, CTA parity
/// `q = rank % 2` the 128 rows `256c + 128q..` and B rows `BN·(2·cta.y + p) + q·BN/2..`.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (4, 1, 1),
    grid = (4 * cdiv(M, 256), cdiv(N, 2 * BN)),
    configs(default = (BN = 64, BK = 64)),
)]
pub fn pair_multicast_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    // A's 128 rows as two 64-row halves: each CTA loads half `p` and receives the other from
    // its counterpart in the other pair; the MMA reads both as one 128-row operand.
    let a_s = smem::<bf16>([2, 64, BK], swizzle = B128);
    let b_s = smem::<bf16>([BN / 2, BK], swizzle = B128);
    let acc = tmem::<f32>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    let p = cta_rank / 2;
    let q = cta_rank % 2;
    let row = 2 * (cta.x / 4) + q;
    let n = 2 * cta.y + p;

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
            // The even CTA's `full` counts, per phase, A's 128 rows and B's half for each
            // CTA of its pair (the compiler arms it; the odd CTA's receives nothing).
            tma::load(
                a_s[p],
                a.tile(2 * row + p, k),
                full,
                multicast = 5 * (1 + cta_rank % 2),
                cta_group = 2,
            );
            tma::load(b_s, b.tile(2 * n + q, k), full, cta_group = 2);
        }
        #[scope(thread = 0)]
        {
            if cta_rank % 2 == 0 {
                full.wait(k % 2);
                tcgen05::mma(acc, a_s, b_s, accumulate = k > 0, cta_group = 2);
                tcgen05::commit(done, cta_group = 2);
            }
        }
        done.wait(k % 2);
        // Both pairs' MMAs are done with this step's tiles before anyone multicasts the next
        // step's halves into them.
        cluster_sync();
    }

    tcgen05::fence_after();
    copy(d.tile(row, n), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

/// [`pair_multicast_gemm`] pipelined: a ring of stages, each freed by both pairs' MMAs — the
/// pair's commit multicast to the whole cluster (`multicast = 15`), the empty barrier counting
/// one arrival from each pair (`peers = 2`) — since a CTA's next half lands in the other
/// pair's stage as well as its own.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (4, 1, 1),
    grid = (4 * cdiv(M, 256), cdiv(N, 2 * BN)),
    configs(default = (BN = 64, BK = 64, STAGES = 2)),
)]
pub fn pair_multicast_ring(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([STAGES, 2, 64, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, BN / 2, BK], swizzle = B128);
    let acc = tmem::<f32>([128, BN]);
    let pipe = pipeline::<STAGES>(peers = 2);
    let done = mbarrier();
    let p = cta_rank / 2;
    let q = cta_rank % 2;
    let row = 2 * (cta.x / 4) + q;
    let n = 2 * cta.y + p;

    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();

    #[scope(warp = 0, elect)]
    {
        for k in 0..cdiv(K, BK) {
            let s = pipe.producer_acquire(k);
            tma::load(
                a_s[s][p],
                a.tile(2 * row + p, k),
                pipe.full(s),
                multicast = 5 * (1 + cta_rank % 2),
                cta_group = 2,
            );
            tma::load(b_s[s], b.tile(2 * n + q, k), pipe.full(s), cta_group = 2);
        }
    }
    #[scope(warp = 1, elect)]
    {
        if cta_rank % 2 == 0 {
            for k in 0..cdiv(K, BK) {
                let s = pipe.consumer_wait(k);
                tcgen05::mma(acc, a_s[s], b_s[s], accumulate = k > 0, cta_group = 2);
                tcgen05::commit(pipe.empty(s), cta_group = 2, multicast = 15);
            }
            tcgen05::commit(done, cta_group = 2);
        }
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(row, n), acc);
    tcgen05::fence_before();
    // Every CTA's last TMEM read, and every multicast into a peer, before the pair releases.
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

/// Runs `ptx` on m×n×k random data; returns (D, reference).
fn run(
    ptx: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Vec<bf16>, Vec<f64>), SimError> {
    run_art(
        &pair_multicast_gemm::KERNEL.artifacts[0],
        ptx,
        (m, n, k),
        seed,
    )
}

/// [`run`] for the kernel of `art`.
fn run_art(
    art: &tirx::KernelArtifact,
    ptx: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Vec<bf16>, Vec<f64>), SimError> {
    let mut rng = Rng::new(seed);
    let (a, b) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let mut dev = Device::new();
    let ta = upload(&mut dev, &a, &[m, k]);
    let tb = upload(&mut dev, &b, &[n, k]);
    // Poisoned: every element of D must be written.
    let td = upload(&mut dev, &vec![bf16::from_f32(f32::NAN); m * n], &[m, n]);
    let sig = (art.signature)();
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
fn the_pairs_multicast_load_matches_the_reference_in_the_emulator() {
    let ptx = pair_multicast_gemm::KERNEL.artifacts[0].ptx;
    // One cluster; two clusters in M and N; tails in M (a partial second cluster whose odd
    // CTAs lie outside A), in N (the second pair's tile wholly past N: it still loads and
    // multicasts A), and in K.
    for (shape, seed) in [
        ((256, 128, 64), 1),
        ((512, 256, 192), 2),
        ((384, 64, 136), 3),
        ((300, 200, 72), 4),
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
fn the_pipelined_ring_with_the_commit_over_both_pairs_matches_the_reference() {
    let art = &pair_multicast_ring::KERNEL.artifacts[0];
    // K = 520: more K steps than stages, so every stage is refilled while the other pair may
    // still read it unless both pairs' commits free it.
    for (shape, seed) in [
        ((256, 128, 520), 5),
        ((300, 200, 136), 6),
        ((384, 64, 72), 7),
    ] {
        let (got, want) =
            run_art(art, art.ptx, shape, seed).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
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
    assert!(
        art.ptx.contains("tcgen05.commit.cta_group::2"),
        "{}",
        art.ptx
    );
    if tool_for_test(find_ptxas()).is_some() {
        let c = check_artifact("pair_multicast_ring", art).expect("assembles");
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.spills, 0);
    }
}

/// Planted bug: the ring's commit not over the whole cluster (the PTX's mask edited from 15 to
/// 3, pair 0's CTAs): pair 1's empty barriers then hear no MMA, and its producers wait for ever
/// — the emulator reports the deadlock.
#[test]
fn the_ring_with_the_commit_over_one_pair_deadlocks() {
    let art = &pair_multicast_ring::KERNEL.artifacts[0];
    // The commit's mask: the one 16-bit move of 15.
    let line = art
        .ptx
        .lines()
        .find(|l| l.contains("mov.b16") && l.trim_end().ends_with(", 15;"))
        .unwrap_or_else(|| panic!("no 16-bit move of the mask 15:\n{}", art.ptx));
    let edited = art.ptx.replace(line, &line.replace(", 15;", ", 3;"));
    let e = run_art(art, &edited, (256, 128, 520), 5).unwrap_err();
    assert!(matches!(e, SimError::Deadlock(_)), "{e}");
}

#[test]
fn the_pairs_multicast_load_emits_both_qualifiers() {
    let ptx = pair_multicast_gemm::KERNEL.artifacts[0].ptx;
    let want = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2";
    assert!(ptx.contains(want), "{ptx}");
    // The even CTA arms `full` with both CTAs' bytes: 2 × (2 × 64 × 64 + 32 × 64) × 2 bytes.
    assert!(ptx.contains("40960"), "{ptx}");
}

#[test]
fn the_pairs_multicast_load_assembles() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact(
        "pair_multicast_gemm",
        &pair_multicast_gemm::KERNEL.artifacts[0],
    )
    .expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    let has = |op: &str| c.sass.keys().any(|k| k.starts_with(op));
    assert!(has("UTMALDG") && has("UTCHMMA.2CTA"), "{:?}", c.sass);
}

#[test]
fn the_pairs_multicast_kernel_round_trips_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let art = &pair_multicast_gemm::KERNEL.artifacts[0];
    let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.to_string(), art.ir);
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}
