//! The FP8 quantisers (`tirx_kernels::row_kernels::quant`, issue #29) in the emulator: random
//! bf16 rows of magnitudes from 2⁻²⁰ to 2²⁰ with a row of zeros, a row of subnormal-scale
//! values and tails (`M` odd, `N` not a multiple of the 8-column vector nor of the 128-column
//! block), outputs poisoned, checked bit for bit against the CPU reference
//! (`tirx_kernels::rows::quant`) and within E4M3's error in f64; and every config assembles
//! with ptxas without spills, its stores rounded by `cvt.rn.satfinite.e4m3x2.f32`.

use half::bf16;
use tirx::KernelArtifact;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::row_kernels::quant::{quant_block, quant_rowwise};
use tirx_kernels::rows::quant::check_e4m3;
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::sim_exec::EMULATED;

/// `m × n` bf16 values: row `i` uniform in ±2^(i mod 41 − 20), row 3 zeros, row 5 values near
/// 1e-38 (so `amax / 448` is subnormal and the scale takes its floor), row 7 near 3e38.
pub(crate) fn inputs(m: usize, n: usize, seed: u64) -> Vec<bf16> {
    let mut rng = Rng::new(seed);
    (0..m * n)
        .map(|k| {
            let i = k / n;
            let scale = match i {
                3 => 0.0,
                5 => 1e-38,
                7 => 3e38,
                _ => 2f32.powi((i % 41) as i32 - 20),
            };
            bf16::from_f32(rng.unit() * scale)
        })
        .collect()
}

/// Runs `art` on `x` (`m × n`) in the emulator with `q` and `s` poisoned; checks them with a
/// scale per `block` columns.
fn run(art: &KernelArtifact, m: usize, n: usize, block: usize, seed: u64) {
    let entry = (art.signature)().entry;
    let x = inputs(m, n, seed);
    let nb = n.div_ceil(block);
    let mut dev = Device::new();
    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    let xt = put(&mut dev, &xb, ElemType::Bf16, &[m, n]);
    let qt = put(&mut dev, &vec![0xa5; m * n], ElemType::E4m3, &[m, n]);
    let poison: Vec<u8> = (0..m * nb).flat_map(|_| f32::NAN.to_le_bytes()).collect();
    let s_shape: Vec<usize> = if block == n { vec![m] } else { vec![m, nb] };
    let st = put(&mut dev, &poison, ElemType::F32, &s_shape);
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[xt, qt.clone(), st.clone()], &[]),
        seed,
        &EMULATED,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let q = dev.read(qt.addr, m * n).expect("q");
    let s: Vec<f32> = dev
        .read(st.addr, m * nb * 4)
        .expect("s")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    check_e4m3(&x, (&q, &s), m, n, block).unwrap_or_else(|e| panic!("{entry} {m}x{n}: {e}"));
}

#[test]
fn rowwise_quantises_rows_with_masked_vector_tails() {
    // 1000 columns in a 1024-column tile: the tail by masked 8-byte vectors.
    run(&quant_rowwise::KERNEL.artifacts[0], 45, 1000, 1000, 61);
}

#[test]
fn rowwise_quantises_rows_with_element_tails() {
    // 1003 columns: the rows are not 8-byte aligned, so edge stores of single bytes.
    run(&quant_rowwise::KERNEL.artifacts[0], 13, 1003, 1003, 62);
}

#[test]
fn rowwise_quantises_long_rows_across_warps() {
    // c2k: a 2048-column tile of two rows; 1500 columns.
    let art = quant_rowwise::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "c2k")
        .expect("c2k");
    run(art, 9, 1500, 1500, 63);
}

#[test]
fn block_quantises_1x128_blocks_with_tails() {
    // 300 columns: blocks of 128, 128 and 44; 45 rows: a partial tile of rows.
    run(&quant_block::KERNEL.artifacts[0], 45, 300, 128, 64);
    // 259 columns: a 3-column last block, the rows not aligned.
    run(&quant_block::KERNEL.artifacts[1], 71, 259, 128, 65);
    // 1000 columns: aligned rows, vector stores, a last block of 104.
    run(&quant_block::KERNEL.artifacts[0], 37, 1000, 128, 66);
}

/// Every config's stores round by `cvt.rn.satfinite.e4m3x2.f32`; ptxas assembles them for
/// sm_90a without spills (where installed; `TIRX_REQUIRE_PTXAS=1` makes it required).
#[test]
fn the_quantisers_round_with_satfinite_and_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    for k in [&quant_rowwise::KERNEL, &quant_block::KERNEL] {
        for a in k.artifacts {
            assert!(
                a.ptx.contains("cvt.rn.satfinite.e4m3x2.f32"),
                "{}: {}",
                k.name,
                a.ptx
            );
        }
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [&quant_rowwise::KERNEL, &quant_block::KERNEL] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(
                c.problems.is_empty(),
                "{}: {:?} {:?}",
                k.name,
                c.problems,
                c.sass
            );
        }
    }
}
