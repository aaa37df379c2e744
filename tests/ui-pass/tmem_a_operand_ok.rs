//! The right version of `ui/tmem_a_operand.rs`: A in tensor memory is a 16-bit tile of 128
//! rows, B stays in shared memory, and the copy into TMEM (`copy` picks `tcgen05_cp`) is
//! issued by the one thread that issues the MMAs reading it.
use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn good_a(#[shape(M, K)] a: Tensor<bf16>, #[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 64]);
    let a_t = tmem::<bf16>([128, 64]);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(a_t);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), loaded);
        tma::load(b_s, a.tile(0, 0), loaded);
    }
    loaded.wait(0);
    #[scope(thread = 0)]
    {
        copy(a_t, a_s);
        tcgen05::mma(acc, a_t, b_s, accumulate = false);
        tcgen05::mma(acc, a_s, b_s, accumulate = true);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(a_t);
        tcgen05::dealloc(acc);
    }
}

fn main() {}
