use tirx::prelude::*;

// A tcgen05 accumulator read in flight: before the wait on the barrier its commit signals,
// and with no commit after the MMA at all.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 128), cdiv(M, 128)))]
pub fn read_before_wait(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([128, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 128]);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.y, 0), loaded);
        tma::load(b_s, b.tile(cta.x, 0), loaded);
        loaded.wait(0);
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
        tcgen05::commit(done);
    }
    copy(d.tile(cta.y, cta.x), acc);
    done.wait(0);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 128), cdiv(M, 128)))]
pub fn read_uncommitted(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([128, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 128]);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.y, 0), loaded);
        tma::load(b_s, b.tile(cta.x, 0), loaded);
        loaded.wait(0);
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
    }
    sync_threads();
    copy(d.tile(cta.y, cta.x), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
