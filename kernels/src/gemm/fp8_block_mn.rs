//! The block-scaled FP8 GEMM (`fp8_block.rs`, the DeepSeek-V3 recipe: one f32 scale per 1×128
//! block of A, one per 128×128 block of B) with the activation scales given **MN-major**:
//!
//! D[m, n] = Σ_kb (A_kb · B_kbᵀ)[m, n] · sa[kb, m] · sb[n / 128, kb]
//!
//! with `sa` f32 `[KB, M4]` (KB = cdiv(K, 128), M4 = 4·cdiv(M, 4)): each K block's M row
//! scales contiguous, the row padded to a multiple of 4 floats so that every K block's row
//! starts 16-byte aligned — DeepGEMM's "TMA-aligned" scale layout, and the transpose of
//! `fp8_block.rs`'s `sa` [M, KB]; torch `_scaled_mm`'s and cuBLASLt's block-wise `scale_a`
//! is this form unpadded, `[KB, M]` (`bench::cublaslt_fp8::LtScales::block_shapes`: the bench
//! hands cuBLASLt the same values in it, which is this very layout wherever M is a multiple
//! of 4, as at every bench shape). `sb` f32 [NB, KB] row-major as there. `Epilogue::ScaleBlocksMn`; a request with it is served by this file's kernels only.
//!
//! **Why** (H100, 2026-12-07, `docs/perf/h100-2026-12-07-stop59.md`): `gemm_sm90_fp8_block`'s
//! three scale warps (warps 1–3 of the producer warpgroup: load `sa`/`sb`, multiply, store
//! into the stage, 32 arrivals) cost it about 16 %: `default` ran 0.84–0.87× cuBLASLt, and a
//! diagnostic build with no scale warps at all (`writers = 0`, wrong by design) 1117 / 1196
//! TFLOP/s at 4096³ / 8192³, 1.06 / 1.04× cuBLASLt. Loading row-major `sa` by TMA instead
//! (`kernels/bench/device/fp8tma_tmasc.patch`) needs a 128-row × 8-column box, 128 short
//! segments, and a select-and-shuffle chain in the consumers: 13–33 % slower. In the MN-major
//! layout a tile's 128 row scales of one K block are 512 contiguous bytes: one TMA box.
//!
//! **What**: the producer warpgroup's TMA thread (`mn_producer`) loads, into each stage beside
//! A's 128 rows and B's multicast half, `sa`'s box `[1, 128]` at (K block `k`, the CTA's
//! rows) into `sa_s[s]` (f32, no swizzle; columns past M4 fill zeros, and the padding
//! columns `M ≤ m < M4` scale rows that D's store clips), on the stage's full barrier: its
//! `expect_tx` is derived from the three boxes, 16 384 + 16 384 + 512 bytes. No other thread
//! fills a stage (`writers = 0`): warps 1–3 of the producer warpgroup idle, as in DeepGEMM.
//! A consumer warpgroup reads its 64 rows' scales through `sc_s`, a view of `sa_s`'s bytes
//! as `[STAGES, 2, 64, 1]` (`smem::<f32>(…, alias = sa_s)`): `copy(sc, sc_s[s][wg])` into
//! the accumulator's row statistic is two `ld.shared.f32` a thread, no shuffles, as
//! `gemm_sm90_fp8_block/default` reads its scale warps' products. TMA's writes are visible
//! to a consumer once it has seen the stage's phase complete (the `complete_tx` of the
//! barrier it waits on, PTX ISA §9.7.9.25.5.1, acquired by `mbarrier.try_wait`,
//! §9.7.13.15.16), as A's and B's are. The release rule is unchanged: each consumer warp
//! releases the stage after its own `ld.shared`s (`consumers = 8`), so the TMA thread
//! refills `sa_s[s]` only after all eight warps of both CTAs have read theirs.
//!
//! The weight scale `sb[nb, kb]` is one scalar per (tile, K block) (a 128-wide N tile lies
//! within one 128×128 weight block). The consumers `gather` it from global one block ahead,
//! into `sb_t`, a `[1, 1]` statistic of the row statistic `sc` (`stat(sc, axis = 0)`: one
//! register a thread, so one `ld.global.f32` — a `[64, 1]` tile in `sc`'s layout loads each of
//! its two row registers itself, two — at a uniform address the warp's lanes share in one L1
//! request), broadcast over `sc`'s rows by `sc * sb_t`; block `k + 1`'s load is issued
//! while block `k`'s wgmmas run and has a whole block (~600 cycles) to land, and the block
//! past the last reads 0 unused (a tile edge: the guarded load is predicated off). Why not by
//! TMA too: `sb`'s rows are KB·4 bytes apart, a multiple of 16 only when KB is (the `tmasc`
//! patch's `static_assert`), and a box's start must be 16-byte aligned, so one value could
//! only come as a 4-wide box at `k − k % 4` and a select in the consumers; nor by a producer
//! warp, which is what the scale warps cost. The consumers then form `sc = sa · sb` (two
//! `mul.f32`) and promote `acc += part · sc` (64 `fma.rn.f32`) after `wgmma::wait(0)`, as
//! `gemm_sm90_fp8_block` does.
//!
//! **Its price**: `sa` must be given MN-major and padded (`quant_block_mn` writes it;
//! `quant_block` writes the row-major form). The
//! launch planner refuses `sa` of any shape but `[cdiv(K, 128), 4·cdiv(M, 4)]` and `sb` of
//! any but `[cdiv(N, 128), cdiv(K, 128)]` (the `static_assert`s, `RuntimeError::ShapeAssert`)
//! before any launch, so TMA's 16-byte stride rule holds whenever a launch happens. Shared
//! memory: 512 bytes a stage, as `default`'s scale tile. The rest — tile, pipeline, cluster,
//! walk, epilogue — is `fp8_block.rs`'s `default` (`gemm/pieces.rs`).
//!
//! `tirx check` (ptxas 13.5 `-arch=sm_90a`, 2026-12-07): every config clean, 168 registers
//! (the launch's; the consumers reach R145, `gemm_sm90_fp8_block/default`'s R133), 0 spills, no
//! pipeline losses; SASS `QGMMA.64x128x32.F32.E4M3.E4M3` ×4 and 64 `FFMA` a K block,
//! `UTMALDG.2D` ×2 (A's box and `sa`'s) and `UTMALDG.2D.MULTICAST` ×1 (B's half), and 2
//! `LDG.E` in the whole kernel (the weight scale's gathers: one before a tile's loop, one in
//! it) where `gemm_sm90_fp8_block/default`'s scale warps have 42. The K loop's body, counted
//! as for `fp8_block.rs` (nvdisasm, the innermost loop holding the `QGMMA`s, label to back
//! branch): **136** SASS instructions a warp and K block against `default`'s 123 — the same
//! wait, release, descriptors, two `LDS` and 64 `FFMA`, plus the gather of the next block's
//! weight scale (one predicated `LDG.E`, three `LDC.64` re-reading `sb`'s base and extents
//! from the constant bank, its 64-bit address, two bound tests and the zero fill) and the
//! scales' two `FMUL` (138 with `sb_t` a `[64, 1]` tile: a second `LDG.E` and zero fill).
//! ptxas interleaves all of it with the four `QGMMA` issues, before `WARPGROUP.DEPBAR`, in
//! the MMAs' shadow: two consumer warps a scheduler issue 272 a block against the tensor
//! core's ~512 cycles. `tests/sim_fp8_block_mn.rs` asserts the counts above and runs
//! every config in the emulator (tails in M, N and K, M not a multiple of 4 with NaN in the
//! padding, several K blocks and several tiles a CTA); `quant_block_mn`
//! (`row_kernels/quant.rs`) writes `sa` in this layout and feeds it there.
//!
//! **Prediction** (made before any measurement; the lead measures on the H100): between the
//! `d3` diagnostic's 1117 / 1196 TFLOP/s at 4096³ / 8192³ and about 5 % below it, i.e.
//! 1060–1117 / 1135–1196, 1.0–1.06× cuBLASLt. Why: no scale warps, as `d3`, and the
//! scales' bytes come with the stage's TMA loads (512 of 33 280, 1.6 %); what the consumers
//! add over `default`'s loop is the 11 instructions a warp and block of the weight scale's
//! gather and the two `FMUL` (136 against 123), issued in the MMAs' shadow. The risk: the
//! gather's `LDG` a block ahead comes back late under the TMA traffic and stalls the `FMUL`
//! before the promotion (ncu: stalls at the `FMUL`, `long_scoreboard`), or the `[1, 128]` box
//! — one 512-byte segment — lengthens the stage's completion.
//!
//! **Measured** (H100, 2026-12-07, `docs/perf/h100-2026-12-07-stop60.md` §3): prediction
//! missed — 989.9 / 1011.9 / 1102.5 / 897.9 TFLOP/s at 4096³ / 8192³ / 4096×7168×16384 /
//! 4096×2112×7168, against `gemm_sm90_fp8_block/default`'s 997.9 / 975.7 / 1097.3 / 846.7 in the
//! same call (−0.8 / +3.7 / +0.5 / +6.0 %), 0.91 of cuBLASLt over the four (`default` 0.84);
//! every config correct on the GPU (`gpu_fp8`, 3/3). The risks above are the suspects; ncu's
//! source counters at 4096³ have not been taken yet.
//!
//! ## The double-buffered K loop (`gemm_sm90_fp8_block_mn_dbl`, issue #29; untimed)
//!
//! `gemm_sm90_fp8_block_mn` waits for each block's wgmmas (`wgmma::wait(0)`) before its
//! promotion, so while a warpgroup promotes it has no MMA queued. Its sibling keeps one
//! queued: two partial accumulators, `part0` and `part1`, take turns. A tile's block 0 is
//! issued into `part0`; then for each block `k` (`promote_mn_behind`): block
//! `k + 1`'s stage waited for and its four m64n128k32 issued into the other `part` and
//! committed; block `k`'s row scales read from its stage (still held) and multiplied by its
//! weight scale; block `k + 1`'s weight scale gathered (one block before its promotion reads
//! it, as in the single-buffered loop); `wgmma::wait(1)` (PTX ISA §9.7.15.7.4: all but the
//! most recent group complete) retires block `k`'s group only; each warp releases block `k`'s
//! stage; `acc += part · sc` runs on the FMA pipe while the tensor core works on block
//! `k + 1`. Blocks are walked in pairs (`2j` in `part0`, `2j + 1` in `part1`) so that every
//! wgmma names its tile statically; the tile closes with its last block (an odd count, in
//! `part0`) or its last two (an even count), through `wgmma::wait(0)`
//! (`promote_mn_last`). FA3's `wait(1)` overlap (`attention/hopper.rs`), and
//! `gemm_sm90_fp8_block_overlap`'s schedule (`fp8_block.rs`) on this kernel's TMA-loaded
//! row scales. Nothing new in the language: `check-wgmma-registers` follows the two groups
//! and proves each promotion reads only the retired tile. A separate kernel rather than a
//! config: a config switch would add a constant (and the second `part`) to the IR of
//! `default`/`f16`/`f32`, whose IR and PTX stay as they are. Each warpgroup now holds two
//! stages at times (the promoted block's and the one in flight), so the producer runs about
//! one stage less ahead; six stages do not fit (6 × 33 280 B + the 32 KB staging tile is
//! the whole 227 KB, before the barriers), so `default`/`f16` keep five and `f32` four.
//! Configs `default`, `f16`, `f32` (bf16, f16, f32 out), all `UNTIMED = 1`: the host never
//! chooses them (`gemm/untimed.rs`); `tirx bench gemm --all` times them.
//!
//! **Measured slower (stop 61, H100, `docs/perf/h100-2026-12-07-stop61.md`)**: in one
//! `tirx bench gemm --in e4m3 --scales blocks-mn` with both kernels named, `block_mn/default`
//! was the faster at all four shapes (4096³, 8192³, 4096×7168×16384, 4096×2112×7168); ncu at
//! 4096³: `dbl` 157.9 µs against 145.3 (+8.7 %), issue rate 0.40 against 0.42 warps a
//! scheduler a cycle, no eligible warp 60.1 % against 58.0 %. The prediction (950–1050
//! TFLOP/s, centre 1000) missed: ~932. As `gemm_sm90_fp8_block_overlap` before it, hiding the
//! promotion behind the next block's MMAs does not pay: one stage less of lookahead and the
//! FMAs' register traffic beside the running wgmmas cost more than the promotion's wait. So it
//! keeps `UNTIMED = 1` (the guard's "keeps it, with the measurement's reason"), as a measured
//! alternative the bench still times.
//!
//! `tirx check` (ptxas 13.5 `-arch=sm_90a`, 2026-12-07): every config 0 spills, the launch's
//! 168 registers, the consumers reach R210 (211 of the 232 `setmaxnreg` gives them: 64
//! `acc` + 2 × 64 `part` + scales, addresses, counters; the single-buffered kernel R145), no
//! wgmma serialised or wait injected. SASS: `QGMMA.64x128x32.F32.E4M3.E4M3` ×16 (four issue
//! sites of four), 320 `FFMA` (five promotions), `WARPGROUP.DEPBAR.LE gsb0, 0x1` right after
//! each overlapped site's last `QGMMA … gsb0`, and after it the promotion's 64 `FFMA`, which
//! name none of the in-flight group's registers, before the next block's stage wait and
//! `QGMMA`s (the pair loop's two sites: 64 of 64; the even tail's: 59, ptxas sinking 5 past
//! the last block's `wait(0)`); ptxas hoists the next stage's `SYNCS.PHASECHK` into the
//! `FFMA`s. The pair loop is 291 SASS instructions a warp, 145.5 a K block (136 single-
//! buffered). `tests/sim_fp8_block_mn.rs` asserts this SASS and runs every config in the
//! emulator at 1 (whole and partial), 2, 3, 4, 5 and 9 K blocks with tails in M, N and K and
//! three tiles a cluster.
//!
//! **Prediction** (before any measurement; the lead measures on the H100): 4096³ 950–1050
//! TFLOP/s, 8192³ 970–1070 (central 1000 / 1025, about +1–2 % over the single-buffered
//! 990 / 1012, 0.92–0.93 of cuBLASLt); ≥ 1.0× cuBLASLt is not expected. How: the ceiling
//! with the promotion wholly hidden is what the same tile and pipeline reach without the
//! scales' work — `d3` 1117 / 1196, the row-wise promoted kernel 1158 / 1235 — but the same
//! change to `gemm_sm90_fp8_block` (its `_overlap` kernel) measured 4–6 % slower than its
//! waiting sibling (stop 47) and 18 % slower at stop 57, with ncu at 4096³ neither issue
//! nor memory bound: the exposed promotion was not what limited that tile. What differs
//! here: the scales come with the stage (no per-block global loads of `sa` in the consumers,
//! which `_overlap` had), so the overlap's own cost is one stage less lookahead and the
//! `FFMA`s' register-file traffic beside the running `QGMMA`s. A win would show in ncu as
//! `WARPGROUP.DEPBAR` stall samples falling; a loss as `SYNCS.PHASECHK` samples growing (the
//! shallower lookahead).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// D = Σ_kb (A_kb·B_kbᵀ)·sa[kb, :]·sb[nb, kb] (the module's docs): A M×K and B N×K in
    /// E4M3, `sa` [KB, M4] (MN-major, rows padded to a multiple of 4) and `sb` [NB, KB] f32,
    /// D in `TD`.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = e4m3, TD = bf16), f16 = (TA = e4m3, TD = f16)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 64),
            ),
            product(
                types(f32 = (TA = e4m3, TD = f32)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 4, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_fp8_block_mn(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(KB, M4)] sa: Tensor<f32>,
        #[shape(NB, KB)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        static_assert(KB == cdiv(K, 128), "one scale per 128 columns of K");
        // TMA's global strides are multiples of 16 bytes: sa's rows, M4 floats apart.
        static_assert(
            M4 == cdiv(M, 4) * 4,
            "sa's rows hold M scales padded to a multiple of 4 (16-byte aligned)",
        );
        static_assert(NB == cdiv(N, 128), "one weight scale per 128 rows of B");
        static_assert(BK == 128, "a K tile is one scale block");
        static_assert(BM == 128, "a stage's scale box is the tile's 128 rows");
        static_assert(128 % BN == 0, "an N tile lies within one weight block");
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        // A stage's row scales: `sa`'s box [1, 128] at (k, the CTA's rows), loaded by the TMA
        // thread on the stage's full barrier; `sc_s` names the same bytes as one [64, 1]
        // column per consumer warpgroup, the shape its row statistic reads.
        let sa_s = smem::<f32>([STAGES, 1, BM]);
        let sc_s = smem::<f32>([STAGES, 2, 64, 1], alias = sa_s);
        let acc = regs::<f32>([64, BN]);
        let part = regs::<f32>([64, BN]);
        let sc = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        // The weight scale, one value for the tile's rows: a statistic of `sc` (one register).
        let sb_t = regs::<f32>([1, 1], layout = stat(sc, axis = 0));
        // Each consumer warp releases a stage itself (2 warpgroups × 4 warps), after its own
        // `ld.shared` of the scales; only the TMA thread fills a stage (`writers` 0).
        let pipe = pipeline::<STAGES>(consumers = 8, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        mn_producer(pipe, a_s, b_s, sa_s, a, b, sa, pairs_m, tiles_n, k_tiles);
        mn_consumers(
            pipe, acc, part, sc, sb_t, sc_s, a_s, b_s, d_s, d, sb, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The producer warpgroup: `cluster_producer`'s (`gemm/pieces.rs`), whose TMA thread also
    /// loads each stage's row scales — `sa`'s box [1, 128] at K block `k`, the CTA's 128 rows
    /// (tile coordinates `(k, m)`) — into `sa_s[s]` on the stage's full barrier. A piece of
    /// its own rather than a flag on the shared loop: only this kernel has a scale box.
    #[tile_fn]
    fn mn_producer(
        pipe: Pipe,
        a_s: Smem,
        b_s: Smem,
        sa_s: Smem,
        a: Global,
        b: Global,
        sa: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                    let (mp, n) = grouped(u, pairs_m, tiles_n);
                    let m = 2 * mp + cta_rank;
                    for k in 0..k_tiles {
                        let s = pipe.producer_acquire(it);
                        tma::load(a_s[s], a.tile(m, k), pipe.full(s));
                        tma::load(
                            b_s[s][cta_rank],
                            b.tile(2 * n + cta_rank, k),
                            pipe.full(s),
                            multicast = 3,
                        );
                        tma::load(sa_s[s], sa.tile(k, m), pipe.full(s));
                        it += 1;
                    }
                }
            }
        }
    }

    /// The consumer warpgroups: level 8's, with the K loop of [`consume_mn`].
    #[tile_fn]
    fn mn_consumers(
        pipe: Pipe,
        acc: Regs,
        part: Regs,
        sc: Regs,
        sb_t: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        sb: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                let nb = n * BN / 128;
                it = consume_mn(
                    pipe, it, acc, part, sc, sb_t, sc_s, a_s, b_s, sb, wg, nb, k_tiles,
                );
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// A consumer warpgroup's K loop of one tile (weight block row `nb`): per K block its
    /// wgmmas into a fresh `part`, the stage's row scales read and multiplied by the weight
    /// scale gathered a block before, the next block's weight scale gathered, the wait, the
    /// stage released by each warp, and `acc += part · sc`; returns the pipeline iteration
    /// after the tile.
    #[tile_fn]
    fn consume_mn(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part: Regs,
        sc: Regs,
        sb_t: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        sb: Global,
        wg: u32,
        nb: u32,
        k_tiles: u32,
    ) -> u32 {
        let leader = tid % 32 == 0;
        let mut it = it;
        acc = 0.0;
        sb_t = gather(sb, nb, 0);
        for k in 0..k_tiles {
            // The full barrier counts the scale box's bytes with A's and B's.
            let s = pipe.consumer_wait(it);
            wgmma::fence();
            wgmma::mma(part, a_s[s][wg], b_s[s], accumulate = false);
            wgmma::commit();
            // While the MMAs run: the rows' scales (two `ld.shared`), times the weight
            // scale, and the next block's weight scale gathered (0 past the last block).
            copy(sc, sc_s[s][wg]);
            sc = sc * sb_t;
            sb_t = gather(sb, nb, k + 1);
            wgmma::wait(0);
            if leader {
                pipe.consumer_release(s);
            }
            acc = fma(part, sc, acc);
            it += 1;
        }
        it
    }

    /// [`gemm_sm90_fp8_block_mn`] with the partial accumulator double-buffered (the module's
    /// docs, "The double-buffered K loop"): block `k + 1`'s wgmmas issued into one `part`
    /// tile before block `k`'s, in the other, are waited for (`wgmma::wait(1)`) and promoted.
    /// Measured slower than [`gemm_sm90_fp8_block_mn`] (stop 61; the module's docs): kept
    /// `UNTIMED = 1`, so the host never chooses it.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = e4m3, TD = bf16), f16 = (TA = e4m3, TD = f16)),
                with = (
                    BM = 128,
                    BK = 128,
                    GROUP = 8,
                    BN = 128,
                    STAGES = 5,
                    EPI_N = 64,
                    UNTIMED = 1,
                ),
            ),
            product(
                types(f32 = (TA = e4m3, TD = f32)),
                with = (
                    BM = 128,
                    BK = 128,
                    GROUP = 8,
                    BN = 128,
                    STAGES = 4,
                    EPI_N = 32,
                    UNTIMED = 1,
                ),
            ),
        ),
    )]
    pub fn gemm_sm90_fp8_block_mn_dbl(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(KB, M4)] sa: Tensor<f32>,
        #[shape(NB, KB)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        static_assert(KB == cdiv(K, 128), "one scale per 128 columns of K");
        static_assert(
            M4 == cdiv(M, 4) * 4,
            "sa's rows hold M scales padded to a multiple of 4 (16-byte aligned)",
        );
        static_assert(NB == cdiv(N, 128), "one weight scale per 128 rows of B");
        static_assert(BK == 128, "a K tile is one scale block");
        static_assert(BM == 128, "a stage's scale box is the tile's 128 rows");
        static_assert(128 % BN == 0, "an N tile lies within one weight block");
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let sa_s = smem::<f32>([STAGES, 1, BM]);
        let sc_s = smem::<f32>([STAGES, 2, 64, 1], alias = sa_s);
        let acc = regs::<f32>([64, BN]);
        // The two partial accumulators, by turns: one in flight, the other promoted.
        let part0 = regs::<f32>([64, BN]);
        let part1 = regs::<f32>([64, BN]);
        let sc = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sb_t = regs::<f32>([1, 1], layout = stat(sc, axis = 0));
        let pipe = pipeline::<STAGES>(consumers = 8, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        mn_producer(pipe, a_s, b_s, sa_s, a, b, sa, pairs_m, tiles_n, k_tiles);
        mn_consumers_dbl(
            pipe, acc, part0, part1, sc, sb_t, sc_s, a_s, b_s, d_s, d, sb, pairs_m, tiles_n,
            k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_fp8_block_mn_dbl`]: [`mn_consumers`] with the
    /// K loop of [`consume_mn_dbl`].
    #[tile_fn]
    fn mn_consumers_dbl(
        pipe: Pipe,
        acc: Regs,
        part0: Regs,
        part1: Regs,
        sc: Regs,
        sb_t: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        sb: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                let nb = n * BN / 128;
                it = consume_mn_dbl(
                    pipe, it, acc, part0, part1, sc, sb_t, sc_s, a_s, b_s, sb, wg, nb, k_tiles,
                );
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// The double-buffered K loop of one tile (weight block row `nb`): block 0 issued into
    /// `part0`, then blocks `2j` (in `part0`) and `2j + 1` (in `part1`) each promoted behind
    /// the next block's MMAs ([`promote_mn_behind`]), and the tile closed by its last block
    /// (an odd count: in `part0`) or its last two ([`promote_mn_last`]); returns the pipeline
    /// iteration after the tile. K ≥ 1 (the launch planner refuses an empty dimension), so a
    /// tile has at least one block.
    #[tile_fn]
    fn consume_mn_dbl(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part0: Regs,
        part1: Regs,
        sc: Regs,
        sb_t: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        sb: Global,
        wg: u32,
        nb: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        acc = 0.0;
        sb_t = gather(sb, nb, 0);
        let s = pipe.consumer_wait(it);
        mma_stage(part0, a_s, b_s, s, wg, 0, true);
        for j in 0..(k_tiles - 1) / 2 {
            let k0 = 2 * j;
            let k1 = k0 + 1;
            it = promote_mn_behind(
                pipe, it, acc, part0, part1, sc, sb_t, sc_s, a_s, b_s, sb, wg, nb, k0,
            );
            it = promote_mn_behind(
                pipe, it, acc, part1, part0, sc, sb_t, sc_s, a_s, b_s, sb, wg, nb, k1,
            );
        }
        if k_tiles % 2 == 0 {
            let k = k_tiles - 2;
            it = promote_mn_behind(
                pipe, it, acc, part0, part1, sc, sb_t, sc_s, a_s, b_s, sb, wg, nb, k,
            );
            it = promote_mn_last(pipe, it, acc, part1, sc, sb_t, sc_s, wg);
        } else {
            it = promote_mn_last(pipe, it, acc, part0, sc, sb_t, sc_s, wg);
        }
        it
    }

    /// K block `k` (pipeline iteration `it`, its wgmmas in flight into `cur`, its weight
    /// scale in `sb_t`) promoted behind the next block's: block `k + 1`'s wgmmas issued into
    /// `next` once its stage is full; block `k`'s row scales read from its stage (still held)
    /// and multiplied by its weight scale; block `k + 1`'s weight scale gathered (a block
    /// before its promotion needs it); block `k`'s group waited for (`wgmma::wait(1)` keeps
    /// the newer one in flight); its stage released by each warp; `acc += cur · sc` while the
    /// tensor core works on `next`. Returns `it + 1`.
    #[tile_fn]
    fn promote_mn_behind(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        cur: Regs,
        next: Regs,
        sc: Regs,
        sb_t: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        sb: Global,
        wg: u32,
        nb: u32,
        k: u32,
    ) -> u32 {
        let s = pipe.consumer_wait(it + 1);
        mma_stage(next, a_s, b_s, s, wg, 0, true);
        copy(sc, sc_s[it % STAGES][wg]);
        sc = sc * sb_t;
        sb_t = gather(sb, nb, k + 1);
        wgmma::wait(1);
        if tid % 32 == 0 {
            pipe.consumer_release(it % STAGES);
        }
        acc = fma(cur, sc, acc);
        it + 1
    }

    /// A tile's last K block (pipeline iteration `it`, in flight into `cur`, its weight scale
    /// in `sb_t`): its row scales read and scaled, its group waited for, its stage released by
    /// each warp, promoted; returns `it + 1`.
    #[tile_fn]
    fn promote_mn_last(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        cur: Regs,
        sc: Regs,
        sb_t: Regs,
        sc_s: Smem,
        wg: u32,
    ) -> u32 {
        copy(sc, sc_s[it % STAGES][wg]);
        sc = sc * sb_t;
        wgmma::wait(0);
        if tid % 32 == 0 {
            pipe.consumer_release(it % STAGES);
        }
        acc = fma(cur, sc, acc);
        it + 1
    }
}
