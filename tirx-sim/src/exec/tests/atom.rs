//! `atom` and `red` (PTX ISA §9.7.13.5–6): each operation's result from its definition,
//! written out by hand, on global and shared memory; old values returned in a seeded lane
//! order.

use super::*;

/// Runs `body` on 128 threads after [`PROLOGUE`] and `%p0` = (thread 0), with thread 0
/// having stored `init` (a `.b32` immediate) at `out + 1024` and at shared `smem` before a
/// barrier; returns the 257 words of `out` (each thread's word, the global cell, the
/// shared cell copied to `out + 1028` by thread 0 at the end).
fn atom_kernel(init: &str, body: &str, seed: u64) -> Result<Vec<u32>, SimError> {
    let src = format!(
        "{PROLOGUE}\tmov.u32 %r9, smem;\n\tsetp.eq.u32 %p0, %r0, 0;\n\tmov.b32 %r8, {init};\n\
         \t@%p0 st.global.u32 [%rd0+1024], %r8;\n\t@%p0 st.shared.u32 [%r9], %r8;\n\
         \tbar.sync 0;\n{body}\tbar.sync 0;\n\t@%p0 ld.shared.u32 %r8, [%r9];\n\
         \t@%p0 st.global.u32 [%rd0+1028], %r8;\n\tret;\n"
    );
    Ok(u32s(&run_out(
        &module(OUT, &src),
        &one_cta(128, 64),
        1032,
        seed,
    )?))
}

#[test]
fn add_returns_each_old_value_once_in_a_seeded_order() {
    let body = "\tatom.global.add.u32 %r1, [%rd0+1024], 1;\n\tst.global.u32 [%rd1], %r1;\n";
    let a = atom_kernel("0", body, 1).unwrap();
    assert_eq!(a[256], 128);
    let mut olds = a[..128].to_vec();
    olds.sort_unstable();
    assert_eq!(
        olds,
        (0..128).collect::<Vec<u32>>(),
        "a permutation of 0..128"
    );
    // Another seed, another order of the same values.
    let b = atom_kernel("0", body, 2).unwrap();
    assert_ne!(a[..128], b[..128]);
    // red: no result; shared memory; 0 + 1 + … + 127.
    let c = atom_kernel("0", "\tred.shared.add.u32 [%r9], %r0;\n", 1).unwrap();
    assert_eq!(c[257], 127 * 128 / 2);
}

#[test]
fn min_max_signed_and_unsigned() {
    // Thread t offers t − 64: the signed max is 63 and min −64; unsigned, −1 (0xffffffff,
    // thread 63's) is the largest.
    let offer = "\tsub.s32 %r2, %r0, 64;\n";
    let max = atom_kernel(
        "0x80000000",
        &format!("{offer}\tred.shared.max.s32 [%r9], %r2;\n"),
        3,
    );
    assert_eq!(max.unwrap()[257], 63);
    let min = atom_kernel(
        "0x7fffffff",
        &format!("{offer}\tred.shared.min.s32 [%r9], %r2;\n"),
        3,
    );
    assert_eq!(min.unwrap()[257] as i32, -64);
    let umax = atom_kernel(
        "0",
        &format!("{offer}\tred.global.max.u32 [%rd0+1024], %r2;\n"),
        3,
    );
    assert_eq!(umax.unwrap()[256], u32::MAX);
    let umin = atom_kernel(
        "0xffffffff",
        &format!("{offer}\tred.global.min.u32 [%rd0+1024], %r2;\n"),
        3,
    );
    assert_eq!(umin.unwrap()[256], 0, "thread 64 offers 0");
}

#[test]
fn inc_and_dec_wrap_at_their_operand() {
    // 128 increments with b = 9 from 0: 0 → 1 … 9 → 0 …: 128 mod 10 = 8.
    let inc = atom_kernel("0", "\tatom.shared.inc.u32 %r1, [%r9], 9;\n", 4).unwrap();
    assert_eq!(inc[257], 8);
    // 128 decrements with b = 9 from 0: 0 → 9 → 8 … → 0 → 9: (−128) mod 10 = 2.
    let dec = atom_kernel("0", "\tatom.global.dec.u32 %r1, [%rd0+1024], 9;\n", 4).unwrap();
    assert_eq!(dec[256], 2);
    // From 50 (above b), dec starts at b: 50 → 9 → 8 …: 9 − 127 mod 10 = 2 after 128.
    let high = atom_kernel("50", "\tatom.global.dec.u32 %r1, [%rd0+1024], 9;\n", 4).unwrap();
    assert_eq!(high[256], 2);
}

