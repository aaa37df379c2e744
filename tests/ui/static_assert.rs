use tirx::prelude::*;

// `static_assert` states what the code needs of a config; a config that breaks it is an error
// at the assertion with its message, and a condition only known at run time is refused.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (1, 1),
    configs(wide = (BN = 256), odd = (BN = 192)),
)]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    static_assert(BN % 128 == 0, "B is loaded in 128-column halves");
    static_assert(tid < 128, "one warpgroup");
    static_assert(BN > 0, why);
}

fn main() {}
