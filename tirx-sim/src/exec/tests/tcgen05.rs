//! tcgen05: the instruction and shared-memory descriptors against the ISA's field tables
//! (PTX ISA §9.7.16), and tensor-memory allocation errors.

use super::*;

#[test]
fn instruction_descriptor_fields() {
    // tirx's descriptor of the Blackwell GEMM: f32 D, bf16 A and B, K-major, N 256, M 128.
    let d = decode_idesc(0x0840_0490, Kind::F16).unwrap();
    assert_eq!(
        d,
        InstrDesc {
            m: 128,
            n: 256,
            a: Elem::Bf16,
            b: Elem::Bf16,
            neg_a: false,
            neg_b: false,
            mn_a: false,
            mn_b: false,
            sf_ids: None,
            sf_ue4m3: false,
            d_f16: false,
            sat: false,
        }
    );
    // f16 inputs, negated B, MN-major B, N 64, M 64.
    let d = decode_idesc(
        (1 << 4) | (1 << 14) | (1 << 16) | (8 << 17) | (4 << 24),
        Kind::F16,
    )
    .unwrap();
    assert_eq!(
        (d.m, d.n, d.a, d.neg_b, d.mn_b),
        (64, 64, Elem::F16, true, true)
    );
    assert!(
        decode_idesc(0x0840_0490 | 1 << 2, Kind::F16)
            .unwrap_err()
            .contains("sparsity")
    );
    // dtype 0 (F16) with bf16 operands: kind::f16 takes an f16 D with f16 operands only.
    assert!(
        decode_idesc(0x0840_0480, Kind::F16)
            .unwrap_err()
            .contains("accumulates bf16 in f32 only")
    );
}

/// The dtype field (bits 4-5, PTX ISA §9.7.16.4.2 Table 42; which kinds take which D,
/// §9.7.16.2.1 Table 39): F16 = 0 under kind::f16 with f16 operands and under kind::f8f6f4;
/// never under kind::tf32 (F32 only) or kind::i8 (S32 only). Bit 3 saturates kind::i8 only.
#[test]
fn instruction_descriptor_dtype_and_saturate() {
    // f16 × f16 → f16: dtype 0, atype/btype F16 = 0, N 64 (8 << 17), M 128 (8 << 24).
    let f16 = (8 << 17) | (8 << 24);
    let d = decode_idesc(f16, Kind::F16).unwrap();
    assert!(d.d_f16 && !d.sat);
    assert_eq!((d.a, d.b), (Elem::F16, Elem::F16));
    assert!(!decode_idesc(f16 | (1 << 4), Kind::F16).unwrap().d_f16);
    // E4M3 × E5M2 → f16 under kind::f8f6f4.
    assert!(decode_idesc(f16 | (1 << 10), Kind::F8f6f4).unwrap().d_f16);
    // tf32 with dtype 0, and S32 (2) under kind::f16, are refused.
    let tf = f16 | (2 << 7) | (2 << 10);
    assert!(
        decode_idesc(tf, Kind::Tf32)
            .unwrap_err()
            .contains("dtype 0")
    );
    assert!(decode_idesc(f16 | (2 << 4), Kind::F16).is_err());
    // kind::i8: S32 (2 << 4), signed A (1 << 7); bit 3 saturates.
    let i8 = (2 << 4) | (1 << 7) | (8 << 17) | (8 << 24);
    assert!(!decode_idesc(i8, Kind::I8).unwrap().sat);
    assert!(decode_idesc(i8 | (1 << 3), Kind::I8).unwrap().sat);
    assert!(decode_idesc(i8, Kind::I8).map(|d| d.d_f16) == Ok(false));
    // Bit 3 is "0 (NA)" for the float kinds.
    assert!(
        decode_idesc(0x0840_0490 | (1 << 3), Kind::F16)
            .unwrap_err()
            .contains("saturation")
    );
}

