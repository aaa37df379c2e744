use tirx::prelude::*;

// The wait is in one branch only: the CTAs that skip it read `y` unwaited. The rule is
// per path, not per condition: an access must come after a wait on every path to it.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn branch_skips_wait(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] z: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    if cta.x < M / 64 {
        grid::dependency_wait();
    }
    copy(t, y.tile(cta.x, 0));
    copy(z.tile(cta.x, 0), t);
}

fn main() {}
