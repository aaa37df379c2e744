//! Tests of [`plan_launch`]: one correct plan per kernel style, then every error it returns.
//! Signatures are written by hand, as the compiler would emit them.

use tirx_ir::abi::{
    AbiParam, CmpOp, ElemType, ShapeCheck, Signature, Swizzle, SymExpr, Target, TensorDecl,
};

use super::*;
use crate::error::TmaReason;

fn sym(s: &str) -> SymExpr {
    SymExpr::Sym(s.into())
}

fn cdiv(a: SymExpr, b: u64) -> SymExpr {
    SymExpr::CeilDiv(Box::new(a), Box::new(SymExpr::Const(b)))
}

fn decl(name: &str, elem: ElemType, shape: &[&str]) -> TensorDecl {
    TensorDecl {
        name: name.into(),
        elem,
        shape: shape.iter().map(|s| s.to_string()).collect(),
    }
}

fn tmap(tensor: &str, box_dims: &[u32], swizzle: Swizzle) -> AbiParam {
    AbiParam::TensorMap {
        tensor: tensor.into(),
        box_dims: box_dims.to_vec(),
        swizzle,
    }
}

fn dim(symbol: &str) -> AbiParam {
    AbiParam::Dim {
        symbol: symbol.into(),
    }
}

/// A Hopper TMA GEMM: d[M, N] = a[M, K] · b[N, K]ᵀ, 128×256 tiles, clusters of 2 along x.
fn gemm() -> Signature {
    Signature {
        entry: "gemm_bf16_default_sm_90a".into(),
        target: Target::Sm90a,
        tensors: vec![
            decl("a", ElemType::Bf16, &["M", "K"]),
            decl("b", ElemType::Bf16, &["N", "K"]),
            decl("d", ElemType::Bf16, &["M", "N"]),
        ],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![
            tmap("a", &[64, 128], Swizzle::B128),
            tmap("b", &[64, 256], Swizzle::B128),
            tmap("d", &[64, 32], Swizzle::B128),
            dim("M"),
            dim("N"),
            dim("K"),
        ],
        threads: 384,
        cluster: [2, 1, 1],
        grid: [cdiv(sym("N"), 256), cdiv(sym("M"), 128), SymExpr::Const(1)],
        checks: Vec::new(),
        smem_bytes: 200 * 1024,
        tmem_cols: 0,
    }
}

/// A naive kernel: pointers, strides and dims, no TMA.
fn naive() -> Signature {
    Signature {
        entry: "add_default_sm_90a".into(),
        target: Target::Sm90a,
        tensors: vec![
            decl("x", ElemType::F32, &["R", "C"]),
            decl("y", ElemType::F32, &["R", "C"]),
        ],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![
            AbiParam::Pointer { tensor: "x".into() },
            AbiParam::Stride {
                tensor: "x".into(),
                dim: 0,
            },
            AbiParam::Pointer { tensor: "y".into() },
            AbiParam::Stride {
                tensor: "y".into(),
                dim: 0,
            },
            dim("R"),
            dim("C"),
        ],
        threads: 256,
        cluster: [1, 1, 1],
        grid: [
            SymExpr::Mul(Box::new(sym("R")), Box::new(cdiv(sym("C"), 256))),
            SymExpr::Const(1),
            SymExpr::Const(1),
        ],
        checks: Vec::new(),
        smem_bytes: 0,
        tmem_cols: 0,
    }
}

fn bf16(shape: &[usize], addr: u64) -> TensorMeta {
    TensorMeta::row_major(ElemType::Bf16, shape, addr)
}

fn f32(shape: &[usize], addr: u64) -> TensorMeta {
    TensorMeta::row_major(ElemType::F32, shape, addr)
}

/// Arguments for a 1024 × 2048 × 512 GEMM at 1 MiB-aligned addresses.
fn gemm_args() -> Vec<TensorMeta> {
    vec![
        bf16(&[1024, 512], 0x10_0000),
        bf16(&[2048, 512], 0x20_0000),
        bf16(&[1024, 2048], 0x40_0000),
    ]
}

fn plan(sig: &Signature, args: &[TensorMeta]) -> Result<LaunchPlan, RuntimeError> {
    plan_launch(sig, args, &DeviceLimits::HOPPER)
}

