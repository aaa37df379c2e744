use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] d: Tensor<bf16>) {
    let acc = tmem::<f32>([128, 100]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::dealloc(acc);
    }
}

fn main() {}
