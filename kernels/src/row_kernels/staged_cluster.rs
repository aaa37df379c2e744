//! `softmax_staged_cluster`, `rmsnorm_staged_cluster`, `layernorm_staged_cluster` — rows of 32k…256k columns split over the
//! `CS` CTAs of a cluster, each CTA's `P` columns staged in its shared memory by TMA (a barrier
//! per chunk of `K` columns, as `softmax_staged`: the first pass starts on the first chunk;
//! +1–10 % measured on the H100), the statistics combined across the cluster through distributed shared memory
//! (`reduce_… (…, across = cluster)`).
//!
//! Issue #32: a row longer than 32k columns went to the chunked kernels (`softmax_long`,
//! `rmsnorm_long`), which read the row twice from global memory; at 4096×65536 the CTAs in
//! flight hold more rows than L2 keeps while their second pass comes, and at 1024×262144
//! every row is 512 KB. Here the row is read from DRAM once: each CTA holds its part as bf16
//! in shared memory (64 KB at `P` = 32768, three CTAs per SM, as `softmax_staged`), walks it in
//! register chunks of `K` columns as `softmax_staged` does, and the cluster exchanges one
//! value per statistic: each CTA `st.async`s it into every CTA's receive slot and waits on its
//! own mbarrier (the push form of `across = cluster`; the kernel's only cluster barriers are
//! the one after the barriers' initialisation and the one before exit). The pull form
//! (`across = cluster_pull`: a cluster barrier per statistic, whose release ncu showed as
//! 3 cycles of "membar" stall per instruction at 4096×65536 on the H200) stays selectable.
//!
//! CTA `cta_rank` of the cluster of row `cta.x / CS` holds columns `[cta_rank·P, cta_rank·P +
//! P)`, of which `nl` are inside the row (0 for a CTA wholly past `N`: its TMA boxes fill
//! zeros and it contributes −∞ to the max and 0 to the sums). Only the first chunk and the
//! ragged last one of a CTA are masked.
//!
//! `h2`/`h4`/`h8` split 32768/65536/131072 columns into parts of 16384 (32 KB: more CTAs per SM, each
//! waiting less for its TMA, for one more cluster exchange). Among configs of one capacity the
//! host takes the first listed: `x2` at 65536, and at 32768 `softmax_staged`/`rmsnorm_staged`
//! (catalogue order) — unmeasured against them yet; LayerNorm has no staged kernel of its own,
//! so its aligned rows of 16k…32k columns take `h2` (read once) over `layernorm_long`.
//!
//! The tensor maps need 16-byte aligned rows (`N` a multiple of 8); the host takes the chunked
//! kernel when the launch planner refuses the tensors.

use tirx::prelude::*;

