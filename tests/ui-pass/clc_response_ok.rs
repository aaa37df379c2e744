use tirx::prelude::*;

// The same kernels with `clc_response()`: one response, and stages of one indexed `resp[s]`.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn one_response(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
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

#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn staged_responses(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response(stages = 2);
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        clc::try_cancel(resp[1], next);
    }
    copy(t, x.tile(cta.y, cta.x));
    copy(y.tile(cta.y, cta.x), t);
    next.wait(0);
    let ok = clc::is_canceled(resp[1]);
    if ok {
        let cx = clc::first_cta(resp[1]);
        copy(t, x.tile(cta.y, cx));
        copy(y.tile(cta.y, cx), t);
    }
}

fn main() {
    assert_eq!(one_response::ARTIFACTS.len(), 1);
    assert_eq!(staged_responses::ARTIFACTS.len(), 1);
}
