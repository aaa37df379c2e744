//! Two small kernels that use wgmma's RS form (A from registers), built with the same macro
//! as every shipped kernel: ptxas must assemble them with the tensor-core instruction in their
//! SASS here, and `gpu_rs` runs them against the f64 reference on the H200.

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_ptx::tools::{find_ptxas, tool_for_test};

/// D = A·Bᵀ with A [M, 64] through registers.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn rs_gemm(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let a_r = regs::<bf16>([64, 64]);
    let acc = regs::<f32>([64, 64]);
    #[scope(thread = 0)]
    {
        tma::load(b_s, b.tile(cta.x, 0), bar);
    }
    copy(a_r, a.tile(cta.y, 0));
    bar.wait(0);
    wgmma::fence();
    wgmma::mma(acc, a_r, b_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
    copy(d.tile(cta.y, cta.x), acc);
}

/// O = bf16(Q·Kᵀ)·Vᵀ: the first product from shared memory, the second with its A (the
/// converted first accumulator) from registers.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, cdiv(M, 64)))]
pub fn rs_chain(
    #[shape(M, K)] q: Tensor<bf16>,
    #[shape(J, K)] k: Tensor<bf16>,
    #[shape(N, J)] v: Tensor<bf16>,
    #[shape(M, N)] o: Tensor<bf16>,
) {
    let q_s = smem::<bf16>([64, 64], swizzle = B128);
    let k_s = smem::<bf16>([64, 64], swizzle = B128);
    let v_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let s = regs::<f32>([64, 64]);
    let o_acc = regs::<f32>([64, 64]);
    #[scope(thread = 0)]
    {
        tma::load(q_s, q.tile(cta.y, 0), bar);
        tma::load(k_s, k.tile(0, 0), bar);
        tma::load(v_s, v.tile(0, 0), bar);
    }
    bar.wait(0);
    wgmma::fence();
    wgmma::mma(s, q_s, k_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
    let p = cast::<bf16>(s);
    wgmma::fence();
    wgmma::mma(o_acc, p, v_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
    copy(o.tile(cta.y, 0), o_acc);
}

#[test]
fn the_rs_kernels_assemble_with_hgmma_and_no_spills() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [&rs_gemm::KERNEL, &rs_chain::KERNEL] {
        for a in k.artifacts {
            assert!(
                a.ptx.contains("}, {%r"),
                "{}: the A operand is not a register vector",
                k.name
            );
            let c = check_artifact(k.name, a).expect("assembles");
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
            assert!(
                c.sass.contains_key("HGMMA"),
                "{}: {:?}",
                k.name,
                c.sass.keys()
            );
        }
    }
}

/// `p = cast::<bf16>(s)`, used only by the RS product, is held packed: one
/// `cvt.rn.bf16x2.f32` per pair and the words go to the wgmma as they are (no 16-bit
/// registers, no packing moves). `a_r`, loaded by a copy, is held one element per register
/// and packed into words at the MMA.
#[test]
fn a_16_bit_tile_used_only_by_compute_and_the_mma_is_packed() {
    let chain = rs_chain::KERNEL.artifacts[0].ptx;
    // P is 64×64 over 128 threads: 32 elements, 16 words per thread, rounded before the
    // second product.
    let second = chain
        .match_indices("wgmma.mma_async")
        .nth(4)
        .expect("8 MMAs")
        .0;
    let packs = chain[..second].matches("cvt.rn.bf16x2.f32").count();
    assert_eq!(packs, 16, "rs_chain: P's pairs rounded by one cvt each");
    assert!(
        !chain.contains(", {%h") && !chain[..second].contains("cvt.rn.bf16.f32"),
        "rs_chain: P went through 16-bit registers"
    );
    let gemm = rs_gemm::KERNEL.artifacts[0].ptx;
    assert!(
        gemm.contains(".reg .b16") && gemm.contains("mov.b32 %r") && gemm.contains(", {%h"),
        "rs_gemm: a copied tile is one element per register, packed at the MMA"
    );
}
