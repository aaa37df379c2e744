use tirx::prelude::*;

// The twins of ui/mma_kinds.rs: f32 × f32 (kind::tf32) and e4m3 × e5m2 (kind::f8f6f4, A and
// B may differ, N = 256 the widest), each with rows of one 128-byte span (32 f32, 128 FP8
// elements).
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn good_kinds(#[shape(M, N)] d: Tensor<f32>) {
    let a_f32 = smem::<f32>([128, 32], swizzle = B128);
    let b_f32 = smem::<f32>([64, 32], swizzle = B128);
    let a_e4m3 = smem::<e4m3>([128, 128], swizzle = B128);
    let b_e5m2 = smem::<e5m2>([256, 128], swizzle = B128);
    let acc = tmem::<f32>([128, 64]);
    let fp8 = tmem::<f32>([128, 256]);
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(fp8);
    }
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_f32, b_f32, accumulate = false);
        tcgen05::mma(fp8, a_e4m3, b_e5m2, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(fp8);
        tcgen05::dealloc(acc);
    }
}

fn main() {
    let ptx = good_kinds::ARTIFACTS[0].ptx;
    assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::tf32"));
    assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::f8f6f4"));
}
