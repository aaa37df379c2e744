//! The GEMM family's GPU checks (`tirx run`, the GPU tests): a config run on random data in
//! its own element types, D poisoned first, against the f64 reference
//! ([`super::reference`]) within the output type's tolerance — plain, scaled
//! (D = α·A·op(B) + β·C), fused (D = act(A·Bᵀ + bias)) and FP8 (D = s ⊙ A·Bᵀ with per-tensor,
//! row-wise or block-wise scales, [`check_fp8`], against [`super::fp8_ref`]).

use super::fp8_ref::{self, Fp8Host, Fp8ScaleMode, Fp8Scales, scaled_mm_f64};
use super::host::{GemmLaunch, launch_roles};
use super::reference::BOperand;
use super::request::{Fp8ScaleArgs, GemmTypes};
use crate::family::CheckReport;
use crate::reference::{HostElem, Rng, gemm_tn_f64, rel_frobenius};
use half::{bf16, f16};
use tirx::abi::ElemType;
use tirx::problem::{Act, BLayout};
use tirx::{KernelArtifact, Runtime, RuntimeError};

pub use super::request::GEMM_TOL;

/// Runs D = A·Bᵀ of `config` on random data in the config's element types (its signature's)
/// and compares with the f64 reference, within the output type's tolerance.
pub fn check_gemm(
    rt: &Runtime,
    launch: GemmLaunch,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_gemm_layout(rt, launch, BLayout::Tn, config, (m, n, k), seed)
}

/// [`check_gemm`] for D = A·B with B given K×N, against the f64 NN reference.
pub fn check_gemm_nn(
    rt: &Runtime,
    launch: GemmLaunch,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_gemm_layout(rt, launch, BLayout::Nn, config, (m, n, k), seed)
}

/// A GEMM check with B in `layout`, in the config's element types.
fn check_gemm_layout(
    rt: &Runtime,
    launch: GemmLaunch,
    layout: BLayout,
    config: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    Check {
        rt,
        launch,
        layout,
        config,
        shape: (m, n, k),
        scaled: None,
        seed,
    }
    .run()
}

/// Runs D = α·A·op(B) + β·C of a scaled kernel's `config` (B in `layout`) on
/// random data (C random, or all NaN where β = 0, which the kernel must then not read; D
/// poisoned) and compares with the f64 reference α·A·op(B) + β·C.
#[allow(clippy::too_many_arguments)]
pub fn check_gemm_scaled(
    rt: &Runtime,
    launch: GemmLaunch,
    layout: BLayout,
    config: &str,
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    beta: f32,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    Check {
        rt,
        launch,
        layout,
        config,
        shape: (m, n, k),
        scaled: Some((alpha, beta)),
        seed,
    }
    .run()
}

impl Check<'_> {
    /// Runs the check in its config's element types.
    pub(crate) fn run(self) -> Result<CheckReport, RuntimeError> {
        // An unknown config: the launch reports it, with the configs that exist.
        let types = self.launch.types(self.config).unwrap_or(GemmTypes::BF16);
        let run = self;
        use ElemType::{Bf16, F16, F32};
        match (types.input, types.output) {
            (Bf16, Bf16) => run.typed::<bf16, bf16>(),
            (Bf16, F16) => run.typed::<bf16, f16>(),
            (Bf16, F32) => run.typed::<bf16, f32>(),
            (F16, Bf16) => run.typed::<f16, bf16>(),
            (F16, F16) => run.typed::<f16, f16>(),
            (F16, F32) => run.typed::<f16, f32>(),
            (F32, Bf16) => run.typed::<f32, bf16>(),
            (F32, F16) => run.typed::<f32, f16>(),
            (F32, F32) => run.typed::<f32, f32>(),
            // 8-bit floats in: the FP8 GEMMs, whose scales make them another problem
            // ([`check_fp8`]); the tcgen05 FP8 MMA kinds are checked in the emulator
            // (tests/kinds.rs).
            (i, o) => Err(RuntimeError::NoKernelFits {
                problem: format!("gemm {} -> {}", i.name(), o.name()),
                table: "  (8-bit floats in: only the FP8 GEMMs, with scales: `check_fp8`)".into(),
            }),
        }
    }
}

