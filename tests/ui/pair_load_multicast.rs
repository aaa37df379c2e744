use tirx::prelude::*;

// The pair's load multicast to its own peer: the peer loads its own half, so a box the mask
// also sends there would land twice (and the even CTA's barrier could not count it).
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2 * cdiv(M, 256), cdiv(N, 64)))]
pub fn pair_load_multicast(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let full = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.x, 0), full, multicast = 3, cta_group = 2);
        tma::load(b_s, b.tile(2 * cta.y + cta_rank, 0), full, cta_group = 2);
    }
}

fn main() {}
