use tirx::prelude::*;

// One thread issues `tcgen05::shift` (`tcgen05.shift`, PTX ISA §9.7.16.9.3), as it issues
// the MMAs and copies the shift is pipelined with; a whole warp is refused at the op.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn shift_by_a_warp(#[shape(M, N)] d: Tensor<f32>) {
    let acc = tmem::<f32>([128, 32]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    #[scope(warp = 1)]
    {
        tcgen05::shift(acc);
    }
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
