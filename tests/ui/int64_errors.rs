use tirx::prelude::*;

// 64-bit integers: what is not supported yet is an error at the user's token (an argmax of
// i64 values, a gather at an i64 index, an i64 tile in shared memory), and so is mixing an
// i64 with an i32 tile without a cast, rounding an i64 to 16 bits in one step or adding it
// into a bf16 tensor, and an i64 argument where a u32 scalar (a coordinate) is needed.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn k(
    #[shape(M, N)] x: Tensor<i64>,
    #[shape(M, N)] n: Tensor<i32>,
    #[shape(M, N)] y: Tensor<i64>,
    #[shape(M, N)] h: Tensor<bf16>,
    #[shape(M)] s: Tensor<i64>,
    off: i64,
) {
    let t = regs::<i64>([32, 64], layout = blocked(vec = 2));
    let u = regs::<i32>([32, 64], layout = blocked(vec = 2));
    copy(t, x.tile(cta.x, 0));
    copy(u, n.tile(cta.x, 0));
    let m = argmax(t, axis = 1);
    copy(y.tile(cta.x, 0), t + u);
    copy(h.tile(cta.x, 0), cast::<bf16>(t));
    atomic::add(h.tile(cta.x, 0), t, scope = gpu);
    copy(y.tile(cta.x, 0), t + gather(s, t));
    copy(y.tile(off, 0), t);
    let sh = smem::<i64>([32, 64]);
}

fn main() {}
