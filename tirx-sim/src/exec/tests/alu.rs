//! Arithmetic and conversions: bf16/f16 rounding at ties, subnormals and overflow
//! (PTX ISA §9.7.9 `cvt`), integer edge cases, NaN rules, packing moves — directly on the
//! ALU functions and end to end through PTX.

use super::super::alu::{compare, cvt, float_op, float_op_directed, int_bin};
use super::super::float::{self, Rnd};
use super::super::ops::{Cmp, CvtMode, FOp, IntOp};
use super::*;
use crate::ptx::Type;

const RN: CvtMode = CvtMode {
    rnd: Some(Rnd::Rn),
    int: false,
    ftz: false,
    sat: false,
    relu: false,
    satfinite: false,
};

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

#[test]
fn bf16_ties_round_to_even_and_directed_modes_do_not() {
    // 1 + 2^-8 is halfway between bf16 1.0 (even) and 1 + 2^-7 (odd): to 1.0.
    assert_eq!(float::f32_to_bf16(f(0x3f80_8000), Rnd::Rn), 0x3f80);
    // 1 + 3·2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
    assert_eq!(float::f32_to_bf16(f(0x3f81_8000), Rnd::Rn), 0x3f82);
    // Just above a tie goes up; negative ties mirror.
    assert_eq!(float::f32_to_bf16(f(0x3f80_8001), Rnd::Rn), 0x3f81);
    assert_eq!(float::f32_to_bf16(f(0xbf81_8000), Rnd::Rn), 0xbf82);
    assert_eq!(float::f32_to_bf16(f(0x3f80_8000), Rnd::Rna), 0x3f81);
    assert_eq!(float::f32_to_bf16(f(0x3f80_ffff), Rnd::Rz), 0x3f80);
    assert_eq!(float::f32_to_bf16(f(0xbf80_0001), Rnd::Rm), 0xbf81);
    assert_eq!(float::f32_to_bf16(f(0xbf80_0001), Rnd::Rp), 0xbf80);
    // Overflow: f32::MAX rounds to infinity under rn, stays finite under rz.
    assert_eq!(float::f32_to_bf16(f32::MAX, Rnd::Rn), 0x7f80);
    assert_eq!(float::f32_to_bf16(f32::MAX, Rnd::Rz), 0x7f7f);
    // NaN is canonical; subnormals keep their top bits.
    assert_eq!(float::f32_to_bf16(f(0x7fc0_1234), Rnd::Rn), 0x7fff);
    assert_eq!(float::f32_to_bf16(f(0x0001_8000), Rnd::Rn), 0x0002);
    assert_eq!(float::bf16_to_f32(0x3f82), 1.015625);
}

