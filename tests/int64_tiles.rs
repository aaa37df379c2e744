//! 64-bit integers (issue #30 item 1): `Tensor<i64>`/`Tensor<u64>` parameters, `i64` and
//! `u64` register tiles loaded and stored with masked tails (`ld/st.global.v2.b64`), 64-bit
//! arithmetic in tile expressions (`+ - * / %`, shifts, bitwise ops, comparisons,
//! `min`/`max`, `abs`, `-x`, `select`), widening of `i32` values and index expressions,
//! conversions to and from `i32`/`u32` and `f32`, `i64`/`u64` scalar arguments, atomics into
//! 64-bit tensors and `reduce_sum`/`max`/`min` across lanes, warps and a cluster — run in
//! the emulator against Rust's own
//! semantics on random data with values past 2³¹ and 2³², negative values and tails in both
//! dimensions, every output bit-exact.
//!
//! The reference: wrapping `+ - *`, `/` and `%` truncating toward zero (`div.s64`,
//! `rem.s64`, PTX ISA §9.7.1.8/§9.7.1.9), `>>` arithmetic on `i64` and logical on `u64`
//! (§9.7.8.8), `as` between widths (sign- or zero-extension by the source, truncation: `cvt`
//! §9.7.9.21), `as f32` rounding to nearest (`cvt.rn.f32.s64`), `as i64` from f32 truncating
//! toward zero and saturating (`cvt.rzi.s64.f32`).

use tirx::prelude::*;
use tirx::runtime::{DeviceLimits, ElemType, ScalarArg, TensorMeta, plan_launch_args};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::{Device, Policy};

use super::emu_io::{
    assert_ir_round_trips, launch, launch_seeded, poisoned, read32, read64, words32, words64,
};
use super::sim_exec::EMULATED;

/// `y = x`, an `i64` tile in and out.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i64_copy(#[shape(M, N)] x: Tensor<i64>, #[shape(M, N)] y: Tensor<i64>) {
    let t = regs::<i64>([32, 64], layout = blocked(vec = 2));
    copy(t, x.tile(cta.x, cta.y));
    copy(y.tile(cta.x, cta.y), t);
}

/// 64-bit arithmetic on two `i64` tiles, with indices and literals.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i64_ops(
    #[shape(M, N)] a: Tensor<i64>,
    #[shape(M, N)] b: Tensor<i64>,
    #[shape(M, N)] sum: Tensor<i64>,
    #[shape(M, N)] quo: Tensor<i64>,
    #[shape(M, N)] bits: Tensor<i64>,
    #[shape(M, N)] pick: Tensor<i64>,
) {
    let x = regs::<i64>([32, 64], layout = blocked(vec = 2));
    let y = regs::<i64>([32, 64], layout = blocked(vec = 2));
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

/// Token offsets past 2³¹ elements: an `i32` row id times a row length, in 64 bits; and the
/// conversions between 64-bit integers, 32-bit integers and f32.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i64_casts(
    #[shape(M, N)] ids: Tensor<i32>,
    #[shape(M, N)] a: Tensor<i64>,
    #[shape(M, N)] f: Tensor<f32>,
    #[shape(M, N)] offs: Tensor<i64>,
    #[shape(M, N)] low: Tensor<i32>,
    #[shape(M, N)] af: Tensor<f32>,
    #[shape(M, N)] fi: Tensor<i64>,
    #[shape(M, N)] un: Tensor<u64>,
) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 2));
    let x = regs::<i64>([32, 64], layout = blocked(vec = 2));
    let g = regs::<f32>([32, 64], layout = blocked(vec = 2));
    copy(t, ids.tile(cta.x, cta.y));
    copy(x, a.tile(cta.x, cta.y));
    copy(g, f.tile(cta.x, cta.y));
    copy(
        offs.tile(cta.x, cta.y),
        cast::<i64>(t) * 151936 + col_index(t),
    );
    copy(
        low.tile(cta.x, cta.y),
        cast::<i32>(x) + cast::<i32>(x >> 40),
    );
    copy(af.tile(cta.x, cta.y), cast::<f32>(x) * 0.5);
    copy(
        fi.tile(cta.x, cta.y),
        cast::<i64>(g * 1.0e12) - cast::<i64>(cast::<u32>(t)),
    );
    let u = cast::<u64>(x);
    copy(
        un.tile(cta.x, cta.y),
        select(u > cast::<u64>(t), u >> 3, u / 5),
    );
}

