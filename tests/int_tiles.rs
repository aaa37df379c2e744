//! Integer element types (issue #30 item 1): `Tensor<i32>`/`Tensor<u32>` parameters, `i32`
//! and `u32` register tiles loaded and stored with masked tails, integer arithmetic in tile
//! expressions (`+ - * / %`, shifts, bitwise ops, comparisons, `min`/`max`, `abs`, `-x`,
//! `select`) and conversions to and from f32, run in the emulator against a Rust reference
//! on random data with negative values and tails in both dimensions.
//!
//! The reference is Rust's own integer semantics: wrapping `+ - *`, `/` and `%` truncating
//! toward zero (PTX `div.s32`/`rem.s32`, §9.7.1.8/§9.7.1.9), `>>` arithmetic on `i32` and
//! logical on `u32` (§9.7.8.8), `as i32` from f32 truncating toward zero (`cvt.rzi.s32.f32`,
//! §9.7.9.21), `as f32` from i32 rounding to nearest (`cvt.rn.f32.s32`). Every output is
//! bit-exact.

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::put;
use tirx_sim::Device;

use super::emu_io::{assert_ir_round_trips, launch, poisoned, read32, words32};

/// `y = x`, an `i32` tile in and out.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i32_copy(#[shape(M, N)] x: Tensor<i32>, #[shape(M, N)] y: Tensor<i32>) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, cta.y));
    copy(y.tile(cta.x, cta.y), t);
}

/// Integer arithmetic on two `i32` tiles, with indices and literals.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i32_ops(
    #[shape(M, N)] a: Tensor<i32>,
    #[shape(M, N)] b: Tensor<i32>,
    #[shape(M, N)] sum: Tensor<i32>,
    #[shape(M, N)] quo: Tensor<i32>,
    #[shape(M, N)] bits: Tensor<i32>,
    #[shape(M, N)] pick: Tensor<i32>,
) {
    let x = regs::<i32>([32, 64], layout = blocked(vec = 4));
    let y = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(x, a.tile(cta.x, cta.y));
    copy(y, b.tile(cta.x, cta.y));
    let d = select(y == 0, 7, y);
    copy(sum.tile(cta.x, cta.y), x + y * 3 - col_index(x) - 5);
    copy(quo.tile(cta.x, cta.y), x / d * 1000 + x % d);
    copy(bits.tile(cta.x, cta.y), ((x << 3) ^ (y >> 2)) | (x & 255));
    copy(
        pick.tile(cta.x, cta.y),
        select(x < y, min(x, -y), max(x, abs(y))),
    );
}

/// Conversions between `i32` and `f32` tiles.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i32_casts(
    #[shape(M, N)] a: Tensor<i32>,
    #[shape(M, N)] f: Tensor<f32>,
    #[shape(M, N)] af: Tensor<f32>,
    #[shape(M, N)] fi: Tensor<i32>,
) {
    let x = regs::<i32>([32, 64], layout = blocked(vec = 4));
    let g = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(x, a.tile(cta.x, cta.y));
    copy(g, f.tile(cta.x, cta.y));
    copy(af.tile(cta.x, cta.y), cast::<f32>(x) * 0.5);
    copy(
        fi.tile(cta.x, cta.y),
        cast::<i32>(g * 100.0) + cast::<i32>(row_index(g)),
    );
}

/// Unsigned arithmetic: logical shifts, unsigned division and comparison.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn u32_ops(#[shape(M, N)] a: Tensor<u32>, #[shape(M, N)] o: Tensor<u32>) {
    let x = regs::<u32>([32, 64], layout = blocked(vec = 4));
    copy(x, a.tile(cta.x, cta.y));
    let mut acc = (x / 3) ^ (x % 5);
    acc = acc + min(x, col_index(x));
    copy(o.tile(cta.x, cta.y), select(x > 2000000000, x >> 4, acc));
}

const M: usize = 45;
const N: usize = 70;

/// Random `i32` in `[-lim, lim]`, with a few zeros.
fn ints(rng: &mut Rng, lim: i32) -> Vec<i32> {
    (0..M * N)
        .map(|i| {
            if i % 17 == 0 {
                0
            } else {
                (rng.unit() * lim as f32) as i32
            }
        })
        .collect()
}

