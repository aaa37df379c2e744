//! The right versions of `ui/protocol_tmem_paths.rs`: every path releases what it allocated,
//! and relinquishes the permit.
use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn dealloc_on_both_branches() {
    let acc = tmem::<f32>([128, 128]);
    let o = tmem::<f32>([128, 64]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(o);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        if cta.x == 0 {
            tcgen05::dealloc(acc);
            tcgen05::dealloc(o);
        } else {
            tcgen05::dealloc(o);
            tcgen05::dealloc(acc);
        }
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn alloc_and_dealloc_in_one_branch() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        if cta.x > 1 {
            tcgen05::alloc(acc);
            tcgen05::dealloc(acc);
        }
        tcgen05::relinquish();
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn relinquish_outside_the_if() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
        if cta.x > 0 {
            tcgen05::dealloc(acc);
        } else {
            tcgen05::dealloc(acc);
        }
    }
}

// Two `if`s on one condition take the same branch: allocated and released on one path.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn same_condition_twice() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        if cta.x > 1 {
            tcgen05::alloc(acc);
        }
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        if cta.x > 1 {
            tcgen05::dealloc(acc);
        }
    }
}

fn main() {}