/// The descriptor table's other columns (PTX ISA §9.7.16.4.2 "Instruction descriptor"):
/// `kind::tf32` takes TF32 = 2 in atype/btype, `kind::f8f6f4` E4M3 = 0 / E5M2 = 1 (A and B
/// may differ); a code of another kind, or of a 6/4-bit type, is refused by name.
#[test]
fn instruction_descriptor_of_the_other_kinds() {
    // f32 D (1 << 4), TF32 A and B (2 << 7, 2 << 10), N 64 (8 << 17), M 128 (8 << 24).
    let tf32 = (1 << 4) | (2 << 7) | (2 << 10) | (8 << 17) | (8 << 24);
    let d = decode_idesc(tf32, Kind::Tf32).unwrap();
    assert_eq!((d.m, d.n, d.a, d.b), (128, 64, Elem::Tf32, Elem::Tf32));
    // The same bits under kind::f16 name no f16 type; TF32 is not an f8f6f4 code either.
    assert!(decode_idesc(tf32, Kind::F16).is_err());
    assert!(decode_idesc(tf32, Kind::F8f6f4).is_err());
    // E4M3 A (0 << 7), E5M2 B (1 << 10), N 128 (16 << 17), M 64 (4 << 24).
    let f8 = (1 << 4) | (1 << 10) | (16 << 17) | (4 << 24);
    let d = decode_idesc(f8, Kind::F8f6f4).unwrap();
    assert_eq!((d.m, d.n, d.a, d.b), (64, 128, Elem::E4m3, Elem::E5m2));
    // Under kind::f16 the same codes are f16 × bf16: refused, one operand type.
    assert!(
        decode_idesc(f8, Kind::F16)
            .unwrap_err()
            .contains("A is F16")
    );
    // The 6- and 4-bit codes: E2M3 = 3, E3M2 = 4, E2M1 = 5 (the padded form), any mix;
    // code 2 (unused by the kind) and 6-7 are refused.
    for (ca, cb, a, b) in [
        (3, 4, Elem::E2m3, Elem::E3m2),
        (5, 5, Elem::E2m1Padded, Elem::E2m1Padded),
        (4, 0, Elem::E3m2, Elem::E4m3),
    ] {
        let d = decode_idesc(
            (1 << 4) | (ca << 7) | (cb << 10) | (16 << 17) | (4 << 24),
            Kind::F8f6f4,
        )
        .unwrap();
        assert_eq!((d.a, d.b), (a, b), "codes {ca}, {cb}");
    }
    for c in [2, 6, 7] {
        let e = decode_idesc(f8 | (c << 7), Kind::F8f6f4).unwrap_err();
        assert!(e.contains(&format!("format code {c}")), "{e}");
    }
    // The block-scaled kind reads the same codes.
    let mx = (5 << 7) | (3 << 10) | (8 << 17) | (1 << 23) | (1 << 27);
    let d = decode_idesc(mx, Kind::MxF8f6f4).unwrap();
    assert_eq!((d.a, d.b), (Elem::E2m1Padded, Elem::E2m3));
    // Reserved bit 23 (the block-scaled kinds' scale type) is refused here.
    assert!(decode_idesc(f8 | (1 << 23), Kind::F8f6f4).is_err());
    assert_eq!(Kind::F16.k() * 2, Kind::Tf32.k() * 4);
    assert_eq!(Kind::F8f6f4.k(), 32);
}

/// The block-scaled descriptor (PTX ISA §9.7.16.4.2, the table for `.kind::mxf8f6f4`): M >> 7
/// in bits 27-28 (not M >> 4 in 24-28), UE8M0 = 1 in bit 23, the scale-factor IDs in 29-30
/// (A) and 4-5 (B), no D-type field.
#[test]
fn instruction_descriptor_of_kind_mxf8f6f4() {
    // IDs A 2, B 1; E4M3 × E5M2; N 64; UE8M0; M 128.
    let d = (1 << 4) | (1 << 10) | (8 << 17) | (1 << 23) | (1 << 27) | (2 << 29);
    let got = decode_idesc(d, Kind::MxF8f6f4).unwrap();
    assert_eq!(
        (got.m, got.n, got.a, got.b, got.sf_ids),
        (128, 64, Elem::E4m3, Elem::E5m2, Some((2, 1)))
    );
    // M = 256 is 2 << 27.
    assert_eq!(
        decode_idesc(d & !(3 << 27) | (2 << 27), Kind::MxF8f6f4)
            .unwrap()
            .m,
        256
    );
    // Scale type UE4M3 (bit 23 clear) is not this kind's; a reserved bit (24) is refused.
    assert!(
        decode_idesc(d & !(1 << 23), Kind::MxF8f6f4)
            .unwrap_err()
            .contains("UE8M0")
    );
    assert!(decode_idesc(d | (1 << 24), Kind::MxF8f6f4).is_err());
    assert_eq!(ue8m0(127), 1.0);
    assert_eq!(ue8m0(130), 8.0);
    assert_eq!(ue8m0(0), 2f64.powi(-127));
    assert!(ue8m0(0xff).is_nan());
}

