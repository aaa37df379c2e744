use tirx::prelude::*;

// Nested scopes are intersections: a warp outside its enclosing warpgroup, and a warpgroup
// scope inside one warp (the op checks see the one warp, not the
// warpgroup the inner scope names).
#[tile_kernel(target = sm_90a, threads = 256, grid = (1, 1))]
pub fn k(#[shape(M, N)] y: Tensor<bf16>) {
    #[scope(warpgroup = 0)]
    {
        #[scope(warp = 5)]
        {
            named_barrier(1, 32);
        }
    }
    #[scope(warp = 2)]
    {
        #[scope(warpgroup = 0)]
        {
            wgmma::fence();
        }
    }
}

fn main() {}
