//! Block-scaled FP4 MMAs in the language (PTX ISA §9.7.16.10.7 "Block Scaling"): `e2m1x2`
//! operands (two E2M1 values a byte, the lower K in the low nibble) with `ue8m0` factors —
//! MXFP4, `kind::mxf4nvf4.block_scale.scale_vec::2X`, one factor per 32 values — or `ue4m3`
//! factors — NVFP4, `scale_vec::4X`, one factor per 16 values. A K tile is one 128-byte
//! swizzle row, 256 values: four instructions of K = 64 (§9.7.16.2.1), its factors 8 (MXFP4)
//! or 16 (NVFP4) a row, i.e. 2 or 4 cells of 4, held in a multi-cell TMEM factor tile
//! `tmem::<T>([128, F])` and copied from a `[F / 4, 32, 16]` shared image whose cells are
//! loaded one TMA box each from `tirx::runtime::scale_image`'s tensor.
//!
//! Each kernel, a small GEMM with one 128 × 128 tile per CTA, runs in the emulator against
//! an f64 reference of the block-scaled product of the same quantised values at shapes with
//! tails in M, N and K; its PTX is checked for the instructions, descriptors and factor
//! addresses, and assembled by ptxas for sm_100a with 0 spills (no Blackwell GPU here).

use tirx::prelude::*;
use tirx::runtime::TensorMeta;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::put;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = (A·sA)(B·sB)ᵀ in NVFP4: A M×K and B N×K of E2M1 (`[M, K / 2]` bytes), their UE4M3
/// factors (one per 16 values) as `scale_image`s, f32 accumulate in TMEM, f32 out.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 128), cdiv(N, 128)))]
pub fn nvfp4_mma(
    #[shape(M, KB)] a: Tensor<e2m1x2>,
    #[shape(N, KB)] b: Tensor<e2m1x2>,
    #[shape(MS, KS)] sfa: Tensor<ue4m3>,
    #[shape(NS, KS)] sfb: Tensor<ue4m3>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e2m1x2>([128, 128], swizzle = B128); // 256 FP4 values a row
    let b_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let sfa_s = smem::<ue4m3>([4, 32, 16]); // 4 cells × (128 rows × 4 factors)
    let sfb_s = smem::<ue4m3>([4, 32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue4m3>([128, 16]); // 16 factors a row: 16 columns
    let sfb_t = tmem::<ue4m3>([128, 16]);
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
    for k in 0..cdiv(KB, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
            tma::load(sfa_s[0], sfa.tile(cta.x, 4 * k), full);
            tma::load(sfa_s[1], sfa.tile(cta.x, 4 * k + 1), full);
            tma::load(sfa_s[2], sfa.tile(cta.x, 4 * k + 2), full);
            tma::load(sfa_s[3], sfa.tile(cta.x, 4 * k + 3), full);
            tma::load(sfb_s[0], sfb.tile(cta.y, 4 * k), full);
            tma::load(sfb_s[1], sfb.tile(cta.y, 4 * k + 1), full);
            tma::load(sfb_s[2], sfb.tile(cta.y, 4 * k + 2), full);
            tma::load(sfb_s[3], sfb.tile(cta.y, 4 * k + 3), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            tcgen05::cp(sfa_t, sfa_s); // 4 × tcgen05.cp.32x128b.warpx4
            tcgen05::cp(sfb_t, sfb_s);
            // 4 × kind::mxf4nvf4.block_scale.scale_vec::4X, factor cells 0-3 (ID 0)
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

/// The same GEMM in MXFP4: UE8M0 factors, one per 32 values (8 a 256-value row: 2 cells).
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 128), cdiv(N, 128)))]
pub fn mxfp4_mma(
    #[shape(M, KB)] a: Tensor<e2m1x2>,
    #[shape(N, KB)] b: Tensor<e2m1x2>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let b_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([2, 32, 16]);
    let sfb_s = smem::<ue8m0>([2, 32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue8m0>([128, 8]);
    let sfb_t = tmem::<ue8m0>([128, 8]);
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
    for k in 0..cdiv(KB, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
            tma::load(sfa_s[0], sfa.tile(cta.x, 2 * k), full);
            tma::load(sfa_s[1], sfa.tile(cta.x, 2 * k + 1), full);
            tma::load(sfb_s[0], sfb.tile(cta.y, 2 * k), full);
            tma::load(sfb_s[1], sfb.tile(cta.y, 2 * k + 1), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            tcgen05::cp(sfa_t, sfa_s);
            tcgen05::cp(sfb_t, sfb_s);
            // 4 × kind::mxf4nvf4.block_scale.scale_vec::2X: cells 0, 0, 1, 1; IDs 0, 2, 0, 2
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

/// The MXFP4 GEMM with `kind = mxf4`: the same product emitted as MXFP4's own instruction,
/// `tcgen05.mma….kind::mxf4.block_scale.scale_vec::2X` (PTX ISA §9.7.16.10.9), the same
/// descriptor (§9.7.16.4.2, the mxf4/mxf4nvf4 table).
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 128), cdiv(N, 128)))]
pub fn mxf4_kind_mma(
    #[shape(M, KB)] a: Tensor<e2m1x2>,
    #[shape(N, KB)] b: Tensor<e2m1x2>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let b_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([2, 32, 16]);
    let sfb_s = smem::<ue8m0>([2, 32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue8m0>([128, 8]);
    let sfb_t = tmem::<ue8m0>([128, 8]);
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
    for k in 0..cdiv(KB, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
            tma::load(sfa_s[0], sfa.tile(cta.x, 2 * k), full);
            tma::load(sfa_s[1], sfa.tile(cta.x, 2 * k + 1), full);
            tma::load(sfb_s[0], sfb.tile(cta.y, 2 * k), full);
            tma::load(sfb_s[1], sfb.tile(cta.y, 2 * k + 1), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            tcgen05::cp(sfa_t, sfa_s);
            tcgen05::cp(sfb_t, sfb_s);
            // 4 × kind::mxf4nvf4.block_scale.scale_vec::2X: cells 0, 0, 1, 1; IDs 0, 2, 0, 2
            tcgen05::mma(
                acc,
                a_s,
                b_s,
                accumulate = k > 0,
                scale_a = sfa_t,
                scale_b = sfb_t,
                kind = mxf4,
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

/// Which FP4 recipe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fp4 {
    /// UE4M3 factors per 16 values.
    Nv,
    /// UE8M0 factors per 32 values.
    Mx,
}

impl Fp4 {
    fn block(self) -> usize {
        match self {
            Fp4::Nv => 16,
            Fp4::Mx => 32,
        }
    }
    /// A block's factor (its bits, its value) for the block's largest magnitude.
    fn factor(self, amax: f64) -> (u8, f64) {
        match self {
            Fp4::Nv => {
                let s = tirx::ue4m3::for_block(amax, 6.0);
                (s.0, s.to_f64())
            }
            Fp4::Mx => {
                let s = tirx::ue8m0::for_block(amax, 6.0);
                (s.0, s.to_f64())
            }
        }
    }
    fn scale_elem(self) -> tirx::abi::ElemType {
        match self {
            Fp4::Nv => tirx::abi::ElemType::Ue4m3,
            Fp4::Mx => tirx::abi::ElemType::Ue8m0,
        }
    }
}

/// A block-scaled FP4 problem: the packed bytes, the factor images, and the exact
/// dequantised values (element × factor) for the reference.
pub(crate) struct Fp4Problem {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    fmt: Fp4,
    /// A's packed bytes, B's, A's factor image, B's.
    bytes: [Vec<u8>; 4],
    shapes: [[usize; 2]; 2],
    a: Vec<f64>,
    b: Vec<f64>,
}

/// Quantises `rows × k` values (k even) to packed E2M1 with one factor per block of a row.
fn quantise(
    fmt: Fp4,
    x: &[f32],
    rows: usize,
    k: usize,
) -> (Vec<u8>, Vec<f64>, Vec<u8>, [usize; 2]) {
    let (bl, kf) = (fmt.block(), k.div_ceil(fmt.block()));
    let (mut q, mut exact) = (vec![0u8; rows * k / 2], vec![0.0; rows * k]);
    let mut factors = vec![0u8; rows * kf];
    for r in 0..rows {
        for blk in 0..kf {
            let cols = blk * bl..(blk * bl + bl).min(k);
            let amax = cols
                .clone()
                .map(|c| f64::from(x[r * k + c]).abs())
                .fold(0.0, f64::max);
            let (bits, s) = fmt.factor(amax);
            factors[r * kf + blk] = bits;
            for c in cols {
                let e = tirx::e2m1x2::nibble((f64::from(x[r * k + c]) / s) as f32);
                // The lower K in the low nibble (the ISA's .e2m1x2 packing).
                q[(r * k + c) / 2] |= e << (4 * (c % 2));
                exact[r * k + c] = tirx::e2m1x2::nibble_value(e) * s;
            }
        }
    }
    let (img, shape) = tirx::runtime::scale_image(&factors, rows, kf, 0u8);
    (q, exact, img, shape)
}

impl Fp4Problem {
    /// Random values over ±2^±4 so the blocks' factors differ.
    pub(crate) fn new(fmt: Fp4, (m, n, k): (usize, usize, usize), seed: u64) -> Fp4Problem {
        let mut rng = Rng::new(seed);
        let mut vals = |len: usize| -> Vec<f32> {
            (0..len)
                .map(|_| rng.unit() * 2f32.powi(rng.range(0, 9) as i32 - 4))
                .collect()
        };
        let (xa, xb) = (vals(m * k), vals(n * k));
        let (qa, a, ia, sa) = quantise(fmt, &xa, m, k);
        let (qb, b, ib, sb) = quantise(fmt, &xb, n, k);
        Fp4Problem {
            m,
            n,
            k,
            fmt,
            bytes: [qa, qb, ia, ib],
            shapes: [sa, sb],
            a,
            b,
        }
    }

    /// The tensors (A, B, A's factors, B's factors, D poisoned) in a fresh device.
    pub(crate) fn upload(&self, dev: &mut Device) -> [TensorMeta; 5] {
        use tirx::abi::ElemType::{E2m1x2, F32};
        let (m, n, kb) = (self.m, self.n, self.k / 2);
        let sf = self.fmt.scale_elem();
        [
            put(dev, &self.bytes[0], E2m1x2, &[m, kb]),
            put(dev, &self.bytes[1], E2m1x2, &[n, kb]),
            put(dev, &self.bytes[2], sf, &self.shapes[0]),
            put(dev, &self.bytes[3], sf, &self.shapes[1]),
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

/// Runs `art` on `p` in the emulator and compares D with the f64 reference.
fn check_in_emulator(art: &tirx::KernelArtifact, p: &Fp4Problem, seed: u64) {
    let mut dev = Device::new();
    let t = p.upload(&mut dev);
    let what = (p.fmt, p.m, p.n, p.k);
    sim_launch(art, &mut dev, &t, &[], seed).unwrap_or_else(|e| panic!("{what:?}: {e}"));
    let got: Vec<f32> = dev
        .read(t[4].addr, p.m * p.n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut scaled = false;
    for i in 0..p.m {
        for j in 0..p.n {
            let (want, mag) = p.want(i, j);
            let g = f64::from(got[i * p.n + j]);
            // Products exact in f64; one f32 rounding per instruction's accumulation.
            let tol = mag * 2f64.powi(-20) + 1e-30;
            assert!(
                (g - want).abs() <= tol,
                "{what:?} D[{i}][{j}] = {g}, want {want} (±{tol})"
            );
            scaled |= want.abs() > 4.0 * tol + 1e-20;
        }
    }
    assert!(scaled, "{what:?}: every element was zero");
}

/// Tails: M 200 (128 + 72), N 136 (128 + 8), K 416 (256 + 160: a partial K tile; K a
/// multiple of 32 so a row of bytes is a multiple of 16, TMA's rule).
const SHAPES: [(usize, usize, usize); 2] = [(128, 128, 256), (200, 136, 416)];

#[test]
fn the_nvfp4_mma_matches_the_block_scaled_reference_in_the_emulator() {
    for (i, shape) in SHAPES.into_iter().enumerate() {
        let p = Fp4Problem::new(Fp4::Nv, shape, 10 + i as u64);
        check_in_emulator(&nvfp4_mma::KERNEL.artifacts[0], &p, 1 + i as u64);
    }
}

#[test]
fn the_mxfp4_mma_matches_the_block_scaled_reference_in_the_emulator() {
    for (i, shape) in SHAPES.into_iter().enumerate() {
        let p = Fp4Problem::new(Fp4::Mx, shape, 20 + i as u64);
        check_in_emulator(&mxfp4_mma::KERNEL.artifacts[0], &p, 1 + i as u64);
        check_in_emulator(&mxf4_kind_mma::KERNEL.artifacts[0], &p, 1 + i as u64);
    }
}

/// `kind = mxf4` emits `.kind::mxf4` (2X, the same descriptors as `kind::mxf4nvf4 ::2X`:
/// data IDs 0 and 2, UE8M0 at bit 23) and nothing of `kind::mxf4nvf4`.
#[test]
fn kind_mxf4_emits_kind_mxf4() {
    let ptx = mxf4_kind_mma::KERNEL.artifacts[0].ptx;
    let mmas: Vec<&str> = ptx.lines().filter(|l| l.contains("tcgen05.mma")).collect();
    assert_eq!(mmas.len(), 4, "{ptx}");
    let op = "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X";
    assert!(mmas.iter().all(|l| l.contains(op)), "{mmas:#?}");
    assert!(!ptx.contains("mxf4nvf4"));
    let base = (1 << 7) | (1 << 10) | (16 << 17) | (1 << 23) | (1 << 27);
    for id in [0u32, 2] {
        let idesc = base | (id << 4) | (id << 29);
        assert!(ptx.contains(&format!("{idesc};")), "no idesc {idesc:#x}");
    }
}

/// The instructions and descriptors (PTX ISA §9.7.16.4.2, the mxf4/mxf4nvf4 table): E2M1 = 1
/// in atype (7-9) and btype (10-11), N = 128 (16 << 17), UE4M3 = 0 / UE8M0 = 1 at bit 23,
/// M = 128 (1 << 27), the data IDs at 29-30 (A) and 4-5 (B); and the factor addresses, cell
/// `c` of a 128-row tile `4·c` columns on.
#[test]
fn the_fp4_mmas_select_mxf4nvf4_with_their_scale_vectors_ids_and_cells() {
    let base = (1 << 7) | (1 << 10) | (16 << 17) | (1 << 27);
    for (ptx, vec, ue8m0_bit, ids, cps) in [
        (
            nvfp4_mma::KERNEL.artifacts[0].ptx,
            "4X",
            0u32,
            [0u32, 0, 0, 0],
            8,
        ),
        (mxfp4_mma::KERNEL.artifacts[0].ptx, "2X", 1, [0, 2, 0, 2], 4),
    ] {
        let mmas: Vec<&str> = ptx.lines().filter(|l| l.contains("tcgen05.mma")).collect();
        assert_eq!(mmas.len(), 4, "{ptx}");
        let op = format!("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::{vec}");
        assert!(mmas.iter().all(|l| l.contains(&op)), "{mmas:#?}");
        for id in ids {
            let idesc = base | (ue8m0_bit << 23) | (id << 4) | (id << 29);
            assert!(
                ptx.contains(&format!("{idesc};")),
                "no idesc {idesc:#x} in\n{ptx}"
            );
        }
        let n = ptx
            .lines()
            .filter(|l| l.contains("tcgen05.cp.cta_group::1.32x128b.warpx4"))
            .count();
        assert_eq!(n, cps, "{ptx}");
    }
}

#[test]
fn the_fp4_mmas_assemble_for_sm_100a_without_spills() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for (name, art, cps, vec) in [
        ("nvfp4_mma", &nvfp4_mma::KERNEL.artifacts[0], 8, Some(4)),
        ("mxfp4_mma", &mxfp4_mma::KERNEL.artifacts[0], 4, None),
        (
            "mxf4_kind_mma",
            &mxf4_kind_mma::KERNEL.artifacts[0],
            4,
            None,
        ),
    ] {
        let c = check_artifact(name, art).expect("assembles");
        assert!(c.problems.is_empty(), "{name}: {:?}", c.problems);
        assert_eq!(c.spills, 0, "{name}");
        assert_eq!(
            c.sass.get("UTCCP").copied(),
            Some(cps),
            "{name}: {:?}",
            c.sass
        );
        assert_eq!(
            c.sass.get("UTCOMMA").copied(),
            Some(4),
            "{name}: {:?}",
            c.sass
        );
        // ptxas 13 marks the 4X scale vector (`UTCOMMA.4X`); the 2X form is plain `UTCOMMA`.
        assert_eq!(
            c.sass.get("UTCOMMA.4X").copied(),
            vec,
            "{name}: {:?}",
            c.sass
        );
    }
}