/// Element values of the new formats, from their definitions (PTX ISA §5.2.3): tf32 drops
/// the low 13 fraction bits; E4M3 has bias 7, max 448, NaN at 0x7f; E5M2 bias 15, inf 0x7c.
#[test]
fn element_values_of_tf32_and_fp8() {
    let x = 1.0f32 + 2f32.powi(-10) + 2f32.powi(-11);
    assert_eq!(Elem::Tf32.value(x.to_bits()), 1.0 + 2f64.powi(-10));
    assert_eq!(Elem::Tf32.value((-3.5f32).to_bits()), -3.5);
    assert_eq!(Elem::E4m3.value(0x38), 1.0); // 0.0111.000: 2^(7-7)
    assert_eq!(Elem::E4m3.value(0x7e), 448.0); // 0.1111.110: 1.75 · 2^8
    assert!(Elem::E4m3.value(0x7f).is_nan());
    assert_eq!(Elem::E4m3.value(0x01), 2f64.powi(-9)); // smallest subnormal
    assert_eq!(Elem::E4m3.value(0xc4), -3.0); // 1.1000.100: -1.5 · 2
    assert_eq!(Elem::E5m2.value(0x3c), 1.0); // 0.01111.00
    assert_eq!(Elem::E5m2.value(0x7b), 57344.0); // 0.11110.11: 1.75 · 2^15
    assert!(Elem::E5m2.value(0x7c).is_infinite());
    assert_eq!(Elem::E5m2.value(0x01), 2f64.powi(-16));
    // (0x80, −0, rounds back to +0.)
    for b in (0..=0x7eu8).chain(0x81..=0xfe) {
        assert_eq!(to_e4m3(Elem::E4m3.value(u32::from(b))), b, "{b:#x}");
    }
    for b in (0..0x7cu8).chain(0x80..0xfc) {
        assert_eq!(to_e5m2(Elem::E5m2.value(u32::from(b))), b, "{b:#x}");
    }
    assert_eq!(to_e4m3(1.0625), 0x38, "a tie rounds to the even fraction");
}

/// `kind::i8`'s column of the descriptor table (PTX ISA §9.7.16.4.2): dtype S32 = 2 (F32 is
/// refused under it, and S32 under the float kinds), atype / btype Unsigned 8b = 0, Signed
/// 8b = 1 (A and B may differ); saturation (bit 3) decoded; the elements' values.
#[test]
fn instruction_descriptor_of_kind_i8() {
    // S32 D (2 << 4), U8 A (0 << 7), S8 B (1 << 10), N 64 (8 << 17), M 128 (8 << 24).
    let i8d = (2 << 4) | (1 << 10) | (8 << 17) | (8 << 24);
    let d = decode_idesc(i8d, Kind::I8).unwrap();
    assert_eq!((d.m, d.n, d.a, d.b), (128, 64, Elem::U8, Elem::S8));
    assert!(decode_idesc(i8d & !(3 << 4) | (1 << 4), Kind::I8).is_err());
    assert!(decode_idesc(i8d, Kind::F8f6f4).is_err());
    assert!(decode_idesc(i8d | (1 << 3), Kind::I8).unwrap().sat);
    assert!(decode_idesc(i8d | (2 << 7), Kind::I8).is_err());
    assert_eq!(Kind::from_modifier("kind::i8"), Some(Kind::I8));
    assert_eq!(Kind::I8.k(), 32);
    assert_eq!(Elem::S8.value(0xff), -1.0);
    assert_eq!(Elem::S8.value(0x80), -128.0);
    assert_eq!(Elem::U8.value(0xff), 255.0);
}

