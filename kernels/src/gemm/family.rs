//! The GEMM family: D = A·op(B) (plain), D = α·A·op(B) + β·C (scaled),
//! D = act(A·Bᵀ + bias) (fused) and the FP8 GEMMs' D = s ⊙ A·Bᵀ (E4M3/E5M2 in; per-tensor
//! scales `scale_a`, `scale_b`, row-wise `sa` [M], `sb` [N], or block-wise `sa` [M, KB],
//! `sb` [NB, KB]: `Epilogue::ScaleTensor` / `ScaleRows` / `ScaleBlocks`), B given N×K or K×N,
//! and Blackwell's block-scaled GEMMs' D = (A·sA)·(B·sB)ᵀ (MXFP8, NVFP4: factor images `sfa`,
//! `sfb`, `Epilogue::ScaleFactors`, `factors.rs` / `factors_ref.rs`), as
//! [`crate::family::Family`] sees it.
//!
//! - Problem: `Problem::Gemm` (B's layout and the epilogue from the artifact, never from a
//!   tensor's or a config's name).
//! - Request: [`GemmRequest`] (`request.rs`: acceptance and the cost model).
//! - Reference: `reference.rs` (f64, either layout, the fused epilogue); `fp8_ref.rs` for the
//!   FP8 GEMMs (the scales, and the bound of the tensor core's FP8 accumulation).
//! - Host entries and launch by role: `host.rs`; GPU checks: `check.rs`.
//!
//! Default shape 130×136×96: tails in M and N, 1.5 K tiles of 64, and rows of A, B and D
//! whose byte strides TMA takes (a multiple of 16 bytes in every element type shipped). The
//! FP8 GEMMs (K tiles of 128) take 130×136×208: a full K tile and a tail of 80; the
//! block-scaled GEMMs 200×264×208 (the CTA pair's 256-row tile with its second CTA's rows
//! partial, a 256-wide tile and a tail of 8 columns, a K tile of 128 elements and a tail of
//! 80 — a factor block of 16 values in the tail).

use tirx::KernelArtifact;
use tirx::abi::ElemType;
use tirx::problem::{Epilogue, GemmProblem, Problem};
use tirx::runtime::TensorMeta;
use tirx::{Runtime, RuntimeError};
use tirx_sim::{Device, Stats};

use super::check::{Check, FP8_TENSOR_SCALES, check_bias, check_fp8, fp8_row_scales};
use super::factors_ref::{check_factors, simulate_factors};
use super::fp8_ref::Fp8ScaleMode;
use super::host::GemmLaunch;
use super::request::{GemmRequest, GemmTypes};
use super::split;
use crate::dispatch::ProblemDef;
use crate::family::{CheckReport, Family, Shape, SimRun, by_role};
use crate::reference::Rng;
use crate::simulate::{self, decode, put, random_values};

/// The GEMM family.
pub struct Gemm;

/// (α, β) the checks give a scaled GEMM: both matter, and β < 0.
const SCALARS: (f32, f32) = (1.5, -0.75);

/// The problem and the element types of a GEMM artifact.
fn problem_of(art: &KernelArtifact) -> Result<(GemmProblem, GemmTypes), RuntimeError> {
    let not_gemm = || RuntimeError::NoKernelFits {
        problem: format!("a GEMM check of `{}/{}`", art.kernel, art.config),
        table: "  it is no GEMM with tensors `a` and `d`\n".into(),
    };
    let Some(Problem::Gemm(g)) = art.problem else {
        return Err(not_gemm());
    };
    // A split-K artifact writes f32 partials; its plan's D is the reduce kernel's, in the
    // family's own checks bf16 (`GemmLaunch::types`), and the problem it solves is the plain
    // one (for 8-bit inputs, `fp8_splitk.rs`, the FP8 GEMM with per-tensor scales).
    if g.epilogue == Epilogue::Partial {
        let input = art.elem_of("a").ok_or_else(not_gemm)?;
        let eight_bit = matches!(input, ElemType::E4m3 | ElemType::E5m2);
        let plain = GemmProblem {
            epilogue: if eight_bit {
                Epilogue::ScaleTensor
            } else {
                Epilogue::Plain
            },
            ..g
        };
        let output = ElemType::Bf16;
        return Ok((plain, GemmTypes { input, output }));
    }
    let (Some(input), Some(output)) = (art.elem_of("a"), art.elem_of("d")) else {
        return Err(not_gemm());
    };
    Ok((g, GemmTypes { input, output }))
}

