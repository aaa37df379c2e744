//! The MMA with A read from tensor memory (`tcgen05.mma … [d], [a], b-desc, idesc, p`, PTX
//! ISA §9.7.16.10.9) on sm_100a: kernels built with the same macro as the shipped ones put A
//! into TMEM — FA4's P written packed over S's columns from a register tile (`copy(p_t, p)`)
//! — or copy it there from shared memory (`tcgen05::cp`, `tcgen05.cp.128x256b`, §9.7.16.9.2)
//! — and multiply it by a shared B, then read the result back with `tcgen05.ld`. Assembled
//! by ptxas with the A-from-TMEM SASS and no spills, and run in the emulator against the f64
//! reference (no Blackwell GPU here).

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// O = P·Vᵀ with P = bf16(S / 8), S = A·Bᵀ (one 128×64 tile, K = 64): S into registers, P
/// written packed over S's first 32 columns (`alias = s`), then the MMA reads P from TMEM as
/// its A operand.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn tmem_a_pv(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(J, N)] v: Tensor<bf16>,
    #[shape(M, J)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let v_s = smem::<bf16>([64, 64], swizzle = B128);
    let s = tmem::<f32>([128, 64]);
    let o = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64], alias = s);
    let t = regs::<f32>([128, 64], layout = tmem_16x256b);
    let p = regs::<bf16>([128, 64], layout = tmem_16x256b);
    let loaded = mbarrier();
    let s_done = mbarrier();
    let o_done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(s);
        tcgen05::alloc(o);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(0, 0), loaded);
        tma::load(b_s, b.tile(0, 0), loaded);
        tma::load(v_s, v.tile(0, 0), loaded);
    }
    loaded.wait(0);
    #[scope(thread = 0)]
    {
        tcgen05::mma(s, a_s, b_s, accumulate = false);
        tcgen05::commit(s_done);
    }
    s_done.wait(0);
    copy(t, s);
    p = cast::<bf16>(t * 0.125);
    copy(p_t, p);
    // The stores are the warpgroup's; the MMA that reads them is thread 0's.
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    #[scope(thread = 0)]
    {
        tcgen05::mma(o, p_t, v_s, accumulate = false);
        tcgen05::commit(o_done);
    }
    o_done.wait(0);
    copy(d.tile(0, 0), o);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(s);
        tcgen05::dealloc(o);
    }
}

/// D = A·Bᵀ (one 128×64 tile, K = 64) with A copied from shared memory into TMEM by the
/// MMA's own thread: `tcgen05.cp` then the MMAs that read it, in order, one commit for both.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn tmem_a_cp(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let a_t = tmem::<bf16>([128, 64]);
    let acc = tmem::<f32>([128, 64]);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(a_t);
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
        tcgen05::cp(a_t, a_s);
        tcgen05::mma(acc, a_t, b_s, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(d.tile(0, 0), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(a_t);
    }
}

/// The A-from-TMEM form, one per K-step of 16 (4 for K = 64), A's address 8 columns on each.
#[test]
fn the_pv_mma_reads_a_from_tensor_memory() {
    let ptx = tmem_a_pv::KERNEL.artifacts[0].ptx;
    let mmas: Vec<&str> = ptx.lines().filter(|l| l.contains("tcgen05.mma")).collect();
    assert_eq!(mmas.len(), 8, "{ptx}");
    let from_tmem = mmas.iter().filter(|l| l.contains("], [%r")).count();
    assert_eq!(from_tmem, 4, "{mmas:#?}");
    for c in [8, 16, 24] {
        assert!(ptx.contains(&format!(", {c};")), "no step of {c} columns");
    }
}

#[test]
fn the_a_from_tmem_kernel_assembles_without_spills() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let art = &tmem_a_pv::KERNEL.artifacts[0];
    let c = check_artifact("tmem_a_pv", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    let has = |op: &str| c.sass.keys().any(|k| k.starts_with(op));
    assert!(has("UTCHMMA") && has("LDTM") && has("STTM"), "{:?}", c.sass);
    // ptxas 13 prints the A-from-TMEM form as `UTCHMMA tmem[URa], gdesc[URb], tmem[URd], …`
    // (A's operand a TMEM address, not a `gdesc` descriptor); the S MMA as `UTCHMMA
    // gdesc[…], gdesc[…], tmem[…], …`.
    let rep = tirx_ptx::tools::ptxas(art.ptx, "sm_100a").expect("assembles");
    let Ok(sass) = tirx_ptx::tools::nvdisasm(&rep.cubin) else {
        return;
    };
    let utchmma: Vec<&str> = sass.lines().filter(|l| l.contains("UTCHMMA")).collect();
    let from_tmem = |l: &&&str| {
        l.split("UTCHMMA")
            .nth(1)
            .is_some_and(|r| r.trim().starts_with("tmem["))
    };
    assert_eq!(utchmma.iter().filter(from_tmem).count(), 4, "{utchmma:#?}");
    assert_eq!(utchmma.len(), 8, "{utchmma:#?}");
}

