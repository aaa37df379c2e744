//! Block-scaled MMAs in the language (PTX ISA §9.7.16.10.7 "Block Scaling"): `ue8m0` factor
//! tiles loaded by TMA as the `[32, 16]` images `tirx::scale_image` writes, copied into
//! tensor memory by `tcgen05::cp` (`tcgen05.cp.32x128b.warpx4`), and read by
//! `tcgen05::mma(…, scale_a = …, scale_b = …)` (`kind::mxf8f6f4.block_scale.scale_vec::1X`,
//! one factor per 32 K, data IDs 0-3 over a 128-K tile). A small MXFP8 GEMM written with the
//! macro runs in the emulator against an f64 reference of the same quantised values, with
//! tails in M, N and K; its PTX is assembled by ptxas for sm_100a (there is no Blackwell GPU
//! here). A copy of the factors that nothing orders before the MMA is diagnosed by the
//! emulator.

use tirx::abi::ElemType;
use tirx::prelude::*;
use tirx::runtime::TensorMeta;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::put;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = (A·sA)(B·sB)ᵀ in MXFP8 / MXFP6 / MXFP4 (`kind::mxf8f6f4`): A M×K of `TA` and B N×K
/// of `TB` (E4M3, or E2M3 / E3M2 / E2M1 in the kind's padded packing, 16 values in 16 bytes:
/// a 128-byte row = 128 K per tile either way), their UE8M0 factors (one per 32 K) as
/// `scale_image`s, f32 accumulate in TMEM, f32 out. One 128×128 tile per CTA; each K tile:
/// TMA loads of A, B and both factor images, then the MMA's thread copies the factors into
/// TMEM and issues the four scaled MMAs.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    grid = (cdiv(M, 128), cdiv(N, 128)),
    configs(
        e4m3 = (TA = e4m3, TB = e4m3),
        mxfp6 = (TA = e2m3, TB = e3m2),
        mxfp4 = (TA = e2m1, TB = e2m1),
    ),
)]
pub fn mxfp8_mma(
    #[shape(M, K)] a: Tensor<TA>,
    #[shape(N, K)] b: Tensor<TB>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<TA>([128, 128], swizzle = B128);
    let b_s = smem::<TB>([128, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([32, 16]); // the 128 × 4 factors' copy image
    let sfb_s = smem::<ue8m0>([32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue8m0>([128, 4]); // 4 columns, every lane quarter
    let sfb_t = tmem::<ue8m0>([128, 4]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa_t);
        tcgen05::alloc(sfb_t);
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
            tma::load(sfa_s, sfa.tile(cta.x, k), full);
            tma::load(sfb_s, sfb.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            // The copies, then the MMAs that read them: one thread, in order (§9.7.16.6.5).
            tcgen05::cp(sfa_t, sfa_s);
            tcgen05::cp(sfb_t, sfb_s);
            tcgen05::mma(
                acc,
                a_s,
                b_s,
                accumulate = k > 0,
                scale_a = sfa_t,
                scale_b = sfb_t,
            );
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
        tcgen05::dealloc(sfa_t);
        tcgen05::dealloc(sfb_t);
    }
}

/// A planted bug the build-time rule cannot see (it follows a factor buffer, not its
/// stages): thread 32 copies stage 1 of `sfa_t` and never commits it; thread 0 copies stage 0
/// and `sfb_t`, then its MMA reads stage 1 — a copy of another thread that nothing ordered
/// before the MMA, which the emulator diagnoses at the MMA.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn mxfp8_stale_copy(
    #[shape(M, K)] a: Tensor<e4m3>,
    #[shape(N, K)] b: Tensor<e4m3>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e4m3>([128, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([32, 16]);
    let sfb_s = smem::<ue8m0>([32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue8m0>([2, 128, 4]);
    let sfb_t = tmem::<ue8m0>([128, 4]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa_t);
        tcgen05::alloc(sfb_t);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), full);
        tma::load(b_s, b.tile(0, 0), full);
        tma::load(sfa_s, sfa.tile(0, 0), full);
        tma::load(sfb_s, sfb.tile(0, 0), full);
    }
    full.wait(0);
    #[scope(thread = 32)]
    {
        tcgen05::cp(sfa_t[1], sfa_s);
    }
    sync_threads();
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfa_t[0], sfa_s);
        tcgen05::cp(sfb_t, sfb_s);
        tcgen05::mma(
            acc,
            a_s,
            b_s,
            accumulate = false,
            scale_a = sfa_t[1],
            scale_b = sfb_t,
        );
        tcgen05::commit(done);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sfa_t);
        tcgen05::dealloc(sfb_t);
    }
}

