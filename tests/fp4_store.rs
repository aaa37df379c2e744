//! An f32 register tile stored into an `e2m1x2` tensor (two FP4 E2M1 values a byte, the
//! lower column in the low nibble): `cvt.rn.satfinite.e2m1x2.f32` pairs, in the emulator,
//! bit for bit against the host's E2M1 rounding (`tirx::e2m1x2::from_f32`, written from the
//! format), on random values past ±6 with exact ties, odd `M` and `K` tails taking each of
//! the three store paths, the output poisoned.

use tirx::prelude::*;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::sim_exec::EMULATED;

/// `q = e2m1(x)`, 32 rows × 64 columns a CTA; each thread's runs of 8 columns are 4 bytes.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 32), cdiv(K, 64)))]
pub fn fp4_store(#[shape(M, K)] x: Tensor<f32>, #[shape(M, KB)] q: Tensor<e2m1x2>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 8));
    copy(t, x.tile(cta.x, cta.y));
    copy(q.tile(cta.x, cta.y), t);
}

/// The same with runs of 2 (one byte a chunk) and of 4 (two bytes).
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 16), cdiv(K, 32)))]
pub fn fp4_store_v2(#[shape(M, K)] x: Tensor<f32>, #[shape(M, KB)] q: Tensor<e2m1x2>) {
    let t = regs::<f32>([16, 32], layout = blocked(vec = 2));
    copy(t, x.tile(cta.x, cta.y));
    copy(q.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 16), cdiv(K, 64)))]
pub fn fp4_store_v4(#[shape(M, K)] x: Tensor<f32>, #[shape(M, KB)] q: Tensor<e2m1x2>) {
    let t = regs::<f32>([16, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, cta.y));
    copy(q.tile(cta.x, cta.y), t);
}

fn run(art: &tirx::KernelArtifact, m: usize, k: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    // Uniform in ±8 (past 6 saturates), every fifth value an exact multiple of 0.25 (ties
    // of E2M1 at 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5), one row of infinities.
    let x: Vec<f32> = (0..m * k)
        .map(|i| {
            if i / k == 3 {
                if i % 2 == 0 {
                    f32::INFINITY
                } else {
                    f32::NEG_INFINITY
                }
            } else if i % 5 == 0 {
                (rng.unit() * 32.0).round() * 0.25
            } else {
                rng.unit() * 8.0
            }
        })
        .collect();
    let kb = k / 2;
    let mut dev = Device::new();
    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let xt = put(&mut dev, &xb, ElemType::F32, &[m, k]);
    let qt = put(&mut dev, &vec![0xa5; m * kb], ElemType::E2m1x2, &[m, kb]);
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[xt, qt.clone()], &[]),
        seed,
        &EMULATED,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", (art.signature)().entry));
    let q = dev.read(qt.addr, m * kb).expect("q");
    for r in 0..m {
        for b in 0..kb {
            let (lo, hi) = (x[r * k + 2 * b], x[r * k + 2 * b + 1]);
            let want = tirx::e2m1x2::from_f32(lo, hi).0;
            assert_eq!(
                q[r * kb + b],
                want,
                "{m}x{k} q[{r}][{b}] from ({lo}, {hi}): {:#04x}, want {want:#04x}",
                q[r * kb + b]
            );
        }
    }
}

#[test]
fn fp4_stores_round_pairs_with_every_path() {
    let art = &fp4_store::KERNEL.artifacts[0];
    // K = 200: 100-byte rows (4-byte aligned), a partial last tile: masked 4-byte stores.
    run(art, 45, 200, 71);
    // K = 198: 99-byte rows, not aligned: single bytes at the edge path.
    run(art, 33, 198, 72);
    // K = 128, M = 64: whole tiles, the fast path.
    run(art, 64, 128, 73);
    run(&fp4_store_v2::KERNEL.artifacts[0], 21, 70, 74);
    run(&fp4_store_v4::KERNEL.artifacts[0], 19, 136, 75);
}

/// The PTX rounds by `cvt.rn.satfinite.e2m1x2.f32` and packs bytes into words.
#[test]
fn fp4_stores_lower_to_cvt_e2m1x2() {
    let ptx = fp4_store::KERNEL.artifacts[0].ptx;
    assert!(ptx.contains("cvt.rn.satfinite.e2m1x2.f32"), "{ptx}");
    assert!(ptx.contains(".reg .b8"), "{ptx}");
}

/// ptxas `-arch=sm_100a` assembles the three without spills, the pairs converted by SASS's
/// packed `F2FP` into E2M1.
#[test]
fn fp4_stores_assemble_for_sm100a() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [
        &fp4_store::KERNEL,
        &fp4_store_v2::KERNEL,
        &fp4_store_v4::KERNEL,
    ] {
        let a = &k.artifacts[0];
        let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
        assert!(
            c.sass
                .keys()
                .any(|op| op.starts_with("F2FP") && op.contains("E2M1")),
            "{}: no E2M1 F2FP in {:?}",
            k.name,
            c.sass
        );
    }
}
