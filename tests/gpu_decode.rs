//! GPU tests of the split-KV decode path (feature `gpu`): `attention_sm90_decode` and
//! `attention_decode_combine` through `attention::decode`, against the f64 reference on random
//! inputs — O and the LSE, outputs and workspace poisoned first — at the host's split for the
//! GPU and at forced splits, in every head dim, mask and element type; and the host's
//! refusals before any launch.

use half::{bf16, f16};
use tirx::{Runtime, Tensor};
use tirx_kernels::attention::decode::{self, Ask, DecodeError, Outputs, Plan};
use tirx_kernels::attention::reference::{Dims, attention_f64};
use tirx_kernels::reference::{HostElem, Rng};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// Max |o − ref| allowed (values of magnitude ≤ 1, P rounded to 16 bits).
const TOL_O: f64 = 2e-2;
/// Max |lse − ref| allowed.
const TOL_LSE: f64 = 2e-3;

/// The decodes of `dims` as `asks` ask (the default: the host's split and packing, through
/// `decode::run`; others through `Plan::launch`), on one set of inputs from `seed` and one f64
/// reference, O, the LSE and the workspace poisoned before each. Per ask: the splits run, the
/// group packed, and (max |o − ref|, max |lse − ref|), infinite where an output is not finite
/// where it must be (or not −∞ where the reference is).
fn run_decode<T: HostElem + tirx::Element + Sync>(
    rt: &Runtime,
    dims: Dims,
    causal: bool,
    asks: &[Ask],
    seed: u64,
) -> Vec<(usize, Option<usize>, f64, f64)> {
    let Dims {
        b,
        s,
        sk,
        hq,
        hk,
        d,
        ..
    } = dims;
    let mut rng = Rng::new(seed);
    let hqv: Vec<T> = rng.values(b * s * hq * d);
    let hkv: Vec<T> = rng.values(b * sk * hk * d);
    let hvv: Vec<T> = rng.values(b * sk * hk * d);
    let q = rt.upload(&hqv, &[b, s, hq * d]).unwrap();
    let k = rt.upload(&hkv, &[b, sk, hk * d]).unwrap();
    let v = rt.upload(&hvv, &[b, sk, hk * d]).unwrap();
    let mut o: Tensor<T> = rt.zeros(&[b, s, hq * d]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[b * hq, s, 1]).unwrap();
    let scale = 1.0 / (d as f32).sqrt();
    let (want, want_lse) = attention_f64(&hqv, &hkv, &hvv, dims, causal, f64::from(scale));
    let sms = rt.sm_count() as usize;
    let mut out = Vec::new();
    for &ask in asks {
        rt.poison(&mut o).unwrap();
        rt.poison(&mut lse).unwrap();
        let shapes = [q.shape(), k.shape(), v.shape(), o.shape(), lse.shape()];
        let plan = Plan::new(shapes, d, (causal, T::ELEM), sms, ask)
            .unwrap_or_else(|e| panic!("{dims:?}: {e}"));
        let mut ws: Tensor<f32> = rt.zeros(&[plan.workspace_len().max(1)]).unwrap();
        rt.poison(&mut ws).unwrap();
        if ask == Ask::default() {
            let outs = Outputs {
                o: &mut o,
                lse: &mut lse,
            };
            let ran = decode::run(rt, &q, &k, &v, outs, Some(&ws), d, causal, scale)
                .unwrap_or_else(|e| panic!("{dims:?}: {e}"));
            assert_eq!(ran.split, plan.split);
        } else {
            let args = [q.view(), k.view(), v.view(), o.view(), lse.view()];
            plan.launch(rt, args, Some(&ws), scale)
                .unwrap_or_else(|e| panic!("{dims:?}: {e}"));
            rt.synchronize().unwrap();
        }
        let (got, got_lse) = (rt.download(&o).unwrap(), rt.download(&lse).unwrap());
        let mut max_o = 0.0f64;
        for (g, w) in got.iter().zip(&want) {
            let g = g.to_f64();
            max_o = max_o.max(if g.is_finite() {
                (g - w).abs()
            } else {
                f64::INFINITY
            });
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
        let pack = plan.tiles.pack.map(|p| p.group);
        out.push((plan.split.splits, pack, max_o, max_l));
    }
    out
}

/// The decode path on the GPU against the f64 reference: decode shapes (SQ 1…16, contexts of
/// 1…16k keys, none a multiple of the key block but one, batch 1…8, GQA 32/8, 64/8, 16/8 and
/// 4/4; the 128-row packed tiles at 64/8 with SQ 12 and 16 and at G = 16 — 32/2, 16/1 — with
/// SQ 8 and 1; G = 16 with SQ 12, which no tile packs) at the host's split and packing, at 1
/// split unpacked, 2 packed and 7 both, in every head dim, mask and element type (one
/// reference per problem).
#[test]
fn decode_attention_matches_the_f64_reference() {
    let rt = rt();
    // (b, sq, sk, hq, hk)
    let shapes: [(usize, usize, usize, usize, usize); 12] = [
        (1, 1, 16000, 32, 8),
        (2, 16, 4097, 8, 2),
        (8, 3, 1000, 4, 4),
        (1, 5, 77, 32, 8),
        (3, 16, 10, 4, 1),
        (2, 7, 3000, 64, 8),
        (2, 9, 2000, 16, 8),
        // Two warpgroups, 128 rows: G = 8 at SQ 9…16, G = 16 at SQ ≤ 8.
        (2, 16, 5000, 64, 8),
        (1, 12, 3001, 64, 8),
        (2, 8, 2049, 32, 2),
        (1, 1, 9000, 16, 1),
        (1, 12, 300, 16, 1),
    ];
    let mut failures = Vec::new();
    let mut n = 0;
    for d in [64, 128, 256] {
        for causal in [false, true] {
            for f16 in [false, true] {
                for (i, &(b, s, sk, hq, hk)) in shapes.iter().enumerate() {
                    let dims = Dims {
                        b,
                        s,
                        sk,
                        hq,
                        hk,
                        d,
                        dv: d,
                    };
                    let blocks = sk.div_ceil(128);
                    let ask = |splits, pack| Ask { splits, pack };
                    let asks = [
                        Ask::default(),
                        ask(Some(1), false),
                        ask(Some(2.min(blocks)), true),
                        ask(Some(7.min(blocks)), true),
                        ask(Some(7.min(blocks)), false),
                    ];
                    let seed = 5100 + i as u64;
                    let runs = if f16 {
                        run_decode::<f16>(&rt, dims, causal, &asks, seed)
                    } else {
                        run_decode::<bf16>(&rt, dims, causal, &asks, seed)
                    };
                    for (ask, (ns, pack, eo, el)) in asks.iter().zip(runs) {
                        n += 1;
                        let line = format!(
                            "d {d} causal={causal} f16={f16} b {b} sq {s} sk {sk} heads {hq}/{hk} {ask:?} ran {ns} packed {pack:?}: o {eo:.2e} lse {el:.2e}"
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
    assert!(
        failures.is_empty(),
        "{} of {n} decode cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `decode::run` and `Plan::launch` check on the host: too many query positions, no key, a
/// workspace too small (or none) for the split — typed errors with nothing launched.
#[test]
fn decode_calls_the_host_cannot_run_are_refused() {
    let rt = rt();
    let (b, sk, hq, hk, d) = (1, 8192, 32, 8, 128);
    let q: Tensor<bf16> = rt.zeros(&[b, 17, hq * d]).unwrap();
    let k: Tensor<bf16> = rt.zeros(&[b, sk, hk * d]).unwrap();
    let v: Tensor<bf16> = rt.zeros(&[b, sk, hk * d]).unwrap();
    let mut o: Tensor<bf16> = rt.zeros(&[b, 17, hq * d]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[b * hq, 17, 1]).unwrap();
    let out = Outputs {
        o: &mut o,
        lse: &mut lse,
    };
    let e = decode::run(&rt, &q, &k, &v, out, None, d, false, 0.1).unwrap_err();
    assert!(matches!(e, DecodeError::Queries { sq: 17 }), "{e}");
    let q: Tensor<bf16> = rt.zeros(&[b, 1, hq * d]).unwrap();
    let mut o: Tensor<bf16> = rt.zeros(&[b, 1, hq * d]).unwrap();
    let mut lse: Tensor<f32> = rt.zeros(&[b * hq, 1, 1]).unwrap();
    let shapes = [q.shape(), k.shape(), v.shape(), o.shape(), lse.shape()];
    let ask = Ask {
        splits: Some(4),
        pack: true,
    };
    let plan = Plan::new(shapes, d, (false, tirx::abi::ElemType::Bf16), 132, ask).unwrap();
    let need = plan.workspace_len();
    let small: Tensor<f32> = rt.zeros(&[need - 1]).unwrap();
    for ws in [None, Some(&small)] {
        let args = [q.view(), k.view(), v.view(), o.view(), lse.view()];
        let e = plan.launch(&rt, args, ws, 0.1).unwrap_err();
        assert!(matches!(e, DecodeError::Workspace { splits: 4, .. }), "{e}");
    }
    let out = Outputs {
        o: &mut o,
        lse: &mut lse,
    };
    let none: Tensor<bf16> = rt.zeros(&[b, 0, hk * d]).unwrap();
    let e = decode::run(&rt, &q, &none, &none, out, None, d, false, 0.1).unwrap_err();
    assert!(matches!(e, DecodeError::NoKeys), "{e}");
}
