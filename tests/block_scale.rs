//! Block scaling in the emulator (PTX ISA §9.7.16.10.7 "Block Scaling"): a hand-written
//! sm_100a kernel issues one `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale
//! .scale_vec::1X` (M = 128, N = 64, K = 32, E4M3 × E5M2) with UE8M0 scale factors that its
//! threads stored into tensor memory (row `m`'s factor in lane `m % 32` of every 32-lane
//! partition, column `m / 32`, the descriptor's data-ID byte), and D is compared with the f64
//! reference Σ (a·2^(sa−127))·(b·2^(sb−127)); in a second form thread 0 copies the factors
//! from shared memory with `tcgen05.cp.32x128b.warpx4` (one 32 × 16-byte image per matrix,
//! multicast to the four lane quarters) before its MMA. The PTX is assembled by ptxas for
//! sm_100a (the block-scaled MMA is `UTCQMMA`, the copies `UTCCP.T.S.4x32dp128bit`). The
//! language issues this kind (`tests/block_scale_lang.rs`); this checks the emulator's half
//! on hand-written PTX, and the descriptor the encoder's unit tests pin. A factor that
//! differs between lane partitions is diagnosed. `kind::mxf4nvf4` (E2M1 operands, NVFP4's
//! UE4M3 factors per 16 K with `.scale_vec::4X`, UE8M0 per 32 K with `::2X`) runs on the same
//! kernel against a reference written from the formats' definitions (ptxas: `UTCOMMA.4X`).

use tirx_kernels::reference::Rng;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::exec::{Launch, ParamValue};
use tirx_sim::{Device, SimError};

/// Rows of A (M), of B (N), and K.
const M: usize = 128;
const N: usize = 64;
const K: usize = 32;

/// How the factors reach tensor memory.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// Each thread `tcgen05.st`s its lane's 8 words into columns 64..72.
    Store,
    /// Thread 0 copies A's and B's 32 × 16-byte factor images from shared memory with
    /// `tcgen05.cp.32x128b.warpx4` (into every lane quarter) before its MMA.
    Copy,
}

