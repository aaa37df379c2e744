//! `docs/guide.md`, the page for a new user, is this file: every `rust` block of the guide
//! appears here verbatim (checked below), so each kernel is compiled by the macro and each
//! host snippet by rustc, and the tests run the guide's kernels in the emulator through
//! `tirx_kernels::simulate::run` against a Rust reference on random data.

use tirx::prelude::*;
use tirx::runtime::ElemType;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate;
use tirx_sim::Device;

/// Token ids shifted into a vocabulary shard of 1000 ids starting at 100, clamped into it.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 64)))]
pub fn shard_local(#[shape(M, N)] ids: Tensor<i32>, #[shape(M, N)] out: Tensor<i32>) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(t, ids.tile(cta.x, cta.y));
    copy(out.tile(cta.x, cta.y), min(max(t - 100, 0), 999));
}

/// `shard_local` in the emulator on a 50 × 70 tensor (tails in both dimensions).
#[test]
fn shard_local_in_the_emulator() {
    let (m, n) = (50, 70);
    let mut rng = Rng::new(7);
    let ids: Vec<f64> = (0..m * n)
        .map(|_| (rng.unit() * 2000.0).round() as f64)
        .collect();
    let mut dev = Device::new();
    let x = simulate::tensor(&mut dev, ElemType::I32, &[m, n], &ids);
    let y = simulate::tensor(&mut dev, ElemType::I32, &[m, n], &vec![-7.0; m * n]);
    let art = &shard_local::KERNEL.artifacts[0];
    simulate::run(art, &mut dev, &[x, y.clone()], &[]).expect("the kernel runs");
    let want: Vec<f64> = ids.iter().map(|v| (v - 100.0).clamp(0.0, 999.0)).collect();
    assert_eq!(simulate::values(&dev, &y), want);
}

/// `y = xᵀ` for an `[M, N]` f32 matrix: each thread gathers the elements of its 32 × 32 tile
/// of `y` from the transposed coordinates of `x`, then stores the tile as usual.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), cdiv(N, 32)))]
pub fn transpose(#[shape(M, N)] x: Tensor<f32>, #[shape(N, M)] y: Tensor<f32>) {
    let t = regs::<f32>([32, 32], layout = blocked(vec = 4));
    t = gather(x, cta.x * 32 + col_index(t), cta.y * 32 + row_index(t));
    copy(y.tile(cta.y, cta.x), t);
}

/// The transpose in the emulator on a 45 × 70 matrix, against the transposed input.
#[test]
fn transpose_in_the_emulator() {
    let (m, n) = (45, 70);
    let mut rng = Rng::new(11);
    let x: Vec<f64> = (0..m * n).map(|_| f64::from(rng.unit())).collect();
    let mut dev = Device::new();
    let xt = simulate::tensor(&mut dev, ElemType::F32, &[m, n], &x);
    let yt = simulate::tensor(&mut dev, ElemType::F32, &[n, m], &vec![f64::NAN; m * n]);
    let art = &transpose::KERNEL.artifacts[0];
    simulate::run(art, &mut dev, &[xt, yt.clone()], &[]).expect("the kernel runs");
    let y = simulate::values(&dev, &yt);
    for r in 0..n {
        for c in 0..m {
            assert_eq!(y[r * m + c], x[c * n + r], "y[{r}, {c}]");
        }
    }
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn swap_halves(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([2, 32, 64], swizzle = B128);
    let bar = mbarrier();
    let pair = cta.x / 2;
    #[scope(thread = 0)]
    {
        tma::load(
            tile[cta_rank],
            src.tile(2 * pair + cta_rank, cta.y),
            bar,
            multicast = 3,
        );
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(2 * pair + 1 - cta_rank, cta.y), tile[1 - cta_rank]);
        tma::commit_group();
        tma::wait_group(0);
    }
}

/// The multicast kernel in the emulator on a 100 × 72 matrix (rows of 144 bytes: TMA needs
/// 16-byte strides; the last pair's second half partly outside): every element arrives,
/// through the peer's load, at its own place.
#[test]
fn swap_halves_in_the_emulator() {
    let (m, n) = (100, 72);
    let mut rng = Rng::new(5);
    let x: Vec<f64> = (0..m * n).map(|_| f64::from(rng.unit())).collect();
    let mut dev = Device::new();
    let xt = simulate::tensor(&mut dev, ElemType::Bf16, &[m, n], &x);
    let yt = simulate::tensor(&mut dev, ElemType::Bf16, &[m, n], &vec![f64::NAN; m * n]);
    let art = &swap_halves::KERNEL.artifacts[0];
    simulate::run(art, &mut dev, &[xt.clone(), yt.clone()], &[]).expect("the kernel runs");
    assert_eq!(simulate::values(&dev, &yt), simulate::values(&dev, &xt));
}

/// `swap_halves` with a `cluster_sync()` of the user's as its last statement.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn swap_halves_synced(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([2, 32, 64], swizzle = B128);
    let bar = mbarrier();
    let pair = cta.x / 2;
    #[scope(thread = 0)]
    {
        tma::load(
            tile[cta_rank],
            src.tile(2 * pair + cta_rank, cta.y),
            bar,
            multicast = 3,
        );
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(2 * pair + 1 - cta_rank, cta.y), tile[1 - cta_rank]);
        tma::commit_group();
        tma::wait_group(0);
    }
    cluster_sync();
}

