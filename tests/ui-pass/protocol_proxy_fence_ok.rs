//! The right version of `ui/protocol_proxy_fence.rs`: `fence::proxy_async()` after the
//! threads' stores, then the barrier, then the async-proxy read.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn store_fenced(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let ys = smem::<bf16>([64, 64]);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    copy(t, x.tile(cta.y, cta.x));
    copy(ys, t * 2.0);
    fence::proxy_async();
    sync_threads();
    #[scope(thread = 0)]
    {
        tma::store(y.tile(cta.y, cta.x), ys);
        tma::commit_group();
        tma::wait_group(0);
    }
}

fn main() {
    assert_eq!(store_fenced::ARTIFACTS.len(), 1);
}
