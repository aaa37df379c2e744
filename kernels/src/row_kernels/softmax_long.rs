//! `softmax_long` — row softmax for rows longer than a register tile (up to 64k columns and
//! beyond), bf16 in and out, f32 statistics.
//!
//! One CTA per row walks it in chunks of `C` columns twice. The first pass keeps a running
//! max `m` and a running sum `s` of `exp(x − m)` (online softmax: when a chunk raises the max,
//! the sum so far is rescaled by `exp(m_old − m_new)`); the second pass reads the row again
//! and writes `exp(x − m) / s`. The second read of a row usually comes from L2 (a row is at
//! most a few hundred KB and the CTAs in flight hold a few tens of MB), so memory traffic
//! stays close to one read and one write. Columns past `N` are −∞ in the first pass and are
//! not stored in the second.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(long = (T = 512, C = 8192, V = 8, CAP = 1048576)),
)]
pub fn softmax_long(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    copy(t, x.tile(cta.x, 0));
    let v0 = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let mut m = reduce_max(v0, axis = 1);
    let mut s = reduce_sum(exp2_approx((v0 - m) * 1.442695), axis = 1);
    for j in 1..cdiv(N, C) {
        copy(t, x.tile(cta.x, j));
        let v = select(col_index(t) + j * C < N, t, f32::NEG_INFINITY);
        let mj = max(m, reduce_max(v, axis = 1));
        s = s * exp2_approx((m - mj) * 1.442695)
            + reduce_sum(exp2_approx((v - mj) * 1.442695), axis = 1);
        m = mj;
    }
    let inv = rcp_approx(s);
    for j in 0..cdiv(N, C) {
        copy(t, x.tile(cta.x, j));
        copy(y.tile(cta.x, j), exp2_approx((t - m) * 1.442695) * inv);
    }
}
