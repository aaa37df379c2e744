use tirx::prelude::*;

// Two misuses of the TMEM register layouts: a 16-bit tile in `tmem_16x128b`, whose registers
// hold no two column-adjacent elements, cannot be packed into a 16-bit TMEM buffer (no copy
// variant fits, and the TMEM store says which layouts can); and a `tmem_16x256b` tile whose
// columns are not whole repeats of the shape's 8 is refused at its declaration. And two of a
// TMEM view (`alias = s`): allocating the view (its columns are its base's), and a view wider
// than its base.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn unpaired(#[shape(M, N)] d: Tensor<bf16>) {
    let acc = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64]);
    let t = regs::<f32>([128, 64], layout = tmem_16x128b);
    let p = regs::<bf16>([128, 64], layout = tmem_16x128b);
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
pub fn partial_repeat(#[shape(M, N)] d: Tensor<bf16>) {
    let t = regs::<f32>([128, 60], layout = tmem_16x256b);
    copy(d.tile(0, 0), t);
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn view_allocated(#[shape(M, N)] d: Tensor<bf16>) {
    let s = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64], alias = s);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(s);
        tcgen05::alloc(p_t);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    copy(d.tile(0, 0), s);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(s);
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn view_too_wide(#[shape(M, N)] d: Tensor<bf16>) {
    let s = tmem::<f32>([128, 64]);
    let p_t = tmem::<f32>([128, 128], alias = s);
    let t = regs::<f32>([128, 128], layout = tmem_32x32b);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(s);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    copy(t, p_t);
    copy(d.tile(0, 0), t);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(s);
    }
}

fn main() {}
