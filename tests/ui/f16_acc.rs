use tirx::prelude::*;

// An f16 accumulator (tcgen05.mma dtype F16) is an unpacked `tmem::<f16>` tile, one element
// to a 32-bit cell (PTX ISA §9.7.16.10.4.1); under kind::f16 only f16 operands accumulate in
// f16 (bf16 accumulates in f32, §9.7.16.2.1). (`unpacked` on a 32-bit tile:
// `ui/tmem_unpacked_f32.rs`.)
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn f16_acc_errors(#[shape(M, N)] d: Tensor<f16>) {
    let a_f16 = smem::<f16>([128, 64], swizzle = B128);
    let a_bf16 = smem::<bf16>([128, 64], swizzle = B128);
    let b_f16 = smem::<f16>([64, 64], swizzle = B128);
    let b_bf16 = smem::<bf16>([64, 64], swizzle = B128);
    let packed = tmem::<f16>([128, 64]);
    let acc = tmem::<f16>([128, 64], unpacked = true);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(packed);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(packed, a_f16, b_f16, accumulate = false);
        tcgen05::mma(acc, a_bf16, b_bf16, accumulate = false);
        tcgen05::mma(acc, a_f16, b_f16, accumulate = true);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(packed);
    }
}

fn main() {}
