use tirx::prelude::*;

// Fixed extents and `static_assert`s over shape symbols (docs/language.md §3): a condition
// with no shape symbol is decided at build time, a name that is neither a shape symbol nor a
// config constant is an error at the name, and a fixed extent must fold to a positive integer.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (cdiv(M, 64), 1),
    configs(default = (HALF = 32, T = bf16)),
)]
pub fn halves(
    #[shape(M, D)] x: Tensor<f32>,
    #[shape(M, 2 * HALF)] y: Tensor<f32>,
    #[shape(M, HALF - 32)] empty: Tensor<f32>,
    #[shape(M, T)] typed: Tensor<f32>,
) {
    static_assert(HALF * 2 == 60);
    static_assert(D % WIDTH == 0, "rows are whole chunks");
    static_assert(D == 64 || D == 128);
    static_assert(HALF * 2 == D && HALF > 64);
    for k in 0..2 {
        static_assert(D % 64 == 0);
    }
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), t);
}

fn main() {}
