//! Index-carrying reductions (issue #30 item 5): `reduce_min`, and `argmax`/`argmin` giving
//! the `u32` index of the max/min along a row or column, run in the emulator against a Rust
//! reference on random data full of ties, with masked tails, across lanes, warps and the
//! CTAs of 2- and 4-CTA clusters.
//!
//! The reference is torch's: ties go to the lowest index, −0 equals +0, and a NaN is the
//! extreme of both `argmax` and `argmin` (the first NaN of a row wins). Every output is
//! bit-exact.

use tirx::prelude::*;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::put;
use tirx_sim::Device;

use super::emu_io::{assert_ir_round_trips, launch, poisoned, read32, words32};

/// Row statistics within a warp's lanes (16 lanes share a row), the tail masked: the index of
/// the max and of the min (each plus the column, so the whole tile is written) and the row
/// min subtracted from each value.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn arg_rows(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M, N)] imax: Tensor<u32>,
    #[shape(M, N)] imin: Tensor<u32>,
    #[shape(M, N)] above_min: Tensor<f32>,
) {
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    let hi = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let lo = select(col_index(t) < N, t, f32::INFINITY);
    copy(imax.tile(cta.x, 0), argmax(hi, axis = 1) + col_index(t));
    copy(imin.tile(cta.x, 0), argmin(lo, axis = 1) + col_index(t));
    copy(above_min.tile(cta.x, 0), t - reduce_min(lo, axis = 1));
}

/// A row spread over the four warps of the CTA (through shared memory), tail masked.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 2), 1))]
pub fn arg_wide_rows(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M, N)] imax: Tensor<u32>,
    #[shape(M, N)] imin: Tensor<u32>,
) {
    let t = regs::<f32>([2, 1024], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    let hi = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let lo = select(col_index(t) < N, t, f32::INFINITY);
    copy(imax.tile(cta.x, 0), argmax(hi, axis = 1) + col_index(t));
    copy(imin.tile(cta.x, 0), argmin(lo, axis = 1) + col_index(t));
}

/// Integer column statistics down 32 rows, across the CTA's warps: `argmax` of `i32`,
/// `argmin` of `u32`, the `i32` column min.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn arg_int_cols(
    #[shape(M, 64)] a: Tensor<i32>,
    #[shape(M, 64)] imax: Tensor<u32>,
    #[shape(M, 64)] imin: Tensor<u32>,
    #[shape(M, 64)] cmin: Tensor<i32>,
) {
    let x = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(x, a.tile(cta.x, 0));
    copy(imax.tile(cta.x, 0), argmax(x, axis = 0) + row_index(x));
    copy(
        imin.tile(cta.x, 0),
        argmin(cast::<u32>(x), axis = 0) + row_index(x),
    );
    copy(cmin.tile(cta.x, 0), x - reduce_min(x, axis = 0));
}

/// Values from a few levels (ties everywhere), ±0 among them; with `nan`, a NaN in some rows.
pub(crate) fn tied(rng: &mut Rng, rows: usize, cols: usize, nan: bool) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| {
            let u = rng.unit();
            let v = (u * 4.0).round();
            let v = if v == 0.0 && u < 0.0 { -0.0 } else { v };
            if nan && (i / cols) % 5 == 1 && rng.unit() > 0.9 {
                f32::NAN
            } else {
                v
            }
        })
        .collect()
}

/// torch's `argmax` (`max`) or `argmin` of `row`: the lowest index of the extreme, NaN the
/// extreme of both.
pub(crate) fn torch_arg<T: Copy + PartialOrd>(
    row: &[T],
    max: bool,
    is_nan: impl Fn(T) -> bool,
) -> u32 {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate().skip(1) {
        let b = row[best];
        let better = match (is_nan(b), is_nan(v)) {
            (true, _) => false,
            (false, true) => true,
            _ if max => v > b,
            _ => v < b,
        };
        if better {
            best = i;
        }
    }
    best as u32
}

