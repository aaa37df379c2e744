//! Carried pipeline counters (`carry-stage-counters`, #29): a loop that steps through a
//! pipeline of S stages, S not a power of two, carries the stage index and the phase bit
//! instead of computing `iter % S` and `(iter / S) & 1` at every step.
//!
//! - The K loops of the Hopper FP8 GEMMs (producer and consumer, per-tensor and row-wise,
//!   cooperative and ping-pong) hold no `rem.`/`div.` in their PTX for S = 3, 5, 6; with
//!   S = 4 the counter is still divided, by the mask and the shift the PTX writer makes of a
//!   power of two (cheaper than the carried update), which the test sees.
//! - A ring copy written for the purpose runs in the emulator, bit-exact, for S = 3, 4, 5,
//!   with the counter forms the pass must keep right: a loop that starts at iteration 1, a
//!   counter that runs on across an outer loop (a persistent kernel's), a release of stage
//!   `(t + S − 1) % S`, and a producer and a consumer that step by different amounts (the
//!   producer one tile a step, the consumer a wait per step but its first outside the loop).

use tirx::KernelArtifact;
use tirx::abi::ConfigValue;
use tirx::prelude::*;
use tirx_kernels::gemm::fp8::kernels::{gemm_sm90_fp8, gemm_sm90_fp8_rowwise};
use tirx_kernels::gemm::fp8_pingpong::kernels::{
    gemm_sm90_fp8_pingpong, gemm_sm90_fp8_rowwise_pingpong,
};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// The config's `STAGES`.
fn stages(art: &KernelArtifact) -> i64 {
    art.consts
        .iter()
        .find_map(|(n, v)| match (n, v) {
            (&"STAGES", ConfigValue::Int(s)) => Some(*s),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{} {}: no STAGES", art.kernel, art.config))
}

/// The innermost `for` loops of a PTX text (from `$L_for_N:` to `$L_for_end_N:` with no
/// other `for` inside) that wait on an mbarrier: the pipeline loops.
fn pipeline_loops(ptx: &str) -> Vec<Vec<&str>> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut loops = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(n) = l.strip_prefix("$L_for_").and_then(|r| r.strip_suffix(':')) else {
            continue;
        };
        if n.starts_with("end_") {
            continue;
        }
        let end = format!("$L_for_end_{n}:");
        let Some(j) = lines[i..].iter().position(|m| *m == end) else {
            continue;
        };
        let body = &lines[i + 1..i + j];
        let innermost = !body.iter().any(|m| m.starts_with("$L_for_"));
        if innermost && body.iter().any(|m| m.contains("mbarrier.try_wait")) {
            loops.push(body.to_vec());
        }
    }
    loops
}

/// The divisions by a power of two `s` in a loop body: `and` with `s − 1`, `shr` by log₂ s.
fn masks<'a>(body: &[&'a str], s: i64) -> Vec<&'a str> {
    let (mask, shift) = (
        format!(", {};", s - 1),
        format!(", {};", s.trailing_zeros()),
    );
    body.iter()
        .copied()
        .filter(|l| {
            let op = l.trim_start();
            (op.starts_with("and.b32") && op.ends_with(&mask))
                || (op.starts_with("shr.u32") && op.ends_with(&shift))
        })
        .collect()
}

/// The divisions in a loop body.
fn divisions<'a>(body: &[&'a str]) -> Vec<&'a str> {
    body.iter()
        .copied()
        .filter(|l| {
            let op = l.trim_start();
            op.starts_with("rem.") || op.starts_with("div.")
        })
        .collect()
}

#[test]
fn the_fp8_gemms_k_loops_divide_nothing_when_stages_is_not_a_power_of_two() {
    let kernels = [
        &gemm_sm90_fp8::KERNEL,
        &gemm_sm90_fp8_rowwise::KERNEL,
        &gemm_sm90_fp8_pingpong::KERNEL,
        &gemm_sm90_fp8_rowwise_pingpong::KERNEL,
    ];
    let (mut carried, mut divided) = (0, 0);
    for k in kernels {
        for art in k.artifacts {
            let s = stages(art);
            let loops = pipeline_loops(art.ptx);
            let consumers = loops
                .iter()
                .filter(|b| b.iter().any(|l| l.contains("wgmma.mma_async")))
                .count();
            let producers = loops
                .iter()
                .filter(|b| b.iter().any(|l| l.contains("cp.async.bulk.tensor")))
                .count();
            assert!(
                consumers >= 1 && producers >= 1,
                "{} {}: {consumers} consumer and {producers} producer loops found",
                k.name,
                art.config
            );
            let divs: Vec<&str> = loops.iter().flat_map(|b| divisions(b)).collect();
            if (s as u64).is_power_of_two() {
                // Left to the division (a mask and a shift): the check sees it.
                let masked = loops.iter().flat_map(|b| masks(b, s)).count();
                assert!(masked >= 4, "{} {}: S = {s}", k.name, art.config);
                divided += 1;
            } else {
                assert!(
                    divs.is_empty(),
                    "{} {} (S = {s}): divisions in a pipeline loop: {divs:#?}",
                    k.name,
                    art.config
                );
                carried += 1;
            }
        }
    }
    assert!(
        carried >= 10 && divided >= 3,
        "{carried} carried, {divided} divided"
    );
}

