//! The argument checks on described tensors (no GPU, no Python): each refusal names the
//! argument, and the accepted layouts become the metas the kernels take.

use super::*;
use tirx::problem::{Act, BLayout};

fn t(dtype: ElemType, shape: &[usize], strides: &[i64]) -> Foreign {
    Foreign {
        dtype: Ok(dtype),
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        addr: 0x7f00_0000_0000,
        place: Place::Cuda(0),
    }
}

fn c(dtype: ElemType, shape: &[usize]) -> Foreign {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as i64;
    }
    t(dtype, shape, &s)
}

fn gemm_args<'a>(a: &'a Foreign, b: &'a Foreign) -> GemmArgs<'a> {
    GemmArgs {
        a,
        b,
        c: None,
        bias: None,
        activation: None,
        residual: None,
        alpha: 1.0,
        beta: 0.0,
        out: None,
        out_dtype: ElemType::Bf16,
    }
}

#[test]
fn gemm_layout_follows_b_strides() {
    let a = c(ElemType::Bf16, &[64, 32]);
    let nn = c(ElemType::Bf16, &[32, 48]);
    let Op::Gemm(g) = gemm(&gemm_args(&a, &nn)).unwrap().op else {
        panic!()
    };
    assert_eq!(g.layout, BLayout::Nn);
    assert_eq!(g.b.shape, vec![32, 48]);
    assert_eq!(g.d.shape, vec![64, 48]);
    // weight [48, 32] row-major, passed as weight.t(): [32, 48] with strides (1, 32).
    let tn = t(ElemType::Bf16, &[32, 48], &[1, 32]);
    let Op::Gemm(g) = gemm(&gemm_args(&a, &tn)).unwrap().op else {
        panic!()
    };
    assert_eq!(g.layout, BLayout::Tn);
    assert_eq!(
        (g.b.shape.clone(), g.b.strides.clone()),
        (vec![48, 32], vec![32, 1])
    );
    assert!(g.scaled.is_none() && g.c.is_none());
}

#[test]
fn gemm_refusals_name_the_argument() {
    let a = c(ElemType::Bf16, &[64, 32]);
    let msg = |r: Result<Call, BindError>| r.unwrap_err().to_string();
    let b = c(ElemType::Bf16, &[31, 48]);
    assert!(msg(gemm(&gemm_args(&a, &b))).contains("K disagrees (32 vs 31)"));
    let b = c(ElemType::F32, &[32, 48]);
    assert_eq!(
        msg(gemm(&gemm_args(&a, &b))),
        "`b` has dtype torch.float32; tirx.gemm takes torch.bfloat16 (the dtype of `a`)"
    );
    let b = t(ElemType::Bf16, &[32, 48], &[96, 2]);
    assert!(
        msg(gemm(&gemm_args(&a, &b)))
            .starts_with("`b` (shape [32, 48], strides [96, 2]) is not contiguous")
    );
    let mut cpu = c(ElemType::Bf16, &[32, 48]);
    cpu.place = Place::Other(1, 0);
    assert!(msg(gemm(&gemm_args(&a, &cpu))).starts_with("`b` is on cpu"));
    let mut other = c(ElemType::Bf16, &[32, 48]);
    other.place = Place::Cuda(1);
    assert!(msg(gemm(&gemm_args(&a, &other))).contains("`b` is on cuda:1 but `a` is on cuda:0"));
    let b = c(ElemType::Bf16, &[32, 48]);
    let mut g = gemm_args(&a, &b);
    g.activation = Some("tanh");
    assert!(msg(gemm(&g)).contains("activation \"tanh\""));
    g.activation = Some("relu");
    assert!(msg(gemm(&g)).contains("pass `bias=`"));
    let mut g = gemm_args(&a, &b);
    g.beta = 0.5;
    assert!(msg(gemm(&g)).contains("no `c` was given"));
}

