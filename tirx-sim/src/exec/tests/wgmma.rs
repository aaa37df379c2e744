//! wgmma: the matrix-descriptor fields and the K-major canonical layouts (PTX ISA
//! §9.7.15), checked against the field table and the layout formulas written out here.

use super::super::wgmma::MatrixDesc;
use super::*;

#[test]
fn descriptor_fields_decode_from_the_isa_table() {
    // tirx's constant for a 128B-swizzled K-major tile: SBO 1024 bytes, LBO 0, no base offset.
    let d = MatrixDesc::decode(0x4000_0040_0000_0000 | (0x1400 >> 4));
    assert_eq!(
        d,
        MatrixDesc {
            start: 0x1400,
            lbo: 0,
            sbo: 1024,
            base_offset: 0,
            swizzle: TmaSwizzle::B128
        }
    );
    let d = MatrixDesc::decode((3u64 << 62) | (5 << 49) | (0x20 << 32) | (0x8 << 16) | 0x3fff);
    assert_eq!(
        (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle),
        (0x3fff << 4, 128, 512, 5, TmaSwizzle::B32)
    );
    assert_eq!(MatrixDesc::decode(2 << 62).swizzle, TmaSwizzle::B64);
    assert_eq!(MatrixDesc::decode(0).swizzle, TmaSwizzle::None);
}

#[test]
fn k_major_layouts_place_core_matrices_and_swizzled_rows() {
    // No swizzle: 8×16-byte core matrices, LBO apart along K, SBO apart along M/N.
    let d = MatrixDesc {
        start: 0x1000,
        lbo: 128,
        sbo: 256,
        base_offset: 0,
        swizzle: TmaSwizzle::None,
    };
    assert_eq!(d.k_major(0, 0), 0x1000);
    assert_eq!(d.k_major(1, 0), 0x1000 + 16);
    assert_eq!(d.k_major(0, 7), 0x1000 + 14);
    assert_eq!(d.k_major(0, 8), 0x1000 + 128);
    assert_eq!(d.k_major(9, 9), 0x1000 + 256 + 128 + 16 + 2);
    // 128B swizzle: 128-byte rows, 8-row atoms SBO apart, chunks XOR the row in the atom.
    let s = MatrixDesc {
        start: 0x2000,
        lbo: 0,
        sbo: 1024,
        base_offset: 0,
        swizzle: TmaSwizzle::B128,
    };
    assert_eq!(s.k_major(0, 0), 0x2000);
    assert_eq!(s.k_major(1, 0), 0x2000 + 128 + 16);
    assert_eq!(s.k_major(3, 9), 0x2000 + 3 * 128 + ((1 ^ 3) * 16) + 2);
    assert_eq!(s.k_major(8, 0), 0x2000 + 1024);
}

#[test]
fn mn_major_swizzled_rows_hold_consecutive_mn_elements_of_one_k() {
    // tirx's MN-major B descriptor: 128B swizzle, LBO 8192 (64-element MN atoms), SBO 1024.
    let d = MatrixDesc {
        start: 0x4000,
        lbo: 8192,
        sbo: 1024,
        base_offset: 0,
        swizzle: TmaSwizzle::B128,
    };
    assert_eq!(d.mn_major(0, 0), Some(0x4000));
    assert_eq!(d.mn_major(1, 0), Some(0x4000 + 2));
    // k = 1 is the next 128-byte row, its chunks XOR 1.
    assert_eq!(d.mn_major(0, 1), Some(0x4000 + 128 + 16));
    assert_eq!(d.mn_major(64, 0), Some(0x4000 + 8192));
    assert_eq!(d.mn_major(0, 8), Some(0x4000 + 1024));
    let plain = MatrixDesc {
        swizzle: TmaSwizzle::None,
        ..d
    };
    assert_eq!(
        plain.mn_major(0, 0),
        None,
        "not supported without a swizzle"
    );
}

