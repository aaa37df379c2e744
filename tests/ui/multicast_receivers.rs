use tirx::prelude::*;

// One CTA issues a multicast and each receiver arms its own barrier (a written `expect_tx`):
// the bytes are proven per rank. Rank 1 never arms (the arm sits in the issuer's `if`); a
// mask that leaves out ranks 2 and 3, which arm and wait; an arm for two boxes where one lands.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn issuer_arms(#[shape(M, N)] src: Tensor<bf16>, #[shape(D, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        if cta_rank == 0 {
            bar.expect_tx(8192);
            tma::load(tile, src.tile(cta.x / 2, cta.y), bar, multicast = 3);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.x, cta.y), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (4, 1, 1),
    grid = (cdiv(M, 64) * 4, cdiv(N, 64)))]
pub fn mask_too_small(#[shape(M, N)] src: Tensor<bf16>, #[shape(D, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.expect_tx(8192);
        if cta_rank == 0 {
            tma::load(tile, src.tile(cta.x / 4, cta.y), bar, multicast = 3);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.x, cta.y), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn armed_for_two(#[shape(M, N)] src: Tensor<bf16>, #[shape(D, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.expect_tx(16384);
        if cta_rank == 0 {
            tma::load(tile, src.tile(cta.x / 2, cta.y), bar, multicast = 3);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.x, cta.y), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

fn main() {}
