//! Split-K GEMM, Hopper: for the skinny and decode shapes (M or N small, K long) whose output
//! tiles are too few to fill 132 SMs, the K range of each output tile is split over `S` CTAs.
//!
//! Two launches, both ordinary kernels of the language:
//! 1. [`kernels::gemm_sm90_splitk`] (`solves = gemm`, the `partial` epilogue): CTA
//!    `(x, y, z)` multiplies the 64×BN tile `(y, x)` over the z-th slice of the K tiles and
//!    stores its f32 accumulator into slice `z` of the workspace `w` [S, M, N]. Slice `z` is K
//!    tiles `⌊z·T/S⌋ … ⌊(z+1)·T/S⌋` of `T = ⌈K/BK⌉` — every slice holds at least one tile when
//!    `S ≤ T` (the host refuses more, `host::split_plan`), and no slice needs K to be a multiple
//!    of `S·BK`: TMA zero-fills the columns past K in the last tile.
//! 2. [`reduce::splitk_reduce`] / [`reduce::splitk_reduce_scaled`]: each CTA sums the `S`
//!    partials of an `R × C` block of D in one fixed order (`reduce`'s `sum_slices`: the result
//!    does not depend on which CTA finished first, deterministic), applies the epilogue (α, and
//!    β·C in the scaled form; bias and activation in the fused form, `splitk_reduce_bias`,
//!    `pieces.rs`' `bias_act`; and a residual after them, `splitk_reduce_bias_res`),
//!    rounds to D's type and stores it, tails in both dimensions masked.
//!
//! Configs: `n256` (5 stages of a 64×64 A box and a 256×64 B box: 160 KB of B in flight per
//! CTA, the deepest stream of B, for decode shapes whose time is B's bytes), `default` (BN =
//! 128, 6 stages), `n64` (8 stages; more tiles where N is small), `m128n64` (BM = 128: the one
//! consumer warpgroup's 128×64 accumulator, two `m64n64k16` wgmmas a K step, 64 registers a
//! thread; 8 stages of 16 + 8 KB) for M of 65…128, whose 64-row tiles would read B once per
//! row block. Measured on an H100 (2026-12-07, `docs/perf/h100-2026-12-07-stop53.md`): the
//! fastest config at 128×4096×4096 (206.2 TFLOP/s, 0.905 of cuBLASLt; `gemm_sm90_ws/n64`
//! 0.981 of it) and at 128×4096×14336 (293.2, 1.031 of cuBLASLt, the host's choice). The
//! host's model (`split.rs`, `request::pull_rate`) weighs each config's bytes in flight.
//!
//! The partial kernel is the ladder's level 4 with BM = 64 (a decode M of 1…64 wastes less of
//! the tile), the producer's K loop offset to its slice, and the consumers' K loop
//! ([`super::pieces`]'s `consume`, one wgmma group in flight) unchanged. The reduce kernels are
//! row-kernel style: `blocked` register tiles of 16-byte f32 runs.
//!
//! **NN (B given K×N).** The partial kernel's `nn` configs (`nn`, `nn_n64`, `nn_n256` and
//! their `f16` forms: the config entry `MB = mn`) declare `b` `#[major(MB)]` and its shared
//! tile `major = MB`, as `gemm_sm90_ws`'s `nn` configs do: the producer's one `tma::load` of
//! a stage's B becomes one `[BK, 64]` box per 64 columns of N, and wgmma reads the tile
//! transposed (its transpose-B bit). The same stage bytes, the same workspace [S, M, N] and the
//! same reduces (which never see B) make the NN plan, so the host plans and ranks it as the TN
//! one (`split.rs`); N must be a multiple of 8 (B's rows 16-byte aligned for TMA, as for every
//! NN kernel). Verified in the emulator (`tests/sim_splitk.rs`) and on an H100 (stop 54,
//! `docs/perf/h100-2026-12-07-stop54.md`: `gpu_splitk`'s NN tests pass; 64×8192×8192 0.962 of
//! cuBLASLt NN, 0.786 before, 16×4096×4096 1.007). The decode plan below has `nn` configs too.
//!
//! **The decode (GEMV-class) plan, M ≤ 16.** [`kernels::gemm_sm90_splitk_t`] computes each
//! slice transposed, `w[z] = B·Aᵀ` into `w` [S, N, M]: B's rows fill the 64-row side of
//! `wgmma.m64n16k16` and A's 1…16 rows its N = 16 side, so a stage is 8 KB of B beside 2 KB of
//! A (the untransposed kernel at M = 1 carries a 64-row A box of TMA zero fill in every
//! stage) and `STAGES` = 20 (`m16`, one CTA an SM) or 10 (`m16_s10`, two) keep about 160 KB
//! of B in flight per SM. This is how cuBLAS organises its decode GEMM on Hopper (the kernel
//! torch ran at 1×8192×8192 in our ncu profile, `nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT`: a
//! 64×8 tile whose 64 rows are B's, `docs/perf/decode-splitk-h200.md`); the code is ours. The
//! transposing reduces ([`reduce::splitk_reduce_t`] and its `_scaled`, `_bias`, `_bias_res`
//! forms) sum an `R × MT` block of the slices in the same fixed order, then write D's rows one
//! by one: row `m` of the block is column `m` of the sum, taken out by a row reduction of the
//! masked tile into an `[R, 1]` statistic and stored as `R` consecutive elements of D seen as
//! `[M, N, 1]` (C and R are read the same way, the bias as the block's column statistic).
//! The transposed plan takes NN too (`nn_m16`, `nn_m16_s10` and their `f16` forms: the config
//! entry `MB = mn`): B given K×N is the MMA's A operand MN-major, `b` declared `#[major(MB)]`
//! and its shared tile `major = MB`, so the producer's load of a stage's B is one `[BK, 64]`
//! box of the K×N tensor and wgmma reads it transposed (its `imm-trans-a`, PTX ISA
//! §9.7.15.5.1.2: for `.f16`/`.bf16` an A in shared memory may be M-major). The stage bytes,
//! the workspace [S, N, M] and the transposing reduces are the TN plan's, so the host ranks
//! an NN decode request's `nn_m16*` as it ranks TN's `m16*` (`split.rs`); N must be a multiple
//! of 8, as above. Until then an NN decode request took the untransposed `nn` plan (0.55–0.62
//! of cuBLASLt at M = 1…16); the NN transposed plan is verified in the emulator
//! (`tests/sim_splitk.rs`) and by ptxas (0 spills, `HGMMA….tnspA`); on an H100 (stop 54)
//! `gpu_gemv`'s NN tests pass and 1×4096×4096 runs at 0.924 of cuBLASLt NN (0.547 before).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// The partial products of a split-K GEMM: `w[z] = A·Bᵀ` over the z-th of `S` slices of
    /// K (`S` is the workspace's first extent and the grid's z). Warp 0's elected thread loads
    /// the slice's K tiles; warpgroup 1 multiplies them and stores its 64×BN f32 accumulator
    /// into `w[z]`, clipped at M and N.
    ///
    /// The `nn` configs (`MB = mn`) take B given K×N (D = A·B): `b` is declared
    /// `#[major(MB)]` and its shared tile `major = MB`, so the producer's one `tma::load` fills
    /// the tile one `[BK, 64]` box per 64-column chunk and wgmma reads it transposed (as in
    /// `gemm_sm90_ws`'s `nn` configs); the slices, the workspace and the reduce are the TN
    /// plan's.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, BN), cdiv(M, BM), S),
        configs(
            product(
                layout(default = (MB = k), nn = (MB = mn)),
                types(default = (TA = bf16), f16 = (TA = f16)),
                tile(
                    default = (BM = 64, BN = 128, STAGES = 6),
                    n64 = (BM = 64, BN = 64, STAGES = 8),
                    n256 = (BM = 64, BN = 256, STAGES = 5),
                    m128n64 = (BM = 128, BN = 64, STAGES = 8),
                ),
                with = (BK = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_splitk(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(S, M, N)] w: Tensor<f32>,
    ) {
        let a_s = smem::<TA>([STAGES, 1, BM, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128, major = MB);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        let k0 = cta.z * k_tiles / S;
        let k_len = (cta.z + 1) * k_tiles / S - k0;
        // The reduce may be scheduled once every CTA of this grid has started: it waits for
        // this grid to complete (`grid::dependency_wait()`) before it reads the workspace.
        grid::launch_dependents();
        #[scope(warp = 0, elect)]
        for i in 0..k_len {
            let s = pipe.producer_acquire(i);
            tma::load(a_s[s][0], a.tile(cta.y, k0 + i), pipe.full(s));
            tma::load(b_s[s], b.tile(cta.x, k0 + i), pipe.full(s));
        }
        #[scope(warpgroup = 1)]
        {
            let _ = consume(pipe, 0, acc, a_s, b_s, 0, k_len);
            copy(w.tile(cta.z, cta.y, cta.x), acc);
        }
    }

    /// The transposed partial products of a decode GEMM (M ≤ `BN`, the GEMV class):
    /// `w[z] = (A·Bᵀ)ᵀ = B·Aᵀ` over the z-th of `S` slices of K, `w` [S, N, M]. The weight B
    /// fills the 64-row side of the MMA (`a_s`, the m64 of `wgmma.m64nNk16`) and A's few rows
    /// its N = `BN` side (`b_s`), so a stage is 8 KB of B beside `BN`·128 bytes of A, where
    /// `gemm_sm90_splitk` at M = 1 carries a 64-row A box of zero fill: nearly all of the
    /// shared memory streams B, and `STAGES` of it stay in flight per CTA (the organisation of
    /// cuBLAS's decode kernel, `nvjet_sm90_tst_64x8_…`, seen in the ncu profile of
    /// `docs/perf/decode-splitk-h200.md`: a 64×8 tile whose 64 is B's rows). The grid's x is
    /// A's row blocks (one for M ≤ `BN`), y B's 64-row blocks, z the slices. The workspace's
    /// shape [S, N, M] tells the host (`split::is_transposed`) that `reduce::splitk_reduce_t`
    /// finishes it.
    ///
    /// The `nn` configs (`MB = mn`) take B given K×N: `b` is declared `#[major(MB)]` and its
    /// shared tile `major = MB`, so the producer's `tma::load` of a stage's B is one `[BK, 64]`
    /// box (64 of B's rows are one 64-element chunk of the K×N tensor's rows) and wgmma reads
    /// the MMA's A operand transposed (its `imm-trans-a`, PTX ISA §9.7.15.5.1.2).
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 256,
        grid = (cdiv(M, BN), cdiv(N, BM), S),
        configs(
            product(
                layout(default = (MB = k), nn = (MB = mn)),
                types(default = (TA = bf16), f16 = (TA = f16)),
                tile(m16 = (BN = 16, STAGES = 20), m16_s10 = (BN = 16, STAGES = 10)),
                with = (BM = 64, BK = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_splitk_t(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(S, N, M)] w: Tensor<f32>,
    ) {
        let b_rows = smem::<TA>([STAGES, 1, BM, BK], swizzle = B128, major = MB);
        let a_rows = smem::<TA>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        let k0 = cta.z * k_tiles / S;
        let k_len = (cta.z + 1) * k_tiles / S - k0;
        // The reduce may be scheduled once every CTA of this grid has started: it waits for
        // this grid to complete (`grid::dependency_wait()`) before it reads the workspace.
        grid::launch_dependents();
        #[scope(warp = 0, elect)]
        for i in 0..k_len {
            let s = pipe.producer_acquire(i);
            tma::load(b_rows[s][0], b.tile(cta.y, k0 + i), pipe.full(s));
            tma::load(a_rows[s], a.tile(cta.x, k0 + i), pipe.full(s));
        }
        #[scope(warpgroup = 1)]
        {
            let _ = consume(pipe, 0, acc, b_rows, a_rows, 0, k_len);
            copy(w.tile(cta.z, cta.y, cta.x), acc);
        }
    }
}

/// The second launch: the reduce kernels (not catalogue entries: they solve no problem alone;
/// `split::reduce_for` finds them by D's type).
#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod reduce {
    use tirx::prelude::*;

    /// The second launch of a split-K GEMM: D = α·Σ_z w[z], the slices summed in f32 in a fixed
    /// order (`sum_slices`), rounded once to D's type.
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, C), cdiv(M, R)),
        configs(
            default = (TD = bf16, R = 4, C = 256, V = 4),
            f16 = (TD = f16, R = 4, C = 256, V = 4),
            f32 = (TD = f32, R = 4, C = 256, V = 4),
        ),
    )]
    pub fn splitk_reduce(
        #[shape(S, M, N)] w: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
    ) {
        let acc = regs::<f32>([R, C], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, C], layout = blocked(vec = V));
        sum_slices(acc, p0, p1, p2, p3, w);
        copy(d.tile(cta.y, cta.x), acc * alpha);
    }

    /// `splitk_reduce` with the scaled epilogue: D = α·Σ_z w[z] + β·C, C in D's type.
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, C), cdiv(M, R)),
        configs(
            default = (TD = bf16, R = 4, C = 256, V = 4),
            f16 = (TD = f16, R = 4, C = 256, V = 4),
            f32 = (TD = f32, R = 4, C = 256, V = 4),
        ),
    )]
    pub fn splitk_reduce_scaled(
        #[shape(S, M, N)] w: Tensor<f32>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let acc = regs::<f32>([R, C], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, C], layout = blocked(vec = V));
        let ct = regs::<f32>([R, C], layout = blocked(vec = V));
        sum_slices(acc, p0, p1, p2, p3, w);
        copy(ct, c.tile(cta.y, cta.x));
        copy(d.tile(cta.y, cta.x), acc * alpha + ct * beta);
    }

    /// `splitk_reduce` with the fused epilogue: D = act(Σ_z w[z] + bias), `bias` [N] in D's
    /// type broadcast down the rows (`stat(acc, axis = 0)`), the activation the config
    /// constant `ACT` as in `gemm_sm90_bias_act` (0 none, 1 ReLU, 2 GELU tanh form, 3 SiLU).
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, C), cdiv(M, R)),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TD = bf16, R = 4, C = 256, V = 4),
            ),
        ),
    )]
    pub fn splitk_reduce_bias(
        #[shape(S, M, N)] w: Tensor<f32>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let acc = regs::<f32>([R, C], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, C], layout = blocked(vec = V));
        let bias_t = regs::<TD>([1, C], layout = stat(acc, axis = 0));
        sum_slices(acc, p0, p1, p2, p3, w);
        copy(bias_t, bias.tile(cta.x));
        bias_act(acc, bias_t);
        copy(d.tile(cta.y, cta.x), acc);
    }

    /// `splitk_reduce_bias` with a residual: D = act(Σ_z w[z] + bias) + R, `res` [M, N] in
    /// D's type added in f32 after the activation.
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, C), cdiv(M, R)),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TD = bf16, R = 4, C = 256, V = 4),
            ),
        ),
    )]
    pub fn splitk_reduce_bias_res(
        #[shape(S, M, N)] w: Tensor<f32>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N)] res: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let acc = regs::<f32>([R, C], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, C], layout = blocked(vec = V));
        let rt = regs::<f32>([R, C], layout = blocked(vec = V));
        let bias_t = regs::<TD>([1, C], layout = stat(acc, axis = 0));
        sum_slices(acc, p0, p1, p2, p3, w);
        copy(bias_t, bias.tile(cta.x));
        copy(rt, res.tile(cta.y, cta.x));
        bias_act(acc, bias_t);
        copy(d.tile(cta.y, cta.x), acc + rt);
    }

    /// The second launch of a transposed split-K plan (`gemm_sm90_splitk_t`): D = α·Σ_z w[z]ᵀ,
    /// w [S, N, M]. Each CTA sums an `R × MT` block of the slices (R of B's rows, MT of A's) in
    /// the fixed order of `sum_slices_t` (deterministic), then writes D's rows one by one: row
    /// `m` of the block is column `m` of the sum, taken out by a row reduction of the masked
    /// tile (`reduce_sum(select(col_index(acc) == j, acc, 0.0), axis = 1)`: one value and
    /// zeros, exact) into an `[R, 1]` statistic, stored as the column `(m, cta.x, 0)` of D
    /// seen as [M, N, 1] — `R` consecutive elements of D's row m (the host passes D with a
    /// trailing unit extent, `TensorArg::with_unit_dim`).
    #[tile_kernel(
        target = sm_90a,
        threads = 128,
        grid = (cdiv(N, R), cdiv(M, MT)),
        configs(
            default = (TD = bf16, R = 64, MT = 16, V = 4),
            f16 = (TD = f16, R = 64, MT = 16, V = 4),
            f32 = (TD = f32, R = 64, MT = 16, V = 4),
        ),
    )]
    pub fn splitk_reduce_t(
        #[shape(S, N, M)] w: Tensor<f32>,
        #[shape(M, N, 1)] d: Tensor<TD>,
        alpha: f32,
    ) {
        let acc = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, MT], layout = blocked(vec = V));
        sum_slices_t(acc, p0, p1, p2, p3, w);
        for j in 0..MT {
            let m = cta.y * MT + j;
            if m < M {
                let col = reduce_sum(select(col_index(acc) == j, acc, 0.0), axis = 1);
                copy(d.tile(m, cta.x, 0), col * alpha);
            }
        }
    }

    /// `splitk_reduce_t` with the scaled epilogue: D = α·Σ_z w[z]ᵀ + β·C, C in D's type seen
    /// as [M, N, 1] like D (each row of the block's C loaded as a column statistic).
    #[tile_kernel(
        target = sm_90a,
        threads = 128,
        grid = (cdiv(N, R), cdiv(M, MT)),
        configs(
            default = (TD = bf16, R = 64, MT = 16, V = 4),
            f16 = (TD = f16, R = 64, MT = 16, V = 4),
            f32 = (TD = f32, R = 64, MT = 16, V = 4),
        ),
    )]
    pub fn splitk_reduce_t_scaled(
        #[shape(S, N, M)] w: Tensor<f32>,
        #[shape(M, N, 1)] c: Tensor<TD>,
        #[shape(M, N, 1)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let acc = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let ct = regs::<f32>([R, 1], layout = stat(acc, axis = 1));
        sum_slices_t(acc, p0, p1, p2, p3, w);
        for j in 0..MT {
            let m = cta.y * MT + j;
            if m < M {
                let col = reduce_sum(select(col_index(acc) == j, acc, 0.0), axis = 1);
                copy(ct, c.tile(m, cta.x, 0));
                copy(d.tile(m, cta.x, 0), col * alpha + ct * beta);
            }
        }
    }

    /// `splitk_reduce_t` with the fused epilogue: D = act(Σ_z w[z]ᵀ + bias), `bias` [N] in
    /// D's type loaded once as the block's column statistic (one value per row of B), the
    /// activation the config constant `ACT` as in `splitk_reduce_bias` (`bias_act`).
    #[tile_kernel(
        target = sm_90a,
        threads = 128,
        grid = (cdiv(N, R), cdiv(M, MT)),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TD = bf16, R = 64, MT = 16, V = 4),
            ),
        ),
    )]
    pub fn splitk_reduce_t_bias(
        #[shape(S, N, M)] w: Tensor<f32>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N, 1)] d: Tensor<TD>,
    ) {
        let acc = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let bias_t = regs::<TD>([R, 1], layout = stat(acc, axis = 1));
        let v = regs::<f32>([R, 1], layout = stat(acc, axis = 1));
        sum_slices_t(acc, p0, p1, p2, p3, w);
        copy(bias_t, bias.tile(cta.x));
        for j in 0..MT {
            let m = cta.y * MT + j;
            if m < M {
                v = reduce_sum(select(col_index(acc) == j, acc, 0.0), axis = 1);
                bias_act(v, bias_t);
                copy(d.tile(m, cta.x, 0), v);
            }
        }
    }

    /// `splitk_reduce_t_bias` with a residual: D = act(Σ_z w[z]ᵀ + bias) + R, `res` in D's
    /// type seen as [M, N, 1], added in f32 after the activation.
    #[tile_kernel(
        target = sm_90a,
        threads = 128,
        grid = (cdiv(N, R), cdiv(M, MT)),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TD = bf16, R = 64, MT = 16, V = 4),
            ),
        ),
    )]
    pub fn splitk_reduce_t_bias_res(
        #[shape(S, N, M)] w: Tensor<f32>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N, 1)] res: Tensor<TD>,
        #[shape(M, N, 1)] d: Tensor<TD>,
    ) {
        let acc = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, MT], layout = blocked(vec = V));
        let bias_t = regs::<TD>([R, 1], layout = stat(acc, axis = 1));
        let v = regs::<f32>([R, 1], layout = stat(acc, axis = 1));
        let rt = regs::<f32>([R, 1], layout = stat(acc, axis = 1));
        sum_slices_t(acc, p0, p1, p2, p3, w);
        copy(bias_t, bias.tile(cta.x));
        for j in 0..MT {
            let m = cta.y * MT + j;
            if m < M {
                v = reduce_sum(select(col_index(acc) == j, acc, 0.0), axis = 1);
                bias_act(v, bias_t);
                copy(rt, res.tile(m, cta.x, 0));
                copy(d.tile(m, cta.x, 0), v + rt);
            }
        }
    }

    /// `sum_slices` over the transposed workspace: block `(cta.x, cta.y)` of each `w[z]`
    /// [N, M], in the same fixed order.
    #[tile_fn]
    fn sum_slices_t(acc: Regs, p0: Regs, p1: Regs, p2: Regs, p3: Regs, w: Global) {
        // Launched as a programmatic dependent of the partial products (they signal
        // `grid::launch_dependents()` as they start): wait for them before reading a slice.
        grid::dependency_wait();
        copy(acc, w.tile(0, cta.x, cta.y));
        let quads = (S - 1) / 4;
        for j in 0..quads {
            let z = 1 + 4 * j;
            copy(p0, w.tile(z, cta.x, cta.y));
            copy(p1, w.tile(z + 1, cta.x, cta.y));
            copy(p2, w.tile(z + 2, cta.x, cta.y));
            copy(p3, w.tile(z + 3, cta.x, cta.y));
            acc += (p0 + p1) + (p2 + p3);
        }
        for z in 1 + 4 * quads..S {
            copy(p0, w.tile(z, cta.x, cta.y));
            acc += p0;
        }
    }

    /// The reduce of an FP8 split-K GEMM with row-wise scales (`fp8_splitk.rs`): D =
    /// diag(sa)·(Σ_z w[z])·diag(sb), `sa` [M] one scale per row of D and `sb` [N] one per
    /// column, applied after the slices are summed (in the one-launch kernel's order,
    /// `acc · sa[i] · sb[j]`), rounded once to D's type. The scales are loaded by guarded
    /// register loads before the slices (0 past M and N, never stored).
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, C), cdiv(M, R)),
        configs(
            default = (TD = bf16, R = 4, C = 256, V = 4),
            f16 = (TD = f16, R = 4, C = 256, V = 4),
            f32 = (TD = f32, R = 4, C = 256, V = 4),
        ),
    )]
    pub fn splitk_reduce_rowwise(
        #[shape(S, M, N)] w: Tensor<f32>,
        // The caller's scales: complete before the partial product started (no kernel of
        // the plan writes them), so they are loaded before the wait, overlapping its tail.
        #[independent]
        #[shape(M)]
        sa: Tensor<f32>,
        #[independent]
        #[shape(N)]
        sb: Tensor<f32>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let acc = regs::<f32>([R, C], layout = blocked(vec = V));
        let p0 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p1 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p2 = regs::<f32>([R, C], layout = blocked(vec = V));
        let p3 = regs::<f32>([R, C], layout = blocked(vec = V));
        let sa_t = regs::<f32>([R, 1], layout = stat(acc, axis = 1));
        let sb_t = regs::<f32>([1, C], layout = stat(acc, axis = 0));
        copy(sa_t, sa.tile(cta.y));
        copy(sb_t, sb.tile(cta.x));
        sum_slices(acc, p0, p1, p2, p3, w);
        copy(d.tile(cta.y, cta.x), acc * sa_t * sb_t);
    }

    /// `acc = Σ_z w[z]` over the `R × C` block `(cta.y, cta.x)`, in the fixed order
    /// `w[0] + (w[1] + w[2] + w[3] + w[4]) + …`: four slices loaded before they are added (four
    /// loads in flight), then the remaining slices one by one.
    #[tile_fn]
    fn sum_slices(acc: Regs, p0: Regs, p1: Regs, p2: Regs, p3: Regs, w: Global) {
        // Launched as a programmatic dependent of the partial products (they signal
        // `grid::launch_dependents()` as they start): wait for them before reading a slice.
        grid::dependency_wait();
        copy(acc, w.tile(0, cta.y, cta.x));
        let quads = (S - 1) / 4;
        for j in 0..quads {
            let z = 1 + 4 * j;
            copy(p0, w.tile(z, cta.y, cta.x));
            copy(p1, w.tile(z + 1, cta.y, cta.x));
            copy(p2, w.tile(z + 2, cta.y, cta.x));
            copy(p3, w.tile(z + 3, cta.y, cta.x));
            acc += (p0 + p1) + (p2 + p3);
        }
        for z in 1 + 4 * quads..S {
            copy(p0, w.tile(z, cta.y, cta.x));
            acc += p0;
        }
    }
}
