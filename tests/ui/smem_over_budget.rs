use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1), configs(default = (STAGES = 8)))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let a_s = smem::<bf16>([STAGES, 128, 64], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, 128, 64], swizzle = B128);
}

fn main() {}
