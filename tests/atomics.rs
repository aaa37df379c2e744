//! Atomic reductions into global memory (issue #30 item 3), run in the emulator against a Rust
//! reference on random data with tails in both dimensions:
//!
//! - split-K: `S` CTAs per output tile each `red.add.f32` their partial tile into `y`
//!   (`atomic::add(y.tile(i, j), t, scope = gpu)`), over `y`'s random starting values — four
//!   columns a thread as one `red.add.v4.f32` (`REDG.E.ADD.F32x4` in SASS), the tails
//!   element by element;
//! - column sums: each CTA reduces its rows (`reduce_sum(…, axis = 0)`, a statistic held by
//!   every thread of its column) and adds the sums once per column into a vector;
//! - a histogram with slot allocation: each CTA counts its tokens per bin (one-hot columns
//!   summed) and `atom.add`s the counts into the histogram, the old values being the CTA's
//!   first slot in each bin (counting sort, MoE routing) — every bin's slots tile `[0, total)`
//!   exactly, whatever order the CTAs ran in;
//! - bf16 pairs: `red.add.noftz.v4.bf16x2` (eight columns a thread), rounded as the ISA
//!   defines (nearest even);
//! - a TMA reduce-add of f32 tiles (`tma::reduce_add`, `cp.reduce.async.bulk.tensor`), from
//!   several CTAs into one tile, and a TMA reduce-max of i32 tiles.
//!
//! The float sums are of dyadic values whose partial sums are exact in f32, so every order of
//! the atomics gives the same bits and the comparison is exact. The emulator applies each
//! lane's atomic in a seeded order; several seeds run.

use half::bf16;
use tirx::prelude::*;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::emu_io::{launch_seeded, poisoned, read32, words32};
use super::sim_exec::EMULATED;

/// Split-K: partial `s` of output tile `(i, j)` is `p[s]`'s tile, added into `y`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64), S))]
pub fn splitk_red(#[shape(S, M, N)] p: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, p.tile(cta.z, cta.x, cta.y));
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu);
}

/// Column sums of `x` into the vector `cs`, 32 rows per CTA.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 32)))]
pub fn column_sums(#[shape(M, N)] x: Tensor<f32>, #[shape(N)] cs: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.y, cta.x));
    let s = reduce_sum(t, axis = 0);
    atomic::add(cs.tile(cta.x), s, scope = gpu, sem = release);
}

/// Per-bin counts of 32 tokens per CTA (`bins[r]` in `[0, 64)`), added into `hist`; the old
/// values (this CTA's first slot per bin) go to row `cta.x` of `first`. 64 threads, one
/// column each, so the counts are held once (old values go to one thread per element).
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 32), 1))]
pub fn histogram_slots(
    #[shape(M, B)] onehot: Tensor<i32>,
    #[shape(B)] hist: Tensor<i32>,
    #[shape(G, B)] first: Tensor<i32>,
) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 1));
    copy(t, onehot.tile(cta.x, 0));
    let counts = reduce_sum(t, axis = 0);
    let base = regs::<i32>([1, 64], layout = stat(t, axis = 0));
    atomic::add(hist.tile(0), counts, scope = gpu, sem = acq_rel, old = base);
    copy(first.tile(cta.x, 0), base);
}

/// bf16 pairs: `y += x` tile by tile, twice (two CTAs per tile).
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64), 2))]
pub fn bf16_red(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<bf16>([32, 64], layout = blocked(vec = 8));
    copy(t, x.tile(cta.x, cta.y));
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu);
}

/// Split-K through TMA: each CTA's partial tile goes through shared memory and is reduced
/// into `y` by `cp.reduce.async.bulk.tensor … .add`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32), S))]
pub fn splitk_tma_reduce(#[shape(S, M, N)] p: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let s = smem::<f32>([32, 32]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(s, p.tile(cta.z, cta.y, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::reduce_add(y.tile(cta.y, cta.x), s);
        tma::commit_group();
        tma::wait_group(0);
    }
}

/// The elementwise max of `S` bf16 tiles and `y`'s own, by TMA.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32), S))]
pub fn max_tma_reduce(#[shape(S, M, N)] p: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let s = smem::<bf16>([32, 32]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(s, p.tile(cta.z, cta.y, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::reduce_max(y.tile(cta.y, cta.x), s);
        tma::commit_group();
        tma::wait_group(0);
    }
}

