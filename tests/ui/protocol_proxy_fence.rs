use tirx::prelude::*;

// Proxy fences: shared memory written by threads and read by the async proxy with no
// `fence::proxy_async()` between — by a TMA store, and by an MMA (also across loop
// iterations).
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn store_unfenced(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    copy(t, x.tile(cta.y, cta.x));
    copy(ys, t * 2.0);
    sync_threads();
    #[scope(thread = 0)]
    {
        tma::store(y.tile(cta.y, cta.x), ys);
        tma::commit_group();
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 128), cdiv(M, 128)))]
pub fn mma_unfenced(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([128, 64], swizzle = B128);
    let acc = regs::<f32>([128, 128]);
    for k in 0..cdiv(K, 64) {
        copy(a_s, a.tile(cta.y, k));
        copy(b_s, b.tile(cta.x, k));
        sync_threads();
        wgmma::fence();
        wgmma::mma(acc, a_s, b_s, accumulate = k > 0);
        wgmma::commit();
        wgmma::wait(0);
        sync_threads();
    }
    copy(d.tile(cta.y, cta.x), acc);
}

fn main() {}
