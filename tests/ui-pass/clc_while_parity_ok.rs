use tirx::prelude::*;

// The loop waits on the pass's parity (`k` counts the passes).
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn pass_parity(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let resp = clc_response();
    let next = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let mut tx = cta.x;
    let mut ty = cta.y;
    let mut k = 0;
    let mut more = true;
    while more {
        #[scope(thread = 0)]
        {
            clc::try_cancel(resp, next);
        }
        copy(t, x.tile(ty, tx));
        copy(y.tile(ty, tx), t);
        next.wait(k % 2);
        more = clc::is_canceled(resp);
        if more {
            let (cx, cy) = clc::first_cta(resp);
            tx = cx;
            ty = cy;
        }
        k += 1;
        fence::proxy_async();
        sync_threads();
    }
}

fn main() {
    assert_eq!(pass_parity::ARTIFACTS.len(), 1);
}
