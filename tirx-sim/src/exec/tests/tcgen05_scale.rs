//! Where a block-scaled `tcgen05.mma` finds its scale factors in tensor memory, checked
//! against the PTX ISA's figures (§9.7.16.10.7.2 "Scale Factor A ID", Figures 231-233 for
//! `scale_vec::1X` / `2X` / `4X`, and §9.7.16.10.7.3 for B), written here independently of
//! the emulator's reader (`tcgen05_scale.rs`):
//!
//! - the factors of a 128-row operand fill a 32-lane × 4-column tile: row `r` sits in lane
//!   `r % 32`, column `col0 + r / 32` (the figures' 32 lanes and 4 columns for M = 128; the
//!   same tile CUTLASS's block-scaled GEMM describes as `(32, 4) : (lane, column)` in
//!   tensor memory), a B of N rows likewise (N / 32 columns, rounded up);
//! - the tile is duplicated to all four 32-lane partitions (§9.7.16.10.7: "Scale factors for
//!   A and B matrices need to be duplicated to all 32 lane partitions of tensor memory");
//! - (`kind::mxf4`, MXFP4, reads them as `kind::mxf4nvf4`'s `2X` does: Table 44 is one
//!   table for both kinds);
//! - the byte of the 32-bit cell is the data ID: `1X` one factor a row in byte ID (0-3, the
//!   figure's four colours); `2X` two factors a row in the 2-byte sub-column from byte ID
//!   (0 or 2), the first for K chunk 0 (K 0-31) and the next for chunk 1; `4X` four factors
//!   in the whole cell (ID 0), byte `j` for K chunk `j` (16 elements each).
//!
//! The kernel stores a table built from that mapping with `tcgen05.st` (each factor a
//! different power of two, per row and byte), runs block-scaled MMAs over all-ones B and an
//! A whose K chunks differ, and reads D: a factor read from the wrong lane, column or byte
//! changes D. And `kind::i8`'s saturate bit (Table 42, bit 3) on a stored D near the s32
//! maximum.

use super::*;

/// The UE8M0 exponent byte of A's factor for row `m`, byte `b` (2^(e - 127) in 2^-4 … 2^4).
fn fa(m: u32, b: u32) -> u32 {
    127 + (m * 7 + b * 3) % 9 - 4
}

/// B's, for row (column of D) `n`, byte `b`.
fn fb(n: u32, b: u32) -> u32 {
    127 + (n * 5 + b) % 7 - 3
}

fn ue8m0(e: u32) -> f64 {
    2f64.powi(e as i32 - 127)
}

/// The 32-bit word of a factor tile at `lane` (any of the four partitions) and column `c`
/// from the tile's first: bytes 0-3 hold the factors of row `32c + lane % 32`.
fn tile_word(f: fn(u32, u32) -> u32, rows: u32, lane: u32, c: u32) -> u32 {
    let r = 32 * c + lane % 32;
    if r >= rows {
        return 0;
    }
    (0..4).map(|b| f(r, b) << (8 * b)).sum()
}

/// Byte `kb` of row `r` of an unswizzled K-major matrix (LBO 128, SBO 256): 16-byte chunks
/// of 8 rows form a core matrix, chunks LBO apart along K, 8-row groups SBO apart.
fn k_major(r: u32, kb: u32) -> u32 {
    (r / 8) * 256 + (kb / 16) * 128 + (r % 8) * 16 + kb % 16
}

const M: u32 = 128;
const N: u32 = 16;

/// The operand form under test.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// `kind::mxf8f6f4.scale_vec::1X`, E4M3 ones, K = 32.
    X1,
    /// `kind::mxf4nvf4.scale_vec::2X`, E2M1, K = 64.
    X2,
    /// `kind::mxf4nvf4.scale_vec::4X`, E2M1, UE8M0 factors, K = 64.
    X4,
    /// `kind::mxf4.block_scale` (MXFP4; `.block32` = `.scale_vec::2X` by default), K = 64:
    /// the same factors and products as [`Form::X2`].
    Mxf4,
}

/// A's values in its four 16-element K chunks (E2M1 forms): 1, 2, 4, 0.5.
const CHUNK: [f64; 4] = [1.0, 2.0, 4.0, 0.5];
/// Their E2M1 codes (§5.2.3: 1.0 = 0b0010, 2.0 = 0b0100, 4.0 = 0b0110, 0.5 = 0b0001).
const CODE: [u8; 4] = [0x2, 0x4, 0x6, 0x1];

