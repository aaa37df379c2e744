use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.expect_tx(4096);
        tma::load(tile, src.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
}

fn main() {}
