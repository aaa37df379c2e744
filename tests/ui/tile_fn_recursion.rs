use tirx::prelude::*;

#[tile_module]
mod sched {
    use tirx::prelude::*;

    /// The next tile of this CTA.
    #[tile_fn]
    fn next_tile(t: u32, tiles: u32) -> u32 {
        let n = wrap(t + ncta.x, tiles);
        n
    }

    /// Wraps around the tile count (by calling back: a mistake).
    #[tile_fn]
    fn wrap(t: u32, tiles: u32) -> u32 {
        next_tile(t % tiles, tiles)
    }

    #[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
    pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
        let t = next_tile(cta.x, 4);
    }
}

fn main() {}
