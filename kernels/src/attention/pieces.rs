//! The attention kernels' shared pieces, a tile library: the load warp of the Hopper kernels
//! (`attention_sm90`, `attention_sm90_persistent`) and of the Blackwell one (`attention_sm100`),
//! their key-block mask ([`mask_block`]) and LSE store ([`store_lse`]), the steps of the
//! Hopper consumers' online softmax that `attention_sm90`, the split decode kernels and
//! [`consume_varlen`] take alike ([`softmax_init`], [`softmax_first`], [`softmax_next`],
//! [`pv_retire`], [`pv_last`]: what differs between them, the Q tile's layout, the mask and
//! the ping-pong turns, stays with the caller), and the Q loads and consumer warpgroups of
//! the variable-length kernels (`attention_sm90_varlen`, `attention_sm90_paged`:
//! [`load_varlen_q`], [`consume_varlen`]; they differ only in where their loads read K/V).
//! Each of them is the same TMA producer — Q's tiles once, then K and V key block after key
//! block into two stage rings (FA3, arXiv 2407.08608 §3.1; FA4, arXiv 2603.05451, and its
//! `flash_attn/cute/flash_fwd_sm100.py`, whose load warp does the same) — with what differs
//! passed in: how many Q tiles a CTA owns (Hopper: one of 64 rows per consumer warpgroup;
//! Blackwell: two of 128 rows), the Q/K head dim in 64-column chunks (V is one MN-major box of
//! its own head dim, whatever Q's: `attention_sm100`'s (192, 128) tile), and, for the
//! persistent kernel, the batch and where the rings' counters stand. A using file names it
//! with `#[tile_module(uses(super::pieces::attention_pieces))]`.
//!
//! Invariants the users keep: Q, K and V are the `[B, S, H·D]` views (V `#[major(mn)]`), `q_s`
//! is `[tiles, chunks, rows, 64]`, `k_s` `[STAGES, chunks, BN, 64]` and `v_s`
//! `[STAGES, D_V, BN]`, all with 128-byte swizzle; the caller is the load warp's elected thread.

use tirx::prelude::*;

#[tile_module(library)]
mod attention_pieces {
    use tirx::prelude::*;

    /// The load warp of one CTA's query rows: its `tiles` Q tiles (tile rows `mb·tiles + w`, query
    /// head `h`, `chunks` boxes of 64 columns each) on `q_bar`, then the K/V rings for key
    /// blocks `0..n_blocks` of K/V head `hk` ([`load_kv`]).
    #[tile_fn]
    fn load_q_kv(
        q_bar: Bar,
        k_pipe: Pipe,
        v_pipe: Pipe,
        q_s: Smem,
        k_s: Smem,
        v_s: Smem,
        q: Global,
        k: Global,
        v: Global,
        mb: u32,
        tiles: u32,
        h: u32,
        hk: u32,
        chunks: u32,
        n_blocks: u32,
    ) {
        for w in 0..tiles {
            for c in 0..chunks {
                tma::load(
                    q_s[w][c],
                    q.tile(cta.z, mb * tiles + w, h * chunks + c),
                    q_bar,
                );
            }
        }
        load_kv(
            k_pipe, v_pipe, k_s, v_s, k, v, cta.z, hk, 0, chunks, n_blocks,
        );
    }

    /// The key blocks query tile `mb` (`64·NWG` rows) of a Hopper kernel reads, and how many
    /// of them need no mask (every key of the block seen by every row of the tile): all of
    /// SK's, or with CAUSAL = 1 those up to the tile's last row's last key (bottom-right
    /// aligned: query i sees keys j ≤ i + SK − S; a tile whose rows see no key reads none).
    #[tile_fn]
    fn key_blocks(mb: u32) -> (u32, u32) {
        let mut n_blocks = cdiv(SK, BN);
        let mut n_full = SK / BN;
        if CAUSAL == 1 {
            n_blocks = min(n_blocks, cdiv(max((mb + 1) * (64 * NWG) + SK, S) - S, BN));
            n_full = min(n_full, (max(mb * (64 * NWG) + SK + 1, S) - S) / BN);
        }
        (n_blocks, n_full)
    }

