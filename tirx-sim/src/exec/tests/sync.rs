//! Warp collectives and barriers: `shfl.sync` in every mode with clamps and segments (PTX
//! ISA §9.7.9), `vote.sync`, `elect.sync`, named barriers, mbarrier phases and parity
//! (§9.7.13), divergent branches reconverging.

use super::*;

/// Each lane stores `shfl.sync.<mode>` of `lane·10` with `b`, `c`.
fn shfl(mode: &str, b: u32, c: u32) -> Vec<u32> {
    let body = format!(
        "{PROLOGUE}\tmul.lo.u32 %r1, %r0, 10;\n\
         \tshfl.sync.{mode}.b32 %r2|%p0, %r1, {b}, {c}, -1;\n\
         \tselp.u32 %r3, 1000, 0, %p0;\n\tadd.u32 %r2, %r2, %r3;\n\
         \tst.global.u32 [%rd1], %r2;\n\tret;\n"
    );
    let m = module(OUT, &body);
    u32s(&run_out(&m, &one_cta(32, 0), 128, 7).unwrap())
}

/// The ISA's lane computation, written independently for the check: returns (source, valid).
fn want(mode: &str, lane: u32, b: u32, c: u32) -> u32 {
    let b = b & 31; // only b[4:0] counts
    let (clamp, seg) = (c & 31, (c >> 8) & 31);
    let max = (lane & seg) | (clamp & !seg);
    let (j, ok): (i64, bool) = match mode {
        "up" => (lane as i64 - b as i64, lane as i64 - b as i64 >= max as i64),
        "down" => (lane as i64 + b as i64, lane + b <= max),
        "bfly" => ((lane ^ b) as i64, lane ^ b <= max),
        _ => (
            ((lane & seg) | (b & !seg)) as i64,
            (lane & seg) | (b & !seg) <= max,
        ),
    };
    let src = if ok { j as u32 } else { lane };
    src * 10 + if ok { 1000 } else { 0 }
}

#[test]
fn shfl_sync_modes_clamps_and_segments() {
    // Full-warp forms (c = 31 for down/bfly/idx, 0 for up), and 8-lane segments
    // (segment mask 0x18: lanes of one octet, clamp 7).
    for (mode, b, c) in [
        ("bfly", 1, 31),
        ("bfly", 16, 31),
        ("up", 1, 0),
        ("up", 5, 0),
        ("down", 3, 31),
        ("idx", 5, 31),
        ("idx", 37, 31),
        ("down", 2, 0x1807),
        ("up", 2, 0x1800),
        ("idx", 3, 0x1807),
        ("bfly", 4, 0x1807),
    ] {
        let got = shfl(mode, b, c);
        let expect: Vec<u32> = (0..32).map(|l| want(mode, l, b, c)).collect();
        assert_eq!(got, expect, "shfl.{mode} b={b} c={c:#x}");
    }
    // Spot values from the definition: bfly 1 swaps neighbours; up 1 leaves lane 0 alone.
    assert_eq!(&shfl("bfly", 1, 31)[..2], &[1010, 1000]);
    assert_eq!(shfl("up", 1, 0)[0], 0);
}

#[test]
fn vote_and_elect() {
    let body = format!(
        "{PROLOGUE}\tand.b32 %r1, %r0, 1;\n\tsetp.eq.u32 %p0, %r1, 1;\n\
         \tvote.sync.ballot.b32 %r2, %p0, -1;\n\
         \tvote.sync.any.pred %p1, %p0, -1;\n\tvote.sync.all.pred %p2, %p0, -1;\n\
         \telect.sync %r3|%p3, -1;\n\
         \tselp.u32 %r4, 1, 0, %p1;\n\tselp.u32 %r5, 2, 0, %p2;\n\tselp.u32 %r6, 4, 0, %p3;\n\
         \tor.b32 %r4, %r4, %r5;\n\tor.b32 %r4, %r4, %r6;\n\
         \tshl.b32 %r3, %r3, 8;\n\tor.b32 %r4, %r4, %r3;\n\
         \tst.global.u32 [%rd1], %r4;\n\tst.global.u32 [%rd0+128], %r2;\n\tret;\n"
    );
    let m = module(OUT, &body);
    let out = u32s(&run_out(&m, &one_cta(32, 0), 132, 3).unwrap());
    assert_eq!(out[32], 0xaaaa_aaaa, "ballot of odd lanes");
    assert_eq!(out[0], 1 | 4, "any, not all, lane 0 elected");
    assert!(out[1..32].iter().all(|&v| v == 1), "{out:?}");
}