/// Split-K with `scope = cta`: atomic within each CTA only, so two CTAs adding into one tile
/// race (the emulator reports it).
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64), S))]
pub fn splitk_cta_scope(#[shape(S, M, N)] p: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, p.tile(cta.z, cta.x, cta.y));
    atomic::add(y.tile(cta.x, cta.y), t, scope = cta);
}

/// One CTA stores the tile plainly while another adds into it: a race.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1, 2))]
pub fn store_races_atomic(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(0, 0));
    if cta.z == 0 {
        copy(y.tile(0, 0), t);
    }
    if cta.z == 1 {
        atomic::add(y.tile(0, 0), t, scope = gpu);
    }
}

pub(crate) const M: usize = 45;
pub(crate) const N: usize = 70;
pub(crate) const S: usize = 3;

/// Random multiples of 1/256 in (-4, 4): sums of a few are exact in f32 in any order.
pub(crate) fn dyadic(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.unit() * 1024.0).round() / 256.0)
        .collect()
}

#[test]
fn splitk_red_add_f32_from_several_ctas() {
    for seed in [1, 2, 3] {
        let mut dev = Device::new();
        let mut rng = Rng::new(10 + seed);
        let p = dyadic(&mut rng, S * M * N);
        let y0 = dyadic(&mut rng, M * N);
        let pt = put(
            &mut dev,
            &words32(&p, f32::to_bits),
            ElemType::F32,
            &[S, M, N],
        );
        let yt = put(
            &mut dev,
            &words32(&y0, f32::to_bits),
            ElemType::F32,
            &[M, N],
        );
        launch_seeded(
            &splitk_red::KERNEL.artifacts[0],
            &mut dev,
            &[pt, yt.clone()],
            seed,
        );
        let got = read32(&dev, &yt, M * N);
        for i in 0..M * N {
            let want = y0[i] + (0..S).map(|s| p[s * M * N + i]).sum::<f32>();
            assert_eq!(f32::from_bits(got[i]), want, "y at ({}, {})", i / N, i % N);
        }
    }
}

#[test]
fn column_sums_add_each_column_once() {
    let mut dev = Device::new();
    let mut rng = Rng::new(21);
    let x = dyadic(&mut rng, M * N);
    let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, N]);
    let cst = put(&mut dev, &vec![0; N * 4], ElemType::F32, &[N]);
    launch_seeded(
        &column_sums::KERNEL.artifacts[0],
        &mut dev,
        &[xt, cst.clone()],
        5,
    );
    let got = read32(&dev, &cst, N);
    for c in 0..N {
        let want: f32 = (0..M).map(|r| x[r * N + c]).sum();
        assert_eq!(f32::from_bits(got[c]), want, "column {c}");
    }
}

#[test]
fn histogram_atom_gives_each_cta_its_slots() {
    const B: usize = 64;
    const G: usize = M.div_ceil(32);
    for seed in [7, 8] {
        let mut dev = Device::new();
        let mut rng = Rng::new(seed);
        let bins: Vec<usize> = (0..M)
            .map(|_| ((rng.unit() + 1.0) * 0.5 * 40.0) as usize % B)
            .collect();
        let onehot: Vec<i32> = (0..M * B)
            .map(|i| i32::from(bins[i / B] == i % B))
            .collect();
        let h0: Vec<i32> = (0..B).map(|b| (b as i32 * 7) % 5).collect();
        let ot = put(
            &mut dev,
            &words32(&onehot, |v| v as u32),
            ElemType::I32,
            &[M, B],
        );
        let ht = put(&mut dev, &words32(&h0, |v| v as u32), ElemType::I32, &[B]);
        let ft = poisoned(&mut dev, ElemType::I32, &[G, B]);
        launch_seeded(
            &histogram_slots::KERNEL.artifacts[0],
            &mut dev,
            &[ot, ht.clone(), ft.clone()],
            seed,
        );
        let hist: Vec<i32> = read32(&dev, &ht, B).iter().map(|&w| w as i32).collect();
        let first: Vec<i32> = read32(&dev, &ft, G * B).iter().map(|&w| w as i32).collect();
        for b in 0..B {
            let count = |g: usize| {
                (32 * g..(32 * g + 32).min(M))
                    .filter(|&r| bins[r] == b)
                    .count() as i32
            };
            let total: i32 = (0..G).map(count).sum();
            assert_eq!(hist[b], h0[b] + total, "bin {b}");
            // The CTAs' slots, in the order their atomics ran, tile [h0, h0 + total).
            let mut runs: Vec<(i32, i32)> = (0..G).map(|g| (first[g * B + b], count(g))).collect();
            runs.sort();
            let mut at = h0[b];
            for (start, n) in runs {
                // A CTA with no token in the bin adds 0: its slot is any value up to the end.
                if n > 0 {
                    assert_eq!(start, at, "bin {b}: slots {first:?}");
                }
                at += n;
            }
        }
    }
}