    /// The persistent Hopper walk's work items per (head, batch) over `m_tiles` query tiles:
    /// one per tile, or with CAUSAL = 1 one per pair of tiles ([`walk_item`]).
    #[tile_fn]
    fn items_per_head(m_tiles: u32) -> u32 {
        let mut per_head = m_tiles;
        if CAUSAL == 1 {
            per_head = cdiv(m_tiles, 2);
        }
        per_head
    }

    /// Work item `t` of the persistent Hopper walk over `m_tiles` query tiles per (head,
    /// batch): `(first, span, h, b)`, its query tiles `first` and, when `span > 0`,
    /// `first − span`, of query head `h`, batch `b`. Without a mask an item is one tile,
    /// `m_tiles − 1 − p` for the item's place `p` in its head (the longest first, as
    /// `attention_sm90`'s grid), query tiles fastest (a wave of CTAs shares a head's K/V in
    /// L2). With CAUSAL = 1 tile `mb` reads about `mb + 1` key blocks, so an item is the pair
    /// `m_tiles − 1 − p` and `p` (`span = m_tiles − 1 − 2p`), whose blocks sum to about
    /// `m_tiles + 1` whatever `p`: the items cost the same and a static round-robin walk is
    /// balanced by construction. An odd `m_tiles`' middle tiles (half an item's work each) come
    /// after every pair, one item each: among their heads' pairs they would fall on the same
    /// CTAs every round wherever the items a head divide the SM count; last, they fill the
    /// walk's uneven end.
    #[tile_fn]
    fn walk_item(t: u32, m_tiles: u32) -> (u32, u32, u32, u32) {
        let mut first = m_tiles - 1 - t % m_tiles;
        let mut span = 0;
        let mut hb = t / m_tiles;
        if CAUSAL == 1 {
            let pairs = m_tiles / 2;
            let paired = pairs * (HQ / D) * B;
            if t < paired {
                first = m_tiles - 1 - t % pairs;
                span = first - t % pairs;
                hb = t / pairs;
            } else {
                first = m_tiles / 2;
                hb = t - paired;
            }
        }
        (first, span, hb % (HQ / D), hb / (HQ / D))
    }

    /// Key block `n`'s mask on the scores `s` of query rows `row0…` (one row per tile row):
    /// nothing for the blocks every row sees whole (`n < n_full`); else keys past SK, or with
    /// CAUSAL = 1 keys after the row's last (bottom-right aligned: query i sees keys
    /// j ≤ i + SK − S), become −∞.
    #[tile_fn]
    fn mask_block(s: Regs, n: u32, n_full: u32, row0: u32) {
        if n >= n_full {
            let key = col_index(s) + n * BN;
            if CAUSAL == 1 {
                s = select(key + S <= row_index(s) + row0 + SK, s, f32::NEG_INFINITY);
            } else {
                s = select(key < SK, s, f32::NEG_INFINITY);
            }
        }
    }

    /// Each row's log-sum-exp from its running max `m_i` and sum `l_i` (of 2^(s·scale_log2 −
    /// m·scale_log2)): LSE = ln Σ exp(scale·s) = (scale·log2(e)·max + log2 Σ 2^(…)) · ln 2, −∞
    /// for a row that sees no key; stored to row tile `tile` of `lse`'s head row `bh` (rows past
    /// S are not stored).
    #[tile_fn]
    fn store_lse(lse: Global, m_i: Regs, l_i: Regs, scale_log2: f32, bh: u32, tile: u32) {
        let lse_row = select(
            l_i == 0.0,
            f32::NEG_INFINITY,
            (m_i * scale_log2 + log2_approx(l_i)) * 0.6931472,
        );
        copy(lse.tile(bh, tile, 0), lse_row);
    }

    /// The K/V rings for key blocks `0..n_blocks` of batch `b`, K/V head `hk`: block `n`'s K
    /// (`chunks` boxes of 64 columns) into `k_pipe`'s stage for iteration `it + n`, its V (one
    /// MN-major box, V's own head dim) into `v_pipe`'s. The rings' counters start at `it` (a
    /// persistent kernel's run on across tiles).
    #[tile_fn]
    fn load_kv(
        k_pipe: Pipe,
        v_pipe: Pipe,
        k_s: Smem,
        v_s: Smem,
        k: Global,
        v: Global,
        b: u32,
        hk: u32,
        it: u32,
        chunks: u32,
        n_blocks: u32,
    ) {
        for n in 0..n_blocks {
            let sk = k_pipe.producer_acquire(it + n);
            for c in 0..chunks {
                tma::load(k_s[sk][c], k.tile(b, n, hk * chunks + c), k_pipe.full(sk));
            }
            let sv = v_pipe.producer_acquire(it + n);
            tma::load(v_s[sv], v.tile(b, hk, n), v_pipe.full(sv));
        }
    }

