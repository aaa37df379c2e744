use tirx::prelude::*;

// Constants that cannot be right, in several forms: a stage index past the buffer (a literal,
// a config constant, an expression of constants), a shift by the scalar width or more, a
// cluster over the portable size, a grid over the launch limit, and an unknown function
// where a tile is expected.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), 1), configs(default = (STAGES = 3)))]
pub fn stage_index(#[shape(M, N)] x: Tensor<bf16>) {
    let st = smem::<bf16>([STAGES, 64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(st[STAGES], x.tile(0, cta.x), bar);
    }
    bar.wait(0);
    let t = regs::<f32>([64, 64]);
    copy(t, st[STAGES + 1]);
    copy(t, st[7]);
    let s = cta.x << 32;
    let r = cta.y >> STAGES * 11;
    copy(t, exp2_aprox(t));
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (4, 4, 1), grid = (16, 70000))]
pub fn launch_limits(#[shape(M, N)] x: Tensor<bf16>) {
    let t = regs::<f32>([1, 1024], layout = blocked(vec = 8));
    copy(t, x.tile(cta.x, 0));
}

fn main() {}