impl Family for Gemm {
    fn name(&self) -> &'static str {
        "gemm"
    }

    fn owns(&self, problem: Problem) -> bool {
        matches!(problem, Problem::Gemm(_))
    }

    fn request(
        &self,
        art: &KernelArtifact,
        shape: Shape,
    ) -> Result<Box<dyn ProblemDef>, RuntimeError> {
        let (g, types) = problem_of(art)?;
        Ok(Box::new(GemmRequest::contiguous(
            g.b, g.epilogue, types, shape,
        )))
    }

    fn default_shape(&self, art: &KernelArtifact) -> Shape {
        // FP8 (BK = 128): K of two tiles, the second a tail (an FP8 split-K plan needs two).
        match problem_of(art) {
            Ok((
                GemmProblem {
                    epilogue:
                        Epilogue::ScaleTensor
                        | Epilogue::ScaleRows
                        | Epilogue::ScaleBlocks
                        | Epilogue::ScaleBlocksMn,
                    ..
                },
                _,
            )) => (130, 136, 208),
            Ok((
                GemmProblem {
                    epilogue: Epilogue::ScaleFactors(_),
                    ..
                },
                _,
            )) => (200, 264, 208),
            _ => (130, 136, 96),
        }
    }

    fn check(
        &self,
        rt: &Runtime,
        art: &'static KernelArtifact,
        shape: Shape,
        seed: u64,
    ) -> Result<CheckReport, RuntimeError> {
        let (g, types) = problem_of(art)?;
        let launch = GemmLaunch {
            artifacts: std::slice::from_ref(art),
        };
        match g.epilogue {
            Epilogue::Bias(act) | Epilogue::BiasResidual(act) => {
                check_bias(rt, art, act, shape, seed)
            }
            Epilogue::ScaleTensor => check_fp8(rt, art, Fp8ScaleMode::Tensor, shape, seed),
            Epilogue::ScaleRows => check_fp8(rt, art, Fp8ScaleMode::Rows, shape, seed),
            Epilogue::ScaleBlocks => check_fp8(rt, art, Fp8ScaleMode::Blocks, shape, seed),
            Epilogue::ScaleBlocksMn => check_fp8(rt, art, Fp8ScaleMode::BlocksMn, shape, seed),
            Epilogue::ScaleFactors(f) => {
                check_factors(rt, art, (f, types.input, types.output), shape, seed)
            }
            e => Check {
                rt,
                launch,
                layout: g.b,
                config: art.config,
                shape,
                scaled: (e == Epilogue::Scaled).then_some(SCALARS),
                seed,
            }
            .run(),
        }
    }

    fn simulate(
        &self,
        art: &KernelArtifact,
        shape: Shape,
        run: &SimRun,
    ) -> Result<(Stats, String), String> {
        let (g, types) = problem_of(art).map_err(|e| e.to_string())?;
        match g.epilogue {
            Epilogue::ScaleBlocks => simulate_fp8_blocks(art, Fp8ScaleMode::Blocks, shape, run),
            Epilogue::ScaleBlocksMn => simulate_fp8_blocks(art, Fp8ScaleMode::BlocksMn, shape, run),
            Epilogue::ScaleFactors(f) => {
                simulate_factors(art, (f, types.input, types.output), shape, run)
            }
            _ => simulate_gemm(art, shape, run, SplitSim::default()),
        }
    }
}

