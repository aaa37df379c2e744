use tirx::prelude::*;

// Arrival counts: a barrier declared for 128 arrivals that one warp arrives on (phase 0
// never completes); one declared for a single arrival that every thread arrives on (the wait
// returns after the first); a consumer warpgroup releasing each stage from all 128 threads of
// a one-consumer pipeline; a two-consumer pipeline released by one of them only.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn too_few(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let done = mbarrier(arrivals = 128);
    copy(t, x.tile(cta.y, cta.x));
    #[scope(warp = 0)]
    {
        done.arrive();
    }
    done.wait(0);
    copy(y.tile(cta.y, cta.x), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn too_many(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let written = mbarrier();
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
pub fn release_by_all(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
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
        pipe.consumer_release(s);
        copy(dst.tile(cta.x, j), t);
    }
}

#[tile_kernel(target = sm_90a, threads = 384, grid = (cdiv(M, 128), 1))]
pub fn release_by_one(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
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
        sync_threads();
        #[scope(thread = 128)]
        {
            pipe.consumer_release(s);
        }
        copy(dst.tile(cta.x, j), t);
    }
}

fn main() {}
