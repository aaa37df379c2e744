//! The CTA pair (`tcgen05 .cta_group::2`, PTX ISA §9.7.16.5): a hand-written 2-CTA kernel
//! whose even CTA issues M = 256 or M = 128 MMAs over both CTAs' operand halves, checked
//! against an f64 reference on random bf16 data (M = 128 cell by cell in the 2x2 data path's
//! lanes and columns, §9.7.16.10.5.2), A read from shared memory or from each CTA's tensor
//! memory (copied there by the pair's `tcgen05.cp`; for M = 128 duplicated over both lane
//! halves, or planted not), and the protocol errors of the pair (a commit without multicast,
//! no peer CTA, alloc/dealloc or MMA/commit disagreeing on `cta_group`, the odd CTA releasing
//! its columns before the pair's MMAs have written them).

use super::*;

/// K per MMA, and the MMAs per run (K = 32 in all).
const K_STEP: usize = 16;
const K_STEPS: usize = 2;
/// Shared-memory offset of the operands (after the TMEM slot and the mbarrier).
const OPS: usize = 1024;

/// The edits of a planted bug.
#[derive(Clone, Copy, Default)]
struct Plant {
    /// Commit without `.multicast::cluster`.
    no_multicast: bool,
    /// A cluster of 1 (no peer CTA).
    no_cluster: bool,
    /// Deallocate with `cta_group::1`.
    dealloc_1: bool,
    /// Commit with `cta_group::1`.
    commit_1: bool,
    /// The MMAs read A from tensor memory (`[a-tmem]`), staged there from the shared image
    /// by `tcgen05.cp.cta_group::2.<shape>` (each CTA its own half), the shape given.
    a_tmem: Option<&'static str>,
    /// With `a_tmem`: after the even CTA issues the first step's pair copy (queued, not yet
    /// committed) and a cluster barrier, the odd CTA's warps `tcgen05.ld` A's first column.
    peer_reads_a: bool,
    /// With `a_tmem`: after the even CTA issues the first step's pair MMA (queued, not yet
    /// committed) and a cluster barrier, the odd CTA's warps `tcgen05.st` into A's first
    /// column.
    peer_stores_a: bool,
    /// The odd CTA deallocates its columns of the pair's allocation (and skips its final
    /// dealloc) after a cluster barrier, before the MMAs have written its rows of D there.
    early_release: Option<Release>,
}

/// Where the planted early release stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Release {
    /// After the even CTA issued its pair MMAs (queued, not yet committed).
    AfterIssue,
    /// Before the even CTA issues them.
    BeforeIssue,
}

/// Unswizzled K-major byte offset of (`r`, `k`) in a block of 16 K: 8×8 core matrices, LBO
/// 128 (next 8 K), SBO 256 (next 8 rows) (§9.7.16 shared-memory descriptor).
fn k_major(r: usize, k: usize) -> usize {
    (r / 8) * 256 + (k / 8) * 128 + (r % 8) * 16 + (k % 8) * 2
}

/// The shared-memory image of one CTA's halves: `K_STEPS` blocks of A (`M/2` rows), then
/// `K_STEPS` blocks of B (`n/2` rows). `a[r][k]`, `b[r][k]` are bf16 bits.
fn image(a: &[Vec<u16>], b: &[Vec<u16>]) -> Vec<u8> {
    let (ab, bb) = (a.len() * 32, b.len() * 32);
    let mut img = vec![0u8; K_STEPS * (ab + bb)];
    for s in 0..K_STEPS {
        for (r, row) in a.iter().enumerate() {
            for k in 0..K_STEP {
                let o = s * ab + k_major(r, k);
                img[o..o + 2].copy_from_slice(&row[s * K_STEP + k].to_le_bytes());
            }
        }
        for (r, row) in b.iter().enumerate() {
            for k in 0..K_STEP {
                let o = K_STEPS * ab + s * bb + k_major(r, k);
                img[o..o + 2].copy_from_slice(&row[s * K_STEP + k].to_le_bytes());
            }
        }
    }
    img
}

/// The TMEM columns of D in each CTA: N for M = 256 (Layout A), N / 2 for M = 128 (Layout B).
fn d_cols(m: usize, n: usize) -> usize {
    if m == 128 { n / 2 } else { n }
}