#[test]
fn p_from_tensor_memory_times_v_matches_the_reference_in_the_emulator() {
    let art = &tmem_a_pv::KERNEL.artifacts[0];
    let (m, n, k, j) = (128usize, 64usize, 64usize, 64usize);
    let mut rng = Rng::new(2026);
    let a = rng.bf16s(m * k);
    let b = rng.bf16s(n * k);
    let v = rng.bf16s(j * n);
    let mut dev = Device::new();
    let ta = upload(&mut dev, &a, &[m, k]);
    let tb = upload(&mut dev, &b, &[n, k]);
    let tv = upload(&mut dev, &v, &[j, n]);
    let td = upload(&mut dev, &[], &[m, j]);
    sim_launch(art, &mut dev, &[ta, tb, tv, td.clone()], &[], 3).unwrap_or_else(|e| panic!("{e}"));
    let got = download(&dev, &td);
    for i in 0..m {
        let p: Vec<f64> = (0..n)
            .map(|c| {
                let s: f64 = (0..k)
                    .map(|x| a[i * k + x].to_f64() * b[c * k + x].to_f64())
                    .sum();
                half::bf16::from_f64(s / 8.0).to_f64()
            })
            .collect();
        for col in 0..j {
            let terms = (0..n).map(|c| p[c] * v[col * n + c].to_f64());
            let (want, mag): (f64, f64) = terms.fold((0.0, 0.0), |(s, m), x| (s + x, m + x.abs()));
            let g = got[i * j + col].to_f64();
            // bf16 output, plus one bf16 ulp of any P element (S rounds to f32 first).
            let tol = want.abs() * 2f64.powi(-8) + mag * 2f64.powi(-8) + 1e-4;
            assert!((g - want).abs() <= tol, "({i}, {col}): {g} vs {want}");
        }
    }
}

/// Four `tcgen05.cp.128x256b` (32 bytes of each row, 8 columns each), then the four MMAs
/// reading A from TMEM.
#[test]
fn the_copy_into_tmem_is_four_128x256b_copies_before_the_mmas() {
    let ptx = tmem_a_cp::KERNEL.artifacts[0].ptx;
    let cps = ptx.matches("tcgen05.cp.cta_group::1.128x256b [%r").count();
    assert_eq!(cps, 4, "{ptx}");
    let first_mma = ptx.find("tcgen05.mma").expect("an mma");
    assert!(ptx.rfind("tcgen05.cp").expect("a cp") < first_mma);
    let from_tmem = ptx
        .lines()
        .filter(|l| l.contains("tcgen05.mma") && l.contains("], [%r"))
        .count();
    assert_eq!(from_tmem, 4, "{ptx}");
}

#[test]
fn the_tcgen05_cp_kernel_assembles_to_utccp_without_spills() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let art = &tmem_a_cp::KERNEL.artifacts[0];
    let c = check_artifact("tmem_a_cp", art).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    let has = |op: &str| c.sass.keys().any(|k| k.starts_with(op));
    // ptxas 13 prints `tcgen05.cp` as `UTCCP.T.S`.
    assert!(has("UTCHMMA") && has("UTCCP"), "{:?}", c.sass);
}

#[test]
fn a_copied_into_tmem_matches_the_reference_in_the_emulator() {
    let art = &tmem_a_cp::KERNEL.artifacts[0];
    let (m, n, k) = (128usize, 64usize, 64usize);
    let mut rng = Rng::new(2027);
    let a = rng.bf16s(m * k);
    let b = rng.bf16s(n * k);
    for seed in [1, 2] {
        let mut dev = Device::new();
        let ta = upload(&mut dev, &a, &[m, k]);
        let tb = upload(&mut dev, &b, &[n, k]);
        let td = upload(&mut dev, &[], &[m, n]);
        sim_launch(art, &mut dev, &[ta, tb, td.clone()], &[], seed)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let got = download(&dev, &td);
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|x| a[i * k + x].to_f64() * b[j * k + x].to_f64())
                    .sum();
                let g = got[i * n + j].to_f64();
                let tol = want.abs() * 2f64.powi(-8) + 1e-4 * (1.0 + want.abs());
                assert!(
                    (g - want).abs() <= tol,
                    "seed {seed} ({i}, {j}): {g} vs {want}"
                );
            }
        }
    }
}

/// Both kernels' IR prints, parses back to the same text, and recompiles to the same PTX
/// (the `[a-tmem]` form and the `tcgen05_cp` copy come from the IR, not from the macro).
#[test]
fn the_a_from_tmem_kernels_round_trip_through_the_text_form() {
    for k in [&tmem_a_pv::KERNEL, &tmem_a_cp::KERNEL] {
        let art = &k.artifacts[0];
        let m = tirx_ir::parse::parse_module(art.ir).expect("parses");
        assert_eq!(m.to_string(), art.ir);
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, false).expect("compiles");
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
    }
}
