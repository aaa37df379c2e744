use tirx::prelude::*;

// The expect_tx written with the derived 16 bytes (or left out: derived).
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn right_bytes(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        next.expect_tx(16);
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

fn main() {
    assert_eq!(right_bytes::ARTIFACTS.len(), 1);
}
