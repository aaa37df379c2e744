//! The FP8 quantisers (`tirx_kernels::row_kernels::quant`, issue #29) in the emulator: random
//! bf16 rows of magnitudes from 2⁻²⁰ to 2²⁰ with a row of zeros, a row of subnormal-scale
//! values and tails (`M` odd, `N` not a multiple of the 8-column vector nor of the 128-column
//! block), outputs poisoned, checked bit for bit against the CPU reference
//! (`tirx_kernels::rows::quant`) and within E4M3's error in f64; and every config assembles
//! with ptxas without spills, its stores rounded by `cvt.rn.satfinite.e4m3x2.f32`. MXFP8's
//! quantiser writes the factor image the Blackwell GEMM reads, and its output fed to
//! `gemm_sm100_mxfp8` in the emulator gives the product of the dequantised operands, as the
//! row-wise quantiser's does through the Hopper FP8 GEMM's row-scaled path. NVFP4's
//! (`quant_nvfp4`, sm_100a) writes E2M1 pairs and the UE4M3 factor image bit for bit against
//! `rows::quant::quantise_nvfp4`, and feeds `gemm_sm100_nvfp4` in the emulator (there is no
//! Blackwell GPU here: nothing claims it ran on one).

use half::bf16;
use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::row_kernels::quant::{quant_block, quant_block_mn, quant_rowwise};
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

/// `quant_block_mn`: the same E4M3 values and scales as `quant_block`, bit for bit, with the
/// scales MN-major (`[NB, M4]`, through shared memory and a TMA store); the padding columns
/// `M ≤ m < M4` (M = 45 → 48, 71 → 72) hold a zero row's scale, 2⁻¹²⁶, not the poison.
#[test]
fn block_mn_quantises_with_mn_major_scales() {
    for (a, m, n, seed) in [(0, 45, 300, 67), (1, 71, 259, 68), (0, 37, 1000, 69)] {
        let art = &quant_block_mn::KERNEL.artifacts[a];
        let x = inputs(m, n, seed);
        let (nb, m4) = (n.div_ceil(128), m.div_ceil(4) * 4);
        let mut dev = Device::new();
        let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        let xt = put(&mut dev, &xb, ElemType::Bf16, &[m, n]);
        let qt = put(&mut dev, &vec![0xa5; m * n], ElemType::E4m3, &[m, n]);
        let poison: Vec<u8> = (0..nb * m4).flat_map(|_| f32::NAN.to_le_bytes()).collect();
        let st = put(&mut dev, &poison, ElemType::F32, &[nb, m4]);
        simulate::launch(
            art.ptx,
            &(art.signature)(),
            &mut dev,
            (&[xt, qt.clone(), st.clone()], &[]),
            seed,
            &EMULATED,
        )
        .unwrap_or_else(|e| panic!("quant_block_mn {m}x{n}: {e}"));
        let q = dev.read(qt.addr, m * n).expect("q");
        let s_mn: Vec<f32> = dev
            .read(st.addr, nb * m4 * 4)
            .expect("s")
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let s: Vec<f32> = (0..m * nb).map(|x| s_mn[(x % nb) * m4 + x / nb]).collect();
        check_e4m3(&x, (&q, &s), m, n, 128).unwrap_or_else(|e| panic!("{m}x{n}: {e}"));
        for b in 0..nb {
            for i in m..m4 {
                assert_eq!(s_mn[b * m4 + i], 1.1754944e-38, "padding [{b}, {i}]");
            }
        }
    }
}

/// Every config's stores round by `cvt.rn.satfinite.e4m3x2.f32` (ptxas's assembly of them:
/// `tests/assemble.rs`).
#[test]
fn the_quantisers_round_with_satfinite() {
    use tirx_kernels::row_kernels::quant::mxfp8::quant_mxfp8;
    for k in [
        &quant_rowwise::KERNEL,
        &quant_block::KERNEL,
        &quant_block_mn::KERNEL,
        &quant_mxfp8::KERNEL,
    ] {
        for a in k.artifacts {
            assert!(
                a.ptx.contains("cvt.rn.satfinite.e4m3x2.f32"),
                "{}: {}",
                k.name,
                a.ptx
            );
        }
    }
}

