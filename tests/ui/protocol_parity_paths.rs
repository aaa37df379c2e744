use tirx::prelude::*;

// Phase parity outside loops (issue #33 item 1): a constant parity against the phases
// signalled before the wait, on every path.

// One arrival on a one-arrival barrier completes phase 0; `wait(1)` names phase 1.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn arrive_then_wait_one() {
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
    bar.wait(1);
}

// A TMA load's phase waited on parity 1, through a variable.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn load_then_wait_one(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    let phase = 1;
    #[scope(thread = 0)]
    {
        tma::load(xs, x.tile(cta.x, 0), bar);
    }
    bar.wait(phase);
    copy(t, xs);
    copy(y.tile(cta.x, 0), t);
}

// Two phases of one barrier, each waited on parity 0: the second wait names phase 2.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn same_parity_twice() {
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
    bar.wait(0);
}

// Both branches load once: phase 0 on every path.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn both_branches_then_wait_one(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    #[scope(thread = 0)]
    {
        if cta.x % 2 == 0 {
            tma::load(xs, x.tile(cta.x, 0), bar);
        } else {
            tma::load(xs, x.tile(cta.x, 1), bar);
        }
    }
    bar.wait(1);
    copy(t, xs);
    copy(y.tile(cta.x, 0), t);
}

// Every thread arrives on a 128-arrival barrier: one phase, waited on parity 1.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn whole_cta_phase() {
    let bar = mbarrier(arrivals = 128);
    bar.arrive();
    bar.wait(1);
}

// Nothing signals `bar`: its phase 0 never completes.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn never_signalled() {
    let bar = mbarrier();
    bar.wait(0);
}

// `bars[0]` is signalled, `bars[1]` is not.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn other_element_signalled() {
    let bars = mbarrier(count = 2);
    #[scope(thread = 0)]
    {
        bars[0].arrive();
    }
    bars[0].wait(0);
    bars[1].wait(0);
}

// The only signal comes after the wait, from a thread that waits first.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn signalled_behind_the_wait() {
    let bar = mbarrier();
    bar.wait(0);
    #[scope(thread = 0)]
    {
        bar.arrive();
    }
}

// The same inside one thread, with a TMA load.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 64), 1))]
pub fn load_behind_the_wait(#[shape(M, N)] x: Tensor<bf16>) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.wait(0);
        tma::load(xs, x.tile(cta.x, 0), bar);
    }
}

fn main() {}
