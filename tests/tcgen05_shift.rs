//! `tcgen05::shift` — `tcgen05.shift.cta_group::1.down` (PTX ISA §9.7.16.9.3): in each
//! 32-lane partition of a TMEM tile, rows of its first 256 bits (8 columns) move down one
//! lane, all but the partition's last (the implicit `.31x256b` shape, §9.7.16.2.3). A bf16
//! GEMM writes D into TMEM, the same thread shifts it (pipelined after the MMA, §9.7.16.6.2)
//! and commits both; the epilogue reads D back. Run in the emulator against an f64 reference
//! with the shift applied on the CPU; the PTX assembled by ptxas for sm_100a.

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{put, random_values};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = A·Bᵀ (128 × 32 × 64, bf16 in, f32 accumulate), then D shifted down one lane in each
/// 32-lane partition for its first 8 columns, f32 out.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn shift_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([32, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 32]);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), loaded);
        tma::load(b_s, b.tile(0, 0), loaded);
    }
    loaded.wait(0);
    #[scope(thread = 0)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false);
        tcgen05::shift(acc);
        tcgen05::commit(done);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

#[test]
fn a_shift_is_one_instruction_per_lane_partition() {
    let ptx = shift_gemm::KERNEL.artifacts[0].ptx;
    let shifts: Vec<&str> = ptx
        .lines()
        .filter(|l| l.contains("tcgen05.shift"))
        .collect();
    assert_eq!(shifts.len(), 4, "{shifts:#?}");
    assert!(
        shifts.iter().all(|l| l
            .trim_start()
            .starts_with("tcgen05.shift.cta_group::1.down [")),
        "{shifts:#?}"
    );
    // Lanes 0, 32, 64 and 96: 32·q << 16 added to the base (TMEM address: lane in bits 31-16).
    for q in 1..4u32 {
        assert!(
            ptx.contains(&format!("{};", (32 * q) << 16)),
            "lane {}",
            32 * q
        );
    }
}

#[test]
fn the_shift_moves_each_partitions_rows_down_one_lane_in_the_emulator() {
    use tirx::abi::ElemType::{Bf16, F32};
    let (m, n, k) = (128, 32, 64);
    let mut rng = Rng::new(9);
    let (ab, av) = random_values(&mut rng, Bf16, m * k);
    let (bb, bv) = random_values(&mut rng, Bf16, n * k);
    let mut dev = Device::new();
    let tam = put(&mut dev, &ab, Bf16, &[m, k]);
    let tbm = put(&mut dev, &bb, Bf16, &[n, k]);
    let td = put(&mut dev, &vec![0xff; m * n * 4], F32, &[m, n]);
    sim_launch(
        &shift_gemm::KERNEL.artifacts[0],
        &mut dev,
        &[tam, tbm, td.clone()],
        &[],
        4,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<f32> = dev
        .read(td.addr, m * n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let dot = |i: usize, j: usize| (0..k).map(|q| av[i * k + q] * bv[j * k + q]).sum::<f64>();
    let mut moved = 0;
    for i in 0..m {
        for j in 0..n {
            // Columns 0-7 of lane i hold lane i - 1's, except the first lane of a partition.
            let src = if j < 8 && i % 32 != 0 { i - 1 } else { i };
            let want = dot(src, j);
            let g = f64::from(got[i * n + j]);
            let mag: f64 = (0..k)
                .map(|q| (av[src * k + q] * bv[j * k + q]).abs())
                .sum();
            assert!(
                (g - want).abs() <= mag * 2f64.powi(-22) + 1e-30,
                "D[{i}][{j}] = {g}, want row {src}'s {want}"
            );
            moved += usize::from(src != i);
        }
    }
    // 31 rows × 8 columns in each of the 4 partitions came from the row above.
    assert_eq!(moved, 4 * 31 * 8);
}

#[test]
fn the_shift_gemm_assembles_for_sm_100a() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("shift_gemm", &shift_gemm::KERNEL.artifacts[0]).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    assert_eq!(c.sass.get("UTCHMMA").copied(), Some(4), "{:?}", c.sass);
    // ptxas 13 prints the shift as UTCSHIFT.DOWN, one per lane partition.
    assert_eq!(
        c.sass.get("UTCSHIFT.DOWN").copied(),
        Some(4),
        "{:?}",
        c.sass
    );
}

/// The text form carries the op (`tcgen05_shift @acc`): the IR parses back and recompiles to
/// the PTX the macro emitted.
#[test]
fn the_shift_round_trips_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let art = &shift_gemm::KERNEL.artifacts[0];
    assert!(art.ir.contains("tcgen05_shift @acc"), "{}", art.ir);
    let m = parse_module(art.ir).expect("parses");
    assert_eq!(m.to_string(), art.ir);
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}

