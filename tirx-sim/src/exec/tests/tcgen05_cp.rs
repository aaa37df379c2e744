//! `tcgen05.cp` (PTX ISA §9.7.16.9.2) in its `.128x256b`, `.128x128b`, `.4x256b`,
//! `.32x128b.warpx4` and `.64x128b.warpx2::02_13` / `::01_23` shapes:
//! each lane of the shape takes its row of the descriptor's K-major matrix, four bytes to a
//! column; the copy runs at the issuing thread's commit; refused shapes and a source written
//! without `fence.proxy.async` are diagnosed. And an MMA reading A from tensor memory
//! (`[a-tmem]`) over cells a `tcgen05.st` wrote without its `tcgen05.wait::st`.

use super::*;

/// Every thread writes the words `8t … 8t + 7` at `smem + 1024 + 32t` (so word `i` sits at
/// byte `1024 + 4i`), thread 0 copies with `tcgen05.cp.cta_group::1.<shape>` from an
/// unswizzled K-major descriptor at 1024 (LBO 128, SBO 256) into columns 0… of a fresh
/// 32-column allocation, commits, and every thread loads its lane's columns 0..8.
fn copy_then_load(shape: &str, fence: &str) -> Result<Vec<u32>, SimError> {
    let desc = "0x0000401000080000";
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \tshl.b32 %r4, %r0, 5;\n\tadd.u32 %r4, %r4, %r1;\n\tshl.b32 %r10, %r0, 3;\n\
         \tadd.u32 %r11, %r10, 1;\n\tadd.u32 %r12, %r10, 2;\n\tadd.u32 %r13, %r10, 3;\n\
         \tadd.u32 %r14, %r10, 4;\n\tadd.u32 %r15, %r10, 5;\n\tadd.u32 %r16, %r10, 6;\n\
         \tadd.u32 %r17, %r10, 7;\n\
         \tst.shared.v4.u32 [%r4+1024], {{%r10, %r11, %r12, %r13}};\n\
         \tst.shared.v4.u32 [%r4+1040], {{%r14, %r15, %r16, %r17}};\n{fence}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r6;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\
         \t@%p1 tcgen05.cp.cta_group::1.{shape} [%r2], %rd3;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\tadd.u32 %r3, %r3, %r2;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x8.b32 \
         {{%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}}, [%r3];\n\
         \ttcgen05.wait::ld.sync.aligned;\n\tmul.wide.u32 %rd2, %r0, 32;\n\
         \tadd.u64 %rd2, %rd2, %rd0;\n\tst.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\
         \tst.global.v4.u32 [%rd2+16], {{%r24, %r25, %r26, %r27}};\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    Ok(u32s(&run_out(
        &module(OUT, &body),
        &one_cta(128, 8192),
        128 * 32,
        4,
    )?))
}

/// The word an unswizzled K-major matrix at 1024 (LBO 128, SBO 256) holds at row `r`, bytes
/// `4c …`: 16-byte chunks of 8 rows form a core matrix (128 B), chunks LBO apart along K,
/// 8-row groups SBO apart (the canonical layout, §9.7.16.4).
fn word(r: u32, c: u32) -> u32 {
    ((r / 8) * 256 + (c / 4) * 128 + (r % 8) * 16 + (c % 4) * 4) / 4
}

const FENCE: &str = "\tfence.proxy.async.shared::cta;\n";

#[test]
fn each_shape_copies_its_lanes_and_bytes() {
    for (shape, lanes, cols) in [("128x256b", 128, 8), ("128x128b", 128, 4), ("4x256b", 4, 8)] {
        let out = copy_then_load(shape, FENCE).unwrap_or_else(|e| panic!("{shape}: {e}"));
        for r in 0..128u32 {
            for c in 0..8u32 {
                let got = out[(8 * r + c) as usize];
                if r < lanes && c < cols {
                    assert_eq!(got, word(r, c), "{shape}: lane {r}, column {c}");
                } else {
                    assert_eq!(got, 0, "{shape}: lane {r}, column {c} written");
                }
            }
        }
    }
}

#[test]
fn a_source_written_without_a_proxy_fence_and_other_shapes_are_diagnosed() {
    let e = copy_then_load("128x256b", "").unwrap_err();
    assert!(matches!(e, SimError::UnfencedProxy { .. }), "{e}");
    assert!(e.to_string().contains("tcgen05.cp"), "{e}");
    let e = copy_then_load("128x128b.b8x16.b6x16_p32", FENCE).unwrap_err();
    assert!(
        e.to_string().contains("only tcgen05.cp.cta_group::{1,2}"),
        "{e}"
    );
    let e = copy_then_load("32x128b", FENCE).unwrap_err();
    assert!(e.to_string().contains(".warpx4"), "{e}");
    let e = copy_then_load("64x128b", FENCE).unwrap_err();
    assert!(e.to_string().contains(".warpx2::02_13"), "{e}");
    let e = copy_then_load("32x128b.warpx2::01_23", FENCE).unwrap_err();
    assert!(e.to_string().contains(".warpx4"), "{e}");
}

