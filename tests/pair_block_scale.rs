//! The CTA pair's block-scaled MMA in the language (`tcgen05::mma(..., scale_a = …, scale_b
//! = …, cta_group = 2)`, PTX ISA §9.7.16.10.7 with §9.7.16.5) and the pair's copy of the
//! factors into tensor memory (`tcgen05::cp(t, s, cta_group = 2)`, §9.7.16.9.2: "copied into
//! the Tensor Memory of both the current and the peer CTAs"). A 2×1 cluster computes a
//! 256 × 128 tile: each CTA loads its 128 rows of A, its 64 rows of B, the factors of its
//! own 128 rows of A and the factors of all 128 of the pair's B rows into its own shared
//! memory; the even CTA's thread copies both CTAs' factors into their tensor memories and
//! issues the pair's MMAs. Where the peer's factors live the ISA does not say; tirx follows
//! CUTLASS's 2-SM block-scaled mainloop (`include/cutlass/gemm/collective/
//! sm100_blockscaled_mma_warpspecialized.hpp`: SFA partitioned per CTA rank like A, SFB
//! loaded whole by each CTA, both copied by the leader's `SM100_UTCCP_4x32dp128bit_2cta`).
//!
//! MXFP8 (`kind::mxf8f6f4`), MXFP4 and NVFP4 (`kind::mxf4nvf4`, 2X and 4X) run in the
//! emulator against an f64 reference on random data and random factors, both CTAs' halves
//! of D checked; a factor planted wrong in the odd CTA's A factors (or in B's) makes exactly
//! the rows (columns) it scales disagree. The PTX is assembled by ptxas for sm_100a with the
//! 2-CTA MMA and copy in the SASS (no Blackwell GPU here).

use tirx::prelude::*;
use tirx::runtime::TensorMeta;
use tirx_kernels::check::check_artifact;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::block_scale_fp4::{Fp4, Fp4Problem};
use super::block_scale_lang::Mx;
use super::sim_exec::sim_launch;

