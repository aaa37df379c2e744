//! wgmma with an MN-major A (`imm-trans-a`, issue #32) through the language, in the emulator:
//! A given K×M (`#[major(mn)]`) loaded by TMA into an MN-major tile of two 64-row chunks (the
//! second 64-row slice of the MMA is the second chunk), three K tiles (the descriptor's K
//! advance of 16 rows = 2048 B per K-step, and the tile's base per K tile), tails in M, N and
//! K, random bf16 data, D poisoned, against the f64 product. The decode plan
//! `gemm_sm90_splitk_t`'s `nn` configs use the same path at M = 64 (`sim_splitk.rs`).

use tirx::prelude::*;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, decode, put, random_values};
use tirx_sim::Device;

/// D = A·Bᵀ with A given K×M (read MN-major) and B given N×K, one warpgroup, one 128 × 64
/// tile a CTA, f32 out.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 128), 1))]
pub fn mn_a_gemm(
    #[shape(M, K)]
    #[major(mn)]
    a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128, major = mn);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let acc = regs::<f32>([128, 64]);
    let bar = mbarrier();
    for k in 0..cdiv(K, 64) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), bar);
            tma::load(b_s, b.tile(0, k), bar);
        }
        bar.wait(k % 2);
        wgmma::fence();
        wgmma::mma(acc, a_s, b_s, accumulate = k > 0);
        wgmma::commit();
        wgmma::wait(0);
        sync_threads();
    }
    copy(d.tile(cta.x, 0), acc);
}

#[test]
fn an_mn_major_a_multiplies_in_the_emulator() {
    for (i, &(m, n, k)) in [(200usize, 56usize, 136usize), (128, 64, 64), (8, 8, 192)]
        .iter()
        .enumerate()
    {
        let mut rng = Rng::new(300 + i as u64);
        // A as stored: K×M row-major (element (p, r) is A[r][p]); B N×K.
        let (ab, av) = random_values(&mut rng, ElemType::Bf16, k * m);
        let (bb, bv) = random_values(&mut rng, ElemType::Bf16, n * k);
        let mut dev = Device::new();
        let ts = [
            put(&mut dev, &ab, ElemType::Bf16, &[k, m]),
            put(&mut dev, &bb, ElemType::Bf16, &[n, k]),
            put(&mut dev, &vec![0xff; m * n * 4], ElemType::F32, &[m, n]),
        ];
        simulate::run(&mn_a_gemm::KERNEL.artifacts[0], &mut dev, &ts, &[])
            .unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
        let got = decode(&dev.read(ts[2].addr, m * n * 4).expect("D"), ElemType::F32);
        for r in 0..m {
            for c in 0..n {
                let prods = (0..k).map(|p| av[p * m + r] * bv[c * k + p]);
                let want: f64 = prods.clone().sum();
                let mag: f64 = prods.map(f64::abs).sum();
                let g = got[r * n + c];
                assert!(
                    (g - want).abs() <= 1e-5 * mag + 1e-30,
                    "{m}x{n}x{k} D[{r}][{c}] = {g}, want {want}"
                );
            }
        }
    }
}
