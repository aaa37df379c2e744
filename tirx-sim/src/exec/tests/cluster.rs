//! Clusters: distributed shared memory through `mapa` (PTX ISA §9.7.9), the cluster
//! barrier (§9.7.13 `barrier.cluster`), a remote `mbarrier.arrive`, and a multicast TMA load
//! into both CTAs of a pair (§9.7.9.25 `.multicast::cluster`).

use super::*;

fn pair(smem: u32) -> Launch {
    Launch {
        grid: [2, 1, 1],
        cluster: [2, 1, 1],
        block: [128, 1, 1],
        smem_bytes: smem,
    }
}

/// `%r2` = the 1024-aligned tile, `%r1` = the cluster rank, `%rd1` = out + 4·(rank·128 + tid).
const CLUSTER_PROLOGUE: &str = "\tld.param.u64 %rd0, [p_out];\n\tmov.u32 %r0, %tid.x;\n\
    \tmov.u32 %r1, %cluster_ctarank;\n\tmov.u32 %r2, smem;\n\tadd.u32 %r2, %r2, 1023;\n\
    \tand.b32 %r2, %r2, -1024;\n\tmad.lo.u32 %r10, %r1, 128, %r0;\n\
    \tmul.wide.u32 %rd1, %r10, 4;\n\tadd.u64 %rd1, %rd1, %rd0;\n";

#[test]
fn each_cta_reads_its_peers_shared_memory_after_the_cluster_barrier() {
    let body = format!(
        "{CLUSTER_PROLOGUE}\tmad.lo.u32 %r3, %r1, 1000, %r0;\n\tshl.b32 %r4, %r0, 2;\n\
         \tadd.u32 %r5, %r2, %r4;\n\tst.shared.u32 [%r5], %r3;\n\
         \tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\
         \txor.b32 %r6, %r1, 1;\n\tmapa.shared::cluster.u32 %r7, %r5, %r6;\n\
         \tld.shared::cluster.u32 %r8, [%r7];\n\tst.global.u32 [%rd1], %r8;\n\
         \tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\
         \tret;\n"
    );
    let m = module(OUT, &body);
    for seed in 0..4 {
        let out = u32s(&run_out(&m, &pair(2048), 1024, seed).unwrap());
        for (i, &v) in out.iter().enumerate() {
            let (rank, t) = (i as u32 / 128, i as u32 % 128);
            assert_eq!(
                v,
                (rank ^ 1) * 1000 + t,
                "seed {seed} rank {rank} thread {t}"
            );
        }
    }
    // Without the first barrier some schedule reads the peer's tile before it is written.
    let racy = module(
        OUT,
        &body.replacen(
            "\tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n",
            "",
            1,
        ),
    );
    let wrong = (0..12).any(|seed| match run_out(&racy, &pair(2048), 1024, seed) {
        Ok(o) => u32s(&o)
            .iter()
            .enumerate()
            .any(|(i, &v)| v != ((i as u32 / 128) ^ 1) * 1000 + i as u32 % 128),
        Err(_) => true,
    });
    assert!(wrong, "the missing cluster barrier went unnoticed");
}

/// CTA 0 initialises an mbarrier expecting one arrival; thread 0 of CTA 1 arrives on it
/// remotely; CTA 0 waits for phase 0. Without the remote arrival, a deadlock.
#[test]
fn a_remote_arrive_completes_a_peers_phase() {
    let arrive = "\tsetp.eq.u32 %p1, %r1, 1;\n\tand.pred %p1, %p1, %p0;\n\
        \tmapa.shared::cluster.u32 %r7, %r2, 0;\n\
        \t@%p1 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];\n";
    let body = |arrive: &str| {
        format!(
            "{CLUSTER_PROLOGUE}\tsetp.eq.u32 %p0, %r0, 0;\n\tsetp.eq.u32 %p2, %r1, 0;\n\
             \tand.pred %p3, %p0, %p2;\n\t@%p3 mbarrier.init.shared::cta.b64 [%r2], 1;\n\
             \tfence.mbarrier_init.release.cluster;\n\
             \tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\
             {arrive}\t@!%p2 bra $L_end;\n\
             $L_w:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p4, [%r2], 0;\n\t@!%p4 bra $L_w;\n\
             \tst.global.u32 [%rd1], %r1;\n$L_end:\n\tret;\n"
        )
    };
    let m = module(OUT, &body(arrive));
    let out = u32s(&run_out(&m, &pair(2048), 1024, 3).unwrap());
    assert_eq!(&out[..128], &[0; 128][..]);
    let e = run_out(&module(OUT, &body("")), &pair(2048), 1024, 3).unwrap_err();
    let SimError::Deadlock(b) = &e else {
        panic!("{e}")
    };
    assert!(b.iter().all(|b| b.cta == [0, 0, 0]), "{e}");
}

/// CTA 0's thread 0 multicasts one 64×8 bf16 box into both CTAs; each CTA's thread 0 arms
/// its own barrier with the box's bytes; everyone reads the tile back through the swizzle.
#[test]
fn a_multicast_load_lands_in_both_ctas_and_signals_both_barriers() {
    let body = format!(
        "{CLUSTER_PROLOGUE}\tadd.u32 %r3, %r2, 1024;\n\tsetp.eq.u32 %p0, %r0, 0;\n\
         \t@%p0 mbarrier.init.shared::cta.b64 [%r2], 1;\n\
         \t@%p0 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 1024;\n\
         \tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\
         \tsetp.eq.u32 %p1, %r1, 0;\n\tand.pred %p1, %p1, %p0;\n\
         \tmov.u64 %rd3, p_src;\n\tcvta.param.u64 %rd3, %rd3;\n\tmov.u32 %r4, 0;\n\
         \tmov.u16 %h0, 3;\n\
         \t@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd3, {{%r4, %r4}}], [%r2], %h0;\n\
         $L_w:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n\t@!%p2 bra $L_w;\n\
         \tshl.b32 %r5, %r0, 2;\n\tadd.u32 %r5, %r3, %r5;\n\tld.shared.u32 %r6, [%r5];\n\
         \tst.global.u32 [%rd1], %r6;\n\
         \tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\
         \tret;\n"
    );
    let m = module(&format!("{OUT}, .param .align 64 .b8 p_src[128]"), &body);
    let mut dev = Device::new();
    let src = dev.alloc(64 * 8 * 2);
    let words: Vec<u8> = (0..512u32).flat_map(|i| (i as u16).to_le_bytes()).collect();
    dev.write(src, &words).unwrap();
    let out = dev.alloc(1024);
    let map = TensorMapDesc {
        elem: TmaElem::Bf16,
        global_address: src,
        dims: vec![64, 8],
        strides_bytes: vec![128],
        box_dims: vec![64, 8],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::None,
        oob_fill: OobFill::Zero,
    };
    let params = [ParamValue::U64(out), ParamValue::TensorMap(map)];
    let stats = run(&m, "k", &pair(4096), &params, &mut dev, 5).unwrap();
    assert_eq!(stats.async_ops, 1, "one multicast copy");
    let got = u32s(&dev.read(out, 1024).unwrap());
    for (i, &v) in got.iter().enumerate() {
        let t = (i % 128) as u32;
        assert_eq!(v, (2 * t) | ((2 * t + 1) << 16), "word {i}");
    }
}
