use tirx::prelude::*;

// One CTA issues a multicast and each receiver arms its own barrier (a written `expect_tx`
// outside the issuer's `if`): the bytes are proven per rank. Ranks 2 and 3 never arm; the arm
// inside the issuer's `if` (read as a symmetric multicast, whose count is then wrong); a mask
// that leaves out ranks 2 and 3, which arm and wait; an arm for two boxes where one lands.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (4, 1, 1),
    grid = (cdiv(M, 64) * 4, cdiv(N, 64)))]
pub fn half_armed(#[shape(M, N)] src: Tensor<bf16>, #[shape(D, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        if cta_rank < 2 {
            bar.expect_tx(8192);
        }
        if cta_rank == 0 {
            tma::load(tile, src.tile(cta.x / 4, cta.y), bar, multicast = 15);
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
