//! `silu_mul` — the elementwise fused op of a SwiGLU MLP: `y = silu(x) · g = x·σ(x)·g` over
//! 2-D bf16 tensors, f32 arithmetic, one read of x and g and one write of y.
//!
//! Each CTA takes an `R × C` tile in a `blocked` register layout (16-byte loads and stores),
//! tails in both dimensions masked by the loads and stores; `σ(x) = 1/(1 + 2^(−x·log2 e))`
//! with `exp2_approx` and `rcp_approx`.

use tirx::prelude::*;

#[tile_kernel(
    solves = silu_mul,
    target = sm_90a,
    threads = 256,
    grid = (cdiv(N, C), cdiv(M, R)),
    configs(default = (R = 8, C = 512, V = 8), wide = (R = 4, C = 2048, V = 8)),
)]
pub fn silu_mul(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] g: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
) {
    let xt = regs::<f32>([R, C], layout = blocked(vec = V));
    let gt = regs::<f32>([R, C], layout = blocked(vec = V));
    copy(xt, x.tile(cta.y, cta.x));
    copy(gt, g.tile(cta.y, cta.x));
    copy(
        y.tile(cta.y, cta.x),
        xt * rcp_approx(1.0 + exp2_approx(xt * -1.442695)) * gt,
    );
}
