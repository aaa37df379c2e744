use tirx::prelude::*;

// Misuses of tensor memory as an MMA operand and of `tcgen05.cp`: an f32 TMEM tile as A (A
// from TMEM is 16-bit, packed two to a column); a 64-row 16-bit TMEM tile as A (A from TMEM
// fills the 128 lanes, row = lane); B in tensor memory (only A may come from TMEM); and a
// `tcgen05::cp` issued by a whole warpgroup (one thread issues it).
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn bad_a(#[shape(M, K)] a: Tensor<bf16>, #[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 64]);
    let a_f32 = tmem::<f32>([128, 64]);
    let a_half = tmem::<bf16>([64, 64]);
    let b_t = tmem::<bf16>([128, 64]);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(a_f32);
        tcgen05::alloc(a_half);
        tcgen05::alloc(b_t);
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
    tcgen05::cp(b_t, a_s);
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_f32, b_s, accumulate = false);
        tcgen05::mma(acc, a_half, b_s, accumulate = true);
        tcgen05::mma(acc, a_s, b_t, accumulate = true);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(b_t);
        tcgen05::dealloc(a_half);
        tcgen05::dealloc(a_f32);
        tcgen05::dealloc(acc);
    }
}

fn main() {}
