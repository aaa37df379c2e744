use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([128, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
    }
}

fn main() {}
