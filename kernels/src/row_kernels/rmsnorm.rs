//! `rmsnorm` — RMSNorm forward, bf16 in and out, f32 statistics:
//! `y[r, c] = x[r, c] · rsqrt(mean_c(x[r, c]²) + eps) · w[c]`.
//!
//! One CTA per `R` rows: the rows live in registers in a `blocked` layout (16-byte loads) and
//! the weight in its column statistic's (`stat(t, axis = 0)`, broadcast over the rows), so x is
//! read once, y written once and w read once per CTA (it stays in L2). Rows of 1k and 2k take
//! 4 and 2 rows per CTA, as softmax does: 32 values per thread, where one 1000-column row per
//! 128-thread CTA held 8 and the SM's 2048 threads, not its registers, bounded the rows
//! resident (issue #32: 16384×1000).
//! Columns past `N` read as 0 and add nothing to the sum of squares; the mean divides by `N`.
//! Capacities come as the ladder of `softmax.rs` (a tile at most a quarter idle from 3k to 16k
//! columns), rows shorter than the tile moved by masked 16-byte vectors.

use tirx::prelude::*;

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    grid = (cdiv(M, R), 1),
    configs(
        c1k = (T = 128, R = 4, C = 1024, V = 8),
        c2k = (T = 128, R = 2, C = 2048, V = 8),
        c4k = (T = 128, R = 1, C = 4096, V = 8),
        c8k = (T = 256, R = 1, C = 8192, V = 8),
        c16k = (T = 512, R = 1, C = 16384, V = 8),
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
pub fn rmsnorm(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([R, C], layout = blocked(vec = V));
    // The weights, one per column, broadcast over the tile's rows.
    let g = regs::<f32>([1, C], layout = stat(t, axis = 0));
    copy(t, x.tile(cta.x, 0));
    let ss = reduce_sum(t * t, axis = 1);
    let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
    // The weight is loaded after the reduction, so its registers are live only at the end.
    copy(g, w.tile(0));
    copy(y.tile(cta.x, 0), t * r * g);
}