/// Lanes diverge (odd lanes take a longer path), reconverge at the join, then shuffle with
/// the whole warp: the shuffle must see every lane.
#[test]
fn divergent_lanes_reconverge_before_a_shuffle() {
    let body = format!(
        "{PROLOGUE}\tand.b32 %r1, %r0, 1;\n\tsetp.eq.u32 %p0, %r1, 0;\n\
         \tmov.u32 %r2, 0;\n\t@%p0 bra $L_even;\n\
         \tmov.u32 %r3, 0;\n$L_loop:\n\tadd.u32 %r2, %r2, 3;\n\tadd.u32 %r3, %r3, 1;\n\
         \tsetp.lt.u32 %p1, %r3, %r0;\n\t@%p1 bra $L_loop;\n\tbra.uni $L_join;\n\
         $L_even:\n\tadd.u32 %r2, %r0, 100;\n\
         $L_join:\n\tshfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;\n\
         \tst.global.u32 [%rd1], %r4;\n\tret;\n"
    );
    let m = module(OUT, &body);
    for seed in 0..4 {
        let out = u32s(&run_out(&m, &one_cta(64, 0), 256, seed).unwrap());
        for t in 0..64u32 {
            let partner = t ^ 1;
            let v = if partner % 2 == 0 {
                partner + 100
            } else {
                3 * partner
            };
            assert_eq!(out[t as usize], v, "thread {t}, seed {seed}");
        }
    }
}

/// Shared-memory exchange through `bar.sync`: each thread writes its slot, the barrier,
/// then reads its neighbour's. Without the barrier some seed would read a stale value.
#[test]
fn bar_sync_orders_shared_memory_across_warps() {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tshl.b32 %r2, %r0, 2;\n\tadd.u32 %r3, %r1, %r2;\n\
         \tadd.u32 %r4, %r0, 7;\n\tst.shared.u32 [%r3], %r4;\n\tbar.sync 0;\n\
         \tadd.u32 %r5, %r0, 1;\n\tand.b32 %r5, %r5, 127;\n\tshl.b32 %r5, %r5, 2;\n\
         \tadd.u32 %r5, %r1, %r5;\n\tld.shared.u32 %r6, [%r5];\n\
         \tst.global.u32 [%rd1], %r6;\n\tret;\n"
    );
    let m = module(OUT, &body);
    for seed in 0..6 {
        let out = u32s(&run_out(&m, &one_cta(128, 512), 512, seed).unwrap());
        for (t, &v) in out.iter().enumerate() {
            assert_eq!(v, ((t + 1) % 128) as u32 + 7, "seed {seed}");
        }
    }
    // Without the barrier, the scheduler's interleavings expose the race for some seed.
    let racy = module(OUT, &body.replace("\tbar.sync 0;\n", ""));
    let poisoned = (0..16).any(|seed| {
        run_out(&racy, &one_cta(128, 512), 512, seed)
            .map(|o| {
                u32s(&o)
                    .iter()
                    .enumerate()
                    .any(|(t, &v)| v != ((t + 1) % 128) as u32 + 7)
            })
            .unwrap_or(true)
    });
    assert!(poisoned, "a missing barrier went unnoticed in 16 schedules");
}

