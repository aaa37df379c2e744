//! `argmax`/`argmin` on the GPU (feature `gpu`): what `tests/arg_reduce.rs` checks in the
//! emulator — ties to the lowest index, −0 equal to +0, a NaN the extreme of both (torch's
//! rule) — on hardware, with negative NaNs among the values: the keys rely on `x + 0` giving
//! every NaN one bit pattern, as the emulator models `add.f32`; this test checks that on the
//! GPU.

use tirx::Runtime;
use tirx_kernels::reference::Rng;

use super::arg_reduce::{arg_rows, nan32, tied, torch_arg};

#[test]
fn argmax_argmin_match_torch_on_the_gpu_with_negative_nans() {
    const M: usize = 45;
    const N: usize = 61;
    let rt = Runtime::new(0).expect("the gpu feature needs a GPU");
    let mut x = tied(&mut Rng::new(11), M, N, true);
    for i in (7..M * N).step_by(97) {
        x[i] = f32::from_bits(0xffc0_0001); // a negative NaN with a payload
    }
    let art = tirx::select(arg_rows::KERNEL.artifacts, "default", rt.target().unwrap()).unwrap();
    let xt = rt.upload(&x, &[M, N]).unwrap();
    let mut imax = rt.zeros::<u32>(&[M, N]).unwrap();
    let mut imin = rt.zeros::<u32>(&[M, N]).unwrap();
    let mut rest = rt.zeros::<f32>(&[M, N]).unwrap();
    rt.poison(&mut imax).unwrap();
    rt.poison(&mut imin).unwrap();
    rt.poison(&mut rest).unwrap();
    rt.launch(art, &[xt.view(), imax.view(), imin.view(), rest.view()])
        .unwrap();
    let (gmax, gmin) = (rt.download(&imax).unwrap(), rt.download(&imin).unwrap());
    for r in 0..M {
        let row = &x[r * N..(r + 1) * N];
        let (amax, amin) = (torch_arg(row, true, nan32), torch_arg(row, false, nan32));
        for c in 0..N {
            assert_eq!(
                gmax[r * N + c],
                amax + c as u32,
                "argmax at ({r}, {c}), row {row:?}"
            );
            assert_eq!(
                gmin[r * N + c],
                amin + c as u32,
                "argmin at ({r}, {c}), row {row:?}"
            );
        }
    }
}

/// `argmax`/`argmin` across the CTAs of a 4-CTA cluster on the GPU (distributed shared
/// memory, the rank's index offset), against torch's rule on rows full of ties.
#[test]
fn argmax_argmin_across_a_cluster_match_torch_on_the_gpu() {
    use super::arg_reduce::arg_cluster;
    const M: usize = 7;
    let rt = Runtime::new(0).expect("the gpu feature needs a GPU");
    for (config, cs) in [("x2", 2usize), ("x4", 4)] {
        let n = (cs - 1) * 512 + 77;
        let x = tied(&mut Rng::new(60 + cs as u64), M, n, true);
        let art =
            tirx::select(arg_cluster::KERNEL.artifacts, config, rt.target().unwrap()).unwrap();
        let xt = rt.upload(&x, &[M, n]).unwrap();
        let mut imax = rt.zeros::<u32>(&[M, n]).unwrap();
        let mut imin = rt.zeros::<u32>(&[M, n]).unwrap();
        rt.poison(&mut imax).unwrap();
        rt.poison(&mut imin).unwrap();
        rt.launch(art, &[xt.view(), imax.view(), imin.view()])
            .unwrap();
        let (gmax, gmin) = (rt.download(&imax).unwrap(), rt.download(&imin).unwrap());
        for r in 0..M {
            let row = &x[r * n..(r + 1) * n];
            let (amax, amin) = (torch_arg(row, true, nan32), torch_arg(row, false, nan32));
            for rank in 0..cs {
                let c = r * n + rank * 512;
                assert_eq!(gmax[c], amax, "{config}: argmax of row {r} in rank {rank}");
                assert_eq!(gmin[c], amin, "{config}: argmin of row {r} in rank {rank}");
            }
        }
    }
}
