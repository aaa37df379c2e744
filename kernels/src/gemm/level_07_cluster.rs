//! GEMM ladder, level 7: 2×1 clusters with TMA multicast — the two CTAs compute vertically
//! adjacent tiles that need the same B slab; each loads half of it and multicasts it to both,
//! so B crosses L2 once per cluster. B given N×K (`MB = k`) or K×N (`MB = mn`).
//!
//! Measured on the H200 at 8192³ (`tirx bench gemm --ladder`): 657.0 TFLOP/s, 0.98×.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 7: 2×1 clusters with TMA multicast — B crosses L2 once per cluster. A stage may
    /// be overwritten only once the consumers of both CTAs released it (`peers = 2`), and
    /// barriers are initialised cluster-wide before any multicast (the compiler adds the
    /// cluster barriers at entry and exit).
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
            n128 = (BM = 128, BN = 128, BK = 64, STAGES = 6, GROUP = 8, TA = bf16, TD = bf16, MB = k),
            product(
                types(default = (TA = bf16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(default = (BN = 256, STAGES = 4), n192 = (BN = 192, STAGES = 5)),
                with = (BM = 128, BK = 64, GROUP = 8, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 256, STAGES = 4),
            ),
        ),
    )]
    pub fn gemm_sm90_cluster(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128, major = MB);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        cluster_consumers(pipe, acc, a_s, b_s, d, pairs_m, tiles_n, k_tiles);
    }

    /// The consumer warpgroups of level 7: the cluster's tile walk (pairs of M tiles), each
    /// tile's K loop, then the accumulator stored from registers.
    #[tile_fn]
    fn cluster_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
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
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                copy(d.tile(2 * (2 * mp + cta_rank) + wg, n), acc);
            }
        }
    }
}