#[test]
fn plans_a_tma_gemm() {
    let p = plan(&gemm(), &gemm_args()).unwrap();
    assert_eq!(p.grid, [8, 8, 1]);
    assert_eq!(p.block, [384, 1, 1]);
    assert_eq!(p.cluster, [2, 1, 1]);
    assert_eq!(p.smem_bytes, 200 * 1024);
    let syms: Vec<(&str, u64)> = p.symbols.iter().map(|(s, v)| (s.as_str(), *v)).collect();
    assert_eq!(syms, vec![("M", 1024), ("K", 512), ("N", 2048)]);
    assert_eq!(
        p.params,
        vec![
            PlannedParam::TensorMap {
                tensor: 0,
                box_dims: vec![64, 128],
                swizzle: Swizzle::B128
            },
            PlannedParam::TensorMap {
                tensor: 1,
                box_dims: vec![64, 256],
                swizzle: Swizzle::B128
            },
            PlannedParam::TensorMap {
                tensor: 2,
                box_dims: vec![64, 32],
                swizzle: Swizzle::B128
            },
            PlannedParam::Dim(1024),
            PlannedParam::Dim(2048),
            PlannedParam::Dim(512),
        ]
    );
    assert_eq!(p.param_offsets, vec![0, 128, 256, 384, 388, 392]);
    assert_eq!(p.param_bytes, 396);
}

#[test]
fn plans_a_pointer_kernel_with_padded_rows() {
    // Rows padded to 1001 floats: fine without TMA (only element alignment is needed).
    let mut x = f32(&[3, 1000], 0x1000);
    x.strides = vec![1001, 1];
    let y = f32(&[3, 1000], 0x9004);
    let p = plan(&naive(), &[x, y]).unwrap();
    assert_eq!(p.grid, [12, 1, 1]);
    assert_eq!(
        p.params,
        vec![
            PlannedParam::Pointer(0x1000),
            PlannedParam::Stride(1001),
            PlannedParam::Pointer(0x9004),
            PlannedParam::Stride(1000),
            PlannedParam::Dim(3),
            PlannedParam::Dim(1000),
        ]
    );
    assert_eq!(p.param_offsets, vec![0, 8, 16, 24, 32, 36]);
    assert_eq!(p.param_bytes, 40);
}

#[test]
fn literal_shapes_are_fixed_extents() {
    let mut sig = naive();
    sig.tensors[1].shape[1] = "1000".into();
    plan(&sig, &[f32(&[3, 1000], 0), f32(&[3, 1000], 0x4000)]).unwrap();
    let err = plan(&sig, &[f32(&[3, 999], 0), f32(&[3, 999], 0x4000)]).unwrap_err();
    assert!(matches!(
        &err,
        RuntimeError::FixedExtent { tensor, dim: 1, expected: 1000, got: 999 } if tensor == "y"
    ));
    assert_eq!(
        err.to_string(),
        "tensor `y` dim 1 is 999, but the kernel fixes it at 1000"
    );
}

/// `C % 64 == 0` and `R * 2 == C - 0` (a kernel's `static_assert`s over shape symbols).
fn asserted() -> Signature {
    let b = Box::new;
    let mut sig = naive();
    sig.checks = vec![
        ShapeCheck {
            text: "C % 64 == 0".into(),
            lhs: SymExpr::Rem(b(sym("C")), b(SymExpr::Const(64))),
            op: CmpOp::Eq,
            rhs: SymExpr::Const(0),
        },
        ShapeCheck {
            text: "R * 2 == C - 0".into(),
            lhs: SymExpr::Mul(b(sym("R")), b(SymExpr::Const(2))),
            op: CmpOp::Eq,
            rhs: SymExpr::Sub(b(sym("C")), b(SymExpr::Const(0))),
        },
        ShapeCheck {
            text: "R - 64 >= 0".into(),
            lhs: SymExpr::Sub(b(sym("R")), b(SymExpr::Const(64))),
            op: CmpOp::Ge,
            rhs: SymExpr::Const(0),
        },
    ];
    sig
}

