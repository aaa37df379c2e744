//! GEMM ladder, level 6: persistent — a grid of one CTA per SM walks the output tiles in
//! groups of GROUP tile rows (L2 reuse); the pipeline counter runs on across tiles. Element
//! types from the config (`TA` for A and B, `TD` for D); B given N×K (`MB = k`) or K×N
//! (`MB = mn`, the `nn` configs).
//!
//! Measured on the H200 at 8192³ (`tirx bench gemm --ladder`): 658.0 TFLOP/s, 0.98×.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 6: persistent — one CTA per SM walks the output tiles with grouped
    /// rasterization; the pipeline's iteration counter runs on across tiles, so stage and
    /// phase stay consistent without a reset. `grid = (SMS, 1)`: the launcher reads the
    /// device's SM count (the cluster kernels below take it rounded down to whole clusters,
    /// `SMS / 2 * 2`).
    ///
    /// The `nn` configs (`MB = mn`) take B given K×N (D = A·B): `b` is declared `#[major(MB)]`
    /// and its shared tile `major = MB`, so the same `tma::load` fills the tile one `[BK, 64]`
    /// box per 64-column chunk and wgmma reads it transposed; nothing else differs.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        grid = (SMS, 1),
        configs(
            group16 = (BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP = 16, TA = bf16, TD = bf16, MB = k),
            product(
                types(default = (TA = bf16, TD = bf16)),
                tile(default = (BN = 256, STAGES = 4), n128 = (BN = 128, STAGES = 6), n64 = (BN = 64, STAGES = 8)),
                with = (BM = 128, BK = 64, GROUP = 8, MB = k),
            ),
            // The other element types at 128×128 and 128×64: the fallback of every type
            // combination when the TMA-store kernel does not apply (D's rows not 16-byte
            // aligned, or fewer tiles than half a wave).
            product(
                types(f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(default = (BN = 128, STAGES = 6), n64 = (BN = 64, STAGES = 8)),
                with = (BM = 128, BK = 64, GROUP = 8, MB = k),
            ),
            product(
                layout(nn = (MB = mn)),
                types(default = (TA = bf16, TD = bf16), f16 = (TA = f16, TD = f16), bf16_f16 = (TA = bf16, TD = f16), f16_bf16 = (TA = f16, TD = bf16), bf16_f32 = (TA = bf16, TD = f32), f16_f32 = (TA = f16, TD = f32)),
                tile(n128 = (BN = 128, STAGES = 6), n64 = (BN = 64, STAGES = 8)),
                with = (BM = 128, BK = 64, GROUP = 8),
            ),
        ),
    )]
    pub fn gemm_sm90_ws(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<TA>,
        #[shape(M, N)] d: Tensor<TD>,
    ) {
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128, major = MB);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2);
        let tiles_m = cdiv(M, BM);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let mut it = 0;
                for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                    let (m, n) = grouped(t, tiles_m, tiles_n);
                    it = produce(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
                }
            }
        }
        ws_consumers(pipe, acc, a_s, b_s, d, tiles_m, tiles_n, k_tiles);
    }

    /// The consumer warpgroups of level 6: the same tile walk as the producer, each tile's K
    /// loop, then the accumulator stored from registers.
    #[tile_fn]
    fn ws_consumers(
        pipe: Pipe,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d: Global,
        tiles_m: u32,
        tiles_n: u32,
        k_tiles: u32,
    ) {
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let mut it = 0;
            for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                let (m, n) = grouped(t, tiles_m, tiles_n);
                it = consume(pipe, it, acc, a_s, b_s, wg, k_tiles);
                copy(d.tile(2 * m + wg, n), acc);
            }
        }
    }
}