/// `u64` tiles: logical shifts, unsigned division and comparison, an index widened by zero
/// extension.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn u64_ops(#[shape(M, N)] a: Tensor<u64>, #[shape(M, N)] o: Tensor<u64>) {
    let x = regs::<u64>([32, 64], layout = blocked(vec = 2));
    copy(x, a.tile(cta.x, cta.y));
    let mut acc = (x / 3) ^ (x % 5);
    acc = acc + min(x, col_index(x));
    copy(o.tile(cta.x, cta.y), select(x > (x >> 1) + 5, x >> 4, acc));
}

/// Token offsets past 2³² from 64-bit scalar arguments: `base + id · row_len + column`, with
/// `base` an `i64` (negative here) and `row_len` a `u64` past 2³².
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn token_offsets(
    #[shape(M, N)] ids: Tensor<i32>,
    #[shape(M, N)] offs: Tensor<i64>,
    base: i64,
    row_len: u64,
    first: u32,
) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 2));
    copy(t, ids.tile(cta.x + first, cta.y));
    let rl = cast::<i64>(row_len);
    copy(
        offs.tile(cta.x, cta.y),
        select(t < 0, base, base + cast::<i64>(t) * rl + col_index(t)),
    );
}

/// 64-bit atomics from `S` CTAs per tile: partial sums of values past 2³² added into `y`
/// (`red.add.u64`, also for `i64`), their signed max into `z` (`red.max.s64`) and, as `u64`,
/// their min into `w` (`red.min.u64`).
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64), S))]
pub fn i64_atomics(
    #[shape(S, M, N)] p: Tensor<i64>,
    #[shape(M, N)] y: Tensor<i64>,
    #[shape(M, N)] z: Tensor<i64>,
    #[shape(M, N)] w: Tensor<u64>,
) {
    let t = regs::<i64>([32, 64], layout = blocked(vec = 2));
    copy(t, p.tile(cta.z, cta.x, cta.y));
    let u = cast::<u64>(t);
    atomic::add(y.tile(cta.x, cta.y), t, scope = gpu);
    atomic::max(z.tile(cta.x, cta.y), t, scope = gpu);
    atomic::min(w.tile(cta.x, cta.y), u, scope = gpu);
}

/// Row statistics of 64-bit values past 2³²: a row over the four warps (two 32-bit shuffles
/// per value across lanes, 8-byte slots in shared memory across warps): the signed sum and
/// max of `i64`, the unsigned min of their `u64` bits.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 2), 1))]
pub fn i64_row_stats(
    #[shape(M, 256)] x: Tensor<i64>,
    #[shape(M, 256)] s: Tensor<i64>,
    #[shape(M, 256)] mx: Tensor<i64>,
    #[shape(M, 256)] mn: Tensor<u64>,
) {
    let t = regs::<i64>([2, 256], layout = blocked(vec = 2));
    copy(t, x.tile(cta.x, 0));
    copy(s.tile(cta.x, 0), reduce_sum(t, axis = 1) + col_index(t));
    copy(mx.tile(cta.x, 0), reduce_max(t, axis = 1) - col_index(t));
    copy(
        mn.tile(cta.x, 0),
        reduce_min(cast::<u64>(t), axis = 1) + col_index(t),
    );
}

/// The sum and max of a 512-wide `i64` row over the two CTAs of a cluster
/// (`st.async…b64` into every CTA).
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1), grid = (M * 2, 1))]
pub fn i64_cluster_stats(#[shape(M, 512)] x: Tensor<i64>, #[shape(M, 512)] s: Tensor<i64>) {
    let t = regs::<i64>([1, 256], layout = blocked(vec = 2));
    copy(t, x.tile(cta.x / 2, cta_rank));
    let m = reduce_max(t, axis = 1, across = cluster);
    let total = reduce_sum(t, axis = 1, across = cluster);
    copy(s.tile(cta.x / 2, cta_rank), total - m + col_index(t));
}

