//! The right versions of `ui/protocol_store_overwrite.rs`: the staging tile rewritten after
//! `wait_group_read(0)`, or double-buffered with `wait_group_read(1)` (the index is a run-time
//! value, so the other buffer may be pending: accepted); the reload after the first store has
//! read the tile; the stage released after `wait_group_read(0)`; the store committed and waited
//! for before the rewrite.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, cdiv(M, 64)))]
pub fn restaged(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    for j in 0..cdiv(N, 64) {
        copy(t, x.tile(cta.y, j));
        #[scope(thread = 0)]
        {
            tma::wait_group_read(0);
        }
        sync_threads();
        copy(ys, t * 2.0);
        fence::proxy_async();
        sync_threads();
        #[scope(thread = 0)]
        {
            tma::store(y.tile(cta.y, j), ys);
            tma::commit_group();
        }
    }
    #[scope(thread = 0)]
    {
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, cdiv(M, 64)))]
pub fn double_buffered(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([2, 64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    for j in 0..cdiv(N, 64) {
        copy(t, x.tile(cta.y, j));
        copy(ys[j % 2], t * 2.0);
        fence::proxy_async();
        sync_threads();
        #[scope(thread = 0)]
        {
            tma::store(y.tile(cta.y, j), ys[j % 2]);
            tma::commit_group();
            tma::wait_group_read(1);
        }
        sync_threads();
    }
    #[scope(thread = 0)]
    {
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, cdiv(M, 64)))]
pub fn reloaded(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier(count = 2);
    #[scope(thread = 0)]
    {
        tma::load(xs, x.tile(cta.y, 0), bar[0]);
        bar[0].wait(0);
        tma::store(y.tile(cta.y, 0), xs);
        tma::commit_group();
        tma::wait_group_read(0);
        tma::load(xs, x.tile(cta.y, 1), bar[1]);
        bar[1].wait(0);
        tma::store(y.tile(cta.y, 1), xs);
        tma::commit_group();
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn released_after_read(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.consumer_wait(j);
        tma::store(dst.tile(cta.x, j), ring[s]);
        tma::commit_group();
        tma::wait_group_read(0);
        pipe.consumer_release(s);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn committed(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    copy(t, x.tile(cta.y, cta.x));
    copy(ys, t);
    fence::proxy_async();
    sync_threads();
    #[scope(thread = 0)]
    {
        tma::store(y.tile(cta.y, cta.x), ys);
        tma::commit_group();
        tma::wait_group_read(0);
    }
    sync_threads();
    copy(ys, t * 2.0);
    fence::proxy_async();
    sync_threads();
    #[scope(thread = 0)]
    {
        tma::store(y.tile(cta.y, cta.x + 1), ys);
        tma::commit_group();
        tma::wait_group(0);
    }
}

fn main() {
    assert_eq!(restaged::ARTIFACTS.len(), 1);
    assert_eq!(double_buffered::ARTIFACTS.len(), 1);
    assert_eq!(reloaded::ARTIFACTS.len(), 1);
    assert_eq!(released_after_read::ARTIFACTS.len(), 1);
    assert_eq!(committed::ARTIFACTS.len(), 1);
}