#[test]
fn shape_checks_hold_or_name_the_assertion() {
    let sig = asserted();
    plan(&sig, &[f32(&[64, 128], 0), f32(&[64, 128], 0x8000)]).unwrap();
    let err = plan(&sig, &[f32(&[48, 96], 0), f32(&[48, 96], 0x8000)]).unwrap_err();
    assert!(matches!(
        &err,
        RuntimeError::ShapeAssert { assertion, values, .. }
            if assertion == "C % 64 == 0" && values == "C = 96"
    ));
    assert_eq!(
        err.to_string(),
        "`add_default_sm_90a` needs `C % 64 == 0`, which does not hold with C = 96"
    );
    let err = plan(&sig, &[f32(&[65, 128], 0), f32(&[65, 128], 0x8000)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`add_default_sm_90a` needs `R * 2 == C - 0`, which does not hold with R = 65, C = 128"
    );
    // `R - 64` is negative: the check cannot be evaluated, which fails it.
    let err = plan(&sig, &[f32(&[32, 64], 0), f32(&[32, 64], 0x8000)]).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::ShapeAssert { assertion, .. } if assertion == "R - 64 >= 0"),
        "{err}"
    );
    assert!(err.to_string().contains("cannot be evaluated"), "{err}");
}

#[test]
fn arg_count() {
    let err = plan(&gemm(), &gemm_args()[..2]).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::ArgCount {
            got: 2,
            expected: 3,
            ..
        }
    ));
    assert_eq!(
        err.to_string(),
        "`gemm_bf16_default_sm_90a` takes 3 tensor(s) (a, b, d), but 2 were passed"
    );
}

#[test]
fn elem_mismatch() {
    let mut args = gemm_args();
    args[1].elem = ElemType::F16;
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(matches!(
        &err,
        RuntimeError::ElemMismatch { tensor, got: ElemType::F16, expected: ElemType::Bf16 } if tensor == "b"
    ));
    assert_eq!(
        err.to_string(),
        "tensor `b` has element type f16, but the kernel takes bf16"
    );
}

#[test]
fn rank_mismatch() {
    let mut args = gemm_args();
    args[0] = bf16(&[8, 1024, 512], 0x10_0000);
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::RankMismatch {
            got: 3,
            expected: 2,
            ..
        }
    ));
    assert_eq!(
        err.to_string(),
        "tensor `a` has rank 3, but the kernel takes rank 2 ([M, K])"
    );
}

#[test]
fn shape_mismatch_names_tensor_dim_symbol_and_origin() {
    let mut args = gemm_args();
    args[2] = bf16(&[1000, 2048], 0x40_0000);
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(matches!(
        &err,
        RuntimeError::ShapeMismatch { tensor, dim: 0, symbol, got: 1000, expected: 1024, .. }
            if tensor == "d" && symbol == "M"
    ));
    assert_eq!(
        err.to_string(),
        "tensor `d` dim 0 (`M`) is 1000, but `M` = 1024 (from `a` dim 0)"
    );
    // K of b disagrees with K of a.
    let mut args = gemm_args();
    args[1] = bf16(&[2048, 256], 0x20_0000);
    let err = plan(&gemm(), &args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tensor `b` dim 1 (`K`) is 256, but `K` = 512 (from `a` dim 1)"
    );
}

#[test]
fn empty_problem() {
    let mut args = gemm_args();
    args[0] = bf16(&[0, 512], 0x10_0000);
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::EmptyProblem { tensor, dim: 0, symbol } if tensor == "a" && symbol == "M")
    );
    assert_eq!(
        err.to_string(),
        "tensor `a` dim 0 (`M`) is 0: empty problem"
    );
}

#[test]
fn not_contiguous() {
    let mut args = gemm_args();
    args[1].strides = vec![1, 2048];
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(matches!(&err, RuntimeError::NotContiguous { tensor, stride: 2048 } if tensor == "b"));
    // Also without TMA.
    let mut x = f32(&[3, 1000], 0);
    x.strides = vec![1, 3];
    assert!(matches!(
        plan(&naive(), &[x, f32(&[3, 1000], 0)]),
        Err(RuntimeError::NotContiguous { .. })
    ));
}