/// One GEMM check, before its element types are chosen.
pub(crate) struct Check<'r> {
    pub(crate) rt: &'r Runtime,
    pub(crate) launch: GemmLaunch,
    pub(crate) layout: BLayout,
    pub(crate) config: &'r str,
    pub(crate) shape: (usize, usize, usize),
    /// (α, β) of a scaled GEMM.
    pub(crate) scaled: Option<(f32, f32)>,
    pub(crate) seed: u64,
}

impl Check<'_> {
    /// Random A, B in `A`; D in `D`, poisoned first; compared with the f64 reference.
    fn typed<A: HostElem, D: HostElem>(&self) -> Result<CheckReport, RuntimeError> {
        let (rt, (m, n, k)) = (self.rt, self.shape);
        let mut rng = Rng::new(self.seed);
        let (ha, hb): (Vec<A>, Vec<A>) = (rng.values(m * k), rng.values(n * k));
        let a = rt.upload(&ha, &[m, k])?;
        let b = rt.upload(&hb, &self.layout.b_shape(m, n, k))?;
        let mut d = rt.zeros::<D>(&[m, n])?;
        rt.poison(&mut d)?;
        let mut want = self.layout.reference(&ha, &hb, m, n, k);
        match self.scaled {
            None => self.launch.launch(rt, self.config, &a, &b, &mut d)?,
            Some((alpha, beta)) => {
                let hc: Vec<D> = rng.values(m * n);
                let mut c = rt.upload(&hc, &[m, n])?;
                if beta == 0.0 {
                    rt.poison(&mut c)?;
                }
                for (w, cv) in want.iter_mut().zip(&hc) {
                    let old = if beta == 0.0 { 0.0 } else { cv.to_f64() };
                    *w = f64::from(alpha) * *w + f64::from(beta) * old;
                }
                let launch = self.launch;
                launch.launch_scaled(rt, self.config, alpha, &a, &b, beta, &c, &mut d)?;
            }
        }
        rt.synchronize()?;
        let got = rt.download(&d)?;
        let err = rel_frobenius(&got, &want);
        let tol = GemmTypes {
            input: A::ELEM,
            output: D::ELEM,
        }
        .tolerance();
        Ok(CheckReport {
            shape: (m, n, k),
            error: err,
            ok: err < tol,
            blocks: if err < tol {
                String::new()
            } else {
                block_map(&got, &want, m, n, tol)
            },
        })
    }
}

/// The 64×64 blocks of an M×N result, `.` where the block's relative error is under `tol`
/// and `X` where it is not, one line per block row (at most 32×32 blocks).
fn block_map<T: HostElem>(got: &[T], want: &[f64], m: usize, n: usize, tol: f64) -> String {
    let mut out = String::new();
    for bi in 0..m.div_ceil(64).min(32) {
        for bj in 0..n.div_ceil(64).min(32) {
            let (mut num, mut den) = (0.0f64, 0.0f64);
            for i in bi * 64..((bi + 1) * 64).min(m) {
                for j in bj * 64..((bj + 1) * 64).min(n) {
                    let (g, w) = (got[i * n + j].to_f64(), want[i * n + j]);
                    num += (g - w) * (g - w);
                    den += w * w;
                }
            }
            // NaN is wrong too: only a finite error under the tolerance is right.
            let right = num.sqrt() <= tol * den.sqrt().max(f64::MIN_POSITIVE);
            let bad = !right;
            out.push(if bad { 'X' } else { '.' });
        }
        out.push('\n');
    }
    out
}