impl Form {
    fn opcode(self) -> &'static str {
        match self {
            Form::X1 => "kind::mxf8f6f4.block_scale.scale_vec::1X",
            Form::X2 => "kind::mxf4nvf4.block_scale.scale_vec::2X",
            Form::X4 => "kind::mxf4nvf4.block_scale.scale_vec::4X",
            Form::Mxf4 => "kind::mxf4.block_scale",
        }
    }
    /// The (A, B) data IDs of the four MMAs.
    fn ids(self) -> [(u32, u32); 4] {
        match self {
            Form::X1 => [(0, 3), (1, 2), (2, 1), (3, 0)],
            Form::X2 | Form::Mxf4 => [(0, 2), (2, 0), (2, 2), (0, 0)],
            Form::X4 => [(0, 0); 4],
        }
    }
    /// The instruction descriptor, from the ISA's tables (Table 43 for mxf8f6f4, Table 44
    /// for mxf4nvf4): B's ID at 4-5, A/B types at 7 / 10, N >> 3 at 17, UE8M0 = 1 at 23,
    /// M >> 7 at 27, A's ID at 29-30.
    fn idesc(self, (ia, ib): (u32, u32)) -> u32 {
        let types = match self {
            Form::X1 => 0,                                            // E4M3 = 0, E4M3 = 0
            Form::X2 | Form::X4 | Form::Mxf4 => (1 << 7) | (1 << 10), // E2M1 = 1
        };
        (ib << 4) | types | ((N >> 3) << 17) | (1 << 23) | ((M >> 7) << 27) | (ia << 29)
    }
    /// Byte `kb` (0-31) of every row of A.
    fn a_byte(self, kb: u32) -> u8 {
        match self {
            Form::X1 => 0x38, // E4M3 1.0
            // Two E2M1 of one chunk (K elements 2kb, 2kb + 1; 16 elements = 8 bytes a chunk).
            Form::X2 | Form::X4 | Form::Mxf4 => {
                let c = CODE[(kb / 8) as usize];
                c | (c << 4)
            }
        }
    }
    fn b_byte(self) -> u8 {
        match self {
            Form::X1 => 0x38,
            Form::X2 | Form::X4 | Form::Mxf4 => 0x22,
        }
    }
    /// D[m][n] of the MMA with IDs `(ia, ib)`, from the mapping in the module docs.
    fn want(self, m: u32, n: u32, (ia, ib): (u32, u32)) -> f64 {
        let (sa, sb) = (|j| ue8m0(fa(m, ia + j)), |j| ue8m0(fb(n, ib + j)));
        match self {
            Form::X1 => 32.0 * sa(0) * sb(0),
            // Chunk j of 32 elements: 16 of CHUNK[2j] and 16 of CHUNK[2j + 1].
            Form::X2 | Form::Mxf4 => (0..2)
                .map(|j| 16.0 * (CHUNK[2 * j as usize] + CHUNK[2 * j as usize + 1]) * sa(j) * sb(j))
                .sum(),
            Form::X4 => (0..4)
                .map(|j| 16.0 * CHUNK[j as usize] * sa(j) * sb(j))
                .sum(),
        }
    }
}

