//! The attention kernels' shared pieces, a tile library: the load warp of the Hopper kernels
//! (`attention_sm90`, `attention_sm90_persistent`) and of the Blackwell one (`attention_sm100`),
//! and their key-block mask ([`mask_block`]) and LSE store ([`store_lse`]).
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
}
