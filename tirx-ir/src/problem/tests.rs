//! Deriving a problem from a signature: each kind's roles, and the messages for what is missing.

use super::*;
use crate::abi::{ElemType, SymExpr, Target};

fn tensor(name: &str, elem: ElemType, shape: &[&str]) -> TensorDecl {
    TensorDecl {
        name: name.into(),
        elem,
        shape: shape.iter().map(|s| s.to_string()).collect(),
    }
}

fn sig(tensors: Vec<TensorDecl>, scalars: &[&str]) -> Signature {
    Signature {
        entry: "k".into(),
        target: Target::Sm90a,
        tensors,
        scalars: scalars.iter().map(|s| s.to_string()).collect(),
        scalar_types: Vec::new(),
        params: Vec::new(),
        threads: 128,
        cluster: [1, 1, 1],
        grid: [SymExpr::Const(1), SymExpr::Const(1), SymExpr::Const(1)],
        checks: Vec::new(),
        smem_bytes: 0,
        tmem_cols: 0,
    }
}

use ElemType::{Bf16, F32};

#[test]
fn a_gemm_is_tn_or_nn_by_bs_shape_and_scaled_by_c_alpha_beta() {
    let tn = sig(
        vec![
            tensor("a", Bf16, &["M", "K"]),
            tensor("b", Bf16, &["N", "K"]),
            tensor("d", F32, &["M", "N"]),
        ],
        &[],
    );
    let want = |b, epilogue| Ok(Problem::Gemm(GemmProblem { b, epilogue }));
    assert_eq!(
        ProblemKind::Gemm.derive(&tn),
        want(BLayout::Tn, Epilogue::Plain)
    );
    let mut nn = tn.clone();
    nn.tensors[1].shape = vec!["K".into(), "N".into()];
    assert_eq!(
        ProblemKind::Gemm.derive(&nn),
        want(BLayout::Nn, Epilogue::Plain)
    );
    let mut scaled = nn.clone();
    scaled.tensors.insert(2, tensor("c", F32, &["M", "N"]));
    scaled.scalars = vec!["alpha".into(), "beta".into()];
    assert_eq!(
        ProblemKind::Gemm.derive(&scaled),
        want(BLayout::Nn, Epilogue::Scaled)
    );
    assert_eq!(
        Problem::Gemm(GemmProblem {
            b: BLayout::Nn,
            epilogue: Epilogue::Scaled
        })
        .to_string(),
        "gemm(b = nn, epilogue = scaled)"
    );
}

#[test]
fn a_gemm_signature_that_does_not_fit_says_why() {
    let base = || {
        sig(
            vec![
                tensor("a", Bf16, &["M", "K"]),
                tensor("b", Bf16, &["N", "K"]),
                tensor("d", Bf16, &["M", "N"]),
            ],
            &[],
        )
    };
    let err = |s: Signature| ProblemKind::Gemm.derive(&s).unwrap_err();
    let mut no_d = base();
    no_d.tensors.pop();
    assert!(err(no_d).contains("needs a tensor `d`"));
    let mut wrong_b = base();
    wrong_b.tensors[1].shape = vec!["N".into(), "M".into()];
    assert!(err(wrong_b).contains("must be [N, K] (B given N×K) or [K, N]"));
    let mut mixed = base();
    mixed.tensors[1].elem = F32;
    assert!(err(mixed).contains("`a` holds bf16 but `b` holds f32"));
    let mut only_alpha = base();
    only_alpha.scalars = vec!["alpha".into()];
    assert!(err(only_alpha).contains("exactly the scalars `alpha` and `beta`"));
    let mut bad_c = base();
    bad_c.tensors.push(tensor("c", F32, &["M", "N"]));
    bad_c.scalars = vec!["alpha".into(), "beta".into()];
    assert!(err(bad_c).contains("`c` must have D's shape and element type"));
    let mut rows = base();
    rows.tensors[2].shape = vec!["P".into(), "N".into()];
    assert!(err(rows).contains("D's rows are A's rows"));
}

