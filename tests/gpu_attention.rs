//! GPU tests of the Hopper attention forward (feature `gpu`): against the f64 reference on
//! random inputs, O and the LSE, outputs poisoned first — every config on fixed cases (lengths
//! 1, 17, 1000 and lengths that are not a multiple of any tile, GQA ratios, causal on and off),
//! then 100 random cases through the host dispatcher (batch, heads, GQA ratio, lengths, head
//! dim, mask, element type drawn from a seeded generator).

use half::{bf16, f16};
use tirx::{KernelArtifact, Runtime, Tensor};
use tirx_kernels::attention::host;
use tirx_kernels::attention::reference::{Dims, attention_f64};
use tirx_kernels::attention::request::same_tile;
use tirx_kernels::reference::{HostElem, Rng};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// Max |o − ref| allowed (values of magnitude ≤ 1, P rounded to 16 bits).
const TOL_O: f64 = 2e-2;
/// Max |lse − ref| allowed.
const TOL_LSE: f64 = 2e-3;

/// Runs one case (the tile entry `tile`, or the host's choice); returns (max |o − ref|,
/// max |lse − ref|), infinite when an output is not finite where it must be.
fn run_case<T: HostElem + tirx::Element + Sync>(
    rt: &Runtime,
    tile: Option<&'static KernelArtifact>,
    dims: Dims,
    causal: bool,
    seed: u64,
) -> (f64, f64) {
    let Dims {
        b,
        s,
        sk,
        hq,
        hk,
        d,
        dv,
    } = dims;
    let mut rng = Rng::new(seed);
    let hqv: Vec<T> = rng.values(b * s * hq * d);
    let hkv: Vec<T> = rng.values(b * sk * hk * d);
    let hvv: Vec<T> = rng.values(b * sk * hk * dv);
    let q = rt.upload(&hqv, &[b, s, hq * d]).unwrap();
    let k = rt.upload(&hkv, &[b, sk, hk * d]).unwrap();
    let v = rt.upload(&hvv, &[b, sk, hk * dv]).unwrap();
    let mut o: Tensor<T> = rt.zeros(&[b, s, hq * dv]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[b * hq, s, 1]).unwrap();
    rt.poison(&mut o).unwrap();
    rt.poison(&mut lse).unwrap();
    let scale = 1.0 / (d as f32).sqrt();
    let args = [q.view(), k.view(), v.view(), o.view(), lse.view()];
    host::launch(rt, args, d, causal, scale, tile)
        .unwrap_or_else(|e| panic!("{:?} {dims:?}: {e}", tile.map(|t| t.config)));
    rt.synchronize().unwrap();
    let (got, got_lse) = (rt.download(&o).unwrap(), rt.download(&lse).unwrap());
    let (want, want_lse) = attention_f64(&hqv, &hkv, &hvv, dims, causal, f64::from(scale));
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
        let e = if w == f64::NEG_INFINITY {
            if g == f64::NEG_INFINITY {
                0.0
            } else {
                f64::INFINITY
            }
        } else if g.is_finite() {
            (g - w).abs()
        } else {
            f64::INFINITY
        };
        max_l = max_l.max(e);
    }
    (max_o, max_l)
}

/// The fixed cases: (b, s, sk, hq, hk) over odd lengths and GQA ratios.
const CASES: [(usize, usize, usize, usize, usize); 9] = [
    (1, 1, 1, 1, 1),
    (1, 17, 17, 2, 1),
    (2, 128, 128, 2, 2),
    (1, 1000, 1000, 2, 1),
    (3, 100, 300, 4, 2),
    (2, 300, 100, 4, 4),
    (1, 257, 257, 8, 1),
    (2, 64, 1000, 2, 2),
    (1, 513, 513, 4, 2),
];

