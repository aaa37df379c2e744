//! The ranking's tie rule on the shipped catalogue: equal costs are decided by the launch's
//! [`Footprint`] and the cost models' measured factors, never by where a kernel is written —
//! every family's requests over a sweep of shapes choose the same artifact from the catalogue
//! reversed, and no two artifacts are left equal at the top.

use super::tune::Cache;
use super::*;
use crate::catalogue::{self, family_of};
use crate::row_kernels::family::SiluMulRequest;
use crate::row_kernels::request::RowRequest;
use tirx::problem::RowOp;

/// Every family's request of every artifact's own problem at a sweep of shapes (odd, aligned,
/// skinny, long rows), on an H200 and a B200, each once.
fn swept_requests() -> Vec<(Device, Box<dyn ProblemDef>)> {
    let rows = [
        100, 1000, 4096, 5000, 8192, 11008, 16384, 30001, 32768, 65536,
    ];
    let gemm = [
        (8192, 8192, 8192),
        (4096, 4096, 4096),
        (2048, 2048, 2048),
        (128, 8192, 8192),
        (16, 8192, 8192),
        (1000, 1000, 1000),
        (8192, 28672, 4096),
        (130, 136, 208),
    ];
    let attention = [(2048, 16, 0), (8192, 16, 0), (512, 16, 0), (130, 2, 0)];
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for device in [Device::h200(), Device::b200()] {
        for k in catalogue::all() {
            for art in k.artifacts {
                let family = family_of(art).expect("owned");
                let shapes: Vec<(usize, usize, usize)> = match art.problem {
                    Some(tirx::problem::Problem::Gemm(_)) => gemm.to_vec(),
                    Some(tirx::problem::Problem::Attention) => attention.to_vec(),
                    _ => rows.iter().map(|&n| (4096, n, 0)).collect(),
                };
                for shape in shapes {
                    let Ok(request) = family.request(art, shape) else {
                        continue;
                    };
                    if seen.insert(format!("{} {}", device.name, request.describe())) {
                        out.push((device.clone(), request));
                    }
                }
            }
        }
    }
    out
}

/// The best two of a ranking differ in cost or footprint, and the catalogue reversed
/// (folders, files, kernels and every kernel's configs) chooses the same artifact.
#[test]
fn ties_are_decided_by_the_footprint_never_by_the_catalogue_order() {
    let forward = catalogue::all();
    let mut ranked_requests = 0;
    for (device, request) in swept_requests() {
        let verdicts = judge(request.as_ref(), &forward, &device);
        let best = ranked(&verdicts);
        let Some((first, cost)) = best.first() else {
            continue;
        };
        ranked_requests += 1;
        if let Some((second, next)) = best.get(1) {
            assert!(
                cost < next || tie_order(first) != tie_order(second),
                "{} on {}: {}/{} and {}/{} tie in cost, footprint and artifact count",
                request.describe(),
                device.name,
                first.kernel.name,
                first.artifact.config,
                second.kernel.name,
                second.artifact.config
            );
        }
        // The catalogue reversed: its kernels, and every kernel's configs.
        let mut back = verdicts.clone();
        back.reverse();
        let chosen = ranked(&back)[0].0.artifact;
        assert!(
            std::ptr::eq(chosen, first.artifact),
            "{} on {}: {}/{} forward, {}/{} reversed",
            request.describe(),
            device.name,
            first.kernel.name,
            first.artifact.config,
            chosen.kernel,
            chosen.config
        );
    }
    assert!(ranked_requests > 100, "{ranked_requests} requests ranked");
}

/// The model's choice for `request` on an H200.
fn choice(request: &dyn ProblemDef) -> &'static KernelArtifact {
    choose(
        request,
        &catalogue::all(),
        &Device::h200(),
        &Cache::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .artifact
}