/// Zeroes the second MMA's D (`%f4..%f7`) when a test runs one MMA only.
const ZERO_F4_F7: &str = "\tmov.f32 %f4, 0f00000000;\n\tmov.f32 %f5, 0f00000000;\n\
                          \tmov.f32 %f6, 0f00000000;\n\tmov.f32 %f7, 0f00000000;\n";

/// A[m][k] of the RS tests: small integers, exact in bf16 and in every sum.
fn rs_a(m: u32, k: u32) -> f32 {
    ((m * 3 + k * 5) % 7) as f32 - 3.0
}

/// B[n][k] of the RS tests.
fn rs_b(n: u32, k: u32) -> f32 {
    ((n * 2 + k) % 5) as f32 - 2.0
}

fn bf16_bits(x: f32) -> u32 {
    // Exact for the small integers used here.
    x.to_bits() >> 16
}

/// One warpgroup: A (64 × 16) from registers loaded per thread, B (8 × 16) copied into
/// shared memory in the unswizzled K-major layout (core matrices: element (n, k) at
/// `(k / 8)·LBO + n·16 + (k % 8)·2`, LBO 128), `wgmma…m64n8k16` in the RS form, D stored
/// per thread (16 bytes each, and 16 more at +2048 for `mma2`). `between` goes between the
/// commit and the wait; `mma2` after the first MMA.
fn rs_kernel(between: &str, mma2: &str) -> Result<Vec<u32>, SimError> {
    rs_kernel_edited(between, mma2, |b| b, &Policy::default())
}

/// [`rs_kernel`] with its body rewritten by `edit` (planted bugs).
fn rs_kernel_edited(
    between: &str,
    mma2: &str,
    edit: impl Fn(String) -> String,
    policy: &Policy,
) -> Result<Vec<u32>, SimError> {
    let body = format!(
        "\tld.param.u64 %rd2, [p_a];\n\tld.param.u64 %rd3, [p_b];\n\tld.param.u64 %rd0, [p_out];\n\
         \tmov.u32 %r0, %tid.x;\n\tmul.wide.u32 %rd4, %r0, 16;\n\tadd.u64 %rd5, %rd2, %rd4;\n\
         \tld.global.v4.u32 {{%r4, %r5, %r6, %r7}}, [%rd5];\n\
         \tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 64;\n\tmul.wide.u32 %rd6, %r0, 4;\n\
         \tadd.u64 %rd7, %rd3, %rd6;\n\t@%p0 ld.global.u32 %r2, [%rd7];\n\
         \tshl.b32 %r3, %r0, 2;\n\tadd.u32 %r3, %r3, %r1;\n\t@%p0 st.shared.u32 [%r3], %r2;\n\
         \tfence.proxy.async.shared::cta;\n\tbar.sync 0;\n\
         \tcvt.u64.u32 %rd8, %r1;\n\tshr.u64 %rd8, %rd8, 4;\n\
         \tor.b64 %rd8, %rd8, 0x0000001000080000;\n\
         \twgmma.fence.sync.aligned;\n\
         \twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {{%f0, %f1, %f2, %f3}}, \
         {{%r4, %r5, %r6, %r7}}, %rd8, 0, 1, 1, 0;\n{mma2}\
         \twgmma.commit_group.sync.aligned;\n{between}\
         \twgmma.wait_group.sync.aligned 0;\n\
         \tadd.u64 %rd9, %rd0, %rd4;\n\tst.global.v4.f32 [%rd9], {{%f0, %f1, %f2, %f3}};\n\
         \tst.global.v4.f32 [%rd9+2048], {{%f4, %f5, %f6, %f7}};\n\tret;\n"
    );
    let m = module(
        ".param .u64 p_a, .param .u64 p_b, .param .u64 p_out",
        &edit(body),
    );
    // A as the ISA's fragment figure places it: thread t = 32w + l, register q holds row
    // 16w + l/4 + 8(q % 2), columns 2(l % 4) + 8(q / 2) (low half) and +1 (high half).
    let mut a_img = Vec::new();
    for t in 0..128u32 {
        let (w, l) = (t / 32, t % 32);
        for q in 0..4 {
            let (row, col) = (16 * w + l / 4 + 8 * (q % 2), 2 * (l % 4) + 8 * (q / 2));
            let v = bf16_bits(rs_a(row, col)) | bf16_bits(rs_a(row, col + 1)) << 16;
            a_img.extend_from_slice(&v.to_le_bytes());
        }
    }
    let mut b_img = vec![0u8; 256];
    for n in 0..8u32 {
        for k in 0..16u32 {
            let off = ((k / 8) * 128 + n * 16 + (k % 8) * 2) as usize;
            b_img[off..off + 2].copy_from_slice(&(bf16_bits(rs_b(n, k)) as u16).to_le_bytes());
        }
    }
    let mut dev = Device::new();
    let (a, b, out) = (dev.alloc(2048), dev.alloc(256), dev.alloc(4096));
    dev.write(a, &a_img).unwrap();
    dev.write(b, &b_img).unwrap();
    dev.write(out, &[0xa5; 4096]).unwrap();
    let params = [ParamValue::U64(a), ParamValue::U64(b), ParamValue::U64(out)];
    let p = Program::new(&m, "k")?;
    run_program(&p, &one_cta(128, 1024), &params, &mut dev, 3, policy)?;
    Ok(u32s(&dev.read(out, 4096).unwrap()))
}

