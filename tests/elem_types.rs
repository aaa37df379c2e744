//! Element types chosen per config, checked without a GPU: each GEMM config's signature takes
//! the types its name says, arguments of other types are refused by the launch plan (pure, so
//! no GPU needed) with a typed error naming the tensor, and the generated launchers are
//! generic over the config's type symbols.

use half::{bf16, f16};
use tirx::abi::ElemType;
use tirx::runtime::{DeviceLimits, TensorMeta, plan_launch};
use tirx::{Runtime, RuntimeError, Tensor};
use tirx_kernels::catalogue;
use tirx_kernels::gemm::host::{self as gemm_host, GemmLaunch};
use tirx_kernels::gemm::level_06_persistent::kernels::gemm_sm90_ws;
use tirx_kernels::gemm::level_08_tma_epi::kernels::gemm_sm90_tma_epi;
use tirx_kernels::gemm::request::GemmTypes;

/// Row-major metas of an M×N×K GEMM in `types`, at 1 MiB-aligned addresses.
fn args(types: GemmTypes, (m, n, k): (usize, usize, usize)) -> Vec<TensorMeta> {
    vec![
        TensorMeta::row_major(types.input, &[m, k], 0x10_0000),
        TensorMeta::row_major(types.input, &[n, k], 0x100_0000),
        TensorMeta::row_major(types.output, &[m, n], 0x200_0000),
    ]
}

/// Every shipped type combination has a host-side choice, in its types, that plans.
#[test]
fn every_type_combination_has_a_choice_that_plans() {
    use tirx::problem::{BLayout, Epilogue};
    use tirx_kernels::dispatch::Device;
    for types in GemmTypes::ALL {
        let shape = (4096, 4096, 4096);
        let c =
            gemm_host::choose_gemm_for(&Device::h200(), BLayout::Tn, Epilogue::Plain, types, shape)
                .unwrap_or_else(|e| panic!("{types}: {e}"));
        assert_eq!(
            GemmLaunch::of(c.kernel).types(c.artifact.config),
            Some(types)
        );
        let sig = (c.artifact.signature)();
        plan_launch(&sig, &args(types, shape), &DeviceLimits::HOPPER)
            .unwrap_or_else(|e| panic!("{}: {e}", c.label()));
    }
}

#[test]
fn a_tensor_of_another_type_is_a_typed_error_before_launch() {
    let k = catalogue::find("gemm_sm90_tma_epi").expect("shipped");
    let sig = |config: &str| {
        (k.artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("compiled")
            .signature)()
    };
    let limits = DeviceLimits::HOPPER;
    // bf16 inputs to the f16 config: refused at `a`.
    let err = plan_launch(&sig("f16"), &args(GemmTypes::BF16, (256, 256, 64)), &limits)
        .expect_err("refused");
    assert!(
        matches!(&err, RuntimeError::ElemMismatch { tensor, got: ElemType::Bf16, expected: ElemType::F16 } if tensor == "a"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "tensor `a` has element type bf16, but the kernel takes f16"
    );
    // Right inputs, a 16-bit D to an f32-output config: refused at `d`.
    let f16_in = GemmTypes {
        input: ElemType::F16,
        output: ElemType::F16,
    };
    let err =
        plan_launch(&sig("f16_f32"), &args(f16_in, (256, 256, 64)), &limits).expect_err("refused");
    assert!(
        matches!(&err, RuntimeError::ElemMismatch { tensor, got: ElemType::F16, expected: ElemType::F32 } if tensor == "d"),
        "{err:?}"
    );
}

/// An f32 D is TMA-stored in 128-byte rows of 32 elements: N a multiple of 4 plans, others
/// are refused (TMA needs 16-byte row strides), as for 16-bit D at N a multiple of 8.
#[test]
fn an_f32_d_needs_16_byte_rows() {
    let k = catalogue::find("gemm_sm90_tma_epi").expect("shipped");
    let art = k.artifacts.iter().find(|a| a.config == "bf16_f32").unwrap();
    let t = GemmTypes {
        input: ElemType::Bf16,
        output: ElemType::F32,
    };
    let limits = DeviceLimits::HOPPER;
    assert!(plan_launch(&(art.signature)(), &args(t, (300, 1004, 64)), &limits).is_ok());
    let err = plan_launch(&(art.signature)(), &args(t, (300, 1002, 64)), &limits).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::StrideMisaligned { tensor, .. } if tensor == "d"),
        "{err:?}"
    );
}

/// The generated launchers are generic over `TA` and `TD`: these are the instantiations a
/// user gets (checked by the compiler; the GPU tests run them).
#[test]
fn launchers_are_generic_over_the_config_types() {
    type Launch<A, D> =
        fn(&Runtime, &str, &Tensor<A>, &Tensor<A>, &mut Tensor<D>) -> Result<(), RuntimeError>;
    let _: Launch<f16, f32> = gemm_sm90_tma_epi::launch::<f16, f32>;
    let _: Launch<bf16, f16> = gemm_sm90_tma_epi::launch::<bf16, f16>;
    let _: Launch<f16, f16> = gemm_sm90_ws::launch::<f16, f16>;
    let _: Launch<bf16, bf16> = gemm_sm90_ws::launch;
}
