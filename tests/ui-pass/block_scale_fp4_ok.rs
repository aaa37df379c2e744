//! The compile-pass twin of `ui/block_scale_fp4.rs`: packed FP4 operands (`e2m1x2`, a
//! 128-byte row of 256 values) with UE4M3 factors in 16-factor tiles (NVFP4,
//! kind::mxf4nvf4 scale_vec::4X) and with UE8M0 factors in 8-factor tiles (MXFP4,
//! scale_vec::2X), each tile copied from its multi-cell image by the MMA's own thread.

use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn fp4_scales_in_place(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let b_s = smem::<e2m1x2>([64, 128], swizzle = B128);
    let nv_s = smem::<ue4m3>([4, 32, 16]);
    let mx_s = smem::<ue8m0>([2, 32, 16]);
    let acc = tmem::<f32>([128, 64]);
    let nva = tmem::<ue4m3>([128, 16]);
    let nvb = tmem::<ue4m3>([128, 16]);
    let mxa = tmem::<ue8m0>([128, 8]);
    let mxb = tmem::<ue8m0>([128, 8]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(nva);
        tcgen05::alloc(nvb);
        tcgen05::alloc(mxa);
        tcgen05::alloc(mxb);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::cp(nva, nv_s);
        tcgen05::cp(nvb, nv_s);
        tcgen05::cp(mxa, mx_s);
        tcgen05::cp(mxb, mx_s);
        tcgen05::mma(acc, a_s, b_s, accumulate = false, scale_a = nva, scale_b = nvb);
        tcgen05::mma(acc, a_s, b_s, accumulate = true, scale_a = mxa, scale_b = mxb);
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
        tcgen05::dealloc(nva);
        tcgen05::dealloc(nvb);
        tcgen05::dealloc(mxa);
        tcgen05::dealloc(mxb);
    }
}

fn main() {}