/// A gather from an `i64` table (torch's default integer type) at `i32` indices, some out of
/// range under `oob = zero`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn i64_gather(
    #[shape(M, N)] idx: Tensor<i32>,
    #[shape(V)] table: Tensor<i64>,
    #[shape(M, N)] out: Tensor<i64>,
) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 2));
    copy(t, idx.tile(cta.x, cta.y));
    copy(out.tile(cta.x, cta.y), gather(table, t, oob = zero) - 1);
}

pub(crate) const M: usize = 45;
pub(crate) const N: usize = 70;

/// Random `i64` in `(-lim, lim)` (`lim` a power of two up to 2⁶²), every bit below `lim`
/// varying, with a few zeros.
pub(crate) fn ints64(rng: &mut Rng, lim: i64) -> Vec<i64> {
    (0..M * N)
        .map(|i| {
            let v = (rng.next_u64() % lim as u64) as i64;
            match i % 17 {
                0 => 0,
                x if x % 2 == 1 => -v,
                _ => v,
            }
        })
        .collect()
}

#[test]
fn i64_tiles_copy_with_tails() {
    let mut dev = Device::new();
    let x = ints64(&mut Rng::new(11), 1 << 62);
    let xt = put(&mut dev, &words64(&x, |v| v as u64), ElemType::I64, &[M, N]);
    let yt = poisoned(&mut dev, ElemType::I64, &[M, N]);
    launch(&i64_copy::KERNEL.artifacts[0], &mut dev, &[xt, yt.clone()]);
    let got: Vec<i64> = read64(&dev, &yt, M * N).iter().map(|&w| w as i64).collect();
    assert_eq!(got, x);
}