    /// A consumer's online-softmax state before its first key block: O and S zero (defined
    /// here, in the consumers' register budget: an MMA with `accumulate = false` still names
    /// its accumulator, which ptxas would otherwise keep live from the entry), the rows'
    /// running max −∞, their sum 0 and the correction 1.
    #[tile_fn]
    fn softmax_init(s: Regs, acc: Regs, m_i: Regs, l_i: Regs, corr: Regs) {
        acc = 0.0;
        s = 0.0;
        m_i = f32::NEG_INFINITY;
        l_i = 0.0;
        corr = 1.0;
    }

    /// The first key block's softmax on its (masked) scores `s`: the rows' max `m_i`,
    /// s ← 2^(s·scale_log2 − m·scale_log2) (a row that sees no key keeps m = −∞ and subtracts
    /// 0), their sum `l_i`, and P = `pb` in the element type `T` for the P·V product.
    #[tile_fn]
    fn softmax_first(s: Regs, pb: Regs, m_i: Regs, l_i: Regs, scale_log2: f32) {
        m_i = reduce_max(s, axis = 1);
        let m_use = select(m_i == f32::NEG_INFINITY, 0.0, m_i * scale_log2);
        s = exp2_approx(s * scale_log2 - m_use);
        l_i = reduce_sum(s, axis = 1);
        pb = cast::<T>(s);
    }

    /// A later key block's online-softmax update on its (masked) scores `s`: the new row max,
    /// s ← 2^(s·scale_log2 − m'·scale_log2), `corr` = 2^((m − m')·scale_log2) that rescales
    /// the running sum `l_i` here and O by the caller (when its P·V product allows), `m_i` ← m'.
    #[tile_fn]
    fn softmax_next(s: Regs, m_i: Regs, l_i: Regs, corr: Regs, scale_log2: f32) {
        let m_new = max(m_i, reduce_max(s, axis = 1));
        // A row with no key seen yet keeps a max of −∞: subtract 0 (exp2(−∞) = 0).
        let m_use = select(m_new == f32::NEG_INFINITY, 0.0, m_new * scale_log2);
        s = exp2_approx(s * scale_log2 - m_use);
        corr = exp2_approx(m_i * scale_log2 - m_use);
        l_i = l_i * corr + reduce_sum(s, axis = 1);
        m_i = m_new;
    }

    /// After [`softmax_next`], with O += P_{n−1}·V_{n−1} in flight: wait for it, release V's
    /// stage `vs` (the warpgroup's `leader`), rescale O by `corr` and take this block's P.
    #[tile_fn]
    fn pv_retire(acc: Regs, pb: Regs, s: Regs, corr: Regs, v_pipe: Pipe, vs: u32, leader: bool) {
        wgmma::wait(0);
        if leader {
            v_pipe.consumer_release(vs);
        }
        acc = acc * corr;
        pb = cast::<T>(s);
    }

    /// The last key block's O += P·V: V's stage of block `n_blocks − 1` (the pipeline's
    /// iteration), waited on, multiplied, retired, released (the warpgroup's `leader`).
    #[tile_fn]
    fn pv_last(acc: Regs, pb: Regs, v_pipe: Pipe, v_s: Smem, n_blocks: u32, leader: bool) {
        let vs = v_pipe.consumer_wait(n_blocks - 1);
        wgmma::fence();
        wgmma::mma(acc, pb, v_s[vs], accumulate = true);
        wgmma::commit();
        wgmma::wait(0);
        if leader {
            v_pipe.consumer_release(vs);
        }
    }