pub(crate) fn nan32(v: f32) -> bool {
    v.is_nan()
}

#[test]
fn argmax_argmin_and_min_along_rows_match_torch() {
    const M: usize = 45;
    const N: usize = 61;
    let mut dev = Device::new();
    let x = tied(&mut Rng::new(11), M, N, true);
    let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, N]);
    let outs: Vec<TensorMeta> = [ElemType::U32, ElemType::U32, ElemType::F32]
        .iter()
        .map(|&e| poisoned(&mut dev, e, &[M, N]))
        .collect();
    let mut all = vec![xt];
    all.extend(outs.iter().cloned());
    launch(&arg_rows::KERNEL.artifacts[0], &mut dev, &all);
    let got: Vec<Vec<u32>> = outs.iter().map(|t| read32(&dev, t, M * N)).collect();
    for r in 0..M {
        let row = &x[r * N..(r + 1) * N];
        let (amax, amin) = (torch_arg(row, true, nan32), torch_arg(row, false, nan32));
        // `min.f32` ignores NaN (PTX ISA §9.7.3.10): the min of the numbers.
        let m = row.iter().copied().fold(f32::INFINITY, f32::min);
        for c in 0..N {
            let at = format!("at ({r}, {c}), row {row:?}");
            assert_eq!(got[0][r * N + c], amax + c as u32, "argmax {at}");
            assert_eq!(got[1][r * N + c], amin + c as u32, "argmin {at}");
            let want = row[c] - m;
            let g = f32::from_bits(got[2][r * N + c]);
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "t - reduce_min {at}: {g} vs {want}"
            );
        }
    }
}

#[test]
fn argmax_argmin_across_warps_match_torch() {
    const M: usize = 5;
    const N: usize = 1001;
    let mut dev = Device::new();
    let x = tied(&mut Rng::new(12), M, N, true);
    let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, N]);
    let outs: Vec<TensorMeta> = (0..2)
        .map(|_| poisoned(&mut dev, ElemType::U32, &[M, N]))
        .collect();
    launch(
        &arg_wide_rows::KERNEL.artifacts[0],
        &mut dev,
        &[xt, outs[0].clone(), outs[1].clone()],
    );
    let got: Vec<Vec<u32>> = outs.iter().map(|t| read32(&dev, t, M * N)).collect();
    for r in 0..M {
        let row = &x[r * N..(r + 1) * N];
        let (amax, amin) = (torch_arg(row, true, nan32), torch_arg(row, false, nan32));
        for c in 0..N {
            assert_eq!(got[0][r * N + c], amax + c as u32, "argmax at ({r}, {c})");
            assert_eq!(got[1][r * N + c], amin + c as u32, "argmin at ({r}, {c})");
        }
    }
}

#[test]
fn integer_argmax_argmin_down_columns_match_rust() {
    const M: usize = 64;
    const C: usize = 64;
    let mut dev = Device::new();
    let mut rng = Rng::new(13);
    // Few levels (ties), negative values (the u32 view puts them above the positives).
    let a: Vec<i32> = (0..M * C)
        .map(|_| (rng.unit() * 3.0).round() as i32 * 1_000_000)
        .collect();
    let at = put(&mut dev, &words32(&a, |v| v as u32), ElemType::I32, &[M, C]);
    let outs: Vec<TensorMeta> = [ElemType::U32, ElemType::U32, ElemType::I32]
        .iter()
        .map(|&e| poisoned(&mut dev, e, &[M, C]))
        .collect();
    let mut all = vec![at];
    all.extend(outs.iter().cloned());
    launch(&arg_int_cols::KERNEL.artifacts[0], &mut dev, &all);
    let got: Vec<Vec<u32>> = outs.iter().map(|t| read32(&dev, t, M * C)).collect();
    for r in 0..M {
        let tile = r / 32 * 32..r / 32 * 32 + 32;
        for c in 0..C {
            let col: Vec<i32> = tile.clone().map(|q| a[q * C + c]).collect();
            let ucol: Vec<u32> = col.iter().map(|&v| v as u32).collect();
            let rr = (r % 32) as u32;
            let want = [
                torch_arg(&col, true, |_| false) + rr,
                torch_arg(&ucol, false, |_| false) + rr,
                (a[r * C + c] - col.iter().min().expect("a column")) as u32,
            ];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(got[k][r * C + c], *w, "output {k} at ({r}, {c}): {col:?}");
            }
        }
    }
}

