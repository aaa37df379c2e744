//! `softmax` — row softmax, bf16 in and out, f32 statistics: `y[r, :] = exp(x[r, :] −
//! max(x[r, :])) / Σ exp(…)`.
//!
//! One CTA per `R` rows; the whole row lives in registers (a `blocked` register tile: each
//! thread holds runs of `V` consecutive columns, 16-byte loads), so x is read once and y
//! written once. Columns past `N` read as −∞ (they add 0 to the sum); the row max and sum
//! are reductions along the columns: within each thread, across the lanes (`shfl.sync.bfly`)
//! and across the warps of the CTA (shared memory). `exp` is `exp2_approx` of `x·log2(e)`
//! with the max subtracted first, so every exponent is ≤ 0.
//!
//! Capacities come as a ladder (1k, 2k, 3k, 4k, 5k, 6k, 7k, 8k, 10k, 12k, 14k, 16k, 32k; `C` is
//! `T · V` times any whole number of runs per thread), so the host's smallest capacity that
//! holds a row leaves at most a quarter of the tile idle from 3k to 16k columns: the
//! bandwidth of a register kernel follows the bytes of rows resident per SM, and a 5000-column
//! row in an 8192-column tile kept 61% of them (issue #32). A row shorter than the tile is
//! read and written by masked 16-byte vectors (`reg_load`'s masked path: its length a multiple of
//! 8), not element by element.

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
        c3k = (T = 128, R = 1, C = 3072, V = 8),
        c5k = (T = 128, R = 1, C = 5120, V = 8),
        c6k = (T = 128, R = 1, C = 6144, V = 8),
        c7k = (T = 128, R = 1, C = 7168, V = 8),
        c10k = (T = 256, R = 1, C = 10240, V = 8),
        c12k = (T = 256, R = 1, C = 12288, V = 8),
        c14k = (T = 256, R = 1, C = 14336, V = 8),
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
