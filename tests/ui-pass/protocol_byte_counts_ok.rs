//! The right versions of `ui/protocol_byte_counts.rs`: the `expect_tx` inside the `if`, next
//! to its load (or left out); every CTA of a multicast's mask issues its slice — also from
//! the two branches of an `if` on `cta_rank`, each for its own pair.
use tirx::prelude::*;

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn armed_inside(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        if cta.x < ncta.x - 1 {
            bar.expect_tx(8192);
            tma::load(tile, src.tile(cta.y, cta.x), bar);
        }
    }
    if cta.x < ncta.x - 1 {
        bar.wait(0);
        #[scope(thread = 0)]
        {
            tma::store(dst.tile(cta.y, cta.x), tile);
            tma::commit_group();
            tma::wait_group(0);
        }
    }
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn both_send(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([2, 32, 64], swizzle = B128);
    let bar = mbarrier();
    let pair = cta.x / 2;
    #[scope(thread = 0)]
    {
        tma::load(tile[cta_rank], src.tile(2 * pair + cta_rank, cta.y), bar, multicast = 3);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(2 * pair + cta_rank, cta.y), tile[cta_rank]);
        tma::commit_group();
        tma::wait_group(0);
    }
    cluster_sync();
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (4, 1, 1),
    grid = (cdiv(M, 32) * 4, cdiv(N, 64)))]
pub fn pairs_send(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([4, 32, 64], swizzle = B128);
    let bar = mbarrier();
    let quad = cta.x / 4;
    #[scope(thread = 0)]
    {
        if cta_rank < 2 {
            tma::load(tile[cta_rank], src.tile(4 * quad + cta_rank, cta.y), bar, multicast = 3);
        } else {
            tma::load(tile[cta_rank], src.tile(4 * quad + cta_rank, cta.y), bar, multicast = 12);
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

fn main() {
    assert_eq!(armed_inside::ARTIFACTS.len(), 1);
    assert_eq!(both_send::ARTIFACTS.len(), 1);
    assert_eq!(pairs_send::ARTIFACTS.len(), 1);
}