#[test]
fn index_reductions_use_the_documented_instructions() {
    let p = arg_rows::KERNEL.artifacts[0].ptx;
    for op in [
        "min.f32",
        "setp.gt.s32",
        "shr.s32",
        "selp.u32",
        "shfl.sync.bfly.b32",
    ] {
        assert!(p.contains(op), "arg_rows lacks {op}");
    }
    let w = arg_wide_rows::KERNEL.artifacts[0].ptx;
    for op in ["st.shared.s32", "st.shared.u32", "bar.sync", "setp.lt.u32"] {
        assert!(w.contains(op), "arg_wide_rows lacks {op}");
    }
    let i = arg_int_cols::KERNEL.artifacts[0].ptx;
    for op in ["setp.gt.s32", "setp.gt.u32", "not.b32", "min.s32"] {
        assert!(i.contains(op), "arg_int_cols lacks {op}");
    }
    // Across a cluster: the rank's offset, then (key, index) pairs pushed into every CTA
    // through distributed shared memory (`st.async`) and read back locally.
    for a in arg_cluster::KERNEL.artifacts {
        for op in [
            "%cluster_ctarank",
            "mapa.shared::cluster",
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32",
            "ld.shared.s32",
            "ld.shared.u32",
        ] {
            assert!(a.ptx.contains(op), "arg_cluster {} lacks {op}", a.config);
        }
    }
}

/// The cluster kernels assemble for sm_90a without spills (ptxas where installed;
/// `TIRX_REQUIRE_PTXAS=1` makes it required).
#[test]
fn the_cluster_index_reductions_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for a in arg_cluster::KERNEL.artifacts {
        let c = check_artifact(arg_cluster::KERNEL.name, a).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.problems.is_empty(), "{}: {:?}", a.config, c.problems);
    }
}

/// The IR text of the index reductions (`reduce … argmax`, `min`) parses back to the same
/// text and recompiles to the same PTX.
#[test]
fn index_reduction_ir_prints_parses_and_recompiles() {
    for a in [
        &arg_rows::KERNEL.artifacts[0],
        &arg_wide_rows::KERNEL.artifacts[0],
        &arg_int_cols::KERNEL.artifacts[0],
        &arg_cluster::KERNEL.artifacts[0],
        &arg_cluster::KERNEL.artifacts[1],
    ] {
        assert_ir_round_trips(a, false);
    }
}

/// The example of `docs/language.md` ("Index reductions"): each row's predicted class and each
/// logit's height above the row's smallest.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn predict(
    #[shape(M, N)] logits: Tensor<f32>,
    #[shape(M, N)] class: Tensor<u32>,
    #[shape(M, N)] margin: Tensor<f32>,
) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    copy(t, logits.tile(cta.x, 0));
    let v = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let k = argmax(v, axis = 1);
    let lo = reduce_min(select(col_index(t) < N, t, f32::INFINITY), axis = 1);
    copy(class.tile(cta.x, 0), select(col_index(t) == 0, k, 0));
    copy(margin.tile(cta.x, 0), t - lo);
}

