//! `softmax` — row softmax, bf16 in and out, f32 statistics: `y[r, :] = exp(x[r, :] −
//! max(x[r, :])) / Σ exp(…)`.
//!
//! One CTA per `R` rows; the whole row lives in registers (a `blocked` register tile: each
//! thread holds runs of `V` consecutive columns, 16-byte loads), so x is read once and y
//! written once. Columns past `N` read as −∞ (they add 0 to the sum); the row max and sum
//! are reductions along the columns: within each thread, across the lanes (`shfl.sync.bfly`)
//! and across the warps of the CTA (shared memory). `exp` is `exp2_approx` of `x·log2(e)`
//! with the max subtracted first, so every exponent is ≤ 0.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    grid = (cdiv(M, R), 1),
    configs(
        c1k = (T = 128, R = 4, C = 1024, V = 8),
        c2k = (T = 128, R = 2, C = 2048, V = 8),
        c4k = (T = 128, R = 1, C = 4096, V = 8),
        c8k = (T = 256, R = 1, C = 8192, V = 8),
        c16k = (T = 512, R = 1, C = 16384, V = 8),
        c32k = (T = 512, R = 1, C = 32768, V = 8),
        c32k_t1024 = (T = 1024, R = 1, C = 32768, V = 8),
        c4k_t256 = (T = 256, R = 1, C = 4096, V = 8),
        c8k_t512 = (T = 512, R = 1, C = 8192, V = 8),
        c16k_t1024 = (T = 1024, R = 1, C = 16384, V = 8),
    ),
)]
pub fn softmax(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<f32>([R, C], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, 0));
    let v = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let m = reduce_max(v, axis = 1);
    let e = exp2_approx((v - m) * 1.442695);
    let s = reduce_sum(e, axis = 1);
    let p = e * rcp_approx(s);
    copy(y.tile(cta.x, 0), p);
}
