//! FlashAttention forward on Hopper (sm_90a) over a paged K/V cache: `attention_sm90_varlen`'s
//! algorithm and query layout (its module docs: packed queries, the host's tile list, causal
//! bottom-right per sequence, rows past a sequence never stored), with K and V read through a
//! block table of fixed-size pages — the vLLM / FlashInfer layout, FA3's `page_table` — for
//! prefill (queries after a cached prefix) and decode (a few queries per sequence) alike.
//!
//! Q is `[TQ, HQ·D]` packed by `cu_q` (`[B + 1]` i32, FA's `cu_seqlens_q`), O as Q, the LSE
//! `[HQ/D, TQ, 1]`. K and V are caches of `NP` pages of `PAGE` tokens each, vLLM's
//! `[num_blocks, block_size, num_kv_heads, head_dim]` with the heads merged: `[NP, PAGE, HK·D]`,
//! which the kernel reads as the one matrix `[NP·PAGE, HK·D]` (same memory; the host passes it
//! so). Sequence `b` has `seqused_k[b]` keys (`[B]` i32, FA's name): its key `j` is row
//! `j % PAGE` of page `block_table[b][j / PAGE]` (`[B, MP]` i32), i.e. row
//! `block_table[b][j / PAGE]·PAGE + j % PAGE` of the matrix. Pages may lie in any order and the
//! last one of a sequence may be partly filled; table entries past a sequence's pages are
//! never read.
//!
//! Why this layout: the key block is one TMA box of BN rows × 64 columns per 64-column chunk
//! (K) and one MN-major box of D × BN (V), exactly `attention_sm90_varlen`'s, at a row the
//! kernel computes from the table instead of from `cu_k` — or, for small pages, BN/PAGE such
//! boxes of PAGE rows each. Pages of 64, 128 and 256 tokens: `PAGE` is a multiple of BN, so
//! a key block never straddles two pages: block `n` starts at key `n·BN`, row `n·BN % PAGE`
//! of page `block_table[b][n·BN / PAGE]`, and its box lies inside that page (hence inside the
//! cache: the emulator's `tirx.check tma` reports a box whose start lies outside the tensor,
//! which is how an out-of-range page id read from `block_table` shows). Pages of 64 at head
//! dims 64 and 128 (`…_p64w`), 16 (vLLM's default) and 32 (`…_p16w` / `…_p32w`) are smaller
//! than the key block (pages of 64 first read key blocks of 64, wgmma N = 64 for S: 0.77–0.81 of
//! the fastest peer on the H100, 2026-12-06, against 0.91–0.93 for varlen's 128-key blocks): the page divides the key block (varlen's BN = 128, 64 for d256), and the
//! producer gathers block `n` from the table's slots `n·BN/PAGE + p`, `p < BN/PAGE`: one box
//! of PAGE rows per page and 64-column chunk into rows `p·PAGE…` of the K stage, one of
//! PAGE keys per page and 64-row chunk of D into keys `p·PAGE…` of that chunk of the
//! MN-major V stage, each through a shared view of the stage (`k_pages`, `v_pages`:
//! `smem(…, alias = k_s)`, `docs/language.md` §5), all on the stage's one barrier, whose
//! expect-tx the compiler derives as the sum of the boxes (a constant-trip loop of loads and
//! plain statements is one phase). The block's page ids are read from the table together, eight
//! independent loads issued back to back after the previous block's boxes, and serve both its K
//! and its V boxes (the producer's comments say how). A slot past the sequence's last used page (the last block
//! of a sequence whose length is not a multiple of BN) is never read from the table: its box
//! reloads the last page, whose keys there lie past `seqused_k[b]` and are masked like the
//! rest of a partly filled page; so every box starts inside the cache. The S tile is then
//! wgmma N = 128 (64) as in varlen, not 16 or 32. Verified in the emulator against the f64
//! reference (`tests/sim_attention.rs`: every head dim, both page sizes, masks and element
//! types; shuffled tables; keys none, fewer than a page or a block, whole pages but not whole
//! blocks, neither; decode and prefill; outputs poisoned, O and LSE checked) and by ptxas (0
//! spills, `tests/assemble.rs`); not yet timed on a GPU. The earlier tiles with BN = PAGE for
//! pages of 16 and 32 are dropped: the wide ones cover every head dim with varlen's S width.
//! The NHD layout keeps a token's heads together (what vLLM writes a token's K/V as);
//! FlashInfer's HND (`[NP, HK, PAGE, D]`) would read the same boxes from a 3-D view and is
//! not built. FA3 gathers small pages by rows with cp.async instead.
//!
//! The host checks the table and lengths before the launch (`attention::paged`): page ids of
//! every page a sequence uses in `0..NP`, `seqused_k[b] ≤ MP·PAGE`. A key block's columns past
//! `seqused_k[b]` (the rest of a partly filled page) are masked in S; their V rows still enter
//! P·V with P = 0, so they must be finite (stale keys or zeros, not NaN: 0·NaN is NaN).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::attention_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    #[tile_kernel(
        target = sm_90a,
        threads = 128 * (NWG + 1),
        grid = (NT, HQ / D, 1),
        configs(product(
            types(default = (T = bf16), f16 = (T = f16)),
            mask(default = (CAUSAL = 0), causal = (CAUSAL = 1)),
            // Head dim × page size. Pages of 128 and more (and of 64 for d256): the key block BN
            // divides the page (varlen's BN where it does: 128, or 64 for d256, whose varlen
            // BN 80 divides none). Pages of 16, 32 and 64, the `w` tiles: the page divides the
            // key block (varlen's 128, 64 for d256), BN/PAGE pages gathered per block.
            tile(
                d64_p64w = (D = 64, BN = 128, PAGE = 64, NWG = 2, STAGES = 2),
                d64_p128 = (D = 64, BN = 128, PAGE = 128, NWG = 2, STAGES = 2),
                d64_p256 = (D = 64, BN = 128, PAGE = 256, NWG = 2, STAGES = 2),
                d128_p64w = (D = 128, BN = 128, PAGE = 64, NWG = 2, STAGES = 2),
                d128_p128 = (D = 128, BN = 128, PAGE = 128, NWG = 2, STAGES = 2),
                d128_p256 = (D = 128, BN = 128, PAGE = 256, NWG = 2, STAGES = 2),
                d256_p64 = (D = 256, BN = 64, PAGE = 64, NWG = 2, STAGES = 2),
                d256_p128 = (D = 256, BN = 64, PAGE = 128, NWG = 2, STAGES = 2),
                d256_p256 = (D = 256, BN = 64, PAGE = 256, NWG = 2, STAGES = 2),
                d64_p16w = (D = 64, BN = 128, PAGE = 16, NWG = 2, STAGES = 2),
                d64_p32w = (D = 64, BN = 128, PAGE = 32, NWG = 2, STAGES = 2),
                d128_p16w = (D = 128, BN = 128, PAGE = 16, NWG = 2, STAGES = 2),
                d128_p32w = (D = 128, BN = 128, PAGE = 32, NWG = 2, STAGES = 2),
                d256_p16w = (D = 256, BN = 64, PAGE = 16, NWG = 2, STAGES = 2),
                d256_p32w = (D = 256, BN = 64, PAGE = 32, NWG = 2, STAGES = 2),
            ),
        )),
    )]
    pub fn attention_sm90_paged(
        #[shape(TQ, HQ)] q: Tensor<T>,
        #[shape(KR, HK)] k: Tensor<T>,
        #[shape(HK, KR)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(TQ, HQ)] o: Tensor<T>,
        #[shape(NH, TQ, 1)] lse: Tensor<f32>,
        #[shape(NB)] cu_q: Tensor<i32>,
        #[shape(NS)] seqused_k: Tensor<i32>,
        #[shape(NS, MP)] block_table: Tensor<i32>,
        #[shape(NT, 2)] tiles: Tensor<i32>,
        scale_log2: f32,
    ) {
        let q_s = smem::<T>([NWG, D / 64, 64, 64], swizzle = B128);
        let k_s = smem::<T>([STAGES, D / 64, BN, 64], swizzle = B128);
        let v_s = smem::<T>([STAGES, D, BN], swizzle = B128, major = mn);
        // The stages as the TMA loads of a wide key block (BN > PAGE) write them: BN/PAGE boxes
        // of one page each (`[.., box, rows, 64]` for K; for V, MN-major, `[.., chunk, box, 64,
        // keys]`: a chunk's keys are contiguous, page p's at key p·PAGE of it). Views of the
        // same bytes (no allocation); a key block within one page (BN ≤ PAGE) uses one box
        // of BN rows, the stage itself.
        let k_pages = smem::<T>(
            [STAGES, D / 64, BN / min(BN, PAGE), min(BN, PAGE), 64],
            swizzle = B128,
            alias = k_s,
        );
        let v_pages = smem::<T>(
            [STAGES, D / 64, BN / min(BN, PAGE), 64, min(BN, PAGE)],
            swizzle = B128,
            major = mn,
            alias = v_s,
        );
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
        // This CTA's tile: sequence `b`, query tile `mb` of it (the host's list, longest first,
        // every entry a tile with queries); the sequence's queries from the offsets, its key
        // count from `seqused_k` (all built and checked by the host).
        let b = gather(tiles, cta.x, 0);
        let mb = gather(tiles, cta.x, 1);
        let q0 = gather(cu_q, b);
        let q1 = gather(cu_q, b + 1);
        let sq = q1 - q0;
        let sk = gather(seqused_k, b);
        // Key blocks this tile reads (none past the sequence's queries), and how many of them
        // need no mask: causal rows see keys j ≤ i + sk − sq.
        let mut n_blocks = cdiv(sk, BN);
        let mut n_full = sk / BN;
        if CAUSAL == 1 {
            n_blocks = min(n_blocks, cdiv(max((mb + 1) * (64 * NWG) + sk, sq) - sq, BN));
            n_full = min(n_full, (max(mb * (64 * NWG) + sk + 1, sq) - sq) / BN);
        }
        if mb * (64 * NWG) >= sq {
            n_blocks = 0;
        }
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(24);
            #[scope(warp = 0, elect)]
            {
                load_varlen_q(q_bar, q_s, q, h, mb, q0, q1);
                if BN > PAGE {
                    // Key block n spans BN/PAGE pages: a box of PAGE rows from each, into rows
                    // p·PAGE… of the stage (K) or keys p·PAGE… of each chunk (V), all on the
                    // stage's barrier (their bytes are the stage's). The block's page ids are
                    // loaded together, before their boxes, into eight registers: `ik` holds
                    // slot `k % (BN/PAGE)` (an id repeated when a block has fewer than eight
                    // pages), page p's boxes read `i0`, and after each page the eight rotate by
                    // one, so that after the block's BN/PAGE pages they are back in order for
                    // V's boxes (the table is read once for both). The next block's ids are
                    // loaded after V's boxes, in flight while the producer waits for the next K
                    // stage: no dependent load stands before a page's boxes (it did, 16 of them
                    // a block at page 16: the consumers waited on K/V in 31 % of ncu's samples,
                    // H100). A slot past the sequence's last (`cdiv(sk, PAGE)`, in the last
                    // block only) is never read from the table: its box reloads the last page,
                    // whose keys all lie past `sk` there and are masked like the rest of a
                    // partly filled page. (`cdiv(BN, PAGE)` is BN/PAGE here, and 1, not an
                    // empty loop, in the configs that build this branch without taking it;
                    // `last` is slot 0 for a sequence with no key, whose ids are never used.)
                    let last = max(cdiv(sk, PAGE), 1) - 1;
                    let mut i0 = gather(block_table, b, min(0 % cdiv(BN, PAGE), last));
                    let mut i1 = gather(block_table, b, min(1 % cdiv(BN, PAGE), last));
                    let mut i2 = gather(block_table, b, min(2 % cdiv(BN, PAGE), last));
                    let mut i3 = gather(block_table, b, min(3 % cdiv(BN, PAGE), last));
                    let mut i4 = gather(block_table, b, min(4 % cdiv(BN, PAGE), last));
                    let mut i5 = gather(block_table, b, min(5 % cdiv(BN, PAGE), last));
                    let mut i6 = gather(block_table, b, min(6 % cdiv(BN, PAGE), last));
                    let mut i7 = gather(block_table, b, min(7 % cdiv(BN, PAGE), last));
                    for n in 0..n_blocks {
                        let ks = k_pipe.producer_acquire(n);
                        for p in 0..cdiv(BN, PAGE) {
                            for c in 0..D / 64 {
                                tma::load(
                                    k_pages[ks][c][p],
                                    k.at(i0 * PAGE, (hk * (D / 64) + c) * 64),
                                    k_pipe.full(ks),
                                );
                            }
                            let i = i0;
                            i0 = i1;
                            i1 = i2;
                            i2 = i3;
                            i3 = i4;
                            i4 = i5;
                            i5 = i6;
                            i6 = i7;
                            i7 = i;
                        }
                        let vs = v_pipe.producer_acquire(n);
                        for p in 0..cdiv(BN, PAGE) {
                            for c in 0..D / 64 {
                                tma::load(
                                    v_pages[vs][c][p],
                                    v.at(hk * D + c * 64, i0 * PAGE),
                                    v_pipe.full(vs),
                                );
                            }
                            let i = i0;
                            i0 = i1;
                            i1 = i2;
                            i2 = i3;
                            i3 = i4;
                            i4 = i5;
                            i5 = i6;
                            i6 = i7;
                            i7 = i;
                        }
                        let next = (n + 1) * cdiv(BN, PAGE);
                        let g0 = gather(block_table, b, min(next + 0 % cdiv(BN, PAGE), last));
                        let g1 = gather(block_table, b, min(next + 1 % cdiv(BN, PAGE), last));
                        let g2 = gather(block_table, b, min(next + 2 % cdiv(BN, PAGE), last));
                        let g3 = gather(block_table, b, min(next + 3 % cdiv(BN, PAGE), last));
                        let g4 = gather(block_table, b, min(next + 4 % cdiv(BN, PAGE), last));
                        let g5 = gather(block_table, b, min(next + 5 % cdiv(BN, PAGE), last));
                        let g6 = gather(block_table, b, min(next + 6 % cdiv(BN, PAGE), last));
                        let g7 = gather(block_table, b, min(next + 7 % cdiv(BN, PAGE), last));
                        i0 = g0;
                        i1 = g1;
                        i2 = g2;
                        i3 = g3;
                        i4 = g4;
                        i5 = g5;
                        i6 = g6;
                        i7 = g7;
                    }
                } else {
                    for n in 0..n_blocks {
                        // Key block n lies in one page (BN divides PAGE): the table's page for
                        // its first key, at that key's row within the page.
                        let page = gather(block_table, b, n * BN / PAGE);
                        let row = page * PAGE + n * BN % PAGE;
                        let ks = k_pipe.producer_acquire(n);
                        for c in 0..D / 64 {
                            tma::load(
                                k_s[ks][c],
                                k.at(row, (hk * (D / 64) + c) * 64),
                                k_pipe.full(ks),
                            );
                        }
                        let vs = v_pipe.producer_acquire(n);
                        tma::load(v_s[vs], v.at(hk * D, row), v_pipe.full(vs));
                    }
                }
            }
        }
        #[scope(warpgroups = 1..NWG + 1)]
        {
            consume_varlen(
                q_bar, k_pipe, v_pipe, q_s, k_s, v_s, s, acc, pb, m_i, l_i, corr, o, lse,
                scale_log2, h, mb, q0, q1, sq, sk, n_blocks, n_full,
            );
        }
    }
}
