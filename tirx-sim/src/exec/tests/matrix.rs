//! `ldmatrix` / `stmatrix` (`matrix.rs`): the ISA's thread map of `.m8n8.x4.b16` (and `stmatrix`'s `.x2`, `.x1`), plain and
//! `.trans`, with the row addresses permuted so that each lane's address is really used.

use super::*;

/// Value of element (row `r`, column `c`) of matrix `i` in these tests.
fn val(i: u32, r: u32, c: u32) -> u32 {
    i * 64 + r * 8 + c
}

/// Shared-memory slot (16 bytes) of row `r` of matrix `i`: the rows permuted.
const PERM: &str = "5";

/// Thread `t` (of 32) fills slot `t` with row `t ^ 5` of the 4×(8×8) pattern, then the warp
/// runs `ldmatrix` (lane `l` naming slot `l ^ 5`) and each thread stores its four registers.
fn ldmatrix_kernel(trans: bool) -> ptx::Module {
    let t = if trans { ".trans" } else { "" };
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\txor.b32 %r2, %r0, {PERM};\n\tshl.b32 %r3, %r2, 3;\n\
         \tmul.lo.u32 %r4, %r3, 65537;\n\tadd.u32 %r10, %r4, 65536;\n\tadd.u32 %r11, %r4, 196610;\n\
         \tadd.u32 %r12, %r4, 327684;\n\tadd.u32 %r13, %r4, 458758;\n\
         \tshl.b32 %r5, %r0, 4;\n\tadd.u32 %r5, %r5, %r1;\n\
         \tst.shared.v4.b32 [%r5], {{%r10, %r11, %r12, %r13}};\n\tbar.sync 0;\n\
         \tshl.b32 %r6, %r2, 4;\n\tadd.u32 %r6, %r6, %r1;\n\
         \tldmatrix.sync.aligned.m8n8.x4{t}.shared.b16 {{%r20, %r21, %r22, %r23}}, [%r6];\n\
         \tmul.wide.u32 %rd2, %r0, 16;\n\tadd.u64 %rd2, %rd2, %rd0;\n\
         \tst.global.v4.b32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\tret;\n"
    );
    module(OUT, &body)
}

#[test]
fn ldmatrix_x4_delivers_the_isa_fragment_plain_and_transposed() {
    for trans in [false, true] {
        let out = u32s(&run_out(&ldmatrix_kernel(trans), &one_cta(32, 512), 512, 0).unwrap());
        for l in 0..32u32 {
            for i in 0..4u32 {
                let (r, c) = (l / 4, 2 * (l % 4));
                let want = if trans {
                    val(i, c, r) | val(i, c + 1, r) << 16
                } else {
                    val(i, r, c) | val(i, r, c + 1) << 16
                };
                assert_eq!(
                    out[(l * 4 + i) as usize],
                    want,
                    "trans {trans} lane {l} matrix {i}"
                );
            }
        }
    }
}

/// Lane `l`'s register `i` holds elements `2l`, `2l + 1` of matrix `i`'s 64 (row-major when not
/// transposed); `stmatrix` stores them with lane `l` naming slot `l ^ 5`; thread `t` copies
/// slot `t` out.
fn stmatrix_kernel(trans: bool) -> ptx::Module {
    stmatrix_kernel_xn(4, trans)
}