/// Checks `kernel`'s `config` of D = act(A·Bᵀ + bias) (bf16 in and out) on an M×N×K
/// problem: random data against the f64 reference with the same epilogue, D poisoned first;
/// with a random residual R added after the activation when the artifact takes one (`res`,
/// [`tirx::problem::Epilogue::BiasResidual`]).
pub fn check_bias(
    rt: &Runtime,
    art: &KernelArtifact,
    act: Act,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let mut rng = Rng::new(seed);
    let (ha, hb): (Vec<bf16>, Vec<bf16>) = (rng.values(m * k), rng.values(n * k));
    let hbias: Vec<bf16> = (0..n)
        .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
        .collect();
    let a = rt.upload(&ha, &[m, k])?;
    let b = rt.upload(&hb, &[n, k])?;
    let bias = rt.upload(&hbias, &[n])?;
    // A residual epilogue's R (`res`), drawn after the other inputs.
    let hres: Option<Vec<bf16>> = art.elem_of("res").map(|_| rng.values(m * n));
    let res = hres.as_ref().map(|r| rt.upload(r, &[m, n])).transpose()?;
    let mut d = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut d)?;
    let mut roles = vec![("a", a.view()), ("b", b.view()), ("bias", bias.view())];
    if let Some(res) = &res {
        roles.push(("res", res.view()));
    }
    roles.push(("d", d.view()));
    launch_roles(rt, art, &roles, 1.0, 0.0)?;
    rt.synchronize()?;
    let got = rt.download(&d)?;
    let mut want = gemm_tn_f64(&ha, &hb, m, n, k);
    super::reference::apply_epilogue(&mut want, n, &hbias, act);
    if let Some(hres) = &hres {
        super::reference::add_residual(&mut want, hres);
    }
    let err = rel_frobenius(&got, &want);
    let tol = GemmTypes::BF16.tolerance();
    Ok(CheckReport {
        shape: (m, n, k),
        error: err,
        ok: err < tol,
        blocks: if err < tol {
            String::new()
        } else {
            block_map(&got, &want, m, n, tol)
        },
    })
}

/// The per-tensor scales `tirx run` and `tirx sim` give an FP8 GEMM (`scale_a`, `scale_b`):
/// neither 1, and their product negative, so a lost or swapped scale shows.
pub const FP8_TENSOR_SCALES: (f32, f32) = (0.375, -2.5);

/// The row-wise scales `tirx run` and `tirx sim` give an FP8 GEMM: `len` values uniform in
/// [0.5, 2.5) from `rng`.
pub fn fp8_row_scales(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| 1.5 + rng.unit()).collect()
}

/// `tirx run` of an FP8 GEMM (`Epilogue::ScaleTensor`, `ScaleRows` or `ScaleBlocks`, B given
/// N×K) on an M×N×K problem: A and B uniform in [−1, 1) rounded to the artifact's FP8 type
/// (the reference reads the rounded values), the scales of [`FP8_TENSOR_SCALES`] or
/// [`fp8_row_scales`] (one per row, or one per block), D poisoned first; every element against the f64 reference of
/// [`super::fp8_ref`] within its bound for the tensor core's FP8 accumulation. The error
/// reported is the relative Frobenius error; a failure names the first element out of bounds.
pub fn check_fp8(
    rt: &Runtime,
    art: &KernelArtifact,
    mode: Fp8ScaleMode,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    use ElemType::{Bf16, E4m3, E5m2, F16, F32};
    use tirx::{e4m3, e5m2};
    // A split-K artifact writes f32 partials; its plan's D is, in the family's checks, bf16.
    let d = if super::split::is_partial(art) {
        Some(Bf16)
    } else {
        art.elem_of("d")
    };
    match (art.elem_of("a"), d) {
        (Some(E4m3), Some(Bf16)) => fp8_typed::<e4m3, bf16>(rt, art, mode, shape, seed),
        (Some(E4m3), Some(F16)) => fp8_typed::<e4m3, f16>(rt, art, mode, shape, seed),
        (Some(E4m3), Some(F32)) => fp8_typed::<e4m3, f32>(rt, art, mode, shape, seed),
        (Some(E5m2), Some(Bf16)) => fp8_typed::<e5m2, bf16>(rt, art, mode, shape, seed),
        (Some(E5m2), Some(F16)) => fp8_typed::<e5m2, f16>(rt, art, mode, shape, seed),
        (Some(E5m2), Some(F32)) => fp8_typed::<e5m2, f32>(rt, art, mode, shape, seed),
        (i, o) => Err(RuntimeError::NoKernelFits {
            problem: format!("an FP8 GEMM check of `{}/{}`", art.kernel, art.config),
            table: format!("  it takes {i:?} -> {o:?}, not E4M3/E5M2 in and bf16/f16/f32 out\n"),
        }),
    }
}

