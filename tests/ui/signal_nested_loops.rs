use tirx::prelude::*;

// A counted loop (constant bounds) inside a loop of run-time bounds: the inner boxes are one
// phase of each outer iteration, and nothing in the outer loop waits on the barrier or changes
// it, so every iteration arrives on the same phase.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<bf16>([2, 64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        for n in 0..M / 64 {
            for c in 0..2 {
                tma::load(tile[c], src.tile(n, c), bar);
            }
        }
    }
    bar.wait(0);
}

fn main() {}
