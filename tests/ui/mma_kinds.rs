use tirx::prelude::*;

// The tcgen05.mma kind comes from the operand types (PTX ISA §9.7.16.10.1): f32 × bf16 and
// e4m3 × f32 mix two kinds in one MMA; an f32 tile of 64-element (256-byte) rows is not one
// 128-byte swizzle span per row, so K per instruction cannot step through it; an 8-bit float
// is an MMA operand type only (no register or TMEM tile of it, no cast to it); N = 264 is
// past kind::f8f6f4's N ≤ 256 (PTX ISA §9.7.16.2.1, as for the other kinds).
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn bad_kinds(#[shape(M, N)] d: Tensor<f32>) {
    let a_f32 = smem::<f32>([128, 32], swizzle = B128);
    let b_bf16 = smem::<bf16>([64, 64], swizzle = B128);
    let a_e4m3 = smem::<e4m3>([128, 128], swizzle = B128);
    let b_f32 = smem::<f32>([64, 32], swizzle = B128);
    let a_wide = smem::<f32>([128, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 64]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_f32, b_bf16, accumulate = false);
        tcgen05::mma(acc, a_e4m3, b_f32, accumulate = true);
        tcgen05::mma(acc, a_wide, b_f32, accumulate = true);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn fp8_in_registers(#[shape(M, N)] d: Tensor<f32>) {
    let t = regs::<e5m2>([128, 64], layout = tmem_32x32b);
    let p = tmem::<e4m3>([128, 128]);
    let u = regs::<f32>([128, 64], layout = tmem_32x32b);
    u = cast::<e4m3>(u);
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn fp8_n_too_wide(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e4m3>([264, 128], swizzle = B128);
    let acc = tmem::<f32>([128, 264]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