/// D as the accumulator figure places it: thread t = 32w + l, register j (N = 8) holds row
/// 16w + l/4 + 8(j / 2), column 2(l % 4) + j % 2; the value Σₖ A[row][k]·B[col][k].
fn rs_expected(t: u32, j: u32) -> f32 {
    let (w, l) = (t / 32, t % 32);
    let (row, col) = (16 * w + l / 4 + 8 * (j / 2), 2 * (l % 4) + j % 2);
    (0..16).map(|k| rs_a(row, k) * rs_b(col, k)).sum()
}

#[test]
fn wgmma_takes_a_from_the_register_fragment() {
    let out = rs_kernel(
        "",
        "\tmov.f32 %f4, 0f00000000;\n\tmov.f32 %f5, 0f00000000;\n\
                             \tmov.f32 %f6, 0f00000000;\n\tmov.f32 %f7, 0f00000000;\n",
    )
    .expect("runs");
    for t in 0..128u32 {
        for j in 0..4 {
            let got = f32::from_bits(out[(t * 4 + j) as usize]);
            assert_eq!(got, rs_expected(t, j), "thread {t} register {j}");
        }
    }
    // By hand: D[0][0] = Σₖ A[0][k]·B[0][k] with A[0][k] = (5k mod 7) − 3 = −3 2 0 −2 3 1 −1
    // −3 2 0 −2 3 1 −1 −3 2 and B[0][k] = (k mod 5) − 2 = −2 −1 0 1 2 −2 −1 0 1 2 −2 −1 0 1 2
    // −2: products 6 −2 0 −2 6 −2 1 0 2 0 4 −3 0 −1 −6 −4, sum −1; thread 0's register 0.
    assert_eq!(f32::from_bits(out[0]), -1.0);
    assert!(out.iter().take(512).any(|&v| f32::from_bits(v) != 0.0));
}

#[test]
fn two_mmas_may_read_the_same_a_registers_in_flight() {
    let second = "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f4, %f5, %f6, %f7}, \
                  {%r4, %r5, %r6, %r7}, %rd8, 0, 1, -1, 0;\n";
    let out = rs_kernel("", second).expect("runs");
    for t in 0..128u32 {
        for j in 0..4 {
            let first = f32::from_bits(out[(t * 4 + j) as usize]);
            let negated = f32::from_bits(out[512 + (t * 4 + j) as usize]);
            assert_eq!(first, rs_expected(t, j));
            // imm-scale-b = −1 negates B.
            assert_eq!(negated, -rs_expected(t, j), "thread {t} register {j}");
        }
    }
}