#[test]
fn i32_tiles_copy_with_tails() {
    let mut dev = Device::new();
    let x = ints(&mut Rng::new(1), 1 << 30);
    let xt = put(&mut dev, &words32(&x, |v| v as u32), ElemType::I32, &[M, N]);
    let yt = poisoned(&mut dev, ElemType::I32, &[M, N]);
    launch(&i32_copy::KERNEL.artifacts[0], &mut dev, &[xt, yt.clone()]);
    let got: Vec<i32> = read32(&dev, &yt, M * N).iter().map(|&w| w as i32).collect();
    assert_eq!(got, x);
}

#[test]
fn i32_arithmetic_matches_rust() {
    let mut dev = Device::new();
    let mut rng = Rng::new(2);
    let (a, b) = (ints(&mut rng, 1 << 20), ints(&mut rng, 300));
    let at = put(&mut dev, &words32(&a, |v| v as u32), ElemType::I32, &[M, N]);
    let bt = put(&mut dev, &words32(&b, |v| v as u32), ElemType::I32, &[M, N]);
    let outs: Vec<TensorMeta> = (0..4)
        .map(|_| poisoned(&mut dev, ElemType::I32, &[M, N]))
        .collect();
    let mut all = vec![at, bt];
    all.extend(outs.iter().cloned());
    launch(&i32_ops::KERNEL.artifacts[0], &mut dev, &all);
    let got: Vec<Vec<i32>> = outs
        .iter()
        .map(|t| read32(&dev, t, M * N).iter().map(|&w| w as i32).collect())
        .collect();
    for i in 0..M * N {
        let (x, y, col) = (a[i], b[i], (i % N % 64) as i32);
        let d = if y == 0 { 7 } else { y };
        let want = [
            x + y * 3 - col - 5,
            (x / d) * 1000 + x % d,
            ((x << 3) ^ (y >> 2)) | (x & 255),
            if x < y { x.min(-y) } else { x.max(y.abs()) },
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[k][i],
                *w,
                "output {k} at ({}, {}): a = {x}, b = {y}",
                i / N,
                i % N
            );
        }
    }
}

#[test]
fn i32_f32_conversions_round_as_documented() {
    let mut dev = Device::new();
    let mut rng = Rng::new(3);
    // Odd integers above 2^24 round to even in f32; negative halves truncate toward zero.
    let a: Vec<i32> = ints(&mut rng, 1 << 26);
    let f: Vec<f32> = (0..M * N).map(|_| rng.unit() * 50.0).collect();
    let at = put(&mut dev, &words32(&a, |v| v as u32), ElemType::I32, &[M, N]);
    let ft = put(&mut dev, &words32(&f, f32::to_bits), ElemType::F32, &[M, N]);
    let (aft, fit) = (
        poisoned(&mut dev, ElemType::F32, &[M, N]),
        poisoned(&mut dev, ElemType::I32, &[M, N]),
    );
    launch(
        &i32_casts::KERNEL.artifacts[0],
        &mut dev,
        &[at, ft, aft.clone(), fit.clone()],
    );
    let af = read32(&dev, &aft, M * N);
    let fi = read32(&dev, &fit, M * N);
    for i in 0..M * N {
        let row = (i / N % 32) as i32;
        assert_eq!(f32::from_bits(af[i]), a[i] as f32 * 0.5, "af at {i}");
        assert_eq!(fi[i] as i32, (f[i] * 100.0) as i32 + row, "fi at {i}");
    }
}

#[test]
fn u32_arithmetic_is_unsigned() {
    let mut dev = Device::new();
    // Negative i32 bit patterns: u32 values near 2^32, above the select's threshold.
    let a: Vec<u32> = ints(&mut Rng::new(4), 1 << 30)
        .iter()
        .map(|&v| v as u32)
        .collect();
    let at = put(&mut dev, &words32(&a, |v| v), ElemType::U32, &[M, N]);
    let ot = poisoned(&mut dev, ElemType::U32, &[M, N]);
    launch(&u32_ops::KERNEL.artifacts[0], &mut dev, &[at, ot.clone()]);
    let got = read32(&dev, &ot, M * N);
    for i in 0..M * N {
        let (x, col) = (a[i], (i % N % 64) as u32);
        let acc = ((x / 3) ^ (x % 5)).wrapping_add(x.min(col));
        let want = if x > 2_000_000_000 { x >> 4 } else { acc };
        assert_eq!(got[i], want, "at ({}, {}): a = {x}", i / N, i % N);
    }
}

