use tirx::prelude::*;

// An MN-major tile (`major = mn`) holds 64-element chunks laid out for an MMA to read
// transposed; TMA moves boxes without transposing, so neither a load from a K-major tensor
// into it nor a store from it to a K-major tensor is the copy the user wrote.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(N, K)] b: Tensor<bf16>, #[shape(M, N)] d: Tensor<bf16>) {
    let mn = smem::<bf16>([2, 128, 64], swizzle = B128, major = mn);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(mn[0], b.tile(0, 0), bar);
        tma::store(d.tile(0, 0), mn[1]);
    }
}

fn main() {}
