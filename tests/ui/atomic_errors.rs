use tirx::prelude::*;

// Atomics name their scope, take semantics a `red` or `atom` has, and an operation the
// tensor's type has: a missing scope, `scope = sys`, `sem = acquire` without old values, an
// atomic min on f32, an f32 TMA reduce-max, an old-value tile of the wrong type and a TMA
// reduce-store from many threads are errors at the user's token.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn k(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] h: Tensor<i32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    let c = regs::<i32>([32, 64], layout = blocked(vec = 4));
    let o = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, y.tile(cta.x, cta.y));
    copy(c, h.tile(cta.x, cta.y));
    atomic::add(y.tile(cta.x, cta.y), t);
    atomic::add(y.tile(cta.x, cta.y), t, scope = sys);
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu, sem = acquire);
    atomic::min(y.tile(cta.x, cta.y), t, scope = gpu);
    atomic::add(h.tile(cta.x, cta.y), c, scope = cluster, old = o);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32)))]
pub fn tma_max(#[shape(M, N)] y: Tensor<f32>) {
    let s = smem::<f32>([32, 32]);
    #[scope(thread = 0)]
    {
        tma::reduce_max(y.tile(cta.y, cta.x), s);
    }
    tma::reduce_add(y.tile(cta.y, cta.x), s);
}

fn main() {}