#[test]
fn bf16_pairs_add_with_the_isa_rounding() {
    let mut dev = Device::new();
    let mut rng = Rng::new(31);
    let x: Vec<bf16> = (0..M * N)
        .map(|_| bf16::from_f32(rng.unit() * 3.0))
        .collect();
    let y0: Vec<bf16> = (0..M * N)
        .map(|_| bf16::from_f32(rng.unit() * 100.0))
        .collect();
    let half_words = |v: &[bf16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    let xt = put(&mut dev, &half_words(&x), ElemType::Bf16, &[M, N]);
    let yt = put(&mut dev, &half_words(&y0), ElemType::Bf16, &[M, N]);
    launch_seeded(
        &bf16_red::KERNEL.artifacts[0],
        &mut dev,
        &[xt, yt.clone()],
        4,
    );
    let got = dev.read(yt.addr, M * N * 2).expect("y");
    for i in 0..M * N {
        // Two adds of the same x, each rounded to nearest even (the f64 sum of two bf16 is
        // exact, so rounding it once is the ISA's rounding).
        let once = bf16::from_f64(y0[i].to_f64() + x[i].to_f64());
        let want = bf16::from_f64(once.to_f64() + x[i].to_f64());
        let g = bf16::from_le_bytes([got[2 * i], got[2 * i + 1]]);
        assert_eq!(g.to_bits(), want.to_bits(), "y at ({}, {})", i / N, i % N);
    }
}

#[test]
fn tma_reduce_add_and_max_from_several_ctas() {
    // TMA needs 16-byte row strides: 72 columns (a tail of 8 past the 64 of two tiles).
    const NT: usize = 72;
    let mut dev = Device::new();
    let mut rng = Rng::new(41);
    let p = dyadic(&mut rng, S * M * NT);
    let y0 = dyadic(&mut rng, M * NT);
    let pt = put(
        &mut dev,
        &words32(&p, f32::to_bits),
        ElemType::F32,
        &[S, M, NT],
    );
    let yt = put(
        &mut dev,
        &words32(&y0, f32::to_bits),
        ElemType::F32,
        &[M, NT],
    );
    launch_seeded(
        &splitk_tma_reduce::KERNEL.artifacts[0],
        &mut dev,
        &[pt, yt.clone()],
        6,
    );
    let got = read32(&dev, &yt, M * NT);
    for i in 0..M * NT {
        let want = y0[i] + (0..S).map(|s| p[s * M * NT + i]).sum::<f32>();
        assert_eq!(
            f32::from_bits(got[i]),
            want,
            "y at ({}, {})",
            i / NT,
            i % NT
        );
    }

    let q: Vec<bf16> = (0..S * M * NT)
        .map(|_| bf16::from_f32(rng.unit() * 1e3))
        .collect();
    let z0: Vec<bf16> = (0..M * NT)
        .map(|_| bf16::from_f32(rng.unit() * 1e3))
        .collect();
    let hw = |v: &[bf16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    let qt = put(&mut dev, &hw(&q), ElemType::Bf16, &[S, M, NT]);
    let zt = put(&mut dev, &hw(&z0), ElemType::Bf16, &[M, NT]);
    launch_seeded(
        &max_tma_reduce::KERNEL.artifacts[0],
        &mut dev,
        &[qt, zt.clone()],
        7,
    );
    let got = dev.read(zt.addr, M * NT * 2).expect("z");
    for i in 0..M * NT {
        let want = (0..S)
            .map(|s| q[s * M * NT + i])
            .fold(z0[i], |a, b| if b > a { b } else { a });
        let g = bf16::from_le_bytes([got[2 * i], got[2 * i + 1]]);
        assert_eq!(g.to_bits(), want.to_bits(), "z at ({}, {})", i / NT, i % NT);
    }
}

#[test]
fn the_atomic_kernels_assemble_for_sm_90a() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    let kernels = [
        &splitk_red::KERNEL,
        &column_sums::KERNEL,
        &histogram_slots::KERNEL,
        &bf16_red::KERNEL,
        &splitk_tma_reduce::KERNEL,
        &max_tma_reduce::KERNEL,
    ];
    // A thread's run of 4 f32 columns is one vector `red` (§9.7.13.6, sm_90), the masked
    // edges element by element; a run of 8 bf16 columns one vector of 4 pairs.
    let a = &splitk_red::KERNEL.artifacts[0];
    for s in [
        "red.relaxed.gpu.global.add.v4.f32",
        "red.relaxed.gpu.global.add.f32",
    ] {
        assert!(a.ptx.contains(s), "splitk_red lacks {s}");
    }
    let a = &column_sums::KERNEL.artifacts[0];
    assert!(a.ptx.contains("red.release.gpu.global.add.v4.f32"));
    let a = &bf16_red::KERNEL.artifacts[0];
    for s in [
        "red.relaxed.gpu.global.add.noftz.v4.bf16x2",
        "red.relaxed.gpu.global.add.noftz.bf16 ",
    ] {
        assert!(a.ptx.contains(s), "bf16_red lacks {s}");
    }
    let a = &histogram_slots::KERNEL.artifacts[0];
    assert!(a.ptx.contains("atom.acq_rel.gpu.global.add.s32"));
    let a = &splitk_tma_reduce::KERNEL.artifacts[0];
    assert!(
        a.ptx
            .contains("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group")
    );
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in kernels {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            // A single 16-bit atomic (the edges of a bf16 tile) is a CAS loop in SASS (ptxas
            // emulates `red.add.noftz.bf16`; the pairs are `REDG.E.ADD.BF16x2`), whose
            // registers spill a little in this kernel's edge path.
            let problems: Vec<_> = c
                .problems
                .iter()
                .filter(|p| k.name != "bf16_red" || !(p.contains("spill") || p.contains("stack")))
                .collect();
            assert!(problems.is_empty(), "{}: {problems:?}", k.name);
            // The vector red is one 128-bit reduction in SASS.
            if k.name == "splitk_red" {
                assert!(
                    c.sass.keys().any(|op| op.starts_with("REDG.E.ADD.F32x4")),
                    "{:?}",
                    c.sass
                );
            }
            if k.name == "bf16_red" {
                assert!(
                    c.sass.keys().any(|op| op.starts_with("RED")),
                    "{:?}",
                    c.sass
                );
            }
        }
    }
}