#[test]
fn a_registers_of_an_in_flight_rs_mma_are_its_own() {
    let zero = "\tmov.f32 %f4, 0f00000000;\n\tmov.f32 %f5, 0f00000000;\n\
                \tmov.f32 %f6, 0f00000000;\n\tmov.f32 %f7, 0f00000000;\n";
    let e = rs_kernel("\tmov.b32 %r8, %r5;\n", zero).unwrap_err();
    assert!(
        matches!(e, SimError::Protocol { .. }) && e.to_string().contains("still owns"),
        "{e}"
    );
    let e = rs_kernel("\tmov.b32 %r6, 7;\n", zero).unwrap_err();
    assert!(
        matches!(e, SimError::Race { .. })
            && e.to_string().contains("`%r6`, an A register")
            && e.to_string().contains("in flight"),
        "{e}"
    );
    // An accumulator register written in flight.
    let e = rs_kernel("\tmov.f32 %f1, 0f3F800000;\n", zero).unwrap_err();
    assert!(
        matches!(e, SimError::Race { .. })
            && e.to_string()
                .contains("wrote `%f1`, an accumulator register"),
        "{e}"
    );
    // Writing it after the wait is fine.
    let after = rs_kernel("", zero).expect("runs");
    assert_eq!(f32::from_bits(after[0]), -1.0);
}

#[test]
fn wgmma_fence_separates_register_writes_from_the_mma() {
    // No wgmma.fence at all before the first MMA.
    let lenient = Policy {
        strict_wgmma_fence: false,
        ..Policy::default()
    };
    let strict = Policy::default();
    let no_fence = |b: String| b.replace("\twgmma.fence.sync.aligned;\n", "");
    let e = rs_kernel_edited("", "", no_fence, &lenient).unwrap_err();
    assert!(
        e.to_string().contains("without a wgmma.fence before it"),
        "{e}"
    );
    // An A register written after the fence: diagnosed by default, accepted when lenient
    // (ptxas serialises such MMAs).
    let late = |b: String| {
        b.replace(
            "\twgmma.fence.sync.aligned;\n",
            "\twgmma.fence.sync.aligned;\n\tmov.b32 %r5, %r5;\n",
        )
    };
    assert_eq!(
        rs_kernel_edited("", ZERO_F4_F7, late, &lenient).unwrap()[0],
        (-1f32).to_bits()
    );
    let e = rs_kernel_edited("", "", late, &strict).unwrap_err();
    assert!(
        e.to_string()
            .contains("`%r5`, which the thread wrote after its warp's last wgmma.fence"),
        "{e}"
    );
    // An accumulator zeroed after the fence.
    let zeroed = |b: String| {
        b.replace(
            "\twgmma.fence.sync.aligned;\n",
            "\twgmma.fence.sync.aligned;\n\tmov.f32 %f2, 0f00000000;\n",
        )
    };
    let e = rs_kernel_edited("", "", zeroed, &lenient).unwrap_err();
    assert!(e.to_string().contains("`%f2`"), "{e}");
}

