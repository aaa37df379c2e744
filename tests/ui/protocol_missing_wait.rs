use tirx::prelude::*;

// Missing waits: a TMA load's destination read into registers before the barrier's wait, an
// MMA reading a stage whose load was not waited for, and a TMA store of a tile still loading.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn no_wait(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(xs, x.tile(cta.y, cta.x), bar);
    }
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    copy(t, xs);
    bar.wait(0);
    copy(y.tile(cta.y, cta.x), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn mma_early(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let acc = regs::<f32>([64, 64]);
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.y, 0), bar);
        tma::load(b_s, b.tile(cta.x, 0), bar);
    }
    wgmma::fence();
    wgmma::mma(acc, a_s, b_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
    bar.wait(0);
    copy(d.tile(cta.y, cta.x), acc);
}

#[tile_kernel(target = sm_90a, threads = 32, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn store_early(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(xs, x.tile(cta.y, cta.x), bar);
        tma::store(y.tile(cta.y, cta.x), xs);
        tma::commit_group();
        tma::wait_group(0);
    }
    bar.wait(0);
}

fn main() {}
