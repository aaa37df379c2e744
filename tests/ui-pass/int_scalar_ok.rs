use tirx::prelude::*;

// The twin of `ui/int_scalar_errors.rs`: an `i32` scalar cast to float, an integer scalar in
// a tile coordinate and in a loop bound, and the launcher taking them by type.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn k(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M, N)] y: Tensor<f32>,
    n: i32,
    first: u32,
    alpha: f32,
) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    let acc = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    acc = t * 0.0;
    for i in 0..first {
        copy(t, x.tile(cta.x + i, 0));
        acc = acc + t * cast::<f32>(col_index(t) + n);
    }
    copy(y.tile(cta.x, 0), acc * alpha);
}

fn main() {}
