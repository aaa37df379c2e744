use tirx::prelude::*;

// A reduction across the cluster in a kernel without one, and `across` with something else
// than `cluster`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (M, 1))]
pub fn k(#[shape(M, N)] x: Tensor<bf16>) {
    let t = regs::<f32>([1, 1024], layout = blocked(vec = 8));
    copy(t, x.tile(cta.x, 0));
    let m = reduce_max(t, axis = 1, across = cluster);
    let s = reduce_sum(t, axis = 1, across = warp);
}

fn main() {}
