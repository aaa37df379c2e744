//! GPU tests of the Hopper attention forward (feature `gpu`): every config against the f64
//! reference on random inputs — batches, heads, GQA ratios, sequence lengths 1, 17, 1000 and
//! lengths that are not a multiple of any tile, causal on and off — outputs poisoned first.

use half::{bf16, f16};
use tirx::Runtime;
use tirx_kernels::attention::hopper::attention_sm90;
use tirx_kernels::attention::reference::{Dims, attention_f64};
use tirx_kernels::reference::{HostElem, Rng};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// Runs one case; returns (relative Frobenius error, max abs error) of O.
fn run_case<T: HostElem>(
    rt: &Runtime,
    config: &str,
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
    } = dims;
    let mut rng = Rng::new(seed);
    let hqv: Vec<T> = rng.values(b * s * hq * d);
    let hkv: Vec<T> = rng.values(b * sk * hk * d);
    let hvv: Vec<T> = rng.values(b * sk * hk * d);
    let q = rt.upload(&hqv, &[b, s, hq * d]).unwrap();
    let k = rt.upload(&hkv, &[b, sk, hk * d]).unwrap();
    let v = rt.upload(&hvv, &[b, sk, hk * d]).unwrap();
    let mut o = rt.zeros::<T>(&[b, s, hq * d]).unwrap();
    rt.poison(&mut o).unwrap();
    let scale = 1.0 / (d as f64).sqrt();
    let scale_log2 = (scale * std::f64::consts::LOG2_E) as f32;
    attention_sm90::launch(rt, config, &q, &k, &v, &mut o, scale_log2)
        .unwrap_or_else(|e| panic!("{config} {dims:?}: {e}"));
    rt.synchronize().unwrap();
    let got = rt.download(&o).unwrap();
    let (want, _) = attention_f64(&hqv, &hkv, &hvv, dims, causal, scale);
    let (mut num, mut den, mut max) = (0.0f64, 0.0f64, 0.0f64);
    for (g, w) in got.iter().zip(&want) {
        let g = g.to_f64();
        if !g.is_finite() {
            return (f64::INFINITY, f64::INFINITY);
        }
        num += (g - w) * (g - w);
        den += w * w;
        max = max.max((g - w).abs());
    }
    ((num / den.max(1e-30)).sqrt(), max)
}

/// The cases: (b, s, sk, hq, hk) over odd lengths and GQA ratios.
fn cases() -> Vec<(usize, usize, usize, usize, usize)> {
    vec![
        (1, 1, 1, 1, 1),
        (1, 17, 17, 2, 1),
        (2, 128, 128, 2, 2),
        (1, 1000, 1000, 2, 1),
        (3, 100, 300, 4, 2),
        (2, 300, 100, 4, 4),
        (1, 257, 257, 8, 1),
        (2, 64, 1000, 2, 2),
        (1, 513, 513, 4, 2),
    ]
}

fn sweep<T: HostElem>(rt: &Runtime, prefix: &str) {
    let mut failures = Vec::new();
    let mut n = 0;
    for d in [64usize, 128, 256] {
        for causal in [false, true] {
            let config = format!("{prefix}{}d{d}", if causal { "causal_" } else { "" })
                .replace("default_", "");
            let config = if config.is_empty() {
                "default".into()
            } else {
                config
            };
            for (i, &(b, s, sk, hq, hk)) in cases().iter().enumerate() {
                let dims = Dims {
                    b,
                    s,
                    sk,
                    hq,
                    hk,
                    d,
                };
                let (rel, max) = run_case::<T>(rt, &config, dims, causal, 1000 + i as u64);
                n += 1;
                println!("{config:>18} {dims:?}: rel {rel:.2e} max {max:.2e}");
                if !(rel < 1.5e-2 && max < 4e-2) {
                    failures.push(format!("{config} {dims:?}: rel {rel:.2e} max {max:.2e}"));
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
fn attention_bf16_matches_the_f64_reference() {
    sweep::<bf16>(&rt(), "");
}

#[test]
fn attention_f16_matches_the_f64_reference() {
    sweep::<f16>(&rt(), "f16_");
}
