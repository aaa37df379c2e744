use tirx::prelude::*;

// Hopper FP8 wgmma (PTX ISA §9.7.15.5.2, `.m64nNk32.f32.e4m3/e5m2`): the 8-bit forms have no
// `imm-trans-a`/`imm-trans-b` operands, so both operands must be K-major — an 8-bit tile
// declared MN-major (`major = mn`, the layout a K×N tensor's TMA boxes leave) is refused at
// its declaration; an 8-bit operand with a 16-bit one is two instruction types; an f32 shared
// tile is no wgmma operand type here; N = 264 is past the `.m64nNk32` shapes' N ≤ 256.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn fp8_mn_major(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([64, 128], swizzle = B128);
    let b_mn = smem::<e4m3>([128, 128], swizzle = B128, major = mn);
    let acc = regs::<f32>([64, 128]);
    #[scope(warpgroup = 0)]
    {
        wgmma::mma(acc, a_s, b_mn, accumulate = false);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn fp8_types(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([64, 128], swizzle = B128);
    let b_bf16 = smem::<bf16>([64, 64], swizzle = B128);
    let a_f32 = smem::<f32>([64, 32], swizzle = B128);
    let b_f32 = smem::<f32>([64, 32], swizzle = B128);
    let acc = regs::<f32>([64, 64]);
    #[scope(warpgroup = 0)]
    {
        wgmma::mma(acc, a_s, b_bf16, accumulate = false);
        wgmma::mma(acc, a_f32, b_f32, accumulate = false);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn fp8_n_too_wide(#[shape(M, N)] d: Tensor<f32>) {
    let a_s = smem::<e4m3>([64, 128], swizzle = B128);
    let b_s = smem::<e4m3>([264, 128], swizzle = B128);
    let acc = regs::<f32>([64, 264]);
    #[scope(warpgroup = 0)]
    {
        wgmma::mma(acc, a_s, b_s, accumulate = false);
    }
}

fn main() {}
