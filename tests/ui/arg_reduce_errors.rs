use tirx::prelude::*;

// An index reduction of a predicate, and along an axis that is not 0 or 1.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1), grid = (M * 2, 1))]
pub fn k(#[shape(M, N)] x: Tensor<f32>) {
    let t = regs::<f32>([1, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x / 2, cta_rank));
    let a = argmax(t > 0.0, axis = 1);
    let b = argmin(t, axis = 2);
}

fn main() {}