#[test]
fn integer_ops_pick_the_signed_or_unsigned_instruction() {
    let ptx = |a: &KernelArtifact| a.ptx;
    let i = ptx(&i32_ops::KERNEL.artifacts[0]);
    for op in [
        "div.s32",
        "rem.s32",
        "shr.s32",
        "shl.b32",
        "xor.b32",
        "and.b32",
        "or.b32",
        "setp.lt.s32",
        "min.s32",
        "max.s32",
        "neg.s32",
        "abs.s32",
        "mul.lo.s32",
    ] {
        assert!(i.contains(op), "i32_ops lacks {op}");
    }
    let u = ptx(&u32_ops::KERNEL.artifacts[0]);
    for op in ["div.u32", "rem.u32", "shr.u32", "setp.hi.u32", "min.u32"] {
        assert!(u.contains(op), "u32_ops lacks {op}");
    }
    assert!(!u.contains(".s32"), "u32_ops uses no signed instruction");
    let r = ptx(&int_reduce::KERNEL.artifacts[0]);
    for op in [
        "max.s32",
        "add.s32",
        "shfl.sync.bfly.b32",
        "st.shared.s32",
        "ld.shared.s32",
        "max.u32",
    ] {
        assert!(r.contains(op), "int_reduce lacks {op}");
    }
    let rc = ptx(&int_reduce_cluster::KERNEL.artifacts[0]);
    assert!(
        rc.contains("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32")
            && rc.contains("ld.shared.s32"),
        "int_reduce_cluster lacks the s32 push"
    );
    let c = ptx(&i32_casts::KERNEL.artifacts[0]);
    for op in ["cvt.rzi.s32.f32", "cvt.rn.f32.s32"] {
        assert!(c.contains(op), "i32_casts lacks {op}");
    }
}

/// The IR text of integer kernels (`i32` tensors and tiles, `rem`/`shl`/`cast_i32` …) parses
/// back to the same text and recompiles to the same PTX, after every pass too.
#[test]
fn integer_ir_prints_parses_and_recompiles() {
    let arts = [
        &i32_copy::KERNEL.artifacts[0],
        &i32_ops::KERNEL.artifacts[0],
        &i32_casts::KERNEL.artifacts[0],
        &u32_ops::KERNEL.artifacts[0],
        &int_reduce::KERNEL.artifacts[0],
        &int_reduce_cluster::KERNEL.artifacts[0],
    ];
    for a in arts {
        assert_ir_round_trips(a, true);
    }
}

/// The example of `docs/language.md` ("Integer tiles"): token ids of one vocabulary shard.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn shard_ids(
    #[shape(M, N)] ids: Tensor<i32>,
    #[shape(M, N)] local: Tensor<i32>,
    #[shape(M, N)] pos: Tensor<f32>,
) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(t, ids.tile(cta.x, cta.y));
    let l = t - 4096;
    copy(local.tile(cta.x, cta.y), select(l >= 0 && l < 4096, l, -1));
    copy(pos.tile(cta.x, cta.y), cast::<f32>(t & 63) * 0.5);
}

#[test]
fn the_reference_example_shards_token_ids() {
    let mut dev = Device::new();
    let ids: Vec<i32> = ints(&mut Rng::new(5), 10_000);
    let it = put(
        &mut dev,
        &words32(&ids, |v| v as u32),
        ElemType::I32,
        &[M, N],
    );
    let (lt, pt) = (
        poisoned(&mut dev, ElemType::I32, &[M, N]),
        poisoned(&mut dev, ElemType::F32, &[M, N]),
    );
    launch(
        &shard_ids::KERNEL.artifacts[0],
        &mut dev,
        &[it, lt.clone(), pt.clone()],
    );
    let (local, pos) = (read32(&dev, &lt, M * N), read32(&dev, &pt, M * N));
    for (i, &id) in ids.iter().enumerate() {
        let l = id - 4096;
        let want = if (0..4096).contains(&l) { l } else { -1 };
        assert_eq!(local[i] as i32, want, "local of id {id}");
        assert_eq!(
            f32::from_bits(pos[i]),
            (id & 63) as f32 * 0.5,
            "pos of id {id}"
        );
    }
}

