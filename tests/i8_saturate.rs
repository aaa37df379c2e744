//! `tcgen05::mma(..., saturate = true)`: `kind::i8` with the instruction descriptor's bit 3,
//! "Saturate for integer types" (PTX ISA §9.7.16.4.2, Table 42; "0 (NA)" for the float
//! kinds), so the s32 D clamps to [-2^31, 2^31 - 1] instead of wrapping. The bit in the
//! emitted descriptor, the result in the emulator (exact where nothing overflows; the clamp
//! itself is `tirx-sim`'s `kind_i8_saturates_with_bit_3_and_wraps_without_it`, on a D stored
//! near the maximum), and ptxas for sm_100a.

use tirx::prelude::*;
use tirx_kernels::check::check_artifact;
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{put, random_values};
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::sim_launch;

/// D = A·Bᵀ in s8 with a saturating s32 accumulator, i32 out.
#[tile_kernel(target = sm_100a, threads = 128, grid = (cdiv(M, 128), cdiv(N, 64)))]
pub fn i8_saturating(
    #[shape(M, K)] a: Tensor<i8>,
    #[shape(N, K)] b: Tensor<i8>,
    #[shape(M, N)] d: Tensor<i32>,
) {
    let a_s = smem::<i8>([128, 128], swizzle = B128);
    let b_s = smem::<i8>([64, 128], swizzle = B128);
    let acc = tmem::<i32>([128, 64]);
    let full = mbarrier();
    let done = mbarrier();
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::relinquish();
    }
    tcgen05::fence_before();
    sync_threads();
    tcgen05::fence_after();
    for k in 0..cdiv(K, 128) {
        #[scope(thread = 0)]
        {
            tma::load(a_s, a.tile(cta.x, k), full);
            tma::load(b_s, b.tile(cta.y, k), full);
        }
        full.wait(k % 2);
        #[scope(thread = 0)]
        {
            tcgen05::mma(acc, a_s, b_s, accumulate = k > 0, saturate = true);
            tcgen05::commit(done);
        }
        done.wait(k % 2);
    }
    tcgen05::fence_after();
    copy(d.tile(cta.x, cta.y), acc);
    tcgen05::fence_before();
    sync_threads();
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
    }
}

#[test]
fn saturate_sets_bit_3_of_the_kind_i8_descriptor() {
    let art = &i8_saturating::KERNEL.artifacts[0];
    // S32 2 << 4, S8 A 1 << 7, S8 B 1 << 10, N 64 >> 3 at 17, M 128 >> 4 at 24, and bit 3.
    let idesc = (2u32 << 4) | (1 << 7) | (1 << 10) | (8 << 17) | (8 << 24) | (1 << 3);
    assert!(
        art.ptx.contains(&format!("{idesc};")),
        "no idesc {idesc:#x}"
    );
    assert!(art.ir.contains(" saturate"), "{}", art.ir);
}

#[test]
fn the_saturating_int8_gemm_matches_the_exact_reference_in_the_emulator() {
    use tirx::abi::ElemType::{I8, I32};
    let (m, n, k) = (128, 64, 256);
    let mut rng = Rng::new(21);
    let (ab, av) = random_values(&mut rng, I8, m * k);
    let (bb, bv) = random_values(&mut rng, I8, n * k);
    let mut dev = Device::new();
    let tam = put(&mut dev, &ab, I8, &[m, k]);
    let tbm = put(&mut dev, &bb, I8, &[n, k]);
    let td = put(&mut dev, &vec![0x5a; m * n * 4], I32, &[m, n]);
    sim_launch(
        &i8_saturating::KERNEL.artifacts[0],
        &mut dev,
        &[tam, tbm, td.clone()],
        &[],
        4,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<i32> = dev
        .read(td.addr, m * n * 4)
        .expect("D")
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|q| av[i * k + q] * bv[j * k + q]).sum();
            assert_eq!(f64::from(got[i * n + j]), want, "D[{i}][{j}]");
        }
    }
}

#[test]
fn the_saturating_int8_gemm_assembles_with_the_tensor_core_mma() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let c =
        check_artifact("i8_saturating", &i8_saturating::KERNEL.artifacts[0]).expect("assembles");
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.spills, 0);
    assert_eq!(c.sass.get("UTCIMMA").copied(), Some(4), "{:?}", c.sass);
}

/// The text form carries `saturate`: the IR parses back and recompiles to the same PTX.
#[test]
fn saturate_round_trips_through_the_text_form() {
    use tirx_ir::parse::parse_module;
    let art = &i8_saturating::KERNEL.artifacts[0];
    let m = parse_module(art.ir).expect("parses");
    assert_eq!(m.to_string(), art.ir);
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}
