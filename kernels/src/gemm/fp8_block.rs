//! The fine-grained block-scaled FP8 GEMM for Hopper, the DeepSeek-V3 recipe (DeepSeek-V3
//! technical report, arXiv 2412.19437, §3.3.2 "Improved Precision from Quantization and
//! Multiplication"): E4M3 operands with one f32 scale per 1×128 block of A (activations: a row
//! and 128 consecutive K) and one per 128×128 block of B (weights), and
//!
//! D[m, n] = Σ_kb (A_kb · B_kbᵀ)[m, n] · sa[m, kb] · sb[n / 128, kb]
//!
//! with `sa` f32 [M, cdiv(K, 128)] (what `quant_block` writes, `row_kernels/quant.rs`) and `sb`
//! f32 [cdiv(N, 128), cdiv(K, 128)], row-major. BF16, FP16 or FP32 outputs. With `sa` given
//! MN-major, [cdiv(K, 128), 4·cdiv(M, 4)], `fp8_block_mn.rs` loads the scales by TMA and needs
//! no scale warps (`Epilogue::ScaleBlocksMn`).
//!
//! What it adds to `fp8.rs`: the scales vary along K, so they cannot wait for the epilogue.
//! Each 128-wide K block's four `wgmma.mma_async.m64n128k32.f32.e4m3.e4m3` (PTX ISA
//! §9.7.15.5.2) accumulate into a fresh f32 register tile `part` (scale-d = 0 on the first of
//! the four), and after `wgmma.wait_group 0` the consumer promotes it into the main f32
//! accumulator in registers, `acc += part · (sa[row, kb] · sb[nb, kb])` — per element one
//! `fma.rn.f32` with the row's combined scale. The report's second point comes with it: the
//! tensor core's FP8 adder (about 14 bits on the H800, "a maximum relative error of nearly
//! 2%" at K = 4096) only ever sums 128 products before they are promoted into full f32.
//!
//! The scales of a K block go through shared memory, staged by the producer warpgroup's warps
//! 1–3 (idle in `cluster_producer`, whose warp 0 issues the TMA loads): the **scale warps**
//! (`scale_producer`) walk the same tiles as the TMA thread, each every third pipeline
//! iteration (warp 1 + w takes the K blocks whose iteration is ≡ w mod 3, counted over the
//! CTA's whole tile walk, not afresh in each tile), and for a block load the tile's 128 row
//! scales `sa[rows, kb]` (two `[64, 1]` tiles, one per consumer warpgroup, two rows a lane;
//! `copy` from `sa.tile(..)`, so rows past M read 0 exactly
//! as the consumers' guarded gathers did) and the weight scale `sb[nb, kb]` (one scalar per
//! (CTA, kb), since the 128-wide N tile lies within one 128×128 weight block), multiply them,
//! and once the stage is free (`producer_acquire`, the empty barrier the TMA thread waits on)
//! store the products, 512 bytes, into the stage's `sc_s[s]` and arrive on the stage's **full
//! barrier**: the pipeline is declared with `writers = 32`, so that barrier expects the TMA
//! thread's `arrive.expect_tx` and one scale warp's 32 `mbarrier.arrive` (each lane's arrive
//! releases its own `st.shared`, PTX ISA §9.7.13.15.13; the consumers' `try_wait` acquires
//! them, §9.7.13.15.16). The loads come before the acquire, so their latency overlaps the wait
//! for the stage; three warps keep three blocks' loads in flight, since one warp, waiting for
//! each block's loads before storing it, would supply one block per L2 latency — about what the
//! consumers take to use one. Each stage's uses are filled in order whichever warp fills them
//! (a use's acquire waits for the previous use's release). A warp is never two phases ahead
//! of a barrier only while its consecutive iterations are at most `STAGES` apart: its
//! acquire of iteration `j` waits on a parity (`mbarrier.try_wait.parity`, §9.7.13.15.16),
//! which the release of `j − 2·STAGES` shows as well as that of `j − STAGES`, and only the
//! releases up to its previous iteration minus `STAGES` are known to have happened. Hence
//! the rotation over the whole walk (a gap of exactly 3, `STAGES ≥ 3` asserted): until
//! 2026-12-06 each warp took blocks `w, w + 3, …` afresh in every tile, so with a K-block
//! count ≡ 2 (mod 3) warp 3 jumped 5 iterations at a tile's end (block `K − 3` to block 2 of
//! the next tile), more than `f32`'s four stages; its acquire passed on a still-running use
//! of the stage, it overwrote that use's scales and arrived on its full barrier — an
//! unspecified launch failure on the H100 at 4096³ (32 K blocks, several tiles a CTA), an
//! mbarrier over-arrival in the emulator (`tests/sim_fp8_block.rs`,
//! `the_scale_warps_keep_their_turns_across_tiles_with_four_stages`).
//! A consumer then reads its block's combined scales with `copy(sc, sc_s[s][wg])`: two
//! `ld.shared.f32` a thread, no guard, no 64-bit address, after the full barrier it waits on
//! anyway. Those reads are each warp's own
//! (the wgmmas' are the warpgroup's, complete at `wgmma::wait(0)`), so each consumer warp
//! releases the stage itself, after them (`consumers = 8`, lane 0 of each warp, as DeepGEMM's
//! consumers do): with one release a warpgroup, the emulator ran a lagging warp that read the
//! next round's scale, already stored by a scale warp. K tails need nothing: every K
//! block `kb < cdiv(K, 128)` has its scales, and a partial block's scale applies to the
//! products that exist. Before 2026-12-06's branch fp8blk each consumer thread loaded them
//! itself, one block ahead, with four guarded `ld.global` and their 64-bit addresses
//! (`gather(sa, rows, kb + 1, oob = zero)`, `gather(sb, nb, kb + 1)`).
//!
//! The rest is `fp8.rs`'s (the production GEMM's, level 8): a producer warpgroup multicasting
//! B halves in a 2×1 cluster through a TMA/mbarrier pipeline, two consumer warpgroups of 64
//! rows each, the persistent grouped tile walk and the TMA-store epilogue, from
//! `gemm/pieces.rs`. The stage is released as soon as its wgmmas are waited for (one K block's
//! MMAs are never in flight across the promotion, as in DeepGEMM's loop; the two consumer
//! warpgroups' MMAs and promotions interleave).
//!
//! Tails: TMA zero-fills A's and B's boxes past M, N and K (so a partial last K block adds
//! zeros, and its scale applies to the products that exist), rows of `sa` past M load as 0
//! (the scale warps' edge path), and D's stores clip. K must make A's and B's rows 16-byte aligned (K a multiple of 16).
//! The launch planner refuses `sa`/`sb` of any other shape than `[M, cdiv(K, 128)]` and
//! `[cdiv(N, 128), cdiv(K, 128)]` (the `static_assert`s) before any launch.
//!
//! `tirx check` (ptxas 13.5 `-arch=sm_90a`, 2026-12-06, branch fp8blk): every config clean,
//! 168 registers (the launch's; the scale warps' loops stay within R31 of the producer's 40),
//! 0 spills; SASS `QGMMA.64x128x32.F32.E4M3.E4M3` ×4 and 64 `FFMA` a K block (the promotion),
//! `tests/sim_fp8_block.rs` asserts them. Emulator-verified. The K loop's body, counted in
//! nvdisasm's listing as the innermost loop holding the `QGMMA`s (label to back branch), is
//! **123** SASS instructions a warp and K block for `default` and `f16` (`default`: 141 before
//! the scales went through shared memory, 170 before branch fp8k), 122 for `f32` (143 before),
//! 130 for `ping` (148): besides the 64 `FFMA` and 4 `QGMMA`, the pipeline's wait and release and
//! the descriptors (~35, as in `fp8.rs`'s loop of 51) and the scales' two `LDS` with their
//! address (~10: ptxas recomputes the thread's row from `%tid.x` each block). The four
//! guarded `LDG`s, their 64-bit addresses and predicates are gone from the consumers.
//!
//! **Prediction** for the shared-memory scales (made before any measurement; the lead measures
//! on the H100/H200): +2–6 % over the 938 / 998 / 961 / 831 TFLOP/s below, i.e. about 0.80–0.85
//! of cuBLASLt, not 1.0. Why so little: the loads were already issued between the commit and
//! the wait, in the MMAs' shadow, so what goes is issue slots the other warpgroup's promotion
//! competed for (two warps of each SMSP share it) and the register-dependency wait on a late
//! scale, not time on the critical path (full barrier → wgmmas → wait → 64 FFMA → release).
//! What holds the kernel at ~0.8 is that path's serialisation: both warpgroups wait on the same
//! full barrier, issue together, drain the tensor core together and promote together. The
//! risk on the other side: the scale warps must supply a block in the ~550–700 cycles the
//! consumers take for one; three warps, each with one block's loads in flight, have about three
//! L2 latencies for it. If the measurement shows the full barrier's wait grown (ncu: samples
//! at the consumers' `SYNCS.PHASECHK` rather than `WARPGROUP.DEPBAR`), that is where to look.
//! `f32` has four stages now (the scales' 2.5 KB do not fit beside five stages and the 64 KB
//! f32 staging tile in 227 KB): expect it a few percent behind its five-stage self at the
//! large shapes.
//!
//! Measured on an H100 on 2026-12-06 after two changes to the K loop
//! (`docs/perf/h100-2026-12-06-stop48.md`): the weight scale's load no longer copied into the
//! statistic's second register at once (a compiler change: each register of a gathered tile
//! is loaded itself), and the next block's scales are gathered while the block's MMAs run
//! rather than before them — 938 / 998 / 961 / 831 TFLOP/s at 4096³ / 8192³ /
//! 4096×7168×16384 / 4096×2112×7168 (from 875 / 890 / 901 / 753), 0.75–0.82 of cuBLASLt. ncu
//! before the second change: 178 SASS instructions a warp and K block, the tensor pipe 52.6 %
//! busy.
//!
//! **Where the rest goes** (H100, 2026-12-07, `docs/perf/h100-2026-12-07-stop57.md` §1):
//! 1023.8 / 1034.8 TFLOP/s at 4096³ / 8192³ (0.891 / 0.826 of cuBLASLt's block-scaled
//! 1148.7 / 1253.0), while `gemm_sm90_fp8_rowwise/promoted` — the same tile, pipeline and
//! promotion without the scales, six stages — ran 1158.0 / 1235.2. ncu's stall sampling by
//! SASS line at 4096³: ~830 cycles a K block against the tensor core's 512; of the consumer
//! warps' samples about 42 % wait for their own wgmmas (`WARPGROUP.DEPBAR`), 35 % issue the
//! promotion and the loop's bookkeeping (the `FFMA`s stall on dispatch: they share the
//! register file with the other warpgroup's running `QGMMA`), and only 7 % wait on the full
//! barrier — the scale warps keep up. The loss is the phase lock described under the
//! prediction above (both warpgroups promote while no wgmma is queued), which the `ping` and
//! `overlap` schedules did not break (976.6 and 836.1 at 4096³ in the same run). Still open:
//! which part of the 12–16 % behind the promoted kernel the scales cost (the diagnostic
//! configs of `kernels/bench/device/diag57_fp8_block.patch`, ready to run by `session57f`).
//!
//! Design notes: 128×128 tiles (BN = 128, two 64-row consumer warpgroups) keep `acc` and
//! `part` at 64 registers each a thread; a BN = 256 tile would need 256 accumulator
//! registers and spill. `gemm_sm90_fp8_block` waits for its block's wgmmas (`wgmma::wait(0)`)
//! before promoting, so a warpgroup has no MMAs queued while it promotes;
//! `gemm_sm90_fp8_block_overlap` keeps the next block's in flight in a second `part` tile.
//!
//! ## The overlapped schedule (`gemm_sm90_fp8_block_overlap`, config `default`)
//!
//! Measured on an H100 on 2026-12-06 (cuBLASLt 13.1, same process, inputs rotated past L2),
//! `gemm_sm90_fp8_block/default` reaches 854–880 TFLOP/s at the large shapes against
//! cuBLASLt's block-scaled 1172–1300 (ratio 0.68–0.73), while the row-wise `fp8.rs`, the
//! same pipeline with the scales in the epilogue, reaches 1288–1315. The difference is the
//! promotion's place in the K loop: each warpgroup issues block `kb`'s four wgmmas, waits for
//! all of them, promotes, and only then issues block `kb + 1`'s; its MMAs are never queued
//! across its own wait and promotion, and the other warpgroup's single group is all the
//! tensor core has then.
//!
//! The overlapped K loop keeps one group queued at all times. Two `part` tiles take turns:
//! block `kb + 1`'s wgmmas are issued into one (`issue_block`: the full-barrier wait, fence,
//! four m64n128k32, commit) **before** block `kb`'s, in the other, are waited for with
//! `wgmma::wait(1)` (PTX ISA §9.7.15.7.4: all but the most recent group complete) — then
//! block `kb`'s stage is released and `acc += part · sc` runs on the FMA pipe while the
//! tensor core works on block `kb + 1` (`promote_behind`). This is the language's ordinary
//! `wgmma::wait(n)`: `check-wgmma-registers` follows the groups in order and proves that
//! the promotion reads only the retired tile. A tile's blocks are walked in pairs (block
//! `2j` in `part0`, `2j + 1` in `part1`) so that every wgmma names its tile statically;
//! the last block, or the last two (an even count), close the tile with `wgmma::wait(0)`
//! (`promote_last`). Each warpgroup now holds two K stages at once (the one being promoted
//! and the one in flight), so the ring has six stages (6 × 32 KB + the 32 KB staging tile
//! = 226 KB of the 227), keeping four loads ahead as the five-stage kernel keeps three to
//! four. The scales are gathered by the consumers one block ahead (as `gemm_sm90_fp8_block`'s
//! were before they went through shared memory), and a block's
//! scale is formed after the next block's MMAs are issued, so a late scale load delays the
//! promotion, never the tensor core. BF16 output only (an f32 staging tile, 64 KB, leaves
//! room for five stages: `gemm_sm90_fp8_block/f32`'s footprint).
//!
//! `tirx check` (ptxas 13.5 `-arch=sm_90a`, 2026-12-06): 0 spills; ptxas reports the
//! launch's 168 registers (384 threads), the consumers reach R217 (218 of the 232 that
//! `setmaxnreg` gives them: 64 `acc` + 2 × 64 `part` + the scales, addresses and counters;
//! `gemm_sm90_fp8_block` reaches R145); SASS `QGMMA.64x128x32.F32.E4M3.E4M3` ×16 (four issue
//! sites of four), `WARPGROUP.DEPBAR.LE gsb0, 0x1` before each overlapped promotion, whose 64
//! `FFMA` read the retired tile's registers while the newer group's write the other's (no
//! wait injected or wgmma serialized: `check_artifact`'s `pipeline_losses`, ptxas's notes,
//! are empty). `tests/sim_fp8_block.rs` asserts these and runs it in the emulator at 1, 2,
//! 3, 4, 6 and 9 K blocks. The host's cost model ranks it
//! level with `gemm_sm90_fp8_block/default` (same tiles) and the tie goes to the smaller
//! footprint, the five-stage kernel; measurement decides (`tirx tune`).
//!
//! **Prediction** (made before the measurement below): 1100–1200 TFLOP/s at 4096³, 8192³ and 4096×7168×16384
//! (0.9–1.0× cuBLASLt; about +30 %), about 950 at 4096×2112×7168 (544 tiles, 4.1 waves of
//! 132). Why: with a group always queued per warpgroup the tensor core should be as busy as
//! in a row-wise kernel of the same 128×128 cooperative tile — the cost model's efficiency
//! 0.92 (`request.rs`, measured on the H200 for BF16, 2026-11-30) of the row-wise 128×256
//! tile's 1288–1315 on the H100 — since the promotion's 64 FFMA a thread a block (128 issue
//! cycles a scheduler for its two consumer warps) fit well inside the block's eight
//! m64n128k32 wgmmas (about 512 tensor cycles at peak). What may keep it below: the FFMAs
//! share the register file's ports with the QGMMAs' accumulators, and cuBLASLt may run a
//! wider tile. A wider tile does not fit with two `part` tiles: 64×160 a warpgroup is
//! 3 × 80 = 240 registers before the scales and addresses, and ping-pong's 128×128 a
//! warpgroup (`fp8_pingpong.rs`'s `m128`) 3 × 128.
//!
//! **Measured** (H100, 2026-12-06, `docs/perf/h100-2026-12-06-stop47.md`): prediction missed —
//! 784.6 / 800.9 / 827.9 / 709.8 TFLOP/s at 4096³ / 8192³ / 4096×7168×16384 / 4096×2112×7168,
//! 4–6 % *below* `gemm_sm90_fp8_block/default` (829.9 / 848.1 / 882.7 / 744.6), against
//! cuBLASLt's 1130–1300. ncu at 4096³: the SM's compute throughput 48.5 % (51.5 % for the
//! waiting kernel), neither memory nor issue bound — the exposed promotion is not what
//! limits the 128×128 tile. Kept as the measured alternative; the host does not choose it.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// D = Σ_kb (A_kb·B_kbᵀ)·sa[:, kb]·sb[nb, kb] (the module's docs): A M×K and B N×K in
    /// E4M3, `sa` [M, KB] and `sb` [NB, KB] f32, D in `TD`.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = e4m3, TD = bf16)),
                tile(default = (PING = 0), ping = (PING = 1)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 64),
            ),
            product(
                types(f16 = (TA = e4m3, TD = f16)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 64, PING = 0),
            ),
            product(
                types(f32 = (TA = e4m3, TD = f32)),
                with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 4, EPI_N = 32, PING = 0),
            ),
        ),
    )]
    pub fn gemm_sm90_fp8_block(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, KB)] sa: Tensor<f32>,
        #[shape(NB, KB)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        static_assert(KB == cdiv(K, 128), "one scale per 128 columns of K");
        static_assert(NB == cdiv(N, 128), "one weight scale per 128 rows of B");
        static_assert(BK == 128, "a K tile is one scale block");
        static_assert(128 % BN == 0, "an N tile lies within one weight block");
        // A scale warp's consecutive pipeline iterations are 3 apart (`scale_blocks`); its
        // parity-based acquire is exact only while that gap is at most the stage count.
        static_assert(STAGES >= 3, "three scale warps take turns over the stages");
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        // A stage's combined scales sa[row, kb] · sb[nb, kb], one 64-row half per consumer
        // warpgroup, written by a scale warp (`scale_producer`): its 32 lanes arrive on the
        // stage's full barrier beside the TMA thread's `arrive.expect_tx` (`writers = 32`).
        let sc_s = smem::<f32>([STAGES, 2, 64, 1]);
        let acc = regs::<f32>([64, BN]);
        let part = regs::<f32>([64, BN]);
        let sc = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        // The scale warps' tiles (a register tile belongs to the scope that uses it): one
        // `[64, 1]` tile per consumer warpgroup's rows, for each of the three warps.
        let x0 = regs::<f32>([64, 1], layout = blocked(vec = 1, threads = 32));
        let x1 = regs::<f32>([64, 1], layout = blocked(vec = 1, threads = 32));
        let y0 = regs::<f32>([64, 1], layout = blocked(vec = 1, threads = 32));
        let y1 = regs::<f32>([64, 1], layout = blocked(vec = 1, threads = 32));
        let z0 = regs::<f32>([64, 1], layout = blocked(vec = 1, threads = 32));
        let z1 = regs::<f32>([64, 1], layout = blocked(vec = 1, threads = 32));
        // Each consumer warp releases a stage itself (`consumers` = 2 warpgroups × 4 warps):
        // its lanes read the stage's scales with plain `ld.shared`, which a warpgroup leader's
        // release would not order for the other three warps (`consume_blocks`).
        let pipe = pipeline::<STAGES>(consumers = 8, peers = 2, writers = 32);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        scale_producer(
            pipe, sc_s, x0, x1, y0, y1, z0, z1, sa, sb, pairs_m, tiles_n, k_tiles,
        );
        block_scaled_consumers(
            pipe, acc, part, sc, sc_s, a_s, b_s, d_s, d, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The scale warps (warps 1–3 of the producer warpgroup, idle in `cluster_producer`): each
    /// walks the same tiles as the TMA thread and takes every third pipeline iteration of the
    /// walk ([`scale_blocks`]), so three blocks' loads are in flight at once — one warp, whose
    /// loop waits for each
    /// block's loads, would supply a block per load latency (several hundred cycles from L2
    /// under the TMA traffic), about what the consumers take for one.
    #[tile_fn]
    fn scale_producer(
        pipe: Pipe,
        sc_s: Smem,
        x0: Regs,
        x1: Regs,
        y0: Regs,
        y1: Regs,
        z0: Regs,
        z1: Regs,
        sa: Global,
        sb: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warp = 1)]
        {
            scale_blocks(pipe, sc_s, x0, x1, sa, sb, pairs_m, tiles_n, k_tiles, 0);
        }
        #[scope(warp = 2)]
        {
            scale_blocks(pipe, sc_s, y0, y1, sa, sb, pairs_m, tiles_n, k_tiles, 1);
        }
        #[scope(warp = 3)]
        {
            scale_blocks(pipe, sc_s, z0, z1, sa, sb, pairs_m, tiles_n, k_tiles, 2);
        }
    }

    /// One scale warp's share: the pipeline iterations ≡ `turn` (mod 3) of the CTA's walk —
    /// in a tile whose first iteration is `base`, K blocks `k0`, `k0 + 3`, … with
    /// `base + k0 ≡ turn`. Counted over the walk, not afresh in each tile, so that the warp's
    /// consecutive iterations are always 3 apart: a gap over `STAGES` would let its
    /// parity-based acquire pass two phases early (the module's docs). For each block, the
    /// tile's 128 row scales `sa[rows, kb]` (a `[64, 1]` tile per consumer warpgroup, two a
    /// lane; rows past M read 0) and the weight block's `sb[nb, kb]`, multiplied, and — once
    /// the stage is free (`producer_acquire`: the same empty barrier the TMA thread waits on)
    /// — the products stored into the stage's `sc_s` and the warp's 32 arrivals on its full
    /// barrier (the pipeline's `writers = 32`: each lane's `mbarrier.arrive` releases its own
    /// stores, PTX ISA §9.7.13.15.13). The loads come before the acquire, so their latency
    /// overlaps the wait for the stage. The pipeline iteration of block `k` is the tile's
    /// first (`base`) plus `k`: each stage's uses are filled in order whichever warp fills
    /// them, since a use's acquire waits for the previous use's release.
    #[tile_fn]
    fn scale_blocks(
        pipe: Pipe,
        sc_s: Smem,
        w0: Regs,
        w1: Regs,
        sa: Global,
        sb: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
        turn: u32,
    ) {
        let mut base = 0;
        for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
            let (mp, n) = grouped(u, pairs_m, tiles_n);
            let row = 2 * (2 * mp + cta_rank);
            let nb = n * BN / 128;
            let k0 = (turn + 3 - base % 3) % 3;
            for k in (k0..k_tiles).step_by(3) {
                copy(w0, sa.tile(row, k));
                copy(w1, sa.tile(row + 1, k));
                w0 = w0 * gather(sb, nb, k);
                w1 = w1 * gather(sb, nb, k);
                let s = pipe.producer_acquire(base + k);
                copy(sc_s[s][0], w0);
                copy(sc_s[s][1], w1);
                pipe.full(s).arrive();
            }
            base += k_tiles;
        }
    }

    /// The consumer warpgroups of [`gemm_sm90_fp8_block`]: level 8's, with the K loop of
    /// [`consume_blocks`].
    #[tile_fn]
    fn block_scaled_consumers(
        pipe: Pipe,
        acc: Regs,
        part: Regs,
        sc: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            // PING (config `ping`; measured 4 % slower than without at four shapes on the
            // H100, 2026-12-06, so the host never chooses it — the two warpgroups draining the
            // tensor core together is not what holds this kernel back):
            // the warpgroups issue their K blocks' wgmmas by turns (named barrier 3 + wg
            // is warpgroup wg's turn, passed on once its group is committed), so one
            // warpgroup's wait and promotion run while the other's group holds the tensor
            // core instead of both draining it at once. Warpgroup 0 takes the first turn and,
            // after its last tile, the turn warpgroup 1 passes after its last group.
            let any = cta.x / 2 < pairs_m * tiles_n;
            if PING == 1 && wg == 1 && any {
                named_barrier_arrive(3, 256);
            }
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                it = consume_blocks(pipe, it, acc, part, sc, sc_s, a_s, b_s, wg, k_tiles);
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            if PING == 1 && wg == 0 && any {
                named_barrier(3, 256);
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// A consumer warpgroup's K loop of one tile: per K block, the block's combined scales
    /// from shared memory into `sc`, its wgmmas into a fresh `part`, the wait, the stage
    /// released, and `acc += part · sc`; returns the pipeline iteration after the tile.
    #[tile_fn]
    fn consume_blocks(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part: Regs,
        sc: Regs,
        sc_s: Smem,
        a_s: Smem,
        b_s: Smem,
        wg: u32,
        k_tiles: u32,
    ) -> u32 {
        // One release a warp, after its own reads of the stage (the wgmmas' reads are the
        // warpgroup's and done at `wgmma::wait(0)`; the scales' `ld.shared` are each warp's,
        // so a warpgroup leader's release could let a scale warp overwrite them before a
        // lagging warp has read them — the emulator showed it, a row of warp 1 with the next
        // round's scale). DeepGEMM's consumers release per warp too.
        let leader = tid % 32 == 0;
        let mut it = it;
        acc = 0.0;
        for _k in 0..k_tiles {
            // The stage's full barrier counts a scale warp's arrivals too, so once it
            // completes the scales are in `sc_s[s]`.
            let s = pipe.consumer_wait(it);
            if PING == 1 {
                named_barrier(3 + wg, 256);
            }
            wgmma::fence();
            wgmma::mma(part, a_s[s][wg], b_s[s], accumulate = false);
            wgmma::commit();
            if PING == 1 {
                named_barrier_arrive(3 + (wg + 1) % 2, 256);
            }
            // Read while the MMAs run: its address arithmetic and two `ld.shared` (no guard,
            // no branch) stay off the path from the full barrier to the first wgmma.
            copy(sc, sc_s[s][wg]);
            wgmma::wait(0);
            if leader {
                pipe.consumer_release(s);
            }
            acc = fma(part, sc, acc);
            it += 1;
        }
        it
    }

    /// [`gemm_sm90_fp8_block`] with the promotion overlapped with the MMAs (the module's
    /// docs, "The overlapped schedule"): two `part` tiles by turns, block `kb + 1`'s wgmmas
    /// issued into one before block `kb`'s, in the other, are waited for (`wgmma::wait(1)`)
    /// and promoted.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(product(
            types(default = (TA = e4m3, TD = bf16)),
            with = (BM = 128, BK = 128, GROUP = 8, BN = 128, STAGES = 6, EPI_N = 64),
        )),
    )]
    pub fn gemm_sm90_fp8_block_overlap(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(M, KB)] sa: Tensor<f32>,
        #[shape(NB, KB)] sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        static_assert(KB == cdiv(K, 128), "one scale per 128 columns of K");
        static_assert(NB == cdiv(N, 128), "one weight scale per 128 rows of B");
        static_assert(BK == 128, "a K tile is one scale block");
        static_assert(128 % BN == 0, "an N tile lies within one weight block");
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let part0 = regs::<f32>([64, BN]);
        let part1 = regs::<f32>([64, BN]);
        let sa_t = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sb_t = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let sc = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        overlapped_consumers(
            pipe, acc, part0, part1, sa_t, sb_t, sc, a_s, b_s, d_s, d, sa, sb, pairs_m, tiles_n,
            k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_fp8_block_overlap`]: [`block_scaled_consumers`]
    /// with the K loop of [`consume_blocks_overlapped`].
    #[tile_fn]
    fn overlapped_consumers(
        pipe: Pipe,
        acc: Regs,
        part0: Regs,
        part1: Regs,
        sa_t: Regs,
        sb_t: Regs,
        sc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        sa: Global,
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
                it = consume_blocks_overlapped(
                    pipe, it, acc, part0, part1, sa_t, sb_t, sc, a_s, b_s, sa, sb, wg, row, n,
                    k_tiles,
                );
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// The overlapped K loop of one tile (D rows `row`, 64-row units; columns `n`, BN-column
    /// units): block 0 issued into `part0`, then blocks `2j` (in `part0`) and `2j + 1` (in
    /// `part1`) each promoted behind the next block's MMAs ([`promote_behind`]), and the
    /// tile closed by its last block (an odd count: in `part0`) or last two
    /// ([`promote_last`]); returns the pipeline iteration after the tile.
    #[tile_fn]
    fn consume_blocks_overlapped(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        part0: Regs,
        part1: Regs,
        sa_t: Regs,
        sb_t: Regs,
        sc: Regs,
        a_s: Smem,
        b_s: Smem,
        sa: Global,
        sb: Global,
        wg: u32,
        row: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let nb = n * BN / 128;
        let mut it = it;
        acc = 0.0;
        copy(sa_t, sa.tile(row, 0));
        sb_t = gather(sb, nb, 0);
        issue_block(pipe, it, part0, a_s, b_s, wg);
        for j in 0..(k_tiles - 1) / 2 {
            let k0 = 2 * j;
            let k1 = k0 + 1;
            it = promote_behind(
                pipe, it, acc, part0, part1, sa_t, sb_t, sc, a_s, b_s, sa, sb, wg, row, nb, k0,
            );
            it = promote_behind(
                pipe, it, acc, part1, part0, sa_t, sb_t, sc, a_s, b_s, sa, sb, wg, row, nb, k1,
            );
        }
        if k_tiles % 2 == 0 {
            let k = k_tiles - 2;
            it = promote_behind(
                pipe, it, acc, part0, part1, sa_t, sb_t, sc, a_s, b_s, sa, sb, wg, row, nb, k,
            );
            it = promote_last(pipe, it, acc, part1, sa_t, sb_t, sc);
        } else {
            it = promote_last(pipe, it, acc, part0, sa_t, sb_t, sc);
        }
        it
    }

    /// Pipeline iteration `it`'s K block: its wgmmas into a fresh `part`, committed as one
    /// group, not waited for.
    #[tile_fn]
    fn issue_block(pipe: Pipe, it: u32, part: Regs, a_s: Smem, b_s: Smem, wg: u32) {
        let s = pipe.consumer_wait(it);
        wgmma::fence();
        wgmma::mma(part, a_s[s][wg], b_s[s], accumulate = false);
        wgmma::commit();
    }

    /// K block `k` (pipeline iteration `it`, its wgmmas in flight into `cur`) promoted behind
    /// the next block's: block `k + 1`'s wgmmas issued into `next`, block `k`'s scale formed
    /// and block `k + 1`'s loaded, block `k`'s group waited for (`wgmma::wait(1)` keeps the
    /// newer one in flight), its stage released and `acc += cur · sc` while the tensor core
    /// works on `next`; returns `it + 1`.
    #[tile_fn]
    fn promote_behind(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        cur: Regs,
        next: Regs,
        sa_t: Regs,
        sb_t: Regs,
        sc: Regs,
        a_s: Smem,
        b_s: Smem,
        sa: Global,
        sb: Global,
        wg: u32,
        row: u32,
        nb: u32,
        k: u32,
    ) -> u32 {
        issue_block(pipe, it + 1, next, a_s, b_s, wg);
        sc = sa_t * sb_t;
        copy(sa_t, sa.tile(row, k + 1));
        sb_t = gather(sb, nb, k + 1);
        wgmma::wait(1);
        if tid % 128 == 0 {
            pipe.consumer_release(it % STAGES);
        }
        acc = fma(cur, sc, acc);
        it + 1
    }

    /// A tile's last K block (pipeline iteration `it`, in flight into `cur`): waited for,
    /// its stage released, promoted; returns `it + 1`.
    #[tile_fn]
    fn promote_last(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        cur: Regs,
        sa_t: Regs,
        sb_t: Regs,
        sc: Regs,
    ) -> u32 {
        sc = sa_t * sb_t;
        wgmma::wait(0);
        if tid % 128 == 0 {
            pipe.consumer_release(it % STAGES);
        }
        acc = fma(cur, sc, acc);
        it + 1
    }
}
