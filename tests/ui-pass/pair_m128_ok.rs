use tirx::prelude::*;

// M = 128 across the pair: 64 rows of A and of D per CTA, D in the 2x2 data path
// (`tmem::<f32>([64, N])`: N / 2 columns of all 128 lanes), read back by `copy`; a staged
// accumulator of 16-column stages (N = 32) too.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_m128_ok(#[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let b16 = smem::<bf16>([16, 64], swizzle = B128);
    let acc = tmem::<f32>([64, 64]);
    let staged = tmem::<f32>([4, 64, 32]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(staged, cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false, cta_group = 2);
        tcgen05::mma(staged[1], a_s, b16, accumulate = false, cta_group = 2);
        tcgen05::commit(done, cta_group = 2);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(cta.x, 0), acc);
    copy(d.tile(cta.x, 1), staged[1]);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
        tcgen05::dealloc(staged, cta_group = 2);
    }
}

fn main() {}
