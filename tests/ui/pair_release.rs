use tirx::prelude::*;

// The pair's columns released after a CTA barrier only, as a one-CTA kernel releases its own:
// the peer may still be reading its rows.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2 * cdiv(M, 256), cdiv(N, 64)))]
pub fn pair_release(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 64]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.x, 0), full, cta_group = 2);
        tma::load(b_s, b.tile(2 * cta.y + cta_rank, 0), full, cta_group = 2);
    }
    #[scope(warp = 1, elect)]
    {
        if cta_rank == 0 {
            full.wait(0);
            tcgen05::mma(acc, a_s, b_s, accumulate = false, cta_group = 2);
            tcgen05::commit(done, cta_group = 2);
        }
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(cta.x, cta.y), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

fn main() {}
