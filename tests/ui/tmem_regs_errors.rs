use tirx::prelude::*;

// A TMEM accumulator moved into a register tile of another layout than the one tcgen05.ld
// gives (`tmem_32x32b`): no copy variant fits, and the TMEM load says which tile it needs.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn wrong_layout(#[shape(M, N)] d: Tensor<bf16>) {
    let acc = tmem::<f32>([128, 64]);
    let t = regs::<f32>([128, 64], layout = blocked(vec = 4));
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    copy(t, acc);
    copy(d.tile(0, 0), t);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

fn main() {}
