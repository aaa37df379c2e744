use tirx::prelude::*;

// A in TMEM for the pair's M = 128 is this CTA's 64 rows (`[64, K]`, read from both lane
// halves by the 2x2 data path), not a [128, K] tile.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_tmem_a_m128(#[shape(M, N)] d: Tensor<bf16>) {
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let a_t = tmem::<bf16>([128, 64]);
    let acc = tmem::<f32>([64, 64]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(a_t, cta_group = 2);
    }
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc, a_t, b_s, accumulate = false, cta_group = 2);
    }
}

fn main() {}
