use tirx::prelude::*;

// One barrier per chunk of four boxes: the inner loop of constant bounds is one phase of its
// chunk's barrier, armed once with the four boxes' bytes.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<bf16>([2, 4, 64, 64], swizzle = B128);
    let bar = mbarrier(count = 2);
    #[scope(thread = 0)]
    {
        for c in 0..2 {
            for q in 0..4 {
                tma::load(tile[c][q], src.tile(0, c * 4 + q), bar[c]);
            }
        }
    }
    bar[0].wait(0);
    bar[1].wait(0);
}

fn main() {}
