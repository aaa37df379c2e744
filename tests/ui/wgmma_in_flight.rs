use tirx::prelude::*;

// Register tiles an asynchronous wgmma still uses: the accumulator read before the wait that
// retires its MMA, the register A operand overwritten while the MMA may read it, and a
// pipelined loop that leaves one group pending at the epilogue.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let acc = regs::<f32>([64, 64]);
    let a_r = regs::<bf16>([64, 64]);
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), bar);
        tma::load(b_s, b.tile(0, 0), bar);
    }
    bar.wait(0);
    wgmma::fence();
    wgmma::mma(acc, a_s, b_s, accumulate = false);
    wgmma::commit();
    copy(d.tile(0, 0), acc);
    wgmma::wait(0);
    copy(a_r, a_s);
    wgmma::fence();
    wgmma::mma(acc, a_r, b_s, accumulate = true);
    wgmma::commit();
    a_r = a_r * 2.0;
    wgmma::wait(0);
    for i in 0..4 {
        wgmma::fence();
        wgmma::mma(acc, a_s, b_s, accumulate = true);
        wgmma::commit();
        wgmma::wait(1);
    }
    copy(d.tile(0, 0), acc);
}

fn main() {}