#[test]
fn a_row_op_may_take_xs_flat_view_of_its_element_type() {
    let softmax = ProblemKind::Row(RowOp::Softmax);
    let with = |f: TensorDecl| {
        sig(
            vec![
                tensor("x", Bf16, &["M", "N"]),
                f,
                tensor("y", Bf16, &["M", "N"]),
            ],
            &[],
        )
    };
    assert_eq!(
        softmax.derive(&with(tensor("xf", Bf16, &["L"]))),
        Ok(Problem::Row(RowOp::Softmax))
    );
    for bad in [tensor("xf", F32, &["L"]), tensor("xf", Bf16, &["M", "N"])] {
        let e = softmax.derive(&with(bad)).unwrap_err();
        assert!(e.contains("`xf` is `x`'s flat view"), "{e}");
    }
    let e = softmax
        .derive(&with(tensor("z", Bf16, &["L"])))
        .unwrap_err();
    assert!(e.contains("this kernel has more tensors"), "{e}");
}

#[test]
fn a_copy_needs_src_and_dst_alike() {
    let ok = sig(
        vec![
            tensor("src", Bf16, &["M", "N"]),
            tensor("dst", Bf16, &["M", "N"]),
        ],
        &[],
    );
    assert_eq!(ProblemKind::Copy.derive(&ok), Ok(Problem::Copy));
    let mut bad = ok.clone();
    bad.tensors[1].elem = F32;
    assert!(
        ProblemKind::Copy
            .derive(&bad)
            .unwrap_err()
            .contains("one shape and element type")
    );
    assert_eq!(ProblemKind::from_name("gemm"), Some(ProblemKind::Gemm));
    assert_eq!(
        ProblemKind::from_name("attention"),
        Some(ProblemKind::Attention)
    );
    assert_eq!(ProblemKind::from_name("conv"), None);
}

#[test]
fn attention_needs_q_k_v_o_of_one_type_an_f32_lse_and_the_scale() {
    let ok = sig(
        vec![
            tensor("q", Bf16, &["B", "S", "HQ"]),
            tensor("k", Bf16, &["B", "SK", "HK"]),
            tensor("v", Bf16, &["B", "SK", "HK"]),
            tensor("o", Bf16, &["B", "S", "HQ"]),
            tensor("lse", F32, &["BH", "S", "ONE"]),
        ],
        &["scale_log2"],
    );
    assert_eq!(ProblemKind::Attention.derive(&ok), Ok(Problem::Attention));
    let mut bf16_lse = ok.clone();
    bf16_lse.tensors[4].elem = Bf16;
    let mut no_scale = ok.clone();
    no_scale.scalars.clear();
    let mut no_v = ok.clone();
    no_v.tensors.remove(2);
    for bad in [bf16_lse, no_scale] {
        let e = ProblemKind::Attention.derive(&bad).unwrap_err();
        assert!(e.contains("`lse` [BH, S, 1] f32"), "{e}");
    }
    let e = ProblemKind::Attention.derive(&no_v).unwrap_err();
    assert!(e.contains("needs a tensor `v`"), "{e}");
    // O may be narrower than Q (a V head dim below the Q/K one, MLA's 128 under 192), but it
    // shares Q's batch and length.
    let mut split = ok.clone();
    split.tensors[2] = tensor("v", Bf16, &["B", "SK", "HV"]);
    split.tensors[3] = tensor("o", Bf16, &["B", "S", "HO"]);
    assert_eq!(
        ProblemKind::Attention.derive(&split),
        Ok(Problem::Attention)
    );
    let mut other_len = ok.clone();
    other_len.tensors[3] = tensor("o", Bf16, &["B", "SO", "HQ"]);
    let e = ProblemKind::Attention.derive(&other_len).unwrap_err();
    assert!(e.contains("`o` [B, S, HO]"), "{e}");
}

