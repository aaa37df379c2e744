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
//! Fewer rows in flight, so that more of the second pass hits L2 (one CTA per SM: `T = 1024,
//! C = 16384`, or `T = 512, C = 16384` at 128 registers), measured on the H200 at stop 52
//! (docs/perf/2026-12-06-stop52.md): 4096×65536 2907 / 2996 GB/s against this config's
//! 2976, but 8192×32768 2500 / 2668 against 3308 and 2048×20000 1421 / 1485 against 2443 —
//! not shipped. ncu at 4096×65536 (this config): DRAM 71 % of peak, L2 hit 45 %, the warps
//! mostly waiting on their global loads (long scoreboard 7.3 of 14 cycles per instruction).
//!
//! A row of odd length starts 16-byte aligned only every few rows, so the chunks walk from the
//! row's first aligned column `h < V` (`x.at(row, h + j·C)`: a one-row tile whose own start is
//! aligned takes vector accesses) and the head's `h` columns move in a tile of their own,
//! clipped by `.within(M, h)`, only where `h > 0` (the head's tile is a whole chunk of guarded
//! accesses: 22 % more instructions in the emulator when run on an aligned row); before, a row
//! of 50257 bf16 moved element by element (33 % of the device copy on the H100,
//! docs/perf/h100-2026-12-06-stop51.md). Columns past the row are −∞ in the first chunk (their
//! sum 0, their `exp(m − M)` 0); full middle chunks are unmasked, and the ragged last chunk and
//! the head leave registers outside them as they are.

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
    // The row's first column whose address is 16-byte aligned (bf16: `V` columns a vector):
    // the head before it moves alone, the chunks walk from it.
    let h = min((V - cta.x * N % V) % V, N);
    let n = N - h;
    copy(t, x.at(cta.x, h));
    let mut mx = select(col_index(t) < n, t, f32::NEG_INFINITY);
    let mut se = select(col_index(t) < n, 1.0, 0.0);
    for j in 1..n / C {
        copy(t, x.at(cta.x, h + j * C));
        se = select(
            t > mx,
            fma(se, exp2_approx(abs(t - mx) * -1.442695), 1.0),
            se + exp2_approx(abs(t - mx) * -1.442695),
        );
        mx = max(mx, t);
    }
    if n % C != 0 && n > C {
        copy(t, x.at(cta.x, h + n / C * C));
        let ok = col_index(t) + n / C * C < n;
        se = select(
            ok && t > mx,
            fma(se, exp2_approx(abs(t - mx) * -1.442695), 1.0),
            select(ok, se + exp2_approx(abs(t - mx) * -1.442695), se),
        );
        mx = select(ok, max(mx, t), mx);
    }
    if h > 0 {
        copy(t, x.at(cta.x, 0).within(M, h));
        let ok = col_index(t) < h;
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
    for i in 0..cdiv(n, C) {
        let j = cdiv(n, C) - 1 - i;
        copy(t, x.at(cta.x, h + j * C));
        copy(
            y.at(cta.x, h + j * C),
            exp2_approx(fma(t, 1.442695, nml)) * inv,
        );
    }
    if h > 0 {
        copy(t, x.at(cta.x, 0).within(M, h));
        copy(
            y.at(cta.x, 0).within(M, h),
            exp2_approx(fma(t, 1.442695, nml)) * inv,
        );
    }
}
