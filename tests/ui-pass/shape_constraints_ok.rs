use tirx::prelude::*;

// The twin of `ui/shape_constraints.rs`: fixed extents (a literal, a config constant, a
// constant expression) and `static_assert`s over shape symbols, checked at launch.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (cdiv(M, 64), 1),
    configs(default = (HALF = 32)),
)]
pub fn halves(
    #[shape(M, D)] x: Tensor<f32>,
    #[shape(M, 2 * HALF)] y: Tensor<f32>,
    #[shape(M, HALF)] lo: Tensor<f32>,
    #[shape(M, 1)] lse: Tensor<f32>,
) {
    static_assert(HALF * 2 == 64);
    static_assert(D % 64 == 0, "rows are whole chunks");
    static_assert(HALF * 2 == D && M >= 64);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), t);
}

fn main() {
    let sig = (halves::KERNEL.artifacts[0].signature)();
    assert_eq!(sig.tensors[1].shape, ["M", "64"]);
    assert_eq!(sig.tensors[2].shape, ["M", "32"]);
    assert_eq!(sig.tensors[3].shape, ["M", "1"]);
    assert_eq!(sig.checks.len(), 3);
}