/// A row panel of `src` copied `ROUNDS` times through an S-stage ring into `dst` (round r
/// into columns r·N…): the producer's counter runs on across the rounds (`it += 1`), the
/// consumer waits for iteration 0 before its loop and for iteration t in `for t in 1..`,
/// releasing the previous iteration's stage, `(t + S − 1) % S`, once its store has read it.
#[tile_kernel(
    target = sm_90a,
    threads = 64,
    grid = (cdiv(M, BM), 1),
    configs(
        s3 = (BM = 64, BN = 64, STAGES = 3, ROUNDS = 2),
        s4 = (BM = 64, BN = 64, STAGES = 4, ROUNDS = 2),
        s5 = (BM = 64, BN = 64, STAGES = 5, ROUNDS = 2),
    ),
)]
pub fn ring_copy(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, W)] dst: Tensor<bf16>) {
    let ring = smem::<bf16>([STAGES, BM, BN], swizzle = B128);
    let pipe = pipeline::<STAGES>();
    let tiles = cdiv(N, BN);

    #[scope(warp = 0, elect)]
    {
        let mut it = 0;
        for _ in 0..ROUNDS {
            for j in 0..tiles {
                let s = pipe.producer_acquire(it);
                tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
                it += 1;
            }
        }
    }

    #[scope(warp = 1, elect)]
    {
        let s0 = pipe.consumer_wait(0);
        tma::store(dst.tile(cta.x, 0), ring[s0]);
        tma::commit_group();
        tma::wait_group_read(0);
        for t in 1..ROUNDS * tiles {
            let s = pipe.consumer_wait(t);
            pipe.consumer_release((t + STAGES - 1) % STAGES);
            tma::store(dst.tile(cta.x, t), ring[s]);
            tma::commit_group();
            tma::wait_group_read(0);
        }
        pipe.consumer_release((ROUNDS * tiles - 1) % STAGES);
        tma::wait_group(0);
    }
}

#[test]
fn a_ring_copy_through_carried_counters_is_bit_exact_in_the_emulator() {
    for art in ring_copy::KERNEL.artifacts {
        let s = stages(art);
        let loops = pipeline_loops(art.ptx);
        assert_eq!(loops.len(), 2, "{}: {loops:#?}", art.config);
        let divs: Vec<&str> = loops.iter().flat_map(|b| divisions(b)).collect();
        assert!(divs.is_empty(), "{}: {divs:#?}", art.config);
        let masked = loops.iter().flat_map(|b| masks(b, s)).count();
        assert_eq!(masked > 0, (s as u64).is_power_of_two(), "{}", art.config);
        // 7 tiles a round, 14 iterations: the ring wraps several times, and a tail row.
        for (m, tiles, seed) in [(70, 7, 1), (64, 2, 2)] {
            let n = 64 * tiles;
            let mut rng = Rng::new(seed);
            let data = rng.bf16s(m * n);
            let mut dev = Device::new();
            let src = upload(&mut dev, &data, &[m, n]);
            let dst = upload(&mut dev, &[], &[m, 2 * n]);
            sim_launch(art, &mut dev, &[src, dst.clone()], &[], seed)
                .unwrap_or_else(|e| panic!("{} {m}x{n}: {e}", art.config));
            let got = download(&dev, &dst);
            for r in 0..m {
                for c in 0..2 * n {
                    let want = data[r * n + c % n];
                    assert_eq!(
                        got[r * 2 * n + c].to_bits(),
                        want.to_bits(),
                        "{} {m}x{n}: dst[{r}, {c}]",
                        art.config
                    );
                }
            }
        }
    }
}