#[test]
fn gemm_epilogues() {
    let a = c(ElemType::F16, &[64, 32]);
    let b = t(ElemType::F16, &[32, 48], &[1, 32]);
    let bias = c(ElemType::F32, &[48]);
    let mut g = gemm_args(&a, &b);
    g.out_dtype = ElemType::F32;
    g.bias = Some(&bias);
    g.activation = Some("gelu");
    let Op::Gemm(got) = gemm(&g).unwrap().op else {
        panic!()
    };
    assert_eq!(got.bias.map(|b| b.1), Some(Act::Gelu));
    let mut g = gemm_args(&a, &b);
    g.alpha = 2.0;
    let Op::Gemm(got) = gemm(&g).unwrap().op else {
        panic!()
    };
    assert_eq!(got.scaled, Some((2.0, 0.0)));
    assert_eq!(got.c.unwrap().shape, vec![64, 48]);
}

#[test]
fn gemm_residual_is_its_own_tensor_after_a_bias_and_c_without_one() {
    let msg = |r: Result<Call, BindError>| r.unwrap_err().to_string();
    let a = c(ElemType::Bf16, &[64, 32]);
    let b = t(ElemType::Bf16, &[32, 48], &[1, 32]);
    let bias = c(ElemType::Bf16, &[48]);
    let res = c(ElemType::Bf16, &[64, 48]);
    let mut g = gemm_args(&a, &b);
    g.bias = Some(&bias);
    g.activation = Some("silu");
    g.residual = Some(&res);
    let Op::Gemm(got) = gemm(&g).unwrap().op else {
        panic!()
    };
    assert_eq!(got.bias.as_ref().map(|b| b.1), Some(Act::Silu));
    assert_eq!(
        got.res.as_ref().map(|r| r.shape.clone()),
        Some(vec![64, 48])
    );
    assert!(got.scaled.is_none() && got.c.is_none());
    // Without a bias: C = R, α = β = 1.
    let mut g = gemm_args(&a, &b);
    g.residual = Some(&res);
    let Op::Gemm(got) = gemm(&g).unwrap().op else {
        panic!()
    };
    assert_eq!(got.scaled, Some((1.0, 1.0)));
    assert!(got.res.is_none() && got.c.is_some());
    // With c as well: one of them.
    let mut g = gemm_args(&a, &b);
    g.residual = Some(&res);
    g.c = Some(&res);
    assert!(msg(gemm(&g)).contains("`residual` is `c` with alpha = beta = 1"));
    // Its shape and dtype are D's.
    let short = c(ElemType::Bf16, &[64, 47]);
    let mut g = gemm_args(&a, &b);
    g.residual = Some(&short);
    assert!(msg(gemm(&g)).contains("`residual` has shape [64, 47]"));
    let f32_res = c(ElemType::F32, &[64, 48]);
    let mut g = gemm_args(&a, &b);
    g.bias = Some(&bias);
    g.residual = Some(&f32_res);
    assert!(msg(gemm(&g)).contains("residual"));
}

#[test]
fn rows_flatten_leading_dims() {
    let x = c(ElemType::Bf16, &[2, 3, 40]);
    let w = c(ElemType::Bf16, &[40]);
    let Op::Row { x, y, w, .. } = row(RowOp::RmsNorm, &x, Some(&w), None, None, 1e-6)
        .unwrap()
        .op
    else {
        panic!()
    };
    assert_eq!(
        (x.shape, y.shape, w.unwrap().shape),
        (vec![6, 40], vec![6, 40], vec![40])
    );
    let padded = t(ElemType::Bf16, &[6, 40], &[48, 1]);
    let Op::Row { x, .. } = row(RowOp::Softmax, &padded, None, None, None, 0.0)
        .unwrap()
        .op
    else {
        panic!()
    };
    assert_eq!(x.strides, vec![48, 1]);
    let msg = row(RowOp::RmsNorm, &padded, None, None, None, 1e-6)
        .unwrap_err()
        .to_string();
    assert_eq!(msg, "tirx.rms_norm: needs `weight`");
    let f32x = c(ElemType::F32, &[6, 40]);
    let msg = row(RowOp::Softmax, &f32x, None, None, None, 0.0)
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "`x` has dtype torch.float32; tirx.softmax takes torch.bfloat16"
    );
    let wrong_w = c(ElemType::Bf16, &[41]);
    let msg = row(RowOp::RmsNorm, &padded, Some(&wrong_w), None, None, 1e-6)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("`weight` has shape [41]"), "{msg}");
}

