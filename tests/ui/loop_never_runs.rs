use tirx::prelude::*;

// A loop with constant bounds that never runs in some config: its body would silently vanish
// (here, half the tile's loads), so it is an error at the range, naming the config.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (1, 1),
    configs(wide = (BN = 256), narrow = (BN = 64)),
)]
pub fn k(#[shape(M, N)] src: Tensor<bf16>) {
    let t = smem::<bf16>([4, 64, 64], swizzle = B128);
    let bar = mbarrier(count = 1);
    #[scope(thread = 0)]
    {
        for c in 0..BN / 128 {
            tma::load(t[c], src.tile(0, c), bar[0]);
        }
    }
}

fn main() {}
