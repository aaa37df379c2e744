use tirx::prelude::*;

// A TMA load issued before the wait reads the previous grid's output too early, even when
// its barrier is waited on after the grid dependency wait.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn tma_load_before_wait(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] z: Tensor<f32>) {
    let s = smem::<f32>([32, 64]);
    let bar = mbarrier();
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    #[scope(thread = 0)]
    {
        tma::load(s, y.tile(cta.x, 0), bar);
    }
    grid::dependency_wait();
    bar.wait(0);
    copy(t, s);
    copy(z.tile(cta.x, 0), t);
}

fn main() {}
