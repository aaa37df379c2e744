use tirx::prelude::*;

// Scalar arguments are named as op arguments; a name that is no scalar parameter, a `beta`
// without `alpha`, and a scaled copy no variant can do are errors at the user's tokens.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] d: Tensor<bf16>, alpha: f32) {
    let acc = regs::<f32>([64, 64]);
    let d_s = smem::<bf16>([1, 64, 64], swizzle = B128);
    copy(d_s, acc, alpha = gamma);
    copy(d_s, acc, beta = alpha);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn global_scaled(#[shape(M, N)] d: Tensor<bf16>, alpha: f32) {
    let acc = regs::<f32>([64, 64]);
    copy(d.tile(0, 0), acc, alpha = alpha);
}

fn main() {}
