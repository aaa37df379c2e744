use tirx::prelude::*;

// Block-scaled tcgen05 MMAs (PTX ISA §9.7.16.10.7): scales on bf16 operands (kind::f16 has
// no block-scaled form); a factor tile of the wrong shape (8 factors a row) and one in
// shared memory.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn bad_scale_operands(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e4m3>([128, 128], swizzle = B128);
    let a16 = smem::<bf16>([128, 64], swizzle = B128);
    let b16 = smem::<bf16>([128, 64], swizzle = B128);
    let sf_s = smem::<ue8m0>([32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa = tmem::<ue8m0>([128, 4]);
    let sfb = tmem::<ue8m0>([128, 4]);
    let wide = tmem::<ue8m0>([128, 8]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sfa);
        tcgen05::alloc(sfb);
        tcgen05::alloc(wide);
    }
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfa, sf_s);
        tcgen05::cp(sfb, sf_s);
        tcgen05::mma(acc, a16, b16, accumulate = false, scale_a = sfa, scale_b = sfb);
        tcgen05::mma(acc, a_s, b_s, accumulate = false, scale_a = sfa, scale_b = wide);
        tcgen05::mma(acc, a_s, b_s, accumulate = false, scale_a = sfa, scale_b = sf_s);
        tcgen05::commit(done);
    }
    done.wait(0);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sfa);
        tcgen05::dealloc(sfb);
        tcgen05::dealloc(wide);
    }
}

// A block-scaled MMA scales both operands: `scale_a` alone is refused at it.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn scale_a_alone(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let acc = tmem::<f32>([128, 128]);
    let sfa = tmem::<ue8m0>([128, 4]);
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, a_s, accumulate = false, scale_a = sfa);
    }
}

// A scale factor lives in shared memory (the copy's image) and tensor memory only.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn scales_in_registers(#[shape(M, N)] d: Tensor<f32>) {
    let r = regs::<ue8m0>([128, 4], layout = tmem_32x32b);
}

// The copy is one thread's (`tcgen05.cp` is issued by a single thread, §9.7.16.9.2) and
// takes the `[R / 4, 16]` image of a `[R, 4]` tile.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn bad_scale_copies(#[shape(M, N)] d: Tensor<f32>) {
    let sf_s = smem::<ue8m0>([32, 16]);
    let sf_wide = smem::<ue8m0>([32, 32]);
    let sfa = tmem::<ue8m0>([128, 4]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(sfa);
        tcgen05::cp(sfa, sf_s);
    }
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfa, sf_wide);
    }
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(sfa);
    }
}

// The factors must be in tensor memory before the MMA reads them: here `sfb` is never
// copied.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn scales_never_copied(#[shape(M, N)] d: Tensor<f32>) {
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
        tcgen05::mma(acc, a_s, a_s, accumulate = false, scale_a = sfa, scale_b = sfb);
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

// `sfa` is copied by thread 32 and nothing orders the copy before thread 0's MMA (a
// tcgen05.cp is ordered before a tcgen05.mma only within one thread, §9.7.16.6.5).
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn scales_unordered(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e4m3>([128, 128], swizzle = B128);
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
    #[scope(thread = 32)]
    {
        tcgen05::cp(sfa, sf_s);
    }
    sync_threads();
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfb, sf_s);
        tcgen05::mma(acc, a_s, b_s, accumulate = false, scale_a = sfa, scale_b = sfb);
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

fn main() {}
