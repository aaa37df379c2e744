use tirx::prelude::*;

// A store whose tile and vector disagree names the mismatch: the tile's shape against what a
// vector takes, not the general rule or a box extent.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), 1))]
pub fn row_to_vector(#[shape(M, N)] x: Tensor<f32>, #[shape(N)] v: Tensor<f32>) {
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(0, cta.x));
    copy(v.tile(cta.x), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), 1))]
pub fn smem_to_vector(#[shape(M, N)] x: Tensor<bf16>, #[shape(N)] v: Tensor<bf16>) {
    let s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(s, x.tile(0, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(v.tile(cta.x), s);
        tma::commit_group();
        tma::wait_group(0);
    }
}

fn main() {}
