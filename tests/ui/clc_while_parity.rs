use tirx::prelude::*;

// A work-stealing `while` loop that waits on the response's barrier with a fixed parity:
// every pass completes a phase of `next`, so the second pass's wait returns on the first's.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn fixed_parity(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
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
        next.wait(0);
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

fn main() {}
