use tirx::prelude::*;

#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (1, 1),
    configs(default = (T = bf16), half = (T = f16)),
)]
pub fn k(#[shape(M, N)] src: Tensor<T>, #[shape(M, N)] dst: Tensor<T>) {}

// `src` and `dst` share the type parameter `T`: tensors of two types do not type-check.
fn call(rt: &tirx::Runtime, a: &tirx::Tensor<tirx::bf16>, b: &tirx::Tensor<tirx::f16>) {
    let _ = k::launch(rt, "half", a, b);
}

fn main() {}