/// An MXFP8 problem: A, B quantised per 32-element block of a row (the OCP MX recipe: the
/// factor is the power of two that brings the block's largest magnitude within E4M3's 448),
/// with exact values `a`, `b` (element × factor) for the reference.
pub(crate) struct Mx {
    /// A's and B's element types.
    pub(crate) elems: [ElemType; 2],
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// A's E4M3 bytes, B's, A's factor image, B's.
    pub(crate) bytes: [Vec<u8>; 4],
    /// The factor images' shapes.
    pub(crate) shapes: [[usize; 2]; 2],
    /// The exact dequantised A (M×K) and B (N×K).
    pub(crate) a: Vec<f64>,
    pub(crate) b: Vec<f64>,
}

/// Quantises `rows × k` values to `elem` (E4M3, or a padded E3M2 / E2M3 / E2M1 image,
/// k then a multiple of 16) with one UE8M0 factor per 32 of a row.
fn quantise(
    x: &[f32],
    (rows, k): (usize, usize),
    elem: ElemType,
) -> (Vec<u8>, Vec<f64>, Vec<u8>, [usize; 2]) {
    let kb = k.div_ceil(32);
    let (mut q, mut exact) = (vec![0f32; rows * k], vec![0.0; rows * k]);
    let mut factors = vec![tirx::ue8m0(127); rows * kb];
    for r in 0..rows {
        for blk in 0..kb {
            let cols = blk * 32..(blk * 32 + 32).min(k);
            let amax = cols
                .clone()
                .map(|c| f64::from(x[r * k + c]).abs())
                .fold(0.0, f64::max);
            let s = tirx::ue8m0::for_block(amax, largest(elem));
            factors[r * kb + blk] = s;
            for c in cols {
                let v = rounded(elem, (f64::from(x[r * k + c]) / s.to_f64()) as f32);
                q[r * k + c] = v as f32;
                exact[r * k + c] = v * s.to_f64();
            }
        }
    }
    let bytes: Vec<u8> = match elem {
        ElemType::E3m2 => tirx::e3m2::pack(&q).iter().map(|b| b.0).collect(),
        ElemType::E2m3 => tirx::e2m3::pack(&q).iter().map(|b| b.0).collect(),
        ElemType::E2m1 => tirx::e2m1::pack(&q).iter().map(|b| b.0).collect(),
        _ => q.iter().map(|&v| tirx::e4m3::from_f32(v).0).collect(),
    };
    let (img, shape) = tirx::runtime::scale_image(&factors, rows, kb, tirx::ue8m0(127));
    (bytes, exact, img.iter().map(|f| f.0).collect(), shape)
}

/// The largest magnitude of an MX element type (PTX ISA §5.2.3).
fn largest(elem: ElemType) -> f64 {
    match elem {
        ElemType::E3m2 => 28.0,
        ElemType::E2m3 => 7.5,
        ElemType::E2m1 => 6.0,
        _ => 448.0,
    }
}

/// `x` rounded to `elem` (nearest, ties to even, saturating), by the runtime's host types.
fn rounded(elem: ElemType, x: f32) -> f64 {
    match elem {
        ElemType::E3m2 => tirx::e3m2::value(tirx::e3m2::code(x)),
        ElemType::E2m3 => tirx::e2m3::value(tirx::e2m3::code(x)),
        ElemType::E2m1 => tirx::e2m1::value(tirx::e2m1::code(x)),
        _ => f64::from(tirx::e4m3::from_f32(x).to_f32()),
    }
}

