//! FlashAttention-4 forward on Blackwell (sm_100a), written in tirx.
//!
//! O = softmax(scale · Q·Kᵀ)·V per (batch, query head) and the log-sum-exp of each row, on the
//! same tensors as the Hopper kernel (`attention_sm90`, its module docs: Q, K, V, O the
//! `[B, S, H·D]` views of torch's `[B, S, H, D]`, V read MN-major, LSE `[B·HQ, S, 1]`, GQA head
//! `h` reading K/V head `h / (HQ / HK)`), with two head dims: `D_QK` for Q and K (the extent
//! S = Q·Kᵀ contracts over, in `D_QK / 64` MMAs of 64 columns) and `D_V` for V and O (the P·V
//! MMA's N, O's TMEM columns, the correction's chunks and the O store) — equal but in the
//! MLA-prefill tile `fa4_d192_128` (Q/K 192, V/O 128, DeepSeek-style shapes). V is
//! `[B, SK, HK·D_V]` and O `[B, S, HQ·D_V]`, checked at launch (`static_assert`s on the shape
//! symbols).
//!
//! Structure (FlashAttention-4, Zadouri et al., arXiv 2603.05451, and its
//! `flash_attn/cute/flash_fwd_sm100.py`): a CTA owns two Q tiles of 128 rows against key
//! blocks of BN = 128 columns, and its 16 warps take roles:
//!
//! | warps | role | registers (`setmaxnreg`) |
//! |---|---|---|
//! | 0–3, 4–7 | softmax of Q tile 0 and Q tile 1 | REG_SOFTMAX |
//! | 8–11 | correction (rescales O in TMEM) and epilogue | REG_CORRECTION |
//! | 12 | MMA: one elected thread issues every `tcgen05.mma` | REG_OTHER |
//! | 13 | load: one elected thread issues every TMA load (`load_q_kv` of `pieces.rs`, the Hopper kernels' producer too) | REG_OTHER |
//! | 14–15 | idle (they give registers away) | REG_OTHER |
//!
//! Tensor memory, the column plan (checked at build time against the 512 columns):
//!
//! | columns | buffer |
//! |---|---|
//! | 0–127, 128–255 | `s[0]`, `s[1]`: S_i = Q_i·Kᵀ (f32), one per Q tile |
//! | 0–63, 128–191 | `p_t[0]`, `p_t[2]`: P_i packed as two 16-bit values per column, written over the first half of S_i (`alias = s`) |
//! | 256–383, 384–511 | `o_acc[0]`, `o_acc[1]`: O_i (f32, `D_V` = 128 columns each; the columns of the hd 64 tile are half as many), read and rescaled 64 columns at a time through the view `o_c` |
//!
//! The plan depends on `D_V` only, so Q/K 192 with V/O 128 fills the 512 columns exactly as
//! hd 128 does (S 2 × 128 + O 2 × 128); a V/O head dim above 128 would not fit beside S.
//!
//! Per key block n the barrier graph is (every edge an mbarrier, as in FA4's pipeline):
//! load → `k_pipe`/`v_pipe` → MMA issues S_i(n) → `s_full[i]` → softmax i reads S_i,
//! computes the new row max m and the factor 2^((m_old − m)·scale·log2 e), hands the factor
//! to the correction warpgroup through shared memory (`corr_s[i]`, `stats[i]`), writes
//! P_i = bf16(2^(S·scale·log2 e − m·…)) over S_i with `tcgen05.st` and arrives on `p_ready[i]`;
//! the correction warpgroup rescales O_i by the factor (from block 1 on, in each warp with a
//! factor below 1: see conditional rescaling below) and arrives on
//! `p_ready[i]` too; then the MMA warp issues O_i += P_i·V(n) with P read from TMEM as the A
//! operand, followed by S_i(n + 1) — which overwrites P_i's columns. As in FA4, that relies on
//! one thread's `tcgen05.mma`s running in the order issued (the emulator runs them so); the
//! O_i the correction rescales is complete because `tcgen05.commit` of `s_full[i]` tracks
//! every earlier MMA of the thread, the P·V of block n − 1 among them (PTX ISA §9.7.16.10.10).
//! After the last block the MMA warp commits `o_full[i]`; the softmax hands over its row sums
//! (`l_s[i]`, `fin[i]`) and stores the LSE; the correction warpgroup divides O_i by the row
//! sum, stages it in Q_i's shared memory (Q is no longer read once `o_full` completes) and
//! stores it with TMA.
//!
//! The softmax holds one row per thread (`tmem_32x32b`: `tcgen05.ld.32x32b`, PTX ISA
//! §9.7.16.8.3), so its row reductions need no shuffle. Sequence tails: TMA loads zero-fill,
//! key columns past SK are masked to −∞, the TMA store and the LSE store clip rows past S.
//! Causal masking is bottom-right aligned (query i sees keys j ≤ i + SK − S, as
//! `attention_sm90`), CTAs take their query tiles longest first (`ncta.x − 1 − cta.x`), both
//! Q tiles read the key blocks the later one needs and the earlier one masks the rest; a row
//! that sees no key gets O = 0 and LSE = −∞, and a CTA that sees no key block issues no MMA.
//! Configs: head dims 64, 128 and (192, 128), BF16 and FP16, full or causal.
//!
//! Shared memory (the 227 KB a CTA may have on sm_100a): Q takes 2 × 128 × D_QK × 2 bytes,
//! each K stage BN × D_QK × 2, each V stage BN × D_V × 2. At hd 128 that is 64 + 2 × 32 +
//! 2 × 32 = 192 KB with two stages. At (192, 128) it is 96 KB of Q, 48 KB a K stage and 32 KB
//! a V stage: two stages of each would be 256 KB, so `fa4_d192_128` keeps one (176 KB). With
//! one stage the load warp issues K(n + 1) once S(n) has completed and V(n) once
//! P·V(n − 1) has (the MMA warp's `empty` commits of block n), both while the softmax of block n
//! runs; whether that hides the loads on a B200 is not measured (there is none here).
//!
//! Two of FA4's softmax refinements (arXiv 2603.05451): columns EX2_COLS… of each row take
//! their 2^x from `exp2_poly3` on the FMA units and the rest from `ex2.approx` on MUFU (16 of
//! 128 here: a share, configurable per tile, not measured on a B200 — there is none); and
//! conditional rescaling: a row's running max moves only when a block's max exceeds it by
//! more than 8 in log2 units, so most blocks' factor is exactly 1 (P then stays below 2^8).
//! The rule is FA4's (Dao-AILab/flash-attention at 0251105a, `flash_attn/cute/softmax.py`,
//! `SoftmaxSm100.update_row_max`: the old max
//! is kept, and the factor is 1, while `(m_old − m_new)·scale_log2 ≥ −8`; the threshold is 8.0
//! for 16-bit inputs, `rescale_threshold` in `flash_fwd_sm100.py`). Each correction warp then
//! votes (`warp_any(c != 1.0)`, `vote.sync.any.pred`) over the factors of its own 32 rows —
//! the TMEM lanes its `tcgen05.ld`/`st` reach — and skips the load-scale-store round trip of O
//! when every one is exactly 1, as FA4's correction warps do (`vote_ballot_sync(scale < 1.0)`
//! in `flash_fwd_sm100.py`; the factors never exceed 1, so the tests agree). Skipping only a
//! multiplication by exactly 1 leaves O bit-identical to always rescaling; the row sum and the
//! LSE use the same kept (stale) max, so the final O / l and LSE are exact up to rounding.
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills, and
//! the SASS (`tirx check`, its `attention_sm100` lines, the same for every config — the
//! head-dim chunk loops stay loops: `128 0 UTCHMMA×24 UTMALDG×3 UTMASTG×1
//! LDTM×8 STTM×4 USETMAXREG×3 SYNCS×52 MUFU.EX2×113 STS.128×8`, `SYNCS×48` at (192, 128),
//! whose one-stage rings have fewer barriers) shows the tensor core with A
//! from shared memory and from TMEM (`tests/assemble.rs`), TMA loads and the O store, TMEM
//! loads and stores, `setmaxnreg` and `MUFU.EX2`; the emulator runs it against the f64
//! reference on batches of two, two heads and sequence tails, several schedules each, the
//! (192, 128) tile too (`tests/sim_attention.rs`). Not measured: there is no Blackwell GPU here.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::attention_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    #[tile_kernel(
        solves = attention,
        target = sm_100a,
        threads = 512,
        grid = (cdiv(S, BM), HQ / D_QK, B),
        // Registers: 2·REG_SOFTMAX + REG_CORRECTION + REG_OTHER = 512 (four warpgroups sharing the
        // 64K file at 128 a thread, the count ptxas launches 512 threads with).
        // Both head dims take the same split: the correction warpgroup holds a 64-column O chunk
        // (64 registers), so FA4's 64 for it at hd 64 would spill here.
        configs(product(
            types(default = (T = bf16), f16 = (T = f16)),
            mask(default = (CAUSAL = 0), causal = (CAUSAL = 1)),
            tile(
                fa4_d128 = (D_QK = 128, D_V = 128, BM = 256, BN = 128, STAGES = 2, EX2_COLS = 112, REG_SOFTMAX = 184, REG_CORRECTION = 96, REG_OTHER = 48),
                fa4_d64 = (D_QK = 64, D_V = 64, BM = 256, BN = 128, STAGES = 2, EX2_COLS = 112, REG_SOFTMAX = 184, REG_CORRECTION = 96, REG_OTHER = 48),
                // Q/K head dim 192, V/O 128 (MLA prefill): one K/V stage (see the module docs).
                fa4_d192_128 = (D_QK = 192, D_V = 128, BM = 256, BN = 128, STAGES = 1, EX2_COLS = 112, REG_SOFTMAX = 184, REG_CORRECTION = 96, REG_OTHER = 48),
            ),
        )),
    )]
    pub fn attention_sm100(
        #[shape(B, S, HQ)] q: Tensor<T>,
        #[shape(B, SK, HK)] k: Tensor<T>,
        #[shape(B, HV, SK)]
        #[major(mn)]
        v: Tensor<T>,
        #[shape(B, S, HO)] o: Tensor<T>,
        #[shape(BH, S, 1)] lse: Tensor<f32>,
        scale_log2: f32,
    ) {
        // Shared memory: the two Q tiles (later O's staging), the K and V rings, the factors and
        // row sums handed from the softmax to the correction warpgroup.
        let q_s = smem::<T>([2, D_QK / 64, 128, 64], swizzle = B128);
        let k_s = smem::<T>([STAGES, D_QK / 64, BN, 64], swizzle = B128);
        let v_s = smem::<T>([STAGES, D_V, BN], swizzle = B128, major = mn);
        let corr_s = smem::<f32>([2, 128, 1]);
        let l_s = smem::<f32>([2, 128, 1]);
        // Tensor memory (the column plan of the module docs).
        let s = tmem::<f32>([2, 128, BN]);
        let p_t = tmem::<T>([4, 128, BN], alias = s);
        let o_acc = tmem::<f32>([2, 128, D_V]);
        let o_c = tmem::<f32>([2 * D_V / 64, 128, 64], alias = o_acc);
        // Barriers.
        let q_bar = mbarrier();
        let k_pipe = pipeline::<STAGES>();
        let v_pipe = pipeline::<STAGES>();
        let s_full = mbarrier(count = 2);
        let stats = mbarrier(count = 2, arrivals = 128);
        let p_ready = mbarrier(count = 2, arrivals = 256);
        let o_full = mbarrier(count = 2);
        let fin = mbarrier(count = 2, arrivals = 128);
        // Register tiles: the softmax's S and P (one row a thread), the correction's O chunk.
        let t = regs::<f32>([128, BN], layout = tmem_32x32b);
        let p = regs::<T>([128, BN], layout = tmem_32x32b);
        let m_i = regs::<f32>([128, 1], layout = stat(t, axis = 1));
        let l_i = regs::<f32>([128, 1], layout = stat(t, axis = 1));
        let corr = regs::<f32>([128, 1], layout = stat(t, axis = 1));
        let ot = regs::<f32>([128, 64], layout = tmem_32x32b);
        let c = regs::<f32>([128, 1], layout = stat(ot, axis = 1));

        let heads = HQ / D_QK;
        let h = cta.y;
        let hk = h / (HQ / HK);
        // Longest first: with the causal mask, later query tiles see more keys.
        let mb = ncta.x - 1 - cta.x;
        // Key blocks this CTA's BM = 256 rows read, and how many of them need no mask (every key of
        // the block seen by every row): causal rows see keys j ≤ i + SK − S (bottom-right
        // aligned, as `attention_sm90`). Both Q tiles read the same blocks; tile 0 masks those
        // only tile 1 sees.
        let mut n_blocks = cdiv(SK, BN);
        let mut n_full = SK / BN;
        if CAUSAL == 1 {
            n_blocks = min(n_blocks, cdiv(max((mb + 1) * BM + SK, S) - S, BN));
            n_full = min(n_full, (max(mb * BM + SK + 1, S) - S) / BN);
        }
        static_assert(BM == 2 * 128, "a CTA owns two Q tiles of 128 rows");
        static_assert(
            D_QK % 64 == 0 && D_V % 64 == 0 && D_V <= D_QK,
            "head dims in 64-column chunks; O is staged in Q's shared memory",
        );
        // V and O have the heads of K and Q at the V head dim.
        static_assert(HV * D_QK == HK * D_V, "v must be [B, SK, HK·D_V]");
        static_assert(HO * D_QK == HQ * D_V, "o must be [B, S, HQ·D_V]");
        static_assert(
            2 * REG_SOFTMAX + REG_CORRECTION + REG_OTHER <= 512,
            "the warpgroups' setmaxnreg counts exceed the 64K-register file",
        );

        #[scope(warp = 0)]
        {
            tcgen05::alloc(s);
            tcgen05::alloc(o_acc);
            tcgen05::relinquish();
        }
        tcgen05::fence_before();
        sync_threads();
        tcgen05::fence_after();

        // The roles in program order: softmax, correction, then the MMA and load warps. They run
        // at the same time; the build-time protocol walk follows one role after another, and an
        // MMA's completion reaches the softmax and the correction only through the barriers the
        // other roles signal after waiting on its commit (the MMA warp's `s_full` after the P·V
        // MMAs), which that walk cannot see, so the roles that wait come first. The emulator
        // checks those orders at run time: it diagnoses a `tcgen05.st` into cells an issued MMA
        // still reads as A, and completes MMAs late under seeded schedules, where a read before
        // completion would give a wrong O.

        // Warpgroups 0 and 1: the softmax of Q tile `wg`, one row a thread.
        #[scope(warpgroups = 0..2)]
        {
            setmaxnreg::inc(REG_SOFTMAX);
            let wg = tid / 128;
            let row0 = (2 * mb + wg) * 128;
            m_i = f32::NEG_INFINITY;
            l_i = 0.0;
            for n in 0..n_blocks {
                s_full[wg].wait(n % 2);
                tcgen05::fence_after();
                copy(t, s[wg]);
                mask_block(t, n, n_full, row0);
                // Conditional rescaling (FA4): the running max moves only when this block's
                // exceeds it by more than RESCALE_LOG2 = 8 in log2 units (P then stays below 2^8,
                // well inside 16-bit range); otherwise the factor is exactly 2^0 = 1.
                let m_blk = max(m_i, reduce_max(t, axis = 1));
                let m_new = select((m_blk - m_i) * scale_log2 > 8.0, m_blk, m_i);
                // A row with no key seen yet keeps a max of −∞: subtract 0 (2^−∞ = 0). The
                // factor of a row's first key block is 2^−∞ = 0 (O holds nothing of it yet).
                let m_use = select(m_new == f32::NEG_INFINITY, 0.0, m_new * scale_log2);
                corr = exp2_approx(m_i * scale_log2 - m_use);
                copy(corr_s[wg], corr);
                stats[wg].arrive();
                // Columns EX2_COLS.. on the FMA units (`exp2_poly3`), the rest on MUFU: the build
                // knows each register's column (one row a thread), so each is computed once.
                t = select(
                    col_index(t) < EX2_COLS,
                    exp2_approx(t * scale_log2 - m_use),
                    exp2_poly3(t * scale_log2 - m_use),
                );
                l_i = l_i * corr + reduce_sum(t, axis = 1);
                m_i = m_new;
                p = cast::<T>(t);
                copy(p_t[2 * wg], p);
                tcgen05::fence_before();
                p_ready[wg].arrive();
            }
            store_lse(lse, m_i, l_i, scale_log2, cta.z * heads + h, 2 * mb + wg);
            copy(l_s[wg], l_i);
            fin[wg].arrive();
        }

        // Warpgroup 2: the correction — O_i rescaled in TMEM once block n's factor is known — and
        // the epilogue.
        #[scope(warpgroup = 2)]
        {
            setmaxnreg::dec(REG_CORRECTION);
            for n in 0..n_blocks {
                for i in 0..2 {
                    stats[i].wait(n % 2);
                    if n > 0 {
                        copy(c, corr_s[i]);
                        tcgen05::fence_after();
                        // Conditional rescaling: only a warp with a row whose max moved (factor
                        // below 1) rescales; the vote keeps each warp's `tcgen05.ld`/`st` (both
                        // `.sync.aligned`) on all 32 lanes or none.
                        let moved = warp_any(c != 1.0);
                        if moved {
                            for ch in 0..D_V / 64 {
                                copy(ot, o_c[i * (D_V / 64) + ch]);
                                ot = ot * c;
                                copy(o_c[i * (D_V / 64) + ch], ot);
                            }
                        }
                        tcgen05::fence_before();
                    }
                    p_ready[i].arrive();
                }
            }
            // O_i / l; a row that saw no key gets O = 0 (and a CTA with no key block, whose O
            // was never written, stores zeros without reading it).
            for i in 0..2 {
                o_full[i].wait(0);
                fin[i].wait(0);
                tcgen05::fence_after();
                copy(c, l_s[i]);
                c = select(c == 0.0, 0.0, rcp(c));
                for ch in 0..D_V / 64 {
                    if n_blocks > 0 {
                        copy(ot, o_c[i * (D_V / 64) + ch]);
                        ot = select(c == 0.0, 0.0, ot * c);
                    } else {
                        ot = 0.0;
                    }
                    copy(q_s[i][ch], ot);
                }
                fence::proxy_async();
                named_barrier(1, 128);
                #[scope(leader)]
                {
                    for ch in 0..D_V / 64 {
                        tma::store(o.tile(cta.z, 2 * mb + i, h * (D_V / 64) + ch), q_s[i][ch]);
                    }
                    tma::commit_group();
                }
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }

        // Warpgroup 3: the MMA warp, the load warp, two idle warps.
        #[scope(warpgroup = 3)]
        {
            setmaxnreg::dec(REG_OTHER);
            #[scope(warp = 13, elect)]
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
                    2,
                    h,
                    hk,
                    D_QK / 64,
                    n_blocks,
                );
            }
            #[scope(warp = 12, elect)]
            q_bar.wait(0);
            #[scope(warp = 12, elect)]
            if n_blocks == 0 {
                // No key block (a causal CTA whose rows all precede the keys): `o_full` completes
                // at once, no MMA being in flight.
                for i in 0..2 {
                    tcgen05::commit(o_full[i]);
                }
            } else {
                // Block 0: S_0 and S_1.
                let sk = k_pipe.consumer_wait(0);
                for i in 0..2 {
                    for ch in 0..D_QK / 64 {
                        tcgen05::mma(s[i], q_s[i][ch], k_s[sk][ch], accumulate = ch > 0);
                    }
                    tcgen05::commit(s_full[i]);
                }
                tcgen05::commit(k_pipe.empty(sk));
                // Block n: per Q tile, O_i += P_i(n − 1)·V(n − 1), then S_i(n) over P_i's columns.
                for n in 1..n_blocks {
                    let sv = v_pipe.consumer_wait(n - 1);
                    let sk = k_pipe.consumer_wait(n);
                    for i in 0..2 {
                        p_ready[i].wait((n - 1) % 2);
                        tcgen05::fence_after();
                        tcgen05::mma(o_acc[i], p_t[2 * i], v_s[sv], accumulate = n > 1);
                        for ch in 0..D_QK / 64 {
                            tcgen05::mma(s[i], q_s[i][ch], k_s[sk][ch], accumulate = ch > 0);
                        }
                        tcgen05::commit(s_full[i]);
                    }
                    tcgen05::commit(v_pipe.empty(sv));
                    tcgen05::commit(k_pipe.empty(sk));
                }
                // The last P·V.
                let sv = v_pipe.consumer_wait(n_blocks - 1);
                for i in 0..2 {
                    p_ready[i].wait((n_blocks - 1) % 2);
                    tcgen05::fence_after();
                    tcgen05::mma(o_acc[i], p_t[2 * i], v_s[sv], accumulate = n_blocks > 1);
                    tcgen05::commit(o_full[i]);
                }
                tcgen05::commit(v_pipe.empty(sv));
            }
        }

        tcgen05::fence_before();
        sync_threads();
        #[scope(warp = 0)]
        {
            tcgen05::dealloc(s);
            tcgen05::dealloc(o_acc);
        }
    }
}
