//! Register tiles to and from tensor memory (`tmem_load` / `tmem_store`, sm_100a): a kernel
//! built with the same macro as the shipped ones takes a tcgen05 accumulator into registers,
//! computes on it, writes it back and stores it — assembled by ptxas with `LDTM` and `STTM` in
//! its SASS, and run in the emulator against the f64 reference (no Blackwell GPU here).

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = 2·(A·Bᵀ) + 1 for one 128×64 tile (K = 64): the accumulator through a register tile.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn tmem_roundtrip(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 64]);
    let t = regs::<f32>([128, 64], layout = tmem_32x32b);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), loaded);
        tma::load(b_s, b.tile(0, 0), loaded);
    }
    loaded.wait(0);
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(t, acc);
    t = t * 2.0 + 1.0;
    copy(acc, t);
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

#[test]
fn a_tmem_tile_moves_through_registers_with_ldtm_and_sttm() {
    let art = &tmem_roundtrip::KERNEL.artifacts[0];
    assert!(art.ptx.contains("tcgen05.ld.sync.aligned.32x32b.x32.b32"));
    assert!(art.ptx.contains("tcgen05.st.sync.aligned.32x32b.x32.b32"));
    assert!(art.ptx.contains("tcgen05.wait::st.sync.aligned"));
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("tmem_roundtrip", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    let has = |op: &str| c.sass.keys().any(|k| k.starts_with(op));
    assert!(has("LDTM") && has("STTM"), "{:?}", c.sass);
}

#[test]
fn a_tmem_tile_computed_in_registers_matches_the_reference_in_the_emulator() {
    let art = &tmem_roundtrip::KERNEL.artifacts[0];
    let (m, n, k) = (128usize, 64usize, 64usize);
    let mut rng = Rng::new(77);
    let a = rng.bf16s(m * k);
    let b = rng.bf16s(n * k);
    for seed in [1, 2, 3] {
        let mut dev = Device::new();
        let ta = upload(&mut dev, &a, &[m, k]);
        let tb = upload(&mut dev, &b, &[n, k]);
        let td = upload(&mut dev, &[], &[m, n]);
        sim_launch(art, &mut dev, &[ta, tb, td.clone()], &[], seed)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let got = download(&dev, &td);
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|x| a[i * k + x].to_f64() * b[j * k + x].to_f64())
                    .sum();
                let want = 2.0 * dot + 1.0;
                let g = got[i * n + j].to_f64();
                // bf16 output: half an ulp of the value, plus the f32 accumulation.
                let tol = want.abs() * 2f64.powi(-8) + 1e-4 * (1.0 + dot.abs());
                assert!(
                    (g - want).abs() <= tol,
                    "seed {seed} ({i}, {j}): {g} vs {want}"
                );
            }
        }
    }
}
