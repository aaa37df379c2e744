//! The compile-pass twin of `ui/i8_kinds.rs`: i8 × u8 shared tiles, K-major, into a
//! `tmem::<i32>` accumulator (kind::i8, s32 D), stored to an i32 tensor.

use tirx::prelude::*;

#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn i8_kinds(#[shape(M, N)] d: Tensor<i32>) {
    let a_i8 = smem::<i8>([128, 128], swizzle = B128);
    let b_u8 = smem::<u8>([64, 128], swizzle = B128);
    let acc = tmem::<i32>([128, 64]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_i8, b_u8, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {
    let ptx = i8_kinds::ARTIFACTS[0].ptx;
    assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::i8"));
}