/// The kernel: 128 threads copy the shared-memory image (A then B, canonical unswizzled
/// K-major: 8-row core matrices of 16 bytes, LBO 128 along K, SBO 256 between 8-row groups;
/// then the factor images of [`Place::Copy`]) from `p_in`, place the factors (`place`), then
/// thread 0 issues the MMA (A's factors from column 64 byte `SFA_ID`, B's from column 68
/// byte `SFB_ID`), commits, and every thread writes its row of D (64 f32) to `p_out`.
fn kernel(idesc: u32, place: Place) -> String {
    let sf_regs: Vec<String> = (0..8).map(|i| format!("%s{i}")).collect();
    let d_regs = |base: usize| -> String {
        (0..32)
            .map(|i| format!("%d{}", base + i))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let stores: String = (0..64)
        .map(|i| format!("\tst.global.b32 [%rd4+{}], %d{i};\n", 4 * i))
        .collect();
    let loads: String = (0..8)
        .map(|i| format!("\tld.global.b32 %s{i}, [%rd5+{}];\n", 4 * i))
        .collect();
    let mut copies: String = (0..3)
        .map(|i| {
            format!(
                "\tld.global.v4.b32 {{%r10, %r11, %r12, %r13}}, [%rd3+{o}];\n\
                 \tst.shared.v4.b32 [%r4+{o}], {{%r10, %r11, %r12, %r13}};\n",
                o = 16 * i
            )
        })
        .collect();
    // The factor images: 8 bytes a thread from input 6144 to shared 7168.
    copies += "\tmul.wide.u32 %rd8, %r0, 8;\n\tadd.u64 %rd8, %rd8, %rd1;\n\
               \tld.global.v2.b32 {%r14, %r15}, [%rd8+6144];\n\
               \tshl.b32 %r16, %r0, 3;\n\tadd.u32 %r16, %r16, %r1;\n\
               \tst.shared.v2.b32 [%r16+7168], {%r14, %r15};\n";
    // Store: each lane's words; Copy: thread 0's two copies (queued before its MMA, which
    // reads what they wrote, §9.7.16.6.5), descriptors of 32 rows × 16 bytes (SBO 128).
    let sf_desc = (8u64 << 16) | (8u64 << 32) | (1u64 << 46);
    let placing = match place {
        Place::Store => format!(
            "{loads}\ttcgen05.st.sync.aligned.32x32b.x8.b32 [%r5], {{{sf}}};\n\
             \ttcgen05.wait::st.sync.aligned;\n",
            sf = sf_regs.join(", ")
        ),
        Place::Copy => format!(
            "\tadd.u32 %r22, %r1, 7168;\n\tcvt.u64.u32 %rd9, %r22;\n\tshr.u64 %rd9, %rd9, 4;\n\
             \tor.b64 %rd9, %rd9, {sf_desc};\n\tadd.u64 %rd10, %rd9, 32;\n\
             \tadd.u32 %r23, %r2, 64;\n\tadd.u32 %r24, %r2, 68;\n\
             \t@%p1 tcgen05.cp.cta_group::1.32x128b.warpx4 [%r23], %rd9;\n\
             \t@%p1 tcgen05.cp.cta_group::1.32x128b.warpx4 [%r24], %rd10;\n"
        ),
    };
    // Descriptors: start >> 4 in bits 0-13, LBO 128 (8 << 16), SBO 256 (16 << 32), the
    // fixed 0b001 at bits 46-48, no swizzle (§9.7.16.4.1).
    let desc_const = (8u64 << 16) | (16u64 << 32) | (1u64 << 46);
    format!(
        ".version 8.7\n.target sm_100a\n.address_size 64\n\
         .extern .shared .align 1024 .b8 smem[];\n\
         .visible .entry k(.param .u64 p_out, .param .u64 p_in)\n.maxntid 128, 1, 1\n{{\n\
         \t.reg .b32 %r<40>;\n\t.reg .b32 %s<8>;\n\t.reg .b32 %d<64>;\n\
         \t.reg .b64 %rd<16>;\n\t.reg .pred %p<8>;\n\
         \tld.param.u64 %rd0, [p_out];\n\tld.param.u64 %rd1, [p_in];\n\
         \tcvta.to.global.u64 %rd0, %rd0;\n\tcvta.to.global.u64 %rd1, %rd1;\n\
         \tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, smem;\n\
         \tsetp.lt.u32 %p0, %r0, 32;\n\tsetp.eq.u32 %p1, %r0, 0;\n\
         \t@%p0 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 128;\n\
         \t@%p0 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\
         \t@%p1 mbarrier.init.shared::cta.b64 [%r1+8], 1;\n\
         \tmul.wide.u32 %rd2, %r0, 48;\n\tadd.u64 %rd3, %rd1, %rd2;\n\
         \tmul.lo.u32 %r4, %r0, 48;\n\tadd.u32 %r4, %r4, %r1;\n\tadd.u32 %r4, %r4, 1024;\n\
         {copies}\
         \tfence.proxy.async.shared::cta;\n\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tld.shared.u32 %r2, [%r1];\n\
         \tmul.wide.u32 %rd2, %r0, 32;\n\tadd.u64 %rd5, %rd1, %rd2;\n\tadd.u64 %rd5, %rd5, 7168;\n\
         \tshr.u32 %r3, %r0, 5;\n\tshl.b32 %r3, %r3, 21;\n\tadd.u32 %r3, %r3, %r2;\n\
         \tadd.u32 %r5, %r3, 64;\n\
         {placing}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\ttcgen05.fence::after_thread_sync;\n\
         \tadd.u32 %r6, %r1, 1024;\n\tcvt.u64.u32 %rd6, %r6;\n\tshr.u64 %rd6, %rd6, 4;\n\
         \tor.b64 %rd6, %rd6, {desc_const};\n\
         \tadd.u32 %r7, %r1, 5120;\n\tcvt.u64.u32 %rd7, %r7;\n\tshr.u64 %rd7, %rd7, 4;\n\
         \tor.b64 %rd7, %rd7, {desc_const};\n\
         \tmov.u32 %r8, {idesc};\n\tadd.u32 %r20, %r2, 64;\n\tadd.u32 %r21, %r2, 68;\n\
         \tsetp.ne.u32 %p2, %r0, %r0;\n\
         \t@%p1 tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X \
         [%r2], %rd6, %rd7, %r8, [%r20], [%r21], %p2;\n\
         \t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1+8];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1+8], 0;\n\
         \t@!%p3 bra $L_wait;\n\ttcgen05.fence::after_thread_sync;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{d0}}}, [%r3];\n\
         \tadd.u32 %r9, %r3, 32;\n\
         \ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{d1}}}, [%r9];\n\
         \ttcgen05.wait::ld.sync.aligned;\n\
         \tmul.wide.u32 %rd2, %r0, 256;\n\tadd.u64 %rd4, %rd0, %rd2;\n\
         {stores}\
         \ttcgen05.fence::before_thread_sync;\n\tbar.sync 0;\n\
         \t@%p0 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 128;\n\tret;\n}}\n",
        d0 = d_regs(0),
        d1 = d_regs(32),
    )
}

/// The byte offset of (row `r`, K byte `k`) in the canonical unswizzled K-major layout the
/// descriptors name (LBO 128 between 16-byte K chunks, SBO 256 between 8-row groups).
fn canonical(r: usize, k: usize) -> usize {
    (r / 8) * 256 + (k / 16) * 128 + (r % 8) * 16 + k % 16
}

/// The instruction descriptor of `kind::mxf8f6f4` (PTX ISA §9.7.16.4.2, the mxf8f6f4
/// table): B's scale-factor ID in bits 4-5, atype E4M3 = 0 (bits 7-9), btype E5M2 = 1 (bits
/// 10-12), N >> 3 in 17-22, UE8M0 = 1 in bit 23, M >> 7 in 27-28, A's ID in 29-30.
fn idesc(sfa_id: u32, sfb_id: u32) -> u32 {
    (sfb_id << 4) | (1 << 10) | ((N as u32 >> 3) << 17) | (1 << 23) | (1 << 27) | (sfa_id << 29)
}

/// Inputs: A (E4M3) and B (E5M2) values, A's and B's UE8M0 exponents, and the bytes of the
/// kernel's input buffer (the shared-memory image, then 8 scale words per lane).
struct Case {
    a: Vec<f64>,
    b: Vec<f64>,
    sa: Vec<u8>,
    sb: Vec<u8>,
    input: Vec<u8>,
}

fn case(seed: u64, (sfa_id, sfb_id): (u32, u32)) -> Case {
    use tirx::abi::ElemType::{E4m3, E5m2};
    let mut rng = Rng::new(seed);
    let (ab, a) = tirx_kernels::simulate::random_values(&mut rng, E4m3, M * K);
    let (bb, b) = tirx_kernels::simulate::random_values(&mut rng, E5m2, N * K);
    // Exponents around 127 (factors 2^-6 … 2^6), every one different enough to matter.
    let sa: Vec<u8> = (0..M).map(|_| 121 + rng.range(0, 12) as u8).collect();
    let sb: Vec<u8> = (0..N).map(|_| 121 + rng.range(0, 12) as u8).collect();
    let mut input = vec![0u8; 7168 + 128 * 32];
    for r in 0..M {
        for k in 0..K {
            input[canonical(r, k)] = ab[r * K + k];
        }
    }
    for r in 0..N {
        for k in 0..K {
            input[4096 + canonical(r, k)] = bb[r * K + k];
        }
    }
    // Lane t's words: columns 64..72 (relative 0..8). A's factor of row m in column m / 32
    // (0..4), B's of column n in 4 + n / 32 (4, 5), byte = the data ID, in every partition.
    // Other bytes hold noise the MMA must not read.
    for t in 0..128 {
        for c in 0..8 {
            let mut w = rng.next_u64() as u32;
            let (row, id, vals) = match c {
                0..4 => (32 * c + t % 32, sfa_id, &sa),
                4..6 => (32 * (c - 4) + t % 32, sfb_id, &sb),
                _ => (usize::MAX, 0, &sa),
            };
            if row != usize::MAX {
                w = (w & !(0xff << (8 * id))) | (u32::from(vals[row]) << (8 * id));
            }
            input[7168 + 32 * t + 4 * c..][..4].copy_from_slice(&w.to_le_bytes());
            // The images `tcgen05.cp` reads: row `r` (= lane) of A's at 6144 + 16r, B's at
            // 6144 + 512 + 16r, word `c` = column `c` (lanes 0..32 only: the copy repeats
            // them in every quarter).
            if t < 32 && c < 6 {
                let at = if c < 4 {
                    6144 + 16 * t + 4 * c
                } else {
                    6656 + 16 * t + 4 * (c - 4)
                };
                input[at..at + 4].copy_from_slice(&w.to_le_bytes());
            }
        }
    }
    Case {
        a,
        b,
        sa,
        sb,
        input,
    }
}

/// Runs `ptx` on `input`; D's 128 × 64 f32.
fn run(ptx: &str, input: &[u8]) -> Result<Vec<f32>, SimError> {
    let module = tirx_sim::ptx::parse(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut dev = Device::new();
    let out = dev.alloc(M * N * 4);
    dev.write(out, &vec![0xa5; M * N * 4]).unwrap();
    let inp = dev.alloc(input.len());
    dev.write(inp, input).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        cluster: [1, 1, 1],
        block: [128, 1, 1],
        smem_bytes: 8192,
    };
    let params = [ParamValue::U64(out), ParamValue::U64(inp)];
    tirx_sim::run(&module, "k", &launch, &params, &mut dev, 5)?;
    Ok(dev
        .read(out, M * N * 4)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[test]
fn the_block_scaled_mma_matches_the_scaled_reference_in_the_emulator() {
    let cases = [
        (1, (0, 0), Place::Store),
        (2, (2, 1), Place::Store),
        (3, (3, 3), Place::Copy),
        (6, (1, 2), Place::Copy),
    ];
    for (seed, ids, place) in cases {
        let c = case(seed, ids);
        let got =
            run(&kernel(idesc(ids.0, ids.1), place), &c.input).unwrap_or_else(|e| panic!("{e}"));
        let scale = |e: u8| 2f64.powi(i32::from(e) - 127);
        let mut unscaled_differs = false;
        for i in 0..M {
            for j in 0..N {
                let terms = (0..K)
                    .map(|k| (c.a[i * K + k] * scale(c.sa[i])) * (c.b[j * K + k] * scale(c.sb[j])));
                let (want, mag) = terms.fold((0.0, 0.0), |(s, m), x| (s + x, m + f64::abs(x)));
                let g = f64::from(got[i * N + j]);
                assert!(
                    (g - want).abs() <= mag * 2f64.powi(-23) + 1e-30,
                    "IDs {ids:?}: D[{i}][{j}] = {g}, want {want}"
                );
                let plain: f64 = (0..K).map(|k| c.a[i * K + k] * c.b[j * K + k]).sum();
                unscaled_differs |= (g - plain).abs() > mag * 2f64.powi(-10);
            }
        }
        assert!(unscaled_differs, "the factors changed nothing");
    }
}

/// The compiler's encoder (`encode::tcgen05_scaled`) gives the descriptor this kernel's run
/// in the emulator (whose decoder is written separately) checked against the reference.
#[test]
fn the_encoder_agrees_with_the_descriptor_the_emulator_ran() {
    use tirx::abi::ElemType::{E4m3, E5m2};
    use tirx_ir::encode::tcgen05_scaled::ScaledDesc;
    for (sfa_id, sfb_id) in [(0, 0), (2, 1), (3, 3)] {
        let d = ScaledDesc {
            a: E4m3,
            b: E5m2,
            m: M as u32,
            n: N as u32,
            sfa_id,
            sfb_id,
        };
        assert_eq!(d.encode(false), Ok(idesc(sfa_id, sfb_id)));
    }
}

#[test]
fn a_factor_not_duplicated_to_every_lane_partition_is_diagnosed() {
    let mut c = case(4, (1, 0));
    // Lane 37 (partition 1, row 5's copy) column 64: A's factor of row 5, byte 1, changed.
    c.input[7168 + 32 * 37 + 1] ^= 0x01;
    let e = run(&kernel(idesc(1, 0), Place::Store), &c.input).unwrap_err();
    assert!(e.to_string().contains("duplicated to all four"), "{e}");
    assert!(e.to_string().contains("row 5"), "{e}");
}

#[test]
fn other_scale_vector_sizes_and_a_missing_block_scale_are_refused() {
    let c = case(5, (0, 0));
    let ptx = kernel(idesc(0, 0), Place::Store);
    let two_x = ptx.replace("scale_vec::1X", "scale_vec::2X");
    let e = run(&two_x, &c.input).unwrap_err();
    assert!(e.to_string().contains("scale_vec::1X"), "{e}");
    let plain = ptx.replace(".block_scale.scale_vec::1X", "");
    let e = run(&plain, &c.input).unwrap_err();
    assert!(e.to_string().contains("block_scale"), "{e}");
}

#[test]
fn the_block_scaled_kernel_assembles_with_the_tensor_core_mma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let ptx = kernel(idesc(2, 1), Place::Copy);
    let rep = tirx_ptx::tools::ptxas(&ptx, "sm_100a").unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let Ok(sass) = tirx_ptx::tools::nvdisasm(&rep.cubin) else {
        return;
    };
    let mma: Vec<&str> = sass.lines().filter(|l| l.contains("UTCQMMA")).collect();
    assert_eq!(mma.len(), 1, "{sass}");
    // ptxas 13: `UTCQMMA gdesc[A], gdesc[B], tmem[D], tmem[scale A], idesc[…], tmem[scale B]`.
    assert_eq!(mma[0].matches("tmem[").count(), 3, "{mma:?}");
    // The factors' copies: `UTCCP.T.S.4x32dp128bit tmem[…+0x40]` and `[…+0x44]` (columns 64
    // and 68), the 4 × 32-lane multicast of `.32x128b.warpx4`.
    let cps: Vec<&str> = sass.lines().filter(|l| l.contains("UTCCP")).collect();
    assert_eq!(cps.len(), 2, "{sass}");
    assert!(cps.iter().all(|l| l.contains("4x32dp128bit")), "{cps:?}");
}

/// The `.64x128b` multicast shapes of `tcgen05.cp` (PTX ISA §9.7.16.9.2, `.warpx2::02_13`
/// and `::01_23`, run by the emulator: `tirx-sim` exec/tests/tcgen05_cp.rs) assemble for
/// sm_100a: the block-scaled kernel with its factor copies switched to them.
#[test]
fn the_warpx2_copy_shapes_assemble() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for shape in ["64x128b.warpx2::02_13", "64x128b.warpx2::01_23"] {
        let ptx = kernel(idesc(2, 1), Place::Copy).replace("32x128b.warpx4", shape);
        assert!(ptx.contains(shape));
        let rep = tirx_ptx::tools::ptxas(&ptx, "sm_100a").unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        let Ok(sass) = tirx_ptx::tools::nvdisasm(&rep.cubin) else {
            return;
        };
        // ptxas 13: `UTCCP.T.S.2x64dp128bit_lw02_lw13` / `_lw01_lw23` — the two copies'
        // lane-warp pairs, as the emulator writes them.
        let pairs = shape
            .rsplit("::")
            .next()
            .expect("a multicast")
            .replace('_', "_lw");
        let cps: Vec<&str> = sass.lines().filter(|l| l.contains("UTCCP")).collect();
        assert_eq!(cps.len(), 2, "{sass}");
        assert!(
            cps.iter()
                .all(|l| l.contains(&format!("2x64dp128bit_lw{pairs}"))),
            "{cps:?}"
        );
    }
}

/// `kind::mxf4nvf4` (NVFP4 / MXFP4): the descriptor of the table "Instruction descriptor
/// format for .kind::mxf4 and .kind::mxf4nvf4" (PTX ISA §9.7.16.4.2) by hand — B's data ID at
/// 4-5, atype E2M1 = 1 at 7-9, btype E2M1 = 1 at 10-11, N >> 3, the scale type at 23 (UE4M3 =
/// 0, UE8M0 = 1), M >> 7 at 27-28, A's ID at 29-30.
fn idesc_mxf4(ue8m0: bool, (sfa_id, sfb_id): (u32, u32)) -> u32 {
    (sfb_id << 4)
        | (1 << 7)
        | (1 << 10)
        | ((N as u32 >> 3) << 17)
        | (u32::from(ue8m0) << 23)
        | (1 << 27)
        | (sfa_id << 29)
}

/// The value of an E2M1 nibble (PTX ISA §5.2.3: sign, 2 exponent bits of bias 1, 1 fraction
/// bit), written here from the definition.
fn e2m1(n: u8) -> f64 {
    const MAG: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let m = MAG[usize::from(n & 7)];
    if n & 8 != 0 { -m } else { m }
}

/// A UE4M3 factor's value: E4M3 without the sign (bias 7, 3 fraction bits).
fn ue4m3(b: u8) -> f64 {
    f64::from(tirx::e4m3(b & 0x7f).to_f32())
}

/// An E2M1 problem for [`kernel`] (the same 32-byte rows: 64 E2M1 a row, the lower K in the
/// low nibble) with `v` factors a row (2X: UE8M0 per 32 K; 4X: UE4M3 per 16 K) at data IDs
/// `ids`; returns the input bytes and the f64 reference D.
fn case_mxf4(seed: u64, v: usize, ids: (u32, u32)) -> (Vec<u8>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let k = 64;
    // `range` is inclusive: 0..=15, every E2M1 code.
    let nib = |rng: &mut Rng| rng.range(0, 15) as u8;
    let a: Vec<u8> = (0..M * k).map(|_| nib(&mut rng)).collect();
    let b: Vec<u8> = (0..N * k).map(|_| nib(&mut rng)).collect();
    let factor = |rng: &mut Rng| {
        if v == 4 {
            0x28 + rng.range(0, 39) as u8 // UE4M3 2^-2 … 2^2, with fractions
        } else {
            121 + rng.range(0, 11) as u8 // UE8M0 2^-6 … 2^5
        }
    };
    let sa: Vec<u8> = (0..M * v).map(|_| factor(&mut rng)).collect();
    let sb: Vec<u8> = (0..N * v).map(|_| factor(&mut rng)).collect();
    let value = |b: u8| {
        if v == 4 {
            ue4m3(b)
        } else {
            2f64.powi(i32::from(b) - 127)
        }
    };
    let mut input = vec![0u8; 7168 + 128 * 32];
    for (base, rows, q) in [(0, M, &a), (4096, N, &b)] {
        for r in 0..rows {
            for byte in 0..32 {
                let lo = q[r * k + 2 * byte];
                let hi = q[r * k + 2 * byte + 1];
                input[base + canonical(r, byte)] = lo | (hi << 4);
            }
        }
    }
    // Lane t's words (columns 64..72): A's factors of row m in column m / 32, bytes
    // id_a..id_a + v; B's in 4 + n / 32; other bytes noise.
    for t in 0..128 {
        for c in 0..8 {
            let mut w = (rng.next_u64() as u32).to_le_bytes();
            let (row, id, vals) = match c {
                0..4 => (32 * c + t % 32, ids.0, &sa),
                4..6 => (32 * (c - 4) + t % 32, ids.1, &sb),
                _ => (usize::MAX, 0, &sa),
            };
            if row != usize::MAX {
                for j in 0..v {
                    w[id as usize + j] = vals[row * v + j];
                }
            }
            input[7168 + 32 * t + 4 * c..][..4].copy_from_slice(&w);
        }
    }
    let mut want = vec![0.0; M * N];
    for i in 0..M {
        for j in 0..N {
            want[i * N + j] = (0..k)
                .map(|q| {
                    let blk = q / (k / v);
                    e2m1(a[i * k + q])
                        * value(sa[i * v + blk])
                        * e2m1(b[j * k + q])
                        * value(sb[j * v + blk])
                })
                .sum();
        }
    }
    (input, want)
}

/// NVFP4 (`scale_vec::4X`, UE4M3 per 16 K) and MXFP4 through `kind::mxf4nvf4`
/// (`scale_vec::2X`, UE8M0 per 32 K, data IDs 2 and 0) in the emulator against the f64
/// reference written from the definitions; and the compiler's encoder gives the same
/// descriptors.
#[test]
fn the_mxf4nvf4_mma_matches_the_scaled_reference_in_the_emulator() {
    use tirx_ir::encode::tcgen05_scaled::{Mxf4Desc, ScaleType, ScaleVec};
    for (seed, v, ids) in [(8, 2, (2, 0)), (9, 2, (0, 2)), (7, 4, (0, 0))] {
        let d = idesc_mxf4(v == 2, ids);
        let enc = Mxf4Desc {
            m: M as u32,
            n: N as u32,
            scale: if v == 2 {
                ScaleType::Ue8m0
            } else {
                ScaleType::Ue4m3
            },
            vec: if v == 2 { ScaleVec::X2 } else { ScaleVec::X4 },
            sfa_id: ids.0,
            sfb_id: ids.1,
        };
        assert_eq!(enc.encode(false), Ok(d));
        let (input, want) = case_mxf4(seed, v, ids);
        let ptx = kernel(d, Place::Store).replace(
            "kind::mxf8f6f4.block_scale.scale_vec::1X",
            &format!("kind::mxf4nvf4.block_scale.scale_vec::{v}X"),
        );
        let got = run(&ptx, &input).unwrap_or_else(|e| panic!("{v}X: {e}"));
        let mut nonzero = 0;
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            // Products exact in f64, one f32 rounding of the sum.
            assert!(
                (f64::from(g) - w).abs() <= w.abs() * 2f64.powi(-22) + 1e-6,
                "{v}X D[{i}] = {g}, want {w}"
            );
            nonzero += usize::from(w != 0.0);
        }
        assert!(nonzero > M * N / 2, "{v}X: the reference is mostly zero");
        // The wrong scale vector size reads the factors differently: the result changes.
        if v == 4 {
            let bad = ptx.replace("scale_vec::4X", "scale_vec::2X");
            let e = run(&bad, &input).unwrap_err();
            assert!(e.to_string().contains("UE4M3"), "{e}");
        }
    }
}

#[test]
fn the_mxf4nvf4_kernel_assembles() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let ptx = kernel(idesc_mxf4(false, (0, 0)), Place::Copy).replace(
        "kind::mxf8f6f4.block_scale.scale_vec::1X",
        "kind::mxf4nvf4.block_scale.scale_vec::4X",
    );
    let rep = tirx_ptx::tools::ptxas(&ptx, "sm_100a").unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let Ok(sass) = tirx_ptx::tools::nvdisasm(&rep.cubin) else {
        return;
    };
    let mma: Vec<&str> = sass
        .lines()
        .filter(|l| l.contains("MMA") && l.contains("tmem["))
        .collect();
    assert_eq!(mma.len(), 1, "{sass}");
    // ptxas 13: `UTCOMMA.4X gdesc[A], gdesc[B], tmem[D], tmem[scale A], idesc, tmem[scale B]`.
    assert!(mma[0].contains("UTCOMMA.4X"), "{mma:?}");
    assert_eq!(mma[0].matches("tmem[").count(), 3, "{mma:?}");
}
