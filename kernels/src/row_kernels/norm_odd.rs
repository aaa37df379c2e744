//! `rmsnorm_odd`, `rmsnorm_odd_rows` and `layernorm_odd` — the norms for rows of an odd length
//! (bytes not a whole number of 16-byte vectors: bf16 `N % 8 != 0`) up to 16384 columns, bf16
//! in and out, f32 statistics. Two grids: the staged persistent one below (LayerNorm at every
//! width, RMSNorm past 4096 columns) and one CTA a row (`rmsnorm_odd_rows`, RMSNorm up to 4096
//! columns; "RMSNorm's narrow rows" below).
//!
//! Each row is held in registers from its first 16-byte aligned column `h` to the end of its
//! whole vectors `e`, the head (`h < V` columns) and the tail (`N − e < V`) in two small tiles
//! of one column per thread, as `softmax_odd` (its docs): the row moves by 16-byte vectors,
//! read once, and each statistic takes one more reduction (the head's and tail's).
//!
//! The weight (and bias) are needed at `h`, misaligned unless `h = 0`. A row starting at
//! element `r·N` has `h = (V − r·N % V) % V`, which depends only on `r % V`: the rows of one
//! *phase* share `h` and `e`. So the grid is persistent and split by phase: `G = ⌊SMS·W / V⌋`
//! CTAs a phase (`W` CTAs an SM, what the registers let reside), CTA `i` taking phase `i % V`
//! and walking rows `r0, r0 + V·G, …` (`r0 = i % V + V·(i / V)`). Each CTA stages `w` (and
//! `b`) from `h` to `e` once into shared memory — loaded through a `[1, C]` tile of one column
//! per thread (`blocked(vec = 1)`: each warp-wide element load reads 64 consecutive bytes, not
//! 32 elements 16 bytes apart), stored as bf16 by `st.shared` — and every row then reads it
//! back by 16-byte `ld.shared.v4` vectors in the row's own layout; the head's and tail's
//! weights stay in registers. The element loads happen once a CTA (`M / (V·G)` rows) rather
//! than once a row.
//!
//! Before (one CTA a row, `w` and `b` loaded element by element at `h` for every row, 32
//! elements 16 bytes apart a warp-wide load), emulator thread-instructions at 16384×1001 /
//! 8192×3001 / 4096×9999: RMSNorm 603 M / 1051 M / 1459 M, LayerNorm 1012 M / 1746 M /
//! 2496 M (`softmax_odd` 521 M / 955 M / 1324 M). After (132 SMs): RMSNorm 408 M / 696 M /
//! 888 M (−32 to −39 %, now under `softmax_odd`), LayerNorm 659 M / 1091 M / 1432 M (−35 to
//! −43 %; 1.26 / 1.14 / 1.08 × `softmax_odd`, about the old RMSNorm's). In SASS a row's loop
//! moves `w` and `b` by `LDS.128` (LayerNorm `o1k`: 4 `LDG.E.128` of x, 8 `LDS.128`, 4
//! `STG.E.128` a row and thread), and the L2 round trip for `w` (then `b`) after the
//! reductions is gone; `tirx check`: ptxas clean, 0 spills.
//! Registers (ptxas, sm_90a, 0 spills): LayerNorm 80 → 72 at `o1k`, 118 → 86 at `o10k`,
//! 122 → 100 at `o16k` (the weight is no longer loaded beside the row). `W` is what those
//! registers let reside (65536 a SM, allocated 8 a thread: `⌊65536 / (⌈regs⌉₈·T)⌋`, at most
//! 32 CTAs and 2048 threads): a grid over what resides would run its last CTAs in a second
//! wave of whole CTAs, so re-derive `W` when the registers grow (`tirx check`). The test
//! `assemble::every_persistent_grids_ctas_per_sm_reside_at_once` holds every config's `W` to
//! what its ptxas registers and shared memory let reside (`check::resident_ctas`, the
//! occupancy calculator's rules); at ptxas 13 every `W` here is exactly that.
//!
//! RMSNorm's narrow rows (`rmsnorm_odd_rows`, `o1k`…`o4k`): measured on the H100
//! (docs/perf/h100-2026-12-07-stop53.md), the staged walk lifted LayerNorm at every odd width
//! (16384×1001 +4.6 %, 8192×3001 +4.8 %, … 4096×12345 +86 %) and RMSNorm at 7171 (+2 %) and
//! 12345 (+48 %), but cost RMSNorm 9 % at 1001 and 3001 columns (host's choice 2243 → 2050 and
//! 2490 → 2258 GB/s, 88.7 → 81.6 % and 93.0 → 84.3 % of the device copy; forced `o1k` 2270 →
//! 2062, `o3k` 2484 → 2270), 4999 even (−1 %). The emulator had predicted a gain everywhere
//! (RMSNorm −32…−39 % thread-instructions): at these widths RMSNorm's only element loads were
//! `w`'s, `N ≤ 4 K` elements that every CTA finds in L1/L2, while a CTA walking `M / (V·G)`
//! rows in turn (4–5 at 16384×1001) waits out each row's loads with fewer CTAs to hide them
//! than one-CTA-a-row's refilled grid (not profiled). So RMSNorm up to 4096 columns keeps the
//! earlier form as its own kernel (a grid expression is one for every config): one CTA a row,
//! `w` read at `h` from global memory after the reductions, its PTX that of stop 53's base
//! `rmsnorm_odd` `o1k`…`o4k` but for the entry's name (ptxas 79 / 79 / 63 / 79 registers, 0
//! spills). The staged `rmsnorm_odd` starts at `o5k`, so the host's smallest capacity that
//! holds the row takes `rmsnorm_odd_rows` for every odd width up to 4096 and `rmsnorm_odd`
//! from 4097 to 16384: no gap, no overlap (`request.rs`; `sim_exec.rs` checks the choice).
//! The cut is the ladder's `o4k`/`o5k` step, between the measured losses (≤ 3001) and gains
//! (≥ 7171), 4999 within noise. LayerNorm keeps the staged form everywhere: measured faster at
//! every width, and in the emulator the one-CTA-a-row LayerNorm took 1012 M thread-instructions
//! at 16384×1001 against the staged 659 M. Measured on an H100 (stop 54,
//! `docs/perf/h100-2026-12-07-stop54.md`, forced): `rmsnorm_odd_rows` 16384×1001 o1k 2265 GB/s
//! (90.5 % of the copy; the staged o5k 48 %, stop 53's staged host choice 81.6 %), 8192×3001
//! o3k 91.6 % (84.3 %), 8192×4093 o4k 94.6 % (o5k 88.2 %). Force it with
//! `tirx bench rows --kernel rmsnorm_odd_rows/o1k`, the staged form at these widths with
//! `rmsnorm_odd/o5k`.
//!
//! Considered: realigning an aligned vector load of `w` in registers by the runtime shift `h`
//! (a barrel shifter of `shf`/`selp`, three stages for eight shifts: no IR op says it, and it
//! would be kernel-specific); several rows per CTA without the phase split (each row its own
//! `h`: shared-memory reads at a misaligned offset are element loads again, 4-way bank
//! conflicts at 16-byte strides); a fixed number of rows per CTA (`R` rows, grid `M / R`:
//! 1.1 waves at 16384×1001 with `R = 4` — the persistent grid has the one-row-a-CTA grid's
//! quantisation and amortises over every row a CTA walks).
//!
//! Issue #32: `rmsnorm` and `layernorm` hold an odd row from column 0 and move most rows
//! element by element (28–31 % of the device copy at odd widths on the H100,
//! docs/perf/h100-2026-12-06-stop51.md). Measured on the H200 (docs/perf/2026-12-06-stop52.md)
//! with one CTA a row and `w`/`b` at `h` from global memory: 16384×1001 RMSNorm 2559 GB/s
//! (77 % of the device copy), LayerNorm 1951 (59 %); 8192×3001 2861 (79 %) and 2131 (59 %).
//! The staged form was measured on an H100 at stop 53 (`docs/perf/h100-2026-12-07-stop53.md`).
//!
//! `ODD = 1` marks the kernels for the host (`request.rs`); the capacities and threads are
//! `softmax_odd`'s. The grid needs `SMS·W ≥ V` (an sm_90a part has 114–132 SMs).

