use tirx::prelude::*;

// Constants that cannot be right: a division by a config constant that is zero (the dividend
// known only at run time), and a constant grid that is not whole clusters.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1), configs(default = (Z = 0)))]
pub fn by_zero(#[shape(M, N)] x: Tensor<bf16>) {
    let t = regs::<f32>([1, 1024], layout = blocked(vec = 8));
    copy(t, x.tile(N / Z, 0));
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1), grid = (3, 1))]
pub fn odd_grid(#[shape(M, N)] x: Tensor<bf16>) {
    let t = regs::<f32>([1, 1024], layout = blocked(vec = 8));
    copy(t, x.tile(cta.x, 0));
}

fn main() {}