#[test]
fn an_fp8_gemm_is_scaled_per_tensor_by_scalars_or_per_row_by_vectors() {
    use ElemType::E4m3;
    let base = vec![
        tensor("a", E4m3, &["M", "K"]),
        tensor("b", E4m3, &["N", "K"]),
        tensor("d", Bf16, &["M", "N"]),
    ];
    let want = |epilogue| {
        Ok(Problem::Gemm(GemmProblem {
            b: BLayout::Tn,
            epilogue,
        }))
    };
    let tensor_wise = sig(base.clone(), &["scale_a", "scale_b"]);
    assert_eq!(
        ProblemKind::Gemm.derive(&tensor_wise),
        want(Epilogue::ScaleTensor)
    );
    let mut rows = sig(base.clone(), &[]);
    rows.tensors.insert(2, tensor("sa", F32, &["M"]));
    rows.tensors.insert(3, tensor("sb", F32, &["N"]));
    assert_eq!(ProblemKind::Gemm.derive(&rows), want(Epilogue::ScaleRows));
    assert_eq!(
        Problem::Gemm(GemmProblem {
            b: BLayout::Tn,
            epilogue: Epilogue::ScaleRows
        })
        .to_string(),
        "gemm(b = tn, epilogue = scale-rows)"
    );
    // A scale per column of A (sa [K]) is not the row-wise form.
    let mut wrong = rows.clone();
    wrong.tensors[2] = tensor("sa", F32, &["K"]);
    let err = ProblemKind::Gemm.derive(&wrong).unwrap_err();
    assert!(err.contains("`sa` must be an f32 vector [M]"), "{err}");
    // One scalar alone is neither form.
    assert!(
        ProblemKind::Gemm
            .derive(&sig(base.clone(), &["scale_a"]))
            .is_err()
    );
    // Block scales: sa [M, KB] per 1×128 block of A, sb [NB, KB] per 128×128 block of B.
    let mut blocks = sig(base, &[]);
    blocks.tensors.insert(2, tensor("sa", F32, &["M", "KB"]));
    blocks.tensors.insert(3, tensor("sb", F32, &["NB", "KB"]));
    assert_eq!(
        ProblemKind::Gemm.derive(&blocks),
        want(Epilogue::ScaleBlocks)
    );
    assert_eq!(Epilogue::ScaleBlocks.name(), "scale-blocks");
    // sb with another number of K blocks than sa is refused.
    let mut wrong = blocks.clone();
    wrong.tensors[3] = tensor("sb", F32, &["NB", "KC"]);
    let err = ProblemKind::Gemm.derive(&wrong).unwrap_err();
    assert!(err.contains("`sa` [M, KB]"), "{err}");
    // MN-major block scales: sa [KB, M4] (K-block-major, rows padded to M4).
    let mut mn = blocks.clone();
    mn.tensors[2] = tensor("sa", F32, &["KB", "M4"]);
    assert_eq!(ProblemKind::Gemm.derive(&mn), want(Epilogue::ScaleBlocksMn));
    assert_eq!(Epilogue::ScaleBlocksMn.name(), "scale-blocks-mn");
    // … whose first extent must be sb's K blocks.
    let mut wrong = mn;
    wrong.tensors[2] = tensor("sa", F32, &["KC", "M4"]);
    let err = ProblemKind::Gemm.derive(&wrong).unwrap_err();
    assert!(err.contains("MN-major `sa` [KB, M4]"), "{err}");
}

/// A block-scaled GEMM (Blackwell's `tcgen05.mma … .block_scale`): factor images `sfa`
/// [MS, KS] and `sfb` [NS, KS] beside A and B; the recipe is the factors' type (UE8M0: MX,
/// UE4M3: NVFP4), which must scale A's type; B given N×K; the images share K's extent.
#[test]
fn a_block_scaled_gemm_is_told_by_its_factor_images_type() {
    use ElemType::{E2m1x2, E4m3, Ue4m3, Ue8m0};
    let with = |input, factor| {
        sig(
            vec![
                tensor("a", input, &["M", "K"]),
                tensor("b", input, &["N", "K"]),
                tensor("sfa", factor, &["MS", "KS"]),
                tensor("sfb", factor, &["NS", "KS"]),
                tensor("d", Bf16, &["M", "N"]),
            ],
            &[],
        )
    };
    let want = |f| {
        Ok(Problem::Gemm(GemmProblem {
            b: BLayout::Tn,
            epilogue: Epilogue::ScaleFactors(f),
        }))
    };
    assert_eq!(
        ProblemKind::Gemm.derive(&with(E4m3, Ue8m0)),
        want(Factors::Mx)
    );
    assert_eq!(
        ProblemKind::Gemm.derive(&with(E2m1x2, Ue4m3)),
        want(Factors::Nv)
    );
    assert_eq!(
        ProblemKind::Gemm.derive(&with(E2m1x2, Ue8m0)),
        want(Factors::Mx)
    );
    assert_eq!(
        want(Factors::Nv).unwrap().to_string(),
        "gemm(b = tn, epilogue = scale-nv)"
    );
    // NVFP4's factors do not scale E4M3; f32 is no factor type.
    let err = ProblemKind::Gemm.derive(&with(E4m3, Ue4m3)).unwrap_err();
    assert!(err.contains("ue4m3 factors do not scale e4m3"), "{err}");
    let err = ProblemKind::Gemm.derive(&with(E4m3, F32)).unwrap_err();
    assert!(err.contains("`sfa` [MS, KS] and `sfb` [NS, KS]"), "{err}");
    // Images of two K extents, or B given K×N, are refused.
    let mut wrong = with(E4m3, Ue8m0);
    wrong.tensors[3] = tensor("sfb", Ue8m0, &["NS", "KT"]);
    assert!(ProblemKind::Gemm.derive(&wrong).is_err());
    let mut nn = with(E4m3, Ue8m0);
    nn.tensors[1] = tensor("b", E4m3, &["K", "N"]);
    let err = ProblemKind::Gemm.derive(&nn).unwrap_err();
    assert!(err.contains("B given N×K"), "{err}");
}