/// The 6- and 4-bit formats of `kind::f8f6f4` from their definitions (PTX ISA §5.2.3):
/// E3M2 (bias 3, 2 fraction bits, max 28), E2M3 (bias 1, 3 fraction bits, max 7.5), E2M1
/// (bias 1, 1 fraction bit, max 6); sign at the top bit, subnormals at exponent 0, no NaN.
#[test]
// The literals are grouped sign_exponent_fraction, the formats' fields.
#[allow(clippy::unusual_byte_groupings)]
fn element_values_of_fp6_and_fp4() {
    assert_eq!(Elem::E3m2.value(0b0_011_00), 1.0);
    assert_eq!(Elem::E3m2.value(0b0_111_11), 28.0); // 1.75 · 2^(7-3)
    assert_eq!(Elem::E3m2.value(0b0_000_01), 0.0625); // 0.25 · 2^(1-3)
    assert_eq!(Elem::E3m2.value(0b1_100_10), -3.0); // -1.5 · 2
    assert_eq!(Elem::E2m3.value(0b0_01_000), 1.0);
    assert_eq!(Elem::E2m3.value(0b0_11_111), 7.5); // 1.875 · 2^(3-1)
    assert_eq!(Elem::E2m3.value(0b0_00_001), 0.125); // 0.125 · 2^0
    assert_eq!(Elem::E2m3.value(0b1_10_100), -3.0); // -1.5 · 2
    let e2m1: Vec<f64> = (0..8).map(|c| Elem::E2m1Padded.value(c)).collect();
    assert_eq!(e2m1, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    assert_eq!(Elem::E2m1Padded.value(0xd), -3.0);
    // Every 6-bit code is finite: no NaN or infinity.
    assert!((0..64).all(|c| Elem::E3m2.value(c).is_finite() && Elem::E2m3.value(c).is_finite()));
    assert_eq!(
        (
            Elem::E3m2.padded_bits(),
            Elem::E2m1Padded.padded_bits(),
            Elem::E2m1.padded_bits()
        ),
        (Some(6), Some(4), None)
    );
}

#[test]
fn shared_memory_descriptor_fields() {
    let d = decode_smem_desc(0x4000_4040_0001_0000 | (0x2400 >> 4)).unwrap();
    assert_eq!(
        (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle),
        (0x2400, 16, 1024, 0, TmaSwizzle::B128)
    );
    assert_eq!(
        decode_smem_desc((4 << 61) | (1 << 46)).unwrap().swizzle,
        TmaSwizzle::B64
    );
    assert_eq!(
        decode_smem_desc((6 << 61) | (1 << 46)).unwrap().swizzle,
        TmaSwizzle::B32
    );
    assert!(
        decode_smem_desc((1 << 61) | (1 << 46)).is_err(),
        "128B with 32-byte atoms"
    );
    assert!(
        decode_smem_desc(2 << 61).is_err(),
        "bits 46-48 must be 0b001"
    );
}

fn tmem_kernel(body: &str) -> Result<Vec<u8>, SimError> {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\t@!%p0 bra $L_end;\n\
         {body}$L_end:\n\tret;\n"
    );
    run_out(&module(OUT, &body), &one_cta(64, 64), 256, 0)
}

#[test]
fn tensor_memory_allocation_is_checked() {
    let alloc =
        |n: u32| format!("\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n};\n");
    let dealloc = "\tld.shared.u32 %r2, [%r1];\n\
                   \ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 256;\n";
    tmem_kernel(&format!("{}{dealloc}", alloc(256))).expect("balanced");
    let e = tmem_kernel(&format!("{}{}", alloc(512), alloc(32))).unwrap_err();
    assert!(e.to_string().contains("over-allocation"), "{e}");
    let e = tmem_kernel(&alloc(256)).unwrap_err();
    assert!(
        e.to_string().contains("tensor memory still allocated"),
        "{e}"
    );
    let e = tmem_kernel(&format!("{}{dealloc}{dealloc}", alloc(256))).unwrap_err();
    assert!(e.to_string().contains("matches no allocation"), "{e}");
    let e = tmem_kernel(&alloc(48)).unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
}

/// Two warps: warp 0 allocates 32 columns; each thread stores 4 values to its TMEM lane
/// (warp `w` owns lanes `32w..32w + 32`, §9.7.16.2.3.1.1) at columns 4..8 with
/// `tcgen05.st.32x32b.x4`, waits (`wait`), loads columns 0..8 back with `.x8` and writes them
/// out (8 words per thread).
fn st_kernel(wait: &str, lane_shift: u32) -> Result<Vec<u32>, SimError> {
    st_kernel_edited(wait, lane_shift, |b| b)
}

