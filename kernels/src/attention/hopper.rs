//! FlashAttention forward on Hopper (sm_90a), written in tirx.
//!
//! O = softmax(scale · Q·Kᵀ [+ causal mask]) · V per (batch, query head), with the log-sum-exp
//! of each row kept for a backward pass. Q, K, V and O are the `[B, S, H·D]` row-major views
//! of torch's `[B, S, H, D]`; V is read as the MN-major B operand of the second product
//! (`#[major(mn)]`: logical `[B, H·D, S]`), so neither K nor V is ever copied or transposed.
//! GQA/MQA: query head `h` reads K/V head `h / (HQ / HK)`.
//!
//! Structure (FA3's, Shah et al. 2024, arXiv 2407.08608 §3.1): warpgroup 0 is the producer
//! (one elected thread issues TMA: Q once per tile, then K and V blocks into two stage rings —
//! `load_q_kv` of `pieces.rs`, the load warp `attention_sm100` shares),
//! warpgroups 1..=NWG are consumers, each owning 64 query rows. Per K/V block a consumer
//! computes S = Q·Kᵀ (wgmma, both operands in shared memory), the online softmax in registers
//! (running max and sum, exp2 with the scale folded in, the accumulator rescaled), converts P to
//! 16 bits in registers and accumulates O += P·V with P as the register A operand (wgmma's RS
//! form). O is divided by the row sum at the end and the log-sum-exp of each row written to
//! `lse` (`[B·HQ, S, 1]`, natural log). Causal masking is bottom-right aligned (query i sees keys j ≤ i + SK − S, as FA2/FA3);
//! a row that sees no key gets O = 0 and LSE = −∞.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::attention_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    #[tile_kernel(
        solves = attention,
        target = sm_90a,
        threads = 128 * (NWG + 1),
        grid = (cdiv(S, 64 * NWG), HQ / D, B),
        // Tiles per head dim, measured against each other on the H200 (docs/perf/attention-h200.md);
        // the host's cost model ranks them (`dispatch::attention`). hd 64: three warpgroups (192
        // rows, as FA3), which fit once P is packed two per register, with O rescaled early (EARLY: while
        // Q·Kᵀ runs; 9% faster than late at s8k for this tile, 1–2% slower for the others); the
        // two-warpgroup `d64` stays as the smaller tile the emulator cases use. hd 128: 128-column
        // key blocks (176 was 1.6% faster at s8k, 1.5% slower at s2k). hd 256: 80 (the largest
        // that leaves two K/V stages in shared memory beside Q). `d128_ping` is the ping-pong
        // schedule (measured no faster), never chosen.
        configs(product(
            types(default = (T = bf16), f16 = (T = f16)),
            mask(default = (CAUSAL = 0), causal = (CAUSAL = 1)),
            tile(
                d64_w3 = (D = 64, BN = 128, NWG = 3, STAGES = 2, PING = 0, EARLY = 1),
                d64 = (D = 64, BN = 128, NWG = 2, STAGES = 2, PING = 0, EARLY = 0),
                d128 = (D = 128, BN = 128, NWG = 2, STAGES = 2, PING = 0, EARLY = 0),
                d256 = (D = 256, BN = 80, NWG = 2, STAGES = 2, PING = 0, EARLY = 0),
                d128_ping = (D = 128, BN = 128, NWG = 2, STAGES = 2, PING = 1, EARLY = 0),
            ),
        )),
    )]
    pub fn attention_sm90(
        #[shape(B, S, HQ)] q: Tensor<T>,
        #[shape(B, SK, HK)] k: Tensor<T>,
        #[shape(B, HK, SK)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(B, S, HQ)] o: Tensor<T>,
        #[shape(BH, S, 1)] lse: Tensor<f32>,
        scale_log2: f32,
    ) {
        let q_s = smem::<T>([NWG, D / 64, 64, 64], swizzle = B128);
        let k_s = smem::<T>([STAGES, D / 64, BN, 64], swizzle = B128);
        let v_s = smem::<T>([STAGES, D, BN], swizzle = B128, major = mn);
        let q_bar = mbarrier();
        let k_pipe = pipeline::<STAGES>(consumers = NWG);
        let v_pipe = pipeline::<STAGES>(consumers = NWG);
        let s = regs::<f32>([64, BN]);
        let acc = regs::<f32>([64, D]);
        let pb = regs::<T>([64, BN]);
        let m_i = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let l_i = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let corr = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let h = cta.y;
        let hk = h / (HQ / HK);
        // Longest first: with the causal mask, later query tiles see more keys.
        let mb = ncta.x - 1 - cta.x;
        // Key blocks this tile reads, and how many of them need no mask.
        let (n_blocks, n_full) = key_blocks(mb);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(24 + 8 * (NWG - 2));
            #[scope(warp = 0, elect)]
            {
                load_q_kv(
                    q_bar,
                    k_pipe,
                    v_pipe,
                    q_s,
                    k_s,
                    v_s,
                    q,
                    k,
                    v,
                    mb,
                    NWG,
                    h,
                    hk,
                    D / 64,
                    n_blocks,
                );
            }
        }
        #[scope(warpgroups = 1..NWG + 1)]
        {
            setmaxnreg::inc(240 - 80 * (NWG - 2));
            let wg = tid / 128 - 1;
            let leader = tid % 128 == 0;
            let row0 = (mb * NWG + wg) * 64;
            q_bar.wait(0);
            softmax_init(s, acc, m_i, l_i, corr);
            // Ping-pong: the warpgroups take turns issuing their MMAs (named barrier 3 + wg is
            // this warpgroup's turn; it passes the turn on when its MMAs are issued), so one
            // warpgroup's softmax runs while the other's MMAs do. Warpgroup 0 starts.
            let next = 3 + (wg + 1) % NWG;
            if PING == 1 && wg == NWG - 1 && n_blocks > 0 {
                named_barrier_arrive(3, 256);
            }
            if n_blocks > 0 {
                // Block 0: S, its softmax, P.
                let sk = k_pipe.consumer_wait(0);
                if PING == 1 {
                    named_barrier(3 + wg, 256);
                }
                wgmma::fence();
                for c in 0..D / 64 {
                    wgmma::mma(s, q_s[wg][c], k_s[sk][c], accumulate = c > 0);
                }
                wgmma::commit();
                if PING == 1 {
                    named_barrier_arrive(next, 256);
                }
                wgmma::wait(0);
                if leader {
                    k_pipe.consumer_release(sk);
                }
                if n_full == 0 {
                    s = select(col_index(s) < SK, s, f32::NEG_INFINITY);
                    if CAUSAL == 1 {
                        s = select(
                            col_index(s) + S <= row_index(s) + row0 + SK,
                            s,
                            f32::NEG_INFINITY,
                        );
                    }
                }
                softmax_first(s, pb, m_i, l_i, scale_log2);
                // Block n: S_n = Q·K_nᵀ and O += P_{n−1}·V_{n−1} in flight together; the softmax
                // of S_n runs while the second product does.
                for n in 1..n_blocks {
                    let sk = k_pipe.consumer_wait(n);
                    let sv = v_pipe.consumer_wait(n - 1);
                    if PING == 1 {
                        named_barrier(3 + wg, 256);
                    }
                    wgmma::fence();
                    for c in 0..D / 64 {
                        wgmma::mma(s, q_s[wg][c], k_s[sk][c], accumulate = c > 0);
                    }
                    wgmma::commit();
                    // EARLY: O rescaled by the previous block's correction while Q·K_nᵀ runs
                    // (FA3's order); else after the PV product retires. Measured per tile.
                    if EARLY == 1 {
                        acc = acc * corr;
                        wgmma::fence();
                    }
                    wgmma::mma(acc, pb, v_s[sv], accumulate = true);
                    wgmma::commit();
                    if PING == 1 {
                        named_barrier_arrive(next, 256);
                    }
                    wgmma::wait(1);
                    if leader {
                        k_pipe.consumer_release(sk);
                    }
                    mask_block(s, n, n_full, row0);
                    softmax_next(s, m_i, l_i, corr, scale_log2);
                    wgmma::wait(0);
                    if leader {
                        v_pipe.consumer_release(sv);
                    }
                    if EARLY == 0 {
                        acc = acc * corr;
                    }
                    pb = cast::<T>(s);
                }
                let sv = v_pipe.consumer_wait(n_blocks - 1);
                if PING == 1 {
                    named_barrier(3 + wg, 256);
                }
                if EARLY == 1 {
                    acc = acc * corr;
                }
                wgmma::fence();
                wgmma::mma(acc, pb, v_s[sv], accumulate = true);
                wgmma::commit();
                wgmma::wait(0);
                // The last turn: the last warpgroup passes none on (warpgroup 0 takes no more).
                // After the wait: a branch between an MMA and its wait makes ptxas serialise every
                // wgmma of the kernel (its C7519).
                if PING == 1 && wg != NWG - 1 {
                    named_barrier_arrive(next, 256);
                }
                if leader {
                    v_pipe.consumer_release(sv);
                }
            }
            acc = acc * select(l_i == 0.0, 0.0, rcp(l_i));
            store_lse(
                lse,
                m_i,
                l_i,
                scale_log2,
                cta.z * (HQ / D) + h,
                mb * NWG + wg,
            );
            // Q is no longer read: its tile stages O for the TMA store.
            copy(q_s[wg], acc);
            fence::proxy_async();
            named_barrier(wg + 1, 128);
            #[scope(leader)]
            {
                for c in 0..D / 64 {
                    tma::store(o.tile(cta.z, mb * NWG + wg, h * (D / 64) + c), q_s[wg][c]);
                }
                tma::commit_group();
                tma::wait_group(0);
            }
        }
    }
}
