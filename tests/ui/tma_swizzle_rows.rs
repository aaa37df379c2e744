use tirx::prelude::*;

// A TMA box's rows must be as wide as its swizzle's span: 32 bf16 columns are 64-byte rows,
// which the 128-byte swizzle would lay 128 bytes apart (past the tile's end). The copy is
// refused at its token, the buffer's declaration noted, and `B64` named as the fit.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 64)))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 32], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(tile, src.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.y, cta.x), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

fn main() {}