#[tile_kernel(
    solves = softmax,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(
        x2 = (T = 256, CS = 2, P = 32768, K = 4096, V = 8, CAP = 65536),
        x4 = (T = 256, CS = 4, P = 32768, K = 4096, V = 8, CAP = 131072),
        x8 = (T = 256, CS = 8, P = 32768, K = 4096, V = 8, CAP = 262144),
        h2 = (T = 256, CS = 2, P = 16384, K = 4096, V = 8, CAP = 32768),
        h4 = (T = 256, CS = 4, P = 16384, K = 4096, V = 8, CAP = 65536),
        h8 = (T = 256, CS = 8, P = 16384, K = 4096, V = 8, CAP = 131072),
    ),
)]
pub fn softmax_staged_cluster(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([P / K, K / 256, 1, 256]);
    // One barrier per chunk of `K` columns: the first pass starts on chunk 0 while the rest
    // of the part is in flight.
    let full = mbarrier(count = P / K);
    #[scope(thread = 0)]
    {
        for c in 0..P / K {
            for q in 0..K / 256 {
                tma::load(
                    xs[c][q],
                    x.tile(cta.x / CS, cta_rank * (P / 256) + c * (K / 256) + q),
                    full[c],
                );
            }
        }
    }
    // This CTA's columns inside the row.
    let nl = min(N, cta_rank * P + P) - min(N, cta_rank * P);
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    full[0].wait(0);
    copy(t, xs[0]);
    let mut mx = select(col_index(t) < nl, t, f32::NEG_INFINITY);
    for j in 1..nl / K {
        full[j].wait(0);
        copy(t, xs[j]);
        mx = max(mx, t);
    }
    if nl % K != 0 && nl > K {
        full[nl / K].wait(0);
        copy(t, xs[nl / K]);
        mx = max(
            mx,
            select(col_index(t) + nl / K * K < nl, t, f32::NEG_INFINITY),
        );
    }
    // The chunks past this CTA's columns land too (zero-filled) before the CTA may leave.
    for j in max(cdiv(nl, K), 1)..P / K {
        full[j].wait(0);
    }
    // exp(x − m) = exp2(x·log2e − m·log2e): one fma and one ex2 per element.
    let nml = reduce_max(mx, axis = 1, across = cluster) * -1.442695;
    copy(t, xs[0]);
    let mut se = select(col_index(t) < nl, exp2_approx(fma(t, 1.442695, nml)), 0.0);
    for j in 1..nl / K {
        copy(t, xs[j]);
        se += exp2_approx(fma(t, 1.442695, nml));
    }
    if nl % K != 0 && nl > K {
        copy(t, xs[nl / K]);
        se += select(
            col_index(t) + nl / K * K < nl,
            exp2_approx(fma(t, 1.442695, nml)),
            0.0,
        );
    }
    let inv = rcp_approx(reduce_sum(se, axis = 1, across = cluster));
    for j in 0..cdiv(nl, K) {
        copy(t, xs[j]);
        copy(
            y.tile(cta.x / CS, cta_rank * (P / K) + j),
            exp2_approx(fma(t, 1.442695, nml)) * inv,
        );
    }
}

#[tile_kernel(
    solves = rmsnorm,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(
        x2 = (T = 512, CS = 2, P = 32768, K = 4096, V = 8, CAP = 65536),
        x4 = (T = 512, CS = 4, P = 32768, K = 4096, V = 8, CAP = 131072),
        x8 = (T = 512, CS = 8, P = 32768, K = 4096, V = 8, CAP = 262144),
        h2 = (T = 512, CS = 2, P = 16384, K = 4096, V = 8, CAP = 32768),
        h4 = (T = 512, CS = 4, P = 16384, K = 4096, V = 8, CAP = 65536),
        h8 = (T = 512, CS = 8, P = 16384, K = 4096, V = 8, CAP = 131072),
    ),
)]
pub fn rmsnorm_staged_cluster(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let xs = smem::<bf16>([P / K, K / 256, 1, 256]);
    // One barrier per chunk of `K` columns: the first pass starts on chunk 0 while the rest
    // of the part is in flight.
    let full = mbarrier(count = P / K);
    #[scope(thread = 0)]
    {
        for c in 0..P / K {
            for q in 0..K / 256 {
                tma::load(
                    xs[c][q],
                    x.tile(cta.x / CS, cta_rank * (P / 256) + c * (K / 256) + q),
                    full[c],
                );
            }
        }
    }
    // This CTA's columns inside the row; the boxes past `N` are zero-filled and add nothing.
    let nl = min(N, cta_rank * P + P) - min(N, cta_rank * P);
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    let g = regs::<f32>([1, K], layout = blocked(vec = V));
    full[0].wait(0);
    copy(t, xs[0]);
    let mut sq = t * t;
    for j in 1..cdiv(nl, K) {
        full[j].wait(0);
        copy(t, xs[j]);
        sq = fma(t, t, sq);
    }
    // The chunks past this CTA's columns land too (zero-filled) before the CTA may leave.
    for j in max(cdiv(nl, K), 1)..P / K {
        full[j].wait(0);
    }
    let ss = reduce_sum(sq, axis = 1, across = cluster);
    let r = rsqrt_approx(ss / cast::<f32>(N) + eps);
    for j in 0..cdiv(nl, K) {
        copy(t, xs[j]);
        copy(g, w.tile(cta_rank * (P / K) + j));
        copy(y.tile(cta.x / CS, cta_rank * (P / K) + j), t * r * g);
    }
}

