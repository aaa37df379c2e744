use tirx::prelude::*;

// Byte counts through control flow and clusters: an `expect_tx` outside the `if` that issues
// its load (the bytes are expected twice, or never arrive); a multicast to both CTAs of a
// pair issued by rank 0 only; a multicast to four CTAs issued by ranks 0 and 1 only.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn armed_outside(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.expect_tx(8192);
        if cta.x < ncta.x - 1 {
            tma::load(tile, src.tile(cta.y, cta.x), bar);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.y, cta.x), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn one_sender(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        if cta_rank == 0 {
            tma::load(tile, src.tile(cta.x / 2, cta.y), bar, multicast = 3);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.x / 2, cta.y), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
    cluster_sync();
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (4, 1, 1),
    grid = (cdiv(M, 64) * 4, cdiv(N, 64)))]
pub fn half_the_senders(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([4, 16, 64], swizzle = B128);
    let bar = mbarrier();
    let quad = cta.x / 4;
    #[scope(thread = 0)]
    {
        if cta_rank < 2 {
            tma::load(tile[cta_rank], src.tile(4 * quad + cta_rank, cta.y), bar, multicast = 15);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(4 * quad + cta_rank, cta.y), tile[cta_rank]);
        tma::commit_group();
        tma::wait_group(0);
    }
    cluster_sync();
}

fn main() {}
