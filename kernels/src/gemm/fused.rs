//! GEMM with fused epilogues: the production GEMM (level 8) computing
//! `D = act(A·Bᵀ + bias)` in the consumer warpgroups' accumulator registers, between the
//! last MMA of a tile and its store through the swizzled staging tile — no extra pass over D.
//!
//! The bias is a vector [N] in D's type, loaded per tile into a register tile with the
//! layout of the accumulator's column statistic (`stat(acc, axis = 0)`: each thread holds the
//! columns its fragment holds), and broadcast down the rows. The activation is the config
//! constant `ACT`: 0 none, 1 ReLU, 2 GELU (tanh form, `tanh_approx`), 3 SiLU
//! (`x · 1/(1 + 2^(−x·log2 e))` with `exp2_approx` and `rcp_approx`). Everything else — the
//! cluster producer, the multicast loads, the persistent walk, the overlapped TMA-store
//! epilogue — is level 8's pieces, and the bias and activation are `pieces.rs`' `bias_act`.
//!
//! `gemm_sm90_bias_act_res` adds a residual after the activation, D = act(A·Bᵀ + bias) + R:
//! R waits in the staging tile (loaded by TMA before the K loop, as the scaled kernels load C)
//! and is read back into the accumulator's layout after it. `tirx check`: `168 0 HGMMA×4
//! UTMALDG×3 UTMASTG×1 USETMAXREG×2 SYNCS×24` for every activation (SiLU adds `MUFU.EX2×64`).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 8 with a fused bias + activation epilogue (see the module docs). B given N×K.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                tile(n256 = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5), n192 = (BN = 192, STAGES = 4)),
                with = (TA = bf16, TD = bf16, BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_bias_act(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let bias_t = regs::<TD>([1, BN], layout = stat(acc, axis = 0));
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        bias_act_consumers(
            pipe, acc, bias_t, a_s, b_s, d_s, d, bias, pairs_m, tiles_n, k_tiles,
        );
    }

    /// Level 8's consumer warpgroups with the epilogue applied to the accumulator before
    /// `store_tile`: the tile's bias columns are loaded before its K loop (from L2; their
    /// latency hides behind the MMAs, their registers fit beside the accumulator — 0 spills),
    /// added after it, and the activation applied in place. Measured against loading them
    /// after the K loop in one device command: geomean 0.990/0.990 → 0.993/0.992 of
    /// cuBLASLt's `GELU_BIAS` (`docs/perf/epilogue-h200-2026-12-02b.md`).
    #[tile_fn]
    fn bias_act_consumers(
        pipe: Pipe,
        acc: Regs,
        bias_t: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        bias: Global,
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
                copy(bias_t, bias.tile(n));
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                bias_act(acc, bias_t);
                let row = 2 * (2 * mp + cta_rank) + wg;
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// Level 8 with the fused epilogue and a residual, D = act(A·Bᵀ + bias) + R (`res` M×N in
    /// D's type). R does not fit in registers beside a 64×BN accumulator through the K loop,
    /// so it waits in the staging tile: before each tile's K loop the leader loads R's blocks
    /// there by TMA ([`load_c`], as the scaled kernels load C: tails zero-filled, latency
    /// hidden behind the MMAs); after it the warpgroup applies [`bias_act`], reads R from the
    /// staging tile into a tile in the accumulator's layout (`ld.shared`, §9.7.9.8), adds it
    /// in f32 and stores through the same staging tile ([`store_tile`], whose barrier orders
    /// every read of R before the first write of D). BN = 128 keeps the accumulator, R and the
    /// bias (64 + 64 + 32 registers a thread) under the consumers' 232.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                act(bias = (ACT = 0), relu = (ACT = 1), gelu = (ACT = 2), silu = (ACT = 3)),
                with = (TA = bf16, TD = bf16, BM = 128, BN = 128, BK = 64, STAGES = 5, GROUP = 8, EPI_N = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_bias_act_res(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(N)] bias: Tensor<TD>,
        #[shape(M, N)] res: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let res_t = regs::<f32>([64, BN]);
        let bias_t = regs::<TD>([1, BN], layout = stat(acc, axis = 0));
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let r_bar = mbarrier(count = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        residual_consumers(
            pipe, acc, bias_t, res_t, a_s, b_s, d_s, r_bar, d, bias, res, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_bias_act_res`]: per tile the bias and R's TMA
    /// loads before the K loop, [`bias_act`] and R added after it, [`store_tile`].
    #[tile_fn]
    fn residual_consumers(
        pipe: Pipe,
        acc: Regs,
        bias_t: Regs,
        res_t: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        r_bar: Bar,
        d: Global,
        bias: Global,
        res: Global,
        pairs_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            let mut tile = 0;
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                let row = 2 * (2 * mp + cta_rank) + wg;
                let col = n * (BN / EPI_N);
                copy(bias_t, bias.tile(n));
                load_c(d_s, r_bar, res, wg, row, col);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                bias_act(acc, bias_t);
                r_bar[wg].wait(tile % 2);
                copy(res_t, d_s[wg]);
                acc = acc + res_t;
                store_tile(d, d_s, acc, wg, row, col);
                tile += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}