#[test]
fn f16_rounds_subnormals_and_overflow_like_ieee() {
    assert_eq!(float::f32_to_f16(1.0, Rnd::Rn), 0x3c00);
    assert_eq!(float::f32_to_f16(65504.0, Rnd::Rn), 0x7bff);
    // 65520 is the tie between 65504 and 65536 (= infinity): to the even side, infinity.
    assert_eq!(float::f32_to_f16(65520.0, Rnd::Rn), 0x7c00);
    assert_eq!(float::f32_to_f16(65520.0, Rnd::Rz), 0x7bff);
    // 2^-25 is the tie between 0 and the least subnormal 2^-24: to 0; 3·2^-25 up to 2·2^-24.
    assert_eq!(float::f32_to_f16(2f32.powi(-25), Rnd::Rn), 0x0000);
    assert_eq!(float::f32_to_f16(3.0 * 2f32.powi(-25), Rnd::Rn), 0x0002);
    assert_eq!(float::f32_to_f16(2f32.powi(-25), Rnd::Rp), 0x0001);
    // The largest subnormal rounds up into the least normal.
    assert_eq!(
        float::f32_to_f16(2f32.powi(-14) - 2f32.powi(-26), Rnd::Rn),
        0x0400
    );
    assert_eq!(float::f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(float::f16_to_f32(0xfbff), -65504.0);
    assert!(float::f16_to_f32(0x7e00).is_nan());
}

#[test]
fn float_to_int_rounds_and_saturates() {
    let m = |rnd| CvtMode {
        rnd: Some(rnd),
        int: true,
        ..RN
    };
    let c = |rnd, x: f32| cvt(Type::S32, Type::F32, m(rnd), u64::from(x.to_bits())) as u32 as i32;
    assert_eq!(c(Rnd::Rz, -2.5), -2);
    assert_eq!(c(Rnd::Rn, 2.5), 2);
    assert_eq!(c(Rnd::Rn, 3.5), 4);
    assert_eq!(c(Rnd::Rm, -2.5), -3);
    assert_eq!(c(Rnd::Rz, 1e10), i32::MAX);
    assert_eq!(c(Rnd::Rz, -1e10), i32::MIN);
    assert_eq!(c(Rnd::Rz, f32::NAN), 0);
    let u = cvt(
        Type::U32,
        Type::F32,
        m(Rnd::Rz),
        u64::from((-3.0f32).to_bits()),
    );
    assert_eq!(u, 0);
    // u32 → f32: 2^24 + 1 is a tie, to even.
    let r = cvt(Type::F32, Type::U32, RN, 16_777_217);
    assert_eq!(f32::from_bits(r as u32), 16_777_216.0);
    // Integer widening follows the source's signedness.
    assert_eq!(cvt(Type::S64, Type::S32, RN, 0xffff_fffe), (-2i64) as u64);
    assert_eq!(cvt(Type::U64, Type::U32, RN, 0xffff_fffe), 0xffff_fffe);
    assert_eq!(cvt(Type::U16, Type::U32, RN, 0x1_2345), 0x2345);
}

#[test]
fn comparisons_and_min_max_follow_the_nan_rules() {
    let nan = u64::from(f32::NAN.to_bits());
    let one = u64::from(1f32.to_bits());
    assert!(!compare(Cmp::Lt, Type::F32, false, nan, one));
    assert!(compare(Cmp::Ltu, Type::F32, false, nan, one));
    assert!(
        compare(Cmp::Ne, Type::F32, false, one, 0) && !compare(Cmp::Ne, Type::F32, false, nan, one)
    );
    assert!(compare(Cmp::Nan, Type::F32, false, nan, one));
    // Unsigned vs signed integer order.
    assert!(compare(Cmp::Lt, Type::S32, false, 0xffff_ffff, 0));
    assert!(!compare(Cmp::Lt, Type::U32, false, 0xffff_ffff, 0));
    let max = |a: f32, b: f32| {
        f32::from_bits(float_op(
            FOp::Max,
            Type::F32,
            false,
            false,
            u64::from(a.to_bits()),
            u64::from(b.to_bits()),
            0,
        ) as u32)
    };
    assert_eq!(max(f32::NAN, 2.0), 2.0);
    assert_eq!(max(-0.0, 0.0).to_bits(), 0);
    assert_eq!(max(f32::NAN, f32::NAN).to_bits(), 0x7fff_ffff);
    // ftz flushes a subnormal input: 2^-130 · 2^10 is 0 under ftz.
    let tiny = 1u64 << 19; // 2^-149 · 2^19 = 2^-130, subnormal
    let k = u64::from(1024f32.to_bits());
    assert_eq!(float_op(FOp::Mul, Type::F32, true, false, tiny, k, 0), 0);
    assert_eq!(
        f32::from_bits(float_op(FOp::Mul, Type::F32, false, false, tiny, k, 0) as u32),
        2f32.powi(-120)
    );
    // ex2.approx as the exactly rounded 2^x.
    let e = float_op(
        FOp::Ex2,
        Type::F32,
        true,
        false,
        u64::from(1.5f32.to_bits()),
        0,
        0,
    );
    assert_eq!(f32::from_bits(e as u32), 2f64.powf(1.5) as f32);
}

/// `add/sub/mul.{rm,rp,rz}.f32` round the exact result once in the named direction
/// (§9.7.3 `add`, `sub`, `mul`); `min/max.NaN` return NaN when a source is NaN (§9.7.3 `min`,
/// `max`).
#[test]
fn directed_rounding_and_nan_min_max() {
    let d = |op, rnd, a: f32, b: f32| {
        let r = float_op_directed(
            op,
            Type::F32,
            false,
            false,
            rnd,
            u64::from(a.to_bits()),
            u64::from(b.to_bits()),
        );
        f32::from_bits(r as u32)
    };
    let up = |x: f32| f32::from_bits(x.to_bits() + 1);
    // The floor trick: 1.5·2^23 + 127 + x rounded down has ulp 1, so it is floor(x) + the
    // constant; up and toward zero for comparison.
    let m = 12_583_039.0f32;
    assert_eq!(d(FOp::Add, Rnd::Rm, -0.25, m), m - 1.0);
    assert_eq!(d(FOp::Add, Rnd::Rm, 2.5, m), m + 2.0);
    assert_eq!(d(FOp::Add, Rnd::Rp, 2.5, m), m + 3.0);
    assert_eq!(d(FOp::Add, Rnd::Rz, -m, 0.5), -(m - 1.0));
    assert_eq!(d(FOp::Sub, Rnd::Rm, -126.75, -m), m - 127.0);
    // A tiny addend: the sum is exactly representable in f64 but not in f32.
    let t = 2f32.powi(-30);
    assert_eq!(d(FOp::Add, Rnd::Rm, 1.0, t), 1.0);
    assert_eq!(d(FOp::Add, Rnd::Rp, 1.0, t), up(1.0));
    assert_eq!(d(FOp::Add, Rnd::Rz, -1.0, -t), -1.0);
    assert_eq!(d(FOp::Add, Rnd::Rm, -1.0, -t), -up(1.0));
    // Too far apart for f64 to hold the sum: TwoSum's error term decides.
    let (big, small) = (2f32.powi(100), 2f32.powi(-100));
    assert_eq!(d(FOp::Add, Rnd::Rp, big, small), up(big));
    assert_eq!(
        d(FOp::Sub, Rnd::Rm, big, small),
        f32::from_bits(big.to_bits() - 1)
    );
    assert_eq!(d(FOp::Add, Rnd::Rz, big, small), big);
    // Products: 3 · fl(1/3) = 1 + 2^-25 exactly.
    let third = f(0x3eaa_aaab);
    assert_eq!(d(FOp::Mul, Rnd::Rm, third, 3.0), 1.0);
    assert_eq!(d(FOp::Mul, Rnd::Rp, third, 3.0), up(1.0));
    // Overflow: towards zero stays finite, upwards is infinite.
    assert_eq!(d(FOp::Add, Rnd::Rz, f32::MAX, f32::MAX), f32::MAX);
    assert_eq!(d(FOp::Add, Rnd::Rp, f32::MAX, f32::MAX), f32::INFINITY);
    assert!(d(FOp::Add, Rnd::Rm, f32::INFINITY, f32::NEG_INFINITY).is_nan());
    let mm = |op, a: f32, b: f32| {
        f32::from_bits(float_op(
            op,
            Type::F32,
            false,
            false,
            u64::from(a.to_bits()),
            u64::from(b.to_bits()),
            0,
        ) as u32)
    };
    assert_eq!(mm(FOp::MaxNaN, f32::NAN, 1.0).to_bits(), 0x7fff_ffff);
    assert_eq!(mm(FOp::MinNaN, 1.0, f32::NAN).to_bits(), 0x7fff_ffff);
    assert_eq!(mm(FOp::MaxNaN, 2.0, 1.0), 2.0);
    assert_eq!(mm(FOp::MinNaN, f32::NEG_INFINITY, 1.0), f32::NEG_INFINITY);
}

/// The same forms decoded from PTX: `add.rm.f32`, `mul.rp.f32`, `max.NaN.f32`; `fma.rm` is
/// refused rather than rounded to nearest.
#[test]
fn directed_rounding_through_ptx() {
    let body = format!(
        "{PROLOGUE}	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra $L_end;
         	mov.f32 %f0, 0fBE800000;
	add.rm.f32 %f1, %f0, 0f4B40007F;
         	st.global.f32 [%rd0], %f1;
         	mov.f32 %f2, 0f3EAAAAAB;
	mul.rp.f32 %f3, %f2, 0f40400000;
         	st.global.f32 [%rd0+4], %f3;
         	mov.b32 %f4, 0x7FC00000;
	max.NaN.f32 %f5, %f4, 0fC2FE0000;
         	st.global.f32 [%rd0+8], %f5;
         	max.f32 %f6, %f4, 0fC2FE0000;
	st.global.f32 [%rd0+12], %f6;
         $L_end:
	ret;
"
    );
    let out = u32s(&run_out(&module(OUT, &body), &one_cta(32, 0), 16, 1).unwrap());
    assert_eq!(f32::from_bits(out[0]), 12_583_038.0);
    assert_eq!(out[1], 0x3f80_0001);
    assert_eq!(out[2], 0x7fff_ffff);
    assert_eq!(f32::from_bits(out[3]), -127.0);
    let bad = format!(
        "{PROLOGUE}	fma.rm.f32 %f1, %f0, %f0, %f0;
	ret;
"
    );
    let e = run_out(&module(OUT, &bad), &one_cta(1, 0), 4, 0).unwrap_err();
    assert!(e.to_string().contains("directed rounding"), "{e}");
}

#[test]
fn integer_edges() {
    assert_eq!(
        int_bin(IntOp::MulWide, Type::U32, 0xffff_ffff, 2, 0),
        (0x1_ffff_fffe, 64)
    );
    assert_eq!(
        int_bin(IntOp::MulWide, Type::S32, 0xffff_ffff, 2, 0).0,
        (-2i64) as u64
    );
    assert_eq!(int_bin(IntOp::MulHi, Type::U32, 0x8000_0000, 4, 0).0, 2);
    assert_eq!(
        int_bin(IntOp::Shr, Type::S32, 0x8000_0000, 40, 0).0,
        0xffff_ffff
    );
    assert_eq!(int_bin(IntOp::Shr, Type::U32, 0x8000_0000, 40, 0).0, 0);
    assert_eq!(int_bin(IntOp::Shl, Type::B32, 1, 32, 0).0, 0);
    assert_eq!(int_bin(IntOp::Add, Type::U32, 0xffff_ffff, 1, 0).0, 0);
    assert_eq!(int_bin(IntOp::And, Type::Pred, 1, 1, 0).0, 1);
    assert_eq!(
        int_bin(IntOp::Rem, Type::S32, (-7i32) as u32 as u64, 2, 0).0,
        0xffff_ffff
    );
}

/// The same conversions end to end: PTX constants through `cvt`, packed and stored.
#[test]
fn cvt_through_ptx() {
    let body = format!(
        "{PROLOGUE}\tsetp.ne.u32 %p0, %r0, 0;\n\t@%p0 bra $L_end;\n\
         \tmov.f32 %f0, 0f3F808000;\n\tmov.f32 %f1, 0f3F818000;\n\
         \tcvt.rn.bf16x2.f32 %r1, %f0, %f1;\n\tst.global.b32 [%rd0], %r1;\n\
         \tcvt.rn.bf16.f32 %h0, %f1;\n\tcvt.rz.bf16.f32 %h1, %f1;\n\
         \tmov.b32 %r2, {{%h0, %h1}};\n\tst.global.b32 [%rd0+4], %r2;\n\
         \tmov.b32 {{%h2, %h3}}, %r2;\n\tcvt.f32.bf16 %f2, %h3;\n\
         \tst.global.f32 [%rd0+8], %f2;\n\
         \tcvt.rn.f16.f32 %h4, %f1;\n\tcvt.u32.u16 %r3, %h4;\n\tst.global.b32 [%rd0+12], %r3;\n\
         $L_end:\n\tret;\n"
    );
    let m = module(OUT, &body);
    let out = u32s(&run_out(&m, &one_cta(32, 0), 16, 1).unwrap());
    // The first source (1 + 2^-8 → 0x3f80) in the upper half, the second (→ 0x3f82) low.
    assert_eq!(out[0], 0x3f80_3f82);
    assert_eq!(out[1], 0x3f81_3f82); // {h0, h1}: h0 (rn) low, h1 (rz) high
    assert_eq!(f32::from_bits(out[2]), float::bf16_to_f32(0x3f81));
    assert_eq!(
        out[3],
        u32::from(float::f32_to_f16(f(0x3f81_8000), Rnd::Rn))
    );
}

/// `.b128` registers (two 64-bit slots): `mov.b128` packs two halves (the first the low one,
/// PTX ISA §9.7.9 `mov`), copies, and unpacks; `st.shared.b128`/`ld.shared.b128` move all 16
/// bytes, low half at the lower address.
#[test]
fn b128_registers_pack_copy_store_and_unpack() {
    let body = format!(
        "\t.reg .b128 %q<2>;\n{PROLOGUE}\tmov.u32 %r1, smem;\n\
         \tmov.b64 %rd4, 0x1111222233334444;\n\tmov.b64 %rd5, 0x5555666677778888;\n\
         \tmov.b128 %q0, {{%rd4, %rd5}};\n\tmov.b128 %q1, %q0;\n\
         \tst.shared.b128 [%r1], %q1;\n\tld.shared.b128 %q0, [%r1];\n\
         \tmov.b128 {{%rd6, %rd7}}, %q0;\n\tld.shared.u32 %r2, [%r1+8];\n\
         \tst.global.u64 [%rd0], %rd6;\n\tst.global.u64 [%rd0+8], %rd7;\n\
         \tst.global.u32 [%rd0+16], %r2;\n\tret;\n"
    );
    let out = run_out(&module(OUT, &body), &one_cta(1, 64), 20, 0).unwrap();
    let w = |k: usize| u64::from_le_bytes(out[k..k + 8].try_into().unwrap());
    assert_eq!((w(0), w(8)), (0x1111_2222_3333_4444, 0x5555_6666_7777_8888));
    assert_eq!(
        u32s(&out[16..20]),
        [0x7777_8888],
        "the high half at bytes 8..16"
    );
}

#[test]
fn fp8_pairs_round_to_nearest_even_and_saturate() {
    use super::super::alu::cvt_pack;
    let sat = CvtMode {
        satfinite: true,
        ..RN
    };
    let e4 = |x: f32| cvt_pack(Type::E4m3x2, sat, 0, u64::from(x.to_bits())) as u8;
    let e5 = |x: f32| cvt_pack(Type::E5m2x2, sat, 0, u64::from(x.to_bits())) as u8;
    // E4M3: 1.0 is 0x38; 448 the largest finite, 0x7e; past it (and ∞) saturates.
    assert_eq!(e4(1.0), 0x38);
    assert_eq!(e4(448.0), 0x7e);
    assert_eq!(e4(463.0), 0x7e);
    assert_eq!(e4(1.0e9), 0x7e);
    assert_eq!(e4(f32::NEG_INFINITY), 0xfe);
    assert_eq!(e4(f32::NAN), 0x7f);
    // Ties to even: 1 + 1/16 between 1.0 (even) and 1.125; 1 + 3/16 between 1.125 and 1.25.
    assert_eq!(e4(1.0625), 0x38);
    assert_eq!(e4(1.1875), 0x3a);
    assert_eq!(e4(-1.1875), 0xba);
    // Subnormals: 2⁻⁹ is the smallest; 2⁻¹⁰ ties to 0; 3·2⁻¹⁰ to 2·2⁻⁹.
    assert_eq!(e4(2f32.powi(-9)), 0x01);
    assert_eq!(e4(2f32.powi(-10)), 0x00);
    assert_eq!(e4(3.0 * 2f32.powi(-10)), 0x02);
    // The smallest normal 2⁻⁶.
    assert_eq!(e4(2f32.powi(-6)), 0x08);
    // E5M2: 1.0 is 0x3c; 57344 the largest finite; ∞ saturates to it.
    assert_eq!(e5(1.0), 0x3c);
    assert_eq!(e5(57344.0), 0x7b);
    assert_eq!(e5(f32::INFINITY), 0x7b);
    assert_eq!(e5(-1.0e9), 0xfb);
    // The first source lands in the upper byte (the higher address).
    let both = cvt_pack(
        Type::E4m3x2,
        sat,
        u64::from(2f32.to_bits()),
        u64::from(1f32.to_bits()),
    );
    assert_eq!(both, 0x4038);
}

#[test]
fn cvt_fp4_pairs_round_to_nearest_even_and_saturate() {
    use super::super::alu::cvt_pack;
    let sat = CvtMode {
        satfinite: true,
        ..RN
    };
    let e2 = |x: f32| cvt_pack(Type::E2m1x2, sat, 0, u64::from(x.to_bits())) as u8;
    // Every E2M1 value is its own code: 0, 0.5, 1, 1.5, 2, 3, 4, 6 (sign in bit 3).
    for (code, v) in [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
        .iter()
        .enumerate()
    {
        assert_eq!(e2(*v), code as u8, "{v}");
        if *v != 0.0 {
            assert_eq!(e2(-*v), 0x8 | code as u8, "-{v}");
        }
    }
    // Ties to even: 0.25 → 0, 0.75 → 1.0, 1.25 → 1.0, 1.75 → 2.0, 2.5 → 2, 3.5 → 4, 5 → 4.
    assert_eq!(e2(0.25), 0x0);
    assert_eq!(e2(0.75), 0x2);
    assert_eq!(e2(1.25), 0x2);
    assert_eq!(e2(1.75), 0x4);
    assert_eq!(e2(2.5), 0x4);
    assert_eq!(e2(3.5), 0x6);
    assert_eq!(e2(5.0), 0x6);
    // Not ties: nearest.
    assert_eq!(e2(0.2499), 0x0);
    assert_eq!(e2(0.2501), 0x1);
    assert_eq!(e2(5.0001), 0x7);
    // Saturation: beyond 6, infinities included; tiny values to ±0.
    assert_eq!(e2(7.0), 0x7);
    assert_eq!(e2(1.0e30), 0x7);
    assert_eq!(e2(f32::INFINITY), 0x7);
    assert_eq!(e2(f32::NEG_INFINITY), 0xf);
    assert_eq!(e2(-1.0e-30), 0x8);
    // .relu clamps negatives to 0.
    let relu = CvtMode { relu: true, ..sat };
    assert_eq!(
        cvt_pack(Type::E2m1x2, relu, 0, u64::from((-3f32).to_bits())),
        0
    );
    // The first source lands in the upper nibble; one byte in all.
    let both = cvt_pack(
        Type::E2m1x2,
        sat,
        u64::from(6f32.to_bits()),
        u64::from((-0.5f32).to_bits()),
    );
    assert_eq!(both, 0x79);
}

/// `cvt.rn.satfinite.e2m1x2.f32` into `.b8` registers, four packed into a word by `mov.b32`
/// (the first the low byte) — the way a kernel stores eight FP4 values at once.
#[test]
fn cvt_fp4_pairs_through_ptx() {
    let body = format!(
        "\t.reg .b8 %c<4>;\n{PROLOGUE}\tsetp.ne.u32 %p0, %r0, 0;\n\t@%p0 bra $L_end;\n\
         \tmov.f32 %f0, 0f3F800000;\n\tmov.f32 %f1, 0fC0C00000;\n\
         \tmov.f32 %f2, 0f40200000;\n\tmov.f32 %f3, 0f7F800000;\n\
         \tcvt.rn.satfinite.e2m1x2.f32 %c0, %f1, %f0;\n\
         \tcvt.rn.satfinite.e2m1x2.f32 %c1, %f3, %f2;\n\
         \tcvt.rn.satfinite.e2m1x2.f32 %c2, %f0, %f0;\n\
         \tcvt.rn.satfinite.relu.e2m1x2.f32 %c3, %f1, %f2;\n\
         \tmov.b32 %r1, {{%c0, %c1, %c2, %c3}};\n\tst.global.b32 [%rd0], %r1;\n\
         $L_end:\n\tret;\n"
    );
    let out = u32s(&run_out(&module(OUT, &body), &one_cta(32, 0), 4, 1).unwrap());
    // c0 = {−6 high, 1 low} = 0xf2; c1 = {∞ → 6, 2.5 → 2} = 0x74; c2 = 0x22;
    // c3 = {relu(−6) = 0, 2.5 → 2} = 0x04.
    assert_eq!(out[0], 0x0422_74f2);
}
