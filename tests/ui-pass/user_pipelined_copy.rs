//! A kernel the project does not ship, built from the same constructs: a persistent-style
//! row-panel copy that streams tiles through a 3-stage pipeline (producer warp 0, consumer
//! warp 1), to show the front end is general over the language.
use tirx::prelude::*;

#[tile_kernel(
    targets(sm_90a, sm_100a),
    threads = 64,
    grid = (cdiv(M, BM), 1),
    configs(default = (BM = 64, BN = 64, STAGES = 3)),
)]
pub fn panel_copy(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([STAGES, BM, BN], swizzle = B128);
    let pipe = pipeline::<STAGES>();
    let tiles = cdiv(N, BN);

    #[scope(warp = 0, elect)]
    for j in 0..tiles {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }

    #[scope(warp = 1, elect)]
    for j in 0..tiles {
        let s = pipe.consumer_wait(j);
        tma::store(dst.tile(cta.x, j), ring[s]);
        tma::commit_group();
        tma::wait_group_read(0);
        pipe.consumer_release(s);
    }
}

fn main() {
    assert_eq!(panel_copy::ARTIFACTS.len(), 2);
}
