//! `softmax_staged_odd` — rows of an odd length (bytes not a whole number of 16-byte vectors:
//! bf16 `N % 8 != 0`) past 16384 columns up to 32768, staged in shared memory by TMA through a
//! flat view of the tensor: read from DRAM once, written once.
//!
//! Issue #32: the staged kernels (`staged.rs`) take `x` through a 2-D tensor map, which needs
//! a row stride of a whole number of 16-byte vectors; an odd row past 16k columns went to the
//! chunk walkers (`softmax_long`, …), which read every row twice from global memory (66–73 %
//! of the device copy on the H100 at 2048×20001 and 1024×50257). A TMA box starts anywhere
//! 16-byte aligned: the tensor's base address must be and its strides multiples of 16 bytes
//! (`cuTensorMapEncodeTiled`), the box's innermost start coordinate a multiple of 16 bytes
//! too (the H100 raised an illegal instruction on a 1-D load at element 2; the emulator
//! diagnoses it), and a 1-D tensor has no stride. So the kernel also takes `x` as `xf`, the same buffer seen as one dimension of
//! `M·N` elements (the host passes `x` with its two dimensions merged,
//! `TensorArg::merge_outer`), and loads row `r`'s columns from its first 16-byte aligned
//! column `h = min((V − r·N % V) % V, N)` to the end of its whole vectors `e = h + (N − h) / V
//! · V` as boxes of 256 elements at `xf.at(r·N + h + …)`. Shared column `j` is row column
//! `h + j`, so the passes read it by `ld.shared.v4` and the output pass writes `y.at(r, h +
//! j·K).within(M, e)` by 16-byte vectors, as `softmax_odd` does from registers; the head's `h <
//! V` columns and the tail's `N − e < V` move in two tiles of one column per thread read from
//! `x` and written to `y` directly (`softmax_odd`'s docs), their statistics joining the
//! row's.
//!
//! The boxes of a row's last granule run past `e` into the next row (or, on the last row,
//! past the tensor's end, where TMA fills zeros): those columns are masked like any column
//! past the row, and nothing writes them. To keep that spill small the row is loaded in
//! granules of `LK = 512` columns (two boxes) on a barrier each, and only the granules that
//! start inside `[h, e)` are issued — a granule's boxes are one phase of its barrier (a
//! constant loop of loads under the granule's `if`), so its expect-tx is derived. At most 511
//! columns past `e` are read (2.5 % of a 20001-column row, 1.6 % of 32767), and they are the
//! next row's, which its own CTA reads at about the same time (L2). The first pass waits for
//! each granule it reaches (the register chunk of `K = 4096` columns spans 8), while the rest
//! of the row is in flight; every issued granule is waited for before the CTA leaves.
//!
//! Softmax as `softmax_staged`: a pass for the running max, a pass for the sum of
//! `exp2(x·log2e − m·log2e)`, a pass writing `exp(x − m) / s`; only the first chunk and the
//! ragged last one are masked. The head and tail add one reduction per statistic.
//!
//! Capacities: `o24k` (48 KB of shared memory a CTA for the row: four CTAs an SM) and `o32k`
//! (64 KB: three); `W` says so. Each cross-warp reduction takes `4·T` bytes of scratch beside
//! the row (four in softmax and LayerNorm). Longer odd rows go to the chunk walkers.
//!
//! Predicted before a GPU ran it: softmax at 80–90 % of the device copy where two or more
//! CTAs share an SM, RMSNorm 75–85 %, LayerNorm 60–75 % (the norms read `w`, `b` element by
//! element where `h > 0`: RMSNorm 12.96 M emulated thread-instructions at 11×32767 against
//! the aligned `rmsnorm_staged`'s 9.36 M). Measured on the H100 (stop 56,
//! docs/perf/h100-2026-12-07-stop56.md), softmax / RMSNorm / LayerNorm of the copy: `o24k` at
//! 2048×20001 78.3 / 71.8 / 51.4 %, 4096×16385 78.5 / 73.4 / 53.4 %; `o32k` at 4096×24573
//! 86.0 / 75.8 / 55.8 % — the walkers ran 65–75 / 67–76 / 46–53 % there. Two larger configs,
//! `o52k` (104 KB, two CTAs an SM) and `o100k` (200 KB, one), measured below the walkers in
//! the same record (1024×50257: 64.0 / 54.9 / 39.9 % against 73.4 / 69.3 / 52.7; 512×99999:
//! 38.6 / 35.5 / 28.9 against 67.7 / 64.4 / 54.3 — with so few CTAs an SM a CTA's loads and
//! passes do not overlap another's), were never chosen by the host and were deleted (issue #32).
//! Staging `w`/`b` by TMA through their own 1-D maps would remove the norms' element loads,
//! at 8–16 KB of shared memory a chunk.
//!
//! `ODD = 1` marks the kernel for the host (`request.rs`): first for odd rows it holds, after
//! every one-CTA kernel on rows of whole vectors. Two shape assertions, checked by the launch
//! planner: `xf` has `M·N` elements (it is `x`'s view), and `M·N` stays under 2³¹ (a TMA
//! coordinate is a signed 32-bit integer, PTX ISA §9.7.9.25.5.1).