    /// The Q tiles of a variable-length query tile (the load warp's elected thread): warpgroup
    /// w's 64 rows from row `q0 + (mb·NWG + w)·64` of the packed Q, query head `h`, `D / 64`
    /// boxes into `q_s[w]`, on `q_bar`.
    #[tile_fn]
    fn load_varlen_q(q_bar: Bar, q_s: Smem, q: Global, h: u32, mb: u32, q0: u32, q1: u32) {
        for w in 0..NWG {
            // A warpgroup whose 64 rows all lie past the sequence's end stores nothing:
            // its box starts at the sequence's last row instead (never past the
            // tensor, where the emulator reports a loaded coordinate).
            let row = min(q0 + (mb * NWG + w) * 64, q1 - 1);
            for c in 0..D / 64 {
                tma::load(q_s[w][c], q.at(row, (h * (D / 64) + c) * 64), q_bar);
            }
        }
    }

    /// The consumer warpgroups of the variable-length kernels (`attention_sm90_varlen`,
    /// `attention_sm90_paged`): `attention_sm90`'s loop (block 0's S and softmax, then S_n and
    /// O += P_{n−1}·V_{n−1} in flight together, the last P·V) on a sequence of `sq` queries
    /// (rows `q0…q1` of the packed Q, O and LSE) over `sk` keys, query tile `mb`, query head
    /// `h`; `n_blocks` key blocks, the first `n_full` unmasked. Causal masking is bottom-right
    /// aligned per sequence; rows past `q1` are not stored. The caller is the consumer
    /// warpgroups' scope (`1..NWG + 1`).
    #[tile_fn]
    fn consume_varlen(
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
        o: Global,
        lse: Global,
        scale_log2: f32,
        h: u32,
        mb: u32,
        q0: u32,
        q1: u32,
        sq: u32,
        sk: u32,
        n_blocks: u32,
        n_full: u32,
    ) {
        setmaxnreg::inc(240);
        let wg = tid / 128 - 1;
        let leader = tid % 128 == 0;
        let row0 = (mb * NWG + wg) * 64;
        q_bar.wait(0);
        softmax_init(s, acc, m_i, l_i, corr);
        if n_blocks > 0 {
            // Block 0: S, its softmax, P.
            let ks = k_pipe.consumer_wait(0);
            wgmma::fence();
            for c in 0..D / 64 {
                wgmma::mma(s, q_s[wg][c], k_s[ks][c], accumulate = c > 0);
            }
            wgmma::commit();
            wgmma::wait(0);
            if leader {
                k_pipe.consumer_release(ks);
            }
            if n_full == 0 {
                s = select(col_index(s) < sk, s, f32::NEG_INFINITY);
                if CAUSAL == 1 {
                    s = select(
                        col_index(s) + sq <= row_index(s) + row0 + sk,
                        s,
                        f32::NEG_INFINITY,
                    );
                }
            }
            softmax_first(s, pb, m_i, l_i, scale_log2);
            // Block n: S_n = Q·K_nᵀ and O += P_{n−1}·V_{n−1} in flight together.
            for n in 1..n_blocks {
                let ks = k_pipe.consumer_wait(n);
                let vs = v_pipe.consumer_wait(n - 1);
                wgmma::fence();
                for c in 0..D / 64 {
                    wgmma::mma(s, q_s[wg][c], k_s[ks][c], accumulate = c > 0);
                }
                wgmma::commit();
                wgmma::mma(acc, pb, v_s[vs], accumulate = true);
                wgmma::commit();
                wgmma::wait(1);
                if leader {
                    k_pipe.consumer_release(ks);
                }
                if n >= n_full {
                    let key = col_index(s) + n * BN;
                    if CAUSAL == 1 {
                        s = select(key + sq <= row_index(s) + row0 + sk, s, f32::NEG_INFINITY);
                    } else {
                        s = select(key < sk, s, f32::NEG_INFINITY);
                    }
                }
                softmax_next(s, m_i, l_i, corr, scale_log2);
                pv_retire(acc, pb, s, corr, v_pipe, vs, leader);
            }
            pv_last(acc, pb, v_pipe, v_s, n_blocks, leader);
        }
        acc = acc * select(l_i == 0.0, 0.0, rcp(l_i));
        // Rows past the sequence's end (q1) are not stored: they are the next sequence's.
        let lse_row = select(
            l_i == 0.0,
            f32::NEG_INFINITY,
            (m_i * scale_log2 + log2_approx(l_i)) * 0.6931472,
        );
        copy(lse.at(h, q0 + row0, 0).within(NH, q1, 1), lse_row);
        copy(o.at(q0 + row0, h * D).within(q1, HQ), acc);
    }
}