/// A split-K GEMM's partial products: `w` [S, M, N] (or [S, N, M]) f32 instead of `d` is the
/// `partial` epilogue; a workspace of another type or shape is refused with what it must be.
#[test]
fn gemm_partial_products() {
    let base = vec![
        tensor("a", Bf16, &["M", "K"]),
        tensor("b", Bf16, &["N", "K"]),
        tensor("w", F32, &["S", "M", "N"]),
    ];
    let want = Problem::Gemm(GemmProblem {
        b: BLayout::Tn,
        epilogue: Epilogue::Partial,
    });
    assert_eq!(ProblemKind::Gemm.derive(&sig(base.clone(), &[])), Ok(want));
    assert_eq!(want.to_string(), "gemm(b = tn, epilogue = partial)");
    let mut wrong = base.clone();
    wrong[2] = tensor("w", Bf16, &["S", "M", "N"]);
    let err = ProblemKind::Gemm.derive(&sig(wrong, &[])).unwrap_err();
    assert!(err.contains("`w` must be an f32 workspace"), "{err}");
    let err = ProblemKind::Gemm
        .derive(&sig(base.clone(), &["alpha"]))
        .unwrap_err();
    assert!(err.contains("no scalars"), "{err}");
    // The transposed workspace [S, N, M] (each slice stored as (A·Bᵀ)ᵀ) is the same problem;
    // one that names neither M nor N in its place is refused.
    let mut transposed = base.clone();
    transposed[2] = tensor("w", F32, &["S", "N", "M"]);
    assert_eq!(ProblemKind::Gemm.derive(&sig(transposed, &[])), Ok(want));
    let mut neither = base;
    neither[2] = tensor("w", F32, &["S", "N", "K"]);
    let err = ProblemKind::Gemm.derive(&sig(neither, &[])).unwrap_err();
    assert!(err.contains("or its transpose [S, N, M]"), "{err}");
}

#[test]
fn a_gemm_with_bias_and_res_adds_the_residual_after_the_activation() {
    let with = |res: TensorDecl| {
        sig(
            vec![
                tensor("a", Bf16, &["M", "K"]),
                tensor("b", Bf16, &["N", "K"]),
                tensor("bias", Bf16, &["N"]),
                res,
                tensor("d", Bf16, &["M", "N"]),
            ],
            &[],
        )
    };
    let good = with(tensor("res", Bf16, &["M", "N"]));
    let consts = [("ACT".to_string(), 2)];
    let want = Problem::Gemm(GemmProblem {
        b: BLayout::Tn,
        epilogue: Epilogue::BiasResidual(Act::Gelu),
    });
    assert_eq!(ProblemKind::Gemm.derive_with(&good, &consts), Ok(want));
    assert_eq!(
        want.to_string(),
        "gemm(b = tn, epilogue = bias-gelu-residual)"
    );
    assert_eq!(
        Epilogue::BiasResidual(Act::None).name(),
        "bias-residual",
        "ACT = 0 is the plain bias"
    );
    let wrong = with(tensor("res", F32, &["M", "N"]));
    let err = ProblemKind::Gemm.derive(&wrong).unwrap_err();
    assert!(
        err.contains("`res` (the residual) must have D's shape"),
        "{err}"
    );
    let short = with(tensor("res", Bf16, &["N"]));
    assert!(ProblemKind::Gemm.derive(&short).is_err());
}
