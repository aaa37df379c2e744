//! The right versions of `ui/protocol_release_under_mma.rs`: release after `wgmma::wait(0)`,
//! or the previous stage after `wgmma::wait(1)` (one group in flight); a tcgen05 stage
//! released by `tcgen05::commit(pipe.empty(s))`, which arrives when the MMAs are done.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 256, grid = (cdiv(N, 128), cdiv(M, 128)))]
pub fn wgmma_release_after_wait(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([4, 128, 64], swizzle = B128);
    let b_s = smem::<bf16>([4, 128, 64], swizzle = B128);
    let acc = regs::<f32>([128, 128]);
    let pipe = pipeline::<4>();
    #[scope(warp = 0, elect)]
    for k in 0..cdiv(K, 64) {
        let s = pipe.producer_acquire(k);
        tma::load(a_s[s], a.tile(cta.y, k), pipe.full(s));
        tma::load(b_s[s], b.tile(cta.x, k), pipe.full(s));
    }
    #[scope(warpgroup = 1)]
    {
        for k in 0..cdiv(K, 64) {
            let s = pipe.consumer_wait(k);
            wgmma::fence();
            wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            wgmma::commit();
            wgmma::wait(0);
            #[scope(thread = 128)]
            {
                pipe.consumer_release(s);
            }
        }
        wgmma::wait(0);
        copy(d.tile(cta.y, cta.x), acc);
    }
}

#[tile_kernel(target = sm_90a, threads = 256, grid = (cdiv(N, 128), cdiv(M, 128)))]
pub fn wgmma_release_previous(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([4, 128, 64], swizzle = B128);
    let b_s = smem::<bf16>([4, 128, 64], swizzle = B128);
    let acc = regs::<f32>([128, 128]);
    let pipe = pipeline::<4>();
    #[scope(warp = 0, elect)]
    for k in 0..cdiv(K, 64) {
        let s = pipe.producer_acquire(k);
        tma::load(a_s[s], a.tile(cta.y, k), pipe.full(s));
        tma::load(b_s[s], b.tile(cta.x, k), pipe.full(s));
    }
    #[scope(warpgroup = 1)]
    {
        for k in 0..cdiv(K, 64) {
            let s = pipe.consumer_wait(k);
            wgmma::fence();
            wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            wgmma::commit();
            wgmma::wait(1);
            if k > 0 {
                #[scope(thread = 128)]
                {
                    pipe.consumer_release((k + 3) % 4);
                }
            }
        }
        wgmma::wait(0);
        #[scope(thread = 128)]
        {
            pipe.consumer_release((cdiv(K, 64) + 3) % 4);
        }
        copy(d.tile(cta.y, cta.x), acc);
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 128), cdiv(M, 128)))]
pub fn tcgen05_release_by_commit(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([4, 128, 64], swizzle = B128);
    let b_s = smem::<bf16>([4, 128, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 128]);
    let pipe = pipeline::<4>();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(warp = 0, elect)]
    for k in 0..cdiv(K, 64) {
        let s = pipe.producer_acquire(k);
        tma::load(a_s[s], a.tile(cta.y, k), pipe.full(s));
        tma::load(b_s[s], b.tile(cta.x, k), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    {
        for k in 0..cdiv(K, 64) {
            let s = pipe.consumer_wait(k);
            tcgen05::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            tcgen05::commit(pipe.empty(s));
        }
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(cta.y, cta.x), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {
    assert_eq!(wgmma_release_after_wait::ARTIFACTS.len(), 1);
    assert_eq!(wgmma_release_previous::ARTIFACTS.len(), 1);
    assert_eq!(tcgen05_release_by_commit::ARTIFACTS.len(), 1);
}
