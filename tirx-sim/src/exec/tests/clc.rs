//! Cluster launch control (`clc.rs`): a work-stealing loop over 8 one-CTA clusters — each
//! CTA does its own tile, then asks to cancel a cluster not yet started and does that one's
//! tile, until a request fails — under each [`ClcMode`]; and the three misuses diagnosed.

use super::*;

/// CTA `c` writes `1000·(c + 1) + tile` to `out[tile]` for every tile it processes. `edit`
/// rewrites the body (planted bugs). With clusters of two (`pair`), rank 0 asks with
/// `.multicast::cluster::all` and rank `r` processes tile `first + r`.
fn steal(
    mode: ClcMode,
    seed: u64,
    pair: bool,
    edit: impl Fn(String) -> String,
) -> Result<Vec<u32>, SimError> {
    let (multicast, rank, sync) = if pair {
        (
            ".multicast::cluster::all",
            "\tmov.u32 %r6, %cluster_ctarank;\n",
            "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n",
        )
    } else {
        ("", "\tmov.u32 %r6, 0;\n", "")
    };
    let body = format!(
        "\t.reg .b128 %q<2>;\n\tld.param.u64 %rd0, [p_out];\n\tmov.u32 %r1, %ctaid.x;\n{rank}\
         \tmov.u32 %r2, smem;\n\tadd.u32 %r3, %r2, 16;\n\
         \tmbarrier.init.shared::cta.b64 [%r3], 1;\n{sync}\tmov.u32 %r4, 0;\n\
         \tmov.u32 %r10, %ctaid.x;\n\tmad.lo.u32 %r11, %r10, 1000, 1000;\n\
         $L_tile:\n\tadd.u32 %r5, %r11, %r1;\n\tmul.wide.u32 %rd1, %r1, 4;\n\
         \tadd.u64 %rd1, %rd1, %rd0;\n\tst.global.u32 [%rd1], %r5;\n\
         \tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 16;\n\
         \tsetp.eq.u32 %p2, %r6, 0;\n{sync}\
         \t@%p2 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes\
         {multicast}.b128 [%r2], [%r3];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p0, [%r3], %r4;\n\
         \t@!%p0 bra $L_wait;\n\txor.b32 %r4, %r4, 1;\n\tld.shared.b128 %q0, [%r2];\n\
         \tclusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q0;\n\
         \t@!%p1 bra $L_end;\n\
         \tclusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r1, %q0;\n\
         \tadd.u32 %r1, %r1, %r6;\n\tbra.uni $L_tile;\n$L_end:\n\tret;\n"
    );
    let m = module(OUT, &edit(body));
    let launch = Launch {
        grid: [8, 1, 1],
        cluster: [if pair { 2 } else { 1 }, 1, 1],
        block: [1, 1, 1],
        smem_bytes: 64,
    };
    let policy = Policy {
        clc: mode,
        ..Policy::default()
    };
    let mut dev = Device::new();
    let out = dev.alloc(32);
    dev.write(out, &[0xa5; 32]).unwrap();
    let p = Program::new(&m, "k")?;
    run_program(
        &p,
        &launch,
        &[ParamValue::U64(out)],
        &mut dev,
        seed,
        &policy,
    )?;
    Ok(u32s(&dev.read(out, 32).unwrap()))
}

/// The CTA that processed each tile (every tile exactly once: the value names it).
fn owners(out: &[u32]) -> Vec<u32> {
    out.iter()
        .enumerate()
        .map(|(tile, &v)| {
            assert_eq!(v % 1000, tile as u32, "tile {tile}: {out:?}");
            v / 1000 - 1
        })
        .collect()
}

#[test]
fn failed_requests_leave_every_cluster_its_own_tile() {
    let out = steal(ClcMode::Fail, 1, false, |b| b).unwrap();
    assert_eq!(owners(&out), (0..8).collect::<Vec<u32>>());
}

#[test]
fn successful_requests_let_the_first_cluster_take_every_tile() {
    for seed in 0..3 {
        let own = owners(&steal(ClcMode::Succeed, seed, false, |b| b).unwrap());
        assert!(own.iter().all(|&c| c == own[0]), "seed {seed}: {own:?}");
    }
}

#[test]
fn random_answers_split_the_tiles_and_each_runs_once() {
    let mut stolen = false;
    let mut kept = false;
    for seed in 0..6 {
        let own = owners(&steal(ClcMode::Random, seed, false, |b| b).unwrap());
        stolen |= own.iter().enumerate().any(|(t, &c)| c != t as u32);
        kept |= own.iter().enumerate().any(|(t, &c)| c == t as u32);
    }
    assert!(stolen && kept);
}

#[test]
fn a_multicast_response_reaches_both_ctas_of_the_pair() {
    // Clusters {0,1} … {6,7}: the first pair to run takes every other pair's two tiles.
    let own = owners(&steal(ClcMode::Succeed, 4, true, |b| b).unwrap());
    let first = own[0] & !1;
    for (t, c) in own.iter().enumerate() {
        assert_eq!(*c, first + (t as u32 & 1), "tile {t}: {own:?}");
    }
    let own = owners(&steal(ClcMode::Fail, 4, true, |b| b).unwrap());
    assert_eq!(own, (0..8).collect::<Vec<u32>>());
}

#[test]
fn clc_misuse_is_diagnosed() {
    // The response read without waiting for the request.
    let no_wait = |b: String| b.replace("\t@!%p0 bra $L_wait;\n", "");
    let errors: Vec<String> = (0..4)
        .filter_map(|s| steal(ClcMode::Random, s, false, no_wait).err())
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("still writing its response")),
        "{errors:?}"
    );
    // get_first_ctaid of a failed response.
    let no_exit = |b: String| b.replace("\t@!%p1 bra $L_end;\n", "");
    let e = steal(ClcMode::Fail, 1, false, no_exit).unwrap_err();
    assert!(e.to_string().contains("get_first_ctaid of a failed"), "{e}");
    // Asking again after a failure.
    let again = |b: String| b.replace("\t@!%p1 bra $L_end;\n", "\t@!%p1 bra $L_tile;\n");
    let e = steal(ClcMode::Fail, 1, false, again).unwrap_err();
    assert!(
        e.to_string()
            .contains("after this CTA observed a failed request"),
        "{e}"
    );
}
