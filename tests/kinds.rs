//! The `tcgen05.mma` instruction kinds beyond `kind::f16` (PTX ISA §9.7.16.10.1 "Matrix
//! multiply and accumulate kinds"), chosen by the operands' element types: f32 tiles in
//! shared memory make `kind::tf32` (read as tf32, K = 8 per instruction); `e4m3` / `e5m2`
//! tiles make `kind::f8f6f4` (K = 32 per instruction, A and B may differ). A small GEMM
//! D = A·Bᵀ per kind, written with the same macro as the shipped kernels, run in the emulator
//! against an f64 reference that applies the same input rounding, with tails in M, N and K;
//! its PTX assembled by ptxas for sm_100a with the tensor-core MMA in the SASS (there is no
//! Blackwell GPU here).

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::put;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = A·Bᵀ in tf32: A M×K and B N×K f32 (rows of 32 f32 = one 128-byte swizzle span),
/// f32 accumulate in TMEM, f32 out. One 128×BN tile per CTA, K in steps of 32.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    grid = (cdiv(M, 128), cdiv(N, BN)),
    configs(default = (BN = 64)),
)]
pub fn tf32_gemm(
    #[shape(M, K)] a: Tensor<f32>,
    #[shape(N, K)] b: Tensor<f32>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<f32>([128, 32], swizzle = B128);
    let b_s = smem::<f32>([BN, 32], swizzle = B128);
    let acc = tmem::<f32>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    for k in 0..cdiv(K, 32) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            // f32 operands: kind::tf32, four instructions of K = 8 per 32-wide tile.
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0);
            tcgen05::commit(done);
        }
        done.wait(k % 2);
    }
    tcgen05::fence_after();
    copy(d.tile(cta.x, cta.y), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

/// D = A·Bᵀ in FP8, FP6 and FP4 (`kind::f8f6f4`): A M×K of `TA`, B N×K of `TB` (E4M3, E5M2,
/// or the 6-/4-bit E3M2, E2M3, E2M1 in the kind's padded shared-memory packing — 16 values
/// in each 16 bytes; rows of 128 elements = one 128-byte swizzle span either way), f32
/// accumulate in TMEM, f32 out. The configs are `F8F6F4_CONFIGS`, in order.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    grid = (cdiv(M, 128), cdiv(N, BN)),
    configs(
        e4m3 = (TA = e4m3, TB = e4m3, BN = 64),
        e5m2 = (TA = e5m2, TB = e5m2, BN = 32),
        mixed = (TA = e4m3, TB = e5m2, BN = 64),
        e2m3 = (TA = e2m3, TB = e2m3, BN = 64),
        e3m2_e2m1 = (TA = e3m2, TB = e2m1, BN = 32),
        e2m1_e4m3 = (TA = e2m1, TB = e4m3, BN = 64),
    ),
)]
pub fn fp8_gemm(
    #[shape(M, K)] a: Tensor<TA>,
    #[shape(N, K)] b: Tensor<TB>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<TA>([128, 128], swizzle = B128);
    let b_s = smem::<TB>([BN, 128], swizzle = B128);
    let acc = tmem::<f32>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    for k in 0..cdiv(K, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            // 8-, 6- or 4-bit operands: kind::f8f6f4, four instructions of K = 32 (32 bytes
            // of a row: one group of 16 or 32 bytes of 8-bit) per 128-wide tile.
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0);
            tcgen05::commit(done);
        }
        done.wait(k % 2);
    }
    tcgen05::fence_after();
    copy(d.tile(cta.x, cta.y), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

/// D = A·Bᵀ in 8-bit integers (`kind::i8`): A M×K of `TA`, B N×K of `TB` (`i8` or `u8`, A
/// and B may differ; rows of 128 = one 128-byte span), s32 accumulate in a `tmem::<i32>`
/// tile, i32 out (the accumulator's words stored as they are).
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    grid = (cdiv(M, 128), cdiv(N, BN)),
    configs(
        s8 = (TA = i8, TB = i8, BN = 64),
        u8_s8 = (TA = u8, TB = i8, BN = 32),
        u8 = (TA = u8, TB = u8, BN = 64),
    ),
)]
pub fn i8_gemm(
    #[shape(M, K)] a: Tensor<TA>,
    #[shape(N, K)] b: Tensor<TB>,
    #[shape(M, N)] d: Tensor<i32>,
) {
    let a_s = smem::<TA>([128, 128], swizzle = B128);
    let b_s = smem::<TB>([BN, 128], swizzle = B128);
    let acc = tmem::<i32>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    for k in 0..cdiv(K, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            // 8-bit integers: kind::i8, four instructions of K = 32 per 128-wide tile.
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0);
            tcgen05::commit(done);
        }
        done.wait(k % 2);
    }
    tcgen05::fence_after();
    copy(d.tile(cta.x, cta.y), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

/// `i8_gemm`'s configs in order: A's and B's types, their atype/btype codes in the kind::i8
/// column (Unsigned 8b = 0, Signed 8b = 1), BN.
const I8_CONFIGS: [(tirx::abi::ElemType, tirx::abi::ElemType, u32, u32, u32); 3] = {
    use tirx::abi::ElemType::{I8, U8};
    [(I8, I8, 1, 1, 64), (U8, I8, 0, 1, 32), (U8, U8, 0, 0, 64)]
};

#[test]
fn int8_operands_issue_kind_i8_with_an_s32_accumulator() {
    assert_eq!(i8_gemm::KERNEL.artifacts.len(), I8_CONFIGS.len());
    for (art, &(_, _, ca, cb, bn)) in i8_gemm::KERNEL.artifacts.iter().zip(&I8_CONFIGS) {
        let mmas: Vec<&str> = art
            .ptx
            .lines()
            .filter(|l| l.contains("tcgen05.mma"))
            .collect();
        assert_eq!(mmas.len(), 4, "{}", art.config);
        assert!(
            mmas.iter()
                .all(|l| l.contains("tcgen05.mma.cta_group::1.kind::i8")),
            "{mmas:#?}"
        );
        // dtype S32 = 2 (PTX ISA §9.7.16.4.2), the codes, N = BN, M = 128.
        let idesc = (2u32 << 4) | (ca << 7) | (cb << 10) | ((bn >> 3) << 17) | (8 << 24);
        assert!(
            art.ptx.contains(&format!("{idesc};")),
            "{}: no idesc {idesc:#x}",
            art.config
        );
    }
}

#[test]
fn the_int8_gemms_match_the_exact_integer_reference_in_the_emulator() {
    use tirx::abi::ElemType::I32;
    // Tails: M 136, N 72, K 208 (128 + 80). Values over the whole s8 / u8 ranges.
    for (art, &(ta, tb, _, _, _)) in i8_gemm::KERNEL.artifacts.iter().zip(&I8_CONFIGS) {
        for (m, n, k) in [(128, 64, 128), (136, 72, 208)] {
            let mut rng = Rng::new(3);
            let (ab, av) = inputs(&mut rng, ta, m * k);
            let (bb, bv) = inputs(&mut rng, tb, n * k);
            let mut dev = Device::new();
            let tam = put(&mut dev, &ab, ta, &[m, k]);
            let tbm = put(&mut dev, &bb, tb, &[n, k]);
            let td = put(&mut dev, &vec![0x5a; m * n * 4], I32, &[m, n]);
            sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 4)
                .unwrap_or_else(|e| panic!("{}: {e}", art.config));
            let got: Vec<i32> = dev
                .read(td.addr, m * n * 4)
                .expect("D")
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            for i in 0..m {
                for j in 0..n {
                    let want: i64 = (0..k)
                        .map(|q| av[i * k + q] as i64 * bv[j * k + q] as i64)
                        .sum();
                    assert_eq!(
                        i64::from(got[i * n + j]),
                        want,
                        "{} {m}x{n}x{k} D[{i}][{j}]",
                        art.config
                    );
                }
            }
        }
    }
}

