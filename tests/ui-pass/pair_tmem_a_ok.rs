use tirx::prelude::*;

// A in TMEM for the pair's M = 256: each CTA's 128 rows in its own TMEM, copied there by the
// even CTA's `tcgen05::cp(.., cta_group = 2)` and read by the pair's MMA.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_tmem_a_ok(#[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let a_t = tmem::<bf16>([128, 64]);
    let acc = tmem::<f32>([128, 64]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(a_t, cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    #[scope(warp = 1, elect)]
    {
        tcgen05::cp(a_t, a_s, cta_group = 2);
        tcgen05::mma(acc, a_t, b_s, accumulate = false, cta_group = 2);
        tcgen05::commit(done, cta_group = 2);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(cta.x, 0), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
        tcgen05::dealloc(a_t, cta_group = 2);
    }
}

// M = 128: this CTA's 64 rows of A copied into both lane halves of a [64, K] TMEM tile.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_tmem_a_m128_ok(#[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let a_t = tmem::<bf16>([64, 64]);
    let acc = tmem::<f32>([64, 64]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(a_t, cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    #[scope(warp = 1, elect)]
    {
        tcgen05::cp(a_t, a_s, cta_group = 2);
        tcgen05::mma(acc, a_t, b_s, accumulate = false, cta_group = 2);
        tcgen05::commit(done, cta_group = 2);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(cta.x, 0), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
        tcgen05::dealloc(a_t, cta_group = 2);
    }
}

fn main() {}
