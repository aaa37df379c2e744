use tirx::prelude::*;

// The twin of `ui/constant_ranges.rs`: the last stage, a run-time stage index, shifts by 0…31,
// a cluster of 8 and a grid at the limit of y all pass.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (8, 1, 1), grid = (8, 65535), configs(default = (STAGES = 3)))]
pub fn stage_index(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let st = smem::<bf16>([STAGES, 64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(st[STAGES - 1], x.tile(cta.y << 0, cta.x >> 31), bar);
    }
    bar.wait(0);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    copy(t, st[STAGES - 1]);
    let u = exp2_approx(t);
    copy(y.tile(cta.y, cta.x), u);
}

fn main() {}
