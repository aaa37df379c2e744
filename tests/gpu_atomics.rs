//! Atomic reductions into global memory on the GPU (feature `gpu`): the kernels of
//! `tests/atomics.rs` — split-K from three CTAs per tile (`red.add.v4.f32` runs, `.f32` at
//! the edges), column sums of a replicated statistic added once, a histogram whose `atom.add`
//! old values are each CTA's first slot per bin, bf16 runs (`red.add.noftz.v4.bf16x2`), and
//! the TMA reduce-store
//! (`cp.reduce.async.bulk.tensor` `.add` on f32, `.max` on bf16) — on hardware against the
//! same Rust references, on random data with odd sizes (45 rows; 70 or 72 columns) and
//! poisoned outputs where the kernel overwrites them (the accumulated outputs start from
//! random values instead).

use half::bf16;
use tirx::Runtime;
use tirx_kernels::reference::Rng;

use super::atomics::{
    M, N, S, bf16_red, column_sums, dyadic, histogram_slots, max_tma_reduce, splitk_red,
    splitk_tma_reduce,
};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

#[test]
fn splitk_red_add_f32_on_the_gpu() {
    let rt = rt();
    let art = tirx::select(
        splitk_red::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(101);
    let p = dyadic(&mut rng, S * M * N);
    let y0 = dyadic(&mut rng, M * N);
    let pt = rt.upload(&p, &[S, M, N]).unwrap();
    let yt = rt.upload(&y0, &[M, N]).unwrap();
    rt.launch(art, &[pt.view(), yt.view()]).unwrap();
    let got = rt.download(&yt).unwrap();
    for i in 0..M * N {
        let want = y0[i] + (0..S).map(|s| p[s * M * N + i]).sum::<f32>();
        assert_eq!(got[i], want, "y at ({}, {})", i / N, i % N);
    }
}

#[test]
fn column_sums_on_the_gpu() {
    let rt = rt();
    let art = tirx::select(
        column_sums::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(102);
    let x = dyadic(&mut rng, M * N);
    let c0 = dyadic(&mut rng, N);
    let xt = rt.upload(&x, &[M, N]).unwrap();
    let ct = rt.upload(&c0, &[N]).unwrap();
    rt.launch(art, &[xt.view(), ct.view()]).unwrap();
    let got = rt.download(&ct).unwrap();
    for c in 0..N {
        let want = c0[c] + (0..M).map(|r| x[r * N + c]).sum::<f32>();
        assert_eq!(got[c], want, "column {c}");
    }
}

#[test]
fn histogram_slots_on_the_gpu() {
    const B: usize = 64;
    const MH: usize = 301;
    const G: usize = MH.div_ceil(32);
    let rt = rt();
    let art = tirx::select(
        histogram_slots::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(103);
    // A skewed distribution: most tokens in a few bins, so CTAs contend.
    let bins: Vec<usize> = (0..MH)
        .map(|_| {
            let u = (rng.unit() + 1.0) * 0.5;
            ((u * u * u) * B as f32) as usize % B
        })
        .collect();
    let onehot: Vec<i32> = (0..MH * B)
        .map(|i| i32::from(bins[i / B] == i % B))
        .collect();
    let h0: Vec<i32> = (0..B).map(|b| (b as i32 * 7) % 5 - 2).collect();
    let ot = rt.upload(&onehot, &[MH, B]).unwrap();
    let ht = rt.upload(&h0, &[B]).unwrap();
    let mut ft = rt.zeros::<i32>(&[G, B]).unwrap();
    rt.poison(&mut ft).unwrap();
    rt.launch(art, &[ot.view(), ht.view(), ft.view()]).unwrap();
    let hist = rt.download(&ht).unwrap();
    let first = rt.download(&ft).unwrap();
    for b in 0..B {
        let count = |g: usize| {
            (32 * g..(32 * g + 32).min(MH))
                .filter(|&r| bins[r] == b)
                .count() as i32
        };
        let total: i32 = (0..G).map(count).sum();
        assert_eq!(hist[b], h0[b] + total, "bin {b}");
        let mut runs: Vec<(i32, i32)> = (0..G).map(|g| (first[g * B + b], count(g))).collect();
        runs.sort();
        let mut at = h0[b];
        for (start, n) in runs {
            // CTAs with no token in the bin add 0: their slot is any value in [h0, end].
            if n > 0 {
                assert_eq!(start, at, "bin {b}: runs of the CTAs");
            }
            at += n;
        }
    }
}

#[test]
fn bf16_pairs_on_the_gpu() {
    let rt = rt();
    let art = tirx::select(bf16_red::KERNEL.artifacts, "default", rt.target().unwrap()).unwrap();
    let mut rng = Rng::new(104);
    let x: Vec<bf16> = (0..M * N)
        .map(|_| bf16::from_f32(rng.unit() * 3.0))
        .collect();
    let y0: Vec<bf16> = (0..M * N)
        .map(|_| bf16::from_f32(rng.unit() * 100.0))
        .collect();
    let xt = rt.upload(&x, &[M, N]).unwrap();
    let yt = rt.upload(&y0, &[M, N]).unwrap();
    rt.launch(art, &[xt.view(), yt.view()]).unwrap();
    let got = rt.download(&yt).unwrap();
    for i in 0..M * N {
        let once = bf16::from_f64(y0[i].to_f64() + x[i].to_f64());
        let want = bf16::from_f64(once.to_f64() + x[i].to_f64());
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "y at ({}, {})",
            i / N,
            i % N
        );
    }
}

#[test]
fn tma_reduce_add_and_max_on_the_gpu() {
    const NT: usize = 72;
    let rt = rt();
    let target = rt.target().unwrap();
    let mut rng = Rng::new(105);
    let p = dyadic(&mut rng, S * M * NT);
    let y0 = dyadic(&mut rng, M * NT);
    let pt = rt.upload(&p, &[S, M, NT]).unwrap();
    let yt = rt.upload(&y0, &[M, NT]).unwrap();
    let art = tirx::select(splitk_tma_reduce::KERNEL.artifacts, "default", target).unwrap();
    rt.launch(art, &[pt.view(), yt.view()]).unwrap();
    let got = rt.download(&yt).unwrap();
    for i in 0..M * NT {
        let want = y0[i] + (0..S).map(|s| p[s * M * NT + i]).sum::<f32>();
        assert_eq!(got[i], want, "y at ({}, {})", i / NT, i % NT);
    }

    let q: Vec<bf16> = (0..S * M * NT)
        .map(|_| bf16::from_f32(rng.unit() * 1e3))
        .collect();
    let z0: Vec<bf16> = (0..M * NT)
        .map(|_| bf16::from_f32(rng.unit() * 1e3))
        .collect();
    let qt = rt.upload(&q, &[S, M, NT]).unwrap();
    let zt = rt.upload(&z0, &[M, NT]).unwrap();
    let art = tirx::select(max_tma_reduce::KERNEL.artifacts, "default", target).unwrap();
    rt.launch(art, &[qt.view(), zt.view()]).unwrap();
    let got = rt.download(&zt).unwrap();
    for i in 0..M * NT {
        let want = (0..S)
            .map(|s| q[s * M * NT + i])
            .fold(z0[i], |a, b| if b > a { b } else { a });
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "z at ({}, {})",
            i / NT,
            i % NT
        );
    }
}
