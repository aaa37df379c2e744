//! `tma_copy` — a 2-D tile copy GMEM → SMEM → GMEM through the TMA engine.
//!
//! The smallest kernel that exercises the completion-signal contract: one thread issues a
//! TMA load into a 128B-swizzled shared tile; the barrier's expected bytes are derived from
//! the box (the kernel writes no byte count); every thread waits on the barrier's phase 0;
//! one thread stores the tile back with a TMA store and waits for its bulk group. Tails (M, N
//! not multiples of the tile) need no code: loads fill out-of-bounds elements with zeros and
//! stores clip them.

use tirx::prelude::*;

#[tile_kernel(
    solves = copy,
    targets(sm_90a, sm_100a),
    threads = 128,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 64, BN = 64), tall = (BM = 128, BN = 64)),
)]
pub fn tma_copy(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([BM, BN], swizzle = B128);
    let bar = mbarrier();
    let m = cta.y;
    let n = cta.x;

    #[scope(thread = 0)]
    {
        tma::load(tile, src.tile(m, n), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(m, n), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}
