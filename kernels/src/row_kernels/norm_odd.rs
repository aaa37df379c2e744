//! `rmsnorm_odd` and `layernorm_odd` — the norms for rows of an odd length (bytes not a whole
//! number of 16-byte vectors: bf16 `N % 8 != 0`) up to 16384 columns, bf16 in and out, f32
//! statistics.
//!
//! One CTA per row, the row in registers from its first 16-byte aligned column `h` to the end
//! of its whole vectors `e`, the head (`h < V` columns) and the tail (`N − e < V`) in two
//! small tiles of one column per thread, as `softmax_odd` (its docs): the row moves by
//! 16-byte vectors, read once, and each statistic takes one more reduction (the head's and
//! tail's). The weight (and bias) are read at `h`, misaligned unless `h = 0`, element by
//! element from L1/L2 (every CTA reads the same `N` elements).
//!
//! Issue #32: `rmsnorm` and `layernorm` hold an odd row from column 0 and move most rows
//! element by element (28–31 % of the device copy at odd widths on the H100,
//! docs/perf/h100-2026-12-06-stop51.md). Emulator thread-instructions at 4096×3001 (`c3k`
//! against `o3k`): RMSNorm 541 M against 526 M, LayerNorm 797 M against 873 M — the weight's
//! (and bias's) element loads cost about what the row's vectors save, LayerNorm's two of them
//! more; they hit L1/L2, while every DRAM access of the row is a 16-byte vector. Measured on
//! the H200 (docs/perf/2026-12-06-stop52.md), against `rmsnorm`/`layernorm` from column 0:
//! 16384×1001 RMSNorm 925 → 2559 GB/s (77 % of the device copy), LayerNorm 987 → 1951 (59 %);
//! 8192×3001 1174 → 2861 (79 %) and 1257 → 2131 (59 %). LayerNorm's misaligned `w` and `b`
//! element loads are the likely gap (not profiled).
//!
//! `ODD = 1` marks the kernels for the host (`request.rs`); the configs are `softmax_odd`'s.

use tirx::prelude::*;

#[tile_kernel(
    solves = rmsnorm,
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
pub fn rmsnorm_odd(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    // The head, the tail and their weights: one column per thread.
    let hd = regs::<f32>([1, T], layout = blocked(vec = 1));
    let tl = regs::<f32>([1, T], layout = blocked(vec = 1));
    let hg = regs::<f32>([1, T], layout = blocked(vec = 1));
    let h = min((V - cta.x * N % V) % V, N);
    let e = h + (N - h) / V * V;
    // Columns outside the tiles' bounds read 0 and add nothing to the sum of squares.
    copy(t, x.at(cta.x, h).within(M, e));
    copy(hd, x.at(cta.x, 0).within(M, h));
    copy(tl, x.at(cta.x, e));
    let ss = reduce_sum(t * t, axis = 1) + reduce_sum(hd * hd + tl * tl, axis = 1);
    let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
    copy(g, w.at(h).within(e));
    copy(y.at(cta.x, h).within(M, e), t * r * g);
    copy(hg, w.at(0).within(h));
    copy(y.at(cta.x, 0).within(M, h), hd * r * hg);
    copy(hg, w.at(e));
    copy(y.at(cta.x, e), tl * r * hg);
}

#[tile_kernel(
    solves = layernorm,
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
pub fn layernorm_odd(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(N)] b: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    let hd = regs::<f32>([1, T], layout = blocked(vec = 1));
    let tl = regs::<f32>([1, T], layout = blocked(vec = 1));
    let hg = regs::<f32>([1, T], layout = blocked(vec = 1));
    let h = min((V - cta.x * N % V) % V, N);
    let e = h + (N - h) / V * V;
    copy(t, x.at(cta.x, h).within(M, e));
    copy(hd, x.at(cta.x, 0).within(M, h));
    copy(tl, x.at(cta.x, e));
    let n = cast::<f32>(N);
    let mean = (reduce_sum(t, axis = 1) + reduce_sum(hd + tl, axis = 1)) / n;
    // Centred in place, the columns outside each tile's part of the row masked to 0 (the
    // numerically sound two-pass variance, as `layernorm`).
    t = select(col_index(t) < e - h, t - mean, 0.0);
    hd = select(col_index(hd) < h, hd - mean, 0.0);
    tl = select(col_index(tl) < N - e, tl - mean, 0.0);
    let var = (reduce_sum(t * t, axis = 1) + reduce_sum(hd * hd + tl * tl, axis = 1)) / n;
    let r = rsqrt_approx(var + eps);
    copy(g, w.at(h).within(e));
    t = t * r * g;
    copy(g, b.at(h).within(e));
    copy(y.at(cta.x, h).within(M, e), t + g);
    copy(hg, w.at(0).within(h));
    hd = hd * r * hg;
    copy(hg, b.at(0).within(h));
    copy(y.at(cta.x, 0).within(M, h), hd + hg);
    copy(hg, w.at(e));
    tl = tl * r * hg;
    copy(hg, b.at(e));
    copy(y.at(cta.x, e), tl + hg);
}