#[test]
fn bitwise_exch_and_cas() {
    let bit = "\tand.b32 %r2, %r0, 31;\n\tmov.b32 %r3, 1;\n\tshl.b32 %r3, %r3, %r2;\n";
    let or = atom_kernel("0", &format!("{bit}\tred.shared.or.b32 [%r9], %r3;\n"), 5).unwrap();
    assert_eq!(or[257], u32::MAX);
    let and = atom_kernel(
        "0xffffffff",
        &format!("{bit}\tnot.b32 %r3, %r3;\n\tatom.shared.and.b32 %r1, [%r9], %r3;\n"),
        5,
    )
    .unwrap();
    assert_eq!(and[257], 0);
    // 0 ^ 1 ^ … ^ 127 = 0; with 0x5a5a5a5a to start it stays.
    let xor = atom_kernel("0x5a5a5a5a", "\tred.global.xor.b32 [%rd0+1024], %r0;\n", 5).unwrap();
    assert_eq!(xor[256], 0x5a5a_5a5a);
    // exch: the last writer's value stays, every other thread gets a distinct predecessor's.
    let exch = "\tadd.u32 %r2, %r0, 1;\n\tatom.global.exch.b32 %r1, [%rd0+1024], %r2;\n\
                \tst.global.u32 [%rd1], %r1;\n";
    let x = atom_kernel("0", exch, 6).unwrap();
    let mut seen: Vec<u32> = x[..128].to_vec();
    seen.push(x[256]);
    seen.sort_unstable();
    assert_eq!(seen, (0..=128).collect::<Vec<u32>>());
    // cas from 0: exactly one thread swaps its t + 1 in; the others see that value.
    let cas = "\tadd.u32 %r2, %r0, 1;\n\tatom.global.cas.b32 %r1, [%rd0+1024], 0, %r2;\n\
               \tst.global.u32 [%rd1], %r1;\n";
    let c = atom_kernel("0", cas, 7).unwrap();
    let winner = c[256];
    assert!((1..=128).contains(&winner));
    assert_eq!(c[..128].iter().filter(|&&v| v == 0).count(), 1);
    assert_eq!(c[(winner - 1) as usize], 0, "the winner saw 0");
    assert!(c[..128].iter().all(|&v| v == 0 || v == winner));
}

#[test]
fn float_add_rounds_to_nearest_and_flushes_subnormals() {
    // 128 × 0.5 = 64 exactly.
    let half = "\tmov.b32 %r2, 0f3F000000;\n\tred.global.add.f32 [%rd0+1024], %r2;\n";
    assert_eq!(
        f32::from_bits(atom_kernel("0", half, 8).unwrap()[256]),
        64.0
    );
    // 1 + 2⁻²⁴ rounds to 1 (a tie, to even) however many times: stays 1.0.
    let tiny = "\tmov.b32 %r2, 0f33800000;\n\tred.global.add.f32 [%rd0+1024], %r2;\n";
    assert_eq!(
        atom_kernel("0f3F800000", tiny, 8).unwrap()[256],
        0x3f80_0000
    );
    // The smallest subnormal added to 0: flushed, the cell stays +0.
    let sub = "\t@%p0 red.global.add.f32 [%rd0+1024], 0f00000001;\n";
    assert_eq!(atom_kernel("0", sub, 8).unwrap()[256], 0);
    // Unsupported combinations are refused by name.
    let e = atom_kernel("0", "\tred.global.inc.s32 [%rd0+1024], 1;\n", 8).unwrap_err();
    assert!(matches!(e, SimError::Unsupported { .. }), "{e}");
}

#[test]
fn vector_red_adds_each_element_atomically() {
    // 128 threads × {0.5, 1, 2, 4} into four f32 cells at out + 512 (beyond the threads'
    // words): 64, 128, 256, 512.
    let v4 = "\tmov.b32 %f1, 0f3F000000;\n\tmov.b32 %f2, 0f3F800000;\n\
              \tmov.b32 %f3, 0f40000000;\n\tmov.b32 %f4, 0f40800000;\n\
              \tred.relaxed.gpu.global.add.v4.f32 [%rd0+512], {%f1, %f2, %f3, %f4};\n";
    let a = atom_kernel("0", v4, 9).unwrap();
    let got: Vec<f32> = a[128..132].iter().map(|&w| f32::from_bits(w)).collect();
    assert_eq!(got, [64.0, 128.0, 256.0, 512.0]);
    // Two bf16 elements, 1 and 2, into one word: 128 (0x4300) low, 256 (0x4380) high.
    let v2 = "\tmov.b16 %h1, 0x3F80;\n\tmov.b16 %h2, 0x4000;\n\
              \tred.global.add.noftz.v2.bf16 [%rd0+1024], {%h1, %h2};\n";
    assert_eq!(atom_kernel("0", v2, 9).unwrap()[256], 0x4380_4300);
    // A vector of bf16x2 pairs: the same, two words.
    let x2 = "\tmov.b32 %r2, 0x40003F80;\n\
              \tred.global.max.noftz.v2.bf16x2 [%rd0+512], {%r2, %r2};\n";
    let m = atom_kernel("0", x2, 9).unwrap();
    assert_eq!(m[128..130], [0x4000_3f80, 0x4000_3f80]);
    // A vector not aligned to its whole size (16 bytes for v4.f32) is an error.
    let odd = "\tred.global.add.v4.f32 [%rd0+520], {%f1, %f1, %f1, %f1};\n";
    let e = atom_kernel("0", &format!("\tmov.b32 %f1, 0f3F800000;\n{odd}"), 9).unwrap_err();
    assert!(matches!(e, SimError::Misaligned { align: 16, .. }), "{e}");
    // What the ISA does not have is refused by name: integer vectors, shared memory, a
    // count that differs from the vector's.
    for bad in [
        "\tred.global.add.v4.s32 [%rd0+512], {%r0, %r0, %r0, %r0};\n",
        "\tred.shared.add.v2.f32 [%r9], {%f1, %f1};\n",
        "\tred.global.add.v4.f32 [%rd0+512], {%f1, %f1};\n",
    ] {
        let e = atom_kernel("0", bad, 9).unwrap_err();
        assert!(matches!(e, SimError::Unsupported { .. }), "{bad}: {e}");
    }
}