/// A cluster kernel syncs its cluster once before exit: the compiler's `cluster_sync` when
/// the user wrote none, the user's alone when it is the last statement (no second one).
#[test]
fn a_cluster_kernel_syncs_its_cluster_once_before_exit() {
    // Two in all: after the barriers' initialisation (a peer's multicast may signal them) and
    // before exit.
    let waits = |ptx: &str| ptx.matches("barrier.cluster.wait").count();
    assert_eq!(waits(swap_halves::KERNEL.artifacts[0].ptx), 2);
    assert_eq!(waits(swap_halves_synced::KERNEL.artifacts[0].ptx), 2);
}

#[tile_kernel(target = sm_90a, threads = 128, cluster = (2, 1, 1),
    grid = (cdiv(M, 64) * 2, cdiv(N, 64)))]
pub fn broadcast_pair(#[shape(M, N)] src: Tensor<bf16>, #[shape(D, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let block = cta.x / 2;
    #[scope(thread = 0)]
    {
        bar.expect_tx(8192);
        if cta_rank == 0 {
            tma::load(tile, src.tile(block, cta.y), bar, multicast = 3);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(2 * block + cta_rank, cta.y), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

/// `broadcast_pair` over a cluster of four: rank 0 alone loads, all four receive.
#[tile_kernel(target = sm_90a, threads = 128, cluster = (4, 1, 1),
    grid = (cdiv(M, 64) * 4, cdiv(N, 64)))]
pub fn broadcast_quad(#[shape(M, N)] src: Tensor<bf16>, #[shape(D, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let block = cta.x / 4;
    #[scope(thread = 0)]
    {
        bar.expect_tx(8192);
        if cta_rank == 0 {
            tma::load(tile, src.tile(block, cta.y), bar, multicast = 15);
        }
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(4 * block + cta_rank, cta.y), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}

/// Runs a one-issuer broadcast over clusters of `ranks` CTAs on a 128 × 72 matrix (a column
/// tail) against the reference: copy `r` of block `b` is `dst[(ranks·b + r)·64 + i, j] =
/// src[64·b + i, j]`, every copy from the one load of rank 0.
fn broadcast_in_the_emulator(art: &tirx::KernelArtifact, ranks: usize) {
    let (m, n) = (128, 72);
    let mut rng = Rng::new(13 + ranks as u64);
    let x: Vec<f64> = (0..m * n).map(|_| f64::from(rng.unit()) - 0.5).collect();
    let mut dev = Device::new();
    let xt = simulate::tensor(&mut dev, ElemType::Bf16, &[m, n], &x);
    let d = ranks * m;
    let yt = simulate::tensor(&mut dev, ElemType::Bf16, &[d, n], &vec![f64::NAN; d * n]);
    simulate::run(art, &mut dev, &[xt.clone(), yt.clone()], &[]).expect("the kernel runs");
    let (xs, ys) = (simulate::values(&dev, &xt), simulate::values(&dev, &yt));
    for b in 0..m / 64 {
        for r in 0..ranks {
            for i in 0..64 {
                for j in 0..n {
                    let want = xs[(64 * b + i) * n + j];
                    let got = ys[((ranks * b + r) * 64 + i) * n + j];
                    assert_eq!(got, want, "block {b}, copy {r}, [{i}, {j}]");
                }
            }
        }
    }
}

/// One issuer, every receiver armed by itself: 2- and 4-CTA clusters in the emulator.
#[test]
fn one_issuer_broadcasts_to_its_cluster_in_the_emulator() {
    // One multicast load (rank 0's) and one arm of the written count, in every CTA, before
    // the issuer's branch: nothing derived beside it.
    for ptx in [
        broadcast_pair::KERNEL.artifacts[0].ptx,
        broadcast_quad::KERNEL.artifacts[0].ptx,
    ] {
        assert_eq!(ptx.matches(".multicast::cluster").count(), 1);
        assert_eq!(ptx.matches("mbarrier.arrive.expect_tx").count(), 1);
        let arm = ptx.find("mbarrier.arrive.expect_tx").unwrap();
        assert!(arm < ptx.find(".multicast::cluster").unwrap());
    }
    broadcast_in_the_emulator(&broadcast_pair::KERNEL.artifacts[0], 2);
    broadcast_in_the_emulator(&broadcast_quad::KERNEL.artifacts[0], 4);
}

/// The multicast kernels assemble with ptxas for sm_90a with no spills and the SASS their PTX
/// asks for (the `tests/assemble.rs` check; skipped without ptxas unless CI requires it).
#[test]
fn the_multicast_kernels_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let kernels = [
        &swap_halves::KERNEL,
        &broadcast_pair::KERNEL,
        &broadcast_quad::KERNEL,
    ];
    for k in kernels {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
        }
    }
}

/// Every `rust` block of `docs/guide.md` is text of this file, so the compiler has built it.
#[test]
fn every_guide_example_is_compiled_here() {
    let guide = include_str!("../docs/guide.md");
    let this = include_str!("guide.rs");
    let mut blocks = 0;
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```rust" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let block = block.join("\n");
        // The block may start with `use` lines this file has once, at its top.
        let body: String = block
            .lines()
            .skip_while(|l| l.starts_with("use ") || l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            this.contains(&body),
            "docs/guide.md has an example that tests/guide.rs does not compile:\n{block}"
        );
        blocks += 1;
    }
    assert!(blocks >= 3, "the guide's examples were not found");
}
