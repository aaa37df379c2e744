//! `softmax_odd` — row softmax for rows of an odd length (bytes not a whole number of 16-byte
//! vectors: bf16 `N % 8 != 0`) up to 16384 columns, bf16 in and out, f32 statistics.
//!
//! One CTA per row, the row in registers as in `softmax.rs`, but held from the row's first
//! 16-byte aligned column `h = min((V − r·N % V) % V, N)` up to `e`, the end of its whole
//! vectors: `x.at(r, h).within(M, e)`, a one-row tile whose own start is aligned, so its
//! chunks move by masked 16-byte vectors (the one-row rule of `docs/language.md`'s `x.at`
//! table: the start and `e − h` decide). The `h < V` columns before it (the head) and the
//! `N − e < V` after it (the tail) move in two small tiles of one column per thread (`[1, T]`,
//! `blocked(vec = 1)`: one guarded element per thread, not a whole guarded chunk tile), whose
//! statistics join the row's after their own reductions (one more max and one more sum, each a
//! barrier). x is read once and y written once.
//!
//! Issue #32: a register kernel holding an odd row from column 0 (`softmax`) starts 16-byte
//! aligned only one row in eight and moved the rest element by element: 4096×4999 at 29 % of
//! the device copy on the H100 (docs/perf/h100-2026-12-06-stop51.md). In the emulator this
//! kernel runs 4096×3001 in 478 M thread-instructions against `softmax` c3k's 525 M, and
//! 4096×1001 (`o1k`, one warp a row) in 130 M against c1k's 175 M; every access of the row
//! but the head's and tail's ≤ 14 elements is a 16-byte vector. On aligned rows `softmax`
//! stays first (532 M against 385 M at 4096×4096: the head, the tail and their reductions).
//! Measured on the H200 (docs/perf/2026-12-06-stop52.md): 16384×1001 3051 GB/s (92 % of the
//! device copy; `softmax` c1k 1002), 8192×3001 3215 (89 %; c3k 1044). Rows past 16384 columns
//! walk in chunks (`softmax_long`), which ran 4096×4999 and 8192×7171 at 23–29 % of the copy:
//! the ladder goes on to 16k as `softmax`'s does (`o5k`…`o16k`: emulator-verified, not yet run
//! on a GPU at stop 52 — no device time was left; predicted 75–90 % of the copy at 4999/7171).
//! Past 16384 columns `softmax_staged_odd` (`staged_odd.rs`) stages an odd row by TMA through
//! `x`'s flat view, read once, up to 32768 columns; the walker takes longer odd rows (larger
//! staged configs measured slower than it and were deleted, `staged_odd.rs`).
//!
//! `ODD = 1` marks the kernel for the host (`request.rs`): first for odd rows, after the
//! register kernels of its capacity for aligned ones. One warp holds a row of 1k, two of 2k
//! (32 values per thread, as `softmax`'s four rows of 1k per 128 threads), four of 3k to 7k,
//! eight of 8k to 14k, sixteen of 16k (`softmax`'s threads at each capacity).

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    grid = (M, 1),
    configs(
        o1k = (T = 32, C = 1024, V = 8, ODD = 1),
        o2k = (T = 64, C = 2048, V = 8, ODD = 1),
        o3k = (T = 128, C = 3072, V = 8, ODD = 1),
        o4k = (T = 128, C = 4096, V = 8, ODD = 1),
        o5k = (T = 128, C = 5120, V = 8, ODD = 1),
        o6k = (T = 128, C = 6144, V = 8, ODD = 1),
        o7k = (T = 128, C = 7168, V = 8, ODD = 1),
        o8k = (T = 256, C = 8192, V = 8, ODD = 1),
        o10k = (T = 256, C = 10240, V = 8, ODD = 1),
        o12k = (T = 256, C = 12288, V = 8, ODD = 1),
        o14k = (T = 256, C = 14336, V = 8, ODD = 1),
        o16k = (T = 512, C = 16384, V = 8, ODD = 1),
    ),
)]
pub fn softmax_odd(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    // The head and the tail: one column per thread.
    let hd = regs::<f32>([1, T], layout = blocked(vec = 1));
    let tl = regs::<f32>([1, T], layout = blocked(vec = 1));
    // The row's first 16-byte aligned column (bf16: `V` columns a vector), and the end of
    // its whole vectors from there.
    let h = min((V - cta.x * N % V) % V, N);
    let e = h + (N - h) / V * V;
    copy(t, x.at(cta.x, h).within(M, e));
    copy(hd, x.at(cta.x, 0).within(M, h));
    copy(tl, x.at(cta.x, e));
    let v = select(col_index(t) < e - h, t, f32::NEG_INFINITY);
    let hv = select(col_index(hd) < h, hd, f32::NEG_INFINITY);
    let tv = select(col_index(tl) < N - e, tl, f32::NEG_INFINITY);
    let m = max(reduce_max(v, axis = 1), reduce_max(max(hv, tv), axis = 1));
    let p = exp2_approx((v - m) * 1.442695);
    let hp = exp2_approx((hv - m) * 1.442695);
    let tp = exp2_approx((tv - m) * 1.442695);
    let r = rcp_approx(reduce_sum(p, axis = 1) + reduce_sum(hp + tp, axis = 1));
    copy(y.at(cta.x, h).within(M, e), p * r);
    copy(y.at(cta.x, 0).within(M, h), hp * r);
    copy(y.at(cta.x, e), tp * r);
}
