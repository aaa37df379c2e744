use tirx::prelude::*;

// The compile-pass twin of `ui/f16_acc.rs`: f16 × f16 into an unpacked f16 accumulator
// (kind::f16, dtype F16), read back by the TMEM epilogue into an f16 tensor.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn f16_acc_ok(#[shape(M, N)] d: Tensor<f16>) {
    let a_f16 = smem::<f16>([128, 64], swizzle = B128);
    let b_f16 = smem::<f16>([64, 64], swizzle = B128);
    let acc = tmem::<f16>([128, 64], unpacked = true);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_f16, b_f16, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
