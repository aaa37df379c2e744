use tirx::prelude::*;

// B given K×N is read MN-major (`major = mn`); A must stay K-major, so an MN-major A is a
// dispatch error at the mma, with every candidate's reason.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128, major = mn);
    let b_s = smem::<bf16>([128, 64], swizzle = B128, major = mn);
    let acc = regs::<f32>([64, 128]);
    #[scope(warpgroup = 0)]
    {
        wgmma::mma(acc, a_s, b_s, accumulate = false);
    }
}

fn main() {}
