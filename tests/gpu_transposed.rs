//! GPU tests of the transposed-tile GEMM (feature `gpu`, issue #32): every config of
//! `gemm_sm90_t` (D = A·Bᵀ computed as Dᵀ = B·Aᵀ, stored through a transposing `stmatrix` and
//! a TMA store) at the M = 129…255 shapes of the issue and at odd ones (tails in M, N and K),
//! random data, D poisoned first, against the f64 reference within the bounds the other GPU
//! GEMM tests use; the `nn` configs (B given K×N) the same way.

use tirx::Runtime;
use tirx::Target;
use tirx_kernels::catalogue;
use tirx_kernels::gemm::check;
use tirx_kernels::gemm::host::GemmLaunch;
use tirx_kernels::simulate::b_is_k_by_n;

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// The shapes (M between 129 and 255) and odd ones: tails in M, in N (a multiple of
/// 8, D's rows 16-byte aligned for the TMA store) and in K.
const SHAPES: [(usize, usize, usize); 7] = [
    (160, 4096, 4096),
    (192, 4096, 4096),
    (224, 4096, 1000),
    (150, 264, 200),
    (200, 136, 1000),
    (1, 8, 8),
    (257, 520, 72),
];

#[test]
fn every_transposed_config_matches_the_f64_reference() {
    let rt = rt();
    let kernel = catalogue::find("gemm_sm90_t").expect("shipped");
    let launch = GemmLaunch::of(kernel);
    for art in kernel
        .artifacts
        .iter()
        .filter(|a| a.target == Target::Sm90a)
    {
        let config = art.config;
        for (i, &(m, n, k)) in SHAPES.iter().enumerate() {
            let seed = 700 + i as u64;
            let r = if b_is_k_by_n(art) {
                check::check_gemm_nn(&rt, launch, config, m, n, k, seed)
            } else {
                check::check_gemm(&rt, launch, config, m, n, k, seed)
            }
            .expect("runs");
            assert!(
                r.ok,
                "gemm_sm90_t/{config} {m}x{n}x{k}: relative error {:.3e}\n{}",
                r.error, r.blocks
            );
        }
    }
}