use tirx::prelude::*;

/// The three kernels and the row staging they share (`stage_row` and its waits).
#[tile_module]
pub mod kernels {
    use tirx::prelude::*;

    /// Issues, from thread 0, the TMA loads through `xf` of the CTA's row into
    /// `xs` (`[CAP / K, K / 256, 1, 256]`) on `full` (one barrier per granule of `LK` columns):
    /// the granules that start before the row's staged columns end. Returns the row's first
    /// 16-byte aligned column `h`, the end `e` of its whole vectors from there, and the
    /// `n = e − h` columns staged between them (shared column `j` is row column `h + j`).
    #[tile_fn]
    fn stage_row(xs: Smem, full: Bar, xf: Global) -> (u32, u32, u32) {
        let h = min((V - cta.x * N % V) % V, N);
        let e = h + (N - h) / V * V;
        let n = e - h;
        // A box starts 16-byte aligned (else the GPU raises an illegal instruction: the H100
        // at 3x1). `cta.x * N + h` is, unless the row has no aligned column (`h = N < V`):
        // then `n = 0` and the first granule, loaded whatever `n` and all masked, starts at
        // the aligned element before.
        let s = (cta.x * N + h) / V * V;
        #[scope(thread = 0)]
        {
            for c in 0..CAP / K {
                for g in 0..K / LK {
                    // The first granule is issued whatever `n`, so its wait need not be
                    // conditional (`wait_first`; a row of fewer than `V` columns loads other
                    // rows' columns, or TMA's zeros past the tensor's end: all masked).
                    if c * K + g * LK < max(n, 1) {
                        for q in 0..LK / 256 {
                            tma::load(
                                xs[c][g * (LK / 256) + q],
                                xf.at(s + c * K + g * LK + q * 256),
                                full[c * (K / LK) + g],
                            );
                        }
                    }
                }
            }
        }
        (h, e, n)
    }

    /// Waits for the first chunk's granules of `stage_row`: the first always (it is issued
    /// whatever `n`), the others those issued.
    #[tile_fn]
    fn wait_first(full: Bar, n: u32) {
        full[0].wait(0);
        for g in 1..K / LK {
            if g * LK < n {
                full[g].wait(0);
            }
        }
    }

    /// Waits for whole chunk `j`'s granules (`0 < j < n / K`: all issued).
    #[tile_fn]
    fn wait_chunk(full: Bar, j: u32) {
        for g in 0..K / LK {
            full[j * (K / LK) + g].wait(0);
        }
    }

