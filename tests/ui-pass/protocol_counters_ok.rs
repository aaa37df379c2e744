//! The right versions of `ui/protocol_counters.rs`: one counter step per use, kept across a
//! persistent kernel's tiles.
use tirx::prelude::*;

// Two uses per iteration, the counter advancing by two (`2 * j`, `2 * j + 1`).
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn two_uses_two_steps(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        let mut k = 0;
        for j in 0..cdiv(N, 128) {
            let s = pipe.producer_acquire(k);
            tma::load(ring[s], src.tile(cta.x, 2 * j), pipe.full(s));
            let s = pipe.producer_acquire(k + 1);
            tma::load(ring[s], src.tile(cta.x, 2 * j + 1), pipe.full(s));
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

// A persistent kernel: one counter across the tiles.
#[tile_kernel(target = sm_90a, threads = 64, grid = (4, 1))]
pub fn counter_across_tiles(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        let mut it = 0;
        for t in (cta.x..cdiv(M, 64)).step_by(ncta.x) {
            for j in 0..cdiv(N, 64) {
                let s = pipe.producer_acquire(it);
                tma::load(ring[s], src.tile(t, j), pipe.full(s));
                it += 1;
            }
        }
    }
    #[scope(warp = 1, elect)]
    {
        let mut it = 0;
        for t in (cta.x..cdiv(M, 64)).step_by(ncta.x) {
            for j in 0..cdiv(N, 64) {
                let s = pipe.consumer_wait(it);
                tma::store(dst.tile(t, j), ring[s]);
                tma::commit_group();
                tma::wait_group_read(0);
                pipe.consumer_release(s);
                it += 1;
            }
        }
    }
}

// A K loop of a constant multiple of 2 × stages restarts on the same stage and parity.
#[tile_kernel(target = sm_90a, threads = 64, grid = (4, 1))]
pub fn whole_rounds_per_tile(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for t in (cta.x..cdiv(M, 64)).step_by(ncta.x) {
        for j in 0..4 {
            let s = pipe.producer_acquire(j);
            tma::load(ring[s], src.tile(t, j), pipe.full(s));
        }
    }
    #[scope(warp = 1, elect)]
    for t in (cta.x..cdiv(M, 64)).step_by(ncta.x) {
        for j in 0..4 {
            let s = pipe.consumer_wait(j);
            tma::store(dst.tile(t, j), ring[s]);
            tma::commit_group();
            tma::wait_group_read(0);
            pipe.consumer_release(s);
        }
    }
}

fn main() {}