/// D = (A·sA)(B·sB)ᵀ in MXFP8 over the CTA pair: A M×K and B N×K of E4M3, UE8M0 factors
/// (one per 32 K) as `scale_image`s, f32 accumulate in TMEM, f32 out. CTA `x` holds rows
/// `128x..` of A and D; the pair `x / 2` shares the N tile `cta.y` (128 columns), CTA rank
/// `r` loading B rows `128y + 64r ..`.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 256), cdiv(N, 128)),
)]
pub fn pair_mxfp8(
    #[shape(M, K)] a: Tensor<e4m3>,
    #[shape(N, K)] b: Tensor<e4m3>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e4m3>([64, 128], swizzle = B128); // this CTA's half of B's rows
    let sfa_s = smem::<ue8m0>([32, 16]); // this CTA's 128 rows of A × 4 factors
    let sfb_s = smem::<ue8m0>([32, 16]); // all 128 of the pair's B rows × 4 factors
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue8m0>([128, 4]);
    let sfb_t = tmem::<ue8m0>([128, 4]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(sfa_t, cta_group = 2);
        tcgen05::alloc(sfb_t, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    for k in 0..cdiv(K, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(2 * cta.y + cta_rank, k), full);
            tma::load(sfa_s, sfa.tile(cta.x, k), full);
            tma::load(sfb_s, sfb.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        // Both CTAs' operands and factors have landed before the even CTA's copies and MMAs.
        cluster_sync();
        #[scope(warp = 1, elect)]
        {
            // Each CTA's factors from its own shared memory into its own TMEM.
            tcgen05::cp(sfa_t, sfa_s, cta_group = 2);
            tcgen05::cp(sfb_t, sfb_s, cta_group = 2);
            tcgen05::mma(
                acc,
                a_s,
                b_s,
                accumulate = k > 0,
                scale_a = sfa_t,
                scale_b = sfb_t,
                cta_group = 2,
            );
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
        tcgen05::dealloc(sfa_t, cta_group = 2);
        tcgen05::dealloc(sfb_t, cta_group = 2);
    }
}

/// The same pair GEMM in FP4 (`e2m1x2`, 256 values a 128-byte row): NVFP4 (UE4M3 factors
/// per 16 values, `scale_vec::4X`, 16 factors a row: 4 cells) and MXFP4 (UE8M0 per 32,
/// `::2X`, 8 factors: 2 cells); K tile `k` loads cells `C·k …`.
#[tile_kernel(
    target = sm_100a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (2 * cdiv(M, 256), cdiv(N, 128)),
    configs(nvfp4 = (SF = ue4m3, F = 16, C = 4), mxfp4 = (SF = ue8m0, F = 8, C = 2)),
)]
pub fn pair_fp4(
    #[shape(M, KB)] a: Tensor<e2m1x2>,
    #[shape(N, KB)] b: Tensor<e2m1x2>,
    #[shape(MS, KS)] sfa: Tensor<SF>,
    #[shape(NS, KS)] sfb: Tensor<SF>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let b_s = smem::<e2m1x2>([64, 128], swizzle = B128);
    let sfa_s = smem::<SF>([C, 32, 16]);
    let sfb_s = smem::<SF>([C, 32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<SF>([128, F]);
    let sfb_t = tmem::<SF>([128, F]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(sfa_t, cta_group = 2);
        tcgen05::alloc(sfb_t, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    for k in 0..cdiv(KB, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(2 * cta.y + cta_rank, k), full);
            for c in 0..C {
                tma::load(sfa_s[c], sfa.tile(cta.x, C * k + c), full);
                tma::load(sfb_s[c], sfb.tile(cta.y, C * k + c), full);
            }
        }
        full.wait(k % 2);
        cluster_sync();
        #[scope(warp = 1, elect)]
        {
            tcgen05::cp(sfa_t, sfa_s, cta_group = 2);
            tcgen05::cp(sfb_t, sfb_s, cta_group = 2);
            tcgen05::mma(
                acc,
                a_s,
                b_s,
                accumulate = k > 0,
                scale_a = sfa_t,
                scale_b = sfb_t,
                cta_group = 2,
            );
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
        tcgen05::dealloc(sfa_t, cta_group = 2);
        tcgen05::dealloc(sfb_t, cta_group = 2);
    }
}

/// A problem: its tensors, its shape and D's reference (value, Σ|products|).
pub(crate) trait Problem {
    fn upload(&self, dev: &mut Device) -> [TensorMeta; 5];
    fn mn(&self) -> (usize, usize);
    fn want(&self, i: usize, j: usize) -> (f64, f64);
}

impl Problem for Mx {
    fn upload(&self, dev: &mut Device) -> [TensorMeta; 5] {
        Mx::upload(self, dev)
    }
    fn mn(&self) -> (usize, usize) {
        (self.m, self.n)
    }
    fn want(&self, i: usize, j: usize) -> (f64, f64) {
        Mx::want(self, i, j)
    }
}

impl Problem for Fp4Problem {
    fn upload(&self, dev: &mut Device) -> [TensorMeta; 5] {
        Fp4Problem::upload(self, dev)
    }
    fn mn(&self) -> (usize, usize) {
        (self.m, self.n)
    }
    fn want(&self, i: usize, j: usize) -> (f64, f64) {
        Fp4Problem::want(self, i, j)
    }
}

/// A factor to plant wrong before the launch: (A's or B's image, row, factor column).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plant {
    A(usize, usize),
    B(usize, usize),
}

/// Bumps `pl`'s factor by one code in the uploaded `scale_image` of A (`t[2]`) or B (`t[3]`),
/// an image of 4 factors per 16-byte cell column (UE8M0 per 32 K, or UE4M3 per 16 K).
pub(crate) fn plant(dev: &mut Device, t: &[TensorMeta; 5], pl: Plant) {
    plant_by(dev, t, pl, 1);
}

/// [`plant`] by `bump` codes (8 doubles a UE4M3 factor: one step of its exponent).
pub(crate) fn plant_by(dev: &mut Device, t: &[TensorMeta; 5], pl: Plant, bump: u8) {
    let (img, r, f) = match pl {
        Plant::A(r, f) => (&t[2], r, f),
        Plant::B(r, f) => (&t[3], r, f),
    };
    // Row r's factor f in the scale_image tensor (`tirx::runtime::image_offset`).
    let o = tirx::runtime::image_offset(r % 128, f % 4);
    let (row, byte) = (32 * (r / 128) + o / 16, 16 * (f / 4) + o % 16);
    let at = img.addr + (row * img.shape[1] + byte) as u64;
    let old = dev.read(at, 1).expect("factor")[0];
    dev.write(at, &[old.wrapping_add(bump)]).expect("plant");
}

/// Runs `art` on `p` in the emulator (with `planted`'s factor bumped by one code) and returns
/// the elements of D that disagree with the reference, and whether any element was nonzero.
fn mismatches(
    art: &tirx::KernelArtifact,
    p: &dyn Problem,
    planted: Option<Plant>,
    seed: u64,
) -> (Vec<(usize, usize)>, bool) {
    let mut dev = Device::new();
    let t = p.upload(&mut dev);
    if let Some(pl) = planted {
        plant(&mut dev, &t, pl);
    }
    let (m, n) = p.mn();
    sim_launch(art, &mut dev, &t, &[], seed).unwrap_or_else(|e| panic!("{m}×{n}: {e}"));
    let got: Vec<f32> = dev
        .read(t[4].addr, m * n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let (mut bad, mut nonzero) = (Vec::new(), false);
    for i in 0..m {
        for j in 0..n {
            let (want, mag) = p.want(i, j);
            let g = f64::from(got[i * n + j]);
            // Products exact in f64; one f32 rounding per instruction's accumulation.
            let tol = mag * 2f64.powi(-20) + 1e-30;
            if (g - want).abs() > tol {
                if bad.is_empty() {
                    eprintln!("first mismatch D[{i}][{j}] = {g}, want {want} (±{tol})");
                }
                bad.push((i, j));
            }
            nonzero |= want.abs() > 4.0 * tol + 1e-20;
        }
    }
    (bad, nonzero)
}

/// Checks `art` on `p`: D matches, and a factor planted wrong in the odd CTA's A rows
/// (row 128 + 37) or in B's (row 70: the odd CTA's half of B, read by both CTAs) makes
/// exactly the row (column) it scales disagree, in both CTAs' halves for B.
fn check_pair(art: &tirx::KernelArtifact, p: &dyn Problem, seed: u64) {
    let (m, n) = p.mn();
    let (bad, nonzero) = mismatches(art, p, None, seed);
    assert!(
        bad.is_empty(),
        "{m}×{n}: D disagrees at {:?}…",
        &bad[..bad.len().min(8)]
    );
    assert!(nonzero, "{m}×{n}: every element was zero");
    let (bad, _) = mismatches(art, p, Some(Plant::A(128 + 37, 1)), seed);
    assert!(
        !bad.is_empty(),
        "{m}×{n}: the planted A factor went unnoticed"
    );
    assert!(bad.iter().all(|&(i, _)| i == 128 + 37), "{bad:?}");
    let (bad, _) = mismatches(art, p, Some(Plant::B(70, 0)), seed);
    assert!(bad.iter().all(|&(_, j)| j == 70), "{bad:?}");
    assert!(
        bad.iter().any(|&(i, _)| i < 128) && bad.iter().any(|&(i, _)| (128..256).contains(&i)),
        "{m}×{n}: the planted B factor must change both CTAs' halves: {bad:?}"
    );
}

#[test]
fn the_pairs_mxfp8_mma_matches_the_scaled_reference_in_the_emulator() {
    let art = &pair_mxfp8::KERNEL.artifacts[0];
    // A tail in K (208 = 128 + 80) and two pairs along M with a partial N tile (136).
    for (shape, seed) in [((256, 128, 128), 1), ((512, 136, 208), 2)] {
        check_pair(art, &Mx::new(shape, seed), seed);
    }
}

#[test]
fn the_pairs_fp4_mmas_match_the_scaled_reference_in_the_emulator() {
    for (art, fmt) in pair_fp4::KERNEL.artifacts.iter().zip([Fp4::Nv, Fp4::Mx]) {
        for (shape, seed) in [((256, 128, 256), 3), ((256, 136, 416), 4)] {
            check_pair(art, &Fp4Problem::new(fmt, shape, seed), seed);
        }
    }
}

#[test]
fn the_pair_emits_cta_group_2_copies_and_scaled_mmas() {
    let ptx = pair_mxfp8::KERNEL.artifacts[0].ptx;
    let count = |s: &str| ptx.lines().filter(|l| l.contains(s)).count();
    assert_eq!(count("tcgen05.cp.cta_group::2.32x128b.warpx4"), 2, "{ptx}");
    assert_eq!(
        count("tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X"),
        4,
        "{ptx}"
    );
    assert_eq!(count("tcgen05.cp.cta_group::1"), 0);
    // The descriptor of K-step j: E4M3 × E4M3, N = 128 (bits 17-22), UE8M0 (bit 23), the
    // pair's M = 256 (2 << 27), data ID j for A (bits 29-30) and B (bits 4-5).
    for j in 0..4u32 {
        let idesc = (j << 4) | (16 << 17) | (1 << 23) | (2 << 27) | (j << 29);
        assert!(ptx.contains(&format!("{idesc};")), "no idesc {idesc:#x}");
    }
    for (art, vec) in pair_fp4::KERNEL.artifacts.iter().zip(["4X", "2X"]) {
        let want = format!("tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::{vec}");
        assert_eq!(art.ptx.lines().filter(|l| l.contains(&want)).count(), 4);
    }
}

#[test]
fn the_pairs_scaled_mma_assembles_with_the_2cta_forms() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    // (artifact, the 2-CTA MMA's SASS, the 2-CTA copies: 2 factor tiles × their cells).
    let arts = [
        (&pair_mxfp8::KERNEL.artifacts[0], "UTCQMMA.2CTA", 2),
        (&pair_fp4::KERNEL.artifacts[0], "UTCOMMA.2CTA.4X", 8),
        (&pair_fp4::KERNEL.artifacts[1], "UTCOMMA.2CTA", 4),
    ];
    for (art, mma, cps) in arts {
        let c = check_artifact("pair_block_scale", art).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", art.config, c.problems);
        assert_eq!(c.spills, 0, "{}", art.config);
        let n = |op: &str| c.sass.get(op).copied();
        assert_eq!(n(mma), Some(4), "{}: {:?}", art.config, c.sass);
        assert_eq!(n("UTCCP.T.S.2CTA.4x32dp128bit"), Some(cps), "{:?}", c.sass);
        assert_eq!(n("UTCBAR.2CTA.MULTICAST"), Some(1), "{:?}", c.sass);
    }
}

/// The text form carries the pair's copy (`copy … cta_group 2`), the pair's scaled MMA
/// (`scale …, … cta_group 2`) and `kind = mxf4` (`scale …, … mxf4`): the IR parses back to
/// the same text after every pass and recompiles to the PTX the macro emitted.
#[test]
fn the_pairs_scaled_kernels_round_trip_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let arts = [
        &pair_mxfp8::KERNEL.artifacts[0],
        &pair_fp4::KERNEL.artifacts[1],
        &super::block_scale_fp4::mxf4_kind_mma::KERNEL.artifacts[0],
    ];
    for art in arts {
        let m = parse_module(art.ir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.to_string(), art.ir);
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
        for s in &snaps {
            let again = parse_module(&s.text).unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
            assert_eq!(again.to_string(), s.text, "after {}", s.pass);
        }
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
    }
    assert!(pair_mxfp8::KERNEL.artifacts[0].ir.contains("cta_group 2"));
    assert!(
        super::block_scale_fp4::mxf4_kind_mma::KERNEL.artifacts[0]
            .ir
            .contains(" mxf4")
    );
}
