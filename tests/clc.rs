//! Cluster launch control in the language (`clc::try_cancel`, `clc::is_canceled`,
//! `clc::first_cta`, sm_100a): work-stealing kernels built with the same macro as the shipped
//! ones — each CTA does its own tile, then keeps taking the tiles of CTAs not yet started until
//! a request fails (one CTA per tile, clusters of two with the multicast form, and a persistent
//! grid whose static walks are what is stolen) — assembled by ptxas with the CLC instructions in
//! their SASS, run in the emulator under every `ClcMode` against the CPU reference (no
//! Blackwell GPU here), a planted bug diagnosed, and their IR through the text form.

use half::bf16;
use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::{ClcMode, Device, Policy, SimError};

use super::sim_exec::sim_launch_policy;

/// y += 2·x + 1 over 64×64 tiles, one CTA per tile at launch. Each CTA asks for the next tile
/// while it works on its own; while a request cancels a CTA not yet started, it does that CTA's
/// tile too. Adding (rather than storing) makes a tile done twice visible in the output.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn clc_steal(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let u = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let mut tx = cta.x;
    let mut ty = cta.y;
    let mut k = 0;
    let mut more = true;
    while more {
        #[scope(thread = 0)]
        {
            clc::try_cancel(resp, next);
        }
        copy(t, x.tile(ty, tx));
        copy(u, y.tile(ty, tx));
        copy(y.tile(ty, tx), u + t * 2.0 + 1.0);
        next.wait(k % 2);
        more = clc::is_canceled(resp);
        if more {
            let (cx, cy) = clc::first_cta(resp);
            tx = cx;
            ty = cy;
        }
        k += 1;
        // Every thread has read the response before the next request overwrites it through
        // the async proxy (PTX ISA §9.7.13.17).
        fence::proxy_async();
        sync_threads();
    }
}

/// `clc_steal` for clusters of two CTAs along x: the CTA of rank 0 asks for the next cluster
/// with `multicast = true`, the response and its 16 bytes land in both CTAs, and rank `r` takes
/// tile x = first x + r. A cluster barrier each round keeps rank 0's next request from
/// overwriting a response its peer has not read.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn clc_steal_pair(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let u = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let mut tx = cta.x;
    let mut ty = cta.y;
    let mut k = 0;
    let mut more = true;
    // Both CTAs' barriers are initialised before rank 0's first request signals them.
    cluster_sync();
    while more {
        #[scope(thread = 0)]
        {
            clc::try_cancel(resp, next, multicast = true);
        }
        copy(t, x.tile(ty, tx));
        copy(u, y.tile(ty, tx));
        copy(y.tile(ty, tx), u + t * 2.0 + 1.0);
        next.wait(k % 2);
        more = clc::is_canceled(resp);
        if more {
            let (cx, cy) = clc::first_cta(resp);
            tx = cx + cta_rank;
            ty = cy;
        }
        k += 1;
        fence::proxy_async();
        cluster_sync();
    }
}

/// A persistent kernel whose CTAs steal whole static walks: CTA `(c, r)` of `P` along x does the
/// column tiles `c, c + P, c + 2P, …` of 64-row strip `r`; while it works it asks to cancel a CTA not yet
/// started and, if that succeeds, runs the cancelled CTA's walk next. When a request fails (every
/// CTA started, or none left to cancel) it exits: every walk is run once, by its own CTA or by
/// the one that cancelled it — the static persistent walk is the fallback.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, cdiv(M, 64)))]
pub fn clc_persistent(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let u = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let mut me = cta.x;
    let mut row = cta.y;
    let mut k = 0;
    let mut more = true;
    while more {
        #[scope(thread = 0)]
        {
            clc::try_cancel(resp, next);
        }
        for j in (me..cdiv(N, 64)).step_by(ncta.x) {
            copy(t, x.tile(row, j));
            copy(u, y.tile(row, j));
            copy(y.tile(row, j), u + t * 2.0 + 1.0);
        }
        next.wait(k % 2);
        more = clc::is_canceled(resp);
        if more {
            let (cx, cy) = clc::first_cta(resp);
            me = cx;
            row = cy;
        }
        k += 1;
        fence::proxy_async();
        sync_threads();
    }
}

