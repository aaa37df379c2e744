use tirx::prelude::*;

// Scalar arguments are `f32`, `i32`, `u32`, `i64` or `u64`: an `i16` is an error at its
// type; an integer scalar is an integer (no float arithmetic on it without a cast, not a
// copy's scale), and a scalar takes no attributes.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn k(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M, N)] y: Tensor<f32>,
    n: i32,
    alpha: f32,
    wide: i16,
    #[shape(K)] k: u32,
) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), t * n);
    copy(y.tile(cta.x, 0), t, alpha = n);
}

fn main() {}
