//! The right versions of `ui/protocol_writers.rs`: one warp's 32 lanes under `writers = 32`,
//! and half a warp (`if lane_id < 16`) under `writers = 16`.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 256, grid = (cdiv(M, 128), 1))]
pub fn warp_of_writers(
    #[shape(M, N)] src: Tensor<bf16>,
    #[shape(M, NB)] scale: Tensor<f32>,
    #[shape(M, N)] dst: Tensor<bf16>,
) {
    let ring = smem::<bf16>([2, 128, 64], swizzle = B128);
    let sc_s = smem::<f32>([2, 128, 1]);
    let pipe = pipeline::<2>(writers = 32);
    let x = regs::<f32>([128, 1], layout = blocked(vec = 1, threads = 32));
    let t = regs::<f32>([128, 64], layout = blocked(vec = 8, threads = 128));
    #[scope(warp = 0, elect)]
    for j in 0..NB {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1)]
    for j in 0..NB {
        copy(x, scale.tile(cta.x, j));
        let s = pipe.producer_acquire(j);
        copy(sc_s[s], x);
        pipe.full(s).arrive();
    }
    #[scope(warpgroup = 1)]
    for j in 0..NB {
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

#[tile_kernel(target = sm_90a, threads = 256, grid = (cdiv(M, 128), 1))]
pub fn half_a_warp(
    #[shape(M, N)] src: Tensor<bf16>,
    #[shape(M, NB)] scale: Tensor<f32>,
    #[shape(M, N)] dst: Tensor<bf16>,
) {
    let ring = smem::<bf16>([2, 128, 64], swizzle = B128);
    let sc_s = smem::<f32>([2, 128, 1]);
    let pipe = pipeline::<2>(writers = 16);
    let x = regs::<f32>([128, 1], layout = blocked(vec = 1, threads = 32));
    let t = regs::<f32>([128, 64], layout = blocked(vec = 8, threads = 128));
    #[scope(warp = 0, elect)]
    for j in 0..NB {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1)]
    for j in 0..NB {
        copy(x, scale.tile(cta.x, j));
        let s = pipe.producer_acquire(j);
        copy(sc_s[s], x);
        if lane_id < 16 {
            pipe.full(s).arrive();
        }
    }
    #[scope(warpgroup = 1)]
    for j in 0..NB {
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

fn main() {
    assert_eq!(warp_of_writers::ARTIFACTS.len(), 1);
    assert_eq!(half_a_warp::ARTIFACTS.len(), 1);
}