#[test]
fn attention_layouts_and_gqa() {
    let q = c(ElemType::Bf16, &[2, 100, 8, 64]);
    let k = c(ElemType::Bf16, &[2, 120, 2, 64]);
    let call = attention(&AttentionArgs {
        q: &q,
        k: &k,
        v: &k,
        out: None,
        lse: None,
        causal: true,
        scale: None,
    })
    .unwrap();
    let Op::Attention {
        tensors, d, scale, ..
    } = call.op
    else {
        panic!()
    };
    assert_eq!(d, 64);
    assert!((scale - 0.125).abs() < 1e-7);
    assert_eq!(tensors[0].shape, vec![2, 100, 512]);
    assert_eq!(tensors[1].shape, vec![2, 120, 128]);
    assert_eq!(tensors[4].shape, vec![16, 100, 1]);
    let k3 = c(ElemType::Bf16, &[2, 120, 3, 64]);
    let msg = attention(&AttentionArgs {
        q: &q,
        k: &k3,
        v: &k3,
        out: None,
        lse: None,
        causal: false,
        scale: None,
    })
    .unwrap_err()
    .to_string();
    assert!(msg.contains("8 query heads over 3 K/V heads"), "{msg}");
    // SDPA's [B, H, S, D] seen as [B, S, H, D] through transpose(1, 2): heads not packed.
    let sdpa = t(ElemType::Bf16, &[2, 100, 8, 64], &[51200, 64, 6400, 1]);
    let msg = attention(&AttentionArgs {
        q: &sdpa,
        k: &k,
        v: &k,
        out: None,
        lse: None,
        causal: false,
        scale: None,
    })
    .unwrap_err()
    .to_string();
    assert!(msg.starts_with("`q` (shape [2, 100, 8, 64]"), "{msg}");
}

#[test]
fn attention_takes_vs_head_dim_from_v() {
    // MLA-style (192, 128): Q/K head dim 192, V/O 128.
    let q = c(ElemType::Bf16, &[2, 100, 8, 192]);
    let k = c(ElemType::Bf16, &[2, 120, 2, 192]);
    let v = c(ElemType::Bf16, &[2, 120, 2, 128]);
    let args = |v, out| AttentionArgs {
        q: &q,
        k: &k,
        v,
        out,
        lse: None,
        causal: false,
        scale: None,
    };
    let call = attention(&args(&v, None)).unwrap();
    let Op::Attention {
        tensors,
        d,
        dv,
        scale,
        ..
    } = call.op
    else {
        panic!()
    };
    assert_eq!((d, dv), (192, 128));
    // The default scale is Q·Kᵀ's: 1/√D.
    assert!((scale - 1.0 / 192f32.sqrt()).abs() < 1e-7);
    assert_eq!(tensors[1].shape, vec![2, 120, 2 * 192]);
    assert_eq!(tensors[2].shape, vec![2, 120, 2 * 128]);
    assert_eq!(tensors[3].shape, vec![2, 100, 8 * 128]);
    // An output of V's head dim is taken; one of Q's is not.
    let out = c(ElemType::Bf16, &[2, 100, 8, 128]);
    assert!(attention(&args(&v, Some(&out))).is_ok());
    let msg = attention(&args(&v, Some(&q))).unwrap_err().to_string();
    assert!(
        msg.contains(
            "`out` has shape [2, 100, 8, 192]; it must be [B, S, HQ, DV] = [2, 100, 8, 128]"
        ),
        "{msg}"
    );
    // V's B, SK and HK are K's.
    let v3 = c(ElemType::Bf16, &[2, 120, 3, 128]);
    let msg = attention(&args(&v3, None)).unwrap_err().to_string();
    assert!(
        msg.contains("`v` is [B, SK, HK, DV] = [2, 120, 3, 128]: B, SK and HK must agree"),
        "{msg}"
    );
}

/// `weight` [N, K] row-major in FP8, passed as `weight.t()`: [K, N] with strides (1, K).
fn fp8_w(e: ElemType, n: usize, k: usize) -> Foreign {
    t(e, &[k, n], &[1, k as i64])
}

