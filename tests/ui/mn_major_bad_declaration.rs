use tirx::prelude::*;

// An MN-major tile `[.., MN, K]` holds 16-bit elements, stored in chunks of one swizzle span
// of MN: f32, an MN extent that is not whole 64-element spans, or no swizzle are refused at
// the `major` argument.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
    let f = smem::<f32>([64, 32], swizzle = B128, major = mn);
    let ragged = smem::<bf16>([96, 64], swizzle = B128, major = mn);
    let plain = smem::<bf16>([64, 64], major = mn);
    let typo = smem::<bf16>([64, 64], swizzle = B128, major = n);
}

fn main() {}
