use tirx::prelude::*;

// The 16-bit twin of `ui/mn_major_a_operand.rs`: an MN-major bf16 A (A given K×M, read with
// wgmma's `imm-trans-a`, PTX ISA §9.7.15.5.1.2) beside a K-major and an MN-major B.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128, major = mn);
    let b_k = smem::<bf16>([128, 64], swizzle = B128);
    let b_mn = smem::<bf16>([128, 64], swizzle = B128, major = mn);
    let acc = regs::<f32>([64, 128]);
    #[scope(warpgroup = 0)]
    {
        wgmma::fence();
        wgmma::mma(acc, a_s, b_k, accumulate = false);
        wgmma::mma(acc, a_s, b_mn, accumulate = true);
        wgmma::commit();
        wgmma::wait(0);
    }
}

fn main() {}