/// [`st_kernel`] with its body rewritten by `edit`.
fn st_kernel_edited(
    wait: &str,
    lane_shift: u32,
    edit: impl Fn(String) -> String,
) -> Result<Vec<u32>, SimError> {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, {lane_shift};\n\
         \tadd.u32 %r3, %r3, %r2;\n\tadd.u32 %r4, %r3, 4;\n\tmul.lo.u32 %r5, %r0, 1000;\n\
         \tadd.u32 %r10, %r5, 4;\n\tadd.u32 %r11, %r5, 5;\n\tadd.u32 %r12, %r5, 6;\n\
         \tadd.u32 %r13, %r5, 7;\n\
         \ttcgen05.st.sync.aligned.32x32b.x4.b32 [%r4], {{%r10, %r11, %r12, %r13}};\n{wait}\
         \ttcgen05.ld.sync.aligned.32x32b.x8.b32 {{%r20, %r21, %r22, %r23, %r24, %r25, %r26, \
         %r27}}, [%r3];\n\ttcgen05.wait::ld.sync.aligned;\n\
         \tmul.wide.u32 %rd2, %r0, 32;\n\tadd.u64 %rd2, %rd2, %rd0;\n\
         \tst.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\
         \tst.global.v4.u32 [%rd2+16], {{%r24, %r25, %r26, %r27}};\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    Ok(u32s(&run_out(
        &module(OUT, &edit(body)),
        &one_cta(64, 64),
        64 * 32,
        2,
    )?))
}

#[test]
fn tcgen05_st_writes_each_threads_lane_and_columns() {
    let wait = "\ttcgen05.wait::st.sync.aligned;\n";
    let out = st_kernel(wait, 21).expect("runs");
    for t in 0..64u32 {
        let row = &out[(t * 8) as usize..(t * 8 + 8) as usize];
        // Columns 0..4 untouched (a fresh allocation reads zero here), 4..8 the values.
        assert_eq!(
            row,
            [
                0,
                0,
                0,
                0,
                t * 1000 + 4,
                t * 1000 + 5,
                t * 1000 + 6,
                t * 1000 + 7
            ]
        );
    }
    // Loading before tcgen05.wait::st.
    let e = st_kernel("", 21).unwrap_err();
    assert!(e.to_string().contains("before its tcgen05.wait::st"), "{e}");
    // A destination register overwritten before tcgen05.wait::ld.
    let e = st_kernel_edited(wait, 21, |b| {
        b.replace(
            "\ttcgen05.wait::ld.sync.aligned;\n",
            "\tmov.b32 %r22, 5;\n\ttcgen05.wait::ld.sync.aligned;\n",
        )
    })
    .unwrap_err();
    assert!(
        matches!(e, SimError::Race { .. })
            && e.to_string().contains("wrote `%r22` while the tcgen05.ld"),
        "{e}"
    );
    // Warp 1 addressing lanes 0..32 (its quarter is 32..64).
    let e = st_kernel(wait, 0).unwrap_err();
    assert!(
        e.to_string()
            .contains("warp 1 may access TMEM lanes 32..64"),
        "{e}"
    );
}

/// `tcgen05.commit … .multicast::cluster` (§9.7.16 `tcgen05.commit`): one commit by rank 0 of
/// a cluster of two arrives on the mbarrier at the same offset in each CTA of `mask`; every
/// thread waits on its own CTA's, then writes `rank + 1`.
fn commit_multicast(mask: u32) -> Result<Vec<u32>, SimError> {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r6, %cluster_ctarank;\n\tmov.u32 %r1, smem;\n\
         \tsetp.eq.u32 %p0, %r0, 0;\n\t@%p0 mbarrier.init.shared::cta.b64 [%r1], 1;\n\
         \tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\tsetp.eq.u32 %p1, %r6, 0;\n\
         \tand.pred %p2, %p0, %p1;\n\
         \t@%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster\
         .multicast::cluster.b64 [%r1], {mask};\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], 0;\n\
         \t@!%p3 bra $L_wait;\n\tmul.lo.u32 %r7, %r6, 32;\n\tadd.u32 %r7, %r7, %r0;\n\
         \tmul.wide.u32 %rd2, %r7, 4;\n\tadd.u64 %rd2, %rd2, %rd0;\n\tadd.u32 %r8, %r6, 1;\n\
         \tst.global.u32 [%rd2], %r8;\n\tret;\n"
    );
    let launch = Launch {
        grid: [2, 1, 1],
        cluster: [2, 1, 1],
        block: [32, 1, 1],
        smem_bytes: 64,
    };
    Ok(u32s(&run_out(&module(OUT, &body), &launch, 256, 3)?))
}

#[test]
fn a_multicast_commit_arrives_in_every_cta_of_its_mask() {
    let out = commit_multicast(3).expect("both CTAs released");
    assert!(out[..32].iter().all(|&v| v == 1) && out[32..].iter().all(|&v| v == 2));
    // Rank 1 left out of the mask waits for ever.
    let e = commit_multicast(1).unwrap_err();
    assert!(
        matches!(&e, SimError::Deadlock(b) if b.iter().all(|b| b.cta == [1, 0, 0])),
        "{e}"
    );
    let e = commit_multicast(4).unwrap_err();
    assert!(
        e.to_string().contains("CTA mask 0x4 for a cluster of 2"),
        "{e}"
    );
}

