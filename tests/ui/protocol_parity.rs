use tirx::prelude::*;

// Phase parity in loops: a barrier refilled every iteration waited on a fixed parity; the
// same with a parity computed outside the loop; and a pipeline waited with a counter that
// does not advance.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn fixed_parity(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    for j in 0..cdiv(N, 64) {
        #[scope(thread = 0)]
        {
            tma::load(xs, x.tile(cta.x, j), bar);
        }
        bar.wait(0);
        copy(t, xs);
        sync_threads();
        copy(y.tile(cta.x, j), t);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn hoisted_parity(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let phase = cta.x % 2;
    for j in 0..cdiv(N, 64) {
        #[scope(thread = 0)]
        {
            tma::load(xs, x.tile(cta.x, j), bar);
        }
        bar.wait(phase);
        copy(t, xs);
        sync_threads();
        copy(y.tile(cta.x, j), t);
    }
}

#[tile_kernel(target = sm_90a, threads = 64, grid = (cdiv(M, 64), 1))]
pub fn fixed_stage(#[shape(M, N)] src: Tensor<f16>, #[shape(M, N)] dst: Tensor<f16>) {
    let ring = smem::<f16>([2, 64, 64], swizzle = B128);
    let pipe = pipeline::<2>();
    #[scope(warp = 0, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.producer_acquire(j);
        tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    for j in 0..cdiv(N, 64) {
        let s = pipe.consumer_wait(0);
        tma::store(dst.tile(cta.x, j), ring[s]);
        tma::commit_group();
        tma::wait_group_read(0);
        pipe.consumer_release(s);
    }
}

fn main() {}