/// Runs `quant_mxfp8` (artifact `art`) on `inputs(m, k)` in the emulator: `q` poisoned, the
/// factor image poisoned with 0xff; returns x, q's bytes and the image's.
fn run_mxfp8(art: &KernelArtifact, m: usize, k: usize, seed: u64) -> (Vec<bf16>, Vec<u8>, Vec<u8>) {
    let entry = (art.signature)().entry;
    let x = inputs(m, k, seed);
    let [ms, ks] = [m.div_ceil(128) * 32, k.div_ceil(128) * 16];
    let mut dev = Device::new();
    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    let xt = put(&mut dev, &xb, ElemType::Bf16, &[m, k]);
    let qt = put(&mut dev, &vec![0xa5; m * k], ElemType::E4m3, &[m, k]);
    let st = put(&mut dev, &vec![0xff; ms * ks], ElemType::Ue8m0, &[ms, ks]);
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[xt, qt.clone(), st.clone()], &[]),
        seed,
        &EMULATED,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let q = dev.read(qt.addr, m * k).expect("q");
    let img = dev.read(st.addr, ms * ks).expect("sf");
    (x, q, img)
}

#[test]
fn mxfp8_quantises_into_the_gemms_factor_image() {
    use tirx_kernels::row_kernels::quant::mxfp8::quant_mxfp8;
    use tirx_kernels::rows::quant::{mxfp8_image, quantise_mxfp8};
    // 45 rows (a 13-row tail of the second 32-row tile), 208 columns (7 blocks, the last 16
    // wide); 300 × 96 (three 128-row image blocks, the last partial; 3 blocks of a 4-factor
    // cell). Both targets' PTX.
    for (i, (m, k)) in [(45, 208), (300, 96)].into_iter().enumerate() {
        for art in quant_mxfp8::KERNEL.artifacts {
            let (x, q, img) = run_mxfp8(art, m, k, 70 + i as u64);
            let (wq, wf) = quantise_mxfp8(&x, m, k);
            for (j, (g, w)) in q.iter().zip(&wq).enumerate() {
                assert_eq!(g, w, "{} q[{}][{}]", art.config, j / k, j % k);
            }
            // The factors of the rows and blocks the grid covers (past `m` or `k` inside its tiles,
            // 0, 2⁻¹²⁷); the rest of the image is not written (still 0xff).
            let want = mxfp8_image(&wf, m, k, tirx::ue8m0(0xff));
            for (j, (g, w)) in img.iter().zip(&want).enumerate() {
                assert_eq!(*g, w.0, "{} {m}x{k}: image byte {j}", art.config);
            }
        }
    }
}

/// Runs `quant_nvfp4` on `inputs(m, k)` in the emulator: `q` and the factor image poisoned;
/// returns x, q's bytes and the image's.
fn run_nvfp4(m: usize, k: usize, seed: u64) -> (Vec<bf16>, Vec<u8>, Vec<u8>) {
    use tirx_kernels::row_kernels::quant::nvfp4::quant_nvfp4;
    let art = &quant_nvfp4::KERNEL.artifacts[0];
    let x = inputs(m, k, seed);
    let [ms, ks] = [m.div_ceil(128) * 32, k.div_ceil(64) * 16];
    let mut dev = Device::new();
    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    let xt = put(&mut dev, &xb, ElemType::Bf16, &[m, k]);
    let qt = put(
        &mut dev,
        &vec![0xa5; m * k / 2],
        ElemType::E2m1x2,
        &[m, k / 2],
    );
    let st = put(&mut dev, &vec![0xff; ms * ks], ElemType::Ue4m3, &[ms, ks]);
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[xt, qt.clone(), st.clone()], &[]),
        seed,
        &EMULATED,
    )
    .unwrap_or_else(|e| panic!("quant_nvfp4: {e}"));
    let q = dev.read(qt.addr, m * k / 2).expect("q");
    let img = dev.read(st.addr, ms * ks).expect("sf");
    (x, q, img)
}

