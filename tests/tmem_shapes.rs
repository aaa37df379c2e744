//! Register tiles to and from tensor memory in every data-movement shape (PTX ISA §9.7.16.2.3)
//! and with 16-bit tiles (packed two per TMEM cell, or one per cell through `.pack::16b` /
//! `.unpack::16b`): kernels built with the same macro as the shipped ones, assembled by ptxas
//! with `LDTM`/`STTM` in their SASS and no spills, and run in the emulator against the f64
//! reference (no Blackwell GPU here). The computation depends on each element's row and
//! column, so a register layout that disagreed with the emulator's thread map (written
//! independently, `tirx-sim/src/exec/tmem_shape.rs`) would put values in the wrong place.

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{download, upload};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = 2·(A·Bᵀ) + col + row/4 for one 128×64 tile (K = 64), through an f32 register tile of
/// the layout `$layout`, loaded and stored with its shape.
macro_rules! f32_roundtrip {
    ($name:ident, $layout:ident) => {
        #[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
        pub fn $name(
            #[shape(M, K)] a: Tensor<bf16>,
            #[shape(N, K)] b: Tensor<bf16>,
            #[shape(M, N)] d: Tensor<bf16>,
        ) {
            let a_s = smem::<bf16>([128, 64], swizzle = B128);
            let b_s = smem::<bf16>([64, 64], swizzle = B128);
            let acc = tmem::<f32>([128, 64]);
            let t = regs::<f32>([128, 64], layout = $layout);
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
                tcgen05::commit(done);
            }
            done.wait(0);
            copy(t, acc);
            t = t * 2.0 + cast::<f32>(col_index(t)) + cast::<f32>(row_index(t)) * 0.25;
            copy(acc, t);
            copy(d.tile(0, 0), acc);
            tcgen05::fence_before();
            sync_threads();
            #[scope(warp = 0)]
            {
                tcgen05::dealloc(acc);
            }
        }
    };
}

f32_roundtrip!(tmem_16x64b_roundtrip, tmem_16x64b);
f32_roundtrip!(tmem_16x128b_roundtrip, tmem_16x128b);
f32_roundtrip!(tmem_16x256b_roundtrip, tmem_16x256b);
f32_roundtrip!(tmem_16x32bx2_roundtrip, tmem_16x32bx2);

/// The same computation rounded to bf16 in registers (`p`), stored packed into a 16-bit TMEM
/// buffer (`p_t`, 32 columns) and loaded back, then stored one element per column over the
/// f32 accumulator (`.unpack::16b`) and loaded back (`.pack::16b`), then written to D.
macro_rules! bf16_roundtrip {
    ($name:ident, $layout:ident) => {
        #[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
        pub fn $name(
            #[shape(M, K)] a: Tensor<bf16>,
            #[shape(N, K)] b: Tensor<bf16>,
            #[shape(M, N)] d: Tensor<bf16>,
        ) {
            let a_s = smem::<bf16>([128, 64], swizzle = B128);
            let b_s = smem::<bf16>([64, 64], swizzle = B128);
            let acc = tmem::<f32>([128, 64]);
            let p_t = tmem::<bf16>([128, 64]);
            let t = regs::<f32>([128, 64], layout = $layout);
            let p = regs::<bf16>([128, 64], layout = $layout);
            let q = regs::<bf16>([128, 64], layout = $layout);
            let loaded = mbarrier();
            let done = mbarrier();
            #[scope(warp = 0)]
            {
                tcgen05::alloc(acc);
                tcgen05::alloc(p_t);
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
                tcgen05::commit(done);
            }
            done.wait(0);
            copy(t, acc);
            p = cast::<bf16>(
                t * 2.0 + cast::<f32>(col_index(t)) + cast::<f32>(row_index(t)) * 0.25,
            );
            copy(p_t, p);
            copy(q, p_t);
            copy(acc, q);
            copy(p, acc);
            copy(d.tile(0, 0), p);
            tcgen05::fence_before();
            sync_threads();
            #[scope(warp = 0)]
            {
                tcgen05::dealloc(p_t);
                tcgen05::dealloc(acc);
            }
        }
    };
}

bf16_roundtrip!(tmem_bf16_32x32b, tmem_32x32b);
bf16_roundtrip!(tmem_bf16_16x256b, tmem_16x256b);
bf16_roundtrip!(tmem_bf16_16x32bx2, tmem_16x32bx2);

/// FA4's move: S (f32) into registers, P = bf16 of the same computation, written packed over
/// the first 32 columns of S through a view (`alias = s`, no allocation of its own), read
/// back through the view and written to D.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn tmem_bf16_p_over_s(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([128, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let s = tmem::<f32>([128, 64]);
    let p_t = tmem::<bf16>([128, 64], alias = s);
    let t = regs::<f32>([128, 64], layout = tmem_16x256b);
    let p = regs::<bf16>([128, 64], layout = tmem_16x256b);
    let loaded = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(s);
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
        tcgen05::mma(s, a_s, b_s, accumulate = false);
        tcgen05::commit(done);
    }
    done.wait(0);
    copy(t, s);
    p = cast::<bf16>(t * 2.0 + cast::<f32>(col_index(t)) + cast::<f32>(row_index(t)) * 0.25);
    copy(p_t, p);
    copy(p, p_t);
    copy(d.tile(0, 0), p);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(s);
    }
}

