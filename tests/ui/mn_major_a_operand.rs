use tirx::prelude::*;

// wgmma reads a 16-bit A MN-major (`imm-trans-a`, `ui-pass/wgmma_mn_major_a_ok.rs`), but the
// 8-bit forms have no transpose operands (PTX ISA §9.7.15.5.2): an MN-major e4m3 A is refused
// where it is declared, with the reason and the K-major declaration to write instead.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<e4m3>) {
    let a_s = smem::<e4m3>([64, 128], swizzle = B128, major = mn);
    let b_s = smem::<e4m3>([128, 128], swizzle = B128);
    let acc = regs::<f32>([64, 128]);
    #[scope(warpgroup = 0)]
    {
        wgmma::mma(acc, a_s, b_s, accumulate = false);
    }
}

fn main() {}
