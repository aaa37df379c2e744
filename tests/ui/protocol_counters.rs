use tirx::prelude::*;

// Pipeline counters advance by exactly one per use (issue #33 item 2).

// The counter advances by two per iteration, with one use in each.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn stride_two(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        let mut k = 0;
        for j in 0..cdiv(N, 64) {
            let s = pipe.producer_acquire(k);
            tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
            k += 2;
        }
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

// A loop stepping by two, its variable the counter.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn step_by_two(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    for j in (0..cdiv(N, 64)).step_by(2) {
        let s = pipe.consumer_wait(j);
        tma::store(dst.tile(cta.x, j), ring[s]);
        tma::commit_group();
        tma::wait_group_read(0);
        pipe.consumer_release(s);
    }
}

// Two uses per iteration, one increment: both take the same counter.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn two_uses_one_increment(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        let mut k = 0;
        for j in 0..cdiv(N, 128) {
            let s = pipe.producer_acquire(k);
            tma::load(ring[s], src.tile(cta.x, 2 * j), pipe.full(s));
            let s = pipe.producer_acquire(k);
            tma::load(ring[s], src.tile(cta.x, 2 * j + 1), pipe.full(s));
            k += 1;
        }
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

// The increment is skipped when the `if` is not taken.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn increment_skipped(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    {
        let mut k = 0;
        for j in 0..cdiv(N, 64) {
            let s = pipe.consumer_wait(k);
            tma::store(dst.tile(cta.x, j), ring[s]);
            tma::commit_group();
            tma::wait_group_read(0);
            pipe.consumer_release(s);
            if j > 0 {
                k += 1;
            }
        }
    }
}

// A persistent kernel whose K loop restarts the counter for every tile.
#[tile_kernel(target = sm_90a, threads = 64, grid = (4, 1))]
pub fn reset_per_tile(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for t in (cta.x..cdiv(M, 64)).step_by(ncta.x) {
        for j in 0..cdiv(N, 64) {
            let s = pipe.producer_acquire(j);
            tma::load(ring[s], src.tile(t, j), pipe.full(s));
        }
    }
    #[scope(warp = 1, elect)]
    for t in (cta.x..cdiv(M, 64)).step_by(ncta.x) {
        let mut k = 0;
        for j in 0..cdiv(N, 64) {
            let s = pipe.consumer_wait(k);
            tma::store(dst.tile(t, j), ring[s]);
            tma::commit_group();
            tma::wait_group_read(0);
            pipe.consumer_release(s);
            k += 1;
        }
    }
}

fn main() {}