/// The FP8 forms (`.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}`, §9.7.15.5.2) decode with their six
/// operands (no imm-trans), A and B of either FP8 type; a 16-bit type with k32, a trans
/// operand, or the RS form (not emulated yet) are refused at decode with the reason.
#[test]
fn fp8_wgmma_forms_decode_and_the_rest_are_refused() {
    let line = |inst: &str| {
        format!(
            "\tmov.u64 %rd0, 0;\n\tmov.u64 %rd1, 0;\n\twgmma.fence.sync.aligned;\n\t{inst};\n\
             \twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\tret;\n"
        )
    };
    let decodes = |inst: &str| Program::new(&module("", &line(inst)), "k").map(|_| ());
    let d = "{%f0, %f1, %f2, %f3}";
    for (a, b) in [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2")] {
        let ok =
            format!("wgmma.mma_async.sync.aligned.m64n8k32.f32.{a}.{b} {d}, %rd0, %rd1, 0, 1, 1");
        decodes(&ok).unwrap_or_else(|e| panic!("{a} x {b}: {e}"));
    }
    for (bad, why) in [
        // bf16 has no k32 shape.
        (
            format!("wgmma.mma_async.sync.aligned.m64n8k32.f32.bf16.bf16 {d}, %rd0, %rd1, 0, 1, 1"),
            "e4m3/e5m2 × e4m3/e5m2 inputs (k32)",
        ),
        // FP8 with k16.
        (
            format!(
                "wgmma.mma_async.sync.aligned.m64n8k16.f32.e4m3.e4m3 {d}, %rd0, %rd1, 0, 1, 1, 0, 0"
            ),
            "e4m3/e5m2 × e4m3/e5m2 inputs (k32)",
        ),
        // The imm-trans operands do not exist for FP8.
        (
            format!(
                "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {d}, %rd0, %rd1, 0, 1, 1, 0, 0"
            ),
            "expected 6 operands, found 8",
        ),
        // The RS form.
        (
            format!(
                "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {d}, {{%r0, %r1, %r2, %r3}}, %rd1, 0, 1, 1"
            ),
            "FP8 wgmma with A from registers is not emulated yet",
        ),
    ] {
        let e = decodes(&bad).expect_err(&bad).to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

/// 128B swizzle of byte offset `o` in a 1024-aligned region: the 16-byte chunk index XORs the
/// row's index within its 8-row atom (the TMA unit's address function, written out here so
/// the images below do not come from the emulator's own descriptor decoding).
fn swizzle128(o: usize) -> usize {
    o ^ (((o >> 7) & 7) << 4)
}

/// Random bf16 values in (−2, 2), from a fixed LCG: (bits, value).
fn random_bf16(n: usize, seed: u64) -> Vec<(u16, f64)> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0;
            let bits = (x.to_bits() >> 16) as u16;
            (bits, f64::from(f32::from_bits(u32::from(bits) << 16)))
        })
        .collect()
}

