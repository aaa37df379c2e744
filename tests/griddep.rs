//! Programmatic dependent launch (`grid::launch_dependents()`, `grid::dependency_wait()`,
//! PTX ISA §9.7.13 `griddepcontrol`): the ops lower to their instructions on both targets and
//! ptxas assembles them; a kernel that waits is what the runtime launches as a programmatic
//! dependent (it looks for `griddepcontrol.wait` in the PTX), and the shipped two-launch plans
//! use them — the split-K partial products and the split-KV decode signal, the reduces and
//! the combine wait. The emulator runs launches one after another, so these plans' emulator
//! tests (`sim_splitk`, `sim_gemv`, the decode tests) run through the ops as no-ops.

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_ptx::tools::{find_ptxas, tool_for_test};

/// The first kernel of a plan: `y = 2·x`, letting its dependent be scheduled as it starts.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn first_of_two(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    grid::launch_dependents();
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), t * 2.0);
}

/// The second: waits for the first before reading `y`, in both targets.
#[tile_kernel(targets(sm_90a, sm_100a), threads = 128, grid = (cdiv(M, 32), 1))]
pub fn second_of_two(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] z: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    grid::dependency_wait();
    copy(t, y.tile(cta.x, 0));
    copy(z.tile(cta.x, 0), t + 1.0);
}

fn lines(art: &KernelArtifact, inst: &str) -> usize {
    art.ptx.lines().filter(|l| l.trim() == inst).count()
}

#[test]
fn the_ops_lower_to_griddepcontrol_once_each() {
    let first = &first_of_two::KERNEL.artifacts[0];
    assert_eq!(lines(first, "griddepcontrol.launch_dependents;"), 1);
    assert_eq!(lines(first, "griddepcontrol.wait;"), 0);
    for art in second_of_two::KERNEL.artifacts {
        assert_eq!(lines(art, "griddepcontrol.wait;"), 1, "{:?}", art.target);
        assert_eq!(lines(art, "griddepcontrol.launch_dependents;"), 0);
        // The wait comes before the first global load.
        let ptx = art.ptx;
        let wait = ptx.find("griddepcontrol.wait;").expect("the wait");
        let load = ptx.find("ld.global").expect("a global load");
        assert!(
            wait < load,
            "{:?}: the wait is not before the load",
            art.target
        );
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for art in first_of_two::KERNEL
        .artifacts
        .iter()
        .chain(second_of_two::KERNEL.artifacts)
    {
        let c = check_artifact("griddep", art).expect("assembles");
        assert!(c.problems.is_empty(), "{:?}: {:?}", art.target, c.problems);
    }
}

/// Every reduce of a split-K plan and the decode combine wait for the kernel before them;
/// every partial-product kernel and the split decode signal their dependents. A reduce that
/// did not wait would be launched as an ordinary kernel (no overlap, still correct); one that
/// waited after reading the workspace would read partial sums — the order is asserted.
#[test]
fn the_two_launch_plans_signal_and_wait() {
    use tirx_kernels::attention::hopper_decode::kernels as dec;
    use tirx_kernels::gemm::{fp8_splitk, splitk};
    let waits = [
        &splitk::reduce::splitk_reduce::KERNEL,
        &splitk::reduce::splitk_reduce_scaled::KERNEL,
        &splitk::reduce::splitk_reduce_bias::KERNEL,
        &splitk::reduce::splitk_reduce_bias_res::KERNEL,
        &splitk::reduce::splitk_reduce_t::KERNEL,
        &splitk::reduce::splitk_reduce_t_scaled::KERNEL,
        &splitk::reduce::splitk_reduce_t_bias::KERNEL,
        &splitk::reduce::splitk_reduce_t_bias_res::KERNEL,
        &splitk::reduce::splitk_reduce_rowwise::KERNEL,
        &dec::attention_decode_combine::KERNEL,
    ];
    for k in waits {
        for art in k.artifacts {
            assert_eq!(
                lines(art, "griddepcontrol.wait;"),
                1,
                "{}/{}",
                k.name,
                art.config
            );
            // The row-wise reduce loads its scales first (the caller's inputs, complete before
            // the partial product started, declared `#[independent]`), overlapping the wait;
            // every other one reads nothing before it (the build checks both: a dependent
            // tensor accessed before the wait is a compile error, `ui/griddep_*.rs`).
            if k.name == "splitk_reduce_rowwise" {
                continue;
            }
            let wait = art.ptx.find("griddepcontrol.wait;").unwrap();
            assert!(
                art.ptx.find("ld.global").is_none_or(|l| wait < l),
                "{}/{}: a global load before the wait",
                k.name,
                art.config
            );
        }
    }
    let signals = [
        &splitk::kernels::gemm_sm90_splitk::KERNEL,
        &splitk::kernels::gemm_sm90_splitk_t::KERNEL,
        &fp8_splitk::kernels::gemm_sm90_fp8_splitk::KERNEL,
        &dec::attention_sm90_decode::KERNEL,
        &dec::attention_sm90_decode_gqa::KERNEL,
    ];
    for k in signals {
        for art in k.artifacts {
            assert_eq!(
                lines(art, "griddepcontrol.launch_dependents;"),
                1,
                "{}/{}",
                k.name,
                art.config
            );
            assert_eq!(
                lines(art, "griddepcontrol.wait;"),
                0,
                "{}/{}",
                k.name,
                art.config
            );
        }
    }
}

/// On the GPU: `second_of_two` (launched as a programmatic dependent) right after
/// `first_of_two`, 200 times on alternating buffers with new data each time, reads the first
/// kernel's complete output every time (`z = 2·x + 1` exactly in f32), the outputs poisoned
/// in between.
#[cfg(feature = "gpu")]
#[test]
fn a_dependent_reads_the_kernel_before_complete_on_the_gpu() {
    use tirx::Runtime;
    use tirx_kernels::reference::Rng;
    let rt = Runtime::new(0).expect("the gpu feature needs a GPU");
    let (m, n) = (4100, 64);
    let mut rng = Rng::new(31);
    let mut ys = [(); 2].map(|_| rt.zeros::<f32>(&[m, n]).unwrap());
    let mut zs = [(); 2].map(|_| rt.zeros::<f32>(&[m, n]).unwrap());
    for i in 0..200 {
        let host: Vec<f32> = (0..m * n).map(|_| rng.unit() * 4.0).collect();
        let x = rt.upload(&host, &[m, n]).unwrap();
        let (y, z) = (&mut ys[i % 2], &mut zs[i % 2]);
        rt.poison(y).unwrap();
        rt.poison(z).unwrap();
        first_of_two::launch(&rt, "default", &x, y).unwrap();
        second_of_two::launch(&rt, "default", y, z).unwrap();
        if i % 25 == 24 {
            let got = rt.download(z).unwrap();
            let bad = got
                .iter()
                .zip(&host)
                .filter(|(g, h)| **g != **h * 2.0 + 1.0)
                .count();
            assert_eq!(
                bad, 0,
                "round {i}: {bad} elements read before the first kernel wrote them"
            );
        }
    }
}