impl Mx {
    /// Random values spread over ±2^±6 so the blocks' factors differ; E4M3 operands.
    pub(crate) fn new(shape: (usize, usize, usize), seed: u64) -> Mx {
        Mx::of((ElemType::E4m3, ElemType::E4m3), shape, seed)
    }

    /// As `new`, A of type `ta` and B of `tb` (E4M3 or the padded 6-/4-bit types).
    pub(crate) fn of(
        (ta, tb): (ElemType, ElemType),
        (m, n, k): (usize, usize, usize),
        seed: u64,
    ) -> Mx {
        let mut rng = Rng::new(seed);
        let mut vals = |len: usize| -> Vec<f32> {
            (0..len)
                .map(|_| rng.unit() * 2f32.powi(rng.range(0, 13) as i32 - 6))
                .collect()
        };
        let (xa, xb) = (vals(m * k), vals(n * k));
        let (qa, a, ia, sa) = quantise(&xa, (m, k), ta);
        let (qb, b, ib, sb) = quantise(&xb, (n, k), tb);
        Mx {
            elems: [ta, tb],
            m,
            n,
            k,
            bytes: [qa, qb, ia, ib],
            shapes: [sa, sb],
            a,
            b,
        }
    }

    /// The tensors (A, B, A's factors, B's factors, D poisoned) in a fresh device.
    pub(crate) fn upload(&self, dev: &mut Device) -> [TensorMeta; 5] {
        use tirx::abi::ElemType::{F32, Ue8m0};
        let (m, n, k) = (self.m, self.n, self.k);
        [
            put(dev, &self.bytes[0], self.elems[0], &[m, k]),
            put(dev, &self.bytes[1], self.elems[1], &[n, k]),
            put(dev, &self.bytes[2], Ue8m0, &self.shapes[0]),
            put(dev, &self.bytes[3], Ue8m0, &self.shapes[1]),
            put(dev, &vec![0xff; m * n * 4], F32, &[m, n]),
        ]
    }

    /// D[i][j]'s reference and the Σ|products| it is bounded by.
    pub(crate) fn want(&self, i: usize, j: usize) -> (f64, f64) {
        let k = self.k;
        (0..k)
            .map(|q| self.a[i * k + q] * self.b[j * k + q])
            .fold((0.0, 0.0), |(s, a), x| (s + x, a + x.abs()))
    }
}

