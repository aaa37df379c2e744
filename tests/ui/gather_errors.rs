use tirx::prelude::*;

// `gather(x, row, col)` takes a tensor parameter and one integer index per dimension of a
// vector or a matrix: a float index, a missing index, a register tile in the tensor's place
// and a rank-3 tensor are errors at the user's token.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn k(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M)] target: Tensor<i32>,
    #[shape(M)] loss: Tensor<f32>,
    #[shape(B, M, N)] cube: Tensor<f32>,
) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    let tg = regs::<i32>([4, 1], layout = stat(t, axis = 1));
    copy(t, x.tile(cta.x, 0));
    copy(tg, target.tile(cta.x));
    let m = reduce_max(t, axis = 1);
    copy(loss.tile(cta.x), gather(x, cta.x * 4 + row_index(tg), m));
    copy(loss.tile(cta.x), m - gather(x, tg));
    copy(loss.tile(cta.x), gather(t, row_index(tg), tg));
    copy(loss.tile(cta.x), gather(cube, 0, row_index(tg), tg));
}

// A gather into a scalar (a TMA coordinate) reads an integer tensor: scalars are u32.
#[tile_kernel(target = sm_90a, threads = 32, grid = (S, 1))]
pub fn float_page(#[shape(S)] ids: Tensor<f32>, #[shape(V, 64)] table: Tensor<bf16>) {
    let row_s = smem::<bf16>([1, 64]);
    let bar = mbarrier();
    let id = gather(ids, cta.x);
    #[scope(thread = 0)]
    {
        tma::load(row_s, table.tile(id, 0), bar);
    }
    bar.wait(0);
}

fn main() {}
