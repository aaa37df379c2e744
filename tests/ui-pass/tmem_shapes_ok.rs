//! The right version of `ui/tmem_shapes_errors.rs`: the 16-bit tile in `tmem_16x256b` (its
//! register pairs are column-adjacent) packs into the 16-bit TMEM buffer as `16x128b` words,
//! and a `tmem_16x256b` tile of 64 columns is whole repeats; the view is allocated through
//! its base and fits in it.
use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn paired(#[shape(M, N)] d: Tensor<bf16>) {
    let acc = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64]);
    let t = regs::<f32>([128, 64], layout = tmem_16x256b);
    let p = regs::<bf16>([128, 64], layout = tmem_16x256b);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(p_t);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    copy(t, acc);
    p = cast::<bf16>(t);
    copy(p_t, p);
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(p_t);
        tcgen05::dealloc(acc);
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn view(#[shape(M, N)] d: Tensor<bf16>) {
    let s = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64], alias = s);
    let t = regs::<f32>([128, 64], layout = tmem_32x32b);
    let p = regs::<bf16>([128, 64], layout = tmem_32x32b);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(s);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    copy(t, s);
    p = cast::<bf16>(t);
    copy(p_t, p);
    copy(d.tile(0, 0), s);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(s);
    }
}

fn main() {}
