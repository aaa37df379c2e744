use tirx::prelude::*;

// The pair's M is 256 (128 rows per CTA) or 128 (64 per CTA): 32 rows per CTA is neither.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_m64(#[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([32, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let acc = tmem::<f32>([32, 64]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
    }
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false, cta_group = 2);
    }
}

// M = 128 across the pair takes N a multiple of 32 (PTX ISA Table 39): N = 16 is M = 256's.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_m128_n16(#[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([8, 64], swizzle = B128);
    let acc = tmem::<f32>([4, 64, 16]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
    }
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc[0], a_s, b_s, accumulate = false, cta_group = 2);
    }
}

fn main() {}
