use tirx::prelude::*;

// A layout contract that disagrees is reported at the op that refuses it, with a note at the
// declaration where the cause lies: a 64-byte swizzle on the buffers, 128 on the consumer.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn swizzle_64(#[shape(M, K)] a: Tensor<bf16>, #[shape(N, K)] b: Tensor<bf16>) {
    let a_s = smem::<bf16>([64, 32], swizzle = B64);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let acc = regs::<f32>([64, 64]);
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), bar);
        tma::load(b_s, b.tile(0, 0), bar);
    }
    bar.wait(0);
    wgmma::fence();
    wgmma::mma(acc, a_s, b_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
}

fn main() {}