/// A block-scaled FP8 GEMM (`fp8_block.rs`) on M×N×K in the emulator: random FP8 operands
/// and scales per 1×128 block of A and per 128×128 block of B ([`fp8_row_scales`]), D
/// poisoned, against [`super::fp8_ref`]'s f64 reference within the f32 bound (the emulator
/// accumulates each K = 32 step exactly in f32), the promotion's roundings included
/// (`fp8_ref::block_check_k`). `mode` is `sa`'s layout: [M, KB], or MN-major [KB, M4] (its
/// padding columns random too: nothing may read them into D).
fn simulate_fp8_blocks(
    art: &KernelArtifact,
    mode: Fp8ScaleMode,
    (m, n, k): Shape,
    run: &SimRun,
) -> Result<(Stats, String), String> {
    use super::fp8_ref::{check, scaled_mm_f64};
    let (_, types) = problem_of(art).map_err(|e| e.to_string())?;
    let (ta, td) = (types.input, types.output);
    let mut rng = Rng::new(run.seed);
    let dev = &mut Device::new();
    let (ab, av) = random_values(&mut rng, ta, m * k);
    let (bb, bv) = random_values(&mut rng, ta, n * k);
    let (sa_shape, sb_shape) = mode.shapes((m, n, k));
    let sa = fp8_row_scales(&mut rng, sa_shape.iter().product());
    let sb = fp8_row_scales(&mut rng, sb_shape.iter().product());
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let dbytes = m * n * td.bytes() as usize;
    let dm = put(dev, &vec![0xff; dbytes], td, &[m, n]);
    let roles: Vec<(&str, TensorMeta)> = vec![
        ("a", put(dev, &ab, ta, &[m, k])),
        ("b", put(dev, &bb, ta, &[n, k])),
        ("sa", put(dev, &bytes(&sa), ElemType::F32, &sa_shape)),
        ("sb", put(dev, &bytes(&sb), ElemType::F32, &sb_shape)),
        ("d", dm.clone()),
    ];
    let (tensors, scalars) = by_role(art, &roles, &[]).map_err(|e| e.to_string())?;
    let stats = run.launch(art, dev, &tensors, &scalars)?;
    let got = decode(&dev.read(dm.addr, dbytes).map_err(|e| e.to_string())?, td);
    let scales = mode.vectors(sa, sb).ok_or("block scales")?;
    let (want, mag) = scaled_mm_f64(&av, &bv, (m, n, k), &scales);
    let worst = check(&got, (&want, &mag), (scales.check_k(k), td, true), n)?;
    Ok((
        stats,
        format!("K = {k}, block scales, worst error {worst:.2} of the bound"),
    ))
}