/// The kernel: each CTA (128 threads) copies its image from global memory into shared memory,
/// warp 0 allocates the power of two ≥ 32 of D's columns for the pair; thread 0 of the even
/// CTA issues the `K_STEPS` MMAs (M = `m`, N = `n`) and one multicast commit; every thread
/// waits on its own CTA's mbarrier, loads its lane's `d_cols(m, n)` columns and writes them to
/// `out[rank][tid][..]`.
fn pair_ptx((m, n): (usize, usize), image_words: usize, plant: Plant) -> String {
    let dc = d_cols(m, n);
    let cols = dc.next_power_of_two().max(32);
    // With A in tensor memory, its 2 × 8 columns after D's: twice the allocation.
    let alloc = if plant.a_tmem.is_some() {
        2 * cols
    } else {
        cols
    };
    let (ab, bb) = (m / 2 * 32, n / 2 * 32);
    let desc = "0x0000401000080000";
    // f32 D, bf16 A and B, K-major, N >> 3 at bit 17, M >> 4 at bit 24.
    let idesc =
        (1u32 << 4) | (1 << 7) | (1 << 10) | (((n >> 3) as u32) << 17) | (((m >> 4) as u32) << 24);
    let mut mmas = String::new();
    for s in 0..K_STEPS {
        let (ao, bo) = (OPS + s * ab, OPS + K_STEPS * ab + s * bb);
        mmas += &format!(
            "\tadd.u32 %r14, %r1, {ao};\n\tcvt.u64.u32 %rd3, %r14;\n\tshr.u64 %rd3, %rd3, 4;\n\
             \tor.b64 %rd3, %rd3, {desc};\n\tadd.u32 %r14, %r1, {bo};\n\tcvt.u64.u32 %rd4, %r14;\n\
             \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tsetp.ne.u32 %p6, {s}, 0;\n"
        );
        // A's 16 K of this step: 8 columns at `cols + 8s`, copied by one 256-bit-row copy or
        // two 128-bit ones (the second from the next core matrix, LBO 128 bytes on).
        if let Some(shape) = plant.a_tmem {
            mmas += &format!("\tadd.u32 %r16, %r2, {};\n", cols + 8 * s);
            let halves = if shape.starts_with("128x256b") { 1 } else { 2 };
            for h in 0..halves {
                mmas += &format!(
                    "\tadd.u64 %rd7, %rd3, {};\n\
                     \t@%p2 tcgen05.cp.cta_group::2.{shape} [%r16+{}], %rd7;\n",
                    8 * h,
                    4 * h
                );
            }
            if plant.peer_reads_a && s == 0 {
                mmas += "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
                         \tsetp.ne.u32 %p7, %r6, 1;\n\t@%p7 bra $L_noread;\n\
                         \tshr.u32 %r17, %r0, 5;\n\tshl.b32 %r17, %r17, 21;\n\
                         \tadd.u32 %r17, %r17, %r16;\n\
                         \ttcgen05.ld.sync.aligned.32x32b.x1.b32 {%r18}, [%r17];\n\
                         \ttcgen05.wait::ld.sync.aligned;\n$L_noread:\n";
            }
        }
        mmas += &format!(
            "\t@%p2 tcgen05.mma.cta_group::2.kind::f16 [%r2], {a}, %rd4, %r9, %p6;\n",
            a = if plant.a_tmem.is_some() {
                "[%r16]"
            } else {
                "%rd3"
            },
        );
        if plant.peer_stores_a && s == 0 {
            mmas += "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
                     \tsetp.ne.u32 %p7, %r6, 1;\n\t@%p7 bra $L_nostore;\n\
                     \tshr.u32 %r17, %r0, 5;\n\tshl.b32 %r17, %r17, 21;\n\
                     \tadd.u32 %r17, %r17, %r16;\n\
                     \ttcgen05.st.sync.aligned.32x32b.x1.b32 [%r17], {%r0};\n\
                     \ttcgen05.wait::st.sync.aligned;\n$L_nostore:\n";
        }
    }
    let commit = match (plant.commit_1, plant.no_multicast) {
        (true, _) => {
            "\t@%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster\
                      .multicast::cluster.b64 [%r1+8], %h0;\n"
        }
        (false, true) => {
            "\t@%p2 tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n"
        }
        (false, false) => {
            "\t@%p2 tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster\
                           .multicast::cluster.b64 [%r1+8], %h0;\n"
        }
    };
    let mut loads = String::new();
    for c in (0..dc).step_by(16) {
        let regs: Vec<String> = (20..36).map(|r| format!("%r{r}")).collect();
        loads += &format!(
            "\tadd.u32 %r15, %r3, {c};\n\
             \ttcgen05.ld.sync.aligned.32x32b.x16.b32 {{{}}}, [%r15];\n\
             \ttcgen05.wait::ld.sync.aligned;\n",
            regs.join(", ")
        );
        for q in 0..4 {
            let r = 20 + 4 * q;
            loads += &format!(
                "\tst.global.v4.u32 [%rd2+{}], {{%r{r}, %r{}, %r{}, %r{}}};\n",
                4 * (c + 4 * q),
                r + 1,
                r + 2,
                r + 3
            );
        }
    }
    let g = if plant.dealloc_1 { 1 } else { 2 };
    // The odd CTA releases its columns while the even CTA's MMAs are unfinished, and skips
    // the final release.
    let release = format!(
        "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
         \tsetp.ne.u32 %p7, %r6, 1;\n\t@%p7 bra $L_kept;\n\
         \t@%p0 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, {alloc};\n$L_kept:\n"
    );
    let (before, after, last) = match plant.early_release {
        None => (String::new(), String::new(), ""),
        Some(r) => {
            let skip = "\tsetp.eq.u32 %p7, %r6, 1;\n\t@%p7 bra $L_done;\n";
            if r == Release::BeforeIssue {
                // The release, then a cluster barrier before the even CTA issues.
                let sync = "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n";
                (release + sync, String::new(), skip)
            } else {
                (String::new(), release, skip)
            }
        }
    };
    format!(
        "\tld.param.u64 %rd0, [p_out];\n\tld.param.u64 %rd5, [p_in];\n\
         \tmov.u32 %r0, %tid.x;\n\tmov.u32 %r6, %cluster_ctarank;\n\tmov.u32 %r1, smem;\n\
         \tmov.u32 %r10, %r0;\n\
         $L_copy:\n\tsetp.ge.u32 %p4, %r10, {image_words};\n\t@%p4 bra $L_copied;\n\
         \tmad.lo.u32 %r11, %r6, {image_words}, %r10;\n\tmul.wide.u32 %rd6, %r11, 4;\n\
         \tadd.u64 %rd6, %rd6, %rd5;\n\tld.global.u32 %r12, [%rd6];\n\tshl.b32 %r13, %r10, 2;\n\
         \tadd.u32 %r13, %r13, %r1;\n\tst.shared.u32 [%r13+{OPS}], %r12;\n\
         \tadd.u32 %r10, %r10, 128;\n\tbra $L_copy;\n\
         $L_copied:\n\tfence.proxy.async.shared::cta;\n\
         \tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], {alloc};\n\
         \t@%p0 tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \ttcgen05.fence::before_thread_sync;\n\
         \tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
         \ttcgen05.fence::after_thread_sync;\n\tld.shared.u32 %r2, [%r1];\n\
         \tsetp.eq.u32 %p5, %r6, 0;\n\tand.pred %p2, %p1, %p5;\n\
         \tmov.b32 %r9, {idesc:#x};\n\tmov.u16 %h0, 3;\n{before}{mmas}{after}{commit}\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\tadd.u32 %r3, %r3, %r2;\n\
         \tmad.lo.u32 %r7, %r6, 128, %r0;\n\tmul.wide.u32 %rd2, %r7, {row};\n\
         \tadd.u64 %rd2, %rd2, %rd0;\n{loads}\
         \ttcgen05.fence::before_thread_sync;\n\
         \tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\
         {last}\t@%p0 tcgen05.dealloc.cta_group::{g}.sync.aligned.b32 %r2, {alloc};\n\
         $L_done:\n\tret;\n",
        row = 4 * dc,
    )
}

/// Random bf16 bits in about [-2, 2).
fn bf16s(rng: &mut Rng, len: usize) -> Vec<u16> {
    (0..len)
        .map(|_| {
            let x = (rng.below(1 << 20) as f32 / (1 << 18) as f32) - 2.0;
            (x.to_bits() >> 16) as u16
        })
        .collect()
}

fn bf16_f64(b: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(b) << 16))
}

