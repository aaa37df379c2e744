//! `reduce_… (across = cluster)` lowers to the push form (issue #32): each CTA `st.async`s its
//! statistic into slot `[its rank]` of every CTA's receive area with complete-tx on that
//! CTA's mbarrier, waits on its own barrier and combines the slots in rank order — no cluster
//! barrier per reduction. `across = cluster_pull` keeps the pull form (cluster barrier, then
//! `ld.shared::cluster` of every peer's slot). Both combine in rank order, so their results
//! are bit-identical.
//!
//! The kernels here run the exchange in a loop (two alternating receive sets and barriers,
//! parity per round) on a tile whose rows sit in four warps (four groups of one statistic
//! each, so each CTA's receive area holds four groups × two ranks).

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::put;
use tirx_sim::Device;

use super::emu_io::{assert_ir_round_trips, launch_seeded, poisoned, read32, words32};

/// Rows of `2 · 128` columns, four per round, split over the pair: `y = x − max + sum`.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn push_loop(#[shape(R, 256)] x: Tensor<f32>, #[shape(R, 256)] y: Tensor<f32>) {
    let t = regs::<f32>([4, 128], layout = blocked(vec = 4));
    for i in 0..R / 4 {
        copy(t, x.tile(i, cta_rank));
        let m = reduce_max(t, axis = 1, across = cluster);
        let s = reduce_sum(t, axis = 1, across = cluster);
        copy(y.tile(i, cta_rank), t - m + s);
    }
}

/// [`push_loop`] in the pull form.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pull_loop(#[shape(R, 256)] x: Tensor<f32>, #[shape(R, 256)] y: Tensor<f32>) {
    let t = regs::<f32>([4, 128], layout = blocked(vec = 4));
    for i in 0..R / 4 {
        copy(t, x.tile(i, cta_rank));
        let m = reduce_max(t, axis = 1, across = cluster_pull);
        let s = reduce_sum(t, axis = 1, across = cluster_pull);
        copy(y.tile(i, cta_rank), t - m + s);
    }
}

/// Runs `art` on `x` (`rows × 256`) under `seed`; the output's bits.
fn run(art: &KernelArtifact, x: &[f32], rows: usize, seed: u64) -> Vec<u32> {
    let mut dev = Device::new();
    let xt = put(
        &mut dev,
        &words32(x, f32::to_bits),
        ElemType::F32,
        &[rows, 256],
    );
    let yt = poisoned(&mut dev, ElemType::F32, &[rows, 256]);
    launch_seeded(art, &mut dev, &[xt, yt.clone()], seed);
    read32(&dev, &yt, rows * 256)
}

/// Six rounds (every set and parity twice), under several schedules: both forms match the
/// f64 reference and each other bit for bit.
#[test]
fn the_push_form_matches_the_pull_form_bit_for_bit_in_a_loop() {
    const R: usize = 24;
    let mut rng = Rng::new(32);
    let x: Vec<f32> = (0..R * 256).map(|_| rng.unit() * 8.0 - 4.0).collect();
    for seed in [1, 3, 8] {
        let push = run(&push_loop::KERNEL.artifacts[0], &x, R, seed);
        let pull = run(&pull_loop::KERNEL.artifacts[0], &x, R, seed);
        assert_eq!(push, pull, "seed {seed}: the forms differ");
        for r in 0..R {
            let row = &x[r * 256..(r + 1) * 256];
            let m = row
                .iter()
                .fold(f64::NEG_INFINITY, |a, &v| a.max(f64::from(v)));
            let s: f64 = row.iter().map(|&v| f64::from(v)).sum();
            for c in 0..256 {
                let want = f64::from(row[c]) - m + s;
                let got = f64::from(f32::from_bits(push[r * 256 + c]));
                assert!(
                    (got - want).abs() < 1e-3,
                    "seed {seed} ({r}, {c}): {got} vs {want}"
                );
            }
        }
    }
}

/// The lowering: the push form stores with `st.async` and waits on its mbarrier, with no
/// cluster barrier of its own — the kernel keeps only the prologue's (after the barriers'
/// initialisation) and the exit's, however many reductions run; the pull form has two per
/// reduction in a loop. Both round-trip through the IR text.
#[test]
fn the_push_form_has_no_cluster_barrier_per_reduction() {
    let push = push_loop::KERNEL.artifacts[0].ptx;
    let pull = pull_loop::KERNEL.artifacts[0].ptx;
    let arrives = |p: &str| p.matches("barrier.cluster.arrive").count();
    assert_eq!(arrives(push), 2, "{push}");
    assert_eq!(arrives(pull), 1 + 2 * 2, "{pull}");
    for op in [
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32",
        "mapa.shared::cluster.u32",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
    ] {
        assert!(push.contains(op), "push_loop lacks {op}");
    }
    assert!(!push.contains("ld.shared::cluster"), "push_loop pulls");
    assert!(pull.contains("ld.shared::cluster.f32") && !pull.contains("st.async"));
    // Two rounds' sets: the receive area is 2 sets × 4 groups × 2 ranks × 4 bytes per
    // statistic, armed 32 bytes a round; two barriers each.
    assert!(push.contains("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r"));
    assert!(push.contains("], 32;"), "{push}");
    // The tile IR says which form (`cluster`, `cluster pull`).
    assert!(!push_loop::KERNEL.artifacts[0].ir.contains("cluster pull"));
    assert!(pull_loop::KERNEL.artifacts[0].ir.contains("cluster pull"));
    assert_ir_round_trips(&push_loop::KERNEL.artifacts[0], true);
    assert_ir_round_trips(&pull_loop::KERNEL.artifacts[0], true);
}
