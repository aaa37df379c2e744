use tirx::prelude::*;

// A named barrier's thread count against the threads that execute it: a count below the
// scope's threads (two forms: a warpgroup counting one warp, the whole CTA counting one
// warpgroup), and a count no set of scopes executing the id can reach.
#[tile_kernel(target = sm_90a, threads = 256, grid = (1, 1))]
pub fn overfull(#[shape(M, N)] x: Tensor<bf16>) {
    #[scope(warpgroup = 1)]
    {
        named_barrier(1, 32);
    }
    named_barrier(2, 128);
}

#[tile_kernel(target = sm_90a, threads = 384, grid = (1, 1))]
pub fn never_completes(#[shape(M, N)] x: Tensor<bf16>) {
    #[scope(warpgroup = 1)]
    {
        named_barrier(1, 256);
    }
    #[scope(warpgroups = 1..3)]
    {
        named_barrier(2, 384);
    }
}

fn main() {}