/// The ties the catalogue's order used to decide, now decided by what was measured: at 32k
/// columns the rows staged by TMA (softmax and RMSNorm), a narrower CTA for softmax at one
/// capacity, a wider one for LayerNorm, and for `silu_mul` the tiles that pad the least, then
/// the finer grid.
#[test]
fn the_ties_the_catalogue_order_decided() {
    let staged = |a: &KernelArtifact| {
        (a.signature)()
            .params
            .iter()
            .any(|p| matches!(p, tirx::abi::AbiParam::TensorMap { tensor, .. } if tensor == "x"))
    };
    let threads = |a: &KernelArtifact| (a.signature)().threads;
    for op in [RowOp::Softmax, RowOp::RmsNorm] {
        let art = choice(&RowRequest::contiguous(op, 8192, 32768));
        assert!(staged(art), "{op:?}: {}/{}", art.kernel, art.config);
        assert_eq!((art.signature)().cluster, [1, 1, 1]);
    }
    // Softmax at 4096 and 8192 columns: c4k (128 threads), c8k (256), not their wider twins.
    for (cols, want) in [(4096, 128), (8192, 256)] {
        let art = choice(&RowRequest::contiguous(RowOp::Softmax, 16384, cols));
        assert_eq!(threads(art), want, "softmax {cols}: {}", art.config);
    }
    // LayerNorm at the same lengths: the same narrower CTAs since it reads its row once into
    // RMSNorm's two tiles (the rows branch's measurement; `row_kernels/request.rs`).
    for (cols, want) in [(4096, 128), (8192, 256)] {
        let art = choice(&RowRequest::contiguous(RowOp::LayerNorm, 16384, cols));
        assert_eq!(threads(art), want, "layernorm {cols}: {}", art.config);
    }
    // silu_mul: 11008 columns pad to 11264 with 512-column tiles, 12288 with 2048-column ones;
    // 8192 columns fit both exactly, and the finer grid (8×512 tiles) goes first.
    for cols in [11008, 8192] {
        let art = choice(&SiluMulRequest::contiguous(8192, cols));
        assert_eq!((art.int("R"), art.int("C")), (Some(8), Some(512)), "{cols}");
    }
}

/// The FP8 ping-pong kernels as measured on the H200 (docs/perf/h200-2026-12-05.md): the
/// 128×128 ping-pong tile (`m128`) ahead of the cooperative 128×256 at full-wave shapes, the
/// 64×256 ping-pong tile behind it. The host chooses `m128` for the ping-pong kernels' own
/// requests (per-tensor and row-wise scales) at the measured large shapes and at unseen ones of
/// the same class, and never the 64-row ping-pong tile there.
#[test]
fn the_measured_ping_pong_tile_wins_at_full_waves_and_the_narrow_one_does_not() {
    let mut asked = 0;
    for k in catalogue::all() {
        for art in k.artifacts.iter().filter(|a| a.int("PINGPONG") == Some(1)) {
            let family = family_of(art).expect("owned");
            for shape in [
                (8192, 8192, 8192),
                (8192, 28672, 4096),
                (8192, 4096, 14336),
                (6144, 10240, 3072),
            ] {
                let request = family.request(art, shape).expect("its own request");
                let chosen = choice(request.as_ref());
                assert_eq!(
                    (chosen.int("PINGPONG"), chosen.int("BM")),
                    (Some(1), Some(128)),
                    "{}: {}/{}",
                    request.describe(),
                    chosen.kernel,
                    chosen.config
                );
                asked += 1;
            }
        }
    }
    assert!(asked >= 8, "{asked} ping-pong requests");
}

/// A row longer than a one-CTA kernel stages (32768 columns) is split over a cluster of CTAs,
/// however many rows there are: the cluster kernels read it from DRAM once where the one-CTA
/// walkers read it twice (docs/perf/h100-2026-12-07-stop56.md: softmax 4096×65536 `x2` 81.7 %
/// of the device copy against the walker's 75.5 %, 1024×262144 `x8` 76.2 % against 67.0 %);
/// a row a one-CTA kernel holds keeps it (8192×32768: `s32k` 97.8 % against `h2`'s 94.9 %).
#[test]
fn rows_past_a_one_cta_stage_split_over_a_cluster() {
    let cluster = |a: &KernelArtifact| (a.signature)().cluster.iter().product::<u32>();
    for op in [RowOp::Softmax, RowOp::RmsNorm, RowOp::LayerNorm] {
        for (rows, cols) in [(8192, 32768), (4096, 16384), (8192, 30000)] {
            let art = choice(&RowRequest::contiguous(op, rows, cols));
            assert_eq!(
                cluster(art),
                1,
                "{op:?} {rows}x{cols}: {}/{}",
                art.kernel,
                art.config
            );
        }
        for (rows, cols, want) in [
            (4096, 65536, 2),
            (2048, 131072, 4),
            (1024, 262144, 8),
            (64, 262144, 8),
            (100, 65536, 2),
            (8192, 40000, 2),
        ] {
            let art = choice(&RowRequest::contiguous(op, rows, cols));
            assert_eq!(
                cluster(art),
                want,
                "{op:?} {rows}x{cols}: {}/{}",
                art.kernel,
                art.config
            );
        }
        // Past the largest cluster's 262144 columns: the one-CTA walkers.
        let art = choice(&RowRequest::contiguous(op, 256, 300_000));
        assert_eq!(cluster(art), 1, "{op:?}: {}/{}", art.kernel, art.config);
    }
}

