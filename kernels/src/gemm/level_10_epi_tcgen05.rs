//! The production Blackwell GEMM's epilogues (ladder level 10, over `level_10_prod_tcgen05.rs`'s
//! pair, scheduler and TMA-store epilogue): D = α·A·op(B) + β·C (`gemm_sm100_abc`),
//! D = act(A·op(B) + bias) (`gemm_sm100_bias_act`) and the two composed,
//! D = act(A·op(B) + bias) + R (`gemm_sm100_bias_act_res`), computed on the accumulator in the
//! epilogue warpgroup's registers between `tcgen05.ld` and the staging tile — no extra pass
//! over D.
//!
//! What they add to `gemm_sm100_prod`. The epilogue walks each accumulator stage in blocks of
//! `EPI_N` columns (one 128-byte swizzle row of D: 64 of a 16-bit D, 32 of an f32 D), through
//! a view `accv` of the TMEM accumulator cut into such blocks (`tmem::<f32>([2·BN / EPI_N,
//! 128, EPI_N], alias = acc)`), so a block of the accumulator and its operand (C, or the
//! bias) fit in registers together (64 + 64 a thread for a 16-bit D). Per block:
//! `copy(r, accv[…])` (`tcgen05.ld.32x32b`, PTX ISA §9.7.16.8.3, and `tcgen05.wait::ld`),
//! the arithmetic, `copy(d_s[cb], r)` (`st.shared` at the 128B-swizzled addresses, §5.5.7);
//! the stage goes back to the MMA warp after its last block, and the staging tile to D with
//! TMA stores as in level 9.
//!
//! Scaled: before a tile's first block, once the previous tile's stores have read the staging
//! tile (`cp.async.bulk.wait_group.read 0`, §9.7.9.25.6.2), the leader loads C's blocks into
//! it with TMA (the same boxes the stores use: tails zero-filled on load, clipped on store) on
//! `c_bar`, so C arrives while the MMA warp finishes the tile; each block becomes
//! `α·acc + β·C` (`mul.f32`, `add.f32`, §9.7.3), and where β = 0 the staged C is never used (a
//! `selp`, §9.7.7.3: C may hold NaN, BLAS's convention).
//!
//! Fused: the bias [N] (D's type) is loaded per block into a register tile with the layout of
//! the accumulator's column statistic (`stat(r, axis = 0)`: every thread of the one-row-a-thread
//! `tmem_32x32b` layout holds the block's columns; one broadcast load, §9.7.9.8), added, and
//! the activation `ACT` applied in place: 0 none, 1 ReLU, 2 GELU (tanh form, `tanh.approx`,
//! §9.7.3.23), 3 SiLU (`x · 1/(1 + 2^(−x·log2 e))`, `ex2.approx`, `rcp.approx`, §9.7.3.21,
//! §9.7.3.16) — the Hopper `fused.rs` epilogue, one tile function of `pieces.rs` ([`bias_act`]).
//!
//! Residual: the scaled kernel's C load ([`load_staged`]) brings R into the staging tile, and
//! each block is `bias_act`'s result plus the staged R (read back as `abc` reads C, `add.f32`)
//! before it is rounded into the same staging block — the three registers tiles of a block
//! (accumulator, bias, R) fit the epilogue's 224 registers with 0 spills.
//!
//! Tiles: 256×128 pairs (TN in BF16 and FP16, NN in BF16) and, for the fused kernels, the
//! 256×256 pairs of `gemm_sm100_prod`'s `n256` configs (`n256_*` TN, `nn_n256_*` NN, BF16,
//! every activation): five stages of 32 KiB and a 64 KiB staging tile, 512 TMEM columns; the
//! epilogue already reads one 64-column block at a time, so only `BN` and `STAGES` change. The
//! host's cost model takes them at large M and N (8192³) as it takes the plain `n256` tiles.
//!
//! Verified without a Blackwell GPU (none was used): ptxas `-arch=sm_100a` with 0 spills for
//! every config (`tests/assemble.rs`), and the SASS (`tirx check`, its `gemm_sm100_abc
//! default` line: `224 0 UTCHMMA×4 UTMALDG×3 UTMASTG×1 LDTM×2 USETMAXREG×2 SYNCS×62
//! LDS.128×12 STS.128×8` — C's TMA load the third `UTMALDG`, its staged values read back by
//! `LDS.128`; `gemm_sm100_bias_act gelu`: `224 0 UTCHMMA×4 UTMALDG×2 UTMASTG×1 LDTM×2
//! USETMAXREG×2 SYNCS×58 LDG.E.128×15 LDS.128×4 STS.128×8`, the bias's vector loads;
//! `gemm_sm100_bias_act_res gelu`: `224 0 UTCHMMA×4 UTMALDG×3 UTMASTG×1 LDTM×2 USETMAXREG×2
//! SYNCS×62 LDG.E.128×23 LDS.128×12 STS.128×8`, R's TMA load the third `UTMALDG`; the `n256`
//! tiles: `SYNCS×56` (`bias_act`) and `SYNCS×60` (`bias_act_res`), the rest as on their
//! 256×128 tiles), and the
//! emulator against the f64 reference on shapes with tails in M, N and K and more tiles than
//! clusters, under every CLC mode, and with β = 0 and C all NaN, the `n256` tiles on M = 300,
//! N = 520, K = 136 (`tests/sim_gemm_sm100.rs`);
//! 100 seeded schedules a config and CLC mode with `tirx sim gemm_sm100_abc --m 300 --n 264
//! --k 136 --sms 4 --schedules 100` (`docs/emulator.md` records the runs).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces, super::pieces_sm100::gemm_pieces_sm100))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 10 with the BLAS epilogue, D = α·A·op(B) + β·C (`alpha`, `beta` scalar
    /// arguments, C M×N in D's type); B given N×K (`MB = k`) or K×N (`nn`, `MB = mn`).
    /// `grid = (SMS / 2 * 2, 1)`.
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 128 / size_of(TD), REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 128 / size_of(TD), REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
        ),
    )]
    pub fn gemm_sm100_abc(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 2, BK], swizzle = B128, major = MB);
        let acc = tmem::<f32>([2, 128, BN]);
        let accv = tmem::<f32>([2 * BN / EPI_N, 128, EPI_N], alias = acc);
        let r = regs::<f32>([128, EPI_N], layout = tmem_32x32b);
        let cr = regs::<f32>([128, EPI_N], layout = tmem_32x32b);
        let d_s = smem::<TD>([BN / EPI_N, 128, EPI_N], swizzle = B128);
        let c_bar = mbarrier();
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);

        pair_clc_roles(
            pipe, accp, clcp, resp, acc, a_s, b_s, a, b, pairs_m, tiles_n,
        );

        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            let mut j = 0;
            let mut w = cta.x / 2;
            let mut i = 0;
            let mut more = true;
            while more {
                for u in (w..pairs_m * tiles_n).step_by(ncta.x / 2) {
                    let (mp, n) = grouped(u, pairs_m, tiles_n);
                    let row = 2 * mp + cta_rank;
                    let col = n * (BN / EPI_N);
                    load_staged(d_s, c_bar, c, row, col);
                    let s = accp.consumer_wait(j);
                    tcgen05::fence_after();
                    c_bar.wait(j % 2);
                    for cb in 0..BN / EPI_N {
                        copy(r, accv[s * (BN / EPI_N) + cb]);
                        copy(cr, d_s[cb]);
                        r = select(beta != 0.0, alpha * r + beta * cr, alpha * r);
                        copy(d_s[cb], r);
                    }
                    release_acc(accp, s);
                    store_staged(d, d_s, row, col);
                    j += 1;
                }
                let (go, nw) = next_walk(clcp, resp, i, w);
                more = go == 1;
                w = nw;
                release_walk(clcp);
                i += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }

        pair_tmem_release(acc);
    }

    /// Level 10 with a fused bias + activation epilogue, D = act(A·op(B) + bias) (see the
    /// module docs; `ACT` the activation), B given N×K (BF16 or FP16) or K×N (`nn_…`, BF16).
    /// `grid = (SMS / 2 * 2, 1)`.
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TA = bf16, TD = bf16, BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
            product(
                tile(n256 = (BN = 256, MB = k), nn_n256 = (BN = 256, MB = mn)),
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TA = bf16, TD = bf16, BM = 256, BK = 64, STAGES = 5, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
        ),
    )]
    pub fn gemm_sm100_bias_act(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 2, BK], swizzle = B128, major = MB);
        let acc = tmem::<f32>([2, 128, BN]);
        let accv = tmem::<f32>([2 * BN / EPI_N, 128, EPI_N], alias = acc);
        let r = regs::<f32>([128, EPI_N], layout = tmem_32x32b);
        let bias_t = regs::<TD>([1, EPI_N], layout = stat(r, axis = 0));
        let d_s = smem::<TD>([BN / EPI_N, 128, EPI_N], swizzle = B128);
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);

        pair_clc_roles(
            pipe, accp, clcp, resp, acc, a_s, b_s, a, b, pairs_m, tiles_n,
        );

        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            let mut j = 0;
            let mut w = cta.x / 2;
            let mut i = 0;
            let mut more = true;
            while more {
                for u in (w..pairs_m * tiles_n).step_by(ncta.x / 2) {
                    let (mp, n) = grouped(u, pairs_m, tiles_n);
                    let col = n * (BN / EPI_N);
                    let s = accp.consumer_wait(j);
                    tcgen05::fence_after();
                    // The previous tile's stores have read the staging tile.
                    #[scope(leader)]
                    {
                        tma::wait_group_read(0);
                    }
                    named_barrier(1, 128);
                    for cb in 0..BN / EPI_N {
                        copy(bias_t, bias.tile(col + cb));
                        copy(r, accv[s * (BN / EPI_N) + cb]);
                        bias_act(r, bias_t);
                        copy(d_s[cb], r);
                    }
                    release_acc(accp, s);
                    store_staged(d, d_s, 2 * mp + cta_rank, col);
                    j += 1;
                }
                let (go, nw) = next_walk(clcp, resp, i, w);
                more = go == 1;
                w = nw;
                release_walk(clcp);
                i += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }

        pair_tmem_release(acc);
    }

    /// Level 10 with the fused epilogue and a residual, D = act(A·op(B) + bias) + R (`res`
    /// M×N in D's type; see the module docs): R is loaded into the staging tile as
    /// [`gemm_sm100_abc`] loads C ([`load_staged`]), each block computed as in
    /// [`gemm_sm100_bias_act`] ([`bias_act`]), and the staged R added in f32 before the block
    /// is rounded into the staging tile it came from. B given N×K (BF16 or FP16) or K×N
    /// (`nn_…`, BF16). `grid = (SMS / 2 * 2, 1)`.
    #[tile_kernel(
        solves = gemm,
        target = sm_100a,
        threads = 256,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16)),
                with = (BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TA = bf16, TD = bf16, BM = 256, BN = 128, BK = 64, STAGES = 6, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
            product(
                tile(n256 = (BN = 256, MB = k), nn_n256 = (BN = 256, MB = mn)),
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TA = bf16, TD = bf16, BM = 256, BK = 64, STAGES = 5, GROUP = 8, EPI_N = 64, REG_ISSUE = 56, REG_EPILOGUE = 224),
            ),
        ),
    )]
    pub fn gemm_sm100_bias_act_res(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N)] res: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 128, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN / 2, BK], swizzle = B128, major = MB);
        let acc = tmem::<f32>([2, 128, BN]);
        let accv = tmem::<f32>([2 * BN / EPI_N, 128, EPI_N], alias = acc);
        let r = regs::<f32>([128, EPI_N], layout = tmem_32x32b);
        let rr = regs::<f32>([128, EPI_N], layout = tmem_32x32b);
        let bias_t = regs::<TD>([1, EPI_N], layout = stat(r, axis = 0));
        let d_s = smem::<TD>([BN / EPI_N, 128, EPI_N], swizzle = B128);
        let r_bar = mbarrier();
        let pipe = pipeline::<STAGES>();
        let accp = pipeline::<2>(peers = 2);
        let resp = clc_response();
        let clcp = pipeline::<1>(consumers = 4, peers = 2);
        let pairs_m = cdiv(M, 256);
        let tiles_n = cdiv(N, BN);

        pair_clc_roles(
            pipe, accp, clcp, resp, acc, a_s, b_s, a, b, pairs_m, tiles_n,
        );

        #[scope(warpgroup = 1)]
        {
            setmaxnreg::inc(REG_EPILOGUE);
            let mut j = 0;
            let mut w = cta.x / 2;
            let mut i = 0;
            let mut more = true;
            while more {
                for u in (w..pairs_m * tiles_n).step_by(ncta.x / 2) {
                    let (mp, n) = grouped(u, pairs_m, tiles_n);
                    let row = 2 * mp + cta_rank;
                    let col = n * (BN / EPI_N);
                    load_staged(d_s, r_bar, res, row, col);
                    let s = accp.consumer_wait(j);
                    tcgen05::fence_after();
                    r_bar.wait(j % 2);
                    for cb in 0..BN / EPI_N {
                        copy(bias_t, bias.tile(col + cb));
                        copy(r, accv[s * (BN / EPI_N) + cb]);
                        bias_act(r, bias_t);
                        copy(rr, d_s[cb]);
                        r = r + rr;
                        copy(d_s[cb], r);
                    }
                    release_acc(accp, s);
                    store_staged(d, d_s, row, col);
                    j += 1;
                }
                let (go, nw) = next_walk(clcp, resp, i, w);
                more = go == 1;
                w = nw;
                release_walk(clcp);
                i += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }

        pair_tmem_release(acc);
    }
}
