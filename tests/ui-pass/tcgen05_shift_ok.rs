use tirx::prelude::*;

// The compile-pass twin of `ui/tcgen05_shift.rs`: one thread shifts a `tmem::<f32>` tile
// (and a stage of a staged one) and commits.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn shift_ok(#[shape(M, N)] d: Tensor<f32>) {
    let acc = tmem::<f32>([2, 128, 32]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    #[scope(thread = 0)]
    {
        tcgen05::shift(acc[1]);
        tcgen05::commit(done);
    }
    done.wait(0);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
