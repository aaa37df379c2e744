//! The right versions of `ui/protocol_parity_paths.rs`: each wait names the last phase
//! signalled before it; a barrier another role signals, or that starts out free, is accepted.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn arrive_then_wait_zero() {
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
    bar.wait(0);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn load_then_wait_zero(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let phase = 0;
    #[scope(thread = 0)]
    {
        tma::load(xs, x.tile(cta.x, 0), bar);
    }
    bar.wait(phase);
    copy(t, xs);
    copy(y.tile(cta.x, 0), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn alternating_parities() {
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
    bar.wait(1);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn both_branches_then_wait_zero(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        if cta.x % 2 == 0 {
            tma::load(xs, x.tile(cta.x, 0), bar);
        } else {
            tma::load(xs, x.tile(cta.x, 1), bar);
        }
    }
    bar.wait(0);
    copy(t, xs);
    copy(y.tile(cta.x, 0), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn whole_cta_phase() {
    let bar = mbarrier(arrivals = 128);
    bar.arrive();
    bar.wait(0);
}

// Another role signals `full` (it is not judged by program order); `empty` starts out free
// (`wait(1)` returns at once on a fresh barrier) and is signalled after the producer's wait.
#[tile_kernel(target = sm_90a, threads = 64, grid = (1, 1))]
pub fn two_roles() {
    let full = mbarrier();
    let empty = mbarrier();
    #[scope(warp = 1, elect)]
    {
        full.wait(0);
        empty.arrive();
    }
    #[scope(warp = 0, elect)]
    {
        empty.wait(1);
        full.arrive();
        empty.wait(0);
    }
}

fn main() {}
