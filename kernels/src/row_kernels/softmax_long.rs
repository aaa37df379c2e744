//! `softmax_long` — row softmax for rows longer than a register tile (up to 1M columns), bf16
//! in and out, f32 statistics.
//!
//! One CTA per row walks it in chunks of `C` columns twice. The first pass keeps, per register
//! (one column of every chunk), a running max `m` and a running sum `s` of `exp(x − m)`: an
//! online softmax elementwise, so no chunk ends in a reduction or a barrier. With `d = x − m`,
//! one `exp(−|d|)` serves both cases (a new max rescales the sum by it and adds 1; otherwise
//! it is the new term; ptxas computes the two uses once). Two reductions at the end combine
//! the registers: the row max `M`, then `S = Σ s·exp(m − M)`. The second pass reads the row
//! again and writes `exp(x − M) / S`, walking the chunks backwards: the ones read last are
//! the likeliest still in L2.
//!
//! Issue #32: the chunk-by-chunk form (a max and a sum reduction per chunk, four CTA barriers,
//! a forward second pass) ran 4096×65536 at 0.65× QuACK.
//!
//! Columns past `N` are −∞ in the first chunk (their sum 0, their `exp(m − M)` 0) and leave
//! the registers as they are in the ragged last chunk; full middle chunks are unmasked.

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
    let mut mx = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let mut se = select(col_index(t) < N, 1.0, 0.0);
    for j in 1..N / C {
        copy(t, x.tile(cta.x, j));
        se = select(
            t > mx,
            fma(se, exp2_approx(abs(t - mx) * -1.442695), 1.0),
            se + exp2_approx(abs(t - mx) * -1.442695),
        );
        mx = max(mx, t);
    }
    if N % C != 0 && N > C {
        copy(t, x.tile(cta.x, N / C));
        let ok = col_index(t) + N / C * C < N;
        se = select(
            ok && t > mx,
            fma(se, exp2_approx(abs(t - mx) * -1.442695), 1.0),
            select(ok, se + exp2_approx(abs(t - mx) * -1.442695), se),
        );
        mx = select(ok, max(mx, t), mx);
    }
    let nml = reduce_max(mx, axis = 1) * -1.442695;
    let inv = rcp_approx(reduce_sum(
        se * exp2_approx(fma(mx, 1.442695, nml)),
        axis = 1,
    ));
    for i in 0..cdiv(N, C) {
        let j = cdiv(N, C) - 1 - i;
        copy(t, x.tile(cta.x, j));
        copy(y.tile(cta.x, j), exp2_approx(fma(t, 1.442695, nml)) * inv);
    }
}
