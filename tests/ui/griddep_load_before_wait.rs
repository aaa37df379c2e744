use tirx::prelude::*;

// The kernel waits for the grid before it, so it may start while that grid still writes
// `y`: reading `y` before the wait races with it.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn load_before_wait(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] z: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, y.tile(cta.x, 0));
    grid::dependency_wait();
    copy(z.tile(cta.x, 0), t + 1.0);
}

fn main() {}