#[test]
fn the_reference_example_predicts_classes() {
    const M: usize = 7;
    const N: usize = 333;
    let mut dev = Device::new();
    let x = tied(&mut Rng::new(15), M, N, false);
    let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, N]);
    let ct = poisoned(&mut dev, ElemType::U32, &[M, N]);
    let mt = poisoned(&mut dev, ElemType::F32, &[M, N]);
    launch(
        &predict::KERNEL.artifacts[0],
        &mut dev,
        &[xt, ct.clone(), mt.clone()],
    );
    let (class, margin) = (read32(&dev, &ct, M * N), read32(&dev, &mt, M * N));
    for r in 0..M {
        let row = &x[r * N..(r + 1) * N];
        let k = torch_arg(row, true, nan32);
        let lo = row.iter().copied().fold(f32::INFINITY, f32::min);
        for c in 0..N {
            let want = if c == 0 { k } else { 0 };
            assert_eq!(class[r * N + c], want, "class at ({r}, {c})");
            let m = f32::from_bits(margin[r * N + c]);
            assert_eq!(m.to_bits(), (row[c] - lo).to_bits(), "margin at ({r}, {c})");
        }
    }
}

/// `argmax`/`argmin` across the CTAs of a cluster (2 and 4): CTA rank `r` holds columns
/// `512r…` of the row, the tail past `N` masked; every CTA stores the row's index in its
/// column 0.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(x2 = (CS = 2), x4 = (CS = 4)),
)]
pub fn arg_cluster(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M, N)] imax: Tensor<u32>,
    #[shape(M, N)] imin: Tensor<u32>,
) {
    let t = regs::<f32>([1, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x / CS, cta_rank));
    let inside = col_index(t) + cta_rank * 512 < N;
    let hi = select(inside, t, f32::NEG_INFINITY);
    let lo = select(inside, t, f32::INFINITY);
    let kmax = argmax(hi, axis = 1, across = cluster);
    let kmin = argmin(lo, axis = 1, across = cluster);
    copy(
        imax.tile(cta.x / CS, cta_rank),
        select(col_index(t) == 0, kmax, 7777),
    );
    copy(
        imin.tile(cta.x / CS, cta_rank),
        select(col_index(t) == 0, kmin, 7777),
    );
}

/// Rows full of ties (within and across CTAs), ±0 and NaNs, and a row whose extreme sits
/// only in the last CTA's part: every CTA of the row holds torch's index.
#[test]
fn argmax_and_argmin_across_a_cluster_match_torch() {
    const M: usize = 7;
    for (config, cs) in [("x2", 2usize), ("x4", 4)] {
        let n = (cs - 1) * 512 + 77;
        let mut dev = Device::new();
        let mut x = tied(&mut Rng::new(40 + cs as u64), M, n, true);
        // Row 0: the max only in the last CTA's columns; the min only in the first's.
        x[n - 3] = 9.0;
        x[5] = -9.0;
        // Row 2: one value everywhere (the index is 0); row 3: the max in every CTA's
        // part, tied across CTAs (the lowest rank's, its first, wins).
        for c in 0..n {
            x[2 * n + c] = 1.0;
            x[3 * n + c] = if c % 512 == 100 { 5.0 } else { 0.0 };
        }
        let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, n]);
        let outs: Vec<TensorMeta> = (0..2)
            .map(|_| poisoned(&mut dev, ElemType::U32, &[M, n]))
            .collect();
        let art = arg_cluster::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("the config");
        let mut all = vec![xt];
        all.extend(outs.iter().cloned());
        launch(art, &mut dev, &all);
        let got: Vec<Vec<u32>> = outs.iter().map(|t| read32(&dev, t, M * n)).collect();
        for r in 0..M {
            let row = &x[r * n..(r + 1) * n];
            let want = [torch_arg(row, true, nan32), torch_arg(row, false, nan32)];
            if r == 0 {
                assert_eq!(want, [(n - 3) as u32, 5], "row 0's reference");
            }
            if r == 3 {
                assert_eq!(want[0], 100, "row 3's reference");
            }
            for rank in 0..cs {
                let c = rank * 512;
                for (k, w) in want.iter().enumerate() {
                    assert_eq!(
                        got[k][r * n + c],
                        *w,
                        "{config}: {} of row {r} in CTA rank {rank}",
                        ["argmax", "argmin"][k]
                    );
                }
                if c + 1 < n {
                    assert_eq!(got[0][r * n + c + 1], 7777, "{config}: the other columns");
                }
            }
        }
    }
}