#[test]
fn stride_misaligned_for_tma() {
    // K = 500 bf16 = 1000-byte rows: not a multiple of 16.
    let args = vec![
        bf16(&[1024, 500], 0x10_0000),
        bf16(&[2048, 500], 0x20_0000),
        bf16(&[1024, 2048], 0x40_0000),
    ];
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::StrideMisaligned { tensor, dim: 0, stride_bytes: 1000 } if tensor == "a")
    );
    // Padding the rows to 504 elements (1008 bytes) fixes it.
    let mut args = args;
    args[0].strides = vec![504, 1];
    args[1].strides = vec![504, 1];
    plan(&gemm(), &args).unwrap();
}

#[test]
fn base_misaligned() {
    let mut args = gemm_args();
    args[2].addr += 2; // element-aligned, not 16-byte aligned
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::BaseMisaligned { tensor, align: 16, .. } if tensor == "d")
    );
    assert_eq!(
        err.to_string(),
        "tensor `d` starts at 0x400002, which is not 16-byte aligned"
    );
    // Without TMA only the element size matters.
    let err = plan(&naive(), &[f32(&[3, 1000], 0x1002), f32(&[3, 1000], 0)]).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::BaseMisaligned {
            align: 4,
            addr: 0x1002,
            ..
        }
    ));
}

#[test]
fn tma_box_errors_name_the_tensor() {
    let mut sig = gemm();
    sig.params[1] = tmap("b", &[128, 256], Swizzle::B128);
    let err = plan(&sig, &gemm_args()).unwrap_err();
    assert!(matches!(
        &err,
        RuntimeError::TmaBox { tensor, reason: TmaReason::InnerBoxExceedsSwizzle { bytes: 256, .. } } if tensor == "b"
    ));
    sig.params[1] = tmap("b", &[64, 512], Swizzle::B128);
    let err = plan(&sig, &gemm_args()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "TMA descriptor for tensor `b`: box dim 1 (innermost = 0) is 512; it must be in 1..=256"
    );
}

#[test]
fn smem_too_large() {
    let mut sig = gemm();
    sig.smem_bytes = 228 * 1024;
    let err = plan(&sig, &gemm_args()).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::SmemTooLarge {
            need: 233472,
            limit: 232448
        }
    ));
    assert_eq!(
        err.to_string(),
        "the kernel needs 233472 bytes of dynamic shared memory; the device allows 232448 per block"
    );
}

#[test]
fn too_many_threads() {
    let mut sig = gemm();
    sig.threads = 1056;
    assert!(matches!(
        plan(&sig, &gemm_args()),
        Err(RuntimeError::TooManyThreads {
            threads: 1056,
            limit: 1024
        })
    ));
}

#[test]
fn cluster_must_divide_grid() {
    // N = 2304 → 9 CTAs along x, clusters of 2.
    let args = vec![
        bf16(&[1024, 512], 0x10_0000),
        bf16(&[2304, 512], 0x20_0000),
        bf16(&[1024, 2304], 0x40_0000),
    ];
    let err = plan(&gemm(), &args).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::ClusterDoesNotDivideGrid {
            grid: [9, 8, 1],
            cluster: [2, 1, 1],
            dim: 0
        }
    ));
    assert_eq!(
        err.to_string(),
        "cluster [2, 1, 1] does not divide grid [9, 8, 1] in dim 0"
    );
}

/// A persistent grid takes the device's SM count: whole clusters of it, and an odd count
/// with a grid of exactly `SMS` and clusters of 2 is refused before launch.
#[test]
fn the_grid_reads_the_sm_count() {
    let div = |a: SymExpr, b: u64| SymExpr::Div(Box::new(a), Box::new(SymExpr::Const(b)));
    let mul = |a: SymExpr, b: u64| SymExpr::Mul(Box::new(a), Box::new(SymExpr::Const(b)));
    let mut sig = gemm();
    sig.grid = [
        mul(div(SymExpr::Sms, 2), 2),
        SymExpr::Const(1),
        SymExpr::Const(1),
    ];
    for (sms, grid) in [(132, 132), (114, 114), (133, 132)] {
        let limits = DeviceLimits {
            sm_count: sms,
            ..DeviceLimits::HOPPER
        };
        let p = plan_launch(&sig, &gemm_args(), &limits).unwrap();
        assert_eq!(p.grid, [grid, 1, 1], "{sms} SMs");
    }
    sig.grid[0] = SymExpr::Sms;
    let limits = DeviceLimits {
        sm_count: 133,
        ..DeviceLimits::HOPPER
    };
    assert!(matches!(
        plan_launch(&sig, &gemm_args(), &limits),
        Err(RuntimeError::ClusterDoesNotDivideGrid {
            grid: [133, 1, 1],
            ..
        })
    ));
}