/// One warpgroup, the SS form with A 64 × 32 and B 16 × 32 (K = 32: two `m64n16k16` MMAs, the
/// descriptors advanced between them as tirx's lowering does). A is MN-major (`imm-trans-a` =
/// 1: 32 K-rows of 64 M-elements, 128 bytes each; the next K-step 16 rows = 2048 B on) or
/// K-major (64 rows of 128 bytes, the next K-step 32 B on); B K-major. The shared image is
/// copied in from global memory by every thread; D is stored per thread, 8 f32 each. Returns
/// the largest error against the f64 product of the same matrices, relative to Σ|products|.
fn ss_trans_a_error(a_mn: bool, seed: u64) -> f64 {
    const M: usize = 64;
    const N: usize = 16;
    const K: usize = 32;
    let a = random_bf16(M * K, seed);
    let b = random_bf16(N * K, seed ^ 0x5eed);
    // A's region is 8192 bytes (K-major; MN-major uses 4096), B's follows it.
    let mut img = vec![0u8; 8192 + 2048];
    for m in 0..M {
        for k in 0..K {
            let o = if a_mn {
                k * 128 + 2 * m
            } else {
                m * 128 + 2 * k
            };
            let o = swizzle128(o);
            img[o..o + 2].copy_from_slice(&a[m * K + k].0.to_le_bytes());
        }
    }
    for n in 0..N {
        for k in 0..K {
            let o = 8192 + swizzle128(n * 128 + 2 * k);
            img[o..o + 2].copy_from_slice(&b[n * K + k].0.to_le_bytes());
        }
    }
    // Descriptors (§9.7.15.5.1.2): 128B swizzle (bits 62–63 = 1), SBO 1024 (64 << 32).
    // MN-major A: LBO = the 64-element chunk stride, 32 rows × 128 B = 4096 (256 << 16), K-step
    // +2048 B (128); K-major: LBO 16 (1 << 16), K-step +32 B (2).
    let (aconst, astep) = if a_mn {
        (0x4000_0040_0100_0000u64, 128)
    } else {
        (0x4000_0040_0001_0000u64, 2)
    };
    let copy: String = (0..img.len() / 512)
        .map(|i| {
            format!(
                "\tld.global.u32 %r2, [%rd5+{o}];\n\tst.shared.u32 [%r3+{o}], %r2;\n",
                o = 512 * i
            )
        })
        .collect();
    let ta = u32::from(a_mn);
    let d = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}";
    let body = format!(
        "\tld.param.u64 %rd2, [p_img];\n\tld.param.u64 %rd0, [p_out];\n\
         \tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, smem;\n\
         \tmul.wide.u32 %rd4, %r0, 4;\n\tadd.u64 %rd5, %rd2, %rd4;\n\
         \tshl.b32 %r3, %r0, 2;\n\tadd.u32 %r3, %r3, %r1;\n{copy}\
         \tfence.proxy.async.shared::cta;\n\tbar.sync 0;\n\
         \tcvt.u64.u32 %rd8, %r1;\n\tshr.u64 %rd8, %rd8, 4;\n\tor.b64 %rd8, %rd8, {aconst:#x};\n\
         \tadd.u32 %r9, %r1, 8192;\n\tcvt.u64.u32 %rd9, %r9;\n\tshr.u64 %rd9, %rd9, 4;\n\
         \tor.b64 %rd9, %rd9, 0x4000004000010000;\n\
         \tadd.u64 %rd10, %rd8, {astep};\n\tadd.u64 %rd11, %rd9, 2;\n\
         \tsetp.ne.u32 %p1, %r0, 4096;\n\
         \twgmma.fence.sync.aligned;\n\
         \twgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {d}, %rd8, %rd9, 0, 1, 1, {ta}, 0;\n\
         \twgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {d}, %rd10, %rd11, %p1, 1, 1, {ta}, 0;\n\
         \twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\
         \tmul.wide.u32 %rd6, %r0, 32;\n\tadd.u64 %rd7, %rd0, %rd6;\n\
         \tst.global.v4.f32 [%rd7], {{%f0, %f1, %f2, %f3}};\n\
         \tst.global.v4.f32 [%rd7+16], {{%f4, %f5, %f6, %f7}};\n\tret;\n"
    );
    let m = module(".param .u64 p_img, .param .u64 p_out", &body);
    let mut dev = Device::new();
    let (pimg, out) = (dev.alloc(img.len()), dev.alloc(4096));
    dev.write(pimg, &img).unwrap();
    dev.write(out, &[0xff; 4096]).unwrap(); // poisoned: NaN where never written
    let params = [ParamValue::U64(pimg), ParamValue::U64(out)];
    let p = Program::new(&m, "k").unwrap_or_else(|e| panic!("{e}"));
    run_program(
        &p,
        &one_cta(128, 16384),
        &params,
        &mut dev,
        5,
        &Policy::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = u32s(&dev.read(out, 4096).unwrap());
    let mut worst = 0f64;
    for t in 0..128usize {
        let (w, l) = (t / 32, t % 32);
        for j in 0..8usize {
            // The accumulator fragment: n8 block j / 4, row 16w + l/4 (+8), column 2(l % 4) (+1).
            let row = 16 * w + l / 4 + 8 * ((j % 4) / 2);
            let col = 8 * (j / 4) + 2 * (l % 4) + j % 2;
            let prods = (0..K).map(|k| a[row * K + k].1 * b[col * K + k].1);
            let want: f64 = prods.clone().sum();
            let scale: f64 = prods.map(f64::abs).sum::<f64>().max(1e-30);
            let v = f64::from(f32::from_bits(got[t * 8 + j]));
            assert!(v.is_finite(), "thread {t} register {j} not written");
            worst = worst.max((v - want).abs() / scale);
        }
    }
    worst
}

/// An MN-major A (`imm-trans-a` = 1, A given K×M) multiplies like the K-major one: both
/// agree with the f64 product of random bf16 matrices to the f32 accumulation bound.
#[test]
fn wgmma_reads_an_mn_major_a_with_imm_trans_a() {
    for seed in [1, 2, 3] {
        for a_mn in [true, false] {
            let e = ss_trans_a_error(a_mn, seed);
            assert!(
                e < 1e-6,
                "A MN-major {a_mn}, seed {seed}: relative error {e}"
            );
        }
    }
}