/// `.32x128b.warpx4` (§9.7.16.9.2): the 32 rows × 16 bytes land in every 32-lane quarter —
/// lane `32q + r` holds row `r`'s four words — as block scaling's factors must
/// (§9.7.16.10.7, duplicated to all lane partitions).
#[test]
fn the_warpx4_shape_copies_its_32_rows_to_every_lane_quarter() {
    let out = copy_then_load("32x128b.warpx4", FENCE).unwrap_or_else(|e| panic!("{e}"));
    for lane in 0..128u32 {
        for c in 0..8u32 {
            let got = out[(8 * lane + c) as usize];
            let want = if c < 4 { word(lane % 32, c) } else { 0 };
            assert_eq!(got, want, "lane {lane}, column {c}");
        }
    }
}

/// `.64x128b.warpx2::02_13` and `::01_23` (§9.7.16.9.2): 64 rows × 16 bytes, each row
/// written twice. `02_13`: rows 0-31 to the lane quarters of warps 0 and 2, rows 32-63 to
/// warps 1 and 3 (row `r` at lanes `r` and `64 + r`); `01_23`: rows 0-31 to warps 0 and 1,
/// rows 32-63 to warps 2 and 3 (lane `l` holds row `32·(l / 64) + l % 32`).
#[test]
fn the_warpx2_shapes_copy_their_64_rows_to_two_lane_quarters_each() {
    let row_02_13 = |l: u32| l % 64;
    let row_01_23 = |l: u32| 32 * (l / 64) + l % 32;
    for (shape, row_of) in [
        ("64x128b.warpx2::02_13", &row_02_13 as &dyn Fn(u32) -> u32),
        ("64x128b.warpx2::01_23", &row_01_23),
    ] {
        let out = copy_then_load(shape, FENCE).unwrap_or_else(|e| panic!("{shape}: {e}"));
        for lane in 0..128u32 {
            for c in 0..8u32 {
                let got = out[(8 * lane + c) as usize];
                let want = if c < 4 { word(row_of(lane), c) } else { 0 };
                assert_eq!(got, want, "{shape}: lane {lane}, column {c}");
            }
        }
    }
}

/// Four warps store words into columns 0..4 of their lanes (`tcgen05.st`, `wait_st` after or
/// not), then thread 0 runs one `tcgen05.mma` reading A from TMEM at column 0 (`[a-tmem]`)
/// into D at column 16 (B from zeroed shared memory), commits, and everyone waits.
fn mma_reading_stored_a(wait_st: &str) -> Result<Vec<u8>, SimError> {
    let desc = "0x0000401000080000";
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\
         \ttcgen05.st.sync.aligned.32x32b.x4.b32 [%r3], {{%r0, %r0, %r0, %r0}};\n{wait_st}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tmov.b32 %r9, 0x08040490;\n\
         \tadd.u32 %r8, %r2, 16;\n\tsetp.ne.u32 %p2, 0, 0;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r8], [%r2], %rd4, %r9, %p2;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    run_out(&module(OUT, &body), &one_cta(128, 8192), 16, 4)
}

#[test]
fn an_mma_reading_a_from_cells_awaiting_wait_st_is_diagnosed() {
    mma_reading_stored_a("\ttcgen05.wait::st.sync.aligned;\n").expect("runs");
    let e = mma_reading_stored_a("").unwrap_err();
    assert!(
        e.to_string().contains("reads A from lane") && e.to_string().contains("wait::st"),
        "{e}"
    );
}

/// Thread 0 issues a `tcgen05.mma` reading A from TMEM columns 0..8 (D at column 16) and,
/// only after a CTA barrier, commits it; between the two every warp stores into columns
/// `col..col + 4` of its lanes with `tcgen05.st`.
fn store_under_queued_a(col: u32) -> Result<Vec<u8>, SimError> {
    let desc = "0x0000401000080000";
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\tadd.u32 %r3, %r3, {col};\n\
         \tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tmov.b32 %r9, 0x08040490;\n\
         \tadd.u32 %r8, %r2, 16;\n\tsetp.ne.u32 %p2, 0, 0;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r8], [%r2], %rd4, %r9, %p2;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \ttcgen05.st.sync.aligned.32x32b.x4.b32 [%r3], {{%r0, %r0, %r0, %r0}};\n\
         \ttcgen05.wait::st.sync.aligned;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    run_out(&module(OUT, &body), &one_cta(128, 8192), 16, 4)
}