/// A GEMM on M×N×K in the emulator: D = α·A·op(B) + β·C (or act(A·Bᵀ + bias), or an FP8
/// GEMM's s ⊙ A·Bᵀ with s = `scale_a·scale_b` or `sa[i]·sb[j]`) against the f64 reference,
/// each element within half an ulp of D's type plus `(K + 2)·2⁻²³·|s|·(|α|·Σ|a·b| + |β·c|)`
/// (widened by the fused epilogue's f32 bias add and activation,
/// [`simulate::bias_act_bound`]). The emulator accumulates FP8 products exactly per k32 step
/// in f32, so the FP8 GEMMs get the f32 bound too (not the GPU's, `fp8_ref::accumulation_bound`).
fn simulate_gemm(
    art: &KernelArtifact,
    (m, n, kk): Shape,
    run: &SimRun,
    over: SplitSim,
) -> Result<(Stats, String), String> {
    let (mut g, mut types) = problem_of(art).map_err(|e| e.to_string())?;
    if split::is_partial(art) {
        if over.scaled {
            g.epilogue = Epilogue::Scaled;
        }
        if over.rows && g.epilogue == Epilogue::ScaleTensor {
            g.epilogue = Epilogue::ScaleRows;
        }
        if let Some(act) = over.act {
            g.epilogue = if over.residual {
                Epilogue::BiasResidual(act)
            } else {
                Epilogue::Bias(act)
            };
        }
        types.output = over.output.unwrap_or(types.output);
    }
    let (ta, td) = (types.input, types.output);
    let nn = g.b == tirx::problem::BLayout::Nn;
    // A split-K plan reads C through its reduce kernel, in D's type.
    let tc = if split::is_partial(art) {
        (g.epilogue == Epilogue::Scaled).then_some(td)
    } else {
        art.elem_of("c")
    };
    let mut rng = Rng::new(run.seed);
    let dev = &mut Device::new();
    let (ab, av) = random_values(&mut rng, ta, m * kk);
    let (bb, bv) = random_values(&mut rng, ta, n * kk);
    let (cb, cv) = random_values(&mut rng, tc.unwrap_or(td), m * n);
    let (alpha, beta) = if g.epilogue == Epilogue::Scaled {
        SCALARS
    } else {
        (1.0, 0.0)
    };
    let act = match g.epilogue {
        Epilogue::Bias(act) | Epilogue::BiasResidual(act) => Some(act),
        _ => None,
    };
    let tbias = art.elem_of("bias").unwrap_or(td);
    let (biasb, biasv) = random_values(&mut rng, tbias, n);
    let biasm = put(dev, &biasb, tbias, &[n]);
    // A residual epilogue's R, drawn after the other inputs (theirs stay as they were).
    // A split-K plan reads R through its reduce kernel, in D's type.
    let tres = if split::is_partial(art) {
        matches!(g.epilogue, Epilogue::BiasResidual(_)).then_some(td)
    } else {
        art.elem_of("res")
    };
    let residual = tres.map(|tr| {
        let (rb, rv) = random_values(&mut rng, tr, m * n);
        (put(dev, &rb, tr, &[m, n]), rv)
    });
    let am = put(dev, &ab, ta, &[m, kk]);
    let bm = put(dev, &bb, ta, &if nn { [kk, n] } else { [n, kk] });
    let cm = put(dev, &cb, tc.unwrap_or(td), &[m, n]);
    let dbytes = m * n * td.bytes() as usize;
    let dm = put(dev, &vec![0xff; dbytes], td, &[m, n]);
    let mut roles: Vec<(&str, TensorMeta)> = vec![
        ("a", am),
        ("b", bm),
        ("c", cm),
        ("bias", biasm),
        ("d", dm.clone()),
    ];
    if let Some((resm, _)) = &residual {
        roles.push(("res", resm.clone()));
    }
    // The FP8 GEMMs' scales, drawn after every other input (the other GEMMs' inputs stay as
    // they were): row-wise `sa` [M], `sb` [N], or per tensor `scale_a`, `scale_b`.
    let row_scales = (g.epilogue == Epilogue::ScaleRows).then(|| {
        let sa = fp8_row_scales(&mut rng, m);
        (sa, fp8_row_scales(&mut rng, n))
    });
    if let Some((sa, sb)) = &row_scales {
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        roles.push(("sa", put(dev, &bytes(sa), ElemType::F32, &[m])));
        roles.push(("sb", put(dev, &bytes(sb), ElemType::F32, &[n])));
    }
    let s8 = |i: usize, j: usize| match (&row_scales, g.epilogue) {
        (Some((sa, sb)), _) => f64::from(sa[i]) * f64::from(sb[j]),
        (None, Epilogue::ScaleTensor) => {
            f64::from(FP8_TENSOR_SCALES.0) * f64::from(FP8_TENSOR_SCALES.1)
        }
        _ => 1.0,
    };
    let scalar_roles = [
        ("alpha", alpha),
        ("beta", beta),
        ("scale_a", FP8_TENSOR_SCALES.0),
        ("scale_b", FP8_TENSOR_SCALES.1),
    ];
    let mut plan = String::new();
    let stats = if split::is_partial(art) {
        let mut request = GemmRequest::contiguous(g.b, g.epilogue, types, (m, n, kk));
        request.scalars = if g.epilogue == Epilogue::ScaleTensor {
            FP8_TENSOR_SCALES
        } else {
            (alpha, beta)
        };
        let (stats, splits) =
            simulate_split(art, dev, &request, &roles, &scalar_roles, run, over.splits)?;
        plan = format!(", split K in {splits}");
        stats
    } else {
        let (tensors, scalars) = by_role(art, &roles, &scalar_roles).map_err(|e| e.to_string())?;
        run.launch(art, dev, &tensors, &scalars)?
    };
    let got = decode(&dev.read(dm.addr, dbytes).map_err(|e| e.to_string())?, td);
    let half_ulp = match td {
        ElemType::Bf16 => 1.0 / 256.0,
        ElemType::F16 => 1.0 / 2048.0,
        ElemType::F32 => 1.0 / 16_777_216.0,
        ElemType::E4m3 => 1.0 / 16.0,
        ElemType::E5m2 => 1.0 / 8.0,
        // No GEMM writes scale factors or FP6/FP4.
        ElemType::Ue8m0
        | ElemType::Ue4m3
        | ElemType::E2m1x2
        | ElemType::E3m2
        | ElemType::E2m3
        | ElemType::E2m1 => 1.0,
        // Nor integers: an exact integer result would compare with no slack.
        ElemType::I32 | ElemType::U32 | ElemType::I8 | ElemType::U8 => 0.0,
        ElemType::I64 | ElemType::U64 => 0.0,
    };
    let mut worst = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let (mut dot, mut mag) = (0.0, 0.0);
            for p in 0..kk {
                let b = if nn { bv[p * n + j] } else { bv[j * kk + p] };
                dot += av[i * kk + p] * b;
                mag += (av[i * kk + p] * b).abs();
            }
            let c = if tc.is_some() { cv[i * n + j] } else { 0.0 };
            let sc = s8(i, j);
            let mut w = sc * (f64::from(alpha) * dot + f64::from(beta) * c);
            let scale = sc.abs() * (f64::from(alpha.abs()) * mag + (f64::from(beta) * c).abs());
            // D rounded (half an ulp of the result) after an f32 accumulation error `acc`.
            let mut acc = (kk as f64 + 2.0) * scale / 8_388_608.0;
            if let Some(act) = act {
                (w, acc, _) = simulate::bias_act_bound(act, w, biasv[j], acc);
            }
            if let Some((_, rv)) = &residual {
                // R added in f32 after the activation: one more f32 rounding.
                let r = rv[i * n + j];
                acc += (w.abs() + r.abs()) / 8_388_608.0;
                w += r;
            }
            let bound = (w.abs() + acc) * half_ulp + acc + 1e-30;
            let g = got[i * n + j];
            if (g - w).abs() > bound || g.is_nan() {
                return Err(format!(
                    "D({i}, {j}) is {g}, the reference {w:.6e} (bound {bound:.2e})"
                ));
            }
            worst = worst.max((g - w).abs() / bound);
        }
    }
    Ok((
        stats,
        format!("K = {kk}{plan}, worst error {worst:.2} of the bound"),
    ))
}

