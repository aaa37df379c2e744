use tirx::prelude::*;

// `clc::try_cancel` issued by a whole warp (one request per thread into one response), and
// on sm_90a, which has no cluster launch control.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn warp_issues(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(warp = 0)]
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

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn on_hopper(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
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

fn main() {}
