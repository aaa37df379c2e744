use tirx::prelude::*;

// An MN-major tensor (`#[major(mn)]`) is read only by `tma::load` into an MN-major tile; a
// K-major tile, a store, a rank-3 tensor and an MN-major tile indexed past its leading
// dimensions are errors at the offending token.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1), configs(default = (MB = mn)))]
pub fn k(
    #[shape(N, K)]
    #[major(mn)]
    b: Tensor<bf16>,
    #[shape(N, K)]
    #[major(MB)]
    c: Tensor<bf16>,
) {
    let kt = smem::<bf16>([64, 64], swizzle = B128);
    let mn = smem::<bf16>([2, 128, 64], swizzle = B128, major = mn);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(kt, b.tile(0, 0), bar);
        tma::store(c.tile(0, 0), mn[0]);
        tma::load(mn[0][1], b.tile(0, 0), bar);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn rank1(
    #[shape(N)]
    #[major(mn)]
    b: Tensor<bf16>,
) {
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1), configs(default = (MB = 1)))]
pub fn not_a_majorness(
    #[shape(N, K)]
    #[major(MB)]
    b: Tensor<bf16>,
) {
}

fn main() {}