#[test]
fn i64_arithmetic_matches_rust() {
    let mut dev = Device::new();
    let mut rng = Rng::new(12);
    let (a, b) = (ints64(&mut rng, 1 << 50), ints64(&mut rng, 1 << 20));
    let at = put(&mut dev, &words64(&a, |v| v as u64), ElemType::I64, &[M, N]);
    let bt = put(&mut dev, &words64(&b, |v| v as u64), ElemType::I64, &[M, N]);
    let outs: Vec<TensorMeta> = (0..4)
        .map(|_| poisoned(&mut dev, ElemType::I64, &[M, N]))
        .collect();
    let mut all = vec![at, bt];
    all.extend(outs.iter().cloned());
    launch(&i64_ops::KERNEL.artifacts[0], &mut dev, &all);
    let got: Vec<Vec<i64>> = outs
        .iter()
        .map(|t| read64(&dev, t, M * N).iter().map(|&w| w as i64).collect())
        .collect();
    for i in 0..M * N {
        let (x, y, col) = (a[i], b[i], (i % N % 64) as i64);
        let d = if y == 0 { 7 } else { y };
        let want = [
            x.wrapping_add(y.wrapping_mul(3)) - col - 5,
            (x / d).wrapping_mul(1000) + x % d,
            (x.wrapping_shl(3) ^ (y >> 2)) | (x & 255),
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
fn i64_conversions_and_offsets_past_2_31_match_rust() {
    let mut dev = Device::new();
    let mut rng = Rng::new(13);
    // Token ids up to 2^20: times 151936 up to ~1.6e11, past 2^31 and 2^32.
    let ids: Vec<i32> = (0..M * N)
        .map(|i| {
            let v = (rng.unit() * (1 << 20) as f32) as i32;
            if i % 13 == 0 { -v } else { v }
        })
        .collect();
    let a = ints64(&mut rng, 1 << 62);
    let f: Vec<f32> = (0..M * N).map(|_| rng.unit() * 3.0e6).collect();
    let idt = put(
        &mut dev,
        &words32(&ids, |v| v as u32),
        ElemType::I32,
        &[M, N],
    );
    let at = put(&mut dev, &words64(&a, |v| v as u64), ElemType::I64, &[M, N]);
    let ft = put(&mut dev, &words32(&f, f32::to_bits), ElemType::F32, &[M, N]);
    let offs = poisoned(&mut dev, ElemType::I64, &[M, N]);
    let low = poisoned(&mut dev, ElemType::I32, &[M, N]);
    let af = poisoned(&mut dev, ElemType::F32, &[M, N]);
    let fi = poisoned(&mut dev, ElemType::I64, &[M, N]);
    let un = poisoned(&mut dev, ElemType::U64, &[M, N]);
    launch(
        &i64_casts::KERNEL.artifacts[0],
        &mut dev,
        &[
            idt,
            at,
            ft,
            offs.clone(),
            low.clone(),
            af.clone(),
            fi.clone(),
            un.clone(),
        ],
    );
    let (g_offs, g_low, g_af, g_fi, g_un) = (
        read64(&dev, &offs, M * N),
        read32(&dev, &low, M * N),
        read32(&dev, &af, M * N),
        read64(&dev, &fi, M * N),
        read64(&dev, &un, M * N),
    );
    let mut past = 0;
    for i in 0..M * N {
        let (t, x, g, col) = (ids[i], a[i], f[i], (i % N % 64) as i64);
        let want_off = i64::from(t) * 151936 + col;
        past += usize::from(want_off.unsigned_abs() > 1 << 31);
        assert_eq!(g_offs[i] as i64, want_off, "offs at {i}: id {t}");
        let want_low = (x as i32).wrapping_add((x >> 40) as i32);
        assert_eq!(g_low[i] as i32, want_low, "low at {i}: a = {x}");
        assert_eq!(
            f32::from_bits(g_af[i]),
            x as f32 * 0.5,
            "af at {i}: a = {x}"
        );
        let want_fi = ((g * 1.0e12) as i64).wrapping_sub(i64::from(t as u32));
        assert_eq!(g_fi[i] as i64, want_fi, "fi at {i}: f = {g}, id {t}");
        let u = x as u64;
        let want_un = if u > i64::from(t) as u64 {
            u >> 3
        } else {
            u / 5
        };
        assert_eq!(g_un[i], want_un, "un at {i}: a = {x}, id {t}");
    }
    assert!(past > M * N / 2, "most offsets lie past 2^31 ({past})");
}

#[test]
fn u64_arithmetic_is_unsigned() {
    let mut dev = Device::new();
    // Negative i64 bit patterns: u64 values near 2^64.
    let a: Vec<u64> = ints64(&mut Rng::new(14), 1 << 62)
        .iter()
        .map(|&v| v as u64)
        .collect();
    let at = put(&mut dev, &words64(&a, |v| v), ElemType::U64, &[M, N]);
    let ot = poisoned(&mut dev, ElemType::U64, &[M, N]);
    launch(&u64_ops::KERNEL.artifacts[0], &mut dev, &[at, ot.clone()]);
    let got = read64(&dev, &ot, M * N);
    for i in 0..M * N {
        let (x, col) = (a[i], (i % N % 64) as u64);
        let acc = ((x / 3) ^ (x % 5)).wrapping_add(x.min(col));
        let want = if x > (x >> 1).wrapping_add(5) {
            x >> 4
        } else {
            acc
        };
        assert_eq!(got[i], want, "at ({}, {}): a = {x}", i / N, i % N);
    }
}

#[test]
fn int64_ops_pick_the_64_bit_instructions() {
    let i = i64_ops::KERNEL.artifacts[0].ptx;
    for op in [
        "ld.global.v2.b64",
        "st.global.v2.b64",
        "add.s64",
        "mul.lo.s64",
        "div.s64",
        "rem.s64",
        "shr.s64",
        "shl.b64",
        "xor.b64",
        "setp.lt.s64",
        "min.s64",
        "max.s64",
        "neg.s64",
        "abs.s64",
        "selp.s64",
        "cvt.s64.s32",
    ] {
        assert!(i.contains(op), "i64_ops lacks {op}");
    }
    let c = i64_casts::KERNEL.artifacts[0].ptx;
    for op in [
        "cvt.s64.s32",
        "cvt.u64.u32",
        "cvt.u32.u64",
        "cvt.rn.f32.s64",
        "cvt.rzi.s64.f32",
        "setp.hi.u64",
    ] {
        assert!(c.contains(op), "i64_casts lacks {op}");
    }
    let u = u64_ops::KERNEL.artifacts[0].ptx;
    for op in ["div.u64", "rem.u64", "shr.u64", "min.u64", "cvt.u64.u32"] {
        assert!(u.contains(op), "u64_ops lacks {op}");
    }
    assert!(!u.contains(".s64"), "u64_ops uses no signed instruction");
}

/// The IR text of 64-bit integer kernels parses back to the same text and recompiles to the
/// same PTX.
#[test]
fn int64_ir_prints_parses_and_recompiles() {
    for a in [
        &i64_copy::KERNEL.artifacts[0],
        &i64_ops::KERNEL.artifacts[0],
        &i64_casts::KERNEL.artifacts[0],
        &u64_ops::KERNEL.artifacts[0],
        &i64_atomics::KERNEL.artifacts[0],
        &i64_row_stats::KERNEL.artifacts[0],
        &i64_cluster_stats::KERNEL.artifacts[0],
    ] {
        assert_ir_round_trips(a, false);
    }
}

/// The kernels assemble for sm_90a without spills (ptxas where installed;
/// `TIRX_REQUIRE_PTXAS=1` makes it required): the 64-bit `cvt`, `selp`, `setp` forms included.
#[test]
fn the_int64_kernels_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [
        &i64_copy::KERNEL,
        &i64_ops::KERNEL,
        &i64_casts::KERNEL,
        &u64_ops::KERNEL,
        &token_offsets::KERNEL,
        &i64_atomics::KERNEL,
        &i64_row_stats::KERNEL,
        &i64_cluster_stats::KERNEL,
        &i64_gather::KERNEL,
    ] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
        }
    }
}