#[test]
fn a_store_into_a_cells_an_issued_mma_has_not_read_yet_is_diagnosed() {
    // Columns 8..12 are no A cell of the MMA (A spans columns 0..8).
    store_under_queued_a(8).expect("runs");
    let e = store_under_queued_a(4).unwrap_err();
    assert!(
        e.to_string()
            .contains("reads as A from tensor memory and has not run yet"),
        "{e}"
    );
}

/// `tcgen05.cp.cta_group::2.128x256b` (§9.7.16.9.2: "copied into the Tensor Memory of both
/// the current and the peer CTAs"): each CTA of a 2-CTA cluster writes its own words
/// (`8t … 8t + 7` plus `1000·rank`) at `smem + 1024`, the even CTA's thread 0 alone issues
/// the copy and the multicast commit, and every thread of both CTAs loads its lane's columns
/// 0..8 into `out[rank]`. With `no_peer` the cluster is one CTA (its TMEM allocated with
/// `cta_group::1`); `group` is the copy's `cta_group`.
fn pair_copy(no_peer: bool, group: u32) -> Result<Vec<u32>, SimError> {
    let desc = "0x0000401000080000";
    let ag = if no_peer { 1 } else { 2 };
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tmov.u32 %r6, %cluster_ctarank;\n\
         \tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::{ag}.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \t@%p0 tcgen05.relinquish_alloc_permit.cta_group::{ag}.sync.aligned;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \tshl.b32 %r4, %r0, 5;\n\tadd.u32 %r4, %r4, %r1;\n\tshl.b32 %r10, %r0, 3;\n\
         \tmad.lo.u32 %r10, %r6, 1000, %r10;\n\
         \tadd.u32 %r11, %r10, 1;\n\tadd.u32 %r12, %r10, 2;\n\tadd.u32 %r13, %r10, 3;\n\
         \tadd.u32 %r14, %r10, 4;\n\tadd.u32 %r15, %r10, 5;\n\tadd.u32 %r16, %r10, 6;\n\
         \tadd.u32 %r17, %r10, 7;\n\
         \tst.shared.v4.u32 [%r4+1024], {{%r10, %r11, %r12, %r13}};\n\
         \tst.shared.v4.u32 [%r4+1040], {{%r14, %r15, %r16, %r17}};\n{FENCE}\
         \ttcgen05.fence::before_thread_sync;\n\
         \tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
         \ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\
         \tadd.u32 %r7, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r7;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\
         \tsetp.eq.u32 %p5, %r6, 0;\n\tand.pred %p2, %p1, %p5;\n\tmov.u16 %h0, 3;\n\
         \t@%p2 tcgen05.cp.cta_group::{group}.128x256b [%r2], %rd3;\n\
         \t@%p2 tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster\
         .multicast::cluster.b64 [%r1+8], %h0;\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\tadd.u32 %r3, %r3, %r2;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x8.b32 \
         {{%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}}, [%r3];\n\
         \ttcgen05.wait::ld.sync.aligned;\n\tmad.lo.u32 %r8, %r6, 128, %r0;\n\
         \tmul.wide.u32 %rd2, %r8, 32;\n\
         \tadd.u64 %rd2, %rd2, %rd0;\n\tst.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\
         \tst.global.v4.u32 [%rd2+16], {{%r24, %r25, %r26, %r27}};\n\
         \ttcgen05.fence::before_thread_sync;\n\
         \tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
         \t@%p0 tcgen05.dealloc.cta_group::{ag}.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    let n = if no_peer { 1 } else { 2 };
    let launch = Launch {
        grid: [n, 1, 1],
        cluster: [n, 1, 1],
        block: [128, 1, 1],
        smem_bytes: 8192,
    };
    Ok(u32s(&run_out(
        &module(OUT, &body),
        &launch,
        2 * 128 * 32,
        4,
    )?))
}

#[test]
fn the_pairs_copy_fills_each_ctas_tensor_memory_from_its_own_shared_memory() {
    let out = pair_copy(false, 2).unwrap_or_else(|e| panic!("{e}"));
    for rank in 0..2u32 {
        for r in 0..128u32 {
            for c in 0..8u32 {
                let got = out[(8 * (128 * rank + r) + c) as usize];
                assert_eq!(
                    got,
                    word(r, c) + 1000 * rank,
                    "rank {rank}, lane {r}, column {c}"
                );
            }
        }
    }
    // The pair's copy in a CTA without a peer is refused where it is issued.
    let e = pair_copy(true, 2).unwrap_err();
    assert!(
        e.to_string()
            .contains("tcgen05.cp.cta_group::2 in a CTA without a peer"),
        "{e}"
    );
    // A one-CTA copy committed by the pair's commit: one `cta_group` for all (§9.7.16.9.2).
    let e = pair_copy(false, 1).unwrap_err();
    assert!(
        e.to_string()
            .contains("tcgen05.commit.cta_group::2 after a tcgen05.cp.cta_group::1"),
        "{e}"
    );
}
