use tirx::prelude::*;

// A consumer that skips the stage's wait: it waits for iteration 0 before its loop, then
// reads every stage of the 3-stage ring in the loop with no `consumer_wait`.
#[tile_kernel(
    target = sm_90a,
    threads = 64,
    grid = (cdiv(M, 64), 1),
    configs(default = (STAGES = 3)),
)]
pub fn skips_the_wait(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let ring = smem::<bf16>([STAGES, 64, 64], swizzle = B128);
    let pipe = pipeline::<STAGES>();
    let tiles = cdiv(N, 64);
    #[scope(warp = 0, elect)]
    for j in 0..tiles {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    {
        let first = pipe.consumer_wait(0);
        for j in 0..tiles {
            tma::store(dst.tile(cta.x, j), ring[j % STAGES]);
            tma::commit_group();
            tma::wait_group_read(0);
            pipe.consumer_release(j % STAGES);
        }
    }
}

fn main() {}