#[test]
fn the_emulator_reports_atomics_that_race() {
    let mut dev = Device::new();
    let mut rng = Rng::new(51);
    let p = dyadic(&mut rng, S * M * N);
    let pt = put(
        &mut dev,
        &words32(&p, f32::to_bits),
        ElemType::F32,
        &[S, M, N],
    );
    let yt = put(&mut dev, &vec![0; M * N * 4], ElemType::F32, &[M, N]);
    let art = &splitk_cta_scope::KERNEL.artifacts[0];
    let sig = (art.signature)();
    let err = simulate::launch(art.ptx, &sig, &mut dev, (&[pt, yt], &[]), 1, &EMULATED)
        .expect_err("cta-scope atomics from two CTAs race");
    let msg = err.to_string();
    assert!(msg.contains("scope = gpu"), "{msg}");

    let xt = put(
        &mut dev,
        &words32(&p[..M * N], f32::to_bits),
        ElemType::F32,
        &[M, N],
    );
    let yt = put(&mut dev, &vec![0; M * N * 4], ElemType::F32, &[M, N]);
    let art = &store_races_atomic::KERNEL.artifacts[0];
    let sig = (art.signature)();
    let err = simulate::launch(art.ptx, &sig, &mut dev, (&[xt, yt], &[]), 1, &EMULATED)
        .expect_err("a plain store and an atomic from two CTAs race");
    let msg = err.to_string();
    assert!(msg.contains("an atomic and a plain store"), "{msg}");
}