/// Four warps store `4·lane + j` (as f32, j = 0..4) into columns 0..4 of their TMEM lanes
/// (`wait_st` after), thread 0 runs one `tcgen05.mma` (M = 128, N = 16, A = B = 0 from zeroed
/// shared memory, unswizzled K-major descriptors) into that D with enable-input-d = `acc`,
/// commits to an mbarrier everyone waits on, and each thread loads its lane's columns 0..4.
fn mma_over_stored_d(wait_st: &str, acc: u32) -> Result<Vec<u32>, SimError> {
    // Descriptor bits: LBO 128 (8 << 16), SBO 256 (16 << 32), version 0b001 at bit 46.
    let desc = "0x0000401000080000";
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\tshl.b32 %r4, %r0, 2;\n\tcvt.rn.f32.u32 %f0, %r4;\n\
         \tadd.u32 %r5, %r4, 1;\n\tcvt.rn.f32.u32 %f1, %r5;\n\tadd.u32 %r5, %r4, 2;\n\
         \tcvt.rn.f32.u32 %f2, %r5;\n\tadd.u32 %r5, %r4, 3;\n\tcvt.rn.f32.u32 %f3, %r5;\n\
         \ttcgen05.st.sync.aligned.32x32b.x4.b32 [%r3], {{%f0, %f1, %f2, %f3}};\n{wait_st}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r6;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tmov.b32 %r9, 0x08040490;\n\
         \tsetp.ne.u32 %p2, {acc}, 0;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd3, %rd4, %r9, %p2;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x4.b32 {{%r20, %r21, %r22, %r23}}, [%r3];\n\
         \ttcgen05.wait::ld.sync.aligned;\n\tmul.wide.u32 %rd2, %r0, 16;\n\
         \tadd.u64 %rd2, %rd2, %rd0;\n\tst.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    Ok(u32s(&run_out(
        &module(OUT, &body),
        &one_cta(128, 8192),
        2048,
        4,
    )?))
}

#[test]
fn an_mma_accumulates_onto_stored_tensor_memory_after_wait_st() {
    let wait = "\ttcgen05.wait::st.sync.aligned;\n";
    // enable-input-d: D = D + A·B = the stored values (A·B = 0).
    let out = mma_over_stored_d(wait, 1).expect("runs");
    for t in 0..128u32 {
        for j in 0..4 {
            assert_eq!(
                f32::from_bits(out[(4 * t + j) as usize]),
                (4 * t + j) as f32
            );
        }
    }
    // Without it: D = A·B = 0.
    let out = mma_over_stored_d(wait, 0).expect("runs");
    assert!(out.iter().all(|&v| v == 0));
    // The MMA over cells whose tcgen05.st was never waited for.
    let e = mma_over_stored_d("", 1).unwrap_err();
    assert!(
        e.to_string().contains("which the tcgen05.st of line")
            && e.to_string().contains("wait::st"),
        "{e}"
    );
}

/// Four warps load columns 0..4 of their TMEM lanes (`tcgen05.ld`), then (`early`) wait for
/// the loads before the CTA barrier or only after it; thread 0 then runs one `tcgen05.mma`
/// (D = A·B = 0 over those columns), commits to an mbarrier everyone waits on. Waiting after
/// the barrier is an epilogue releasing its accumulator while its loads may still read it.
fn mma_over_loaded_d(early: bool) -> Result<Vec<u32>, SimError> {
    let desc = "0x0000401000080000";
    let wait_ld = "\ttcgen05.wait::ld.sync.aligned;\n";
    let (before, after) = if early { (wait_ld, "") } else { ("", wait_ld) };
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x4.b32 {{%r20, %r21, %r22, %r23}}, [%r3];\n{before}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r6;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tmov.b32 %r9, 0x08040490;\n\
         \tsetp.ne.u32 %p2, 0, 0;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd3, %rd4, %r9, %p2;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n{after}\tmul.wide.u32 %rd2, %r0, 16;\n\
         \tadd.u64 %rd2, %rd2, %rd0;\n\tst.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    Ok(u32s(&run_out(
        &module(OUT, &body),
        &one_cta(128, 8192),
        2048,
        4,
    )?))
}

