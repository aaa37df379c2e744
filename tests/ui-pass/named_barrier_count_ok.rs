use tirx::prelude::*;

// The twin of `ui/named_barrier_count.rs`: one warpgroup syncing and another arriving on the
// same id count both (256), and a scope executing a barrier that counts exactly its threads.
#[tile_kernel(target = sm_90a, threads = 384, grid = (1, 1))]
pub fn counted(#[shape(M, N)] x: Tensor<bf16>) {
    #[scope(warpgroup = 1)]
    {
        named_barrier(1, 256);
    }
    #[scope(warpgroup = 2)]
    {
        named_barrier_arrive(1, 256);
    }
    #[scope(warpgroups = 1..3)]
    {
        named_barrier(2, 256);
    }
}

fn main() {}
