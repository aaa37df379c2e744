//! Two kernels in one `#[tile_module]` share their producer and consumer loops (`#[tile_fn]`s,
//! inlined at each call): a tiled GEMM and a persistent one that walks its tiles with a third
//! helper.
use tirx::prelude::*;

#[tile_module]
pub mod ladder {
    use tirx::prelude::*;

    /// The producer loop over one tile's K steps; returns the pipeline iteration after it.
    #[tile_fn]
    fn load_k(
        pipe: Pipe,
        it: u32,
        a_s: Smem,
        b_s: Smem,
        a: Global,
        b: Global,
        m: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
            tma::load(b_s[s], b.tile(n, k), pipe.full(s));
            it += 1;
        }
        it
    }

    /// The consumer loop over one tile's K steps, then the tile's store.
    #[tile_fn]
    fn mma_k(
        pipe: Pipe,
        it: u32,
        acc: Regs,
        a_s: Smem,
        b_s: Smem,
        d: Global,
        m: u32,
        n: u32,
        k_tiles: u32,
    ) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            wgmma::fence();
            wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            wgmma::commit();
            wgmma::wait(0);
            #[scope(thread = 128)]
            {
                pipe.consumer_release(s);
            }
            it += 1;
        }
        copy(d.tile(m, n), acc);
        it
    }

    /// Row-major walk: output tile (m, n) of linear tile index t.
    #[tile_fn]
    fn tile_of(t: u32, tiles_n: u32) -> (u32, u32) {
        (t / tiles_n, t % tiles_n)
    }

    /// One output tile per CTA.
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, BN), cdiv(M, BM)),
        configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4)),
    )]
    pub fn tiled(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        #[scope(warp = 0, elect)]
        {
            let _ = load_k(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
        }
        #[scope(warpgroup = 1)]
        {
            let _ = mma_k(pipe, 0, acc, a_s, b_s, d, cta.y, cta.x, k_tiles);
        }
    }

    /// One CTA per SM, walking the tiles; the pipeline's iteration runs on across tiles.
    #[tile_kernel(
        target = sm_90a,
        threads = 256,
        grid = (132, 1),
        configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4)),
    )]
    pub fn persistent(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)] b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let tiles_n = cdiv(N, BN);
        let tiles = cdiv(M, BM) * tiles_n;
        let k_tiles = cdiv(K, BK);
        #[scope(warp = 0, elect)]
        {
            let mut it = 0;
            for t in (cta.x..tiles).step_by(ncta.x) {
                let (m, n) = tile_of(t, tiles_n);
                it = load_k(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
            }
        }
        #[scope(warpgroup = 1)]
        {
            let mut it = 0;
            for t in (cta.x..tiles).step_by(ncta.x) {
                let (m, n) = tile_of(t, tiles_n);
                it = mma_k(pipe, it, acc, a_s, b_s, d, m, n, k_tiles);
            }
        }
    }
}

fn main() {
    assert_eq!(ladder::tiled::ARTIFACTS.len(), 1);
    assert_eq!(ladder::persistent::ARTIFACTS.len(), 1);
    // `d` is written inside `mma_k`: both launchers take it `&mut`.
    let _: fn(
        &tirx::Runtime,
        &str,
        &tirx::Tensor<tirx::bf16>,
        &tirx::Tensor<tirx::bf16>,
        &mut tirx::Tensor<tirx::bf16>,
    ) -> Result<(), tirx::RuntimeError> = ladder::tiled::launch;
    let _: fn(
        &tirx::Runtime,
        &str,
        &tirx::Tensor<tirx::bf16>,
        &tirx::Tensor<tirx::bf16>,
        &mut tirx::Tensor<tirx::bf16>,
    ) -> Result<(), tirx::RuntimeError> = ladder::persistent::launch;
}
