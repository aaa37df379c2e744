use tirx::prelude::*;

// A counted loop of TMA loads may gather the scalar each box reads (a block table's page):
// still one phase with one derived expect-tx of all 4 boxes, one arrival.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(P)] table: Tensor<i32>) {
    let tile = smem::<bf16>([4, 64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        for p in 0..4 {
            let row = gather(table, p);
            tma::load(tile[p], src.tile(row, 0), bar);
        }
    }
    bar.wait(0);
}

fn main() {}