/// mbarrier phases: init(2), two arrivals complete phase 0; `test_wait.parity 0` is false
/// before and true after; `try_wait.parity 1` right after init succeeds (the phase before
/// phase 0 counts as complete); a second round completes phase 1.
#[test]
fn mbarrier_phases_and_parity() {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.eq.u32 %p0, %r0, 0;\n\
         \t@%p0 mbarrier.init.shared::cta.b64 [%r1], 2;\n\tbar.sync 0;\n\
         \tmbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n\
         \tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], 1;\n\
         \tbar.sync 0;\n\tsetp.lt.u32 %p3, %r0, 2;\n\
         \t@%p3 mbarrier.arrive.shared::cta.b64 %rd2, [%r1];\n\
         $L_w0:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p4, [%r1], 0;\n\t@!%p4 bra $L_w0;\n\
         \tmbarrier.test_wait.parity.shared::cta.b64 %p5, [%r1], 1;\n\
         \tbar.sync 0;\n\
         \t@%p3 mbarrier.arrive.shared::cta.b64 %rd2, [%r1];\n\
         $L_w1:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p6, [%r1], 1;\n\t@!%p6 bra $L_w1;\n\
         \tselp.u32 %r2, 1, 0, %p1;\n\tselp.u32 %r3, 2, 0, %p2;\n\tselp.u32 %r4, 4, 0, %p5;\n\
         \tor.b32 %r2, %r2, %r3;\n\tor.b32 %r2, %r2, %r4;\n\
         \tst.global.u32 [%rd1], %r2;\n\tret;\n"
    );
    let m = module(OUT, &body);
    for seed in 0..4 {
        let out = u32s(&run_out(&m, &one_cta(64, 64), 256, seed).unwrap());
        // test_wait(0) before: false; try_wait(1) at once: true; test_wait(1) in phase 1: false.
        assert!(out.iter().all(|&v| v == 2), "seed {seed}: {out:?}");
    }
}

#[test]
fn more_arrivals_than_expected_is_an_error() {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.eq.u32 %p0, %r0, 0;\n\
         \t@%p0 mbarrier.init.shared::cta.b64 [%r1], 1;\n\tbar.sync 0;\n\
         \tsetp.lt.u32 %p1, %r0, 2;\n\
         \t@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;\n\tret;\n"
    );
    let m = module(OUT, &body);
    let e = run_out(&m, &one_cta(32, 64), 128, 0).unwrap_err();
    assert!(
        matches!(&e, SimError::Protocol { what, .. } if what.contains("more arrivals")),
        "{e}"
    );
}

