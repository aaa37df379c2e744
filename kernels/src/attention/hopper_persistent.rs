//! FlashAttention forward on Hopper (sm_90a), persistent: `attention_sm90`'s algorithm (its
//! module docs: roles, online softmax, RS-form P·V, masks, LSE, GQA) with one CTA per SM
//! walking the (query tile, head, batch) tiles round-robin, query tiles fastest (a wave of CTAs
//! shares a head's K/V in L2). The K/V rings run on across tiles (their counters never reset)
//! and Q has QS stages of its own, so the producer loads the next tile's Q and first K/V blocks
//! (its K/V rings `load_kv` of `pieces.rs`, the other attention kernels' too)
//! while the consumers finish this tile: a tile's prologue (Q, the first Q·Kᵀ) and epilogue (O
//! through shared memory to a TMA store) no longer leave the SM idle (FA3's persistent
//! scheduler, Shah et al. 2024, arXiv 2407.08608 §3.1). O is staged in the consumer's own Q
//! stage, which goes back to the producer once the store has read it.
//!
//! Measured against `attention_sm90` on the H200 (docs/perf/attention-h200.md, 2026-12-03
//! 12:32): hd 128 without a mask +21% at s512, +11% at 1k, +6% at 2k, +2% at 8k; hd 64, hd 256
//! and, with the walk of single tiles, every causal problem slower. That walk cannot balance
//! the causal tiles' unequal work: with `m` query tiles a head and an SM count that `m`
//! divides (132 at s512, hd 128: m = 4), CTA c takes query tile `m − 1 − c mod m` every
//! round, so a quarter of the CTAs read 4 key blocks a tile while the mean is 2.5; the
//! hardware's CTA scheduler balances one CTA per tile by handing the next tile to the first
//! SM free.
//!
//! The causal walk (`walk_item` of `pieces.rs`) is balanced by construction instead: a work
//! item is a pair of query tiles of one (head, batch), `m − 1 − p` and `p`, whose key blocks
//! sum to `m + 1` whatever `p` (the tile of 128 rows and 128-column key blocks on S = SK;
//! about that otherwise); an odd `m`'s middle tiles, half an item each, come after every
//! pair, so they neither fall on the same CTAs round after round nor leave a long item to the
//! walk's end. The items run round-robin over the CTAs, the longer tile of each first; the
//! rings run on across both tiles of an item as across items. The mask, the block counts
//! (`key_blocks`, bottom-right aligned as `attention_sm90`: a tile whose rows see no key reads
//! no block) and the softmax steps (`softmax_first`/`softmax_next`, whose −∞ guards such rows
//! need) are `attention_pieces`', the unmasked tile's too. Left out as before: ping-pong, O
//! rescaled early (`EARLY`), three consumer warpgroups. So unmasked the tile is hd 128 alone
//! (at hd 64 `attention_sm90`'s three-warpgroup tile with `EARLY` was faster), and causal
//! hd 128 and hd 64 (two warpgroups, where the pairs' balance is predicted to outweigh the
//! third warpgroup at short sequences).
//!
//! Predicted by the host's cost model (`AttentionRequest::cost`, the busiest SM's key
//! blocks), causal, 16k tokens, heads × hd 2048, against the one-CTA-a-tile tile it takes
//! now: hd 128 (`causal_d128`) +35% at s512, +22% at 1k, +14% at 2k, +9% at 4k, +5% at 8k;
//! hd 64 (`causal_d64_w3`, its 1.13 for the third warpgroup counted) +51% at s512, +36% at
//! 1k, +9% at 2k, +3% at 4k, −5% at 8k (not taken there) — the exposed prologue (0.8 of a
//! block a tile) and the hardware schedule's uneven end, which the pairs leave only where the
//! items do not divide the SMs. The model knows nothing of hd 64's softmax-bound blocks
//! (the unmasked two-warpgroup tile lost there though the model favoured it): the hd 64
//! numbers are the less certain.
//!
//! Measured on an H100 (stop 49, `docs/perf/h100-2026-12-06-stop49.md` call 4, each tile
//! forced): hd 128 +13 % at s512, +9 % at 1k, +4 % at 2k, level at 8k (312.5 / 405.5 / 481.9
//! / 578.3 TFLOP/s); hd 64 +28 % at s512, +11 % at 1k, +1 % at 2k over the best
//! one-CTA-a-tile tile, −13 % at 8k (where the model keeps `causal_d64_w3`). Every sign as
//! predicted, each gain about half the prediction.
//!
//! In the emulator (`tirx sim attention_sm90_persistent --config causal_d128_sms --m 512
//! --n 512 --sms 4 --timeline FILE`: s512, 4 heads, 16 tiles on 4 CTAs, the pattern of 132
//! SMs at m = 4) CTA 0 issues 5120 wgmma operations over 10.67 M steps with the pairs, 8192
//! over 15.31 M with the walk of single tiles (always tile 3: 16 key blocks against the pairs'
//! 10 = the mean), the whole grid's thread-instructions the same (1.296 G against 1.300 G).
//! Device measurements: the lead's record in docs/perf/attention-h200.md.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::attention_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    #[tile_kernel(
        solves = attention,
        target = sm_90a,
        threads = 128 * (NWG + 1),
        grid = (SMS, 1, 1),
        // hd 128 with and without the mask; hd 64 causal only (unmasked, the one-CTA-per-tile
        // three-warpgroup tile measured faster; causal, the pairs' balance is predicted to win
        // at short sequences: see the module docs).
        configs(
            product(
                types(default = (T = bf16), f16 = (T = f16)),
                mask(default = (CAUSAL = 0), causal = (CAUSAL = 1)),
                tile(d128_sms = (D = 128, BN = 128, NWG = 2, STAGES = 2, QS = 2)),
            ),
            product(
                types(default = (T = bf16), f16 = (T = f16)),
                mask(causal = (CAUSAL = 1)),
                tile(d64_sms = (D = 64, BN = 128, NWG = 2, STAGES = 2, QS = 2)),
            ),
        ),
    )]
    pub fn attention_sm90_persistent(
        #[shape(B, S, HQ)] q: Tensor<T>,
        #[shape(B, SK, HK)] k: Tensor<T>,
        #[shape(B, HK, SK)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(B, S, HQ)] o: Tensor<T>,
        #[shape(BH, S, 1)] lse: Tensor<f32>,
        scale_log2: f32,
    ) {
        // QS stages of Q, NWG warpgroups' 64-row tiles each (stage `sq`, warpgroup `wg`: `sq·NWG + wg`).
        let q_s = smem::<T>([QS * NWG, D / 64, 64, 64], swizzle = B128);
        let k_s = smem::<T>([STAGES, D / 64, BN, 64], swizzle = B128);
        let v_s = smem::<T>([STAGES, D, BN], swizzle = B128, major = mn);
        let q_pipe = pipeline::<QS>(consumers = NWG);
        let k_pipe = pipeline::<STAGES>(consumers = NWG);
        let v_pipe = pipeline::<STAGES>(consumers = NWG);
        let s = regs::<f32>([64, BN]);
        let acc = regs::<f32>([64, D]);
        let pb = regs::<T>([64, BN]);
        let m_i = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let l_i = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let corr = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let heads = HQ / D;
        let m_tiles = cdiv(S, 64 * NWG);
        let per_head = items_per_head(m_tiles);
        let n_items = per_head * heads * B;
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(24);
            #[scope(warp = 0, elect)]
            {
                // K/V blocks and Q tiles loaded so far: the rings' counters run on across tiles.
                let mut it = 0;
                let mut j = 0;
                for t in (cta.x..n_items).step_by(ncta.x) {
                    let (first, span, h, b) = walk_item(t, m_tiles);
                    let hk = h / (HQ / HK);
                    for u in 0..min(span, 1) + 1 {
                        let mb = first - u * span;
                        let (n_blocks, _) = key_blocks(mb);
                        let sq = q_pipe.producer_acquire(j);
                        for w in 0..NWG {
                            for c in 0..D / 64 {
                                tma::load(
                                    q_s[sq * NWG + w][c],
                                    q.tile(b, mb * NWG + w, h * (D / 64) + c),
                                    q_pipe.full(sq),
                                );
                            }
                        }
                        load_kv(k_pipe, v_pipe, k_s, v_s, k, v, b, hk, it, D / 64, n_blocks);
                        it = it + n_blocks;
                        j = j + 1;
                    }
                }
            }
        }
        #[scope(warpgroups = 1..NWG + 1)]
        {
            setmaxnreg::inc(240);
            let wg = tid / 128 - 1;
            let leader = tid % 128 == 0;
            // The producer's walk; `it` counts K/V blocks, `j` tiles.
            let mut it = 0;
            let mut j = 0;
            for t in (cta.x..n_items).step_by(ncta.x) {
                let (first, span, h, b) = walk_item(t, m_tiles);
                for u in 0..min(span, 1) + 1 {
                    let mb = first - u * span;
                    let (n_blocks, n_full) = key_blocks(mb);
                    let row0 = (mb * NWG + wg) * 64;
                    let sq = q_pipe.consumer_wait(j);
                    let qw = sq * NWG + wg;
                    softmax_init(s, acc, m_i, l_i, corr);
                    if n_blocks > 0 {
                        // Block 0: S, its softmax, P.
                        let sk = k_pipe.consumer_wait(it);
                        wgmma::fence();
                        for c in 0..D / 64 {
                            wgmma::mma(s, q_s[qw][c], k_s[sk][c], accumulate = c > 0);
                        }
                        wgmma::commit();
                        wgmma::wait(0);
                        if leader {
                            k_pipe.consumer_release(sk);
                        }
                        mask_block(s, 0, n_full, row0);
                        softmax_first(s, pb, m_i, l_i, scale_log2);
                        // Block n: S_n = Q·K_nᵀ and O += P_{n−1}·V_{n−1} in flight together; the softmax
                        // of S_n runs while the second product does.
                        for n in 1..n_blocks {
                            let sk = k_pipe.consumer_wait(it + n);
                            let sv = v_pipe.consumer_wait(it + n - 1);
                            wgmma::fence();
                            for c in 0..D / 64 {
                                wgmma::mma(s, q_s[qw][c], k_s[sk][c], accumulate = c > 0);
                            }
                            wgmma::commit();
                            wgmma::mma(acc, pb, v_s[sv], accumulate = true);
                            wgmma::commit();
                            wgmma::wait(1);
                            if leader {
                                k_pipe.consumer_release(sk);
                            }
                            mask_block(s, n, n_full, row0);
                            softmax_next(s, m_i, l_i, corr, scale_log2);
                            pv_retire(acc, pb, s, corr, v_pipe, sv, leader);
                        }
                        pv_last(acc, pb, v_pipe, v_s, it + n_blocks, leader);
                    }
                    acc = acc * select(l_i == 0.0, 0.0, rcp(l_i));
                    store_lse(lse, m_i, l_i, scale_log2, b * heads + h, mb * NWG + wg);
                    // Q is no longer read: its stage holds O for the TMA store.
                    copy(q_s[qw], acc);
                    fence::proxy_async();
                    named_barrier(wg + 1, 128);
                    #[scope(leader)]
                    {
                        for c in 0..D / 64 {
                            tma::store(o.tile(b, mb * NWG + wg, h * (D / 64) + c), q_s[qw][c]);
                        }
                        tma::commit_group();
                        // The stage goes back to the producer once the store has read it.
                        tma::wait_group_read(0);
                        q_pipe.consumer_release(sq);
                    }
                    it = it + n_blocks;
                    j = j + 1;
                }
            }
            // Every store has written O before the CTA exits.
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}
