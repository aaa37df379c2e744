use tirx::prelude::*;

// Integer tiles take integer arithmetic only: a float function, a float operand, a tile of
// the other integer type, `%` on floats, a cast to a 16-bit float, `-` of a `u32`, a float
// tile loaded from an integer tensor and an integer tile in shared memory are errors at the
// user's token.
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
    copy(y.tile(cta.x, 0), exp2_approx(x));
    copy(y.tile(cta.x, 0), x + g);
    copy(y.tile(cta.x, 0), x * 1.5);
    copy(y.tile(cta.x, 0), x + u);
    copy(f.tile(cta.x, 0), g % g);
    copy(f.tile(cta.x, 0), cast::<bf16>(x));
    copy(b.tile(cta.x, 0), -u);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn load_float(#[shape(M, N)] a: Tensor<i32>) {
    let g = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(g, a.tile(cta.x, 0));
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn in_smem(#[shape(M, N)] a: Tensor<i32>) {
    let s = smem::<i32>([32, 64]);
}

fn main() {}