/// Named barriers with thread counts (PTX ISA §9.7.13.1): warp 0 writes shared memory and
/// `bar.arrive 1, 64`; warp 1 `bar.sync 1, 64` and reads it; warps 2 and 3 never take part.
/// A second exchange through barrier 2 (a second `bar.arrive 1` of warp 0 could complete
/// barrier 1's round alone, 32 + 32 arrivals, as on the hardware), and the count errors.
#[test]
fn named_barriers_with_thread_counts() {
    let body = |count2: u32| {
        format!(
            "{PROLOGUE}\tmov.u32 %r1, smem;\n\tshl.b32 %r2, %r0, 2;\n\tadd.u32 %r3, %r1, %r2;\n\
             \tsetp.ge.u32 %p0, %r0, 64;\n\t@%p0 bra $L_end;\n\
             \tsetp.ge.u32 %p1, %r0, 32;\n\t@%p1 bra $L_consumer;\n\
             \tadd.u32 %r4, %r0, 100;\n\tst.shared.u32 [%r3], %r4;\n\tbar.arrive 1, 64;\n\
             \tadd.u32 %r4, %r0, 200;\n\tst.shared.u32 [%r3+128], %r4;\n\tbar.arrive 2, 64;\n\
             \tbra.uni $L_end;\n\
             $L_consumer:\n\tbar.sync 1, 64;\n\tld.shared.u32 %r5, [%r3+-128];\n\
             \tbar.sync 2, {count2};\n\tld.shared.u32 %r6, [%r3];\n\tadd.u32 %r5, %r5, %r6;\n\
             \tst.global.u32 [%rd1], %r5;\n$L_end:\n\tret;\n"
        )
    };
    let m = module(OUT, &body(64));
    for seed in 0..4 {
        let out = u32s(&run_out(&m, &one_cta(128, 512), 512, seed).unwrap());
        for l in 0..32usize {
            // Thread 32 + l reads thread l's two values: (l + 100) + (l + 200).
            assert_eq!(out[32 + l], 2 * l as u32 + 300, "seed {seed} lane {l}");
            assert_eq!(out[l], 0xa5a5_a5a5, "warp 0 stores nothing");
        }
    }
    let e = run_out(&module(OUT, &body(96)), &one_cta(128, 512), 512, 0).unwrap_err();
    assert!(e.to_string().contains("thread counts 64 and 96"), "{e}");
    let no_count = body(64).replace("bar.arrive 2, 64;", "bar.arrive 2;");
    let e = run_out(&module(OUT, &no_count), &one_cta(128, 512), 512, 0).unwrap_err();
    assert!(
        matches!(e, SimError::Unsupported { .. }) && e.to_string().contains("thread count"),
        "{e}"
    );
}

/// `redux.sync` (PTX ISA §9.7.13 "redux.sync"): lane `l` offers `3l − 40`; every lane of the
/// mask receives the reduction. By hand over 32 lanes: Σ = 3·496 − 1280 = 208; signed min −40
/// (lane 0), max 53 (lane 31); unsigned min 2 (lane 14), max 0xffffffff (lane 13's −1); over
/// `l` itself: or 31, xor 0, and of `l | 0x100` 0x100. With mask 0xffff and lanes 16..32
/// elsewhere: Σ over lanes 0..16 = 3·120 − 640 = −280.
#[test]
fn redux_sync_reduces_over_the_member_mask() {
    let ops = [
        ("add.s32", "%r2", 208i32 as u32),
        ("min.s32", "%r2", -40i32 as u32),
        ("max.s32", "%r2", 53),
        ("min.u32", "%r2", 2),
        ("max.u32", "%r2", u32::MAX),
        ("or.b32", "%r0", 31),
        ("xor.b32", "%r0", 0),
        ("and.b32", "%r3", 0x100),
    ];
    for (op, src, want) in ops {
        let body = format!(
            "{PROLOGUE}\tmul.lo.u32 %r2, %r0, 3;\n\tsub.u32 %r2, %r2, 40;\n\
             \tor.b32 %r3, %r0, 256;\n\tredux.sync.{op} %r4, {src}, -1;\n\
             \tst.global.u32 [%rd1], %r4;\n\tret;\n"
        );
        let out = u32s(&run_out(&module(OUT, &body), &one_cta(32, 0), 128, 1).unwrap());
        assert!(out.iter().all(|&v| v == want), "{op}: {out:?}");
    }
    let half = format!(
        "{PROLOGUE}\tmul.lo.u32 %r2, %r0, 3;\n\tsub.u32 %r2, %r2, 40;\n\
         \tsetp.ge.u32 %p0, %r0, 16;\n\t@%p0 bra $L_end;\n\
         \tredux.sync.add.s32 %r4, %r2, 0xffff;\n\tst.global.u32 [%rd1], %r4;\n$L_end:\n\tret;\n"
    );
    let out = u32s(&run_out(&module(OUT, &half), &one_cta(32, 0), 128, 1).unwrap());
    assert!(out[..16].iter().all(|&v| v == -280i32 as u32), "{out:?}");
    assert!(out[16..].iter().all(|&v| v == 0xa5a5_a5a5));
}