#[test]
fn i64_and_u64_scalar_arguments_reach_the_tile() {
    let mut dev = Device::new();
    let mut rng = Rng::new(15);
    let ids: Vec<i32> = (0..M * N)
        .map(|i| {
            let v = (rng.next_u64() % 200_000) as i32;
            if i % 11 == 0 { -1 } else { v }
        })
        .collect();
    let (base, row_len) = (-(1i64 << 41) + 12345, 5_000_000_017u64);
    let idt = put(
        &mut dev,
        &words32(&ids, |v| v as u32),
        ElemType::I32,
        &[M, N],
    );
    let offs = poisoned(&mut dev, ElemType::I64, &[M, N]);
    let art = &token_offsets::KERNEL.artifacts[0];
    let scalars = [
        ScalarArg::I64(base),
        ScalarArg::U64(row_len),
        ScalarArg::U32(0),
    ];
    simulate::launch_args(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[idt, offs.clone()], &scalars),
        3,
        &EMULATED,
        &Policy::default(),
    )
    .expect("the kernel runs");
    let got = read64(&dev, &offs, M * N);
    for i in 0..M * N {
        let (t, col) = (ids[i], (i % N % 64) as i64);
        let want = if t < 0 {
            base
        } else {
            base.wrapping_add(i64::from(t).wrapping_mul(row_len as i64)) + col
        };
        assert_eq!(got[i] as i64, want, "at {i}: id {t}");
    }
    let ptx = art.ptx;
    for s in [
        ".param .s64 p_s_base",
        ".param .u64 p_s_row_len",
        ".param .u32 p_s_first",
        "ld.param.s64",
        "ld.param.u64",
    ] {
        assert!(ptx.contains(s), "token_offsets lacks {s}");
    }
    let sig = (art.signature)();
    assert_eq!(
        sig.scalar_types,
        vec![ElemType::I64, ElemType::U64, ElemType::U32]
    );
    // 8-byte scalars take 8 bytes of the parameter buffer, 8-aligned.
    let plan = plan_launch_args(
        &sig,
        &[
            TensorMeta::row_major(ElemType::I32, &[M, N], 0x10000),
            TensorMeta::row_major(ElemType::I64, &[M, N], 0x20000),
        ],
        &scalars,
        &DeviceLimits::HOPPER,
    )
    .expect("plans");
    let at = |name: &str| {
        let i = sig
            .params
            .iter()
            .position(|p| p.ptx_name() == format!("p_s_{name}"))
            .expect("a parameter");
        (plan.param_offsets[i], plan.params[i].clone())
    };
    let (off, p) = at("row_len");
    assert_eq!(off % 8, 0, "row_len is 8-aligned");
    assert_eq!(p, tirx::runtime::PlannedParam::Scalar64(row_len));
    assert_eq!(
        at("base").1,
        tirx::runtime::PlannedParam::Scalar64(base as u64)
    );
}

