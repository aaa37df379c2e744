use tirx::prelude::*;

// Atomics name their scope, take semantics a `red` or `atom` has, and an operation the
// tensor's type has: a missing scope, `scope = sys`, `sem = acquire` without old values, an
// atomic min on f32, an f32 TMA reduce-max, an old-value tile of the wrong type and a TMA
// reduce-store from many threads are errors at the user's token; so is overwriting a TMA
// reduce-store's source before its bulk group was waited on.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn k(#[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, y.tile(cta.x, cta.y));
    atomic::add(y.tile(cta.x, cta.y), t);
    atomic::add(y.tile(cta.x, cta.y), t, scope = sys);
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu, sem = acquire);
    atomic::min(y.tile(cta.x, cta.y), t, scope = gpu);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn old_type(#[shape(M, N)] h: Tensor<i32>) {
    let c = regs::<i32>([32, 64], layout = blocked(vec = 4));
    let o = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(c, h.tile(cta.x, cta.y));
    atomic::add(h.tile(cta.x, cta.y), c, scope = cluster, old = o);
    copy(h.tile(cta.x, cta.y), cast::<i32>(o));
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32)))]
pub fn tma_max(#[shape(M, N)] y: Tensor<f32>) {
    let s = smem::<f32>([32, 32]);
    #[scope(thread = 0)]
    {
        tma::reduce_max(y.tile(cta.y, cta.x), s);
    }
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32)))]
pub fn tma_threads(#[shape(M, N)] y: Tensor<f32>) {
    let s = smem::<f32>([32, 32]);
    tma::reduce_add(y.tile(cta.y, cta.x), s);
}

// A TMA reduce-store reads its source until its bulk group is waited on, as a TMA store does.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32)))]
pub fn overwritten(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let s = smem::<bf16>([32, 32]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(s, x.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::reduce_add(y.tile(cta.y, cta.x), s);
        tma::commit_group();
    }
    copy(s, x.tile(cta.y, cta.x));
    sync_threads();
}

fn main() {}