/// Every kernel of this file with the instruction forms its PTX must hold.
fn kernels() -> Vec<(&'static str, &'static tirx::Kernel, &'static [&'static str])> {
    vec![
        (
            "tmem_16x64b_roundtrip",
            &tmem_16x64b_roundtrip::KERNEL,
            &[
                "tcgen05.ld.sync.aligned.16x64b.x32.b32",
                "tcgen05.st.sync.aligned.16x64b.x32.b32",
            ],
        ),
        (
            "tmem_16x128b_roundtrip",
            &tmem_16x128b_roundtrip::KERNEL,
            &[
                "tcgen05.ld.sync.aligned.16x128b.x16.b32",
                "tcgen05.st.sync.aligned.16x128b.x16.b32",
            ],
        ),
        (
            "tmem_16x256b_roundtrip",
            &tmem_16x256b_roundtrip::KERNEL,
            &[
                "tcgen05.ld.sync.aligned.16x256b.x8.b32",
                "tcgen05.st.sync.aligned.16x256b.x8.b32",
            ],
        ),
        (
            "tmem_16x32bx2_roundtrip",
            &tmem_16x32bx2_roundtrip::KERNEL,
            &[
                "tcgen05.ld.sync.aligned.16x32bx2.x32.b32",
                "tcgen05.st.sync.aligned.16x32bx2.x32.b32",
            ],
        ),
        (
            "tmem_bf16_32x32b",
            &tmem_bf16_32x32b::KERNEL,
            &[
                "tcgen05.st.sync.aligned.32x32b.x32.b32",
                "tcgen05.ld.sync.aligned.32x32b.x32.b32",
                "tcgen05.st.sync.aligned.32x32b.x32.unpack::16b.b32",
                "tcgen05.ld.sync.aligned.32x32b.x32.pack::16b.b32",
            ],
        ),
        (
            "tmem_bf16_16x256b",
            &tmem_bf16_16x256b::KERNEL,
            &[
                "tcgen05.st.sync.aligned.16x128b.x8.b32",
                "tcgen05.st.sync.aligned.16x128b.x8.unpack::16b.b32",
                "tcgen05.ld.sync.aligned.16x128b.x8.pack::16b.b32",
            ],
        ),
        (
            "tmem_bf16_16x32bx2",
            &tmem_bf16_16x32bx2::KERNEL,
            &[
                "tcgen05.st.sync.aligned.16x32bx2.x16.b32",
                "tcgen05.st.sync.aligned.16x32bx2.x16.unpack::16b.b32",
                "tcgen05.ld.sync.aligned.16x32bx2.x16.pack::16b.b32",
            ],
        ),
        (
            "tmem_bf16_p_over_s",
            &tmem_bf16_p_over_s::KERNEL,
            &[
                "tcgen05.st.sync.aligned.16x128b.x8.b32",
                "tcgen05.ld.sync.aligned.16x128b.x8.b32",
            ],
        ),
    ]
}

#[test]
fn a_view_allocates_nothing_and_shares_its_base_s_slot() {
    let art = &tmem_bf16_p_over_s::KERNEL.artifacts[0];
    // One allocation (S's 64 columns), and the view's address read from S's slot.
    assert_eq!(art.ptx.matches("tcgen05.alloc").count(), 1, "{}", art.ptx);
    assert_eq!((art.signature)().tmem_cols, 64);
    // The view prints as `alias @s`, parses back, and recompiles to the same PTX.
    assert!(art.ir.contains("alias @s"), "{}", art.ir);
    let m = tirx_ir::parse::parse_module(art.ir).expect("parses");
    assert_eq!(m.to_string(), art.ir);
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, false).expect("compiles");
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}

#[test]
fn every_shape_and_packing_assembles_to_ldtm_and_sttm_without_spills() {
    for (name, k, forms) in kernels() {
        let art = &k.artifacts[0];
        for f in forms {
            assert!(art.ptx.contains(f), "{name}: no `{f}`");
        }
        if tool_for_test(find_ptxas()).is_none() {
            continue;
        }
        let c = check_artifact(name, art).expect("assembles");
        assert!(c.problems.is_empty(), "{name}: {:?}", c.problems);
        assert_eq!(c.spills, 0, "{name}");
        let has = |op: &str| c.sass.keys().any(|k| k.starts_with(op));
        assert!(has("LDTM") && has("STTM"), "{name}: {:?}", c.sass);
    }
}

#[test]
fn every_shape_and_packing_matches_the_reference_in_the_emulator() {
    let (m, n, k) = (128usize, 64usize, 64usize);
    let mut rng = Rng::new(91);
    let a = rng.bf16s(m * k);
    let b = rng.bf16s(n * k);
    for (name, kern, _) in kernels() {
        let art = &kern.artifacts[0];
        let bf16_regs = name.starts_with("tmem_bf16");
        let mut dev = Device::new();
        let ta = upload(&mut dev, &a, &[m, k]);
        let tb = upload(&mut dev, &b, &[n, k]);
        let td = upload(&mut dev, &[], &[m, n]);
        sim_launch(art, &mut dev, &[ta, tb, td.clone()], &[], 5)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = download(&dev, &td);
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|x| a[i * k + x].to_f64() * b[j * k + x].to_f64())
                    .sum();
                let want = 2.0 * dot + j as f64 + i as f64 * 0.25;
                let g = got[i * n + j].to_f64();
                // bf16 output (rounded once more in registers for the 16-bit tiles), plus
                // the f32 accumulation.
                let ulps = if bf16_regs { 2.0 } else { 1.0 };
                let tol = ulps * want.abs() * 2f64.powi(-8) + 1e-4 * (1.0 + dot.abs());
                assert!((g - want).abs() <= tol, "{name} ({i}, {j}): {g} vs {want}");
            }
        }
    }
}