/// `quant_nvfp4` against `quantise_nvfp4` bit for bit — rows of magnitudes 2⁻²⁰ to 2²⁰ (UE4M3
/// factors subnormal, normal and saturated at 448), a zero row, rows near 1e-38 and 3e38 —
/// with the factor image `nvfp4_image` lays out; tails in M and K (a partial 16-element
/// block, a partial 64-column tile, rows of an odd number of bytes).
#[test]
fn nvfp4_quantises_into_the_gemms_factor_image() {
    use tirx_kernels::rows::quant::{nvfp4_image, quantise_nvfp4};
    for (i, (m, k)) in [(45, 200), (33, 198), (130, 136), (64, 128)]
        .into_iter()
        .enumerate()
    {
        let (x, q, img) = run_nvfp4(m, k, 90 + i as u64);
        let (wq, wf) = quantise_nvfp4(&x, m, k);
        for (j, (g, w)) in q.iter().zip(&wq).enumerate() {
            let (r, b) = (j / (k / 2), j % (k / 2));
            assert_eq!(
                g,
                w,
                "{m}x{k} q[{r}][{b}] from ({}, {}), factor {:?}",
                x[r * k + 2 * b],
                x[r * k + 2 * b + 1],
                wf[r * k.div_ceil(16) + 2 * b / 16]
            );
        }
        let want = nvfp4_image(&wf, m, k, tirx::ue4m3(0xff));
        for (j, (g, w)) in img.iter().zip(&want).enumerate() {
            assert_eq!(*g, w.0, "{m}x{k}: image byte {j}");
        }
    }
}

/// The round trip: A and B quantised by `quant_mxfp8` in the emulator feed
/// `gemm_sm100_mxfp8` there, on the same device memory (the factor images zeroed first, as
/// the kernel's docs ask); D matches the f64 product of the dequantised operands (the
/// reference's E4M3 values times its factors) to the GEMM's own accuracy, and the bf16
/// product of the unquantised inputs to within E4M3's error (2⁻⁴ relative per operand).
#[test]
fn mxfp8_quantised_operands_feed_the_block_scaled_gemm() {
    use tirx_kernels::gemm::mxfp8_tcgen05::gemm_sm100_mxfp8;
    use tirx_kernels::row_kernels::quant::mxfp8::quant_mxfp8;
    use tirx_kernels::rows::quant::quantise_mxfp8;
    let (m, n, k) = (130, 136, 208);
    let quant = quant_mxfp8::KERNEL
        .artifacts
        .iter()
        .find(|a| a.target == tirx::abi::Target::Sm100a)
        .expect("an sm_100a artifact");
    let gemm = gemm_sm100_mxfp8::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "n128")
        .expect("n128");
    let mut rng = Rng::new(81);
    let mut vals = |len: usize| -> Vec<bf16> {
        (0..len)
            .map(|_| bf16::from_f32(rng.unit() * 2f32.powi(rng.range(0, 13) as i32 - 6)))
            .collect()
    };
    let (xa, xb) = (vals(m * k), vals(n * k));
    let mut dev = Device::new();
    let operand = |dev: &mut Device, x: &[bf16], rows: usize| {
        let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        let xt = put(dev, &xb, ElemType::Bf16, &[rows, k]);
        let qt = put(dev, &vec![0xa5; rows * k], ElemType::E4m3, &[rows, k]);
        let shape = [rows.div_ceil(128) * 32, k.div_ceil(128) * 16];
        let st = put(dev, &vec![0; shape[0] * shape[1]], ElemType::Ue8m0, &shape);
        simulate::launch(
            quant.ptx,
            &(quant.signature)(),
            dev,
            (&[xt, qt.clone(), st.clone()], &[]),
            7,
            &EMULATED,
        )
        .expect("quantises");
        (qt, st)
    };
    let (qa, sa) = operand(&mut dev, &xa, m);
    let (qb, sb) = operand(&mut dev, &xb, n);
    let dt = put(&mut dev, &vec![0xff; m * n * 2], ElemType::Bf16, &[m, n]);
    super::sim_exec::sim_launch(gemm, &mut dev, &[qa, qb, sa, sb, dt.clone()], &[], 5)
        .unwrap_or_else(|e| panic!("the GEMM: {e}"));
    let got = simulate::decode(&dev.read(dt.addr, m * n * 2).unwrap(), ElemType::Bf16);
    let deq = |x: &[bf16], rows: usize| -> Vec<f64> {
        let (q, f) = quantise_mxfp8(x, rows, k);
        let kb = k.div_ceil(32);
        (0..rows * k)
            .map(|j| {
                let s = f[(j / k) * kb + (j % k) / 32].to_f64();
                f64::from(tirx::e4m3(q[j]).to_f32()) * s
            })
            .collect()
    };
    let (da, db) = (deq(&xa, m), deq(&xb, n));
    for r in 0..m {
        for c in 0..n {
            let (mut want, mut mag, mut exact) = (0.0, 0.0, 0.0);
            for i in 0..k {
                let p = da[r * k + i] * db[c * k + i];
                want += p;
                mag += p.abs();
                exact += xa[r * k + i].to_f64() * xb[c * k + i].to_f64();
            }
            let g = got[r * n + c];
            let tol = want.abs() * 2f64.powi(-8) + mag * 2f64.powi(-20) + 1e-30;
            assert!(
                (g - want).abs() <= tol,
                "D[{r}][{c}] = {g}, want {want} (±{tol})"
            );
            // Each operand within 2⁻⁴ relative (E4M3's half quantum, no saturation).
            let qtol = mag * 0.14 + tol;
            assert!(
                (g - exact).abs() <= qtol,
                "D[{r}][{c}] = {g}, bf16 product {exact} (±{qtol})"
            );
        }
    }
}

