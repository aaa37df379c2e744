use tirx::prelude::*;

// A nest of counted loops is one phase: one expect-tx of all 2 × 2 boxes (derived), one
// arrival. And a counted loop inside a run-time loop that waits on the barrier each iteration.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<bf16>([2, 2, 64, 64], swizzle = B128);
    let bar = mbarrier(count = 2);
    #[scope(thread = 0)]
    {
        for w in 0..2 {
            for c in 0..2 {
                tma::load(tile[w][c], src.tile(w, c), bar[0]);
            }
        }
    }
    bar[0].wait(0);
    for n in 0..M / 64 {
        #[scope(thread = 0)]
        {
            for c in 0..2 {
                tma::load(tile[0][c], src.tile(n, c), bar[1]);
            }
        }
        bar[1].wait(n % 2);
        sync_threads();
    }
}

fn main() {}