#[test]
fn cluster_too_large() {
    let mut sig = gemm();
    sig.cluster = [4, 4, 1];
    let err = plan(&sig, &gemm_args()).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::ClusterTooLarge {
            size: 16,
            limit: 8,
            ..
        }
    ));
}

#[test]
fn empty_and_oversized_grids() {
    let mut sig = naive();
    sig.grid[2] = SymExpr::Const(0);
    let args = [f32(&[3, 1000], 0), f32(&[3, 1000], 0)];
    assert!(matches!(
        plan(&sig, &args),
        Err(RuntimeError::EmptyGrid { grid: [12, 1, 0] })
    ));
    sig.grid[2] = SymExpr::Const(1);
    sig.grid[1] = sym("C");
    let args = [f32(&[1, 70000], 0), f32(&[1, 70000], 0)];
    let err = plan(&sig, &args).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::GridTooLarge {
            dim: 1,
            value: 70000,
            limit: 65535
        }
    ));
}

#[test]
fn dim_too_large_for_u32() {
    let args = [f32(&[1 << 32, 1], 0), f32(&[1 << 32, 1], 0)];
    let mut sig = naive();
    sig.grid[0] = SymExpr::Const(1);
    let err = plan(&sig, &args).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::DimTooLarge { symbol, value } if symbol == "R" && *value == 1 << 32)
    );
}

#[test]
fn bad_signatures_are_errors_not_panics() {
    let args = [f32(&[3, 1000], 0), f32(&[3, 1000], 0)];
    let reason = |sig: &Signature| match plan(sig, &args) {
        Err(RuntimeError::BadSignature { reason, .. }) => reason,
        other => panic!("expected BadSignature, got {other:?}"),
    };
    let mut sig = naive();
    sig.params.push(AbiParam::Pointer { tensor: "z".into() });
    assert!(reason(&sig).contains("tensor `z`"));
    let mut sig = naive();
    sig.params.push(AbiParam::Stride {
        tensor: "x".into(),
        dim: 2,
    });
    assert!(reason(&sig).contains("dim 2"));
    let mut sig = naive();
    sig.params.push(dim("Q"));
    assert!(reason(&sig).contains("`Q`"));
    let mut sig = naive();
    sig.grid[1] = sym("Q");
    assert!(reason(&sig).contains("`Q`"));
    let mut sig = naive();
    sig.grid[1] = SymExpr::CeilDiv(Box::new(sym("R")), Box::new(SymExpr::Const(0)));
    assert!(reason(&sig).contains("divides by zero"));
    let mut sig = naive();
    sig.cluster = [1, 0, 1];
    assert!(reason(&sig).contains("zero dimension"));
    let mut sig = naive();
    sig.threads = 0;
    assert!(reason(&sig).contains("0 threads"));
}

#[test]
fn row_major_strides_are_outermost_first() {
    assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
    assert_eq!(row_major_strides(&[5]), vec![1]);
    assert_eq!(row_major_strides(&[]), Vec::<usize>::new());
}

#[test]
fn scalar_arguments_are_counted_and_placed() {
    let mut sig = gemm();
    sig.scalars = vec!["alpha".into(), "beta".into()];
    sig.params.push(AbiParam::Scalar {
        name: "beta".into(),
    });
    let limits = DeviceLimits::HOPPER;
    match plan_launch_with(&sig, &gemm_args(), &[1.0], &limits) {
        Err(RuntimeError::ScalarCount {
            got: 1,
            expected: 2,
            names,
            ..
        }) => assert_eq!(names, "alpha, beta"),
        other => panic!("{other:?}"),
    }
    let p = plan_launch_with(&sig, &gemm_args(), &[2.0, -0.5], &limits).unwrap();
    assert_eq!(
        p.params.last(),
        Some(&PlannedParam::Scalar((-0.5f32).to_bits()))
    );
    // The kernel without scalars: `plan_launch` passes none.
    assert!(plan_launch(&gemm(), &gemm_args(), &limits).is_ok());
}
