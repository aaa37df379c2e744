//! `st.async` (PTX ISA §9.7.9.12): each CTA of a pair pushes a word into slot `[its rank]` of
//! both CTAs' receive areas with `complete_tx` on the receiver's mbarrier, which the receiver
//! armed with `mbarrier.arrive.expect_tx` for both words; every thread then waits on its own
//! barrier and reads both slots locally — the exchange the cluster reductions lower to.

use super::*;

fn pair() -> Launch {
    Launch {
        grid: [2, 1, 1],
        cluster: [2, 1, 1],
        block: [128, 1, 1],
        smem_bytes: 2048,
    }
}

/// `%r1` = rank, `%r2` = mbarrier (1024-aligned), `%r3` = slot 0 (`%r2 + 64`); thread 0 inits,
/// the cluster synchronises, thread 0 arms 8 bytes and sends `1000·rank + 7` to both CTAs;
/// `{wait}` then everyone stores slot 0 + slot 1.
fn body(wait: &str, send: &str) -> String {
    format!(
        "\tld.param.u64 %rd0, [p_out];\n\tmov.u32 %r0, %tid.x;\n\
         \tmov.u32 %r1, %cluster_ctarank;\n\tmov.u32 %r2, smem;\n\tadd.u32 %r2, %r2, 1023;\n\
         \tand.b32 %r2, %r2, -1024;\n\tadd.u32 %r3, %r2, 64;\n\
         \tmad.lo.u32 %r10, %r1, 128, %r0;\n\tmul.wide.u32 %rd1, %r10, 4;\n\
         \tadd.u64 %rd1, %rd1, %rd0;\n\tsetp.eq.u32 %p0, %r0, 0;\n\
         \t@%p0 mbarrier.init.shared::cta.b64 [%r2], 1;\n\tfence.mbarrier_init.release.cluster;\n\
         \tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\
         \t@%p0 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 8;\n\
         \tmad.lo.u32 %r4, %r1, 1000, 7;\n\tshl.b32 %r5, %r1, 2;\n\tadd.u32 %r5, %r3, %r5;\n\
         {send}{wait}\
         \tld.shared.u32 %r8, [%r3];\n\tld.shared.u32 %r9, [%r3+4];\n\tadd.u32 %r8, %r8, %r9;\n\
         \tst.global.u32 [%rd1], %r8;\n\tret;\n"
    )
}

const SEND: &str = "\tmapa.shared::cluster.u32 %r6, %r5, 0;\n\tmapa.shared::cluster.u32 %r7, %r2, 0;\n\
    \t@%p0 st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r6], %r4, [%r7];\n\
    \tmapa.shared::cluster.u32 %r6, %r5, 1;\n\tmapa.shared::cluster.u32 %r7, %r2, 1;\n\
    \t@%p0 st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r6], %r4, [%r7];\n";

const WAIT: &str =
    "$L_w:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;\n\t@!%p1 bra $L_w;\n";

#[test]
fn st_async_lands_in_every_rank_and_completes_its_barrier() {
    let m = module(OUT, &body(WAIT, SEND));
    for seed in 0..6 {
        let out = u32s(&run_out(&m, &pair(), 1024, seed).unwrap());
        assert!(out.iter().all(|&v| v == 7 + 1007), "seed {seed}: {out:?}");
    }
    // Without the wait, some schedule reads a slot the peer's store has not reached yet.
    let racy = module(OUT, &body("", SEND));
    let caught = (0..12).any(|seed| match run_out(&racy, &pair(), 1024, seed) {
        Ok(o) => u32s(&o).iter().any(|&v| v != 1014),
        Err(e) => e.to_string().contains("st.async"),
    });
    assert!(caught, "the missing wait went unnoticed");
    // A store that signals the other CTA's barrier is refused.
    let crossed = SEND.replacen("%r2, 0;", "%r2, 1;", 1);
    let e = run_out(&module(OUT, &body(WAIT, &crossed)), &pair(), 1024, 0).unwrap_err();
    assert!(e.to_string().contains("destination's CTA"), "{e}");
    // With one store missing, the receiver waits forever.
    let half = SEND.split_inclusive('\n').take(3).collect::<String>();
    let e = run_out(&module(OUT, &body(WAIT, &half)), &pair(), 1024, 0).unwrap_err();
    assert!(matches!(e, SimError::Deadlock(_)), "{e}");
}

/// Rank 1 sends both words `(1007, 0)` in one `.v2.b32` to both CTAs; rank 0 sends nothing,
/// so each CTA's 8 armed bytes complete by rank 1's store alone.
#[test]
fn st_async_v2_b32_stores_two_words() {
    let send = "\tmov.u32 %r11, 0;\n\tsetp.eq.u32 %p2, %r1, 0;\n\t@%p2 bra $L_d;\n\
        \tmapa.shared::cluster.u32 %r6, %r3, 0;\n\tmapa.shared::cluster.u32 %r7, %r2, 0;\n\
        \t@%p0 st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r6], {%r4, %r11}, [%r7];\n\
        \tmapa.shared::cluster.u32 %r6, %r3, 1;\n\tmapa.shared::cluster.u32 %r7, %r2, 1;\n\
        \t@%p0 st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r6], {%r4, %r11}, [%r7];\n\
        $L_d:\n";
    let m = module(OUT, &body(WAIT, send));
    for seed in 0..3 {
        let out = u32s(&run_out(&m, &pair(), 1024, seed).unwrap());
        assert!(out.iter().all(|&v| v == 1007), "seed {seed}: {out:?}");
    }
}