    /// Waits for the ragged last chunk's granules (`n / K`, where `n % K != 0 && n > K`): those
    /// issued.
    #[tile_fn]
    fn wait_ragged(full: Bar, n: u32) {
        for g in 0..K / LK {
            if n / K * K + g * LK < n {
                full[n / K * (K / LK) + g].wait(0);
            }
        }
    }

    #[tile_kernel(
        solves = softmax,
        target = sm_90a,
        threads = T,
        grid = (M, 1),
        // `W`: the CTAs an SM holds at once by their shared memory, which the design counts on
        // (the module docs; `tests/assemble.rs` holds it to ptxas's registers too).
        configs(
            o24k = (T = 256, CAP = 24576, K = 4096, LK = 512, V = 8, W = 4, ODD = 1),
            o32k = (T = 256, CAP = 32768, K = 4096, LK = 512, V = 8, W = 3, ODD = 1),
        ),
    )]
    pub fn softmax_staged_odd(
        #[shape(M, N)] x: Tensor<bf16>,
        #[shape(L)] xf: Tensor<bf16>,
        #[shape(M, N)] y: Tensor<bf16>,
    ) {
        static_assert(L == M * N, "`xf` is `x` seen as one dimension");
        static_assert(
            L <= 2147483647,
            "the flat view's TMA coordinates are signed 32-bit",
        );
        let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
        // One barrier per granule of `LK` columns.
        let full = mbarrier(count = CAP / LK);
        let (h, e, n) = stage_row(xs, full, xf);
        // The head and the tail: one column per thread, from global memory while the row lands.
        let hd = regs::<f32>([1, T], layout = blocked(vec = 1));
        let tl = regs::<f32>([1, T], layout = blocked(vec = 1));
        copy(hd, x.at(cta.x, 0).within(M, h));
        copy(tl, x.at(cta.x, e));
        let hv = select(col_index(hd) < h, hd, f32::NEG_INFINITY);
        let tv = select(col_index(tl) < N - e, tl, f32::NEG_INFINITY);
        let t = regs::<f32>([1, K], layout = blocked(vec = V));
        // Only the first chunk and the ragged last one are masked; a chunk's granules are waited
        // for as the pass reaches it, only those issued.
        wait_first(full, n);
        copy(t, xs[0]);
        let mut mx = select(col_index(t) < n, t, f32::NEG_INFINITY);
        for j in 1..n / K {
            wait_chunk(full, j);
            copy(t, xs[j]);
            mx = max(mx, t);
        }
        if n % K != 0 && n > K {
            wait_ragged(full, n);
            copy(t, xs[n / K]);
            mx = max(
                mx,
                select(col_index(t) + n / K * K < n, t, f32::NEG_INFINITY),
            );
        }
        // exp(x − m) = exp2(x·log2e − m·log2e): one fma and one ex2 per element.
        let m = max(reduce_max(mx, axis = 1), reduce_max(max(hv, tv), axis = 1));
        let nml = m * -1.442695;
        copy(t, xs[0]);
        let mut se = select(col_index(t) < n, exp2_approx(fma(t, 1.442695, nml)), 0.0);
        for j in 1..n / K {
            copy(t, xs[j]);
            se += exp2_approx(fma(t, 1.442695, nml));
        }
        if n % K != 0 && n > K {
            copy(t, xs[n / K]);
            se += select(
                col_index(t) + n / K * K < n,
                exp2_approx(fma(t, 1.442695, nml)),
                0.0,
            );
        }
        let hp = exp2_approx(fma(hv, 1.442695, nml));
        let tp = exp2_approx(fma(tv, 1.442695, nml));
        let inv = rcp_approx(reduce_sum(se, axis = 1) + reduce_sum(hp + tp, axis = 1));
        for j in 0..cdiv(n, K) {
            copy(t, xs[j]);
            copy(
                y.at(cta.x, h + j * K).within(M, e),
                exp2_approx(fma(t, 1.442695, nml)) * inv,
            );
        }
        copy(y.at(cta.x, 0).within(M, h), hp * inv);
        copy(y.at(cta.x, e), tp * inv);
    }

    /// RMSNorm of an odd row past 16k columns, staged as [`softmax_staged_odd`]: a pass for the
    /// sum of squares (the head's and tail's join it in one more reduction), a pass writing
    /// `x · r · w`. `w` is read at `h + j·K` from global memory (L2: every CTA reads the same `N`
    /// elements), element by element where `h > 0`, as `rmsnorm_odd_rows` reads it (measured
    /// 90 % of the device copy at 16384×1001 on the H100).
    #[tile_kernel(
        solves = rmsnorm,
        target = sm_90a,
        threads = T,
        grid = (M, 1),
        // `W`: the CTAs an SM holds at once by their shared memory, which the design counts on
        // (the module docs; `tests/assemble.rs` holds it to ptxas's registers too).
        configs(
            o24k = (T = 256, CAP = 24576, K = 4096, LK = 512, V = 8, W = 4, ODD = 1),
            o32k = (T = 256, CAP = 32768, K = 4096, LK = 512, V = 8, W = 3, ODD = 1),
        ),
    )]
    pub fn rmsnorm_staged_odd(
        #[shape(M, N)] x: Tensor<bf16>,
        #[shape(L)] xf: Tensor<bf16>,
        #[shape(N)] w: Tensor<bf16>,
        #[shape(M, N)] y: Tensor<bf16>,
        eps: f32,
    ) {
        static_assert(L == M * N, "`xf` is `x` seen as one dimension");
        static_assert(
            L <= 2147483647,
            "the flat view's TMA coordinates are signed 32-bit",
        );
        let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
        let full = mbarrier(count = CAP / LK);
        let (h, e, n) = stage_row(xs, full, xf);
        // The head and the tail (columns outside their bounds read 0 and add nothing).
        let hd = regs::<f32>([1, T], layout = blocked(vec = 1));
        let tl = regs::<f32>([1, T], layout = blocked(vec = 1));
        let hg = regs::<f32>([1, T], layout = blocked(vec = 1));
        copy(hd, x.at(cta.x, 0).within(M, h));
        copy(tl, x.at(cta.x, e));
        let t = regs::<f32>([1, K], layout = blocked(vec = V));
        let g = regs::<f32>([1, K], layout = blocked(vec = V));
        wait_first(full, n);
        copy(t, xs[0]);
        let mut sq = select(col_index(t) < n, t * t, 0.0);
        for j in 1..n / K {
            wait_chunk(full, j);
            copy(t, xs[j]);
            sq = fma(t, t, sq);
        }
        if n % K != 0 && n > K {
            wait_ragged(full, n);
            copy(t, xs[n / K]);
            sq += select(col_index(t) + n / K * K < n, t * t, 0.0);
        }
        let ss = reduce_sum(sq, axis = 1) + reduce_sum(hd * hd + tl * tl, axis = 1);
        let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
        for j in 0..cdiv(n, K) {
            copy(t, xs[j]);
            copy(g, w.at(h + j * K).within(e));
            copy(y.at(cta.x, h + j * K).within(M, e), t * r * g);
        }
        copy(hg, w.at(0).within(h));
        copy(y.at(cta.x, 0).within(M, h), hd * r * hg);
        copy(hg, w.at(e));
        copy(y.at(cta.x, e), tl * r * hg);
    }

    /// LayerNorm of an odd row past 16k columns, staged as [`softmax_staged_odd`]: three passes
    /// over shared memory — the sum, the squared deviations about the mean (the exact two-pass
    /// order; the row is in shared memory, so it costs no DRAM), the output `(x − μ)·r·w + b` —
    /// the head's and tail's statistics joining each in one more reduction; `w` and `b` from L2
    /// at `h + j·K`, as [`rmsnorm_staged_odd`]'s `w`.
    #[tile_kernel(
        solves = layernorm,
        target = sm_90a,
        threads = T,
        grid = (M, 1),
        // `W`: the CTAs an SM holds at once by their shared memory, which the design counts on
        // (the module docs; `tests/assemble.rs` holds it to ptxas's registers too).
        configs(
            o24k = (T = 256, CAP = 24576, K = 4096, LK = 512, V = 8, W = 4, ODD = 1),
            o32k = (T = 256, CAP = 32768, K = 4096, LK = 512, V = 8, W = 3, ODD = 1),
        ),
    )]
    pub fn layernorm_staged_odd(
        #[shape(M, N)] x: Tensor<bf16>,
        #[shape(L)] xf: Tensor<bf16>,
        #[shape(N)] w: Tensor<bf16>,
        #[shape(N)] b: Tensor<bf16>,
        #[shape(M, N)] y: Tensor<bf16>,
        eps: f32,
    ) {
        static_assert(L == M * N, "`xf` is `x` seen as one dimension");
        static_assert(
            L <= 2147483647,
            "the flat view's TMA coordinates are signed 32-bit",
        );
        let xs = smem::<bf16>([CAP / K, K / 256, 1, 256]);
        let full = mbarrier(count = CAP / LK);
        let (h, e, n) = stage_row(xs, full, xf);
        let hd = regs::<f32>([1, T], layout = blocked(vec = 1));
        let tl = regs::<f32>([1, T], layout = blocked(vec = 1));
        let hg = regs::<f32>([1, T], layout = blocked(vec = 1));
        let hb = regs::<f32>([1, T], layout = blocked(vec = 1));
        copy(hd, x.at(cta.x, 0).within(M, h));
        copy(tl, x.at(cta.x, e));
        let nf = cast::<f32>(N);
        let t = regs::<f32>([1, K], layout = blocked(vec = V));
        let g = regs::<f32>([1, K], layout = blocked(vec = V));
        wait_first(full, n);
        copy(t, xs[0]);
        let mut s1 = select(col_index(t) < n, t, 0.0);
        for j in 1..n / K {
            wait_chunk(full, j);
            copy(t, xs[j]);
            s1 += t;
        }
        if n % K != 0 && n > K {
            wait_ragged(full, n);
            copy(t, xs[n / K]);
            s1 += select(col_index(t) + n / K * K < n, t, 0.0);
        }
        // The head's and tail's columns outside their bounds read 0 and add nothing to the sum.
        let mean = (reduce_sum(s1, axis = 1) + reduce_sum(hd + tl, axis = 1)) / nf;
        // Squared deviations: only the first chunk and the ragged last one are masked.
        copy(t, xs[0]);
        let mut s2 = select(col_index(t) < n, (t - mean) * (t - mean), 0.0);
        for j in 1..n / K {
            copy(t, xs[j]);
            s2 = fma(t - mean, t - mean, s2);
        }
        if n % K != 0 && n > K {
            copy(t, xs[n / K]);
            s2 += select(col_index(t) + n / K * K < n, (t - mean) * (t - mean), 0.0);
        }
        hd = select(col_index(hd) < h, hd - mean, 0.0);
        tl = select(col_index(tl) < N - e, tl - mean, 0.0);
        let var = (reduce_sum(s2, axis = 1) + reduce_sum(hd * hd + tl * tl, axis = 1)) / nf;
        let r = rsqrt_approx(var + eps);
        for j in 0..cdiv(n, K) {
            copy(t, xs[j]);
            copy(g, w.at(h + j * K).within(e));
            t = (t - mean) * r * g;
            copy(g, b.at(h + j * K).within(e));
            copy(y.at(cta.x, h + j * K).within(M, e), t + g);
        }
        copy(hg, w.at(0).within(h));
        copy(hb, b.at(0).within(h));
        copy(y.at(cta.x, 0).within(M, h), hd * r * hg + hb);
        copy(hg, w.at(e));
        copy(hb, b.at(e));
        copy(y.at(cta.x, e), tl * r * hg + hb);
    }
}
