use tirx::prelude::*;

// `oob = zero` is the one value of a gather's `oob` (an out-of-range index reads 0 by
// intent); another value, in a tile expression or a gather into a scalar, is an error at it.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn k(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M)] target: Tensor<i32>,
    #[shape(M)] loss: Tensor<f32>,
) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    let tg = regs::<i32>([4, 1], layout = stat(t, axis = 1));
    copy(tg, target.tile(cta.x));
    copy(loss.tile(cta.x), gather(x, cta.x * 4 + row_index(tg), tg, oob = clamp));
    let first = gather(target, cta.x, oob = 0);
}

fn main() {}