/// Integer reductions: a row max within a warp's lanes, a column sum across the CTA's warps
/// (through shared memory), a row sum of an integer expression and an unsigned column max.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn int_reduce(
    #[shape(M, 64)] a: Tensor<i32>,
    #[shape(M, 64)] below_max: Tensor<i32>,
    #[shape(M, 64)] col_sum: Tensor<i32>,
    #[shape(M, 64)] row_sum: Tensor<i32>,
    #[shape(M, 64)] col_max: Tensor<u32>,
) {
    let x = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(x, a.tile(cta.x, 0));
    copy(below_max.tile(cta.x, 0), reduce_max(x, axis = 1) - x);
    copy(col_sum.tile(cta.x, 0), reduce_sum(x, axis = 0) - x);
    copy(
        row_sum.tile(cta.x, 0),
        reduce_sum(x >> 4, axis = 1) + col_index(x),
    );
    let m = reduce_max(cast::<u32>(x), axis = 0);
    copy(col_max.tile(cta.x, 0), m ^ cast::<u32>(x));
}

#[test]
fn integer_reductions_match_rust() {
    const C: usize = 64;
    let mut dev = Device::new();
    let a = ints(&mut Rng::new(6), 1 << 20);
    let a = &a[..M * C];
    let at = put(&mut dev, &words32(a, |v| v as u32), ElemType::I32, &[M, C]);
    let outs: Vec<TensorMeta> = [ElemType::I32, ElemType::I32, ElemType::I32, ElemType::U32]
        .iter()
        .map(|&e| poisoned(&mut dev, e, &[M, C]))
        .collect();
    let mut all = vec![at];
    all.extend(outs.iter().cloned());
    launch(&int_reduce::KERNEL.artifacts[0], &mut dev, &all);
    let got: Vec<Vec<u32>> = outs.iter().map(|t| read32(&dev, t, M * C)).collect();
    let at = |r: usize, c: usize| a[r * C + c];
    for r in 0..M {
        // The CTA's 32-row tile: rows past M loaded as 0, which a sum and an unsigned max
        // ignore.
        let tile = (r / 32 * 32)..((r / 32 * 32 + 32).min(M));
        let rmax = (0..C).map(|c| at(r, c)).max().expect("a row");
        let rsum: i32 = (0..C).map(|c| at(r, c) >> 4).sum();
        for c in 0..C {
            let x = at(r, c);
            let csum: i32 = tile.clone().map(|q| at(q, c)).sum();
            let cmax = tile
                .clone()
                .map(|q| at(q, c) as u32)
                .max()
                .expect("a column");
            let want = [
                (rmax - x) as u32,
                (csum - x) as u32,
                (rsum + c as i32) as u32,
                cmax ^ x as u32,
            ];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(got[k][r * C + c], *w, "output {k} at ({r}, {c})");
            }
        }
    }
}

/// An integer row max and sum across the two CTAs of a cluster (distributed shared memory).
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (M * 2, 1)
)]
pub fn int_reduce_cluster(#[shape(M, 1024)] a: Tensor<i32>, #[shape(M, 1024)] y: Tensor<i32>) {
    let t = regs::<i32>([1, 512], layout = blocked(vec = 4));
    copy(t, a.tile(cta.x / 2, cta_rank));
    let m = reduce_max(t, axis = 1, across = cluster);
    let s = reduce_sum(t, axis = 1, across = cluster);
    copy(y.tile(cta.x / 2, cta_rank), (m - t) ^ s);
}

#[test]
fn integer_reductions_across_a_cluster() {
    const R: usize = 5;
    const C: usize = 1024;
    let mut dev = Device::new();
    let mut rng = Rng::new(7);
    let a: Vec<i32> = (0..R * C)
        .map(|_| (rng.unit() * (1 << 20) as f32) as i32)
        .collect();
    let at = put(&mut dev, &words32(&a, |v| v as u32), ElemType::I32, &[R, C]);
    let yt = poisoned(&mut dev, ElemType::I32, &[R, C]);
    launch(
        &int_reduce_cluster::KERNEL.artifacts[0],
        &mut dev,
        &[at, yt.clone()],
    );
    let got: Vec<i32> = read32(&dev, &yt, R * C).iter().map(|&w| w as i32).collect();
    for r in 0..R {
        let row = &a[r * C..(r + 1) * C];
        let (m, s) = (*row.iter().max().expect("a row"), row.iter().sum::<i32>());
        for c in 0..C {
            assert_eq!(got[r * C + c], (m - row[c]) ^ s, "at ({r}, {c})");
        }
    }
}
