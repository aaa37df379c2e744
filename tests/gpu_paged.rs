//! GPU tests of the paged attention kernel (feature `gpu`), `attention_sm90_paged` through
//! `attention::paged::run`: against the f64 reference through the block table on random
//! inputs, O and the LSE, outputs poisoned first — fixed batches in every head dim, page size,
//! mask and element type, then random batches (shuffled pages, decode and prefill lengths);
//! and the host's refusals before any launch.

use half::{bf16, f16};
use tirx::{Runtime, Tensor};
use tirx_kernels::attention::paged::{self, Paging, attention_paged_f64};
use tirx_kernels::attention::varlen::Outputs;
use tirx_kernels::reference::{HostElem, Rng};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// Max |o − ref| allowed (values of magnitude ≤ 1, P rounded to 16 bits).
const TOL_O: f64 = 2e-2;
/// Max |lse − ref| allowed.
const TOL_LSE: f64 = 2e-3;

/// Cumulative offsets of `lens`.
fn cumulative(lens: &[usize]) -> Vec<i32> {
    std::iter::once(0)
        .chain(lens.iter().scan(0, |t, &l| {
            *t += l as i32;
            Some(*t)
        }))
        .collect()
}

/// Runs one paged batch (`p`: queries, key counts, a shuffled table) through `paged::run`
/// with `hq` query heads over `hk`, head dim `d`; every cache row random (unused pages and
/// the rows past a sequence's keys too). Returns (max |o − ref|, max |lse − ref|), infinite
/// where an output is not finite where it must be (or not −∞ where the reference is).
fn run_paged<T: HostElem + tirx::Element + Sync>(
    rt: &Runtime,
    p: &Paging,
    (hq, hk, d): (usize, usize, usize),
    causal: bool,
    seed: u64,
) -> (f64, f64) {
    let tq = *p.cu_q.last().unwrap() as usize;
    let rows = p.num_pages * p.page;
    let mut rng = Rng::new(seed);
    let hqv: Vec<T> = rng.values(tq * hq * d);
    let hkv: Vec<T> = rng.values(rows * hk * d);
    let hvv: Vec<T> = rng.values(rows * hk * d);
    let q = rt.upload(&hqv, &[tq, hq * d]).unwrap();
    let k = rt.upload(&hkv, &[p.num_pages, p.page, hk * d]).unwrap();
    let v = rt.upload(&hvv, &[p.num_pages, p.page, hk * d]).unwrap();
    let mut o: Tensor<T> = rt.zeros(&[tq, hq * d]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[hq, tq, 1]).unwrap();
    rt.poison(&mut o).unwrap();
    rt.poison(&mut lse).unwrap();
    let scale = 1.0 / (d as f32).sqrt();
    let cache = paged::Cache {
        k: &k,
        v: &v,
        block_table: &p.block_table,
        max_pages: p.max_pages,
    };
    let out = Outputs {
        o: &mut o,
        lse: &mut lse,
    };
    paged::run(
        rt,
        &q,
        cache,
        out,
        (&p.cu_q, &p.seqused_k),
        d,
        causal,
        scale,
    )
    .unwrap_or_else(|e| panic!("{:?} {:?} d {d}: {e}", p.cu_q, p.seqused_k));
    let (got, got_lse) = (rt.download(&o).unwrap(), rt.download(&lse).unwrap());
    let (want, want_lse) =
        attention_paged_f64(&hqv, (&hkv, &hvv), p, (hq, hk, d), causal, f64::from(scale));
    let mut max_o = 0.0f64;
    for (g, w) in got.iter().zip(&want) {
        let g = g.to_f64();
        if !g.is_finite() {
            return (f64::INFINITY, f64::INFINITY);
        }
        max_o = max_o.max((g - w).abs());
    }
    let mut max_l = 0.0f64;
    for (&g, &w) in got_lse.iter().zip(&want_lse) {
        let g = f64::from(g);
        let e = match (w == f64::NEG_INFINITY, g.is_finite()) {
            (true, _) if g == w => 0.0,
            (false, true) => (g - w).abs(),
            _ => f64::INFINITY,
        };
        max_l = max_l.max(e);
    }
    (max_o, max_l)
}

