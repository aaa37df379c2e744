//! Level 8 for small outputs: 128×64 (and 128×192) tiles in 1×2 clusters along N, the pair
//! sharing (multicasting) its A panel — where A's rows are not 128-byte aligned, its loads
//! are the limit, and halving them pays. B given N×K or K×N (`MB`).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 8 for few tiles: 128×64 tiles in 1×2 clusters along N — the two CTAs of a
    /// cluster compute horizontally adjacent tiles, each loads one half of their common A
    /// panel and multicasts it, so a CTA reads 128 operand rows per K step instead of 192;
    /// the epilogue is level 8's. Small outputs (about one wave of 128×64 tiles) are
    /// operand-supply bound, which is what this cuts.
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
    pub fn gemm_sm90_pair_n(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128, major = MB);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let tiles_m = cdiv(M, BM);
        let pairs_n = cdiv(cdiv(N, BN), 2);
        let k_tiles = cdiv(K, BK);
        cluster_producer_a(pipe, a_s, b_s, a, b, tiles_m, pairs_n, k_tiles);
        pair_n_consumers(pipe, acc, a_s, b_s, d_s, d, tiles_m, pairs_n, k_tiles);
    }

    /// The consumer warpgroups of [`gemm_sm90_pair_n`] (and its NN twin): the producer's tile
    /// walk (pairs along N), each tile's K loop, then level 8's epilogue.
    #[tile_fn]
    fn pair_n_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d_s: Smem,
        d: Global,
        tiles_m: u32,
        pairs_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for u in (cta.x / 2..tiles_m * pairs_n).step_by(ncta.x / 2) {
                let (m, np) = grouped(u, tiles_m, pairs_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                store_tile(
                    d,
                    d_s,
                    acc,
                    wg,
                    2 * m + wg,
                    (2 * np + cta_rank) * (BN / EPI_N),
                );
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}
