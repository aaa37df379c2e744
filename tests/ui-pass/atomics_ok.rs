use tirx::prelude::*;

// The compile-pass twin of `ui/atomic_errors.rs`: each atomic with its scope, semantics,
// operation and old-value tile as the language takes them.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn k(#[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] h: Tensor<i32>) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    let c = regs::<i32>([32, 64], layout = blocked(vec = 4));
    let o = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(t, y.tile(cta.x, cta.y));
    copy(c, h.tile(cta.x, cta.y));
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu);
    atomic::add(y.tile(cta.x, cta.y), t, scope = cta, sem = release);
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu, sem = release);
    atomic::min(h.tile(cta.x, cta.y), c, scope = gpu);
    atomic::add(h.tile(cta.x, cta.y), c, scope = cluster, sem = acq_rel, old = o);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 32), cdiv(M, 32)))]
pub fn tma_max(#[shape(M, N)] y: Tensor<bf16>) {
    let s = smem::<bf16>([32, 32]);
    #[scope(thread = 0)]
    {
        tma::reduce_max(y.tile(cta.y, cta.x), s);
        tma::reduce_add(y.tile(cta.y, cta.x), s);
        tma::commit_group();
        tma::wait_group(0);
    }
}

fn main() {}