/// How the emulator runs a split-K artifact's plan (ignored for other artifacts): the slices
/// (`None`: the cost model's choice for the run's SM count), the scaled epilogue (α = 1.5,
/// β = −0.75) or the fused one instead of the plain one, and D's type (`None`: bf16). An FP8
/// split-K artifact (`fp8_splitk.rs`) runs with per-tensor scales, or row-wise with `rows`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SplitSim {
    /// The slices of K.
    pub splits: Option<usize>,
    /// D = α·A·Bᵀ + β·C.
    pub scaled: bool,
    /// D's element type.
    pub output: Option<ElemType>,
    /// D = act(A·Bᵀ + bias) (the fused epilogue; bf16 D), instead of the plain or scaled one.
    pub act: Option<tirx::problem::Act>,
    /// With `act`: a residual R added after the activation, D = act(A·Bᵀ + bias) + R.
    pub residual: bool,
    /// FP8 partials: row-wise scales `sa` [M], `sb` [N] (else per tensor).
    pub rows: bool,
}

/// `art`'s split-K plan in the emulator at `shape` as [`SplitSim`] says, against the f64
/// reference (what `tirx sim` runs, with the slices and epilogue chosen by the caller).
pub fn simulate_split_plan(
    art: &KernelArtifact,
    shape: Shape,
    run: &SimRun,
    plan: SplitSim,
) -> Result<(Stats, String), String> {
    if !split::is_partial(art) {
        return Err(format!(
            "`{}/{}` is no split-K artifact",
            art.kernel, art.config
        ));
    }
    simulate_gemm(art, shape, run, plan)
}