/// The example of `docs/language.md` ("Index reductions", across a cluster): each row's class
/// from the CTAs of a cluster, stored once by rank 0 into a one-column tensor.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    cluster = (CS, 1, 1),
    grid = (M * CS, 1),
    configs(x2 = (CS = 2), x4 = (CS = 4)),
)]
pub fn split_argmax(#[shape(M, N)] logits: Tensor<f32>, #[shape(M, 1)] class: Tensor<u32>) {
    let t = regs::<f32>([1, 512], layout = blocked(vec = 4));
    copy(t, logits.tile(cta.x / CS, cta_rank));
    let v = select(col_index(t) + cta_rank * 512 < N, t, f32::NEG_INFINITY);
    let k = argmax(v, axis = 1, across = cluster);
    if cta_rank == 0 {
        copy(class.tile(cta.x / CS, 0), select(col_index(t) == 0, k, 0));
    }
}

#[test]
fn the_reference_example_splits_argmax_over_a_cluster() {
    const M: usize = 6;
    for (i, cs) in [2usize, 4].into_iter().enumerate() {
        let n = cs * 512 - 200;
        let mut dev = Device::new();
        let x = tied(&mut Rng::new(50 + cs as u64), M, n, true);
        let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, n]);
        let ct = poisoned(&mut dev, ElemType::U32, &[M, 1]);
        launch(
            &split_argmax::KERNEL.artifacts[i],
            &mut dev,
            &[xt, ct.clone()],
        );
        let got = read32(&dev, &ct, M);
        for r in 0..M {
            let want = torch_arg(&x[r * n..(r + 1) * n], true, nan32);
            assert_eq!(got[r], want, "cluster of {cs}: row {r}");
        }
    }
}

/// `reduce_min` across the two CTAs of a cluster and `argmin` of a `bf16` tile (its values
/// widened to f32 as they are read).
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    cluster = (2, 1, 1),
    grid = (M * 2, 1)
)]
pub fn min_cluster_bf16(
    #[shape(M, 1024)] x: Tensor<bf16>,
    #[shape(M, 1024)] y: Tensor<f32>,
    #[shape(M, 1024)] k: Tensor<u32>,
) {
    let t = regs::<bf16>([1, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x / 2, cta_rank));
    let m = reduce_min(t, axis = 1, across = cluster);
    copy(y.tile(cta.x / 2, cta_rank), cast::<f32>(t) - m);
    copy(
        k.tile(cta.x / 2, cta_rank),
        argmin(t, axis = 1) + col_index(t),
    );
}

#[test]
fn min_across_a_cluster_and_argmin_of_bf16_match_rust() {
    const R: usize = 3;
    const C: usize = 1024;
    let mut dev = Device::new();
    let x = tied(&mut Rng::new(16), R, C, true);
    let bits: Vec<u8> = x
        .iter()
        .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
        .collect();
    let xt = put(&mut dev, &bits, ElemType::Bf16, &[R, C]);
    let yt = poisoned(&mut dev, ElemType::F32, &[R, C]);
    let kt = poisoned(&mut dev, ElemType::U32, &[R, C]);
    launch(
        &min_cluster_bf16::KERNEL.artifacts[0],
        &mut dev,
        &[xt, yt.clone(), kt.clone()],
    );
    let (y, k) = (read32(&dev, &yt, R * C), read32(&dev, &kt, R * C));
    for r in 0..R {
        let row = &x[r * C..(r + 1) * C];
        let m = row.iter().copied().fold(f32::INFINITY, f32::min);
        for c in 0..C {
            let half = &row[c / 512 * 512..c / 512 * 512 + 512];
            let want = row[c] - m;
            let g = f32::from_bits(y[r * C + c]);
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "t - m at ({r}, {c}): {g} vs {want}"
            );
            let a = torch_arg(half, false, nan32) + (c % 512) as u32;
            assert_eq!(k[r * C + c], a, "argmin at ({r}, {c})");
        }
    }
}
