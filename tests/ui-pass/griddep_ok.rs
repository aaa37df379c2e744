use tirx::prelude::*;

// Every access of the previous grid's output after the wait, on every path.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn access_after_wait(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] z: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    if cta.x == 0 {
        grid::dependency_wait();
    } else {
        grid::dependency_wait();
    }
    copy(t, y.tile(cta.x, 0));
    copy(z.tile(cta.x, 0), t + 1.0);
}

// The weights no kernel of the stream writes are prefetched by TMA before the wait,
// overlapping the previous grid's tail; the activations are read after it.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn independent_read_before_wait(
    #[independent]
    #[shape(M, N)]
    w: Tensor<f32>,
    #[shape(M, N)] y: Tensor<f32>,
    #[shape(M, N)] z: Tensor<f32>,
) {
    let w_s = smem::<f32>([32, 64]);
    let bar = mbarrier();
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    let u = regs::<f32>([32, 64], layout = blocked(vec = 4));
    #[scope(thread = 0)]
    {
        tma::load(w_s, w.tile(cta.x, 0), bar);
    }
    grid::dependency_wait();
    copy(u, y.tile(cta.x, 0));
    bar.wait(0);
    copy(t, w_s);
    copy(z.tile(cta.x, 0), t * u);
}

// No wait: launched as always (after the work before it), nothing is checked.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn no_wait(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] z: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, y.tile(cta.x, 0));
    copy(z.tile(cta.x, 0), t);
}

fn main() {
    assert!(access_after_wait::ARTIFACTS[0].ptx.contains("griddepcontrol.wait;"));
    assert!(independent_read_before_wait::ARTIFACTS[0].ptx.contains("griddepcontrol.wait;"));
    assert!(!no_wait::ARTIFACTS[0].ptx.contains("griddepcontrol"));
}
