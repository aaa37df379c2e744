//! `softmax_staged_pipe`, `rmsnorm_staged_pipe` — `*_staged_cluster`'s split rows (issue #32),
//! persistent and double-buffered: a cluster of `CS` CTAs walks rows `cta.x / CS`,
//! `+ ncta.x / CS`, …, and while it reduces and stores one row its TMA thread loads the next
//! row's parts into the other half of a ring.
//!
//! Why: ncu of `softmax_staged_cluster` `x2` at 4096×65536 on the H100 (DRAM 67 % of peak,
//! docs/perf/h100-2026-12-07-stop56.md §9): three CTAs an SM each load their whole part, then
//! reduce, then store — one phase at a time each, and a CTA's loads stop from its last landed
//! chunk to its exit, the next CTA's start only then. Here every CTA keeps one part's loads in
//! flight while it computes on the other, so the SM's load stream does not pause between rows.
//!
//! **The ring.** `xs` holds `S = 2·P/K` chunks of `K` columns, a pipeline stage each
//! (`pipeline::<S>`: a *full* barrier with the chunk's TMA bytes, an *empty* one with one
//! arrival). Row `i` of the cluster's walk (its `i`-th row) takes the chunk counters `i·P/K …
//! i·P/K + P/K − 1`, so stages `(i·P/K + c) mod S`: the parts of rows `i` and `i + 1` never
//! share a stage, and the pipeline's counters give each wait its phase as the rows repeat.
//! - *Full*: every thread waits on chunk `c`'s barrier before its first pass over it (the first
//!   pass starts on chunk 0 while the rest is in flight, as `softmax_staged`), and on every
//!   chunk of the part past `N` (zero-filled, never read) so no phase is left incomplete when
//!   its stage is armed again. The later passes wait again in their loops (the phase is
//!   complete and the stage not yet released, so the wait passes at once): the compiler's
//!   check that a loop reading a pipeline's stages waits for each (`stage read without wait`)
//!   cannot bound a loop of `nl / K` iterations by the ring.
//! - *Empty*: after its store pass, the CTA synchronises (`sync_threads`: every thread's last
//!   read of the part is done) and thread 0 releases the part's `P/K` stages; thread 0 (the
//!   TMA thread) acquires them (`producer_acquire`) before it loads row `i + 2` into them, at
//!   the start of row `i + 1`. The acquire passes at once in this order (thread 0 released them
//!   itself), but it is the stated condition, and the emulator checks it.
//! - The TMA thread is thread 0, which also computes: at the top of row `i` it issues row
//!   `i + 1`'s loads (a whole row of time to land), then joins the passes over row `i`.
//!
//! **The exchange.** `reduce_…(…, across = cluster)` in a loop alternates two receive sets and
//! two receive barriers, round `n` waiting on parity `(n div 2) mod 2` (`regtile/reduce/
//! cluster.rs`): every CTA of a cluster walks the same rows, so the rounds match.
//!
//! **The grid** is `W` CTAs an SM less a sixteenth, in whole clusters (`SMS·W·15/16`, rounded
//! down to a multiple of `CS`): `W` is what shared memory and ptxas's registers let reside
//! (two parts of `P` bf16 each: 64 KB at `P` = 16384, three CTAs an SM; 128 KB at 32768,
//! one). Every cluster must reside at once: the walk is static, so a cluster that waits for
//! another to exit runs its rows after the others' (a whole second walk). A cluster's CTAs
//! share one GPC, and the GPCs' sizes differ (an H100 SXM's 132 SMs are GPCs of 16 and 18),
//! so `W·SMS / CS` clusters overcount what resides by up to one a GPC (`⌊3·16/8⌋ = 6` a GPC
//! of 16 SMs: 48 clusters of 8 against `⌊3·132/8⌋ = 49`); a sixteenth less (46) leaves that
//! margin. The grid cannot ask the driver (`cudaOccupancyMaxActiveClusters`) yet: a bench
//! that runs a config at twice its expected time is a cluster past the margin. ptxas:
//! 40–48 registers (T = 256 at W = 3 needs ≤ 85; T = 512 at W = 1, ≤ 128), no spills.
//!
//! **Configs** (capacity `CAP = CS·P`, `T = 256` and three CTAs an SM at `P` = 16384, `T = 512`
//! and one at 32768): `p32k` (2×16384), `p64k` (4×16384), `p128k` (8×16384), `p256k`
//! (8×32768: the portable cluster is at most 8 CTAs, so the 262144-column row takes parts of
//! 32768, two in 128 KB); and `p64k_w1` (2×32768), `p128k_w1` (4×32768): fewer peers an
//! exchange, one CTA an SM. Shared memory 69008 B at `P` = 16384 (3 × 69 KB resides).
//!
//! **Prediction** (not measured): 92–96 % of the device copy at 8192×32768 (`p32k`),
//! 4096×65536 (`p64k`) and 2048×131072 (`p128k`), against 76–86 % for `*_staged_cluster` and
//! QuACK's 99–100 %; `p256k` at 1024×262144 88–93 % (one CTA an SM: its own compute is not
//! hidden behind another CTA's; 120 of 132 SMs in the grid). Why: the loads of an SM's three
//! CTAs never pause (each has its next row's 32 KB in flight while it computes: 96 KB a SM,
//! beyond the ~40 KB that 25 B/ns of DRAM for ~1.5 µs of latency needs), the stores stream
//! behind the last pass, and the exchanges' latency now overlaps the next row's loads; what is
//! left is the first row's load (1 of ~40 rows a cluster at these shapes), the grid's margin
//! (a sixteenth of the SMs' slots, 6 % fewer CTAs to keep DRAM busy) and the row count's
//! remainder over the clusters (≤ 1 row of ~42: 2 %).
//!
//! Untimed (`UNTIMED = 1`): the host's cost model refuses them (`request.rs`) until a run
//! measures them against `*_staged_cluster`; they run by name (`tirx bench rows --kernel
//! softmax_staged_pipe/p64k`). The tensor maps need 16-byte aligned rows (`N` a multiple of
//! 8), as `*_staged_cluster`.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (SMS * W * 15 / 16 / CS * CS, 1),
    configs(
        p32k = (T = 256, CS = 2, P = 16384, K = 4096, S = 8, V = 8, W = 3, CAP = 32768, UNTIMED = 1),
        p64k = (T = 256, CS = 4, P = 16384, K = 4096, S = 8, V = 8, W = 3, CAP = 65536, UNTIMED = 1),
        p128k = (T = 256, CS = 8, P = 16384, K = 4096, S = 8, V = 8, W = 3, CAP = 131072, UNTIMED = 1),
        p256k = (T = 512, CS = 8, P = 32768, K = 4096, S = 16, V = 8, W = 1, CAP = 262144, UNTIMED = 1),
        // Parts of 32768 at the shorter rows too: half the exchanges' peers, one CTA an SM.
        p64k_w1 = (T = 512, CS = 2, P = 32768, K = 4096, S = 16, V = 8, W = 1, CAP = 65536, UNTIMED = 1),
        p128k_w1 = (T = 512, CS = 4, P = 32768, K = 4096, S = 16, V = 8, W = 1, CAP = 131072, UNTIMED = 1),
    ),
)]
pub fn softmax_staged_pipe(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    // Two rows' parts: `S = 2·P/K` chunk stages.
    let xs = smem::<bf16>([S, K / 256, 1, 256]);
    let pipe = pipeline::<S>();
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    // This CTA's columns inside the row (the same for every row).
    let nl = min(N, cta_rank * P + P) - min(N, cta_rank * P);
    let first = cta.x / CS;
    let step = ncta.x / CS;
    // The cluster's first row.
    #[scope(thread = 0)]
    {
        if first < M {
            for c in 0..P / K {
                let s = pipe.producer_acquire(c);
                for q in 0..K / 256 {
                    tma::load(
                        xs[s][q],
                        x.tile(first, cta_rank * (P / 256) + c * (K / 256) + q),
                        pipe.full(s),
                    );
                }
            }
        }
    }
    let mut i = 0;
    for r in (first..M).step_by(step) {
        // The next row's part into the other half of the ring while this one is reduced.
        #[scope(thread = 0)]
        {
            if r + step < M {
                for c in 0..P / K {
                    let s = pipe.producer_acquire((i + 1) * (P / K) + c);
                    for q in 0..K / 256 {
                        tma::load(
                            xs[s][q],
                            x.tile(r + step, cta_rank * (P / 256) + c * (K / 256) + q),
                            pipe.full(s),
                        );
                    }
                }
            }
        }
        let b = i * (P / K);
        let s0 = pipe.consumer_wait(b);
        copy(t, xs[s0]);
        let mut mx = select(col_index(t) < nl, t, f32::NEG_INFINITY);
        for j in 1..nl / K {
            let s = pipe.consumer_wait(b + j);
            copy(t, xs[s]);
            mx = max(mx, t);
        }
        if nl % K != 0 && nl > K {
            let s = pipe.consumer_wait(b + nl / K);
            copy(t, xs[s]);
            mx = max(
                mx,
                select(col_index(t) + nl / K * K < nl, t, f32::NEG_INFINITY),
            );
        }
        // The chunks past this CTA's columns land too (zero-filled) before their stages are
        // released.
        for j in max(cdiv(nl, K), 1)..P / K {
            let _s = pipe.consumer_wait(b + j);
        }
        // exp(x − m) = exp2(x·log2e − m·log2e): one fma and one ex2 per element.
        let nml = reduce_max(mx, axis = 1, across = cluster) * -1.442695;
        copy(t, xs[b % S]);
        let mut se = select(col_index(t) < nl, exp2_approx(fma(t, 1.442695, nml)), 0.0);
        for j in 1..nl / K {
            let s = pipe.consumer_wait(b + j);
            copy(t, xs[s]);
            se += exp2_approx(fma(t, 1.442695, nml));
        }
        if nl % K != 0 && nl > K {
            copy(t, xs[(b + nl / K) % S]);
            se += select(
                col_index(t) + nl / K * K < nl,
                exp2_approx(fma(t, 1.442695, nml)),
                0.0,
            );
        }
        let inv = rcp_approx(reduce_sum(se, axis = 1, across = cluster));
        for j in 0..cdiv(nl, K) {
            let s = pipe.consumer_wait(b + j);
            copy(t, xs[s]);
            copy(
                y.tile(r, cta_rank * (P / K) + j),
                exp2_approx(fma(t, 1.442695, nml)) * inv,
            );
        }
        // Every thread's last read of the part, then its stages go back to the TMA thread.
        sync_threads();
        #[scope(thread = 0)]
        {
            for c in 0..P / K {
                pipe.consumer_release((b + c) % S);
            }
        }
        i += 1;
    }
}

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (SMS * W * 15 / 16 / CS * CS, 1),
    configs(
        p32k = (T = 256, CS = 2, P = 16384, K = 4096, S = 8, V = 8, W = 3, CAP = 32768, UNTIMED = 1),
        p64k = (T = 256, CS = 4, P = 16384, K = 4096, S = 8, V = 8, W = 3, CAP = 65536, UNTIMED = 1),
        p128k = (T = 256, CS = 8, P = 16384, K = 4096, S = 8, V = 8, W = 3, CAP = 131072, UNTIMED = 1),
        p256k = (T = 512, CS = 8, P = 32768, K = 4096, S = 16, V = 8, W = 1, CAP = 262144, UNTIMED = 1),
        // Parts of 32768 at the shorter rows too: half the exchanges' peers, one CTA an SM.
        p64k_w1 = (T = 512, CS = 2, P = 32768, K = 4096, S = 16, V = 8, W = 1, CAP = 65536, UNTIMED = 1),
        p128k_w1 = (T = 512, CS = 4, P = 32768, K = 4096, S = 16, V = 8, W = 1, CAP = 131072, UNTIMED = 1),
    ),
)]
pub fn rmsnorm_staged_pipe(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    // Two rows' parts: `S = 2·P/K` chunk stages.
    let xs = smem::<bf16>([S, K / 256, 1, 256]);
    let pipe = pipeline::<S>();
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    let g = regs::<f32>([1, K], layout = blocked(vec = V));
    // This CTA's columns inside the row; the boxes past `N` are zero-filled and add nothing.
    let nl = min(N, cta_rank * P + P) - min(N, cta_rank * P);
    let first = cta.x / CS;
    let step = ncta.x / CS;
    // The cluster's first row.
    #[scope(thread = 0)]
    {
        if first < M {
            for c in 0..P / K {
                let s = pipe.producer_acquire(c);
                for q in 0..K / 256 {
                    tma::load(
                        xs[s][q],
                        x.tile(first, cta_rank * (P / 256) + c * (K / 256) + q),
                        pipe.full(s),
                    );
                }
            }
        }
    }
    let mut i = 0;
    for r in (first..M).step_by(step) {
        // The next row's part into the other half of the ring while this one is reduced.
        #[scope(thread = 0)]
        {
            if r + step < M {
                for c in 0..P / K {
                    let s = pipe.producer_acquire((i + 1) * (P / K) + c);
                    for q in 0..K / 256 {
                        tma::load(
                            xs[s][q],
                            x.tile(r + step, cta_rank * (P / 256) + c * (K / 256) + q),
                            pipe.full(s),
                        );
                    }
                }
            }
        }
        let b = i * (P / K);
        let s0 = pipe.consumer_wait(b);
        copy(t, xs[s0]);
        let mut sq = t * t;
        for j in 1..cdiv(nl, K) {
            let s = pipe.consumer_wait(b + j);
            copy(t, xs[s]);
            sq = fma(t, t, sq);
        }
        // The chunks past this CTA's columns land too (zero-filled) before their stages are
        // released.
        for j in max(cdiv(nl, K), 1)..P / K {
            let _s = pipe.consumer_wait(b + j);
        }
        let ss = reduce_sum(sq, axis = 1, across = cluster);
        let rs = rsqrt_approx(ss / cast::<f32>(N) + eps);
        for j in 0..cdiv(nl, K) {
            let s = pipe.consumer_wait(b + j);
            copy(t, xs[s]);
            copy(g, w.tile(cta_rank * (P / K) + j));
            copy(y.tile(r, cta_rank * (P / K) + j), t * rs * g);
        }
        // Every thread's last read of the part, then its stages go back to the TMA thread.
        sync_threads();
        #[scope(thread = 0)]
        {
            for c in 0..P / K {
                pipe.consumer_release((b + c) % S);
            }
        }
        i += 1;
    }
}
