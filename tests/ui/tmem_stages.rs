use tirx::prelude::*;

// Three stages of 128 columns: 384 columns, which tcgen05.alloc cannot allocate.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn three_stages(#[shape(M, N)] d: Tensor<bf16>) {
    let acc = tmem::<f32>([3, 128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::dealloc(acc);
    }
}

// A staged accumulator read without naming its stage.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn unindexed_stage(#[shape(M, N)] d: Tensor<bf16>) {
    let acc = tmem::<f32>([2, 128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