#[test]
fn the_int8_gemms_assemble_with_the_tensor_core_mma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for art in i8_gemm::KERNEL.artifacts {
        let c = check_artifact("i8_gemm", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0);
        // ptxas 13 prints the kind::i8 MMA as UTCIMMA: four per K tile.
        assert_eq!(
            c.sass.get("UTCIMMA").copied(),
            Some(4),
            "{}: {:?}",
            art.config,
            c.sass
        );
    }
}

/// `x` as the tensor core reads an f32 operand of `kind::tf32`: sign, exponent and the top
/// 10 fraction bits (PTX ISA §5.2.3: tf32 has f32's range and ≥ 10 fraction bits).
fn tf32(x: f32) -> f64 {
    f64::from(f32::from_bits(x.to_bits() & !0x1fff))
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Random f32 in [-1, 1) with all 23 fraction bits in use (so tf32 truncation matters).
fn f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.unit()).collect()
}

/// Runs `tf32_gemm` on m×n×k random data; returns (D, reference with tf32 inputs,
/// reference with the f32 inputs, Σ|products| per element).
fn run_tf32(
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> (Vec<f32>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let (a, b) = (f32s(&mut rng, m * k), f32s(&mut rng, n * k));
    let mut dev = Device::new();
    let ta = put(&mut dev, &f32_bytes(&a), tirx::abi::ElemType::F32, &[m, k]);
    let tb = put(&mut dev, &f32_bytes(&b), tirx::abi::ElemType::F32, &[n, k]);
    let td = put(
        &mut dev,
        &vec![0xff; m * n * 4],
        tirx::abi::ElemType::F32,
        &[m, n],
    );
    let art = &tf32_gemm::KERNEL.artifacts[0];
    sim_launch(art, &mut dev, &[ta, tb, td.clone()], &[], seed).unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<f32> = dev
        .read(td.addr, m * n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let (mut want, mut exact, mut mag) = (vec![0.0; m * n], vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for j in 0..n {
            let (ra, rb) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
            want[i * n + j] = ra.iter().zip(rb).map(|(&x, &y)| tf32(x) * tf32(y)).sum();
            exact[i * n + j] = ra
                .iter()
                .zip(rb)
                .map(|(&x, &y)| f64::from(x) * f64::from(y))
                .sum();
            mag[i * n + j] = ra
                .iter()
                .zip(rb)
                .map(|(&x, &y)| (tf32(x) * tf32(y)).abs())
                .sum();
        }
    }
    (got, want, exact, mag)
}

#[test]
fn f32_operands_issue_kind_tf32_in_steps_of_k8() {
    let ptx = tf32_gemm::KERNEL.artifacts[0].ptx;
    let mmas: Vec<&str> = ptx.lines().filter(|l| l.contains("tcgen05.mma")).collect();
    assert_eq!(mmas.len(), 4, "{ptx}");
    assert!(mmas.iter().all(|l| l.contains(".kind::tf32")), "{mmas:#?}");
    // The instruction descriptor: f32 D (1 << 4), TF32 A/B (2 << 7 | 2 << 10), N = 64
    // (8 << 17), M = 128 (8 << 24) — PTX ISA §9.7.16.4.2, the kind::tf32 column.
    let idesc = (1u32 << 4) | (2 << 7) | (2 << 10) | (8 << 17) | (8 << 24);
    assert!(
        ptx.contains(&format!("{idesc};")),
        "no idesc {idesc:#x} in\n{ptx}"
    );
}

#[test]
fn the_tf32_gemm_matches_the_reference_in_the_emulator() {
    // Tails in every dimension: M 200 (128 + 72), N 72 (64 + 8), K 80 (32 + 32 + 16).
    for (shape, seed) in [((128, 64, 32), 1), ((200, 72, 80), 2)] {
        let (got, want, exact, mag) = run_tf32(shape, seed);
        let mut differs = false;
        for (i, g) in got.iter().enumerate() {
            // Products exact in f64, one f32 rounding per 32-wide tile's accumulation.
            let tol = mag[i] * 2f64.powi(-22) + 1e-30;
            let err = (f64::from(*g) - want[i]).abs();
            assert!(
                err <= tol,
                "{shape:?} D[{i}] = {g}, want {} (±{tol})",
                want[i]
            );
            differs |= (f64::from(*g) - exact[i]).abs() > 4.0 * tol;
        }
        // The f32 inputs' low 13 fraction bits were dropped: some element shows it.
        assert!(differs, "{shape:?}: no element tells tf32 from f32 inputs");
    }
}

/// Random inputs of `elem` in [-3, 1) — their bytes and exact values; FP8 ones decoded by
/// the runtime's `e4m3` / `e5m2` (independent of the emulator's decoder).
fn inputs(rng: &mut Rng, elem: tirx::abi::ElemType, n: usize) -> (Vec<u8>, Vec<f64>) {
    tirx_kernels::simulate::random_values(rng, elem, n)
}

fn read_f32(dev: &Device, t: &tirx::runtime::TensorMeta) -> Vec<f32> {
    let n: usize = t.shape.iter().product();
    dev.read(t.addr, n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `fp8_gemm`'s configs in order: (A type, B type, BN).
const F8F6F4_CONFIGS: [(tirx::abi::ElemType, tirx::abi::ElemType, u32); 6] = {
    use tirx::abi::ElemType::{E2m1, E2m3, E3m2, E4m3, E5m2};
    [
        (E4m3, E4m3, 64),
        (E5m2, E5m2, 32),
        (E4m3, E5m2, 64),
        (E2m3, E2m3, 64),
        (E3m2, E2m1, 32),
        (E2m1, E4m3, 64),
    ]
};

/// The atype/btype code of the f8f6f4 column of PTX ISA §9.7.16.4.2's table, written here
/// from the table (not from the encoder): E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5.
fn f8f6f4_code(t: tirx::abi::ElemType) -> u32 {
    use tirx::abi::ElemType::{E2m1, E2m3, E3m2, E4m3, E5m2};
    match t {
        E4m3 => 0,
        E5m2 => 1,
        E2m3 => 3,
        E3m2 => 4,
        E2m1 => 5,
        other => panic!("{other:?} is no f8f6f4 type"),
    }
}

#[test]
fn fp8_operands_issue_kind_f8f6f4_in_steps_of_k32() {
    assert_eq!(fp8_gemm::KERNEL.artifacts.len(), F8F6F4_CONFIGS.len());
    for (art, &(ta, tb, bn)) in fp8_gemm::KERNEL.artifacts.iter().zip(&F8F6F4_CONFIGS) {
        let mmas: Vec<&str> = art
            .ptx
            .lines()
            .filter(|l| l.contains("tcgen05.mma"))
            .collect();
        assert_eq!(mmas.len(), 4, "{}", art.config);
        assert!(
            mmas.iter().all(|l| l.contains(".kind::f8f6f4")),
            "{mmas:#?}"
        );
        // f32 D, atype/btype (PTX ISA §9.7.16.4.2, the f8f6f4 column), N = BN, M = 128.
        let (ca, cb) = (f8f6f4_code(ta), f8f6f4_code(tb));
        let idesc = (1u32 << 4) | (ca << 7) | (cb << 10) | ((bn >> 3) << 17) | (8 << 24);
        assert!(
            art.ptx.contains(&format!("{idesc};")),
            "{}: no idesc {idesc:#x}",
            art.config
        );
    }
}

#[test]
fn the_fp8_gemms_match_the_reference_in_the_emulator() {
    // Tails: M 136 (128 + 8), N 72 (BN + 8, or 2·32 + 8), K 208 (128 + 80; TMA needs rows
    // of a multiple of 16 bytes, the padded 6-/4-bit images whole 16-element groups).
    // Configs 3-5 are the 6- and 4-bit ones: the emulator unpacks their groups.
    for (ci, &(ta, tb, _)) in F8F6F4_CONFIGS.iter().enumerate() {
        let art = &fp8_gemm::KERNEL.artifacts[ci];
        // One f32 rounding per 128-wide K tile.
        let shapes = [(128, 64, 128), (136, 72, 208)];
        fp8_gemm_is_exact_in_the_emulator(art, (ta, tb), &shapes, 7 + ci as u64, 3, -22);
    }
}

/// The 6- and 4-bit operands are read from the padded groups only: with every padding byte
/// of A (E3M2: bytes 12-15 of each 16) and B (E2M1: bytes 8-15) set to 0x55 the emulator's
/// result is still the reference's, and with the packing ignored — the same bytes read as
/// one value per byte, in its low bits — it would not be.
#[test]
fn the_padding_of_the_6_and_4_bit_groups_is_not_read() {
    use tirx::abi::ElemType::{E2m1, E3m2, F32};
    let art = &fp8_gemm::KERNEL.artifacts[4];
    assert_eq!(art.config, "e3m2_e2m1");
    let (m, n, k) = (128, 32, 128);
    let mut rng = Rng::new(5);
    let (mut ab, av) = inputs(&mut rng, E3m2, m * k);
    let (mut bb, bv) = inputs(&mut rng, E2m1, n * k);
    for g in ab.chunks_mut(16) {
        g[12..].fill(0x55);
    }
    for g in bb.chunks_mut(16) {
        g[8..].fill(0x55);
    }
    // The other reading: one value per byte, in its low bits (an 8-bit container).
    let a8: Vec<f64> = ab
        .iter()
        .map(|&x| tirx::e3m2::value(u32::from(x & 0x3f)))
        .collect();
    let b8: Vec<f64> = bb
        .iter()
        .map(|&x| tirx::e2m1::value(u32::from(x & 0xf)))
        .collect();
    let mut dev = Device::new();
    let tam = put(&mut dev, &ab, E3m2, &[m, k]);
    let tbm = put(&mut dev, &bb, E2m1, &[n, k]);
    let td = put(&mut dev, &vec![0xff; m * n * 4], F32, &[m, n]);
    sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 1).unwrap_or_else(|e| panic!("{e}"));
    let got = read_f32(&dev, &td);
    let mut unpacked_differs = false;
    for i in 0..m {
        for j in 0..n {
            let dot = |x: &[f64], y: &[f64]| -> (f64, f64) {
                (0..k)
                    .map(|q| x[i * k + q] * y[j * k + q])
                    .fold((0.0, 0.0), |(s, a), t| (s + t, a + t.abs()))
            };
            let (want, mag) = dot(&av, &bv);
            let g = f64::from(got[i * n + j]);
            assert!(
                (g - want).abs() <= mag * 2f64.powi(-22) + 1e-30,
                "D[{i}][{j}] = {g}, want {want}"
            );
            let (bytewise, _) = dot(&a8, &b8);
            assert!(bytewise.is_finite());
            unpacked_differs |= (g - bytewise).abs() > 1e-6 * bytewise.abs().max(1.0);
        }
    }
    assert!(unpacked_differs, "the packing made no difference");
}

/// Runs an FP8 D = A·Bᵀ kernel (`a` M×K of `ta`, `b` N×K of `tb`, f32 `d`) in the emulator at
/// each shape (inputs from `seed`, the emulator's schedule from `schedule`), against the f64 sum of the exact FP8 products: each
/// element within `2^tol_exp · Σ|a·b|` (the kernel's f32 roundings). Shared with the Hopper
/// FP8 wgmma test.
pub(crate) fn fp8_gemm_is_exact_in_the_emulator(
    art: &tirx::KernelArtifact,
    (ta, tb): (tirx::abi::ElemType, tirx::abi::ElemType),
    shapes: &[(usize, usize, usize)],
    seed: u64,
    schedule: u64,
    tol_exp: i32,
) {
    for &(m, n, k) in shapes {
        let mut rng = Rng::new(seed);
        let (ab, av) = inputs(&mut rng, ta, m * k);
        let (bb, bv) = inputs(&mut rng, tb, n * k);
        let mut dev = Device::new();
        let tam = put(&mut dev, &ab, ta, &[m, k]);
        let tbm = put(&mut dev, &bb, tb, &[n, k]);
        let f32 = tirx::abi::ElemType::F32;
        let td = put(&mut dev, &vec![0xff; m * n * 4], f32, &[m, n]);
        sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], schedule)
            .unwrap_or_else(|e| panic!("{}: {e}", art.config));
        let got = read_f32(&dev, &td);
        for i in 0..m {
            for j in 0..n {
                let terms = (0..k).map(|q| av[i * k + q] * bv[j * k + q]);
                let (want, mag) = terms.fold((0.0, 0.0), |(s, a), x| (s + x, a + x.abs()));
                let g = f64::from(got[i * n + j]);
                // FP8 products are exact in f64.
                let tol = mag * 2f64.powi(tol_exp) + 1e-30;
                assert!(
                    (g - want).abs() <= tol,
                    "{} {m}x{n}x{k} D[{i}][{j}] = {g}, want {want}",
                    art.config
                );
            }
        }
    }
}

#[test]
fn the_fp8_gemms_assemble_with_the_tensor_core_mma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for art in fp8_gemm::KERNEL.artifacts {
        let c = check_artifact("fp8_gemm", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0);
        // ptxas 13 prints the kind::f8f6f4 MMA as UTCQMMA: four per K tile.
        assert_eq!(
            c.sass.get("UTCQMMA").copied(),
            Some(4),
            "{}: {:?}",
            art.config,
            c.sass
        );
    }
}