/// 128 threads: each stores its lane's words of the factor tiles (A's 4 columns at TMEM
/// column 64, B's 1 at 72) with `tcgen05.st`, and 14 words of the shared image (A at 1024,
/// B at 5120); thread 0 runs four MMAs (D_j at column 16j, `enable-input-d` false) and
/// commits; every thread loads its lane's 64 columns.
fn run_form(form: Form) -> Result<Vec<f32>, SimError> {
    let desc = "0x0000401000080000";
    // The input: per lane 8 words (A's four tile words, B's one), then the shared image.
    let mut words = vec![0u32; 1024 + 1792];
    for l in 0..128 {
        for c in 0..4 {
            words[(8 * l + c) as usize] = tile_word(fa, M, l, c);
        }
        words[(8 * l + 4) as usize] = tile_word(fb, N, l, 0);
    }
    let mut image = vec![0u8; 7168];
    for r in 0..M {
        for kb in 0..32 {
            image[k_major(r, kb) as usize] = form.a_byte(kb);
        }
    }
    for r in 0..N {
        for kb in 0..32 {
            image[(4096 + k_major(r, kb)) as usize] = form.b_byte();
        }
    }
    for (i, w) in image.chunks_exact(4).enumerate() {
        words[1024 + i] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    }
    let mut copy = String::new();
    for i in 0..14 {
        copy += &format!(
            "\tld.global.u32 %r10, [%rd6+{}];\n\tst.shared.u32 [%r8+{}], %r10;\n",
            4 * i,
            4 * i
        );
    }
    let mut mmas = String::new();
    for (j, ids) in form.ids().into_iter().enumerate() {
        mmas += &format!(
            "\tadd.u32 %r11, %r2, {};\n\tmov.b32 %r9, {};\n\
             \t@%p1 tcgen05.mma.cta_group::1.{} [%r11], %rd3, %rd4, %r9, [%r12], [%r13], %p2;\n",
            16 * j,
            form.idesc(ids),
            form.opcode()
        );
    }
    let mut loads = String::new();
    for q in 0..4 {
        loads += &format!(
            "\tadd.u32 %r14, %r3, {};\n\ttcgen05.ld.sync.aligned.32x32b.x16.b32 {{{}}}, [%r14];\n\
             \ttcgen05.wait::ld.sync.aligned;\n",
            16 * q,
            (20..36)
                .map(|r| format!("%r{r}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for v in 0..4 {
            loads += &format!(
                "\tst.global.v4.u32 [%rd2+{}], {{%r{}, %r{}, %r{}, %r{}}};\n",
                64 * q + 16 * v,
                20 + 4 * v,
                21 + 4 * v,
                22 + 4 * v,
                23 + 4 * v
            );
        }
    }
    let body = format!(
        "\tld.param.u64 %rd0, [p_out];\n\tld.param.u64 %rd5, [p_in];\n\tmov.u32 %r0, %tid.x;\n\
         \tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 128;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \tmul.wide.u32 %rd6, %r0, 56;\n\tadd.u64 %rd6, %rd6, %rd5;\n\tadd.u64 %rd6, %rd6, 4096;\n\
         \tmul.lo.u32 %r8, %r0, 56;\n\tadd.u32 %r8, %r8, %r1;\n\tadd.u32 %r8, %r8, 1024;\n{copy}\
         \tfence.proxy.async.shared::cta;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\
         \tmul.wide.u32 %rd7, %r0, 32;\n\tadd.u64 %rd7, %rd7, %rd5;\n\
         \tld.global.v4.u32 {{%r20, %r21, %r22, %r23}}, [%rd7];\n\tld.global.u32 %r24, [%rd7+16];\n\
         \tadd.u32 %r14, %r3, 64;\n\
         \ttcgen05.st.sync.aligned.32x32b.x4.b32 [%r14], {{%r20, %r21, %r22, %r23}};\n\
         \tadd.u32 %r14, %r3, 72;\n\ttcgen05.st.sync.aligned.32x32b.x1.b32 [%r14], {{%r24}};\n\
         \ttcgen05.wait::st.sync.aligned;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r6;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\
         \tadd.u32 %r12, %r2, 64;\n\tadd.u32 %r13, %r2, 72;\n\tsetp.ne.u32 %p2, %r0, %r0;\n\
         {mmas}\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \tmul.wide.u32 %rd2, %r0, 256;\n\tadd.u64 %rd2, %rd2, %rd0;\n{loads}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 128;\n\tret;\n"
    );
    let m = module(".param .u64 p_out, .param .u64 p_in", &body);
    let mut dev = Device::new();
    let out = dev.alloc(128 * 256);
    dev.write(out, &vec![0xa5; 128 * 256]).unwrap();
    let inp = dev.alloc(words.len() * 4);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    dev.write(inp, &bytes).unwrap();
    run(
        &m,
        "k",
        &one_cta(128, 8192),
        &[ParamValue::U64(out), ParamValue::U64(inp)],
        &mut dev,
        4,
    )?;
    let got = u32s(&dev.read(out, 128 * 256).unwrap());
    Ok(got.into_iter().map(f32::from_bits).collect())
}

#[test]
fn block_scaled_mmas_read_factors_where_the_isa_figures_put_them() {
    for form in [Form::X1, Form::X2, Form::X4, Form::Mxf4] {
        let d = run_form(form).unwrap_or_else(|e| panic!("{form:?}: {e}"));
        for (j, ids) in form.ids().into_iter().enumerate() {
            for m in 0..M {
                for n in 0..N {
                    let got = f64::from(d[(64 * m + 16 * j as u32 + n) as usize]);
                    assert_eq!(
                        got,
                        form.want(m, n, ids),
                        "{form:?} MMA {j} (IDs {ids:?}) D[{m}][{n}]"
                    );
                }
            }
        }
    }
}

/// The check can fail: a tile written with rows and columns swapped (row `r` in lane
/// `r / 4`, column `r % 4` — another plausible reading of a 32 × 4 figure) gives other
/// factors, and so another D, than the ISA's layout.
#[test]
fn a_transposed_factor_tile_would_change_d() {
    let ours = tile_word(fa, M, 5, 2);
    let r = 32 * 2 + 5;
    let transposed: u32 = (0..4).map(|b| fa(4 * 5 + 2, b) << (8 * b)).sum();
    assert_ne!(ours, transposed);
    assert_eq!(ours & 0xff, fa(r, 0));
}

/// `kind::i8` over a stored D (PTX ISA §9.7.16.4.2, Table 42: bit 3 "Saturate for integer
/// types"): four warps store `d0` into columns 0..16 of their lanes, thread 0 runs one
/// `tcgen05.mma.kind::i8` (M = 128, N = 16, K = 32, A = B = all ones, S8 × S8 → S32) onto
/// it with the descriptor's bit 3 = `sat`, and each thread reads its lane's column 0.
fn i8_over(d0: i32, sat: bool) -> Result<Vec<i32>, SimError> {
    let desc = "0x0000401000080000";
    let idesc =
        (2u32 << 4) | (1 << 7) | (1 << 10) | ((N >> 3) << 17) | (8 << 24) | (u32::from(sat) << 3);
    let mut fill = String::new();
    for i in 0..14 {
        fill += &format!("\tst.shared.u32 [%r8+{}], %r10;\n", 4 * i);
    }
    let regs = (20..36)
        .map(|r| format!("%r{r}"))
        .collect::<Vec<_>>()
        .join(", ");
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
         \tsetp.eq.u32 %p1, %r0, 0;\n\t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \tmul.lo.u32 %r8, %r0, 56;\n\tadd.u32 %r8, %r8, %r1;\n\tadd.u32 %r8, %r8, 1024;\n\
         \tmov.b32 %r10, 0x01010101;\n{fill}\tfence.proxy.async.shared::cta;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\
         \tadd.u32 %r3, %r3, %r2;\n\
         {movs}\
         \ttcgen05.st.sync.aligned.32x32b.x16.b32 [%r3], {{{regs}}};\n\
         \ttcgen05.wait::st.sync.aligned;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd3, %r6;\n\tshr.u64 %rd3, %rd3, 4;\n\
         \tor.b64 %rd3, %rd3, {desc};\n\tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd4, %r7;\n\
         \tshr.u64 %rd4, %rd4, 4;\n\tor.b64 %rd4, %rd4, {desc};\n\tmov.b32 %r9, {idesc};\n\
         \tsetp.eq.u32 %p2, %r0, %r0;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::i8 [%r2], %rd3, %rd4, %r9, %p2;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x1.b32 {{%r20}}, [%r3];\n\
         \ttcgen05.wait::ld.sync.aligned;\n\tst.global.u32 [%rd1], %r20;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n",
        movs = (20..36)
            .map(|r| format!("\tmov.b32 %r{r}, {};\n", d0 as u32))
            .collect::<String>()
    );
    let out = run_out(&module(OUT, &body), &one_cta(128, 8192), 512, 4)?;
    Ok(u32s(&out).into_iter().map(|w| w as i32).collect())
}

#[test]
fn kind_i8_saturates_with_bit_3_and_wraps_without_it() {
    // Each D element gains Σ 1·1 over K = 32.
    let near = i32::MAX - 10;
    assert!(i8_over(near, true).unwrap().iter().all(|&d| d == i32::MAX));
    assert!(
        i8_over(near, false)
            .unwrap()
            .iter()
            .all(|&d| d == near.wrapping_add(32))
    );
    let low = 1000;
    assert!(i8_over(low, true).unwrap().iter().all(|&d| d == low + 32));
}

/// `kind::mxf4`'s column of Table 44: E2M1 = 1, UE8M0 = 1 the only scale type (UE4M3 is
/// mxf4nvf4's), data IDs 0 or 2; K = 64 and two factors a row (`scale_vec::2X`).
#[test]
fn kind_mxf4_decodes_its_column_of_the_fp4_descriptor_table() {
    assert_eq!(Kind::from_modifier("kind::mxf4"), Some(Kind::MxF4));
    assert_eq!((Kind::MxF4.k(), Kind::MxF4.scale_vec()), (64, 2));
    let d = Form::Mxf4.idesc((2, 0));
    let got = decode_idesc(d, Kind::MxF4).unwrap();
    assert_eq!((got.sf_ids, got.sf_ue4m3), (Some((2, 0)), false));
    assert!(decode_idesc(d & !(1 << 23), Kind::MxF4).is_err(), "UE4M3");
    assert!(decode_idesc(d | (1 << 29), Kind::MxF4).is_err(), "A's ID 3");
}
