//! Attention decode on Hopper (sm_90a): split-KV (flash-decoding) over a few query positions
//! per sequence, and the combine step that reduces the splits, written in tirx.
//!
//! Decode asks for O of SQ = 1…16 new queries per sequence against a long cache of SK keys
//! (1k…128k), at a batch too small to fill the GPU with one CTA per (query tile, head):
//! `attention_sm90` would run B·HQ CTAs, each reading the whole cache alone. Here the key
//! range is cut into NS *chunks* of `chunk_blocks` key blocks each (the last one shorter), one
//! CTA per (chunk, query head, batch) — the grid `(NS, HQ, B)` — so B·HQ·NS CTAs share the
//! cache's read (Dao et al., *Flash-Decoding for long-context inference*, 2023; FA2/FA3's
//! `num_splits`). Each CTA is `attention_sm90`'s algorithm (its module docs: the TMA producer
//! warpgroup, K and V rings, S = Q·Kᵀ by wgmma, the online softmax in registers, O += P·V in
//! wgmma's RS form) over its chunk's key blocks, with one consumer warpgroup of 64 query rows:
//! query positions `0…SQ` of the sequence (rows past SQ read zeros, by the TMA box clipped at
//! the sequence's end, and are never stored). Causal masking is bottom-right aligned (query s
//! sees keys j ≤ SK − SQ + s), judged on the absolute key index, so a chunk's masks do not
//! depend on the split.
//!
//! **What a split writes.** With NS = 1 the CTA writes the answer: O in the element type `T`
//! (`[B, SQ, HQ·D]`, torch's `[B, SQ, H, D]`) and the LSE (`[B·HQ, SQ, 1]`, `attention_sm90`'s
//! layout). With NS > 1 (config `split`, `TO = f32`) it writes its chunk's *normalised* partial
//! O — softmax over the chunk's keys only, times V — in f32 to the workspace, a `[SQ, D]`
//! block per (split, batch, head) (`[NS·B·HQ, SQ, D]`, block `(c·B + b)·HQ + h`), and the
//! chunk's LSE to `[NS·B·HQ, SQ, 1]`; a row that sees no key of its chunk (causal, an early row
//! against the last chunk) writes O = 0 and LSE = −∞. Normalised partials keep every value a
//! convex combination of V's rows (no overflow, whatever the split) and make the combine a
//! weighted mean.
//!
//! **GQA packing** (`attention_sm90_decode_gqa`): the G = HQ/HK query heads that share a K/V
//! head fill one tile of R rows, SQB = R/G each, so one CTA per (chunk, K/V head, batch) reads
//! each K/V block once for the whole group (FlashInfer's and FA3's `pack_gqa`). R = 64 (one
//! consumer warpgroup, 256 threads): G = 2 with SQB = 32 (up to 16 positions), G = 4 with 16,
//! G = 8 with 8. R = 128 (configs `g8w2`, `g16w2`: NWG = 2 consumer warpgroups of 64 rows
//! each sharing the K/V rings, `pipeline(consumers = 2)`, 384 threads, the producer's
//! registers given to them by `setmaxnreg` as in `attention_sm90`): G = 8 with SQB = 16 (the
//! speculative-decoding SQ 9…16 of Llama-3-70B's 64/8 heads) and G = 16 with SQB = 8. A head
//! keeps at least 8 rows (a TMA box of a 128B-swizzle atom), which is why G = 16 needs R = 128
//! and why nothing packs G = 16 with SQ > 8 (unpacked, it reads each K/V head G times). Row
//! g·SQB + s of the tile is position s of query head hk·G + g: the producer loads G boxes of
//! `[SQB, 64]` per 64 columns, each head's positions clipped at SQ, into a view of the Q tile
//! (`smem(…, alias = q_s)`, `docs/language.md` §5: the MMA reads the tile, TMA writes the
//! heads' rows). `q_s` is `[chunk, warpgroup, 64, 64]`, so a chunk's R rows are contiguous for
//! the heads' boxes and warpgroup w's MMAs read its 64 (heads w·G/NWG…); the causal mask takes
//! the position as the row index mod SQB (64 is a multiple of SQB, so a warpgroup's local row
//! gives it). It always writes partials (any NS, 1 included), an `[R, D]` block per
//! (split, batch, K/V head) of the workspace (`[NS·B·HK, R, D]`, rows as the tile's,
//! warpgroup w's at w·64; the LSE `[NS·B·HK, R, 1]`), and the combine writes O: a head's rows
//! of a packed tile are not a tile of O's `[B, SQ, HQ·D]`, and the combine's pass over them is
//! small beside the cache's.
//!
//! **One consumer loop** (`consume_split`): both kernels' consumer warpgroups run the same
//! tile function on their 64 rows — `attention_sm90`'s loop over the split's key blocks, O
//! left normalised in registers — differing in which tile of `q_s` they read and the mask
//! (`mask_block` on one head's positions, `mask_packed` on a packed tile); each kernel then
//! stores its own way. Its softmax steps and last P·V are `attention_pieces`' (`softmax_first`,
//! `softmax_next`, `pv_retire`, `pv_last`), as `attention_sm90`'s and the varlen kernels' are;
//! both producers load K/V by `load_split_kv`.
//!
//! **The combine** (`attention_decode_combine`): one CTA per (query head, batch), 16 rows (the
//! query positions; rows past SQ are not stored) × D columns in a `blocked` register tile,
//! reading head h's partials at block `(c·B + b)·(HQ/group) + h/group`, rows
//! `(h % group)·pitch…` of the block's RP (unpacked: group 1, RP = SQ; packed: group G, pitch
//! SQB, RP = R, 64 or 128). It walks the NS splits
//! in order with a running max of their LSEs: `m' = max(m, lse_c)`, `w = e^(lse_c − m')`,
//! `O ← O·e^(m − m') + w·O_c`, `l ← l·e^(m − m') + w`; at the end O/l in `T` and LSE = m + ln l
//! (−∞, O = 0 where every split saw nothing). The order is fixed, so the result is
//! deterministic: the same bits for the same inputs, however the splits' CTAs were scheduled.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::attention_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (NL / (B * (HQ / D)), HQ / D, B),
        // One consumer warpgroup leaves shared memory for deeper K/V rings than
        // `attention_sm90`'s two: decode streams the cache and computes little on it. No
        // `setmaxnreg`: two warpgroups of 256 threads may each hold up to 255 registers.
        configs(product(
            types(default = (T = bf16), f16 = (T = f16)),
            mask(default = (CAUSAL = 0), causal = (CAUSAL = 1)),
            out(default = (TO = T, SPLIT = 0), split = (TO = f32, SPLIT = 1)),
            tile(
                d64 = (D = 64, BN = 128, STAGES = 4),
                d128 = (D = 128, BN = 128, STAGES = 3),
                d256 = (D = 256, BN = 80, STAGES = 2),
            ),
        )),
    )]
    pub fn attention_sm90_decode(
        #[shape(B, S, HQ)] q: Tensor<T>,
        #[shape(B, SK, HK)] k: Tensor<T>,
        #[shape(B, HK, SK)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(NP, S, OW)] o: Tensor<TO>,
        #[shape(NL, S, 1)] lse: Tensor<f32>,
        scale_log2: f32,
        chunk_blocks: u32,
    ) {
        static_assert(S <= 64, "the query positions fit one 64-row tile");
        static_assert(
            NL % (B * (HQ / D)) == 0,
            "lse has a row per split, batch and head",
        );
        // `[chunk, tile, row, column]`, the tile index 0: `consume_split`'s layout (the packed
        // kernel's warpgroups own a tile each).
        let q_s = smem::<T>([D / 64, 1, 64, 64], swizzle = B128);
        let k_s = smem::<T>([STAGES, D / 64, BN, 64], swizzle = B128);
        let v_s = smem::<T>([STAGES, D, BN], swizzle = B128, major = mn);
        let q_bar = mbarrier();
        let k_pipe = pipeline::<STAGES>(consumers = 1);
        let v_pipe = pipeline::<STAGES>(consumers = 1);
        let s = regs::<f32>([64, BN]);
        let acc = regs::<f32>([64, D]);
        let pb = regs::<T>([64, BN]);
        let m_i = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let l_i = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        let corr = regs::<f32>([64, 1], layout = stat(s, axis = 1));
        // The combine may be scheduled once every CTA has started: it waits for this grid
        // (`grid::dependency_wait()`) before it reads the partials.
        grid::launch_dependents();
        let split = cta.x;
        let h = cta.y;
        let b = cta.z;
        let hk = h / (HQ / HK);
        // This split's key blocks n0…n0 + n_blocks (none when the split lies past the keys),
        // and how many blocks from the start every query row sees whole (no mask): causal
        // rows see keys j ≤ s + SK − S.
        let n0 = split * chunk_blocks;
        let n_end = min(cdiv(SK, BN), n0 + chunk_blocks);
        let n_blocks = max(n_end, n0) - n0;
        let mut n_full = SK / BN;
        if CAUSAL == 1 {
            n_full = min(n_full, (max(SK + 1, S) - S) / BN);
        }
        #[scope(warpgroup = 0)]
        {
            #[scope(warp = 0, elect)]
            {
                for c in 0..D / 64 {
                    tma::load(q_s[c][0], q.tile(b, 0, h * (D / 64) + c), q_bar);
                }
                load_split_kv(k_pipe, v_pipe, k_s, v_s, k, v, b, hk, n0, n_blocks);
            }
        }
        #[scope(warpgroup = 1)]
        {
            consume_split(
                q_bar, k_pipe, v_pipe, q_s, k_s, v_s, s, acc, pb, m_i, l_i, corr, scale_log2, 0, 0,
                n0, n_blocks, n_full,
            );
            // Normalised over the split's keys (O = 0, LSE = −∞ for a row that saw none);
            // rows past S are clipped at the tensor's extent, never stored. The answer goes
            // to head h of `[B, S, HQ·D]`, a split's partial to its own `[S, D]` block.
            let blk = (split * B + b) * (HQ / D) + h;
            store_lse(lse, m_i, l_i, scale_log2, blk, 0);
            if SPLIT == 1 {
                copy(o.tile(blk, 0, 0), acc);
            } else {
                copy(o.tile(b, 0, h), acc);
            }
        }
    }

    #[tile_kernel(
        target = sm_90a,
        threads = 128 * (NWG + 1),
        grid = (NL / (B * (HK / D)), HK / D, B),
        // G query heads share a K/V head: their rows packed into one tile of 64·NWG rows (a
        // consumer warpgroup per 64), each head SQB = 64·NWG / G rows (its query positions,
        // S ≤ SQB; the combine takes S ≤ 16). One warpgroup for G ≤ 8 with S ≤ 64 / G; two
        // (`w2`) for G = 8 with S ≤ 16 and G = 16 with S ≤ 8, where a 64-row tile would give a
        // head fewer rows than its positions or than a TMA box of 8.
        configs(product(
            types(default = (T = bf16), f16 = (T = f16)),
            mask(default = (CAUSAL = 0), causal = (CAUSAL = 1)),
            tile(
                d64 = (D = 64, BN = 128, STAGES = 4),
                d128 = (D = 128, BN = 128, STAGES = 3),
                d256 = (D = 256, BN = 80, STAGES = 2),
            ),
            group(
                g2 = (G = 2, SQB = 32, NWG = 1),
                g4 = (G = 4, SQB = 16, NWG = 1),
                g8 = (G = 8, SQB = 8, NWG = 1),
                g8w2 = (G = 8, SQB = 16, NWG = 2),
                g16w2 = (G = 16, SQB = 8, NWG = 2),
            ),
        )),
    )]
    pub fn attention_sm90_decode_gqa(
        #[shape(B, S, HQ)] q: Tensor<T>,
        #[shape(B, SK, HK)] k: Tensor<T>,
        #[shape(B, HK, SK)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(NL, 64 * NWG, D)] o: Tensor<f32>,
        #[shape(NL, 64 * NWG, 1)] lse: Tensor<f32>,
        scale_log2: f32,
        chunk_blocks: u32,
    ) {
        static_assert(
            S <= SQB,
            "the query positions fit a head's rows of the packed tile",
        );
        static_assert(HQ == HK * G, "G query heads share each K/V head");
        static_assert(
            NL % (B * (HK / D)) == 0,
            "o has a block per split, batch and K/V head",
        );
        // The tile as the MMAs read it (`[chunk, warpgroup, row, column]`: warpgroup w's 64
        // rows of each 64-column chunk), and as G boxes of SQB rows (one per query head) the
        // TMA loads write: a view of the same bytes, a chunk's NWG·64 rows being contiguous.
        let q_s = smem::<T>([D / 64, NWG, 64, 64], swizzle = B128);
        let q_heads = smem::<T>([D / 64, G, SQB, 64], swizzle = B128, alias = q_s);
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
        // The combine may be scheduled once every CTA has started: it waits for this grid
        // (`grid::dependency_wait()`) before it reads the partials.
        grid::launch_dependents();
        let split = cta.x;
        let hk = cta.y;
        let b = cta.z;
        let n0 = split * chunk_blocks;
        let n_end = min(cdiv(SK, BN), n0 + chunk_blocks);
        let n_blocks = max(n_end, n0) - n0;
        let mut n_full = SK / BN;
        if CAUSAL == 1 {
            n_full = min(n_full, (max(SK + 1, S) - S) / BN);
        }
        #[scope(warpgroup = 0)]
        {
            // Two consumer warpgroups at 384 threads: the producer gives its registers up
            // (`attention_sm90`'s split; one consumer at 256 threads has 255 without it).
            if NWG == 2 {
                setmaxnreg::dec(24);
            }
            #[scope(warp = 0, elect)]
            {
                // Query head hk·G + g's positions 0…SQB (zeros past S: the box clips at the
                // sequence's end) into rows g·SQB… of the tile.
                for c in 0..D / 64 {
                    for g in 0..G {
                        tma::load(
                            q_heads[c][g],
                            q.tile(b, 0, (hk * G + g) * (D / 64) + c),
                            q_bar,
                        );
                    }
                }
                load_split_kv(k_pipe, v_pipe, k_s, v_s, k, v, b, hk, n0, n_blocks);
            }
        }
        #[scope(warpgroups = 1..NWG + 1)]
        {
            if NWG == 2 {
                setmaxnreg::inc(240);
            }
            let wg = tid / 128 - 1;
            consume_split(
                q_bar, k_pipe, v_pipe, q_s, k_s, v_s, s, acc, pb, m_i, l_i, corr, scale_log2, wg,
                SQB, n0, n_blocks, n_full,
            );
            // The split's partial, normalised, as the tile holds it: block (split, b, hk),
            // row g·SQB + s (rows past S written too: the workspace's, never read into O);
            // warpgroup wg's are rows wg·64….
            let blk = (split * B + b) * (HK / D) + hk;
            store_lse(lse, m_i, l_i, scale_log2, blk, wg);
            copy(o.tile(blk, wg, 0), acc);
        }
    }

    /// The split's K/V rings (the load warp's elected thread): key blocks `n0…n0 + n_blocks` of
    /// batch `b`, K/V head `hk`, block `n0 + n` into the stages of pipeline iteration `n` (K in
    /// `D / 64` boxes of 64 columns, V one MN-major box).
    #[tile_fn]
    fn load_split_kv(
        k_pipe: Pipe,
        v_pipe: Pipe,
        k_s: Smem,
        v_s: Smem,
        k: Global,
        v: Global,
        b: u32,
        hk: u32,
        n0: u32,
        n_blocks: u32,
    ) {
        for n in 0..n_blocks {
            let ks = k_pipe.producer_acquire(n);
            for c in 0..D / 64 {
                tma::load(
                    k_s[ks][c],
                    k.tile(b, n0 + n, hk * (D / 64) + c),
                    k_pipe.full(ks),
                );
            }
            let vs = v_pipe.producer_acquire(n);
            tma::load(v_s[vs], v.tile(b, hk, n0 + n), v_pipe.full(vs));
        }
    }

    /// A consumer warpgroup of the split decode kernels: `attention_sm90`'s loop (block n0's
    /// S and softmax, then S_n = Q·K_nᵀ and O += P_{n−1}·V_{n−1} in flight together, the last
    /// P·V) over key blocks `n0…n0 + n_blocks` (those before `n_full` unmasked) on its 64 query
    /// rows, tile `wg` of `q_s` (`[chunk, tile, 64, 64]`). It leaves O normalised over these
    /// keys in `acc` (0 for a row that saw none) and the rows' running max and sum in `m_i`
    /// and `l_i`. `pitch` is the rows of one query head in a packed tile (the row mod `pitch`
    /// is its query position), 0 for a tile of one head's positions.
    #[tile_fn]
    fn consume_split(
        q_bar: Bar,
        k_pipe: Pipe,
        v_pipe: Pipe,
        q_s: Smem,
        k_s: Smem,
        v_s: Smem,
        s: Regs,
        acc: Regs,
        pb: Regs,
        m_i: Regs,
        l_i: Regs,
        corr: Regs,
        scale_log2: f32,
        wg: u32,
        pitch: u32,
        n0: u32,
        n_blocks: u32,
        n_full: u32,
    ) {
        let leader = tid % 128 == 0;
        q_bar.wait(0);
        softmax_init(s, acc, m_i, l_i, corr);
        if n_blocks > 0 {
            // Block n0: S, its softmax, P.
            let ks = k_pipe.consumer_wait(0);
            wgmma::fence();
            for c in 0..D / 64 {
                wgmma::mma(s, q_s[c][wg], k_s[ks][c], accumulate = c > 0);
            }
            wgmma::commit();
            wgmma::wait(0);
            if leader {
                k_pipe.consumer_release(ks);
            }
            mask_split(s, n0, n_full, pitch);
            softmax_first(s, pb, m_i, l_i, scale_log2);
            // Block n: S_n = Q·K_nᵀ and O += P_{n−1}·V_{n−1} in flight together.
            for n in 1..n_blocks {
                let ks = k_pipe.consumer_wait(n);
                let vs = v_pipe.consumer_wait(n - 1);
                wgmma::fence();
                for c in 0..D / 64 {
                    wgmma::mma(s, q_s[c][wg], k_s[ks][c], accumulate = c > 0);
                }
                wgmma::commit();
                wgmma::mma(acc, pb, v_s[vs], accumulate = true);
                wgmma::commit();
                wgmma::wait(1);
                if leader {
                    k_pipe.consumer_release(ks);
                }
                mask_split(s, n0 + n, n_full, pitch);
                softmax_next(s, m_i, l_i, corr, scale_log2);
                pv_retire(acc, pb, s, corr, v_pipe, vs, leader);
            }
            pv_last(acc, pb, v_pipe, v_s, n_blocks, leader);
        }
        acc = acc * select(l_i == 0.0, 0.0, rcp(l_i));
    }

    /// Key block `n`'s mask on a consumer's scores `s`: `mask_block`'s on one head's
    /// positions (`pitch` 0: row r is position r), else `mask_packed`'s.
    #[tile_fn]
    fn mask_split(s: Regs, n: u32, n_full: u32, pitch: u32) {
        if pitch == 0 {
            mask_block(s, n, n_full, 0);
        } else {
            mask_packed(s, n, n_full, pitch);
        }
    }

    /// Key block `n`'s mask on the packed scores `s` (row g·pitch + s of a warpgroup's 64 is
    /// query position s of a head: 64 is a multiple of the pitch): nothing for the blocks
    /// every row sees whole (`n < n_full`); else keys past SK, or with CAUSAL = 1 keys after
    /// the position's last (bottom-right aligned: query s sees keys j ≤ s + SK − S), become −∞.
    #[tile_fn]
    fn mask_packed(s: Regs, n: u32, n_full: u32, pitch: u32) {
        if n >= n_full {
            let key = col_index(s) + n * BN;
            if CAUSAL == 1 {
                s = select(key + S <= row_index(s) % pitch + SK, s, f32::NEG_INFINITY);
            } else {
                s = select(key < SK, s, f32::NEG_INFINITY);
            }
        }
    }

    #[tile_kernel(
        target = sm_90a,
        threads = 128,
        grid = (HQ / D, B),
        configs(product(
            types(default = (T = bf16), f16 = (T = f16)),
            tile(d64 = (D = 64), d128 = (D = 128), d256 = (D = 256)),
        )),
    )]
    pub fn attention_decode_combine(
        #[shape(NL, RP, D)] o_part: Tensor<f32>,
        #[shape(NL, RP, 1)] lse_part: Tensor<f32>,
        #[shape(B, S, HQ)] o: Tensor<T>,
        #[shape(BH, S, 1)] lse: Tensor<f32>,
        group: u32,
        pitch: u32,
    ) {
        static_assert(S <= 16, "the query positions fit one 16-row tile");
        static_assert(BH == B * (HQ / D), "lse has a row per batch and head");
        let acc = regs::<f32>([16, D], layout = blocked(vec = 4));
        let part = regs::<f32>([16, D], layout = blocked(vec = 4));
        let m = regs::<f32>([16, 1], layout = stat(acc, axis = 1));
        let l = regs::<f32>([16, 1], layout = stat(acc, axis = 1));
        let lc = regs::<f32>([16, 1], layout = stat(acc, axis = 1));
        let h = cta.x;
        let b = cta.y;
        // Launched as a programmatic dependent of the split kernel: wait for it to complete
        // before reading its partials.
        grid::dependency_wait();
        // Head h's partials: block (c, b, h / group) of each split, rows (h % group)·pitch…
        let heads = HQ / D;
        let blocks = heads / group;
        let row0 = h % group * pitch;
        acc = 0.0;
        m = f32::NEG_INFINITY;
        l = 0.0;
        // Splits in order (deterministic): a running max of their LSEs, each split's O
        // weighted by e^(lse_c − max), natural logs throughout (× log2 e into exp2).
        for c in 0..NL / (B * blocks) {
            let blk = (c * B + b) * blocks + h / group;
            // Only the head's S positions: the tile's other rows read 0 and cost no traffic.
            copy(lc, lse_part.at(blk, row0, 0).within(NL, row0 + S, 1));
            copy(part, o_part.at(blk, row0, 0).within(NL, row0 + S, D));
            let m_new = max(m, lc);
            let m_use = select(m_new == f32::NEG_INFINITY, 0.0, m_new);
            let corr = exp2_approx((m - m_use) * 1.442695);
            let w = exp2_approx((lc - m_use) * 1.442695);
            acc = acc * corr + part * w;
            l = l * corr + w;
            m = m_new;
        }
        copy(o.tile(b, 0, h), acc * select(l == 0.0, 0.0, rcp(l)));
        copy(
            lse.tile(b * heads + h, 0, 0),
            select(l == 0.0, f32::NEG_INFINITY, m + log2_approx(l) * 0.6931472),
        );
    }
}