/// Runs the pair kernel for M = 256, N = `n` on random data; returns (out, reference) as
/// `[256][n]` f32 / f64.
fn run_pair(n: usize, seed: u64, plant: Plant) -> Result<(Vec<f32>, Vec<f64>), SimError> {
    run_pair_m((256, n), seed, plant)
}

/// Runs the pair kernel for M = `m`, N = `n` on random data; returns (out, reference): `out`
/// as the kernel wrote it, `[2][128][d_cols(m, n)]` f32 (rank, lane, column), the reference
/// `[m][n]` f64.
fn run_pair_m(
    (m, n): (usize, usize),
    seed: u64,
    plant: Plant,
) -> Result<(Vec<f32>, Vec<f64>), SimError> {
    let mut rng = Rng::new(seed);
    let k = K_STEP * K_STEPS;
    let a: Vec<Vec<u16>> = (0..m).map(|_| bf16s(&mut rng, k)).collect();
    let b: Vec<Vec<u16>> = (0..n).map(|_| bf16s(&mut rng, k)).collect();
    // Rank r holds rows m/2·r.. of A and n/2·r.. of B.
    let mut input = image(&a[..m / 2], &b[..n / 2]);
    input.extend(image(&a[m / 2..], &b[n / 2..]));
    let words = input.len() / 8;
    let module_ = module(
        ".param .u64 p_out, .param .u64 p_in",
        &pair_ptx((m, n), words, plant),
    );
    let launch = Launch {
        grid: [2, 1, 1],
        cluster: if plant.no_cluster {
            [1, 1, 1]
        } else {
            [2, 1, 1]
        },
        block: [128, 1, 1],
        smem_bytes: (OPS + input.len() / 2) as u32,
    };
    let mut dev = Device::new();
    let out_bytes = 256 * d_cols(m, n) * 4;
    let out = dev.alloc(out_bytes);
    dev.write(out, &vec![0xa5; out_bytes]).unwrap();
    let inp = dev.alloc(input.len());
    dev.write(inp, &input).unwrap();
    let params = [ParamValue::U64(out), ParamValue::U64(inp)];
    run(&module_, "k", &launch, &params, &mut dev, seed)?;
    let got = u32s(&dev.read(out, out_bytes).unwrap())
        .into_iter()
        .map(f32::from_bits)
        .collect();
    let mut want = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|q| bf16_f64(a[i][q]) * bf16_f64(b[j][q])).sum();
        }
    }
    Ok((got, want))
}