#[test]
fn the_tf32_gemm_assembles_with_the_tensor_core_mma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("tf32_gemm", &tf32_gemm::KERNEL.artifacts[0]).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    // ptxas 13 prints the kind::tf32 MMA as UTCHMMA (as kind::f16): four per K tile.
    assert_eq!(c.sass.get("UTCHMMA").copied(), Some(4), "{:?}", c.sass);
}

/// The CTA pair (`cta_group = 2`) in FP8, tf32, FP6 × FP4 and 8-bit integers: a 2×1 cluster
/// computes a 256-row tile of D = A·Bᵀ, each CTA holding its 128 rows of A and its `BN / 2`
/// rows of B (as `pair_gemm` in `pair_mma.rs`, here with 8-bit, f32 or padded 6-/4-bit
/// operands — `kind::f8f6f4` / `kind::tf32` — or i8 into an i32 accumulator — `kind::i8` —
/// with `cta_group::2`, N a multiple of 16).
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 256), cdiv(N, BN)),
    configs(
        e4m3 = (T = e4m3, U = e4m3, TD = f32, BN = 64, BK = 128),
        tf32 = (T = f32, U = f32, TD = f32, BN = 32, BK = 32),
        e3m2_e2m1 = (T = e3m2, U = e2m1, TD = f32, BN = 64, BK = 128),
        i8 = (T = i8, U = u8, TD = i32, BN = 64, BK = 128),
    ),
)]
pub fn pair_kinds(
    #[shape(M, K)] a: Tensor<T>,
    #[shape(N, K)] b: Tensor<U>,
    #[shape(M, N)] d: Tensor<TD>,
) {
    let a_s = smem::<T>([128, BK], swizzle = B128);
    let b_s = smem::<U>([BN / 2, BK], swizzle = B128);
    let acc = tmem::<TD>([128, BN]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    for k in 0..cdiv(K, BK) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(2 * cta.y + cta_rank, k), full);
        }
        full.wait(k % 2);
        cluster_sync();
        #[scope(warp = 1, elect)]
        {
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0, cta_group = 2);
            tcgen05::commit(done, cta_group = 2);
        }
        done.wait(k % 2);
    }
    tcgen05::fence_after();
    copy(d.tile(cta.x, cta.y), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

#[test]
fn the_pairs_fp8_tf32_fp6_and_int8_mmas_match_the_reference_in_the_emulator() {
    use tirx::abi::ElemType::{E2m1, E3m2, E4m3, F32, I8, I32, U8};
    let arts = pair_kinds::KERNEL.artifacts;
    for (art, (elem, belem), kind) in [
        (&arts[0], (E4m3, E4m3), ".kind::f8f6f4"),
        (&arts[1], (F32, F32), ".kind::tf32"),
        (&arts[2], (E3m2, E2m1), ".kind::f8f6f4"),
        (&arts[3], (I8, U8), ".kind::i8"),
    ] {
        assert!(
            art.ptx.contains(&format!("tcgen05.mma.cta_group::2{kind}")),
            "{}",
            art.config
        );
        // M 256 (one pair), N 80 (a partial N tile), K: two K tiles, the second partial.
        let (m, n, k) = if elem == F32 {
            (256, 80, 48)
        } else {
            (256, 80, 208)
        };
        let mut rng = Rng::new(11);
        let (ab, av) = inputs(&mut rng, elem, m * k);
        let (bb, bv) = inputs(&mut rng, belem, n * k);
        let tf = |v: f64| if elem == F32 { tf32(v as f32) } else { v };
        let int = elem == I8;
        let mut dev = Device::new();
        let tam = put(&mut dev, &ab, elem, &[m, k]);
        let tbm = put(&mut dev, &bb, belem, &[n, k]);
        let td_elem = if int { I32 } else { F32 };
        let td = put(&mut dev, &vec![0xff; m * n * 4], td_elem, &[m, n]);
        sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 2)
            .unwrap_or_else(|e| panic!("{}: {e}", art.config));
        let got: Vec<f64> = dev
            .read(td.addr, m * n * 4)
            .expect("D")
            .chunks_exact(4)
            .map(|c| {
                let w = [c[0], c[1], c[2], c[3]];
                if int {
                    f64::from(i32::from_le_bytes(w))
                } else {
                    f64::from(f32::from_le_bytes(w))
                }
            })
            .collect();
        for i in 0..m {
            for j in 0..n {
                let terms = (0..k).map(|q| tf(av[i * k + q]) * tf(bv[j * k + q]));
                let (want, mag) = terms.fold((0.0, 0.0), |(s, a), x| (s + x, a + x.abs()));
                // The integer sums are exact (|D| < 2^24 here): the bound is 0 for kind::i8.
                let mag = if int { 0.0 } else { mag };
                let g = got[i * n + j];
                assert!(
                    (g - want).abs() <= mag * 2f64.powi(-21) + 1e-30,
                    "{} D[{i}][{j}] = {g}, want {want}",
                    art.config
                );
            }
        }
    }
}

