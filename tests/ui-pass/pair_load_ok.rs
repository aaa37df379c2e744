use tirx::prelude::*;

// The pair loads each CTA's halves onto the even CTA's barrier, issues from the even CTA, and
// releases its columns after a cluster barrier: the peer's last read first.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2 * cdiv(M, 256), cdiv(N, 64)))]
pub fn pair_load_ok(
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
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

fn main() {}
