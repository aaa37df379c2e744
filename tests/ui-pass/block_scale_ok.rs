//! The compile-pass twin of `ui/block_scale.rs`: a block-scaled MMA whose factor tiles are
//! `tmem::<ue8m0>([128, 4])`, filled by `tcgen05::cp` from their `[32, 16]` shared images —
//! `sfb` by the MMA's own thread just before it (the pipelined pair), `sfa` by another thread
//! whose commit the MMA's thread waits on — over e4m3 × e5m2 operands (kind::mxf8f6f4).

use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn scales_in_place(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e5m2>([64, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([32, 16]);
    let sfb_s = smem::<ue8m0>([32, 16]);
    let acc = tmem::<f32>([128, 64]);
    let sfa = tmem::<ue8m0>([128, 4]);
    let sfb = tmem::<ue8m0>([128, 4]);
    let copied = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa);
        tcgen05::alloc(sfb);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 32)]
    {
        tcgen05::cp(sfa, sfa_s);
        tcgen05::commit(copied);
    }
    copied.wait(0);
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfb, sfb_s);
        tcgen05::mma(acc, a_s, b_s, accumulate = false, scale_a = sfa, scale_b = sfb);
        tcgen05::commit(done);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sfa);
        tcgen05::dealloc(sfb);
    }
}

fn main() {}