#[test]
fn an_mma_over_cells_a_load_still_reads_is_diagnosed() {
    // Freshly allocated TMEM reads as zero; the load completed before the MMA was issued.
    let out = mma_over_loaded_d(true).expect("runs");
    assert!(out.iter().all(|&v| v == 0));
    let e = mma_over_loaded_d(false).unwrap_err();
    assert!(
        e.to_string().contains("which the tcgen05.ld of line")
            && e.to_string().contains("wait::ld"),
        "{e}"
    );
}

/// [`st_kernel`] with its `.x8` load replaced by `load` (eight registers, from `[%r3]` plus
/// `lane_off` lanes), so each shape's thread map reads back what the 32x32b store wrote:
/// cell (lane `L`, column `c`) holds `1000·L + c` for `c` in 4..8 and 0 elsewhere.
fn shaped_load(load: &str, lane_off: u32) -> Result<Vec<u32>, SimError> {
    let old = "\ttcgen05.ld.sync.aligned.32x32b.x8.b32 {%r20, %r21, %r22, %r23, %r24, %r25, %r26, \
               %r27}, [%r3];\n";
    st_kernel_edited("\ttcgen05.wait::st.sync.aligned;\n", 21, |b| {
        assert!(b.contains(old));
        b.replace(
            old,
            &format!("\tadd.u32 %r3, %r3, {};\n\t{load}\n", lane_off << 16),
        )
    })
}

fn cell(lane: u32, col: u32) -> u32 {
    if (4..8).contains(&col) {
        1000 * lane + col
    } else {
        0
    }
}

const REGS: &str = "{%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}";

#[test]
fn each_shape_loads_the_cells_of_its_thread_map() {
    // 16x256b.x2 (§9.7.16.2.3): register r of lane l is lane l/4 + 8·((r/2)%2), column
    // 2·(l%4) + r%2 + 8·(r/4).
    let out = shaped_load(
        &format!("tcgen05.ld.sync.aligned.16x256b.x2.b32 {REGS}, [%r3];"),
        0,
    )
    .expect("runs");
    for t in 0..64u32 {
        let (w, l) = (t / 32, t % 32);
        for r in 0..8 {
            let lane = 32 * w + l / 4 + 8 * ((r / 2) % 2);
            let col = 2 * (l % 4) + r % 2 + 8 * (r / 4);
            assert_eq!(
                out[(t * 8 + r) as usize],
                cell(lane, col),
                "16x256b t{t} r{r}"
            );
        }
    }
    // 16x32bx2.x8 from lane +16, immHalfSplitoff 2: lanes 0–15 columns r, lanes 16–31
    // columns 2 + r, both halves the same 16 TMEM lanes.
    let out = shaped_load(
        &format!("tcgen05.ld.sync.aligned.16x32bx2.x8.b32 {REGS}, [%r3], 2;"),
        16,
    )
    .expect("runs");
    for t in 0..64u32 {
        let (w, l) = (t / 32, t % 32);
        for r in 0..8 {
            let lane = 32 * w + 16 + l % 16;
            let col = r + if l >= 16 { 2 } else { 0 };
            assert_eq!(
                out[(t * 8 + r) as usize],
                cell(lane, col),
                "16x32bx2 t{t} r{r}"
            );
        }
    }
    // 32x32b.x8.pack::16b: register r packs the low halves of columns 2r and 2r + 1.
    let out = shaped_load(
        &format!("tcgen05.ld.sync.aligned.32x32b.x8.pack::16b.b32 {REGS}, [%r3];"),
        0,
    )
    .expect("runs");
    for t in 0..64u32 {
        for r in 0..8 {
            let want = (cell(t, 2 * r) & 0xffff) | (cell(t, 2 * r + 1) & 0xffff) << 16;
            assert_eq!(out[(t * 8 + r) as usize], want, "pack t{t} r{r}");
        }
    }
    // A 16-lane shape from lane +24 would reach past the warp's quarter.
    let e = shaped_load(
        &format!("tcgen05.ld.sync.aligned.16x256b.x2.b32 {REGS}, [%r3];"),
        24,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("only: a 16-lane access from lane"),
        "{e}"
    );
}