/// LayerNorm: three passes over shared memory — the sum, the squared deviations about the
/// mean (the exact two-pass order; the row is in shared memory, so it costs no DRAM), and the
/// output `(x − μ)·r·w + b` with `w`, `b` from L2. (A cluster of one is refused by
/// `across = cluster`; rows of 16k…32k columns take `layernorm_long`.)
#[tile_kernel(
    solves = layernorm,
    target = sm_90a,
    threads = T,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(
        x2 = (T = 512, CS = 2, P = 32768, K = 4096, V = 8, CAP = 65536),
        x4 = (T = 512, CS = 4, P = 32768, K = 4096, V = 8, CAP = 131072),
        x8 = (T = 512, CS = 8, P = 32768, K = 4096, V = 8, CAP = 262144),
        h2 = (T = 512, CS = 2, P = 16384, K = 4096, V = 8, CAP = 32768),
        h4 = (T = 512, CS = 4, P = 16384, K = 4096, V = 8, CAP = 65536),
        h8 = (T = 512, CS = 8, P = 16384, K = 4096, V = 8, CAP = 131072),
    ),
)]
pub fn layernorm_staged_cluster(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(N)] w: Tensor<bf16>,
    #[shape(N)] b: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    eps: f32,
) {
    let xs = smem::<bf16>([P / K, K / 256, 1, 256]);
    // One barrier per chunk of `K` columns: the first pass starts on chunk 0 while the rest
    // of the part is in flight.
    let full = mbarrier(count = P / K);
    #[scope(thread = 0)]
    {
        for c in 0..P / K {
            for q in 0..K / 256 {
                tma::load(
                    xs[c][q],
                    x.tile(cta.x / CS, cta_rank * (P / 256) + c * (K / 256) + q),
                    full[c],
                );
            }
        }
    }
    // This CTA's columns inside the row; the boxes past `N` are zero-filled.
    let nl = min(N, cta_rank * P + P) - min(N, cta_rank * P);
    let n = cast::<f32>(N);
    let t = regs::<f32>([1, K], layout = blocked(vec = V));
    let g = regs::<f32>([1, K], layout = blocked(vec = V));
    full[0].wait(0);
    copy(t, xs[0]);
    let mut s1 = t;
    for j in 1..cdiv(nl, K) {
        full[j].wait(0);
        copy(t, xs[j]);
        s1 += t;
    }
    // The chunks past this CTA's columns land too (zero-filled) before the CTA may leave.
    for j in max(cdiv(nl, K), 1)..P / K {
        full[j].wait(0);
    }
    let mean = reduce_sum(s1, axis = 1, across = cluster) / n;
    // Squared deviations: only the first chunk and the ragged last one are masked.
    copy(t, xs[0]);
    let mut s2 = select(col_index(t) < nl, (t - mean) * (t - mean), 0.0);
    for j in 1..nl / K {
        copy(t, xs[j]);
        s2 = fma(t - mean, t - mean, s2);
    }
    if nl % K != 0 && nl > K {
        copy(t, xs[nl / K]);
        s2 += select(col_index(t) + nl / K * K < nl, (t - mean) * (t - mean), 0.0);
    }
    let r = rsqrt_approx(reduce_sum(s2, axis = 1, across = cluster) / n + eps);
    for j in 0..cdiv(nl, K) {
        copy(t, xs[j]);
        copy(g, w.tile(cta_rank * (P / K) + j));
        t = (t - mean) * r * g;
        copy(g, b.tile(cta_rank * (P / K) + j));
        copy(y.tile(cta.x / CS, cta_rank * (P / K) + j), t + g);
    }
}