/// The NVFP4 round trip: A and B quantised by `quant_nvfp4` in the emulator feed
/// `gemm_sm100_nvfp4` there, on the same device memory (the factor images zeroed first, as the
/// kernel's docs ask); D matches the f64 product of the dequantised operands (the reference's
/// E2M1 values times its UE4M3 factors) to the GEMM's own accuracy, and the bf16 product of
/// the unquantised inputs to within half of `Σ |a·b|` (a coarse check that the quantised
/// operands are the inputs', not a bound on E2M1's error).
#[test]
fn nvfp4_quantised_operands_feed_the_block_scaled_gemm() {
    use tirx_kernels::gemm::nvfp4_tcgen05::gemm_sm100_nvfp4;
    use tirx_kernels::row_kernels::quant::nvfp4::quant_nvfp4;
    use tirx_kernels::rows::quant::quantise_nvfp4;
    // K = 416: 208-byte rows (TMA's 16-byte strides), a partial 256-value K tile.
    let (m, n, k) = (130, 136, 416);
    let quant = &quant_nvfp4::KERNEL.artifacts[0];
    let gemm = gemm_sm100_nvfp4::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "n128")
        .expect("n128");
    let mut rng = Rng::new(91);
    let mut vals = |len: usize| -> Vec<bf16> {
        (0..len)
            .map(|_| bf16::from_f32(rng.unit() * 2f32.powi(rng.range(0, 7) as i32 - 2)))
            .collect()
    };
    let (xa, xb) = (vals(m * k), vals(n * k));
    let mut dev = Device::new();
    let operand = |dev: &mut Device, x: &[bf16], rows: usize| {
        let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        let xt = put(dev, &xb, ElemType::Bf16, &[rows, k]);
        let qt = put(
            dev,
            &vec![0xa5; rows * k / 2],
            ElemType::E2m1x2,
            &[rows, k / 2],
        );
        let shape = [rows.div_ceil(128) * 32, k.div_ceil(64) * 16];
        let st = put(dev, &vec![0; shape[0] * shape[1]], ElemType::Ue4m3, &shape);
        simulate::launch(
            quant.ptx,
            &(quant.signature)(),
            dev,
            (&[xt, qt.clone(), st.clone()], &[]),
            7,
            &EMULATED,
        )
        .expect("quantises");
        (qt, st)
    };
    let (qa, sa) = operand(&mut dev, &xa, m);
    let (qb, sb) = operand(&mut dev, &xb, n);
    let dt = put(&mut dev, &vec![0xff; m * n * 2], ElemType::Bf16, &[m, n]);
    super::sim_exec::sim_launch(gemm, &mut dev, &[qa, qb, sa, sb, dt.clone()], &[], 5)
        .unwrap_or_else(|e| panic!("the GEMM: {e}"));
    let got = simulate::decode(&dev.read(dt.addr, m * n * 2).unwrap(), ElemType::Bf16);
    let deq = |x: &[bf16], rows: usize| -> Vec<f64> {
        let (q, f) = quantise_nvfp4(x, rows, k);
        let kb = k.div_ceil(16);
        (0..rows * k)
            .map(|j| {
                let s = f[(j / k) * kb + (j % k) / 16].to_f64();
                tirx::e2m1x2(q[j / 2]).to_f64()[j % 2] * s
            })
            .collect()
    };
    let (da, db) = (deq(&xa, m), deq(&xb, n));
    for r in 0..m {
        for c in 0..n {
            let (mut want, mut mag, mut exact, mut xmag) = (0.0, 0.0, 0.0, 0.0);
            for i in 0..k {
                let p = da[r * k + i] * db[c * k + i];
                want += p;
                mag += p.abs();
                let e = xa[r * k + i].to_f64() * xb[c * k + i].to_f64();
                exact += e;
                xmag += e.abs();
            }
            let g = got[r * n + c];
            let tol = want.abs() * 2f64.powi(-8) + mag * 2f64.powi(-20) + 1e-30;
            assert!(
                (g - want).abs() <= tol,
                "D[{r}][{c}] = {g}, want {want} (±{tol})"
            );
            // Coarse: the product's sign and size.
            let qtol = xmag * 0.5 + tol;
            assert!(
                (g - exact).abs() <= qtol,
                "D[{r}][{c}] = {g}, bf16 product {exact} (±{qtol})"
            );
        }
    }
}

