//! The compile-pass twin of `ui/f6f4_kinds.rs`: the 6- and 4-bit types as shared-memory MMA
//! operands, K-major — e3m2 × e2m1 and e2m1 × e4m3 (kind::f8f6f4, A and B may differ) and
//! e2m3 × e3m2 block-scaled with ue8m0 factors (kind::mxf8f6f4, scale_vec::1X).

use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn f6f4_kinds(#[shape(M, N)] d: Tensor<f32>) {
    let a_e3m2 = smem::<e3m2>([128, 128], swizzle = B128);
    let a_e2m1 = smem::<e2m1>([128, 128], swizzle = B128);
    let a_e2m3 = smem::<e2m3>([128, 128], swizzle = B128);
    let b_e2m1 = smem::<e2m1>([64, 128], swizzle = B128);
    let b_e4m3 = smem::<e4m3>([64, 128], swizzle = B128);
    let b_e3m2 = smem::<e3m2>([64, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([32, 16]);
    let sfb_s = smem::<ue8m0>([32, 16]);
    let sfa = tmem::<ue8m0>([128, 4]);
    let sfb = tmem::<ue8m0>([128, 4]);
    let acc = tmem::<f32>([128, 64]);
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
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_e3m2, b_e2m1, accumulate = false);
        tcgen05::mma(acc, a_e2m1, b_e4m3, accumulate = true);
        tcgen05::cp(sfa, sfa_s);
        tcgen05::cp(sfb, sfb_s);
        tcgen05::mma(acc, a_e2m3, b_e3m2, accumulate = true, scale_a = sfa, scale_b = sfb);
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

fn main() {
    let ptx = f6f4_kinds::ARTIFACTS[0].ptx;
    assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::f8f6f4"));
    assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"));
}
