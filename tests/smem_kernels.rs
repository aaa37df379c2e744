//! Kernels that move register tiles through shared memory, built with the same macro as every
//! shipped kernel: the generic `ld/st.shared` path (swizzled and not, widening and rounding,
//! re-laid-out between threads), `ldmatrix` / `stmatrix` for the wgmma fragment (row-major
//! and TMA column chunks), and `ldmatrix` feeding wgmma's RS form. ptxas must assemble them
//! with the intended SASS; `gpu_smem` runs them on the H200 against exact references.

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_ptx::tools::{find_ptxas, tool_for_test};

/// z = f32(x)·2 + 1 through an f32 shared tile written by one layout and read by another;
/// y = x through `ldmatrix` of the TMA tile.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn smem_moves(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    #[shape(M, N)] z: Tensor<f32>,
) {
    let xs = smem::<bf16>([64, 64], swizzle = B128);
    let ws = smem::<f32>([64, 64]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(xs, x.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    let t = regs::<f32>([64, 64], layout = blocked(vec = 8));
    copy(t, xs);
    copy(ws, t * 2.0 + 1.0);
    sync_threads();
    let u = regs::<f32>([64, 64], layout = blocked(vec = 2));
    copy(u, ws);
    copy(z.tile(cta.y, cta.x), u);
    let p = regs::<bf16>([64, 64]);
    copy(p, xs);
    copy(y.tile(cta.y, cta.x), p);
}

/// On a [64, 128] tile held as two TMA column chunks: y = bf16(x / 2) through an f32
/// fragment read by the generic path, rounded by `stmatrix`, read back by `ldmatrix`; z = x
/// through `ldmatrix` of the swizzled chunks, `stmatrix` of the bf16 fragment and a blocked
/// `ld.shared`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 128), cdiv(M, 64)))]
pub fn smem_matrix(
    #[shape(M, N)] x: Tensor<bf16>,
    #[shape(M, N)] y: Tensor<bf16>,
    #[shape(M, N)] z: Tensor<bf16>,
) {
    let xs = smem::<bf16>([2, 64, 64], swizzle = B128);
    let os = smem::<bf16>([64, 128]);
    let ps = smem::<bf16>([64, 128]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(xs[0], x.tile(cta.y, 2 * cta.x), bar);
        tma::load(xs[1], x.tile(cta.y, 2 * cta.x + 1), bar);
    }
    bar.wait(0);
    let a = regs::<f32>([64, 128]);
    copy(a, xs);
    copy(os, a * 0.5);
    let p = regs::<bf16>([64, 128]);
    copy(p, xs);
    copy(ps, p);
    sync_threads();
    let q = regs::<bf16>([64, 128]);
    copy(q, os);
    copy(y.tile(cta.y, cta.x), q);
    let r = regs::<f32>([64, 128], layout = blocked(vec = 8));
    copy(r, ps);
    copy(z.tile(cta.y, cta.x), r);
}

/// D = A·Bᵀ with A loaded by TMA and moved into the RS operand by `ldmatrix`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn rs_ldmatrix(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let a_r = regs::<bf16>([64, 64]);
    let acc = regs::<f32>([64, 64]);
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.y, 0), bar);
        tma::load(b_s, b.tile(cta.x, 0), bar);
    }
    bar.wait(0);
    copy(a_r, a_s);
    wgmma::fence();
    wgmma::mma(acc, a_r, b_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
    copy(d.tile(cta.y, cta.x), acc);
}

/// Every kernel here: its PTX holds the moves' instructions, ptxas assembles it with no
/// spills, and the SASS has the shared-memory matrix and vector instructions.
#[test]
fn the_shared_moves_lower_to_vector_and_matrix_instructions() {
    let want: [(&tirx::Kernel, &[&str], &[&str]); 3] = [
        (
            &smem_moves::KERNEL,
            &[
                "ld.shared.v4.b32",
                "st.shared.v4.f32",
                "ld.shared.v2.f32",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            ],
            &["LDSM.16.M88.4", "STS.128", "LDS.64"],
        ),
        (
            &smem_matrix::KERNEL,
            &[
                "ld.shared.b32",
                "stmatrix.sync.aligned.m8n8.x4.shared.b16",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                "cvt.rn.bf16x2.f32",
                "ld.shared.v4.b32",
            ],
            &["STSM.16.M88.4", "LDSM.16.M88.4", "LDS.128"],
        ),
        (
            &rs_ldmatrix::KERNEL,
            &["ldmatrix.sync.aligned.m8n8.x4.shared.b16", "}, {%r"],
            &["LDSM.16.M88.4", "HGMMA"],
        ),
    ];
    for (k, ptx, sass) in want {
        for a in k.artifacts {
            for p in ptx {
                assert!(a.ptx.contains(p), "{}: no `{p}` in the PTX", k.name);
            }
            if tool_for_test(find_ptxas()).is_none() {
                continue;
            }
            let c = check_artifact(k.name, a).expect("assembles");
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
            let ops: Vec<&String> = c.sass.keys().collect();
            for s in sass {
                assert!(
                    c.sass.keys().any(|m| m.starts_with(s)),
                    "{}: no {s} in the SASS: {ops:?}",
                    k.name
                );
            }
        }
    }
}
