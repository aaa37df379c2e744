//! A decode call in the emulator: the decode kernel, then (with more than one split) the
//! combine on the same emulated device, against the f64 reference, with O, the LSE and the
//! workspace poisoned first.

use tirx::KernelArtifact;
use tirx::abi::ElemType;
use tirx::runtime::{DeviceLimits, ScalarArg, TensorMeta};

use super::{Ask, Plan};
use crate::attention::reference::{Dims, attention_f64};

/// The decode of `dims` (head dim `dims.d`, `dims.s` ≤ 16 query positions) with the chunks of
/// the keys and the packing `ask`ed ([`super::Split::with`] evens the chunks out), in the
/// emulator on `sms`
/// SMs, inputs from `seed`, O, the LSE and the workspace poisoned: O within 2e-2 and the LSE
/// within 2e-3 of [`attention_f64`] (−∞ exactly where no key is seen), or the first element
/// that is not. Returns the plan it ran and max |o − ref|.
pub fn simulate(
    dims: Dims,
    (causal, elem): (bool, ElemType),
    ask: Ask,
    sms: u32,
    seed: u64,
    policy: &tirx_sim::Policy,
) -> Result<(Plan, f64), String> {
    use crate::simulate::{encode, put, random_values};
    let Dims {
        b,
        s,
        sk,
        hq,
        hk,
        d,
        ..
    } = dims;
    let shapes = [
        vec![b, s, hq * d],
        vec![b, sk, hk * d],
        vec![b, sk, hk * d],
        vec![b, s, hq * d],
        vec![b * hq, s, 1],
    ];
    let plan = Plan::new(
        shapes.each_ref().map(Vec::as_slice),
        d,
        (causal, elem),
        sms as usize,
        ask,
    )
    .map_err(|e| e.to_string())?;
    let mut rng = crate::reference::Rng::new(seed);
    let (_, qv) = random_values(&mut rng, elem, b * s * hq * d);
    let (_, kv) = random_values(&mut rng, elem, b * sk * hk * d);
    let (_, vv) = random_values(&mut rng, elem, b * sk * hk * d);
    let [(qb, qv), (kb, kv), (vb, vv)] = [&qv, &kv, &vv].map(|x| encode(x, elem));
    let mut dev = tirx_sim::Device::new();
    let ob = b * s * hq * d * elem.bytes() as usize;
    let q = put(&mut dev, &qb, elem, &shapes[0]);
    let k = put(&mut dev, &kb, elem, &shapes[1]);
    let v = put(&mut dev, &vb, elem, &shapes[2]);
    let o = put(&mut dev, &vec![0xff; ob], elem, &shapes[3]);
    let lse = put(
        &mut dev,
        &vec![0xff; b * hq * s * 4],
        ElemType::F32,
        &shapes[4],
    );
    // The workspace poisoned (NaN bits): every element the combine reads must be written.
    let (os, ls) = plan.part_shapes();
    let poison = |dims: &[usize; 3]| vec![0xff; dims.iter().product::<usize>() * 4];
    let o_part = put(&mut dev, &poison(&os), ElemType::F32, &os);
    let l_part = put(&mut dev, &poison(&ls), ElemType::F32, &ls);
    let limits = DeviceLimits {
        sm_count: sms,
        ..DeviceLimits::HOPPER
    };
    let scale = 1.0 / (d as f64).sqrt();
    let scalars = [
        ScalarArg::F32((scale * std::f64::consts::LOG2_E) as f32),
        ScalarArg::U32(plan.split.chunk_blocks as u32),
    ];
    let run = |dev: &mut tirx_sim::Device, art, tensors: &[TensorMeta], scalars: &[ScalarArg]| {
        launch(dev, art, (tensors, scalars), seed, (&limits, policy))
    };
    if plan.combines() {
        let ts = [q, k, v, o_part.clone(), l_part.clone()];
        run(&mut dev, plan.tiles.decode, &ts, &scalars)?;
        let ts = [o_part, l_part, o.clone(), lse.clone()];
        run(&mut dev, plan.tiles.combine, &ts, &plan.combine_scalars())?;
    } else {
        let ts = [q, k, v, o.clone(), lse.clone()];
        run(&mut dev, plan.tiles.decode, &ts, &scalars)?;
    }
    let got = crate::simulate::values(&dev, &o);
    let got_lse = crate::simulate::values(&dev, &lse);
    let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (want, want_lse) = attention_f64(&f(&qv), &f(&kv), &f(&vv), dims, causal, scale);
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let e = (g - w).abs();
        if e.is_nan() || e > 2e-2 {
            return Err(format!("O element {i} is {g}, the reference {w:.6e}"));
        }
        worst = worst.max(e);
    }
    for (i, (g, w)) in got_lse.iter().zip(&want_lse).enumerate() {
        let ok = if *w == f64::NEG_INFINITY {
            g == w
        } else {
            (g - w).abs() <= 2e-3
        };
        if !ok {
            return Err(format!(
                "LSE of batch·head {} query {} is {g}, the reference {w:.6e}",
                i / s,
                i % s
            ));
        }
    }
    Ok((plan, worst))
}

/// One kernel of the call in the emulator.
fn launch(
    dev: &mut tirx_sim::Device,
    art: &KernelArtifact,
    args: (&[TensorMeta], &[ScalarArg]),
    seed: u64,
    (limits, policy): (&DeviceLimits, &tirx_sim::Policy),
) -> Result<(), String> {
    crate::simulate::launch_args(art.ptx, &(art.signature)(), dev, args, seed, limits, policy)
        .map(|_| ())
        .map_err(|e| crate::simulate::with_source_lines(art, &e.to_string()))
}
