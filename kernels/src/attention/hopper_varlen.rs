//! FlashAttention forward on Hopper (sm_90a) over a variable-length batch: `attention_sm90`'s
//! algorithm (its module docs: roles, online softmax, RS-form P·V, GQA) on sequences packed
//! one after another, as FA2/FA3's `flash_attn_varlen_func` takes them.
//!
//! Q is `[TQ, HQ·D]` (the B sequences' queries packed, `TQ` their total), K and V
//! `[TK, HK·D]`, O `[TQ, HQ·D]`, the LSE `[HQ/D, TQ, 1]` (one row of `TQ` per query head, FA3's
//! varlen LSE layout); `cu_q` and `cu_k` `[B + 1]` i32 are the cumulative offsets: sequence `b`
//! is rows `cu_q[b]…cu_q[b + 1]` of Q and `cu_k[b]…cu_k[b + 1]` of K/V. The host checks them
//! before the launch (`attention::varlen`). Each (query tile, query head) is a CTA, the grid
//! `NT` × heads: the host lists the batch's query tiles in `tiles` (`[NT, 2]` i32, a row
//! `(b, mb)` per tile: sequence `b`, its rows `mb·64·NWG…(mb + 1)·64·NWG`; `Offsets::tiles`),
//! every tile of every sequence once, those that read the most keys first (FA3's
//! longest-first order: the longest sequences, and with the causal mask a sequence's last
//! tiles, start first, so the short ones fill the tail). No CTA idles, however many sequences
//! the batch holds and however their lengths differ — a grid sized by the longest possible
//! sequence, `cdiv(TQ, 64·NWG)` × B, would launch B times too many, most with no row. A batch
//! with no query token has no tile and is not launched (a grid has no empty extent). The
//! tile's entry and its sequence's offsets are loaded into scalars
//! (`gather`), the tiles addressed at element offsets (`q.at(row, col)`: a sequence starts at any
//! row). A tile's rows past the sequence's end read the next sequence's queries (or zeros past
//! `TQ`) and are never stored (`.within(q_end, …)`); a key block's columns past the sequence's
//! keys are masked. Causal masking is bottom-right aligned per sequence (query i sees keys
//! j ≤ i + SK − SQ, FA2/FA3's convention); a row that sees no key gets O = 0 and LSE = −∞.
//!
//! O goes from the accumulator straight to global memory (bounds-checked stores), not through
//! a TMA store: a TMA box clips at the tensor's end, not at a sequence's, as in FA3, whose
//! epilogue leaves TMA out for varlen (`hopper/epilogue_fwd.hpp`, `Use_TMA_O`).

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
            tile(
                d64 = (D = 64, BN = 128, NWG = 2, STAGES = 2),
                d128 = (D = 128, BN = 128, NWG = 2, STAGES = 2),
                d256 = (D = 256, BN = 80, NWG = 2, STAGES = 2),
            ),
        )),
    )]
    pub fn attention_sm90_varlen(
        #[shape(TQ, HQ)] q: Tensor<T>,
        #[shape(TK, HK)] k: Tensor<T>,
        #[shape(HK, TK)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(TQ, HQ)] o: Tensor<T>,
        #[shape(NH, TQ, 1)] lse: Tensor<f32>,
        #[shape(NB)] cu_q: Tensor<i32>,
        #[shape(NB)] cu_k: Tensor<i32>,
        #[shape(NT, 2)] tiles: Tensor<i32>,
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
        // This CTA's tile: sequence `b`, query tile `mb` of it (the host's list, longest first,
        // every entry a tile with queries); the sequence's queries and keys from the offsets
        // (all built and checked by the host).
        let b = gather(tiles, cta.x, 0);
        let mb = gather(tiles, cta.x, 1);
        let q0 = gather(cu_q, b);
        let q1 = gather(cu_q, b + 1);
        let k0 = gather(cu_k, b);
        let k1 = gather(cu_k, b + 1);
        let sq = q1 - q0;
        let sk = k1 - k0;
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
                for n in 0..n_blocks {
                    let ks = k_pipe.producer_acquire(n);
                    for c in 0..D / 64 {
                        tma::load(
                            k_s[ks][c],
                            k.at(k0 + n * BN, (hk * (D / 64) + c) * 64),
                            k_pipe.full(ks),
                        );
                    }
                    let vs = v_pipe.producer_acquire(n);
                    tma::load(v_s[vs], v.at(hk * D, k0 + n * BN), v_pipe.full(vs));
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
