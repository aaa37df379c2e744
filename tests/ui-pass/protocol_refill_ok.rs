//! The right version of `ui/protocol_refill.rs`: each iteration acquires its stage first; a
//! prologue that fills each stage once before the loop needs no acquire.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn acquired(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
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

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn prologue(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        for j in 0..2 {
            tma::load(ring[j], src.tile(cta.x, j), pipe.full(j));
        }
        for j in 2..cdiv(N, 64) {
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

fn main() {
    assert_eq!(acquired::ARTIFACTS.len(), 1);
    assert_eq!(prologue::ARTIFACTS.len(), 1);
}
