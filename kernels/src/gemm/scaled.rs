//! D = α·A·op(B) + β·C: level 8 and its pair-N form with the scaled epilogue — C loaded by
//! TMA into the staging tile before the K loop (its latency hidden behind the MMAs), the
//! accumulator staged as α·acc + β·C (with β = 0, C is never read). Scalar kernel arguments
//! `alpha`, `beta`; B given N×K or K×N (`MB`).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 8 with the BLAS epilogue, D = α·A·Bᵀ + β·C (`alpha`, `beta` scalar arguments, C
    /// M×N in D's type). Per tile, before its K loop, a consumer warpgroup's leader loads C's
    /// blocks into the staging tile with TMA (the same boxes the stores use, so tails are
    /// clipped and zero-filled the same way), so they arrive while the MMAs run; after the K
    /// loop the warpgroup waits for them on its own barrier (`c_bar[wg]`, one phase per tile),
    /// and `copy(d_s[wg], acc, alpha = alpha, beta = beta)` turns each staged C value into
    /// `α·acc + β·C` in place before the TMA stores. Where β is
    /// 0, C is loaded but never read (it may hold NaN), as BLAS specifies; the host sends
    /// β = 0, α = 1 to `gemm_sm90_tma_epi` instead.
    ///
    /// The `nn` configs (`MB = mn`) take B given K×N (D = A·B): `b` is declared `#[major(MB)]`
    /// and its shared tile `major = MB`, so the same `tma::load` fills the tile one `[BK, 64]`
    /// box per 64-column chunk and wgmma reads it transposed; nothing else differs.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5), n64 = (BN = 64, STAGES = 8)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64, MB = k),
            ),
            product(
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(default = (BN = 128, STAGES = 5), n64 = (BN = 64, STAGES = 7)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 32, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
            product(
                layout(nn = (MB = mn)),
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_tma_epi_abc(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128, major = MB);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let c_bar = mbarrier(count = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        abc_consumers(
            pipe, acc, a_s, b_s, d_s, c_bar, c, d, alpha, beta, pairs_m, tiles_n, k_tiles,
        );
    }

    /// The consumer warpgroups of [`gemm_sm90_tma_epi_abc`] (and its NN twin): each tile's
    /// K loop, C's blocks loaded into the staging tile, `α·acc + β·C` in place, TMA stores.
    #[tile_fn]
    fn abc_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        c_bar: Bar,
        c: Global,
        d: Global,
        alpha: f32,
        beta: f32,
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
                load_c(d_s, c_bar, c, wg, row, col);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                store_scaled(d_s, acc, c_bar, d, alpha, beta, wg, row, col, tile);
                tile += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }

    /// [`gemm_sm90_pair_n`] with the BLAS epilogue of [`gemm_sm90_tma_epi_abc`], D = α·A·Bᵀ +
    /// β·C: 128×64 tiles in 1×2 clusters sharing A, for outputs of about one wave of them.
    ///
    /// The `nn` configs (`MB = mn`) take B given K×N (D = A·B): `b` is declared `#[major(MB)]`
    /// and its shared tile `major = MB`, so the same `tma::load` fills the tile one `[BK, 64]`
    /// box per 64-column chunk and wgmma reads it transposed; nothing else differs.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        cluster = (2, 1, 1),
        grid = (SMS / 2 * 2, 1),
        configs(
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 64, STAGES = 8, EPI_N = 128 / size_of(TD), MB = k),
            ),
            product(
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 64, STAGES = 8, EPI_N = 128 / size_of(TD)),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                tile(n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64),
            ),
        ),
    )]
    pub fn gemm_sm90_pair_n_abc(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] c: Tensor<TD>,
        #[shape(M, N)] d: Tensor<TD>,
        alpha: f32,
        beta: f32,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128, major = MB);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let c_bar = mbarrier(count = 2);
        let tiles_m = cdiv(M, BM);
        let pairs_n = cdiv(cdiv(N, BN), 2);
        let k_tiles = cdiv(K, BK);
        cluster_producer_a(pipe, a_s, b_s, a, b, tiles_m, pairs_n, k_tiles);
        pair_n_abc_consumers(
            pipe, acc, a_s, b_s, d_s, c_bar, c, d, alpha, beta, tiles_m, pairs_n, k_tiles,
        );
    }

    /// The consumer warpgroups of the pair-N scaled kernels: [`pair_n_consumers`]' tile walk
    /// with the scaled epilogue ([`load_c`] before each K loop, [`store_scaled`] after).
    #[tile_fn]
    fn pair_n_abc_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        c_bar: Bar,
        c: Global,
        d: Global,
        alpha: f32,
        beta: f32,
        tiles_m: u32,
        pairs_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            let mut tile = 0;
            for u in (cta.x / 2..tiles_m * pairs_n).step_by(ncta.x / 2) {
                let (m, np) = grouped(u, tiles_m, pairs_n);
                let row = 2 * m + wg;
                let col = (2 * np + cta_rank) * (BN / EPI_N);
                load_c(d_s, c_bar, c, wg, row, col);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                store_scaled(d_s, acc, c_bar, d, alpha, beta, wg, row, col, tile);
                tile += 1;
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}