/// Thread 0 runs one `tcgen05.mma` (D = A·B over 32 columns, A and B from zeroed shared
/// memory after `tcgen05.st` of ones into D, accumulating: D stays ones) and commits to an
/// mbarrier; every thread then loads D in one of three orders: after its wait and a
/// `tcgen05.fence::after_thread_sync` (`"fenced"`), after its wait with no fence
/// (`"unfenced"`), or before its wait (`"early"`).
fn load_after_mma(order: &str) -> Result<Vec<u32>, SimError> {
    let desc = "0x0000401000080000";
    let ld = "\ttcgen05.ld.sync.aligned.32x32b.x4.b32 {%r20, %r21, %r22, %r23}, [%r3];\n\
              \ttcgen05.wait::ld.sync.aligned;\n";
    let wait = "$L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
                \t@!%p3 bra $L_wait;\n";
    let fence = "\ttcgen05.fence::after_thread_sync;\n";
    let tail = match order {
        "fenced" => format!("{wait}{fence}{ld}"),
        "unfenced" => format!("{wait}{ld}"),
        _ => format!("{ld}{wait}"),
    };
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\tmov.b32 %r10, 0x3f800000;\n\
         \ttcgen05.st.sync.aligned.32x32b.x4.b32 [%r3], {{%r10, %r10, %r10, %r10}};\n\
         \ttcgen05.wait::st.sync.aligned;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r6;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tmov.b32 %r9, 0x08040490;\n\
         \tsetp.ne.u32 %p2, 0, 1;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd3, %rd4, %r9, %p2;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         {tail}\tmul.wide.u32 %rd2, %r0, 16;\n\
         \tadd.u64 %rd2, %rd2, %rd0;\n\tst.global.v4.u32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n"
    );
    Ok(u32s(&run_out(
        &module(OUT, &body),
        &one_cta(128, 8192),
        2048,
        4,
    )?))
}

#[test]
fn a_load_of_mma_output_needs_the_wait_and_the_fence_after_it() {
    let out = load_after_mma("fenced").expect("runs");
    assert!(
        out.iter().all(|&v| v == 0x3f80_0000),
        "D = 1 + A·B with A·B = 0"
    );
    let e = load_after_mma("unfenced").unwrap_err().to_string();
    assert!(
        e.contains("without a tcgen05.fence::after_thread_sync") && e.contains("thread 0"),
        "{e}"
    );
    // Warp 0 loads right after its thread 0's commit: the MMA is in flight, or it completed
    // after the warp's last fence; the other warps may load before the MMA was issued.
    let e = load_after_mma("early").unwrap_err().to_string();
    assert!(
        e.contains("has not completed") || e.contains("without a tcgen05.fence::after_thread_sync"),
        "{e}"
    );
}

/// `kind::mxf4nvf4`'s descriptor (PTX ISA §9.7.16.4.2, the table for `.kind::mxf4` and
/// `.kind::mxf4nvf4`): E2M1 = 1 in atype (7-9) and the two-bit btype (10-11), UE4M3 = 0 /
/// UE8M0 = 1 in bit 23, IDs 0 or 2 (0 only with 4X), bit 31 the K = 96 form (refused); and
/// E2M1 and UE4M3 values from their definitions (§5.2.3).
#[test]
fn instruction_descriptor_of_kind_mxf4nvf4_and_e2m1_values() {
    let d = (1 << 7) | (1 << 10) | (16 << 17) | (1 << 27);
    let got = decode_idesc(d, Kind::MxF4Nvf4(4)).unwrap();
    assert_eq!(
        (got.m, got.n, got.a, got.b, got.sf_ids, got.sf_ue4m3),
        (128, 128, Elem::E2m1, Elem::E2m1, Some((0, 0)), true)
    );
    // 2X: UE8M0 and ID 2 for A; UE4M3 with 2X, ID 2 with 4X, K = 96 and E4M3 codes refused.
    let two = decode_idesc(d | (1 << 23) | (2 << 29), Kind::MxF4Nvf4(2)).unwrap();
    assert_eq!((two.sf_ids, two.sf_ue4m3), (Some((2, 0)), false));
    assert!(
        decode_idesc(d, Kind::MxF4Nvf4(2))
            .unwrap_err()
            .contains("UE4M3")
    );
    assert!(decode_idesc(d | (2 << 4), Kind::MxF4Nvf4(4)).is_err());
    assert!(decode_idesc(d | (1 << 31), Kind::MxF4Nvf4(4)).is_err());
    assert!(decode_idesc(d & !(1 << 7), Kind::MxF4Nvf4(4)).is_err());
    let vals: Vec<f64> = (0..16u32).map(|b| Elem::E2m1.value(b)).collect();
    assert_eq!(
        vals,
        [
            0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0
        ]
    );
    assert_eq!(ue4m3(0x38), 1.0);
    assert_eq!(ue4m3(0x7e), 448.0);
    assert!(ue4m3(0x80).is_nan());
}