/// A row of an odd bf16 width goes to a kernel that holds or walks it from its first 16-byte
/// aligned column, never to a tile holding it from column 0, whose chunks then move element by
/// element (docs/perf/h100-2026-12-06-stop51.md): up to 16384 columns the register kernels of
/// `ODD = 1` (`softmax_odd`, …), past them up to 32768 the kernels that stage the row from
/// that column by TMA through `x`'s flat view (`staged_odd.rs`, `ODD = 1` and a `CAP`: read
/// once, three or four CTAs an SM), the smallest capacity that holds the row, and past those
/// the chunk walkers (`CAP`, read twice), which beat larger staged configs of two CTAs an SM
/// and one at 1024×50257 and 512×99999 (docs/perf/h100-2026-12-07-stop56.md; deleted). A
/// width of whole vectors keeps its register or staged kernel, never an `ODD` one.
#[test]
fn rows_of_odd_width_take_a_kernel_that_walks_from_the_aligned_column() {
    let flat = |a: &KernelArtifact| a.sig().tensors.iter().any(|t| t.name == "xf");
    for op in [RowOp::Softmax, RowOp::RmsNorm, RowOp::LayerNorm] {
        // Past the register `ODD` kernels' 16k: staged from the aligned column, by the
        // smallest capacity that holds the row.
        for (rows, cols, config) in [
            (2048, 20001, "o24k"),
            (4096, 16385, "o24k"),
            (8192, 32767, "o32k"),
        ] {
            let art = choice(&RowRequest::contiguous(op, rows, cols));
            let what = format!("{op:?} {rows}x{cols}: {}/{}", art.kernel, art.config);
            assert!(art.int("ODD") == Some(1) && flat(art), "{what}");
            assert_eq!(art.config, config, "{what}");
        }
        // Past them: the walkers, also at the widths the deleted `o52k` and `o100k` held.
        for (rows, cols) in [
            (1024, 32769),
            (1024, 50257),
            (512, 99999),
            (512, 102401),
            (256, 150001),
        ] {
            let art = choice(&RowRequest::contiguous(op, rows, cols));
            let what = format!("{op:?} {rows}x{cols}: {}/{}", art.kernel, art.config);
            assert!(
                art.int("CAP").is_some() && art.int("ODD").is_none(),
                "{what}"
            );
        }
        // A tensor whose rows do not follow each other has no flat view: the walkers.
        let mut strided = RowRequest::contiguous(op, 1024, 50257);
        strided.x.strides = vec![50264, 1];
        let art = choice(&strided);
        assert!(!flat(art) && art.int("CAP").is_some(), "{}", art.kernel);
        for (rows, cols) in [
            (16384, 1001),
            (16384, 1003),
            (8192, 2047),
            (8192, 3001),
            (4096, 3999),
            (4096, 4095),
            (16384, 7),
            (4096, 4999),
            (8192, 7171),
            (4096, 9999),
            (2048, 16383),
        ] {
            let art = choice(&RowRequest::contiguous(op, rows, cols));
            assert_eq!(
                art.int("ODD"),
                Some(1),
                "{op:?} {rows}x{cols}: {}/{}",
                art.kernel,
                art.config
            );
            // The smallest capacity that holds the row.
            let cap = crate::row_kernels::request::capacity(art).unwrap();
            assert!(cap < cols + 1024, "{op:?} {rows}x{cols}: {}", art.config);
        }
        for (rows, cols) in [
            (4096, 5000),
            (8192, 4096),
            (16384, 1000),
            (16384, 1024),
            (8192, 3000),
        ] {
            let art = choice(&RowRequest::contiguous(op, rows, cols));
            assert!(
                art.int("CAP").is_none() && art.int("ODD").is_none(),
                "{op:?} {rows}x{cols}: {}/{}",
                art.kernel,
                art.config
            );
        }
    }
}

/// The cluster rule's bounds hold: no one-CTA row kernel holds a longer row than
/// [`LONGEST_ONE_CTA_ROW`], so a cluster kernel ranked past it ranks after all of them, and
/// the longest row a one-CTA kernel stages by a tensor map of `x` is
/// [`LONGEST_ONE_CTA_STAGE`], where the rule stops keeping clusters off.
#[test]
fn no_one_cta_row_kernel_outgrows_the_cluster_rules_bound() {
    use crate::row_kernels::request::{LONGEST_ONE_CTA_ROW, LONGEST_ONE_CTA_STAGE, capacity};
    let (mut seen, mut staged) = (0, 0);
    for k in catalogue::all() {
        for art in k.artifacts.iter() {
            let Some(cap) = capacity(art) else { continue };
            let sig = (art.signature)();
            if sig.cluster.iter().product::<u32>() == 1 {
                assert!(
                    cap <= LONGEST_ONE_CTA_ROW,
                    "{}/{}: {cap}",
                    art.kernel,
                    art.config
                );
                seen += 1;
                let maps_x = sig.params.iter().any(
                    |p| matches!(p, tirx::abi::AbiParam::TensorMap { tensor, .. } if tensor == "x"),
                );
                if maps_x {
                    staged = staged.max(cap);
                }
            }
        }
    }
    assert!(seen > 10, "{seen} one-CTA row artifacts");
    assert_eq!(staged, LONGEST_ONE_CTA_STAGE);
}
