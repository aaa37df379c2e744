use tirx::prelude::*;

// `z` may still be read (or written) by the grid before: storing to it before the wait
// can overwrite what that grid has yet to read.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn store_before_wait(
    #[independent]
    #[shape(M, N)]
    w: Tensor<f32>,
    #[shape(M, N)] y: Tensor<f32>,
    #[shape(M, N)] z: Tensor<f32>,
) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    let u = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, w.tile(cta.x, 0));
    copy(z.tile(cta.x, 0), t);
    grid::dependency_wait();
    copy(u, y.tile(cta.x, 0));
    copy(z.tile(cta.x, 0), t + u);
}

fn main() {}