/// Every (tile, mask) of the shipped attention configs compiled for `target` (the GPU's) with
/// its head dim (one artifact per set of siblings that differ only in element type and mask),
/// so a new tile is tested without being listed here.
fn tiles(target: tirx::Target) -> Vec<((usize, usize), &'static KernelArtifact, bool)> {
    let mut out = Vec::new();
    for t in host::tiles().into_iter().filter(|t| t.target == target) {
        let d =
            tirx_kernels::attention::family::head_dims(t).expect("every attention config has D");
        for causal in [false, true] {
            // Only the masks some sibling of the tile takes.
            let takes = tirx_kernels::catalogue::all()
                .into_iter()
                .flat_map(|k| k.artifacts)
                .any(|a| same_tile(a, t) && a.int("CAUSAL") == Some(i64::from(causal)));
            if takes {
                out.push((d, t, causal));
            }
        }
    }
    assert!(out.len() >= 8, "attention tiles: {}", out.len());
    out
}

fn every_config<T: HostElem + tirx::Element + Sync>(rt: &Runtime) {
    let mut failures = Vec::new();
    let mut n = 0;
    for ((d, dv), tile, causal) in tiles(rt.target().expect("the GPU's target")) {
        {
            for (i, &(b, s, sk, hq, hk)) in CASES.iter().enumerate() {
                let dims = Dims {
                    b,
                    s,
                    sk,
                    hq,
                    hk,
                    d,
                    dv,
                };
                let (eo, el) = run_case::<T>(rt, Some(tile), dims, causal, 1000 + i as u64);
                n += 1;
                let line = format!(
                    "{}/{} causal={causal} {dims:?}: o {eo:.2e} lse {el:.2e}",
                    tile.kernel, tile.config
                );
                println!("{line}");
                if !(eo <= TOL_O && el <= TOL_LSE) {
                    failures.push(line);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_attention_config_matches_the_f64_reference_bf16() {
    every_config::<bf16>(&rt());
}

#[test]
fn every_attention_config_matches_the_f64_reference_f16() {
    every_config::<f16>(&rt());
}

#[test]
fn a_hundred_random_attention_problems_match_the_f64_reference() {
    let rt = rt();
    let mut rng = Rng::new(0xa77e_2026);
    let mut failures = Vec::new();
    for case in 0..100u64 {
        let len = |rng: &mut Rng| match rng.range(0, 5) {
            0 => 1,
            1 => 17,
            2 => 1000,
            _ => rng.range(2, 700),
        };
        let d = [64, 128, 256][rng.range(0, 2)];
        let (s, sk) = (len(&mut rng), len(&mut rng));
        let hk = [1, 2, 3][rng.range(0, 2)];
        let hq = hk * [1, 2, 4][rng.range(0, 2)];
        let b = rng.range(1, 3);
        let causal = rng.range(0, 1) == 1;
        let dims = Dims {
            b,
            s,
            sk,
            hq,
            hk,
            d,
            dv: d,
        };
        let f16 = rng.range(0, 1) == 1;
        let (eo, el) = if f16 {
            run_case::<f16>(&rt, None, dims, causal, 5000 + case)
        } else {
            run_case::<bf16>(&rt, None, dims, causal, 5000 + case)
        };
        let line = format!(
            "#{case} {} causal={causal} {dims:?}: o {eo:.2e} lse {el:.2e}",
            if f16 { "f16" } else { "bf16" }
        );
        println!("{line}");
        if !(eo <= TOL_O && el <= TOL_LSE) {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 100 cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Runs one variable-length batch through `attention::varlen::run` (offsets `cu_q`, `cu_k`,
/// `hq` query heads over `hk`, head dim `d`), outputs poisoned first; returns (max |o − ref|,
/// max |lse − ref|), infinite where an output is not finite where it must be (or not −∞ where
/// the reference is).
fn run_varlen<T: HostElem + tirx::Element + Sync>(
    rt: &Runtime,
    (cu_q, cu_k): (&[i32], &[i32]),
    (hq, hk, d): (usize, usize, usize),
    causal: bool,
    seed: u64,
) -> (f64, f64) {
    use tirx_kernels::attention::varlen::{self, Offsets, attention_varlen_f64};
    let (tq, tk) = (
        *cu_q.last().unwrap() as usize,
        *cu_k.last().unwrap() as usize,
    );
    let mut rng = Rng::new(seed);
    let hqv: Vec<T> = rng.values(tq * hq * d);
    let hkv: Vec<T> = rng.values(tk * hk * d);
    let hvv: Vec<T> = rng.values(tk * hk * d);
    let q = rt.upload(&hqv, &[tq, hq * d]).unwrap();
    let k = rt.upload(&hkv, &[tk, hk * d]).unwrap();
    let v = rt.upload(&hvv, &[tk, hk * d]).unwrap();
    let mut o: Tensor<T> = rt.zeros(&[tq, hq * d]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[hq, tq, 1]).unwrap();
    rt.poison(&mut o).unwrap();
    rt.poison(&mut lse).unwrap();
    let scale = 1.0 / (d as f32).sqrt();
    let out = varlen::Outputs {
        o: &mut o,
        lse: &mut lse,
    };
    varlen::run(rt, &q, &k, &v, out, (cu_q, cu_k), d, causal, scale)
        .unwrap_or_else(|e| panic!("{cu_q:?} {cu_k:?} d {d}: {e}"));
    rt.synchronize().unwrap();
    let (got, got_lse) = (rt.download(&o).unwrap(), rt.download(&lse).unwrap());
    let off = Offsets::new(cu_q, cu_k, tq, tk).unwrap();
    let (want, want_lse) = attention_varlen_f64(
        &hqv,
        &hkv,
        &hvv,
        &off,
        (hq, hk, d),
        causal,
        f64::from(scale),
    );
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
        let e = if w == f64::NEG_INFINITY {
            if g == f64::NEG_INFINITY {
                0.0
            } else {
                f64::INFINITY
            }
        } else if g.is_finite() {
            (g - w).abs()
        } else {
            f64::INFINITY
        };
        max_l = max_l.max(e);
    }
    (max_o, max_l)
}

/// Cumulative offsets of `lens`.
fn cumulative(lens: &[usize]) -> Vec<i32> {
    std::iter::once(0)
        .chain(lens.iter().scan(0, |t, &l| {
            *t += l as i32;
            Some(*t)
        }))
        .collect()
}

/// `attention_sm90_varlen` on the H200 against the f64 reference: fixed batches (empty
/// sequences, sequences of one token, lengths not a multiple of the tile, query and key
/// lengths differing both ways, one long sequence beside short ones) in every head dim, mask
/// and element type, then 60 random batches (1…8 sequences of 0…700 queries and keys each,
/// GQA ratios, head dim, mask, type from a seeded generator). O and the LSE checked, outputs
/// poisoned.
#[test]
fn varlen_attention_matches_the_f64_reference() {
    let rt = rt();
    let fixed: [(&[usize], &[usize]); 4] = [
        (&[0, 1, 130, 9], &[5, 1, 130, 200]),
        (&[200, 1, 64], &[70, 1, 329]),
        (&[1, 1, 1], &[1, 0, 1000]),
        (&[1000], &[1000]),
    ];
    let mut failures = Vec::new();
    let mut n = 0;
    for d in [64, 128, 256] {
        for causal in [false, true] {
            for f16 in [false, true] {
                for (i, (lq, lk)) in fixed.iter().enumerate() {
                    let (cq, ck) = (cumulative(lq), cumulative(lk));
                    let heads = (4, 2, d);
                    let seed = 7000 + i as u64;
                    let (eo, el) = if f16 {
                        run_varlen::<f16>(&rt, (&cq, &ck), heads, causal, seed)
                    } else {
                        run_varlen::<bf16>(&rt, (&cq, &ck), heads, causal, seed)
                    };
                    n += 1;
                    let line = format!(
                        "d {d} causal={causal} f16={f16} q {lq:?} k {lk:?}: o {eo:.2e} lse {el:.2e}"
                    );
                    println!("{line}");
                    if !(eo <= TOL_O && el <= TOL_LSE) {
                        failures.push(line);
                    }
                }
            }
        }
    }
    let mut rng = Rng::new(0x7a51_2026);
    for case in 0..60u64 {
        let b = rng.range(1, 8);
        let len = |rng: &mut Rng| match rng.range(0, 5) {
            0 => 0,
            1 => 1,
            _ => rng.range(2, 700),
        };
        let lq: Vec<usize> = (0..b).map(|_| len(&mut rng)).collect();
        let lk: Vec<usize> = (0..b).map(|_| len(&mut rng)).collect();
        // Keys of at least one token somewhere: K and V are not empty tensors.
        let lk: Vec<usize> = if lk.iter().all(|&l| l == 0) {
            lk.iter().map(|_| 1).collect()
        } else {
            lk
        };
        let d = [64, 128, 256][rng.range(0, 2)];
        let hk = [1, 2, 3][rng.range(0, 2)];
        let hq = hk * [1, 2, 4][rng.range(0, 2)];
        let causal = rng.range(0, 1) == 1;
        let f16 = rng.range(0, 1) == 1;
        let (cq, ck) = (cumulative(&lq), cumulative(&lk));
        if cq.last() == Some(&0) {
            continue; // no query at all: nothing to launch on
        }
        let (eo, el) = if f16 {
            run_varlen::<f16>(&rt, (&cq, &ck), (hq, hk, d), causal, 9000 + case)
        } else {
            run_varlen::<bf16>(&rt, (&cq, &ck), (hq, hk, d), causal, 9000 + case)
        };
        n += 1;
        let line = format!(
            "#{case} d {d} heads {hq}/{hk} causal={causal} f16={f16} q {lq:?} k {lk:?}: o {eo:.2e} lse {el:.2e}"
        );
        println!("{line}");
        if !(eo <= TOL_O && el <= TOL_LSE) {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} varlen cases failed:\n{}",
        failures.join("\n").lines().count(),
        failures.join("\n")
    );
}

/// `varlen::launch` checks its tensors against the batch on the host (a typed error, nothing
/// launched); a batch of no query token has no tile and launches nothing, even with no key.
#[test]
fn varlen_launches_that_disagree_with_their_batch_are_refused() {
    use tirx_kernels::attention::varlen::{self, Batch, Offsets, VarlenError};
    let rt = rt();
    let art = varlen::tile_for(64, false, tirx::abi::ElemType::Bf16).unwrap();
    // 300 queries (3 tiles of 128), none, one (1 tile).
    let off = Offsets::new(&[0, 300, 300, 301], &[0, 40, 50, 90], 301, 90).unwrap();
    let batch = Batch::new(&rt, &off, art).unwrap();
    assert_eq!(batch.tiles(), 4);
    // Q and O of one row more than the offsets say.
    let q: Tensor<bf16> = rt.zeros(&[302, 128]).unwrap();
    let k: Tensor<bf16> = rt.zeros(&[90, 64]).unwrap();
    let lse: Tensor<f32> = rt.zeros(&[2, 302, 1]).unwrap();
    let args = [q.view(), k.view(), k.view(), q.view(), lse.view()];
    let e = varlen::launch(&rt, &batch, args, 0.125).unwrap_err();
    assert!(
        matches!(e, VarlenError::Shape(_)) && e.to_string().contains("302 rows"),
        "{e}"
    );
    let off = Offsets::new(&[0, 0, 0], &[0, 0, 0], 0, 0).unwrap();
    let empty = Batch::new(&rt, &off, art).unwrap();
    assert_eq!(empty.tiles(), 0);
    let q0: Tensor<bf16> = rt.zeros(&[0, 128]).unwrap();
    let k0: Tensor<bf16> = rt.zeros(&[0, 64]).unwrap();
    let l0: Tensor<f32> = rt.zeros(&[2, 0, 1]).unwrap();
    let args = [q0.view(), k0.view(), k0.view(), q0.view(), l0.view()];
    varlen::launch(&rt, &empty, args, 0.125).expect("no query token: nothing to launch");
    rt.synchronize().unwrap();
}
