//! Transposed-tile GEMM, Hopper: D = A·Bᵀ computed as Dᵀ = B·Aᵀ, one launch, for the TN
//! shapes whose M (129…255, or any M that is not a multiple of 128) leaves the row-major
//! tiles either empty rows or the wrong number of CTAs.
//!
//! **Why.** Measured on an H100 (issue #32, 2026-12-07), our best config ran TN bf16
//! 160×4096×4096 at 0.66 of cuBLASLt, 192×4096×4096 at 0.70, 224×4096×4096 at 0.79,
//! 192×8192×4096 at 0.87 and 192×8192×8192 at 0.84: a 128-row tile at M = 192 computes 64
//! rows of zero fill, a 64-row tile makes three row blocks whose CTAs each read all of B's
//! tiles they touch. ncu showed cuBLAS running `nvjet_sm90_tst_64x96_64x10_2x1_v_bz_TNT` at
//! 192×4096×4096 with grid (2, 64): a transposed tile, 64 of B's rows on the MMA's 64-row
//! side and 96 of A's rows on its N side, so M = 192 is exactly two tiles and N = 4096 sixty
//! four: 128 CTAs, no zero-filled rows, 18.3 µs. The organisation is the one the decode plan
//! already uses (`splitk.rs`' `gemm_sm90_splitk_t`); the code is ours.
//!
//! **The kernel.** CTA `(x, y)` computes D's rows `y·BN …` and columns `x·64·WG …`: each
//! consumer warpgroup `wg` holds the accumulator `acc[64 (n), BN (m)] = B_tile·A_tileᵀ` of B's
//! rows `(x·WG + wg)·64 …` over all of K (`wgmma.m64nBNk16`, BN = 72 … 128 by 8: PTX ISA
//! §9.7.15.5, N a multiple of 8 up to 256), fed by a TMA + mbarrier pipeline of `STAGES`
//! stages (warp 0's elected thread, one box per 64 of B's rows and one of A's; the consumers' loop is
//! `pieces::consume`, one wgmma group in flight). The epilogue rounds the accumulator to D's
//! type and writes it transposed into a `[BN, 64]` 128B-swizzled staging tile
//! (`copy(d_s[wg], acc, transpose = true)`: `stmatrix…trans`, §9.7.14.5.16), fences the
//! generic proxy against the async one, and the warpgroup's leader stores it with one TMA
//! store (`cp.async.bulk.tensor`, §9.7.9.25.5.2) at D's `(y·BN, (x·WG + wg)·64)`; TMA clips the
//! rows past M and the columns past N, and the loads zero-fill past M, N and K. D's rows must
//! be 16-byte aligned (N a multiple of 8), as for every TMA-store epilogue.
//!
//! Configs: `n96` (BN = 96, 10 stages of 8 + 12 KB, the cuBLAS tile), `n128` (8 stages of
//! 8 + 16 KB), and the two-warpgroup `w2n96`/`w2n128` (a 128×BN tile: A's box read once for
//! 128 of B's rows; 7 and 5 stages), bf16 and f16 (D in A's type). `n80`/`n112` (BN = 80, 11
//! stages of 8 + 10 KB; BN = 112, 9 of 8 + 14 KB: 210 and 214 KB with the staging tile and
//! barriers, the most stages under the 227 KB a CTA may take) split M = 160 and 224 into
//! exactly two row blocks: issue #32's hypothesis, after cuBLAS's 96-row tile at M = 192 — no
//! zero-filled rows, and 128 CTAs at N = 4096 where `n96` at M = 160 computes 32 rows of fill
//! and `n128` at 224 another 32. The epilogue is generic in `BN`: the staging tile `[BN, 64]`
//! and D's store box take any `BN`, and `stmatrix…trans` moves pairs of 8-column blocks (80
//! and 112 are 5 and 7 pairs; an odd last block by `.x2`). First timed at stop 59 (H100,
//! `docs/perf/h100-2026-12-07-stop59.md`, µs): the fastest config at 144×4096×4096 (`n80`
//! 22.0), 160×4096×4096 (`n80` 20.2, `w2n96` 22.0), 208×4096×4096 (`n112` 22.6, `w2n128` 26.1)
//! and 224×4096×4096 (`n112` 21.0, cuBLASLt 20.6), as the model predicted once its guard on
//! untimed configs was lifted.
//!
//! `n72`/`n88`/`n104`/`n120` (BN = 72, 88, 104, 120: 12 stages of 8 + 9 KB, 11 of 8 + 11 KB,
//! 10 of 8 + 13 KB, 9 of 8 + 15 KB, the most under the same limit) split M = 144, 176, 208 and
//! 240 into exactly two row blocks, where the even tiles leave 16 rows of zero fill per pair
//! of CTAs; their odd count of 8-column blocks stores its last by `stmatrix.x2.trans`. With
//! them the one-warpgroup tiles step by 8 rows from 72 to 128, so every M from 129 to 256
//! splits into two row blocks with at most 14 rows of fill. Added untimed (`UNTIMED = 1`; `n120`
//! at stop 60, where the model's choice at 240×4096×4096, `n128` at 0.93–0.94 of `ws/n64`, was
//! stop 59's one known miss), with the model's choice predicted before the run, they were first
//! timed at stop 60 (H100, `docs/perf/h100-2026-12-07-stop60.md`, call 1, µs) and are ranked
//! since: the fastest config at 144×4096×4096 (`n72` 20.2, `n80` 22.0; cuBLASLt 18.4),
//! 176×4096×4096 (`n88` 20.9, `w2n96` 22.2; 19.1) and 208×4096×4096 (`n104` 21.2, `n112` 22.6;
//! 20.3), and at 240×4096×4096 `n120` 21.7 against `ws/n64`'s 21.6 (cuBLASLt 21.4); NN alike
//! (`nn_n72` 20.0, `nn_n88` 20.5, `nn_n104` 20.9 the fastest; `nn_n120` 21.2 against
//! `ws/nn_n64`'s 20.9), each as predicted.
//!
//! A 2×1 cluster of each one-warpgroup tile (`c2n80`…`c2n128`: the CTAs of a pair, neighbours
//! along N, each loading half of the shared A box and multicasting it to both) was tried to
//! halve A's re-reads through the L2. Measured slower than its one-CTA counterpart at all 9 TN
//! shapes of stop 59 (160×4096×4096: `c2n80` 21.8 against `n80`'s 20.2 µs; 224×4096×4096:
//! `c2n112` 23.0 against `n112`'s 21.0), it was removed at stop 59.
//!
//! **The cluster that shares B** (`m2n72`…`m2n128`, `CL = 2`; issue #32). ncu on an H100 at
//! 192×4096×4096 measured `n96` at 19.2 µs against cuBLASLt's
//! `nvjet_sm90_tst_64x96_64x10_2x1_v_bz_TNT` at 18.4 (bench: 20.7 against 19.5): the same
//! 64×96 tile and 10 stages, grid (2, 64), and a 2×1 cluster along the row blocks of D — the
//! two CTAs of a cluster compute the same 64 rows of B against two different 96-row blocks of
//! A, so B's box is shared: each CTA loads half of it and multicasts it to both
//! (`cp.async.bulk.tensor…multicast::cluster`, PTX ISA §9.7.9.25.5.1), and B crosses the L2
//! once a pair instead of once a CTA. Here the pair are neighbours along the grid's x
//! (`cluster = (CL, 1, 1)`, grid `(cdiv(N, 64)·CL, cdiv(M, BN·CL))`): CTA `x` of pair
//! `p = x / CL` takes B's block `p` and A's row block `y·CL + cta_rank`, and loads B's
//! `BM / CL` = 32-row box `x` (four 8-row 128B swizzle atoms, so the second half starts
//! 1024-byte aligned and the halves read as one 64-row operand) into its `cta_rank` half of
//! the stage with `multicast = 3`. The pipeline's empty barrier counts both CTAs' consumers
//! (`peers = CL`): a CTA refills a stage only once its peer has read the half it wrote there.
//! The grid rounds M's row blocks up to pairs: with an odd count the last pair's second CTA
//! holds rows entirely past M — its A box is TMA's zero fill and its store is clipped, but it
//! still supplies its half of B. TN only: an MN-major B (`nn`) is one `[BK, 64]` box whose
//! 64-element rows are one 128-byte swizzle row, so a half along B's rows (N) is a 64-byte
//! row that no longer fits the operand's 128B-swizzled layout; a half along K (32 of the
//! box's 64 rows of 128 bytes, contiguous) would fit, but needs the stage split along K, not
//! along B's rows as here — not built in this change (TODO(#32)). The stages are those of the one-CTA tile of the same `BN` (the half box is no
//! smaller a stage). This is the other cluster of stop 59's `c2*` tiles (which shared A between
//! neighbours along N and measured 4–13 % slower): at 192×4096×4096 B's 64 rows are re-read by
//! each of the two row blocks, which the cluster reads once. **Prediction, before any
//! measurement:** `m2n96` 3–6 % faster than `n96` at 192×4096×4096 (cuBLAS is ~6 % ahead with
//! this structure). Emulator-verified (`tests/sim_transposed.rs`: two, one and three row
//! blocks, M, N and K tails). The host's model halves B's rows in a CTA's re-read when its
//! cluster multicasts B (`reread.rs`) and chose them at M = 144…240 before they ran.
//! **Measured (stop 61, H100, `docs/perf/h100-2026-12-07-stop61.md`, TN `--all` at M =
//! 144…240 (every 16) × 4096×4096, µs):** the fastest config at all seven — 144 `m2n72` 19.7
//! (`n72` 20.5), 160 `m2n80` 20.0 (`n80` 20.7), 176 `m2n88` 20.1 (`n88` 21.0), 192 `m2n96`
//! 20.1 (`n96` 21.1, +5 %: the prediction's 3–6 %), 208 `m2n104` 20.5 (`n104` 21.2), 224
//! `m2n112` 21.2 (`n112` 21.6), 240 `m2n120` 21.5 (`n120` 21.8); against cuBLASLt 0.937–0.996
//! (cuBLASLt 18.6–21.4). Ranked since (`dispatch/transposed.rs`).
//!
//! `nn_n96`/`nn_n128`/`nn_w2n96` take B given K×N (`b` `#[major(MB)]`, its shared tile
//! `major = MB`: B is the MMA's A operand MN-major, wgmma's `imm-trans-a`, as
//! `gemm_sm90_splitk_t`'s `nn` configs); `nn_n80`/`nn_n112` are `n80`/`n112` so. Added at
//! stop 59 untimed (`UNTIMED = 1`, `gemm/untimed.rs`: the host did not rank them), they were
//! first timed in its call 3 (H100, `call3/nn_all.json`, µs) and are ranked since: the fastest
//! config at 144×4096×4096 (`nn_n80` 23.0, `nn_w2n96` 23.3; cuBLASLt 19.3), 160×4096×4096
//! (`nn_n80` 21.2, `nn_w2n96` 22.2; cuBLASLt 19.4), 208×4096×4096 (`nn_n112` 22.7, `nn_n128`
//! 27.4; cuBLASLt 20.7; the host had taken `splitk/nn_m128n64`, 32.2) and 224×4096×4096
//! (`nn_n112` 22.4, `ws/nn_n64` 24.9; cuBLASLt 21.2), as the model predicted with its guard
//! lifted; `nn_n96` stays the fastest at 192 (21.4). An f32 D would need an f32 transposing
//! store (`stmatrix` moves 16-bit elements only), so there is none.
//!
//! Verified in the emulator (`tests/sim_transposed.rs`: M, N and K tails) and by ptxas, and
//! first measured on an H100 at stop 56 (`docs/perf/h100-2026-12-07-stop56.md`, TFLOP/s):
//! `n96` the fastest config at 192×4096×4096 (300), 96×8192×8192 (258) and 80×8192×4096
//! (189), `w2n96` within 0.97–0.98 of it there and the fastest at 160×4096×4096 (244),
//! 192×8192×4096 (375) and 192×8192×8192 (408); at 224×4096×4096 `n128` 284 behind
//! `gemm_sm90_ws/n64`'s 293. Every TN and NN config passed `gpu_transposed` there; NN
//! `nn_n96` ran 316 at 192×4096×4096 (0.939 of cuBLASLt; the ranked NN configs' best 0.737),
//! `nn_w2n96` came after that run. The host's cost model (`request.rs`, `TRANS = 1`: a tile covers
//! `BN` rows of D by `64·WG` columns) ranks it only for TN requests with M in 65…256 not a
//! multiple of 128; its choices at those shapes are `dispatch/transposed.rs`' test.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// D = A·Bᵀ as Dᵀ = B·Aᵀ: each consumer warpgroup multiplies 64 of B's rows by the CTA's
    /// `BN` rows of A over all of K and stores its `[64, BN]` accumulator transposed into D's
    /// `[BN, 64]` block through shared memory and one TMA store (see the module docs).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 128 * (WG + 1),
        cluster = (CL, 1, 1),
        grid = (cdiv(N, 64 * WG) * CL, cdiv(M, BN * CL)),
        configs(
            product(
                types(default = (TA = bf16), f16 = (TA = f16)),
                tile(
                    n96 = (WG = 1, BN = 96, STAGES = 10, CL = 1),
                    n128 = (WG = 1, BN = 128, STAGES = 8, CL = 1),
                    w2n96 = (WG = 2, BN = 96, STAGES = 7, CL = 1),
                    w2n128 = (WG = 2, BN = 128, STAGES = 5, CL = 1),
                    n80 = (WG = 1, BN = 80, STAGES = 11, CL = 1),
                    n112 = (WG = 1, BN = 112, STAGES = 9, CL = 1),
                    n72 = (WG = 1, BN = 72, STAGES = 12, CL = 1),
                    n88 = (WG = 1, BN = 88, STAGES = 11, CL = 1),
                    n104 = (WG = 1, BN = 104, STAGES = 10, CL = 1),
                    n120 = (WG = 1, BN = 120, STAGES = 9, CL = 1),
                    m2n72 = (WG = 1, BN = 72, STAGES = 12, CL = 2),
                    m2n80 = (WG = 1, BN = 80, STAGES = 11, CL = 2),
                    m2n88 = (WG = 1, BN = 88, STAGES = 11, CL = 2),
                    m2n96 = (WG = 1, BN = 96, STAGES = 10, CL = 2),
                    m2n104 = (WG = 1, BN = 104, STAGES = 10, CL = 2),
                    m2n112 = (WG = 1, BN = 112, STAGES = 9, CL = 2),
                    m2n120 = (WG = 1, BN = 120, STAGES = 9, CL = 2),
                    m2n128 = (WG = 1, BN = 128, STAGES = 8, CL = 2),
                ),
                with = (BM = 64, BK = 64, MB = k, TRANS = 1),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16), f16 = (TA = f16)),
                tile(
                    n96 = (WG = 1, BN = 96, STAGES = 10, CL = 1),
                    n128 = (WG = 1, BN = 128, STAGES = 8, CL = 1),
                    w2n96 = (WG = 2, BN = 96, STAGES = 7, CL = 1),
                    n80 = (WG = 1, BN = 80, STAGES = 11, CL = 1),
                    n112 = (WG = 1, BN = 112, STAGES = 9, CL = 1),
                    n72 = (WG = 1, BN = 72, STAGES = 12, CL = 1),
                    n88 = (WG = 1, BN = 88, STAGES = 11, CL = 1),
                    n104 = (WG = 1, BN = 104, STAGES = 10, CL = 1),
                    n120 = (WG = 1, BN = 120, STAGES = 9, CL = 1),
                ),
                with = (BM = 64, BK = 64, TRANS = 1),
            ),
        ),
    )]
    pub fn gemm_sm90_t(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TA>,
    ) {
        // B's 64 rows of each consumer warpgroup, in `CL` parts: with a cluster of two
        // (`m2*`), the CTAs of a pair compute neighbouring row blocks of D against the same
        // rows of B, so each loads one half of B's box (32 rows: four 8-row 128B swizzle
        // atoms, so the second half starts 1024-byte aligned and the halves read as one
        // 64-row operand) and multicasts it to both.
        let b_rows = smem::<TA>([STAGES, WG, CL, BM / CL, BK], swizzle = B128, major = MB);
        let a_rows = smem::<TA>([STAGES, BN, BK], swizzle = B128);
        let d_s = smem::<TA>([WG, BN, 64], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = WG, peers = CL);
        let k_tiles = cdiv(K, BK);
        #[scope(warp = 0, elect)]
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(k);
            // One box per 64 of B's rows: an MN-major B (`nn`) is one `[BK, 64]` box each.
            // A phase's loads are issued from one block (the barrier's expected bytes).
            if CL == 1 {
                for w in 0..WG {
                    tma::load(b_rows[s][w][0], b.tile(cta.x * WG + w, k), pipe.full(s));
                }
                tma::load(a_rows[s], a.tile(cta.y, k), pipe.full(s));
            } else {
                // The pair `cta.x = 2p, 2p + 1` shares B's block `p`: the `BM / CL`-row box
                // `cta.x` is this CTA's half of it.
                for w in 0..WG {
                    tma::load(
                        b_rows[s][w][cta_rank],
                        b.tile((cta.x / CL * WG + w) * CL + cta_rank, k),
                        pipe.full(s),
                        multicast = 3,
                    );
                }
                tma::load(a_rows[s], a.tile(cta.y * CL + cta_rank, k), pipe.full(s));
            }
        }
        #[scope(warpgroups = 1..WG + 1)]
        {
            let wg = tid / 128 - 1;
            let _ = consume(pipe, 0, acc, b_rows, a_rows, wg, k_tiles);
            copy(d_s[wg], acc, transpose = true);
            fence::proxy_async();
            named_barrier(wg + 1, 128);
            #[scope(leader)]
            {
                if CL == 1 {
                    tma::store(d.tile(cta.y, cta.x * WG + wg), d_s[wg]);
                } else {
                    tma::store(d.tile(cta.y * CL + cta_rank, cta.x / CL * WG + wg), d_s[wg]);
                }
                tma::commit_group();
                tma::wait_group(0);
            }
        }
    }
}
