//! The f16 accumulator of `tcgen05.mma` (PTX ISA §9.7.16.2.1 Table 39: dtype `.f16` under
//! `kind::f16` with f16 operands and under `kind::f8f6f4`; §9.7.16.4.2 Table 42: dtype
//! F16 = 0 in bits 4-5): an unpacked `tmem::<f16>([128, N], unpacked = true)` tile — one f16
//! in the low half of each 32-bit cell, §9.7.16.10.4.1 "Packing format for matrix D in Tensor
//! Memory" — written by the MMA and read back by the TMEM epilogue. A small GEMM per operand
//! kind run in the emulator against a CPU reference that rounds D to f16 after every
//! instruction (what the ISA's D = A·B + D with an f16 D means: each instruction writes an
//! f16 D), bit for bit, and against the exact f64 product within the bound those roundings
//! allow; its PTX assembled by ptxas for sm_100a (there is no Blackwell GPU here).

use half::f16;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{put, random_values};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = A·Bᵀ with an f16 accumulator: A M×K and B N×K of `T` (f16: `kind::f16`, K = 16 per
/// instruction; e4m3: `kind::f8f6f4`, K = 32), rows of BK = one 128-byte span, D f16.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    grid = (cdiv(M, 128), cdiv(N, BN)),
    configs(
        f16 = (T = f16, BN = 64, BK = 64),
        e4m3 = (T = e4m3, BN = 32, BK = 128),
    ),
)]
pub fn f16_acc_gemm(
    #[shape(M, K)] a: Tensor<T>,
    #[shape(N, K)] b: Tensor<T>,
    #[shape(M, N)] d: Tensor<f16>,
) {
    let a_s = smem::<T>([128, BK], swizzle = B128);
    let b_s = smem::<T>([BN, BK], swizzle = B128);
    // One f16 to a 32-bit cell: BN columns, as an f32 accumulator's.
    let acc = tmem::<f16>([128, BN], unpacked = true);
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
    for k in 0..cdiv(K, BK) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
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

/// `f16_acc_gemm`'s configs in order: operand type, the atype/btype code (Table 42: F16 = 0
/// under kind::f16, E4M3 = 0 under kind::f8f6f4), the kind, K per instruction, BN.
const CONFIGS: [(tirx::abi::ElemType, &str, usize, u32); 2] = [
    (tirx::abi::ElemType::F16, ".kind::f16", 16, 64),
    (tirx::abi::ElemType::E4m3, ".kind::f8f6f4", 32, 32),
];

#[test]
fn an_f16_accumulator_sets_dtype_f16_in_the_instruction_descriptor() {
    for (art, &(_, kind, _, bn)) in f16_acc_gemm::KERNEL.artifacts.iter().zip(&CONFIGS) {
        let mmas = art
            .ptx
            .lines()
            .filter(|l| l.contains("tcgen05.mma"))
            .count();
        assert_eq!(mmas, 4, "{}", art.config);
        assert!(
            art.ptx.contains(&format!("tcgen05.mma.cta_group::1{kind}")),
            "{}",
            art.config
        );
        // dtype F16 = 0 (bits 4-5), operand codes 0, N >> 3 at 17, M >> 4 = 8 at 24.
        let idesc = ((bn >> 3) << 17) | (8 << 24);
        assert!(
            art.ptx.contains(&format!("{idesc};")),
            "{}: no idesc {idesc:#x}",
            art.config
        );
        // The accumulator takes BN columns (one f16 to a cell), not BN / 2: its layout's
        // innermost stride is 2, and the kernel allocates BN columns of TMEM.
        assert!(
            art.ir
                .contains(&format!("tmem f16 (128, {bn}):({}, 2)", 2 * bn)),
            "{}",
            art.config
        );
        assert_eq!((art.signature)().tmem_cols, bn.max(32), "{}", art.config);
    }
}

#[test]
fn the_f16_accumulator_rounds_after_every_instruction_in_the_emulator() {
    use tirx::abi::ElemType::F16;
    // Tails: M 136, N 72 (two column tiles, the second partial), K of one and of several
    // K tiles with a partial last one.
    for (art, &(elem, _, kstep, _)) in f16_acc_gemm::KERNEL.artifacts.iter().zip(&CONFIGS) {
        for (m, n, k) in [(128, 64, 64), (136, 72, 208)] {
            let mut rng = Rng::new(5);
            let (ab, av) = random_values(&mut rng, elem, m * k);
            let (bb, bv) = random_values(&mut rng, elem, n * k);
            let mut dev = Device::new();
            let tam = put(&mut dev, &ab, elem, &[m, k]);
            let tbm = put(&mut dev, &bb, elem, &[n, k]);
            let td = put(&mut dev, &vec![0xff; m * n * 2], F16, &[m, n]);
            sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 4)
                .unwrap_or_else(|e| panic!("{}: {e}", art.config));
            let got: Vec<u16> = dev
                .read(td.addr, m * n * 2)
                .expect("D")
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            let steps = k.div_ceil(kstep);
            for i in 0..m {
                for j in 0..n {
                    let prod = |q: usize| av[i * k + q] * bv[j * k + q];
                    // Per instruction: the exact sum of its K products added to D, rounded
                    // to f16 (nearest even) as the instruction writes D.
                    let mut dacc = 0f64;
                    for s in 0..steps {
                        let sum: f64 = (s * kstep..((s + 1) * kstep).min(k)).map(prod).sum();
                        dacc = round_f16(dacc + sum);
                    }
                    let g = f16::from_bits(got[i * n + j]);
                    assert_eq!(
                        g.to_bits(),
                        f16::from_f64(dacc).to_bits(),
                        // (exact: `dacc` is an f16 value already)
                        "{} {m}x{n}x{k} D[{i}][{j}] = {g}, want {dacc}",
                        art.config
                    );
                    // Against the exact product: each of the `steps` roundings errs by at
                    // most half an f16 ulp (2^-11 relative) of a partial sum bounded by Σ|ab|.
                    let (exact, mag) = (0..k)
                        .map(prod)
                        .fold((0.0, 0.0), |(s, a), x: f64| (s + x, a + x.abs()));
                    let bound = steps as f64 * (mag * 2f64.powi(-11) + 2f64.powi(-25));
                    assert!(
                        (g.to_f64() - exact).abs() <= bound,
                        "{} D[{i}][{j}] = {g}, exact {exact}",
                        art.config
                    );
                }
            }
        }
    }
}