use tirx::prelude::*;

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    grid = (SMS * W / V * V, 1),
    // `W`: CTAs resident an SM by ptxas's registers (the module docs).
    configs(
        // Rows up to 4096 columns: `rmsnorm_odd_rows` (the module docs).
        o5k = (T = 128, C = 5120, V = 8, W = 6, ODD = 1),
        o6k = (T = 128, C = 6144, V = 8, W = 5, ODD = 1),
        o7k = (T = 128, C = 7168, V = 8, W = 5, ODD = 1),
        o8k = (T = 256, C = 8192, V = 8, W = 3, ODD = 1),
        o10k = (T = 256, C = 10240, V = 8, W = 3, ODD = 1),
        o12k = (T = 256, C = 12288, V = 8, W = 2, ODD = 1),
        o14k = (T = 256, C = 14336, V = 8, W = 2, ODD = 1),
        o16k = (T = 512, C = 16384, V = 8, W = 1, ODD = 1),
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
    let tg = regs::<f32>([1, T], layout = blocked(vec = 1));
    // The weight from `h` to `e`, staged once for the CTA's rows.
    let sg = regs::<f32>([1, C], layout = blocked(vec = 1));
    let ws = smem::<bf16>([C]);
    // The CTA's rows `r0 + k·V·G` (`G` CTAs a phase) start at one column phase: they share
    // `h` and `e`.
    let r0 = cta.x % V + cta.x / V * V;
    let step = ncta.x / V * V;
    let h = min((V - r0 * N % V) % V, N);
    let e = h + (N - h) / V * V;
    // A CTA with no row (more CTAs than rows) stages nothing.
    if r0 < M {
        copy(sg, w.at(h).within(e));
        copy(ws, sg);
        copy(hg, w.at(0).within(h));
        copy(tg, w.at(e));
        sync_threads();
        for k in 0..cdiv(M - r0, step) {
            let row = r0 + k * step;
            // Columns outside the tiles' bounds read 0 and add nothing to the sum of squares;
            // a row past `M` reads 0 and stores nothing.
            copy(t, x.at(row, h).within(M, e));
            copy(hd, x.at(row, 0).within(M, h));
            copy(tl, x.at(row, e));
            let ss = reduce_sum(t * t, axis = 1) + reduce_sum(hd * hd + tl * tl, axis = 1);
            let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
            copy(g, ws);
            copy(y.at(row, h).within(M, e), t * r * g);
            copy(y.at(row, 0).within(M, h), hd * r * hg);
            copy(y.at(row, e), tl * r * tg);
        }
    }
}