/// An `i64` parameter takes an `i64` value: an `i32` (or `u64`) is refused before launch.
#[test]
fn a_32_bit_value_for_an_i64_scalar_is_refused() {
    let sig = (token_offsets::KERNEL.artifacts[0].signature)();
    let t = |e, a| TensorMeta::row_major(e, &[M, N], a);
    let tensors = [t(ElemType::I32, 0x10000), t(ElemType::I64, 0x20000)];
    let bad = [ScalarArg::I32(-1), ScalarArg::U64(1), ScalarArg::U32(0)];
    match plan_launch_args(&sig, &tensors, &bad, &DeviceLimits::HOPPER) {
        Err(e @ tirx::RuntimeError::ScalarType { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("scalar argument `base` is i64, but a i32 was passed"),
                "{msg}"
            );
        }
        other => panic!("expected ScalarType, got {other:?}"),
    }
}

#[test]
fn i64_atomics_from_several_ctas_match_rust() {
    const S: usize = 3;
    for seed in [1, 2] {
        let mut dev = Device::new();
        let mut rng = Rng::new(20 + seed);
        let mut p = Vec::new();
        for _ in 0..S {
            p.extend(ints64(&mut rng, 1 << 40));
        }
        let (y0, z0, w0) = (
            ints64(&mut rng, 1 << 40),
            ints64(&mut rng, 1 << 39),
            ints64(&mut rng, 1 << 62),
        );
        let pt = put(
            &mut dev,
            &words64(&p, |v| v as u64),
            ElemType::I64,
            &[S, M, N],
        );
        let yt = put(
            &mut dev,
            &words64(&y0, |v| v as u64),
            ElemType::I64,
            &[M, N],
        );
        let zt = put(
            &mut dev,
            &words64(&z0, |v| v as u64),
            ElemType::I64,
            &[M, N],
        );
        let wt = put(
            &mut dev,
            &words64(&w0, |v| v as u64),
            ElemType::U64,
            &[M, N],
        );
        let art = &i64_atomics::KERNEL.artifacts[0];
        launch_seeded(
            art,
            &mut dev,
            &[pt, yt.clone(), zt.clone(), wt.clone()],
            seed,
        );
        let (y, z, w) = (
            read64(&dev, &yt, M * N),
            read64(&dev, &zt, M * N),
            read64(&dev, &wt, M * N),
        );
        for i in 0..M * N {
            let parts: Vec<i64> = (0..S).map(|s| p[s * M * N + i]).collect();
            let sum = parts.iter().fold(y0[i], |a, &b| a.wrapping_add(b));
            let max = parts.iter().copied().fold(z0[i], i64::max);
            let min = parts.iter().map(|&v| v as u64).fold(w0[i] as u64, u64::min);
            assert_eq!(y[i] as i64, sum, "sum at {i}");
            assert_eq!(z[i] as i64, max, "max at {i}");
            assert_eq!(w[i], min, "min at {i}");
        }
    }
    let ptx = i64_atomics::KERNEL.artifacts[0].ptx;
    for s in [
        "red.relaxed.gpu.global.add.u64",
        "red.relaxed.gpu.global.max.s64",
        "red.relaxed.gpu.global.min.u64",
    ] {
        assert!(ptx.contains(s), "i64_atomics lacks {s}");
    }
}

/// `n` random `i64` in `(-lim, lim)`, for tensors of another size than `M × N`.
fn ints64_n(rng: &mut Rng, n: usize, lim: i64) -> Vec<i64> {
    (0..n)
        .map(|i| {
            let v = (rng.next_u64() % lim as u64) as i64;
            if i % 3 == 1 { -v } else { v }
        })
        .collect()
}

