//! The right versions of `ui/protocol_arrivals.rs`: every thread arrives on a barrier of 128
//! arrivals; one release per consumer (a warpgroup's leader, or one thread of each).
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn all_arrive(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let written = mbarrier(arrivals = 128);
    copy(t, x.tile(cta.y, cta.x));
    copy(ys, t);
    fence::proxy_async();
    written.arrive();
    #[scope(thread = 0)]
    {
        written.wait(0);
        tma::store(y.tile(cta.y, cta.x), ys);
        tma::commit_group();
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 256, grid = (cdiv(M, 64), 1))]
pub fn release_by_leader(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let ring = smem::<bf16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8, threads = 128));
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warpgroup = 1)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.consumer_wait(j);
        copy(t, ring[s]);
        named_barrier(1, 128);
        #[scope(leader)]
        {
            pipe.consumer_release(s);
        }
        copy(dst.tile(cta.x, j), t);
    }
}

#[tile_kernel(target = sm_90a, threads = 384, grid = (cdiv(M, 128), 1))]
pub fn release_by_both(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let ring = smem::<bf16>([2, 128, 64], swizzle = B128);
    let pipe = pipeline::<2>(consumers = 2);
    let t = regs::<f32>([128, 64], layout = blocked(vec = 8, threads = 256));
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warpgroups = 1..3)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.consumer_wait(j);
        copy(t, ring[s]);
        named_barrier(1, 256);
        #[scope(leader)]
        {
            pipe.consumer_release(s);
        }
        copy(dst.tile(cta.x, j), t);
    }
}

fn main() {
    assert_eq!(all_arrive::ARTIFACTS.len(), 1);
    assert_eq!(release_by_leader::ARTIFACTS.len(), 1);
    assert_eq!(release_by_both::ARTIFACTS.len(), 1);
}
