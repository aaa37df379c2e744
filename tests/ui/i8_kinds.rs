use tirx::prelude::*;

// kind::i8 (PTX ISA §9.7.16.10.1): i8 / u8 are shared-memory MMA operands only (no register
// or TMEM tile of them, no cast to them, K-major only); the kind accumulates in s32, so its
// accumulator is a `tmem::<i32>` tile and an i32 accumulator takes 8-bit integers only; i8
// does not mix with FP8 in one MMA; the s32 accumulator is stored to an i32 tensor only.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn i8_off_shared_memory(#[shape(M, N)] d: Tensor<f32>) {
    let t = regs::<i8>([128, 64], layout = tmem_32x32b);
    let p = tmem::<u8>([128, 128]);
    let u = regs::<f32>([128, 64], layout = tmem_32x32b);
    u = cast::<i8>(u);
    let mn = smem::<u8>([64, 128], swizzle = B128, major = mn);
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn i8_kinds(#[shape(M, N)] d: Tensor<f32>) {
    let a_i8 = smem::<i8>([128, 128], swizzle = B128);
    let b_u8 = smem::<u8>([64, 128], swizzle = B128);
    let b_e4m3 = smem::<e4m3>([64, 128], swizzle = B128);
    let a_bf16 = smem::<bf16>([128, 64], swizzle = B128);
    let b_bf16 = smem::<bf16>([64, 64], swizzle = B128);
    let acc_f32 = tmem::<f32>([128, 64]);
    let acc = tmem::<i32>([128, 64]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc_f32);
        tcgen05::alloc(acc);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc_f32, a_i8, b_u8, accumulate = false);
        tcgen05::mma(acc, a_bf16, b_bf16, accumulate = false);
        tcgen05::mma(acc, a_i8, b_e4m3, accumulate = false);
        tcgen05::mma(acc, a_i8, b_u8, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc_f32);
        tcgen05::dealloc(acc);
    }
}

fn main() {}
