//! The right version of `ui/protocol_tmem_a_in_flight.rs`: the second P is written only
//! after the wait on the barrier the first PV MMA's commit signals.
use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn p_rewritten_after_wait(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(J, N)] v: Tensor<bf16>,
    #[shape(M, J)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let v_s = smem::<bf16>([64, 64], swizzle = B128);
    let s = tmem::<f32>([128, 64]);
    let o = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64], alias = s);
    let t = regs::<f32>([128, 64], layout = tmem_16x256b);
    let p = regs::<bf16>([128, 64], layout = tmem_16x256b);
    let loaded = mbarrier();
    let s_done = mbarrier();
    let o_done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(s);
        tcgen05::alloc(o);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), loaded);
        tma::load(v_s, v.tile(0, 0), loaded);
    }
    loaded.wait(0);
    #[scope(thread = 0)]
    {
        tcgen05::mma(s, a_s, v_s, accumulate = false);
        tcgen05::commit(s_done);
    }
    s_done.wait(0);
    copy(t, s);
    p = cast::<bf16>(t);
    copy(p_t, p);
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::mma(o, p_t, v_s, accumulate = false);
        tcgen05::commit(o_done);
    }
    o_done.wait(0);
    p = cast::<bf16>(t * 0.5);
    copy(p_t, p);
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::mma(o, p_t, v_s, accumulate = true);
        tcgen05::commit(o_done);
    }
    o_done.wait(1);
    copy(d.tile(0, 0), o);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(s);
        tcgen05::dealloc(o);
    }
}

fn main() {}