/// The pair's shift (`cta_group = 2`): a 2-CTA bf16 MMA writes each CTA's 128 rows of D,
/// the even CTA's thread shifts (`tcgen05.shift.cta_group::2.down`, both CTAs' tensor
/// memory, §9.7.16.9.3) and commits to both CTAs' barriers; each CTA stores its half.
#[tile_kernel(target = sm_100a, threads = 128, cluster = (2, 1, 1), grid = (2, 1))]
pub fn pair_shift_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<f32>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([16, 64], swizzle = B128);
    let acc = tmem::<f32>([128, 32]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc, cta_group = 2);
        tcgen05::relinquish(cta_group = 2);
    }
    tcgen05::fence_before();
    cluster_sync();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.x, 0), full);
        tma::load(b_s, b.tile(cta_rank, 0), full);
    }
    full.wait(0);
    cluster_sync();
    #[scope(warp = 1, elect)]
    {
        tcgen05::mma(acc, a_s, b_s, accumulate = false, cta_group = 2);
        tcgen05::shift(acc, cta_group = 2);
        tcgen05::commit(done, cta_group = 2);
    }
    done.wait(0);
    tcgen05::fence_after();
    copy(d.tile(cta.x, 0), acc);
    tcgen05::fence_before();
    cluster_sync();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc, cta_group = 2);
    }
}

#[test]
fn the_pairs_shift_moves_both_ctas_rows_in_the_emulator() {
    use tirx::abi::ElemType::{Bf16, F32};
    let art = &pair_shift_gemm::KERNEL.artifacts[0];
    assert!(art.ptx.contains("tcgen05.shift.cta_group::2.down"));
    let (m, n, k) = (256, 32, 64);
    let mut rng = Rng::new(19);
    let (ab, av) = random_values(&mut rng, Bf16, m * k);
    let (bb, bv) = random_values(&mut rng, Bf16, n * k);
    let mut dev = Device::new();
    let tam = put(&mut dev, &ab, Bf16, &[m, k]);
    let tbm = put(&mut dev, &bb, Bf16, &[n, k]);
    let td = put(&mut dev, &vec![0xff; m * n * 4], F32, &[m, n]);
    sim_launch(art, &mut dev, &[tam, tbm, td.clone()], &[], 4).unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<f32> = dev
        .read(td.addr, m * n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let dot = |i: usize, j: usize| (0..k).map(|q| av[i * k + q] * bv[j * k + q]).sum::<f64>();
    for i in 0..m {
        for j in 0..n {
            // Each CTA's rows (TMEM lanes i % 128) shift within their 32-lane partitions.
            let src = if j < 8 && i % 32 != 0 { i - 1 } else { i };
            let mag: f64 = (0..k)
                .map(|q| (av[src * k + q] * bv[j * k + q]).abs())
                .sum();
            let g = f64::from(got[i * n + j]);
            assert!(
                (g - dot(src, j)).abs() <= mag * 2f64.powi(-22) + 1e-30,
                "D[{i}][{j}] = {g}, want row {src}'s"
            );
        }
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c = check_artifact("pair_shift_gemm", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert!(
        c.sass.keys().any(|k| k.starts_with("UTCSHIFT")),
        "{:?}",
        c.sass
    );
}
