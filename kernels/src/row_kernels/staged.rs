//! `softmax_staged`, `rmsnorm_staged` — the row kernels for long rows, the row staged in
//! shared memory by TMA (bf16 in and out, f32 statistics).
//!
//! A row held in registers costs 4 bytes of register file per column: a 32k-column row is
//! half an SM's registers, so one CTA runs per SM and nothing loads while it reduces and
//! stores (measured: 25% occupancy, DRAM at 52% of peak). Here one thread issues the whole row
//! as TMA boxes of 256 columns onto one mbarrier (`CAP / 256` boxes counted as one phase), so
//! the row is in flight at once and lands as bf16 — 2 bytes per column of shared memory — and
//! the threads walk it in register chunks of `K` columns: each pass over the row reads shared
//! memory (`ld.shared.v4.b32`), not DRAM. With 64 KB per 32k row, three CTAs share an SM and
//! one's TMA overlaps another's passes. Columns past `N` are zero-filled by TMA and masked.
//!
//! Softmax: a pass for the elementwise running max, one reduction; a pass for the sum of
//! `exp(x − m)`, one reduction; a pass writing `exp(x − m) / s`. RMSNorm: a pass for the
//! elementwise sum of squares, one reduction; a pass writing `x · r · w` (w from L2). Each
//! statistic costs one cross-warp reduction, not one per chunk.
//!
//! The tensor maps need 16-byte aligned rows (`N` a multiple of 8 for bf16); the host takes
//! another kernel when the launch planner refuses the tensors.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(
        s32k = (T = 512, CAP = 32768, K = 4096, V = 8),
        s32k_t256 = (T = 256, CAP = 32768, K = 4096, V = 8),
        s16k = (T = 256, CAP = 16384, K = 4096, V = 8),
        s8k = (T = 256, CAP = 8192, K = 4096, V = 8),
    ),
)]
pub fn softmax_staged(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
    let full = mbarrier();
    #[scope(thread = 0)]
    {
        for i in 0..CAP / 256 {
            tma::load(xs[i / (K / 256)][i % (K / 256)], x.tile(cta.x, i), full);
        }
    }
    full.wait(0);
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    copy(t, xs[0]);
    let mut mx = select(col_index(t) < N, t, f32::NEG_INFINITY);
    for j in 1..cdiv(N, K) {
        copy(t, xs[j]);
        mx = max(mx, select(col_index(t) + j * K < N, t, f32::NEG_INFINITY));
    }
    let m = reduce_max(mx, axis = 1);
    copy(t, xs[0]);
    let mut se = select(col_index(t) < N, exp2_approx((t - m) * 1.442695), 0.0);
    for j in 1..cdiv(N, K) {
        copy(t, xs[j]);
        se += select(
            col_index(t) + j * K < N,
            exp2_approx((t - m) * 1.442695),
            0.0,
        );
    }
    let inv = rcp_approx(reduce_sum(se, axis = 1));
    for j in 0..cdiv(N, K) {
        copy(t, xs[j]);
        copy(y.tile(cta.x, j), exp2_approx((t - m) * 1.442695) * inv);
    }
}

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(
        s32k = (T = 512, CAP = 32768, K = 4096, V = 8),
        s32k_t256 = (T = 256, CAP = 32768, K = 4096, V = 8),
        s16k = (T = 256, CAP = 16384, K = 4096, V = 8),
        s8k = (T = 256, CAP = 8192, K = 4096, V = 8),
    ),
)]
pub fn rmsnorm_staged(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
    let full = mbarrier();
    #[scope(thread = 0)]
    {
        for i in 0..CAP / 256 {
            tma::load(xs[i / (K / 256)][i % (K / 256)], x.tile(cta.x, i), full);
        }
    }
    full.wait(0);
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    let g = regs::<f32>([1, K], layout = blocked(vec = V));
    copy(t, xs[0]);
    let mut sq = t * t;
    for j in 1..cdiv(N, K) {
        copy(t, xs[j]);
        sq += t * t;
    }
    let r = rsqrt_approx(reduce_sum(sq, axis = 1) / cast::<f32>(N) + eps);
    for j in 0..cdiv(N, K) {
        copy(t, xs[j]);
        copy(g, w.tile(j));
        copy(y.tile(cta.x, j), t * r * g);
    }
}