/// [`check_fp8`] in A's type `A` and D's type `D`.
fn fp8_typed<A: Fp8Host, D: HostElem>(
    rt: &Runtime,
    art: &KernelArtifact,
    mode: Fp8ScaleMode,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let mut rng = Rng::new(seed);
    let ha: Vec<A> = (0..m * k).map(|_| A::quantise(rng.unit())).collect();
    let hb: Vec<A> = (0..n * k).map(|_| A::quantise(rng.unit())).collect();
    let (sa_shape, sb_shape) = mode.shapes((m, n, k));
    let scales = match mode {
        Fp8ScaleMode::Rows => {
            let sa = fp8_row_scales(&mut rng, m);
            Fp8Scales::Rows(sa, fp8_row_scales(&mut rng, n))
        }
        Fp8ScaleMode::Blocks | Fp8ScaleMode::BlocksMn => {
            let sa = fp8_row_scales(&mut rng, sa_shape.iter().product());
            let sb = fp8_row_scales(&mut rng, sb_shape.iter().product());
            mode.vectors(sa, sb).expect("block scales")
        }
        Fp8ScaleMode::Tensor => Fp8Scales::Tensor(FP8_TENSOR_SCALES.0, FP8_TENSOR_SCALES.1),
    };
    let a = rt.upload(&ha, &[m, k])?;
    let b = rt.upload(&hb, &[n, k])?;
    let (sa, sb) = match &scales {
        Fp8Scales::Rows(sa, sb) | Fp8Scales::Blocks(sa, sb) | Fp8Scales::BlocksMn(sa, sb) => {
            (rt.upload(sa, &sa_shape)?, rt.upload(sb, &sb_shape)?)
        }
        Fp8Scales::Tensor(x, y) => (rt.upload(&[*x], &[1])?, rt.upload(&[*y], &[1])?),
    };
    let mut d = rt.zeros::<D>(&[m, n])?;
    rt.poison(&mut d)?;
    let roles = [
        ("a", a.view()),
        ("b", b.view()),
        ("sa", sa.view()),
        ("sb", sb.view()),
        ("d", d.view()),
    ];
    let (x, y) = match scales {
        Fp8Scales::Tensor(x, y) => (x, y),
        Fp8Scales::Rows(..) | Fp8Scales::Blocks(..) | Fp8Scales::BlocksMn(..) => (1.0, 1.0),
    };
    if super::split::is_partial(art) {
        // An FP8 split-K artifact runs its plan: partials, then the reduce applying the scales.
        let (sav, sbv) = (sa.view(), sb.view());
        let args = match mode {
            Fp8ScaleMode::Rows => Fp8ScaleArgs::Rows(&sav, &sbv),
            Fp8ScaleMode::Blocks => Fp8ScaleArgs::Blocks(&sav, &sbv),
            Fp8ScaleMode::BlocksMn => Fp8ScaleArgs::BlocksMn(&sav, &sbv),
            Fp8ScaleMode::Tensor => Fp8ScaleArgs::Tensor(x, y),
        };
        super::split::launch_fp8_split(rt, art, &roles, args)?;
    } else {
        crate::family::launch_roles(rt, art, &roles, &[("scale_a", x), ("scale_b", y)])?;
    }
    rt.synchronize()?;
    let got = rt.download(&d)?;
    let values = |h: &[A]| h.iter().map(|v| v.value()).collect::<Vec<f64>>();
    let (want, mag) = scaled_mm_f64(&values(&ha), &values(&hb), (m, n, k), &scales);
    let got64: Vec<f64> = got.iter().map(|g| g.to_f64()).collect();
    let verdict = fp8_ref::check(
        &got64,
        (&want, &mag),
        (scales.check_k(k), D::ELEM, false),
        n,
    );
    Ok(CheckReport {
        shape: (m, n, k),
        error: rel_frobenius(&got, &want),
        ok: verdict.is_ok(),
        blocks: verdict.err().map_or_else(String::new, |e| format!("{e}\n")),
    })
}