/// `attention_sm90_paged` on the GPU against the f64 reference: fixed batches (an empty
/// sequence, one token, prefill after a cached prefix, decode of 1…16 queries over long
/// prefixes, queries before every key) in every head dim, page size, mask and element type,
/// then 60 random batches (1…8 sequences, 0…16 or 0…700 queries, 0…1500 keys, GQA, shuffled
/// pools with spare pages) — O and the LSE, outputs poisoned.
#[test]
fn paged_attention_matches_the_f64_reference() {
    let rt = rt();
    let fixed: [(&[usize], &[usize]); 4] = [
        (&[0, 1, 130, 9], &[5, 1, 300, 200]),
        (&[1, 16, 7, 3], &[700, 333, 129, 1]),
        (&[90, 1], &[30, 1000]),
        (&[1000], &[1000]),
    ];
    let mut failures = Vec::new();
    let mut n = 0;
    for d in [64, 128, 256] {
        for page in [16, 32, 64, 128, 256] {
            for causal in [false, true] {
                for f16 in [false, true] {
                    for (i, (lq, lk)) in fixed.iter().enumerate() {
                        let cq = cumulative(lq);
                        let sk: Vec<i32> = lk.iter().map(|&l| l as i32).collect();
                        let p = paged::shuffled((&cq, &sk), page, 3, 100 + i as u64);
                        let heads = (4, 2, d);
                        let seed = 7100 + i as u64;
                        let (eo, el) = if f16 {
                            run_paged::<f16>(&rt, &p, heads, causal, seed)
                        } else {
                            run_paged::<bf16>(&rt, &p, heads, causal, seed)
                        };
                        n += 1;
                        let line = format!(
                            "d {d} page {page} causal={causal} f16={f16} q {lq:?} k {lk:?}: o {eo:.2e} lse {el:.2e}"
                        );
                        println!("{line}");
                        if !(eo <= TOL_O && el <= TOL_LSE) {
                            failures.push(line);
                        }
                    }
                }
            }
        }
    }
    let mut rng = Rng::new(0x9a6e_2026);
    for case in 0..60u64 {
        let b = rng.range(1, 8);
        let decode = rng.range(0, 1) == 1;
        let lq: Vec<usize> = (0..b)
            .map(|_| match rng.range(0, 5) {
                0 => 0,
                1 => 1,
                _ if decode => rng.range(2, 16),
                _ => rng.range(2, 700),
            })
            .collect();
        let sk: Vec<i32> = (0..b)
            .map(|_| match rng.range(0, 5) {
                0 => 0,
                1 => 1,
                _ => rng.range(2, 1500) as i32,
            })
            .collect();
        let d = [64, 128, 256][rng.range(0, 2)];
        let page = [16, 32, 64, 128, 256][rng.range(0, 4)];
        let hk = [1, 2, 3][rng.range(0, 2)];
        let hq = hk * [1, 2, 4][rng.range(0, 2)];
        let causal = rng.range(0, 1) == 1;
        let f16 = rng.range(0, 1) == 1;
        let cq = cumulative(&lq);
        let p = paged::shuffled((&cq, &sk), page, rng.range(0, 4), 200 + case);
        let (eo, el) = if f16 {
            run_paged::<f16>(&rt, &p, (hq, hk, d), causal, 9100 + case)
        } else {
            run_paged::<bf16>(&rt, &p, (hq, hk, d), causal, 9100 + case)
        };
        n += 1;
        let line = format!(
            "#{case} d {d} page {page} heads {hq}/{hk} causal={causal} f16={f16} q {lq:?} k {sk:?}: o {eo:.2e} lse {el:.2e}"
        );
        println!("{line}");
        if !(eo <= TOL_O && el <= TOL_LSE) {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} paged cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `paged::run` and `paged::launch` check on the host: a page id out of the cache, a cache
/// whose page size has no tile, and caches that disagree with the batch are typed errors with
/// nothing launched; a batch of no query token launches nothing.
#[test]
fn paged_launches_that_disagree_with_their_batch_are_refused() {
    use tirx_kernels::attention::paged::{PagedBatch, PagedError};
    let rt = rt();
    let q: Tensor<bf16> = rt.zeros(&[3, 128]).unwrap();
    let k: Tensor<bf16> = rt.zeros(&[4, 128, 64]).unwrap();
    let mut o: Tensor<bf16> = rt.zeros(&[3, 128]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[2, 3, 1]).unwrap();
    let mut call = |table: &[i32], k: &Tensor<bf16>| {
        let cache = paged::Cache {
            k,
            v: k,
            block_table: table,
            max_pages: 2,
        };
        let out = Outputs {
            o: &mut o,
            lse: &mut lse,
        };
        paged::run(&rt, &q, cache, out, (&[0, 3], &[200]), 64, false, 0.125).unwrap_err()
    };
    let e = call(&[1, 4], &k);
    assert!(
        matches!(
            e,
            PagedError::PageOutOfRange {
                slot: 1,
                page: 4,
                ..
            }
        ),
        "{e}"
    );
    // Pages of 512 tokens: no config of `attention_sm90_paged` takes them (16…256 do), and
    // the sequence's 200 keys fit the table's 2 pages, so the page size is the first refusal.
    let k512: Tensor<bf16> = rt.zeros(&[2, 512, 64]).unwrap();
    let e = call(&[1, 0], &k512);
    assert!(matches!(e, PagedError::NoTile { page: 512, .. }), "{e}");
    // A batch checked for 4 pages, launched on caches of 3.
    let art = paged::tile_for(64, 128, false, tirx::abi::ElemType::Bf16).unwrap();
    let p = Paging::new((&[0, 3], &[200]), (&[1, 2], 2), 128, 4, 3).unwrap();
    let batch = PagedBatch::new(&rt, &p, art).unwrap();
    let k3: Tensor<bf16> = rt.zeros(&[3, 128, 64]).unwrap();
    let args = [q.view(), k3.view(), k3.view(), o.view(), lse.view()];
    let e = paged::launch(&rt, &batch, args, 0.125).unwrap_err();
    assert!(matches!(e, PagedError::Shape(_)), "{e}");
    let p = Paging::new((&[0, 0], &[0]), (&[-1], 1), 128, 4, 0).unwrap();
    let empty = PagedBatch::new(&rt, &p, art).unwrap();
    let q0: Tensor<bf16> = rt.zeros(&[0, 128]).unwrap();
    let l0: Tensor<f32> = rt.zeros(&[2, 0, 1]).unwrap();
    let args = [q0.view(), k.view(), k.view(), q0.view(), l0.view()];
    paged::launch(&rt, &empty, args, 0.125).expect("no query token: nothing to launch");
    rt.synchronize().unwrap();
}