#[test]
fn i64_reductions_across_lanes_warps_and_a_cluster_match_rust() {
    const W: usize = 256;
    let mut dev = Device::new();
    let mut rng = Rng::new(31);
    let x = ints64_n(&mut rng, M * W, 1 << 50);
    let xt = put(&mut dev, &words64(&x, |v| v as u64), ElemType::I64, &[M, W]);
    let outs: Vec<TensorMeta> = [ElemType::I64, ElemType::I64, ElemType::U64]
        .iter()
        .map(|&e| poisoned(&mut dev, e, &[M, W]))
        .collect();
    let art = &i64_row_stats::KERNEL.artifacts[0];
    let mut all = vec![xt];
    all.extend(outs.iter().cloned());
    launch_seeded(art, &mut dev, &all, 4);
    let got: Vec<Vec<u64>> = outs.iter().map(|t| read64(&dev, t, M * W)).collect();
    for r in 0..M {
        let row = &x[r * W..(r + 1) * W];
        let sum = row.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        let max = row.iter().copied().max().expect("a row");
        let min = row.iter().map(|&v| v as u64).min().expect("a row");
        for c in 0..W {
            let i = r * W + c;
            assert_eq!(got[0][i] as i64, sum + c as i64, "sum at ({r}, {c})");
            assert_eq!(got[1][i] as i64, max - c as i64, "max at ({r}, {c})");
            assert_eq!(got[2][i], min + c as u64, "min at ({r}, {c})");
        }
    }
    // Across a cluster of two.
    let mut dev = Device::new();
    let x = ints64_n(&mut rng, M * 512, 1 << 52);
    let xt = put(
        &mut dev,
        &words64(&x, |v| v as u64),
        ElemType::I64,
        &[M, 512],
    );
    let st = poisoned(&mut dev, ElemType::I64, &[M, 512]);
    let art = &i64_cluster_stats::KERNEL.artifacts[0];
    launch_seeded(art, &mut dev, &[xt, st.clone()], 5);
    let got = read64(&dev, &st, M * 512);
    for r in 0..M {
        let row = &x[r * 512..(r + 1) * 512];
        let want =
            row.iter().fold(0i64, |a, &b| a.wrapping_add(b)) - row.iter().max().expect("a row");
        for c in 0..512 {
            let g = got[r * 512 + c] as i64;
            assert_eq!(g, want + (c % 256) as i64, "cluster at ({r}, {c})");
        }
    }
    let p = i64_row_stats::KERNEL.artifacts[0].ptx;
    for op in [
        "add.s64",
        "max.s64",
        "min.u64",
        "mov.b64",
        "st.shared.s64",
        "ld.shared.s64",
    ] {
        assert!(p.contains(op), "i64_row_stats lacks {op}");
    }
    assert!(
        i64_cluster_stats::KERNEL.artifacts[0]
            .ptx
            .contains("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64")
    );
}

#[test]
fn a_gather_from_an_i64_table_reads_its_words() {
    const V: usize = 300;
    let mut dev = Device::new();
    let mut rng = Rng::new(41);
    let table = ints64_n(&mut rng, V, 1 << 62);
    let idx: Vec<i32> = (0..M * N)
        .map(|i| match i % 29 {
            0 => -1,
            1 => V as i32,
            _ => (rng.next_u64() % V as u64) as i32,
        })
        .collect();
    let it = put(
        &mut dev,
        &words32(&idx, |v| v as u32),
        ElemType::I32,
        &[M, N],
    );
    let tt = put(
        &mut dev,
        &words64(&table, |v| v as u64),
        ElemType::I64,
        &[V],
    );
    let ot = poisoned(&mut dev, ElemType::I64, &[M, N]);
    let art = &i64_gather::KERNEL.artifacts[0];
    launch_seeded(art, &mut dev, &[it, tt, ot.clone()], 6);
    let got = read64(&dev, &ot, M * N);
    for i in 0..M * N {
        let want = usize::try_from(idx[i])
            .ok()
            .and_then(|k| table.get(k))
            .copied()
            .unwrap_or(0)
            .wrapping_sub(1);
        assert_eq!(got[i] as i64, want, "at {i}: index {}", idx[i]);
    }
    assert!(art.ptx.contains("ld.global.b64"));
}