#[test]
fn the_pairs_fp8_tf32_fp6_and_int8_mmas_assemble_as_2cta_mmas() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for (art, sass) in pair_kinds::KERNEL.artifacts.iter().zip([
        "UTCQMMA.2CTA",
        "UTCHMMA.2CTA",
        "UTCQMMA.2CTA",
        "UTCIMMA.2CTA",
    ]) {
        let c = check_artifact("pair_kinds", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0);
        assert!(c.sass.contains_key(sass), "{}: {:?}", art.config, c.sass);
    }
}

/// The text form carries the new element types (`e4m3`, `e5m2` buffers and tensors): each
/// kernel's IR parses back to the same text after every pass and recompiles to the PTX the
/// macro emitted.
#[test]
fn the_kind_kernels_round_trip_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let arts = fp8_gemm::KERNEL
        .artifacts
        .iter()
        .chain(tf32_gemm::KERNEL.artifacts)
        .chain(pair_kinds::KERNEL.artifacts)
        .chain(i8_gemm::KERNEL.artifacts);
    for art in arts {
        let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{}: {e}", art.config));
        assert_eq!(m.to_string(), art.ir);
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
        for s in &snaps {
            let again = parse_module(&s.text).unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
            assert_eq!(again.to_string(), s.text, "after {}", s.pass);
        }
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
    }
    assert!(fp8_gemm::KERNEL.artifacts[2].ir.contains("e5m2"));
}
