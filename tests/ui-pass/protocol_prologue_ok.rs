use tirx::prelude::*;

// A straight-line prologue filling each stage once, then the steady state acquiring every
// stage it refills; and a stage filled again only after it was acquired.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn prologue_once(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        tma::load(ring[0], src.tile(cta.x, 0), pipe.full(0));
        tma::load(ring[1], src.tile(cta.x, 1), pipe.full(1));
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

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn refill_after_acquire(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        tma::load(ring[0], src.tile(cta.x, 0), pipe.full(0));
        tma::load(ring[1], src.tile(cta.x, 1), pipe.full(1));
        let s = pipe.producer_acquire(2);
        tma::load(ring[s], src.tile(cta.x, 2), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    for j in 0..3 {
        let s = pipe.consumer_wait(j);
        tma::store(dst.tile(cta.x, j), ring[s]);
        tma::commit_group();
        tma::wait_group_read(0);
        pipe.consumer_release(s);
    }
}

// Two buffers per stage: A and B of one stage are one fill.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn prologue_a_and_b(
    #[shape(M, N)] a: Tensor<f16>,
    #[shape(M, N)] b: Tensor<f16>,
    #[shape(M, N)] dst: Tensor<f16>,
) {
    let a_s = smem::<f16>([2, 64, 64], swizzle = B128);
    let b_s = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        tma::load(a_s[0], a.tile(cta.x, 0), pipe.full(0));
        tma::load(b_s[0], b.tile(cta.x, 0), pipe.full(0));
        tma::load(a_s[1], a.tile(cta.x, 1), pipe.full(1));
        tma::load(b_s[1], b.tile(cta.x, 1), pipe.full(1));
    }
    #[scope(warp = 1, elect)]
    for j in 0..2 {
        let s = pipe.consumer_wait(j);
        tma::store(dst.tile(cta.x, j), a_s[s]);
        tma::store(dst.tile(cta.x, j + 2), b_s[s]);
        tma::commit_group();
        tma::wait_group_read(0);
        pipe.consumer_release(s);
    }
}

fn main() {}