#[test]
fn the_steal_loop_emits_the_clc_instructions() {
    let art = &clc_steal::KERNEL.artifacts[0];
    for want in [
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128",
        "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",
        "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128",
        "clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128",
        "ld.shared.b128",
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r",
    ] {
        assert!(art.ptx.contains(want), "{want}");
    }
    assert!(art.ptx.contains(", 16;"), "expect-tx of 16 bytes derived");
    let pair = &clc_steal_pair::KERNEL.artifacts[0];
    assert!(pair.ptx.contains(
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128"
    ));
}

#[test]
fn the_steal_loop_assembles_with_clc_in_the_sass() {
    let art = &clc_steal::KERNEL.artifacts[0];
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("clc_steal", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    // ptxas 13 assembles `try_cancel` (unicast) to `UGETNEXTWORKID.SELFCAST`; the response
    // load to `LDS.128`.
    let has = |op: &str| c.sass.keys().any(|k| k == op);
    assert!(
        has("UGETNEXTWORKID.SELFCAST") && has("LDS.128"),
        "{:?}",
        c.sass
    );
    let persistent = &clc_persistent::KERNEL.artifacts[0];
    let c = check_artifact("clc_persistent", persistent).expect("assembles");
    assert!(c.problems.is_empty() && c.spills == 0, "{:?}", c.problems);
    assert!(c.sass.keys().any(|k| k == "UGETNEXTWORKID.SELFCAST"));
    let pair = &clc_steal_pair::KERNEL.artifacts[0];
    let c = check_artifact("clc_steal_pair", pair).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    // The multicast form assembles to `UGETNEXTWORKID.BROADCAST`.
    assert!(
        c.sass.keys().any(|k| k == "UGETNEXTWORKID.BROADCAST"),
        "{:?}",
        c.sass
    );
}

/// Runs `clc_steal`'s PTX after `edit` on an m×n problem under `policy`; returns y.
fn steal_edited(
    art: &KernelArtifact,
    edit: impl Fn(&str) -> String,
    policy: Policy,
    seed: u64,
    x: &[bf16],
    (m, n): (usize, usize),
) -> Result<Vec<bf16>, SimError> {
    let text = edit(art.ptx);
    let mut dev = Device::new();
    let tx = upload(&mut dev, x, &[m, n]);
    let ty = upload(&mut dev, &vec![bf16::ZERO; m * n], &[m, n]);
    let sig = (art.signature)();
    sim_launch_policy(
        &text,
        &sig,
        &mut dev,
        (&[tx, ty.clone()], &[]),
        seed,
        &policy,
    )?;
    Ok(download(&dev, &ty))
}

/// Runs `art` (`clc_steal` or `clc_steal_pair`) on an m×n problem under `mode`; returns y.
fn steal(
    art: &KernelArtifact,
    mode: ClcMode,
    seed: u64,
    x: &[bf16],
    (m, n): (usize, usize),
) -> Vec<bf16> {
    let policy = Policy {
        clc: mode,
        ..Policy::default()
    };
    steal_edited(art, str::to_string, policy, seed, x, (m, n))
        .unwrap_or_else(|e| panic!("{mode:?} seed {seed}: {e}"))
}

/// The PTX without the spin loop on the response's barrier (the `mbarrier.try_wait` and its
/// branch back): the response is loaded and decoded before the request completed.
fn without_the_wait(ptx: &str) -> String {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut out = Vec::new();
    let mut skip = false;
    for (i, l) in lines.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        if l.contains("mbarrier.try_wait.parity")
            && lines
                .get(i + 3)
                .is_some_and(|n| n.contains("ld.shared.b128"))
        {
            skip = true;
            continue;
        }
        out.push(*l);
    }
    out.join("\n") + "\n"
}

