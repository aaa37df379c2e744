use tirx::prelude::*;

// Block-scaled FP4 (PTX ISA §9.7.16.10.7): the operand and factor types select the kind, so
// the combinations the ISA has no instruction for are refused at the MMA: UE4M3 factors on
// FP8 operands (kind::mxf8f6f4 takes scale_vec::1X with UE8M0 only, §9.7.16.10.7.1), FP4 ×
// FP8, factors of two types (one descriptor bit names the type for both, §9.7.16.4.2), an
// NVFP4 factor tile of MXFP4's shape (8 factors a row, not 16), and packed FP4 with no
// factors (kind::mxf4nvf4 is block-scaled only).
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn bad_fp4_combinations(#[shape(M, N)] d: Tensor<f32>) {
    let a8 = smem::<e4m3>([128, 128], swizzle = B128);
    let a4 = smem::<e2m1x2>([128, 128], swizzle = B128);
    let acc = tmem::<f32>([128, 128]);
    let sf8 = tmem::<ue8m0>([128, 8]);
    let nv4 = tmem::<ue4m3>([128, 4]);
    let nv8 = tmem::<ue4m3>([128, 8]);
    let nv16 = tmem::<ue4m3>([128, 16]);
    let sf8_s = smem::<ue8m0>([2, 32, 16]);
    let nv4_s = smem::<ue4m3>([32, 16]);
    let nv8_s = smem::<ue4m3>([2, 32, 16]);
    let nv16_s = smem::<ue4m3>([4, 32, 16]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sf8);
        tcgen05::alloc(nv4);
        tcgen05::alloc(nv8);
        tcgen05::alloc(nv16);
    }
    #[scope(thread = 0)]
    {
        tcgen05::cp(sf8, sf8_s);
        tcgen05::cp(nv4, nv4_s);
        tcgen05::cp(nv8, nv8_s);
        tcgen05::cp(nv16, nv16_s);
        tcgen05::mma(acc, a8, a8, accumulate = false, scale_a = nv4, scale_b = nv4);
        tcgen05::mma(acc, a4, a8, accumulate = false, scale_a = sf8, scale_b = sf8);
        tcgen05::mma(acc, a4, a4, accumulate = false, scale_a = sf8, scale_b = nv16);
        tcgen05::mma(acc, a4, a4, accumulate = false, scale_a = nv8, scale_b = nv8);
        tcgen05::mma(acc, a4, a4, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sf8);
        tcgen05::dealloc(nv4);
        tcgen05::dealloc(nv8);
        tcgen05::dealloc(nv16);
    }
}

// A 16-factor tile's image has 4 cells (`[4, 32, 16]`); 2 cells are half of it.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn fp4_factor_copy_of_the_wrong_size(#[shape(M, N)] d: Tensor<f32>) {
    let nv16 = tmem::<ue4m3>([128, 16]);
    let nv8_s = smem::<ue4m3>([2, 32, 16]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(nv16);
    }
    #[scope(thread = 0)]
    {
        tcgen05::cp(nv16, nv8_s);
    }
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(nv16);
    }
}

// Packed FP4 is an MMA operand in shared memory only: not in registers, not in tensor
// memory, not a cast target.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn fp4_in_registers(#[shape(M, N)] d: Tensor<f32>) {
    let t = regs::<e2m1x2>([128, 64], layout = tmem_32x32b);
    let p = tmem::<e2m1x2>([128, 128]);
    let u = regs::<f32>([128, 64], layout = tmem_32x32b);
    u = cast::<e2m1x2>(u);
}

fn main() {}
