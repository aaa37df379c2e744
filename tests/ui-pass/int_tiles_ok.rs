use tirx::prelude::*;

// The twin of `ui/int_tile_errors.rs`: integer arithmetic on integer tiles, indices mixed
// with `i32` tiles, and explicit casts between integers and floats.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn k(
    #[shape(M, N)] a: Tensor<i32>,
    #[shape(M, N)] b: Tensor<u32>,
    #[shape(M, N)] f: Tensor<f32>,
    #[shape(M, N)] y: Tensor<i32>,
) {
    let x = regs::<i32>([32, 64], layout = blocked(vec = 4));
    let u = regs::<u32>([32, 64], layout = blocked(vec = 4));
    let g = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(x, a.tile(cta.x, 0));
    copy(u, b.tile(cta.x, 0));
    copy(g, f.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), cast::<i32>(exp2_approx(cast::<f32>(x))));
    copy(y.tile(cta.x, 0), x + cast::<i32>(g));
    copy(y.tile(cta.x, 0), x * 3 / 2 + col_index(x));
    copy(y.tile(cta.x, 0), x + cast::<i32>(u));
    copy(f.tile(cta.x, 0), cast::<f32>(x % 7) + g);
    copy(b.tile(cta.x, 0), (u >> 3) & 255);
    let m = reduce_max(cast::<f32>(x), axis = 1);
    copy(f.tile(cta.x, 0), g + m);
}

fn main() {}