fn read_f32(dev: &Device, t: &TensorMeta) -> Vec<f32> {
    let n: usize = t.shape.iter().product();
    dev.read(t.addr, n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `mxfp8_mma`'s configs in order: A's and B's types and their atype/btype codes (PTX ISA
/// §9.7.16.4.2, the mxf8f6f4 table: E4M3 0, E2M3 3, E3M2 4, E2M1 5).
const MX_CONFIGS: [(ElemType, ElemType, u32, u32); 3] = [
    (ElemType::E4m3, ElemType::E4m3, 0, 0),
    (ElemType::E2m3, ElemType::E3m2, 3, 4),
    (ElemType::E2m1, ElemType::E2m1, 5, 5),
];

#[test]
fn the_scaled_mma_issues_four_block_scaled_instructions_with_data_ids_0_to_3() {
    assert_eq!(mxfp8_mma::KERNEL.artifacts.len(), MX_CONFIGS.len());
    for (art, &(_, _, ca, cb)) in mxfp8_mma::KERNEL.artifacts.iter().zip(&MX_CONFIGS) {
        scaled_mma_ptx(art.ptx, (ca, cb));
    }
}

fn scaled_mma_ptx(ptx: &str, (ca, cb): (u32, u32)) {
    let mmas: Vec<&str> = ptx.lines().filter(|l| l.contains("tcgen05.mma")).collect();
    assert_eq!(mmas.len(), 4, "{ptx}");
    assert!(
        mmas.iter().all(
            |l| l.contains("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X")
        ),
        "{mmas:#?}"
    );
    // The mxf8f6f4 descriptor (§9.7.16.4.2): atype / btype codes, N = 128 (16 << 17), UE8M0
    // (bit 23), M = 128 (1 << 27), data IDs j for A (29-30) and B (4-5).
    for j in 0..4u32 {
        let idesc =
            (j << 4) | (ca << 7) | (cb << 10) | (16 << 17) | (1 << 23) | (1 << 27) | (j << 29);
        assert!(ptx.contains(&format!("{idesc};")), "no idesc {idesc:#x}");
    }
    let cps = ptx
        .lines()
        .filter(|l| l.contains("tcgen05.cp.cta_group::1.32x128b.warpx4"))
        .count();
    assert_eq!(cps, 2, "{ptx}");
}

#[test]
fn the_mxfp8_mma_matches_the_scaled_reference_in_the_emulator() {
    // MXFP8, MXFP6 (E2M3 × E3M2) and MXFP4 (E2M1, kind::mxf8f6f4's padded form).
    for (art, &(ta, tb, _, _)) in mxfp8_mma::KERNEL.artifacts.iter().zip(&MX_CONFIGS) {
        mx_matches_the_reference(art, (ta, tb));
    }
}

fn mx_matches_the_reference(art: &tirx::KernelArtifact, types: (ElemType, ElemType)) {
    // Tails: M 200 (128 + 72), N 136 (128 + 8), K 208 (128 + 80: a last block of 16).
    for (shape, seed) in [((128, 128, 128), 1), ((200, 136, 208), 2)] {
        let p = Mx::of(types, shape, seed);
        let mut dev = Device::new();
        let t = p.upload(&mut dev);
        sim_launch(art, &mut dev, &t, &[], seed).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        let got = read_f32(&dev, &t[4]);
        let mut scaled = false;
        for i in 0..p.m {
            for j in 0..p.n {
                let (want, mag) = p.want(i, j);
                let g = f64::from(got[i * p.n + j]);
                // Products exact in f64; one f32 rounding per 128-K tile's accumulation.
                let tol = mag * 2f64.powi(-21) + 1e-30;
                assert!(
                    (g - want).abs() <= tol,
                    "{shape:?} D[{i}][{j}] = {g}, want {want} (±{tol})"
                );
                scaled |= want.abs() > 4.0 * mag * 2f64.powi(-21) + 1e-20;
            }
        }
        assert!(scaled, "{shape:?}: every element was zero");
    }
}

#[test]
fn the_mxfp8_mma_assembles_with_utcqmma_and_utccp() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for art in mxfp8_mma::KERNEL.artifacts {
        let c = check_artifact("mxfp8_mma", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0);
        assert_eq!(c.sass.get("UTCQMMA").copied(), Some(4), "{:?}", c.sass);
        assert_eq!(c.sass.get("UTCCP").copied(), Some(2), "{:?}", c.sass);
    }
}

#[test]
fn a_copy_of_the_factors_nothing_orders_before_the_mma_is_diagnosed() {
    let art = &mxfp8_stale_copy::KERNEL.artifacts[0];
    let p = Mx::new((128, 128, 128), 3);
    for seed in [1, 2, 3] {
        let mut dev = Device::new();
        let t = p.upload(&mut dev);
        let e = sim_launch(art, &mut dev, &t, &[], seed).expect_err("the stale copy");
        let msg = e.to_string();
        assert!(
            msg.contains("scale_A") && msg.contains("has not written yet"),
            "{msg}"
        );
    }
    // The same kernel with the MMA reading the stage its own thread copied is sound.
    let good = mxfp8_mma::KERNEL.artifacts[0];
    let mut dev = Device::new();
    let t = p.upload(&mut dev);
    sim_launch(&good, &mut dev, &t, &[], 1).unwrap_or_else(|e| panic!("{e}"));
}