/// The Hopper round trip: A and B quantised row-wise by `quant_rowwise` in the emulator feed
/// `gemm_sm90_fp8_rowwise` (the `ScaleRows` path: D = diag(sa)·Qa·Qbᵀ·diag(sb)) there; D
/// matches the f64 product of the reference's E4M3 values and scales to the GEMM's accuracy
/// (`fp8_ref::check`), and the bf16 product of the unquantised inputs to within E4M3's error.
#[test]
fn rowwise_quantised_operands_feed_the_hopper_fp8_gemm() {
    use tirx_kernels::gemm::fp8::kernels::gemm_sm90_fp8_rowwise;
    use tirx_kernels::gemm::fp8_ref::{Fp8Scales, check, scaled_mm_f64};
    use tirx_kernels::rows::quant::quantise_e4m3;
    let (m, n, k) = (136, 136, 208);
    let quant = &quant_rowwise::KERNEL.artifacts[0];
    let gemm = gemm_sm90_fp8_rowwise::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "n128")
        .expect("n128");
    let mut rng = Rng::new(91);
    let mut vals = |len: usize| -> Vec<bf16> {
        (0..len)
            .map(|_| bf16::from_f32(rng.unit() * 2f32.powi(rng.range(0, 13) as i32 - 6)))
            .collect()
    };
    let (xa, xb) = (vals(m * k), vals(n * k));
    let mut dev = Device::new();
    let operand = |dev: &mut Device, x: &[bf16], rows: usize| {
        let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        let xt = put(dev, &xb, ElemType::Bf16, &[rows, k]);
        let qt = put(dev, &vec![0xa5; rows * k], ElemType::E4m3, &[rows, k]);
        let poison: Vec<u8> = (0..rows).flat_map(|_| f32::NAN.to_le_bytes()).collect();
        let st = put(dev, &poison, ElemType::F32, &[rows]);
        simulate::launch(
            quant.ptx,
            &(quant.signature)(),
            dev,
            (&[xt, qt.clone(), st.clone()], &[]),
            9,
            &EMULATED,
        )
        .expect("quantises");
        (qt, st)
    };
    let (qa, sa) = operand(&mut dev, &xa, m);
    let (qb, sb) = operand(&mut dev, &xb, n);
    let dt = put(&mut dev, &vec![0xff; m * n * 2], ElemType::Bf16, &[m, n]);
    super::sim_exec::sim_launch(gemm, &mut dev, &[qa, qb, sa, sb, dt.clone()], &[], 5)
        .unwrap_or_else(|e| panic!("the GEMM: {e}"));
    let got = simulate::decode(&dev.read(dt.addr, m * n * 2).unwrap(), ElemType::Bf16);
    let values = |q: &[u8]| -> Vec<f64> {
        q.iter()
            .map(|&b| f64::from(tirx::e4m3(b).to_f32()))
            .collect()
    };
    let (wqa, wsa) = quantise_e4m3(&xa, m, k, k);
    let (wqb, wsb) = quantise_e4m3(&xb, n, k, k);
    let scales = Fp8Scales::Rows(wsa, wsb);
    let (want, mag) = scaled_mm_f64(&values(&wqa), &values(&wqb), (m, n, k), &scales);
    check(&got, (&want, &mag), (k, ElemType::Bf16, true), n)
        .unwrap_or_else(|e| panic!("against the dequantised product: {e}"));
    for r in 0..m {
        for c in 0..n {
            let (mut exact, mut size) = (0.0, 0.0);
            for i in 0..k {
                let p = xa[r * k + i].to_f64() * xb[c * k + i].to_f64();
                exact += p;
                size += p.abs();
            }
            let g = got[r * n + c];
            let tol = size * 0.14 + exact.abs() * 2f64.powi(-8);
            assert!(
                (g - exact).abs() <= tol,
                "D[{r}][{c}] = {g}, bf16 product {exact} (±{tol})"
            );
        }
    }
}