/// `x` rounded to the nearest f16, ties to even (normal and subnormal range; the sums here
/// stay far below f16's maximum): written out rather than taken from `half`, whose f64
/// conversion may round through f32 first on some targets (two roundings).
fn round_f16(x: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    // The weight of an f16's last fraction bit at |x|: 2^(e - 10), e ≥ -14 (subnormals).
    let e = (x.abs().log2().floor() as i32).max(-14);
    let ulp = 2f64.powi(e - 10);
    // `x / ulp` is exact (a power of two); rounding it to an integer is the f16 rounding.
    let r = (x / ulp).round_ties_even() * ulp;
    assert!(r.abs() < 65504.0, "{x} overflows f16");
    r
}

#[test]
fn the_f16_accumulator_gemms_assemble_with_the_tensor_core_mma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for (art, sass) in f16_acc_gemm::KERNEL
        .artifacts
        .iter()
        .zip(["UTCHMMA", "UTCQMMA"])
    {
        let c = check_artifact("f16_acc_gemm", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0);
        assert_eq!(
            c.sass.get(sass).copied(),
            Some(4),
            "{}: {:?}",
            art.config,
            c.sass
        );
    }
}

/// The unpacked layout travels through the text form: strides `(2·BN, 2)` print and parse
/// back, and the IR recompiles to the PTX the macro emitted.
#[test]
fn the_f16_accumulator_round_trips_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    for art in f16_acc_gemm::KERNEL.artifacts {
        let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{}: {e}", art.config));
        assert_eq!(m.to_string(), art.ir);
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
    }
}

/// The f16 accumulator through a register tile: `regs::<f16>` loads it with `tcgen05.ld
/// …pack::16b` (two cells' low halves to a register) and stores it back with
/// `.unpack::16b`, as from and to an f32 tile's low halves; D = 2·(A·Bᵀ).
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn f16_acc_regs(
    #[shape(M, K)] a: Tensor<f16>,
    #[shape(N, K)] b: Tensor<f16>,
    #[shape(M, N)] d: Tensor<f16>,
) {
    let a_s = smem::<f16>([128, 64], swizzle = B128);
    let b_s = smem::<f16>([64, 64], swizzle = B128);
    let acc = tmem::<f16>([128, 64], unpacked = true);
    let t = regs::<f16>([128, 64], layout = tmem_32x32b);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), loaded);
        tma::load(b_s, b.tile(0, 0), loaded);
    }
    loaded.wait(0);
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(t, acc);
    t = cast::<f16>(t * 2.0);
    copy(acc, t);
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