/// [`stmatrix_kernel`] with `.xN`, storing the first `n` of the four registers.
fn stmatrix_kernel_xn(n: u32, trans: bool) -> ptx::Module {
    let t = if trans { ".trans" } else { "" };
    let regs = ["%r10", "%r11", "%r12", "%r13"][..n as usize].join(", ");
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tshl.b32 %r3, %r0, 1;\n\tmul.lo.u32 %r4, %r3, 65537;\n\
         \tadd.u32 %r10, %r4, 65536;\n\tadd.u32 %r11, %r10, 4194368;\n\
         \tadd.u32 %r12, %r11, 4194368;\n\tadd.u32 %r13, %r12, 4194368;\n\
         \txor.b32 %r2, %r0, {PERM};\n\tshl.b32 %r6, %r2, 4;\n\tadd.u32 %r6, %r6, %r1;\n\
         \tstmatrix.sync.aligned.m8n8.x{n}{t}.shared.b16 [%r6], {{{regs}}};\n\
         \tbar.sync 0;\n\tshl.b32 %r5, %r0, 4;\n\tadd.u32 %r5, %r5, %r1;\n\
         \tld.shared.v4.b32 {{%r20, %r21, %r22, %r23}}, [%r5];\n\
         \tmul.wide.u32 %rd2, %r0, 16;\n\tadd.u64 %rd2, %rd2, %rd0;\n\
         \tst.global.v4.b32 [%rd2], {{%r20, %r21, %r22, %r23}};\n\tret;\n"
    );
    module(OUT, &body)
}

#[test]
fn stmatrix_x4_is_the_inverse_map_plain_and_transposed() {
    for trans in [false, true] {
        let out = u32s(&run_out(&stmatrix_kernel(trans), &one_cta(32, 512), 512, 0).unwrap());
        for s in 0..32u32 {
            // Slot s holds row r of matrix i, where lane 8i + r = s ^ 5 named it.
            let l = s ^ 5;
            let (i, r) = (l / 8, l % 8);
            for j in 0..4u32 {
                let (c0, c1) = (2 * j, 2 * j + 1);
                let want = if trans {
                    val(i, c0, r) | val(i, c1, r) << 16
                } else {
                    val(i, r, c0) | val(i, r, c1) << 16
                };
                assert_eq!(
                    out[(s * 4 + j) as usize],
                    want,
                    "trans {trans} slot {s} word {j}"
                );
            }
        }
    }
}

/// `.x2` and `.x1` (a transposing store of a fragment with an odd count of 8-column blocks
/// takes `.x2` for the last, `regtile::shared`): [`stmatrix_kernel`] with the first `n`
/// registers; only the `8n` slots whose rows
/// lanes 0…8n−1 name are written, the rest stay zero.
#[test]
fn stmatrix_x2_and_x1_are_the_inverse_map_plain_and_transposed() {
    for n in [2u32, 1] {
        for trans in [false, true] {
            let m = stmatrix_kernel_xn(n, trans);
            let out = u32s(&run_out(&m, &one_cta(32, 512), 512, 0).unwrap());
            for s in 0..32u32 {
                let l = s ^ 5;
                let (i, r) = (l / 8, l % 8);
                for j in 0..4u32 {
                    let (c0, c1) = (2 * j, 2 * j + 1);
                    let want = if s >= 8 * n {
                        0
                    } else if trans {
                        val(i, c0, r) | val(i, c1, r) << 16
                    } else {
                        val(i, r, c0) | val(i, r, c1) << 16
                    };
                    assert_eq!(
                        out[(s * 4 + j) as usize],
                        want,
                        "x{n} trans {trans} slot {s} word {j}"
                    );
                }
            }
        }
    }
}

#[test]
fn ldmatrix_without_a_lane_that_names_a_row_is_an_error_naming_it() {
    // Lane 31 exits first: `.x4` needs its row address.
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.eq.u32 %p0, %r0, 31;\n\t@%p0 exit;\n\
         \tldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r20, %r21, %r22, %r23}}, [%r1];\n\
         \tret;\n"
    );
    let e = run_out(&module(OUT, &body), &one_cta(32, 512), 512, 0).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("lane 31 does not take part"), "{text}");
    // `.x2` needs only lanes 0…15: the same warp runs it.
    let body = body
        .replace(".x4", ".x2")
        .replace("%r20, %r21, %r22, %r23", "%r20, %r21");
    run_out(&module(OUT, &body), &one_cta(32, 512), 512, 0).unwrap();
}