/// Planted bug: the response read before its barrier's wait. The emulator diagnoses it
/// under every mode (the request is still in flight when the load reads the bytes).
#[test]
fn a_response_read_before_its_barrier_is_diagnosed_in_the_emulator() {
    let (m, n) = (64usize, 128usize);
    let x = Rng::new(5).bf16s(m * n);
    let art = &clc_steal::KERNEL.artifacts[0];
    assert_ne!(
        without_the_wait(art.ptx),
        art.ptx,
        "the edit changed nothing"
    );
    for mode in [ClcMode::Fail, ClcMode::Succeed, ClcMode::Random] {
        // Requests complete late (as they may on hardware), so the load meets one in flight.
        let policy = Policy {
            clc: mode,
            complete_one_in: 1 << 20,
            ..Policy::default()
        };
        let e = steal_edited(art, without_the_wait, policy, 1, &x, (m, n)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("clusterlaunchcontrol.try_cancel")
                && msg.contains(
                    "is still writing its response there (a missing wait on its mbarrier)"
                ),
            "{mode:?}: {e}"
        );
        // The kernel as compiled waits, and runs clean under the same late completions.
        steal_edited(art, str::to_string, policy, 1, &x, (m, n)).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn every_tile_is_done_exactly_once_under_every_clc_mode() {
    let (m, n) = (128usize, 256usize);
    let x = Rng::new(26).bf16s(m * n);
    let want: Vec<bf16> = x
        .iter()
        .map(|v| bf16::from_f32(v.to_f32() * 2.0 + 1.0))
        .collect();
    for (mode, seeds) in [
        (ClcMode::Fail, &[1u64][..]),
        (ClcMode::Succeed, &[1, 2][..]),
        (ClcMode::Random, &[1, 2, 3][..]),
    ] {
        for &seed in seeds {
            for art in [
                &clc_steal::KERNEL.artifacts[0],
                &clc_steal_pair::KERNEL.artifacts[0],
            ] {
                let got = steal(art, mode, seed, &x, (m, n));
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{} {mode:?} seed {seed}: element ({}, {}) is {g}, want {w}",
                        art.kernel,
                        i / n,
                        i % n
                    );
                }
            }
        }
    }
}

/// The text form carries the CLC ops: both kernels' IR parses back to the same text after every
/// pass (the `.b128` response registers included), and the parsed IR recompiles to the PTX the
/// macro emitted.
#[test]
fn the_clc_kernels_round_trip_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    for art in [
        &clc_steal::KERNEL.artifacts[0],
        &clc_steal_pair::KERNEL.artifacts[0],
    ] {
        let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{}: {e}", art.kernel));
        assert_eq!(m.to_string(), art.ir, "{}", art.kernel);
        assert!(art.ir.contains("clc_try_cancel") && art.ir.contains("clc_first_cta"));
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
        for s in &snaps {
            let again = parse_module(&s.text).unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
            assert_eq!(again.to_string(), s.text, "after {}", s.pass);
        }
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
    }
}

/// The persistent kernel: 10 column tiles over 4 CTAs per strip, each walk run exactly once
/// under every mode (by its own CTA when requests fail, by a stealing CTA when they succeed).
#[test]
fn the_persistent_walks_are_each_run_once_under_every_clc_mode() {
    let (m, n) = (128usize, 640usize);
    let x = Rng::new(27).bf16s(m * n);
    let art = &clc_persistent::KERNEL.artifacts[0];
    for (mode, seed) in [
        (ClcMode::Fail, 1),
        (ClcMode::Succeed, 1),
        (ClcMode::Random, 2),
        (ClcMode::Random, 3),
    ] {
        let got = steal(art, mode, seed, &x, (m, n));
        for (i, (g, v)) in got.iter().zip(&x).enumerate() {
            let w = bf16::from_f32(v.to_f32() * 2.0 + 1.0);
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{mode:?} seed {seed}: element {i}"
            );
        }
    }
}

/// Levels 8 and 9 of the Blackwell GEMM ladder (`gemm_sm100_clc`, `gemm_sm100_tma_epi`): the
/// scheduler warp's multicast request (`UGETNEXTWORKID.BROADCAST`) beside the pair's MMA,
/// commit and loads, and level 9's TMA store, no spills.
#[test]
fn the_clc_gemm_levels_assemble_with_clc_and_the_pair_forms() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for (name, more) in [
        ("gemm_sm100_clc", None),
        ("gemm_sm100_tma_epi", Some("UTMASTG")),
    ] {
        let k = tirx_kernels::catalogue::find(name).expect("shipped");
        check_clc_level(k, more);
    }
}

/// Level 8's and 9's SASS: ptxas clean, no spills, the pair's forms and the multicast request
/// (and `more`, level 9's TMA store).
fn check_clc_level(k: &tirx::Kernel, more: Option<&str>) {
    for a in k.artifacts {
        let c = check_artifact(k.name, a).expect("assembles");
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.spills, 0, "{}", a.config);
        let has = |op: &str| c.sass.keys().any(|k| k == op);
        for op in [
            "UGETNEXTWORKID.BROADCAST",
            "UTCHMMA.2CTA",
            "UTCBAR.2CTA.MULTICAST",
            "UTMALDG.2D.2CTA",
        ]
        .into_iter()
        .chain(more)
        {
            assert!(has(op), "{}: {op} missing from {:?}", a.config, c.sass);
        }
    }
}
