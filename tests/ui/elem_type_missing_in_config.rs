use tirx::prelude::*;

// `TD` is an element type in `default` but missing from `wide`.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (1, 1),
    configs(default = (TA = bf16, TD = bf16), wide = (TA = bf16)),
)]
pub fn k(#[shape(M, N)] src: Tensor<TA>, #[shape(M, N)] dst: Tensor<TD>) {
    let tile = smem::<TA>([64, 64], swizzle = B128);
}

fn main() {}