#[test]
fn the_pairs_mma_reads_both_halves_and_writes_each_ctas_rows() {
    for (n, seed) in [(32, 1), (48, 2), (80, 3)] {
        let (got, want) = run_pair(n, seed, Plant::default()).expect("runs");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let err = (f64::from(*g) - w).abs();
            assert!(
                err <= 1e-5 * w.abs().max(1.0),
                "N = {n}: D[{}][{}] = {g}, want {w}",
                i / n,
                i % n
            );
        }
    }
}

/// M = 128 across the pair (Layout B, the 2x2 data path, PTX ISA §9.7.16.10.5.2): each CTA's
/// 64 rows of D fold over its 128 lanes — lane `l`, column `c` holds row `64·rank + l % 64`,
/// column `c + (l / 64)·N/2` — read back with `32x32b` by all four warps.
#[test]
fn the_pairs_m128_mma_writes_the_2x2_data_path() {
    for (n, seed) in [(32, 4), (64, 5), (96, 6)] {
        let (got, want) = run_pair_m((128, n), seed, Plant::default()).expect("runs");
        let dc = n / 2;
        for rank in 0..2 {
            for lane in 0..128 {
                for c in 0..dc {
                    let g = got[(rank * 128 + lane) * dc + c];
                    let (i, j) = (64 * rank + lane % 64, c + (lane / 64) * dc);
                    let w = want[i * n + j];
                    assert!(
                        (f64::from(g) - w).abs() <= 1e-5 * w.abs().max(1.0),
                        "N = {n}: rank {rank} lane {lane} column {c} = {g}, want D[{i}][{j}] = {w}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_pair_commit_without_multicast_leaves_the_peers_barrier_waiting() {
    let plant = Plant {
        no_multicast: true,
        ..Plant::default()
    };
    let e = run_pair(32, 1, plant).unwrap_err();
    let SimError::Deadlock(blocked) = &e else {
        panic!("{e}")
    };
    // The even CTA got its arrival and waits at the final cluster barrier; the peer (rank 1)
    // waits for ever on its own mbarrier (the `smem` symbol sits at shared+0x400).
    let peer: Vec<_> = blocked.iter().filter(|b| b.cta == [1, 0, 0]).collect();
    assert!(
        peer.len() == 4
            && peer
                .iter()
                .all(|b| matches!(b.on, WaitOn::Mbarrier { addr: 0x408, .. })),
        "{e}"
    );
    assert!(
        e.to_string().contains(
            "CTA (1,0,0) warp 0 lanes 0xffffffff at PTX line 69: mbarrier at shared+0x408"
        ),
        "{e}"
    );
}

#[test]
fn the_pairs_protocol_errors_are_diagnosed() {
    let e = run_pair(
        32,
        1,
        Plant {
            no_cluster: true,
            ..Plant::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("has no peer CTA"), "{e}");
    let e = run_pair(
        32,
        1,
        Plant {
            dealloc_1: true,
            ..Plant::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains(
            "tcgen05.dealloc.cta_group::1 of 32 columns at 0x0, allocated with cta_group::2"
        ),
        "{e}"
    );
    let e = run_pair(
        32,
        1,
        Plant {
            commit_1: true,
            ..Plant::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("tcgen05.commit.cta_group::1 after a tcgen05.mma.cta_group::2"),
        "{e}"
    );
}

/// The pair's `[a-tmem]` form: each CTA's A half copied into its own tensor memory by the
/// even CTA's `tcgen05.cp.cta_group::2` (§9.7.16.9.2) and read by the MMA from there. M = 256
/// (Layout A) with `.128x256b`; M = 128 (Layout B, the 2x2 data path) with
/// `.64x128b.warpx2::02_13`, which writes A's 64 rows to lanes 0-63 and again to 64-127, as
/// the path reads them (CUTLASS `TmemAllocMode::Duplicated`). Planted: `::01_23` puts rows
/// 32-63 in lanes 64-95 instead — the upper lanes' columns N/2.. come out wrong.
#[test]
fn the_pairs_mma_reads_a_from_each_ctas_tensor_memory() {
    let close = |got: &[f32], want: &[f64], m: usize, n: usize| {
        let dc = d_cols(m, n);
        (0..2 * 128 * dc).all(|x| {
            let (rank, lane, c) = (x / (128 * dc), x / dc % 128, x % dc);
            let (i, j) = if m == 128 {
                (64 * rank + lane % 64, c + (lane / 64) * dc)
            } else {
                (128 * rank + lane, c)
            };
            let w = want[i * n + j];
            (f64::from(got[x]) - w).abs() <= 1e-5 * w.abs().max(1.0)
        })
    };
    for (m, n, shape, seed) in [
        (256, 32, "128x256b", 7),
        (256, 64, "128x256b", 8),
        (128, 64, "64x128b.warpx2::02_13", 9),
        (128, 96, "64x128b.warpx2::02_13", 10),
    ] {
        let plant = Plant {
            a_tmem: Some(shape),
            ..Plant::default()
        };
        let (got, want) = run_pair_m((m, n), seed, plant).expect("runs");
        assert!(close(&got, &want, m, n), "M = {m}, N = {n}, {shape}");
    }
    let plant = Plant {
        a_tmem: Some("64x128b.warpx2::01_23"),
        ..Plant::default()
    };
    let (got, want) = run_pair_m((128, 64), 9, plant).expect("runs");
    assert!(
        !close(&got, &want, 128, 64),
        "A not duplicated went unnoticed"
    );
}

/// Planted race: the odd CTA loads tensor memory that the even CTA's pair copy
/// (`tcgen05.cp.cta_group::2`, issued and not yet committed) will write in both CTAs — the
/// load is ordered after the copy only by the copy's commit (multicast to both CTAs'
/// barriers) and a wait on it. Diagnosed at the odd CTA's load, naming the peer's copy.
#[test]
fn a_peer_reading_what_the_pairs_copy_will_write_is_a_race() {
    for (m, shape) in [(256, "128x256b"), (128, "64x128b.warpx2::02_13")] {
        let plant = Plant {
            a_tmem: Some(shape),
            peer_reads_a: true,
            ..Plant::default()
        };
        let e = run_pair_m((m, 64), 11, plant).unwrap_err();
        let SimError::Race { thread, what, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(thread.cta, [1, 0, 0], "{e}");
        assert!(
            what.contains("which the tcgen05.cp of line")
                && what.contains("(thread 0 of the peer CTA, cluster rank 0) has yet to write"),
            "{e}"
        );
    }
}

/// Planted race: the odd CTA stores into its A half while the even CTA's pair MMA, issued
/// and not yet committed, will read it from there — diagnosed at the odd CTA's store.
#[test]
fn a_peer_storing_into_a_the_pairs_mma_reads_is_diagnosed() {
    let plant = Plant {
        a_tmem: Some("128x256b"),
        peer_stores_a: true,
        ..Plant::default()
    };
    let e = run_pair_m((256, 64), 12, plant).unwrap_err();
    let SimError::Protocol { thread, what, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(thread.cta, [1, 0, 0], "{e}");
    assert!(
        what.contains("tcgen05.st to lane") && what.contains("reads as A from tensor memory"),
        "{e}"
    );
}

/// Planted: the odd CTA releases its columns of the pair's allocation while the even CTA's
/// pair MMAs, issued and not committed, have yet to write its rows of D there — the release
/// before the peer's last access that PTX ISA §9.7.16.5 (Table 47) rules out and
/// verify-pair's `ReleaseBeforePeer` refuses at build. Diagnosed at the odd CTA's dealloc,
/// naming the even CTA's MMA; released before the MMAs are issued, at the MMA's write into
/// the odd CTA's columns, naming the dealloc.
#[test]
fn the_odd_cta_releasing_before_the_pairs_mma_is_diagnosed() {
    for (m, n) in [(256, 32), (128, 64)] {
        let plant = Plant {
            early_release: Some(Release::AfterIssue),
            ..Plant::default()
        };
        let e = run_pair_m((m, n), 13, plant).unwrap_err();
        let SimError::Protocol { thread, what, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(thread.cta, [1, 0, 0], "{e}");
        assert!(
            what.contains(
                "tcgen05.dealloc.cta_group::2 of 32 columns at 0x0 while the tcgen05.mma of line"
            ) && what
                .contains("(thread 0 of the peer CTA, cluster rank 0), issued and not completed"),
            "{e}"
        );
        let plant = Plant {
            early_release: Some(Release::BeforeIssue),
            ..Plant::default()
        };
        let e = run_pair_m((m, n), 13, plant).unwrap_err();
        let SimError::Protocol { thread, what, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(thread.cta, [0, 0, 0], "{e}");
        assert!(
            what.starts_with("tcgen05.mma writes lane 0, column 0 of the tensor memory of cluster rank 1, outside every allocation (released by the tcgen05.dealloc of line"),
            "{e}"
        );
    }
}

/// Writes the pair kernel's PTX for `.target sm_100a` to `$TIRX_PAIR_PTX` (for assembling it
/// with ptxas by hand: `TIRX_PAIR_PTX=/tmp/pair.ptx cargo test -p tirx-sim pair_ptx_text`).
#[test]
fn pair_ptx_text() {
    let Ok(path) = std::env::var("TIRX_PAIR_PTX") else {
        return;
    };
    let body = pair_ptx(
        (256, 48),
        (OPS + K_STEPS * (128 + 24) * 32) / 4,
        Plant::default(),
    );
    let src = format!(
        ".version 8.7\n.target sm_100a\n.address_size 64\n\
         .extern .shared .align 1024 .b8 smem[];\n\
         .visible .entry k(.param .u64 p_out, .param .u64 p_in)\n.maxntid 128, 1, 1\n\
         .reqnctapercluster 2, 1, 1\n{{\n{REGS}{body}}}\n"
    );
    std::fs::write(path, src).unwrap();
}
