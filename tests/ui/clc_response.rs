use tirx::prelude::*;

// Cluster-launch-control responses that are not 16 contiguous, 16-byte-aligned bytes of
// shared memory (PTX ISA §9.7.13.17): a 32-byte tile, a swizzled one, a register tile.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn wide_response(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = smem::<f32>([8]);
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        clc::try_cancel(resp, next);
    }
    copy(t, x.tile(cta.y, cta.x));
    copy(y.tile(cta.y, cta.x), t);
    next.wait(0);
    let ok = clc::is_canceled(resp);
    if ok {
        let (cx, cy) = clc::first_cta(resp);
        copy(t, x.tile(cy, cx));
        copy(y.tile(cy, cx), t);
    }
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn swizzled_response(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = smem::<f32>([2, 4], swizzle = B128);
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        clc::try_cancel(resp[0], next);
    }
    copy(t, x.tile(cta.y, cta.x));
    copy(y.tile(cta.y, cta.x), t);
    next.wait(0);
}

#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn register_response(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = regs::<f32>([4, 32], layout = blocked(vec = 1));
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        clc::try_cancel(resp, next);
    }
    copy(t, x.tile(cta.y, cta.x));
    copy(y.tile(cta.y, cta.x), t);
    next.wait(0);
}

fn main() {}
