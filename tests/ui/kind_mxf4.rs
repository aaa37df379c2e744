use tirx::prelude::*;

// `kind = mxf4` on FP8 operands: `.kind::mxf4` takes E2M1 with UE8M0 factors only.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn mxf4_on_fp8(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let sf_s = smem::<ue8m0>([32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa = tmem::<ue8m0>([128, 4]);
    let sfb = tmem::<ue8m0>([128, 4]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa);
        tcgen05::alloc(sfb);
    }
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfa, sf_s);
        tcgen05::cp(sfb, sf_s);
        tcgen05::mma(acc, a_s, a_s, accumulate = false, scale_a = sfa, scale_b = sfb, kind = mxf4);
        tcgen05::commit(done);
    }
    done.wait(0);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sfa);
        tcgen05::dealloc(sfb);
    }
}

// Another kind named: the kinds come from the types.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn other_kind(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e2m1x2>([128, 128], swizzle = B128);
    let sf_s = smem::<ue8m0>([2, 32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa = tmem::<ue8m0>([128, 8]);
    let sfb = tmem::<ue8m0>([128, 8]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa);
        tcgen05::alloc(sfb);
    }
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfa, sf_s);
        tcgen05::cp(sfb, sf_s);
        tcgen05::mma(acc, a_s, a_s, accumulate = false, scale_a = sfa, scale_b = sfb, kind = mxf4nvf4);
    }
}

fn main() {}
