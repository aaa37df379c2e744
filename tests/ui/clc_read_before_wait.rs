use tirx::prelude::*;

// A response decoded before the wait on the barrier its request signals.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn early_query(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        clc::try_cancel(resp, next);
    }
    copy(t, x.tile(cta.y, cta.x));
    copy(y.tile(cta.y, cta.x), t);
    let ok = clc::is_canceled(resp);
    next.wait(0);
    if ok {
        let (cx, cy) = clc::first_cta(resp);
        copy(t, x.tile(cy, cx));
        copy(y.tile(cy, cx), t);
    }
}

fn main() {}
