use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::lod(tile, src.tile(0, 0), bar);
    }
}

fn main() {}
