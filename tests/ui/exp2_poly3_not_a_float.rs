use tirx::prelude::*;

// `exp2_poly3` takes a float: an index (`col_index`) or a mask is not one.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, cdiv(M, 64)))]
pub fn k(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.y, 0));
    copy(y.tile(cta.y, 0), exp2_poly3(col_index(t)) + t);
    copy(y.tile(cta.y, 0), exp2_poly3(t < 0.0) + t);
}

fn main() {}
