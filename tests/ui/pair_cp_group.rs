use tirx::prelude::*;

// The pair's factors allocated for the pair but copied with a one-CTA `tcgen05.cp`: every
// tcgen05 instruction of a kernel has one `cta_group` (PTX ISA §9.7.16.9.2).
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_cp_group(
    #[shape(M, K)] a: Tensor<e4m3>,
    #[shape(N, K)] b: Tensor<e4m3>,
    #[shape(MS, KS)] sfa: Tensor<ue8m0>,
    #[shape(NS, KS)] sfb: Tensor<ue8m0>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<e4m3>([128, 128], swizzle = B128);
    let b_s = smem::<e4m3>([64, 128], swizzle = B128);
    let sfa_s = smem::<ue8m0>([32, 16]);
    let sfb_s = smem::<ue8m0>([32, 16]);
    let acc = tmem::<f32>([128, 128]);
    let sfa_t = tmem::<ue8m0>([128, 4]);
    let sfb_t = tmem::<ue8m0>([128, 4]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::alloc(sfa_t, cta_group = 2);
        tcgen05::alloc(sfb_t, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.x, 0), full);
        tma::load(b_s, b.tile(cta_rank, 0), full);
        tma::load(sfa_s, sfa.tile(cta.x, 0), full);
        tma::load(sfb_s, sfb.tile(0, 0), full);
    }
    full.wait(0);
    cluster_sync();
    #[scope(warp = 1, elect)]
    {
        tcgen05::cp(sfa_t, sfa_s);
        tcgen05::cp(sfb_t, sfb_s, cta_group = 2);
        tcgen05::mma(acc, a_s, b_s, accumulate = false, scale_a = sfa_t, scale_b = sfb_t, cta_group = 2);
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
        tcgen05::dealloc(sfa_t, cta_group = 2);
        tcgen05::dealloc(sfb_t, cta_group = 2);
    }
}

// `cta_group = 2` on a copy in a kernel without a cluster of CTA pairs.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn cp_without_pair(#[shape(MS, KS)] sfa: Tensor<ue8m0>) {
    let sfa_s = smem::<ue8m0>([32, 16]);
    let sfa_t = tmem::<ue8m0>([128, 4]);
    let full = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(sfa_t);
    }
    #[scope(thread = 0)]
    {
        tma::load(sfa_s, sfa.tile(0, 0), full);
    }
    full.wait(0);
    #[scope(thread = 0)]
    {
        tcgen05::cp(sfa_t, sfa_s, cta_group = 2);
    }
}

fn main() {}
