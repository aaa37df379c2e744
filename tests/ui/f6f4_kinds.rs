use tirx::prelude::*;

// The 6- and 4-bit types of kind::f8f6f4 (e3m2, e2m3, e2m1: shared-memory tiles in the
// kind's padded packing, 16 values in each 16 bytes) are MMA operands only: no register or
// TMEM tile of them, no cast to them, no MN-major tile (read K-major only here); they share
// kind::f8f6f4 with FP8 but not with bf16; block-scaled they take ue8m0 factors
// (kind::mxf8f6f4 has scale_vec::1X, UE8M0 only) and do not mix with dense e2m1x2
// (kind::mxf4nvf4); Hopper's wgmma has no 6- or 4-bit types.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn f6f4_off_shared_memory(#[shape(M, N)] d: Tensor<f32>) {
    let t = regs::<e3m2>([128, 64], layout = tmem_32x32b);
    let p = tmem::<e2m1>([128, 128]);
    let u = regs::<f32>([128, 64], layout = tmem_32x32b);
    u = cast::<e2m3>(u);
    let mn = smem::<e2m1>([64, 128], swizzle = B128, major = mn);
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn f6f4_kinds(#[shape(M, N)] d: Tensor<f32>) {
    let a_e3m2 = smem::<e3m2>([128, 128], swizzle = B128);
    let b_bf16 = smem::<bf16>([64, 64], swizzle = B128);
    let b_e2m1 = smem::<e2m1>([64, 128], swizzle = B128);
    let b_fp4 = smem::<e2m1x2>([64, 128], swizzle = B128);
    let sfa = tmem::<ue4m3>([128, 4]);
    let sfb = tmem::<ue4m3>([128, 4]);
    let sfa8 = tmem::<ue8m0>([128, 4]);
    let sfb8 = tmem::<ue8m0>([128, 4]);
    let acc = tmem::<f32>([128, 64]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa);
        tcgen05::alloc(sfb);
        tcgen05::alloc(sfa8);
        tcgen05::alloc(sfb8);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_e3m2, b_bf16, accumulate = false);
        tcgen05::mma(acc, a_e3m2, b_e2m1, accumulate = true, scale_a = sfa, scale_b = sfb);
        tcgen05::mma(acc, a_e3m2, b_fp4, accumulate = true, scale_a = sfa8, scale_b = sfb8);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sfa);
        tcgen05::dealloc(sfb);
        tcgen05::dealloc(sfa8);
        tcgen05::dealloc(sfb8);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn f6f4_on_hopper(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e2m3>([64, 128], swizzle = B128);
    let b_s = smem::<e2m3>([64, 128], swizzle = B128);
    let acc = regs::<f32>([64, 64]);
    #[scope(warpgroup = 0)]
    {
        wgmma::mma(acc, a_s, b_s, accumulate = false);
    }
}

fn main() {}
