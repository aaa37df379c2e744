use tirx::prelude::*;

// The boxes of chunk `i / 4` signal barrier `i / 4`: one arrival per box, four per phase, where
// the barrier expects one. Nesting the loop (`for c in 0..2 { for q in 0..4 { … bar[c] } }`)
// makes each chunk's boxes one phase.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<bf16>([8, 64, 64], swizzle = B128);
    let bar = mbarrier(count = 2);
    #[scope(thread = 0)]
    {
        for i in 0..8 {
            tma::load(tile[i], src.tile(0, i), bar[i / 4]);
        }
    }
    bar[0].wait(0);
    bar[1].wait(0);
}

fn main() {}
