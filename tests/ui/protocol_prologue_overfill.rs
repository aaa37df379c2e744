use tirx::prelude::*;

// A straight-line prologue that fills stage 0 of a two-stage ring twice before any acquire:
// the second load lands on a stage whose first fill may not be consumed yet.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn prologue_twice(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    {
        tma::load(ring[0], src.tile(cta.x, 0), pipe.full(0));
        tma::load(ring[1], src.tile(cta.x, 1), pipe.full(1));
        tma::load(ring[0], src.tile(cta.x, 2), pipe.full(0));
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

// Two buffers per stage (A and B) are one fill; A of stage 0 loaded again is a second.
#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn prologue_a_again(
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
        tma::load(a_s[0], a.tile(cta.x, 2), pipe.full(0));
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
