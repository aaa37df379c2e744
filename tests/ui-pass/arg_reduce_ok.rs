use tirx::prelude::*;

// The twin of `ui/arg_reduce_errors.rs`: an index reduction of a float expression (a
// predicate selects between values), along axis 1 and axis 0, and a min across the cluster.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1), grid = (M * 2, 1))]
pub fn k(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<u32>) {
    let t = regs::<f32>([1, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x / 2, cta_rank));
    let a = argmax(select(t > 0.0, t, 0.0), axis = 1);
    let b = argmin(t, axis = 0);
    let c = reduce_min(t, axis = 1, across = cluster);
    copy(y.tile(cta.x / 2, cta_rank), a + b + cast::<u32>(c));
}

fn main() {}
