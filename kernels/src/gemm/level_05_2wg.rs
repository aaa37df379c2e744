//! GEMM ladder, level 5: two consumer warpgroups, each owning 64 rows of a 128×256 tile
//! (`a_s[s][wg]`: the 128-row TMA box is two 64-row halves in shared memory); one CTA per
//! tile. BF16 in and out, D = A·Bᵀ.
//!
//! Measured on the H200 at 8192³ (`tirx bench gemm --ladder`): 650.2 TFLOP/s, 0.96×
//! (2026-11-30).

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// Level 5: warp specialization with register reallocation and two consumer warpgroups
    /// on a 128×256 tile; one CTA per tile.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        grid = (cdiv(N, BN), cdiv(M, BM)),
        configs(default = (BM = 128, BN = 256, BK = 64, STAGES = 4)),
    )]
    pub fn gemm_sm90_2wg(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2);
        let k_tiles = cdiv(K, BK);
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            {
                let _ = produce(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
            }
        }
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            let _ = consume(pipe, 0, acc, a_s, b_s, wg, k_tiles);
            copy(d.tile(2 * cta.y + wg, cta.x), acc);
        }
    }
}
