use tirx::prelude::*;

// tcgen05 reads B MN-major (`major = mn`, FA4's V) but A K-major only: an MN-major A is a
// dispatch error at the mma, with every candidate's reason.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128, major = mn);
    let b_s = smem::<bf16>([128, 64], swizzle = B128, major = mn);
    let acc = tmem::<f32>([128, 128]);
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
    }
}

fn main() {}
