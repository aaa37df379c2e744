//! GEMM ladder, level 8, the production GEMM: level 7 with the epilogue through a swizzled
//! staging tile in shared memory and TMA stores, overlapped with the next tile's MMAs. B
//! given N×K (`MB = k`) or K×N (`MB = mn`, the `nn` configs).
//!
//! Measured on the H200 at 8192³ (`tirx bench gemm --ladder`): 697.3 TFLOP/s, 1.01×
//! (2026-11-29; 703.2, 1.013× in the 2026-11-30 sweep).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 8: the epilogue through shared memory and TMA stores, overlapped with the next
    /// tile. A consumer warpgroup converts its accumulator into a 128B-swizzled staging tile
    /// (`copy(d_s[wg], acc)`: conflict-free `st.shared`), fences the generic proxy against the
    /// async one, and its leader hands the 64×64 column blocks to the TMA engine, which clips
    /// them at the tensor's edge; the warpgroup goes straight on to the next tile's MMAs.
    /// Before overwriting the staging tile, the leader waits only until the previous stores
    /// have read it. Named barriers 1 and 2 order each warpgroup's threads around the staging
    /// tile without stopping the other roles. A staging block is one 128-byte swizzle row wide:
    /// EPI_N = 64 columns of a 16-bit D, 32 of an f32 D. With a 16-bit D the staging tiles take
    /// 64 KB, so three stages of 128×256; an f32 D would need 128 KB of staging at BN = 256,
    /// which leaves too little for the pipeline, so f32 configs use 128×128 tiles (64 KB of
    /// staging, five 32 KB stages: 224 KB of the 227 KB).
    /// D's rows must be 16-byte aligned (N a multiple of 8, or of 4 for f32): the runtime
    /// refuses others.
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
                tile(default = (BN = 256, STAGES = 3), n128 = (BN = 128, STAGES = 5), n192 = (BN = 192, STAGES = 4)),
                with = (BM = 128, BK = 64, GROUP = 8, EPI_N = 64, MB = k),
            ),
            product(
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 256, STAGES = 3, EPI_N = 64),
            ),
            product(
                layout(nn = (MB = mn)),
                types(bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                with = (BM = 128, BK = 64, GROUP = 8, BN = 128, STAGES = 5, EPI_N = 32),
            ),
        ),
    )]
    pub fn gemm_sm90_tma_epi(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, 2, BN / 2, BK], swizzle = B128, major = MB);
        let d_s = smem::<TD>([2, BN / EPI_N, 64, EPI_N], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2, peers = 2);
        let pairs_m = cdiv(cdiv(M, BM), 2);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        cluster_producer(pipe, a_s, b_s, a, b, pairs_m, tiles_n, k_tiles);
        tma_epi_consumers(pipe, acc, a_s, b_s, d_s, d, pairs_m, tiles_n, k_tiles);
    }

    /// The consumer warpgroups of level 8: each K loop of a tile pair, then the accumulator
    /// through the swizzled staging tile `d_s[wg]` and TMA stores of its 64×64 column blocks,
    /// overlapped with the next tile (see [`gemm_sm90_tma_epi`]).
    #[tile_fn]
    fn tma_epi_consumers(
        pipe: Pipe,
        acc: Regs,
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
            for u in (cta.x / 2..pairs_m * tiles_n).step_by(ncta.x / 2) {
                let (mp, n) = grouped(u, pairs_m, tiles_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                let row = 2 * (2 * mp + cta_rank) + wg;
                store_tile(d, d_s, acc, wg, row, n * (BN / EPI_N));
            }
            #[scope(leader)]
            {
                tma::wait_group(0);
            }
        }
    }
}