fn scale(shape: &[usize]) -> ScaleArg {
    ScaleArg::Tensor(c(ElemType::F32, shape))
}

fn fp8_call(a: &Foreign, b: &Foreign, sa: &ScaleArg, sb: &ScaleArg) -> Result<GemmFp8, BindError> {
    let call = gemm_fp8(&GemmFp8Args {
        a,
        b,
        scale_a: sa,
        scale_b: sb,
        out: None,
        out_dtype: ElemType::Bf16,
        use_fast_accum: false,
    })?;
    match call.op {
        Op::GemmFp8(g) => Ok(g),
        other => panic!("{other:?}"),
    }
}

fn fp8_err(a: &Foreign, b: &Foreign, sa: &ScaleArg, sb: &ScaleArg) -> String {
    fp8_call(a, b, sa, sb).unwrap_err().to_string()
}

/// The three scale forms are told apart by their shapes, and each becomes the metas the
/// FP8 kernels take (row-wise [M, 1] / [1, N] as the vectors [M] / [N]).
#[test]
fn gemm_fp8_scale_forms_follow_their_shapes() {
    let (m, n, k) = (200, 264, 400);
    let a = c(ElemType::E4m3, &[m, k]);
    let b = fp8_w(ElemType::E4m3, n, k);
    let g = fp8_call(&a, &b, &ScaleArg::Value(0.5), &ScaleArg::Value(2.0)).unwrap();
    assert!(matches!(g.scales, Fp8Scales::Tensor(0.5, 2.0)) && !g.values_on_device);
    assert_eq!(
        (g.b.shape.clone(), g.b.strides.clone()),
        (vec![n, k], vec![k, 1])
    );
    let g = fp8_call(&a, &b, &scale(&[]), &scale(&[1])).unwrap();
    assert!(matches!(g.scales, Fp8Scales::Tensor(..)) && g.values_on_device);
    let g = fp8_call(&a, &b, &scale(&[m, 1]), &scale(&[1, n])).unwrap();
    let Fp8Scales::Rows(sa, sb) = g.scales else {
        panic!()
    };
    assert_eq!((sa.shape, sb.shape), (vec![m], vec![n]));
    let g = fp8_call(&a, &b, &scale(&[m, 4]), &scale(&[3, 4])).unwrap();
    let Fp8Scales::Blocks(sa, sb) = g.scales else {
        panic!()
    };
    assert_eq!((sa.shape, sb.shape), (vec![m, 4], vec![3, 4]));
    assert_eq!(g.d.shape, vec![m, n]);
    assert_eq!(g.d.elem, ElemType::Bf16);
    // MN-major `scale_a` (DeepGEMM's TMA-aligned layout: strides (1, M4)): the MN-major form,
    // `sa` [KB, M4]; at M = 201, M4 = 204. A transposed [KB, M] (strides (1, 201)) is refused.
    let a201 = c(ElemType::E4m3, &[201, k]);
    let mn = ScaleArg::Tensor(t(ElemType::F32, &[201, 4], &[1, 204]));
    let g = fp8_call(&a201, &b, &mn, &scale(&[3, 4])).unwrap();
    let Fp8Scales::BlocksMn(sa, sb) = g.scales else {
        panic!("{:?}", g.scales)
    };
    assert_eq!((sa.shape, sb.shape), (vec![4, 204], vec![3, 4]));
    let unpadded = ScaleArg::Tensor(t(ElemType::F32, &[201, 4], &[1, 201]));
    let e = fp8_call(&a201, &b, &unpadded, &scale(&[3, 4]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`scale_a`") && e.contains("MN-major"), "{e}");
}

/// Every misuse of `gemm_fp8` is refused before any driver call, naming the argument.
#[test]
fn gemm_fp8_misuse_is_refused_naming_the_argument() {
    let (m, n, k) = (64, 48, 32);
    let e4 = ElemType::E4m3;
    let a = c(e4, &[m, k]);
    let b = fp8_w(e4, n, k);
    let one = ScaleArg::Value(1.0);
    let e = fp8_err(&c(ElemType::Bf16, &[m, k]), &b, &one, &one);
    assert!(
        e.contains("`a` has dtype torch.bfloat16; tirx.gemm_fp8 takes torch.float8_e4m3fn or torch.float8_e5m2"),
        "{e}"
    );
    let e = fp8_err(&a, &fp8_w(ElemType::E5m2, n, k), &one, &one);
    assert!(
        e.contains("`b` has dtype torch.float8_e5m2; tirx.gemm_fp8 takes torch.float8_e4m3fn (the dtype of `a`)"),
        "{e}"
    );
    let bf_scale = ScaleArg::Tensor(c(ElemType::Bf16, &[m, 1]));
    let e = fp8_err(&a, &b, &bf_scale, &scale(&[1, n]));
    assert!(
        e.contains("`scale_a` has dtype torch.bfloat16; tirx.gemm_fp8 takes torch.float32"),
        "{e}"
    );
    // A row-major [K, N] B: the FP8 kernels read B as N×K only.
    let e = fp8_err(&a, &c(e4, &[k, n]), &one, &one);
    assert!(
        e.contains("`b` (shape [32, 48], strides [48, 1]) is not contiguous"),
        "{e}"
    );
    assert!(e.contains("torch._scaled_mm"), "{e}");
    let e = fp8_err(&a, &fp8_w(e4, n, k + 16), &one, &one);
    assert!(e.contains("K disagrees (32 vs 48)"), "{e}");
    let (a40, b40) = (c(e4, &[m, 40]), fp8_w(e4, n, 40));
    let e = fp8_err(&a40, &b40, &one, &one);
    assert!(e.contains("K = 40 is not a multiple of 16"), "{e}");
    let e = fp8_err(&a, &b, &scale(&[m, 1]), &scale(&[n, 1]));
    assert!(
        e.contains(
            "`scale_a` has shape [64, 1] and `scale_b` [48, 1]; for [M, N, K] = [64, 48, 32]"
        ),
        "{e}"
    );
    assert!(
        e.contains("row-wise ([64, 1] and [1, 48]) or block-wise ([64, 1] and [1, 1]"),
        "{e}"
    );
    let e = fp8_err(&a, &b, &one, &scale(&[1, n]));
    assert!(e.contains("one scale is a number"), "{e}");
    // [M, 1] as a column of a wider matrix: not a vector along M.
    let strided = ScaleArg::Tensor(t(ElemType::F32, &[m, 1], &[2, 1]));
    let e = fp8_err(&a, &b, &strided, &scale(&[1, n]));
    assert!(
        e.contains("`scale_a` (shape [64, 1], strides [2, 1]) is not contiguous"),
        "{e}"
    );
    // Devices: a CPU scale, and B on another GPU.
    let cpu = ScaleArg::Tensor(Foreign {
        place: Place::Other(1, 0),
        ..c(ElemType::F32, &[m, 1])
    });
    let e = fp8_err(&a, &b, &cpu, &scale(&[1, n]));
    assert!(e.contains("`scale_a` is on cpu"), "{e}");
    let b1 = Foreign {
        place: Place::Cuda(1),
        ..b.clone()
    };
    let e = fp8_err(&a, &b1, &one, &one);
    assert!(e.contains("`b` is on cuda:1 but `a` is on cuda:0"), "{e}");
    // The output.
    let out = c(ElemType::Bf16, &[n, m]);
    let e = gemm_fp8(&GemmFp8Args {
        a: &a,
        b: &b,
        scale_a: &one,
        scale_b: &one,
        out: Some(&out),
        out_dtype: ElemType::Bf16,
        use_fast_accum: false,
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`out` has shape [48, 64]; a @ b is [M, N] = [64, 48]"),
        "{e}"
    );
    let e = gemm_fp8(&GemmFp8Args {
        a: &a,
        b: &b,
        scale_a: &one,
        scale_b: &one,
        out: None,
        out_dtype: ElemType::E4m3,
        use_fast_accum: false,
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("out_dtype torch.float8_e4m3fn is not one of"),
        "{e}"
    );
}

/// On a described H200 each scale form reaches an FP8 kernel of its epilogue.
#[test]
fn gemm_fp8_explains_each_scale_form_on_the_h200() {
    use tirx_kernels::dispatch::Device;
    let (m, n, k) = (256, 512, 1024);
    let a = c(ElemType::E4m3, &[m, k]);
    let b = fp8_w(ElemType::E4m3, n, k);
    for (sa, sb, problem) in [
        (
            ScaleArg::Value(0.5),
            ScaleArg::Value(2.0),
            "gemm tn scale-tensor",
        ),
        (scale(&[m, 1]), scale(&[1, n]), "gemm tn scale-rows"),
        (scale(&[m, 8]), scale(&[4, 8]), "gemm tn scale-blocks"),
    ] {
        let call = gemm_fp8(&GemmFp8Args {
            a: &a,
            b: &b,
            scale_a: &sa,
            scale_b: &sb,
            out: None,
            out_dtype: ElemType::Bf16,
            use_fast_accum: false,
        })
        .unwrap();
        let text = crate::host::explain(&call.op, &Device::h200());
        assert!(text.contains(problem), "{text}");
        assert!(text.contains("chosen: gemm_sm90_fp8"), "{text}");
    }
}

fn block_scaled_call(
    input: ElemType,
    factor: ElemType,
    (m, n, k): (usize, usize, usize),
    images: ([usize; 2], [usize; 2]),
) -> Result<Call, BindError> {
    let (a, b) = (c(input, &[m, k]), fp8_w(input, n, k));
    let (sfa, sfb) = (c(factor, &images.0), c(factor, &images.1));
    gemm_block_scaled(&BlockScaledArgs {
        a: &a,
        b: &b,
        sfa: &sfa,
        sfb: &sfb,
        out: None,
        out_dtype: ElemType::Bf16,
    })
}

/// MXFP8 and NVFP4 reach the Blackwell kernels on a described B200; on an H200 nothing takes
/// them and the table names sm_100a (what `NoKernelFitsError` carries); a factor image of the
/// wrong extent is refused by the host's own check, before any device.
#[test]
fn gemm_block_scaled_runs_on_blackwell_and_is_refused_on_hopper_naming_sm_100a() {
    use tirx_kernels::dispatch::Device;
    let (m, n) = (256, 256);
    // MXFP8: K = 512 values, 16 factors a row; NVFP4: K = 256 bytes = 512 values, 32 a row.
    for (input, factor, k, images) in [
        (ElemType::E4m3, ElemType::Ue8m0, 512, ([64, 64], [64, 64])),
        (
            ElemType::E2m1x2,
            ElemType::E4m3,
            256,
            ([64, 128], [64, 128]),
        ),
    ] {
        let call = block_scaled_call(input, factor, (m, n, k), images).unwrap();
        let b = crate::host::explain(&call.op, &Device::b200());
        assert!(b.contains("chosen: gemm_sm100"), "{b}");
        let h = crate::host::explain(&call.op, &Device::h200());
        assert!(h.contains("chosen: none"), "{h}");
        assert!(h.contains("refused: compiled for sm_100a"), "{h}");
        // What a launch on an H200 raises (`tirx.NoKernelFitsError`).
        let err = tirx_kernels::dispatch::choose(
            crate::host::request(&call.op).as_ref(),
            &tirx_kernels::catalogue::all(),
            &Device::h200(),
            tirx_kernels::dispatch::tune::Cache::host(),
        )
        .unwrap_err();
        let err = BindError::from(err);
        assert!(err.to_string().contains("compiled for sm_100a"), "{err}");
        assert!(
            matches!(
                err,
                BindError::Runtime(tirx::RuntimeError::NoKernelFits { .. })
            ),
            "{err:?}"
        );
    }
    let e = block_scaled_call(
        ElemType::E4m3,
        ElemType::Ue8m0,
        (m, n, 512),
        ([64, 48], [64, 64]),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("sfa"), "{e}");
    let e = block_scaled_call(
        ElemType::E4m3,
        ElemType::E4m3,
        (m, n, 512),
        ([64, 64], [64, 64]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "`sfa` has dtype torch.float8_e4m3fn; tirx.gemm_block_scaled takes torch.float8_e8m0fnu"
        ),
        "{e}"
    );
}
