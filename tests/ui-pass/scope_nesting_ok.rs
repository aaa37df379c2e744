//! The right version of `ui/scope_nesting.rs`: nested scopes that select threads inside their
//! enclosing ones.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 256, grid = (1, 1))]
pub fn nested(#[shape(M, N)] y: Tensor<bf16>) {
    #[scope(warpgroup = 1)]
    {
        #[scope(warp = 5)]
        {
            named_barrier(1, 32);
        }
        wgmma::fence();
    }
    #[scope(thread = 255)]
    {
        tma::commit_group();
    }
}

fn main() {
    assert_eq!(nested::ARTIFACTS.len(), 1);
}
