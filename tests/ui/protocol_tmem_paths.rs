use tirx::prelude::*;

// TMEM held on some paths (issue #33 item 3): each kernel releases on one path and not on
// another; the error is at the alloc (or the relinquish), with a note at the `if` whose
// branch keeps it.

// The dealloc is inside an `if`: when it is not taken, the columns leak.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn dealloc_in_if() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        if cta.x % 2 == 0 {
            tcgen05::dealloc(acc);
        }
    }
}

// An early exit path deallocates; the other branch forgets to.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn one_branch_forgets() {
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
        }
    }
}

// Nested: released only when both conditions hold.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 2))]
pub fn nested_ifs() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        if cta.x > 0 {
            if cta.y > 0 {
                tcgen05::dealloc(acc);
            }
        } else {
            tcgen05::dealloc(acc);
        }
    }
}

// Allocated in a branch that has no dealloc.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn alloc_in_branch() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        if cta.x > 1 {
            tcgen05::alloc(acc);
        }
        tcgen05::relinquish();
    }
}

// The permit is given up on one path only.
#[tile_kernel(target = sm_100a, threads = 128, grid = (4, 1))]
pub fn relinquish_in_if() {
    let acc = tmem::<f32>([128, 128]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        if cta.x > 0 {
            tcgen05::relinquish();
        }
    }
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