/// An f32 tile stored into an E5M2 tensor: rounded to nearest even, saturating at ±57344.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn store_e5m2(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<e5m2>) {
    let t = regs::<f32>([4, 1024], layout = blocked(vec = 8));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), t * 3.0);
}

#[test]
fn an_f32_tile_stores_into_e5m2_rounded_and_saturated() {
    // Rows of magnitudes up to 2²⁰ (×3 saturates), 1000 columns (vectors) and 1003 (bytes).
    for (m, n) in [(11, 1000), (11, 1003)] {
        let x = inputs(m, n, 71);
        let mut dev = Device::new();
        let xb: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        let xt = put(&mut dev, &xb, ElemType::Bf16, &[m, n]);
        let yt = put(&mut dev, &vec![0xa5; m * n], ElemType::E5m2, &[m, n]);
        let art = &store_e5m2::KERNEL.artifacts[0];
        simulate::launch(
            art.ptx,
            &(art.signature)(),
            &mut dev,
            (&[xt, yt.clone()], &[]),
            3,
            &EMULATED,
        )
        .expect("runs");
        let y = dev.read(yt.addr, m * n).expect("y");
        for (j, (&g, v)) in y.iter().zip(&x).enumerate() {
            let want = tirx::e5m2::from_f32(v.to_f32() * 3.0).0;
            assert_eq!(g, want, "{m}x{n}: y[{}][{}] of {v}", j / n, j % n);
        }
        assert!(art.ptx.contains("cvt.rn.satfinite.e5m2x2.f32"));
    }
}

/// A row longer than the config's tile, and scales of the wrong shape, are refused by the
/// launch planner before anything runs (`RuntimeError::ShapeAssert`), not quantised in part.
#[test]
fn the_quantisers_refuse_shapes_they_do_not_cover() {
    use tirx::RuntimeError;
    use tirx_kernels::row_kernels::quant::mxfp8::quant_mxfp8;
    use tirx_kernels::simulate::LaunchError;
    let refused = |art: &KernelArtifact, shapes: [&[usize]; 3], elems: [ElemType; 3]| {
        let mut dev = Device::new();
        let ts: Vec<_> = shapes
            .iter()
            .zip(elems)
            .map(|(s, e)| {
                let len = s.iter().product::<usize>() * e.bytes() as usize;
                put(&mut dev, &vec![0; len], e, s)
            })
            .collect();
        match simulate::launch(
            art.ptx,
            &(art.signature)(),
            &mut dev,
            (&ts, &[]),
            1,
            &EMULATED,
        ) {
            Err(LaunchError::Plan(RuntimeError::ShapeAssert { assertion, .. })) => assertion,
            other => panic!("{}: expected a refused shape, got {other:?}", art.config),
        }
    };
    let (b, e4, f) = (ElemType::Bf16, ElemType::E4m3, ElemType::F32);
    // c1k holds 1024 columns, not 1025.
    let a = refused(
        &quant_rowwise::KERNEL.artifacts[0],
        [&[8, 1025], &[8, 1025], &[8]],
        [b, e4, f],
    );
    assert!(a.starts_with("N <= C"), "{a}");
    // 300 columns take 3 block scales a row, not 2.
    let a = refused(
        &quant_block::KERNEL.artifacts[0],
        [&[8, 300], &[8, 300], &[8, 2]],
        [b, e4, f],
    );
    assert!(a.starts_with("NB == cdiv(N, 128)"), "{a}");
    // A plain [M, K / 32] factor matrix is not the GEMM's image.
    let a = refused(
        &quant_mxfp8::KERNEL.artifacts[0],
        [&[64, 256], &[64, 256], &[64, 8]],
        [b, e4, ElemType::Ue8m0],
    );
    assert!(a.contains("factor image"), "{a}");
    // NVFP4: an odd K has no [M, K / 2] byte matrix, and the image is per 64 columns.
    let nv = &tirx_kernels::row_kernels::quant::nvfp4::quant_nvfp4::KERNEL.artifacts[0];
    let (e2, u4) = (ElemType::E2m1x2, ElemType::Ue4m3);
    let a = refused(nv, [&[64, 129], &[64, 64], &[32, 48]], [b, e2, u4]);
    assert!(a.starts_with("2 * KB == K"), "{a}");
    let a = refused(nv, [&[64, 256], &[64, 128], &[32, 32]], [b, e2, u4]);
    assert!(a.contains("factor image"), "{a}");
}
