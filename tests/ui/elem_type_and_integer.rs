use tirx::prelude::*;

// `T` is an element type in one config and an integer in the other, and an integer constant
// is used as an element type.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (1, 1),
    configs(default = (T = f16, BM = 64), other = (T = 2, BM = 64)),
)]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let tile = smem::<BM>([64, 64], swizzle = B128);
}

fn main() {}

// A Rust integer tirx does not have is named as such, with no suggestion to alias it in a
// config.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn wide(#[shape(M, N)] src: Tensor<i16>) {}
