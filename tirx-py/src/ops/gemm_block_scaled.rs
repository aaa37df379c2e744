//! `gemm_block_scaled(a, b, sfa, sfb, …)`'s checks: Blackwell's block-scaled D = (A·sA)·(B·sB)ᵀ
//! (`tcgen05.mma … .block_scale`, `kernels/src/gemm/factors.rs`) — `a` `[M, K]` and `b`
//! `[K, N]` the transpose of a row-major `[N, K]`, both `torch.float8_e4m3fn` with
//! `torch.float8_e8m0fnu` factors (MXFP8: one per 32 values of a row) or both
//! `torch.float4_e2m1fn_x2` (two values a byte, K counting bytes) with UE4M3 factors given as
//! `torch.float8_e4m3fn` (NVFP4: one per 16 values; torch has no UE4M3 dtype), the factor
//! matrices as `tirx::runtime::scale_image` lays them out (`sfa` `[MS, KS]`, `sfb` `[NS, KS]`).
//!
//! Devices, dtypes and layouts are checked here; the recipe's shapes by the host's own
//! `factors::factor_request` (through [`crate::host::block_scaled_request`]), whose typed
//! refusals become `ArgumentError`s. Only sm_100a kernels take these problems: on a Hopper GPU
//! the dispatcher's table (`NoKernelFitsError`) names each artifact's target.

use tirx::abi::ElemType;
use tirx::runtime::TensorMeta;

use super::{Call, Checker, Op, fresh, rows_meta};
use crate::error::BindError;
use crate::tensor::{Foreign, Place};

/// The block-scaled GEMM's inputs, as the Python call gives them.
pub struct BlockScaledArgs<'a> {
    /// `a` `[M, K]`.
    pub a: &'a Foreign,
    /// `b` `[K, N]` (the transpose of a row-major `[N, K]`).
    pub b: &'a Foreign,
    /// A's factor image.
    pub sfa: &'a Foreign,
    /// B's factor image.
    pub sfb: &'a Foreign,
    /// The output `[M, N]`, or `None` to explain with `out_dtype`.
    pub out: Option<&'a Foreign>,
    /// The output's dtype when `out` is `None`.
    pub out_dtype: ElemType,
}

/// `gemm_block_scaled(a, b, sfa, sfb, …)`.
pub fn gemm_block_scaled(g: &BlockScaledArgs<'_>) -> Result<Call, BindError> {
    let mut ck = Checker::new("gemm_block_scaled");
    for (arg, t) in [("a", g.a), ("b", g.b), ("sfa", g.sfa), ("sfb", g.sfb)] {
        ck.device(arg, t)?;
    }
    if let Some(o) = g.out {
        ck.device("out", o)?;
    }
    let input = ck.dtype("a", g.a, &[ElemType::E4m3, ElemType::E2m1x2])?;
    ck.same_dtype("b", g.b, input, "a")?;
    // The factors' type names the recipe: UE8M0 scales E4M3 (MXFP8); NVFP4's UE4M3 travels
    // as float8_e4m3fn.
    let (given, factor) = match input {
        ElemType::E4m3 => (ElemType::Ue8m0, ElemType::Ue8m0),
        _ => (ElemType::E4m3, ElemType::Ue4m3),
    };
    ck.dtype("sfa", g.sfa, &[given])?;
    ck.same_dtype("sfb", g.sfb, given, "sfa")?;
    let output = match g.out {
        Some(o) => ck.dtype("out", o, &[ElemType::Bf16, ElemType::F16, ElemType::F32])?,
        None => g.out_dtype,
    };
    for (arg, t, shape) in [
        ("a", g.a, "[M, K]"),
        ("b", g.b, "[K, N]"),
        ("sfa", g.sfa, "[MS, KS]"),
        ("sfb", g.sfb, "[NS, KS]"),
    ] {
        ck.rank(arg, t, &[2], shape)?;
    }
    let a = rows_meta(input, g.a)
        .ok_or_else(|| ck.not_contiguous("a", g.a, "a unit stride along K (row-major [M, K])"))?;
    let (k, n) = (g.b.shape[0], g.b.shape[1]);
    if !(g.b.strides[0] == 1 || k == 1) || g.b.strides[1] < 0 {
        return Err(ck.not_contiguous(
            "b",
            g.b,
            "the transpose of a row-major [N, K] (e.g. `weight.t()`)",
        ));
    }
    let b = TensorMeta {
        elem: input,
        shape: vec![n, k],
        strides: vec![
            if n == 1 {
                k.max(1)
            } else {
                g.b.strides[1] as usize
            },
            1,
        ],
        addr: g.b.addr,
    };
    let image = |arg: &str, t: &Foreign| {
        if t.is_contiguous() {
            Ok(TensorMeta::row_major(factor, &t.shape, t.addr))
        } else {
            Err(ck.not_contiguous(arg, t, "a contiguous factor image (`scale_image`'s layout)"))
        }
    };
    let (sfa, sfb) = (image("sfa", g.sfa)?, image("sfb", g.sfb)?);
    let m = g.a.shape[0];
    let d = match g.out {
        Some(o) => {
            ck.rank("out", o, &[2], "[M, N]")?;
            rows_meta(output, o)
                .ok_or_else(|| ck.not_contiguous("out", o, "a unit stride along N"))?
        }
        None => fresh(output, &[m, n]),
    };
    let request = crate::host::block_scaled_request(&a, &b, &sfa, &sfb, &d)
        .map_err(|e| ck.shape(e.to_string()))?;
    Ok(Call {
        place: ck.first.as_ref().map_or(Place::CudaPointer, |f| f.1),
        probe_addr: ck.probe_addr,
        op: Op::BlockScaled(Box::new(request)),
    })
}