#[test]
fn the_f16_accumulator_moves_through_registers_packed_and_unpacked() {
    use tirx::abi::ElemType::F16;
    let art = &f16_acc_regs::KERNEL.artifacts[0];
    assert!(
        art.ptx.contains(".pack::16b.b32"),
        "no tcgen05.ld .pack::16b"
    );
    assert!(
        art.ptx.contains(".unpack::16b.b32"),
        "no tcgen05.st .unpack::16b"
    );
    let (m, n, k) = (128, 64, 64);
    let mut rng = Rng::new(13);
    let (ab, av) = random_values(&mut rng, F16, m * k);
    let (bb, bv) = random_values(&mut rng, F16, n * k);
    let mut dev = Device::new();
    let tam = put(&mut dev, &ab, F16, &[m, k]);
    let tbm = put(&mut dev, &bb, F16, &[n, k]);
    let td = put(&mut dev, &vec![0xff; m * n * 2], F16, &[m, n]);
    sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 4).unwrap_or_else(|e| panic!("{e}"));
    let got = dev.read(td.addr, m * n * 2).expect("D");
    for i in 0..m {
        for j in 0..n {
            // Four instructions of K = 16, each rounding D to f16; then doubled (exact).
            let mut dacc = 0f64;
            for s in 0..4 {
                let sum: f64 = (16 * s..16 * s + 16)
                    .map(|q| av[i * k + q] * bv[j * k + q])
                    .sum();
                dacc = round_f16(dacc + sum);
            }
            let g = f16::from_bits(u16::from_le_bytes([
                got[2 * (i * n + j)],
                got[2 * (i * n + j) + 1],
            ]));
            assert_eq!(g.to_f64(), 2.0 * dacc, "D[{i}][{j}]");
        }
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("f16_acc_regs", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let has = |op: &str| c.sass.keys().any(|k| k.starts_with(op));
    assert!(has("LDTM") && has("STTM"), "{:?}", c.sass);
}

/// The CTA pair with an f16 accumulator (`cta_group = 2`, M = 256 across the pair): each
/// CTA's 128 rows of D in its own unpacked `tmem::<f16>` tile.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_f16_acc(
    #[shape(M, K)] a: Tensor<f16>,
    #[shape(N, K)] b: Tensor<f16>,
    #[shape(M, N)] d: Tensor<f16>,
) {
    let a_s = smem::<f16>([128, 64], swizzle = B128);
    let b_s = smem::<f16>([32, 64], swizzle = B128);
    let acc = tmem::<f16>([128, 64], unpacked = true);
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
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.x, 0), full);
        tma::load(b_s, b.tile(cta_rank, 0), full);
    }
    full.wait(0);
    cluster_sync();
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false, cta_group = 2);
        tcgen05::commit(done, cta_group = 2);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(cta.x, 0), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

#[test]
fn the_pairs_f16_accumulator_matches_the_rounded_reference_in_the_emulator() {
    use tirx::abi::ElemType::F16;
    let art = &pair_f16_acc::KERNEL.artifacts[0];
    // dtype F16 = 0, N 64 >> 3 at 17, the pair's M 256 >> 4 = 16 at 24.
    let idesc = (8u32 << 17) | (16 << 24);
    assert!(
        art.ptx.contains(&format!("{idesc};")),
        "no idesc {idesc:#x}"
    );
    let (m, n, k) = (256, 64, 64);
    let mut rng = Rng::new(29);
    let (ab, av) = random_values(&mut rng, F16, m * k);
    let (bb, bv) = random_values(&mut rng, F16, n * k);
    let mut dev = Device::new();
    let tam = put(&mut dev, &ab, F16, &[m, k]);
    let tbm = put(&mut dev, &bb, F16, &[n, k]);
    let td = put(&mut dev, &vec![0xff; m * n * 2], F16, &[m, n]);
    sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 2).unwrap_or_else(|e| panic!("{e}"));
    let got = dev.read(td.addr, m * n * 2).expect("D");
    for i in 0..m {
        for j in 0..n {
            let mut dacc = 0f64;
            for s in 0..4 {
                let sum: f64 = (16 * s..16 * s + 16)
                    .map(|q| av[i * k + q] * bv[j * k + q])
                    .sum();
                dacc = round_f16(dacc + sum);
            }
            let at = 2 * (i * n + j);
            let g = f16::from_bits(u16::from_le_bytes([got[at], got[at + 1]]));
            assert_eq!(g.to_f64(), dacc, "D[{i}][{j}]");
        }
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("pair_f16_acc", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert!(c.sass.contains_key("UTCHMMA.2CTA"), "{:?}", c.sass);
}
