use tirx::prelude::*;

// `warp_any` / `warp_all` / `warp_ballot` vote with a predicate: a float tile, a u32 scalar,
// an unbound vote, a vote into a variable of the other type and a vote used in place (it is
// bound by `let` first) are errors at the user's token.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 128), 1))]
pub fn k(#[shape(M, 4)] x: Tensor<f32>) {
    let t = regs::<f32>([128, 4], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    let a = warp_any(t * 2.0);
    let b = warp_all(cta.x + 1);
    warp_ballot(lane_id < 3);
    let mut n = 0;
    n = warp_any(t > 0.0);
    if warp_all(lane_id < 3) {
        sync_threads();
    }
}

// A vote needs whole warps: one thread's scope does not have them.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn one_thread(#[shape(M)] x: Tensor<f32>) {
    #[scope(thread = 0)]
    {
        let c = warp_any(lane_id < 3);
    }
}

fn main() {}
