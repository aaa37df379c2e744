use tirx::prelude::*;

// Stages refilled without `producer_acquire`: a producer loop that picks the stage itself
// (`j % 2`) and never waits for the consumer's release; one that acquires once, before the
// loop; and a prologue that fills three stages of a two-stage ring.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn never_acquired(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        tma::load(ring[j % 2], src.tile(cta.x, j), pipe.full(j % 2));
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

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn acquired_once(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        let first = pipe.producer_acquire(0);
        for j in 0..cdiv(N, 64) {
            tma::load(ring[(first + j) % 2], src.tile(cta.x, j), pipe.full((first + j) % 2));
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

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn prologue_too_long(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        for j in 0..3 {
            tma::load(ring[j % 2], src.tile(cta.x, j), pipe.full(j % 2));
        }
        for j in 3..cdiv(N, 64) {
            let s = pipe.producer_acquire(j);
            tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
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

fn main() {}