/// RMSNorm of an odd row up to 4096 columns, one CTA a row: the row from its aligned column
/// `h` as in [`rmsnorm_odd`], `w` read at `h` from global memory for every row (the module
/// docs: at these widths it measured faster than the staged walk).
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
    ),
)]
pub fn rmsnorm_odd_rows(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let t = regs::<f32>([1, C], layout = blocked(vec = V));
    let g = regs::<f32>([1, C], layout = blocked(vec = V));
    // The head, the tail and their weight: one column per thread.
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
    // `w` after the reductions, element by element at `h` (L1/L2: every CTA reads the same
    // `N` elements), so it is not live beside the row's loads.
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
    grid = (SMS * W / V * V, 1),
    // `W`: CTAs resident an SM by ptxas's registers (the module docs).
    configs(
        o1k = (T = 32, C = 1024, V = 8, W = 28, ODD = 1),
        o2k = (T = 64, C = 2048, V = 8, W = 14, ODD = 1),
        o3k = (T = 128, C = 3072, V = 8, W = 8, ODD = 1),
        o4k = (T = 128, C = 4096, V = 8, W = 7, ODD = 1),
        o5k = (T = 128, C = 5120, V = 8, W = 5, ODD = 1),
        o6k = (T = 128, C = 6144, V = 8, W = 5, ODD = 1),
        o7k = (T = 128, C = 7168, V = 8, W = 4, ODD = 1),
        o8k = (T = 256, C = 8192, V = 8, W = 3, ODD = 1),
        o10k = (T = 256, C = 10240, V = 8, W = 2, ODD = 1),
        o12k = (T = 256, C = 12288, V = 8, W = 2, ODD = 1),
        o14k = (T = 256, C = 14336, V = 8, W = 2, ODD = 1),
        o16k = (T = 512, C = 16384, V = 8, W = 1, ODD = 1),
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
    let hb = regs::<f32>([1, T], layout = blocked(vec = 1));
    let tg = regs::<f32>([1, T], layout = blocked(vec = 1));
    let tb = regs::<f32>([1, T], layout = blocked(vec = 1));
    let sg = regs::<f32>([1, C], layout = blocked(vec = 1));
    let ws = smem::<bf16>([C]);
    let bs = smem::<bf16>([C]);
    let r0 = cta.x % V + cta.x / V * V;
    let step = ncta.x / V * V;
    let h = min((V - r0 * N % V) % V, N);
    let e = h + (N - h) / V * V;
    if r0 < M {
        copy(sg, w.at(h).within(e));
        copy(ws, sg);
        copy(sg, b.at(h).within(e));
        copy(bs, sg);
        copy(hg, w.at(0).within(h));
        copy(hb, b.at(0).within(h));
        copy(tg, w.at(e));
        copy(tb, b.at(e));
        sync_threads();
        let n = cast::<f32>(N);
        for k in 0..cdiv(M - r0, step) {
            let row = r0 + k * step;
            copy(t, x.at(row, h).within(M, e));
            copy(hd, x.at(row, 0).within(M, h));
            copy(tl, x.at(row, e));
            let mean = (reduce_sum(t, axis = 1) + reduce_sum(hd + tl, axis = 1)) / n;
            // Centred in place, the columns outside each tile's part of the row masked to 0 (the
            // numerically sound two-pass variance, as `layernorm`).
            t = select(col_index(t) < e - h, t - mean, 0.0);
            hd = select(col_index(hd) < h, hd - mean, 0.0);
            tl = select(col_index(tl) < N - e, tl - mean, 0.0);
            let var = (reduce_sum(t * t, axis = 1) + reduce_sum(hd * hd + tl * tl, axis = 1)) / n;
            let r = rsqrt_approx(var + eps);
            copy(g, ws);
            t = t * r * g;
            copy(g, bs);
            copy(y.at(row, h).within(M, e), t + g);
            copy(y.at(row, 0).within(M, h), hd * r * hg + hb);
            copy(y.at(row, e), tl * r * tg + tb);
        }
    }
}
