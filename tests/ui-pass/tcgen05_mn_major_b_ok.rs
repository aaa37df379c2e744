use tirx::prelude::*;

// The twin of `ui/tcgen05_mn_major_a.rs`: A K-major, B MN-major (`major = mn`, FA4's V read
// as the B operand of P·V) is the tcgen05 MMA's transposed-B form.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([128, 64], swizzle = B128, major = mn);
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
    }
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
