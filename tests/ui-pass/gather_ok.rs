use tirx::prelude::*;

// The twin of `ui/gather_errors.rs`: integer indices (an `i32` statistic, `row_index` plus a
// scalar, a cast), one per dimension of a matrix or a vector.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn k(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M)] target: Tensor<i32>,
    #[shape(M)] loss: Tensor<f32>,
) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    let tg = regs::<i32>([4, 1], layout = stat(t, axis = 1));
    copy(t, x.tile(cta.x, 0));
    copy(tg, target.tile(cta.x));
    let m = reduce_max(t, axis = 1);
    copy(loss.tile(cta.x), gather(x, cta.x * 4 + row_index(tg), cast::<i32>(m)));
    copy(loss.tile(cta.x), m - gather(x, cta.x * 4 + row_index(tg), tg));
    copy(loss.tile(cta.x), m - gather(x, cta.x * 4 + row_index(tg), tg, oob = zero));
    copy(loss.tile(cta.x), m + cast::<f32>(gather(target, cta.x * 4 + row_index(tg))));
}

// A page id loaded into a scalar is a TMA tile coordinate.
#[tile_kernel(target = sm_90a, threads = 32, grid = (S, 1))]
pub fn int_page(
    #[shape(S)] ids: Tensor<i32>,
    #[shape(V, 64)] table: Tensor<bf16>,
    #[shape(S, 64)] out: Tensor<bf16>,
) {
    let row_s = smem::<bf16>([1, 64]);
    let bar = mbarrier();
    let id = gather(ids, cta.x, oob = zero);
    #[scope(thread = 0)]
    {
        tma::load(row_s, table.tile(id, 0), bar);
    }
    bar.wait(0);
    let r = regs::<bf16>([1, 64], layout = blocked(vec = 2));
    copy(r, row_s);
    copy(out.tile(cta.x, 0), r);
}

fn main() {}
