//! Warp votes (issue #28): `warp_any`, `warp_all` and `warp_ballot` of a tile predicate and of
//! a scalar predicate, run in the emulator on random data against a Rust reference built per
//! warp to make each vote's answer hinge on one lane (so swapping `any` and `all`, or dropping
//! any one lane's or element's predicate, changes an output); a warp split by an `if` is an
//! emulator diagnostic; the kernels assemble with ptxas.

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::sim_exec::EMULATED;

/// Per row (one row a thread, 4 elements): column 0 the warp's ballot of `x > thr` (a lane's
/// bit: some element of its row above), column 1 `warp_any`, column 2 `warp_all` (every
/// element of every row above), column 3 the ballot of the scalar predicate `lane_id % 3 == 0`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 128), 1))]
pub fn votes(#[shape(M, 4)] x: Tensor<f32>, #[shape(M, 4)] out: Tensor<u32>, thr: f32) {
    let t = regs::<f32>([128, 4], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    let above = t > thr;
    let any = warp_any(above);
    let all = warp_all(above);
    let bal = warp_ballot(above);
    let mut thirds = 0;
    thirds = warp_ballot(lane_id % 3 == 0);
    let mut a = 0;
    if any {
        a = 1;
    }
    let mut b = 0;
    if all {
        b = 1;
    }
    let o = regs::<u32>([128, 4], layout = blocked(vec = 4));
    o = select(
        col_index(o) == 0,
        bal,
        select(col_index(o) == 1, a, select(col_index(o) == 2, b, thirds)),
    );
    copy(out.tile(cta.x, 0), o);
}

/// A vote inside an `if` that splits each warp: lanes 16–31 never reach it.
#[tile_kernel(target = sm_90a, threads = 32, grid = (1, 1))]
pub fn split_vote(#[shape(M)] out: Tensor<u32>) {
    let mut v = 0;
    if lane_id < 16 {
        v = warp_ballot(lane_id < 8);
    }
    let o = regs::<u32>([1, 32], layout = blocked(vec = 1));
    o = select(col_index(o) == 0, v, 0);
    copy(out.tile(0), o);
}

fn words(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
}

fn read_words(dev: &Device, t: &TensorMeta, n: usize) -> Vec<u32> {
    dev.read(t.addr, n * 4)
        .expect("the tensor's allocation")
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn launch(art: &KernelArtifact, dev: &mut Device, tensors: &[TensorMeta], thr: f32) {
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        dev,
        (tensors, &[thr]),
        7,
        &EMULATED,
    )
    .expect("the kernel runs");
}

/// Rows of a warp whose votes hinge on one lane: by `w % 5`, no element above the threshold;
/// one element of one random lane above (any, not all); every element above (all); every
/// element above but one (any, not all); random.
fn warp_rows(rng: &mut Rng, w: usize, thr: f32) -> Vec<f32> {
    // `unit` is uniform in [-1, 1).
    let below = |rng: &mut Rng| thr - 0.01 - (rng.unit() + 1.0) * 0.25;
    let above = |rng: &mut Rng| thr + 0.01 + (rng.unit() + 1.0) * 0.25;
    let pick = (rng.next_u64() % 128) as usize;
    (0..128)
        .map(|e| match w % 5 {
            0 => below(rng),
            1 if e == pick => above(rng),
            1 => below(rng),
            2 => above(rng),
            3 if e == pick => below(rng),
            3 => above(rng),
            _ => thr + rng.unit(),
        })
        .collect()
}

#[test]
fn votes_of_tiles_and_scalars_match_the_reference() {
    // 500 rows: the last CTA's last 12 rows are outside the tensor (they load 0, below the
    // threshold, and their outputs are clipped).
    const M: usize = 500;
    let thr = 0.25f32;
    let mut dev = Device::new();
    let mut rng = Rng::new(28);
    let mut x: Vec<f32> = (0..M.div_ceil(32))
        .flat_map(|w| warp_rows(&mut rng, w, thr))
        .collect();
    x.truncate(M * 4);
    let xt = put(&mut dev, &words(&x), ElemType::F32, &[M, 4]);
    let ot = put(&mut dev, &vec![0xa5; M * 16], ElemType::U32, &[M, 4]);
    launch(
        &votes::KERNEL.artifacts[0],
        &mut dev,
        &[xt, ot.clone()],
        thr,
    );
    let got = read_words(&dev, &ot, M * 4);
    let thirds = (0..32u32)
        .filter(|l| l % 3 == 0)
        .fold(0u32, |m, l| m | 1 << l);
    let mut seen = [false; 4];
    for w in 0..M.div_ceil(32) {
        let el = |r: usize, c: usize| if r < M { x[r * 4 + c] } else { 0.0 };
        let lane_above = |l: usize| (0..4).any(|c| el(w * 32 + l, c) > thr);
        let ballot = (0..32).fold(0u32, |m, l| m | u32::from(lane_above(l)) << l);
        let any = u32::from(ballot != 0);
        let all = u32::from((0..32).all(|l| (0..4).all(|c| el(w * 32 + l, c) > thr)));
        seen[(any + all) as usize] = true;
        if ballot.count_ones() == 1 {
            seen[3] = true;
        }
        for r in (w * 32..w * 32 + 32).filter(|&r| r < M) {
            let row = &got[r * 4..r * 4 + 4];
            assert_eq!(row, [ballot, any, all, thirds], "row {r} (warp {w})");
        }
    }
    // Each answer occurs: no lane above, some, all, and exactly one lane above.
    assert_eq!(seen, [true; 4], "the data exercises every outcome");
}

#[test]
fn a_vote_in_a_split_warp_is_diagnosed() {
    let mut dev = Device::new();
    let ot = put(&mut dev, &[0; 32 * 4], ElemType::U32, &[32]);
    let art = &split_vote::KERNEL.artifacts[0];
    let err = simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[ot], &[]),
        1,
        &EMULATED,
    )
    .expect_err("half the warp never reaches the vote");
    // Lanes 0–15 wait at the vote for lanes 16–31, which never come.
    let msg = err.to_string();
    assert!(
        msg.contains("warp-collective: needs lanes 0xffffffff, only 0x0000ffff arrived"),
        "{msg}"
    );
}

/// The votes lower to `vote.sync` with the full member mask, and assemble for sm_90a without
/// spills (ptxas where installed).
#[test]
fn the_vote_kernels_lower_to_vote_sync_and_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    let ptx = votes::KERNEL.artifacts[0].ptx;
    for op in [
        "vote.sync.any.pred",
        "vote.sync.all.pred",
        "vote.sync.ballot.b32",
    ] {
        assert!(ptx.contains(op), "{op}: {ptx}");
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [&votes::KERNEL, &split_vote::KERNEL] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
        }
    }
}