/// A split-K plan in the emulator: the partial products into a poisoned workspace of the slices
/// the cost model picks for `run`'s SM count, then the reduce kernel into D. The stats are the
/// two launches' together; the slices come back with them.
fn simulate_split(
    art: &KernelArtifact,
    dev: &mut Device,
    request: &GemmRequest,
    roles: &[(&str, TensorMeta)],
    scalar_roles: &[(&str, f32)],
    run: &SimRun,
    splits: Option<usize>,
) -> Result<(Stats, usize), String> {
    let (m, n, _) = request.shape;
    let splits = match splits {
        Some(s) => s,
        None => {
            split::best_split(
                request,
                art,
                &crate::dispatch::Device::hopper_with_sms(run.sms),
            )
            .map_err(|r| r.to_string())?
            .0
        }
    };
    let shape = split::workspace_shape(art, splits, (m, n));
    split::check_workspace(art, request.shape, &shape).map_err(|r| r.to_string())?;
    let w = put(dev, &vec![0xff; splits * m * n * 4], ElemType::F32, &shape);
    let mut with_w = roles.to_vec();
    with_w.push(("w", w));
    let (tensors, scalars) = by_role(art, &with_w, &[]).map_err(|e| e.to_string())?;
    let first = run.launch(art, dev, &tensors, &scalars)?;
    let reduce = split::reduce_of(art, request).ok_or_else(|| {
        format!(
            "no split-K reduce kernel writes {} with the {} epilogue{}",
            request.types.output.name(),
            request.epilogue.name(),
            if split::is_transposed(art) {
                " after transposed partials"
            } else {
                ""
            }
        )
    })?;
    // The transposed reduce's D, C and R are [M, N, 1] (`split::launch_plan`).
    if split::is_transposed(art) {
        for (role, meta) in &mut with_w {
            if ["d", "c", "res"].contains(role) {
                meta.shape.push(1);
                meta.strides.push(1);
            }
        }
    }
    // The reduce's α, β: the request's, or for per-tensor FP8 scales α = scale_a·scale_b.
    let (ra, rb) = split::reduce_scalars(request);
    let reduce_scalars: Vec<(&str, f32)> = scalar_roles
        .iter()
        .map(|&(name, v)| match name {
            "alpha" => (name, ra),
            "beta" => (name, rb),
            _ => (name, v),
        })
        .collect();
    let (tensors, scalars) =
        by_role(reduce, &with_w, &reduce_scalars).map_err(|e| e.to_string())?;
    let second = run.launch(reduce, dev, &tensors, &scalars)?;
    let stats = Stats {
        thread_instructions: first.thread_instructions + second.thread_instructions,
        warp_instructions: first.warp_instructions + second.warp_instructions,
        async_ops: first.async_ops + second.async_ops,
        ctas: first.ctas + second.ctas,
        wall: first.wall + second.wall,
        timeline: first.timeline,
    };
    Ok((stats, splits))
}
