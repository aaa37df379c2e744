//! The block-scaled GEMM's data and f64 reference (`Epilogue::ScaleFactors`,
//! [`super::factors`]), and its run in the emulator (`tirx sim`, the catalogue's emulator
//! sweep).
//!
//! Data: values spread over ±2^±5 (so the blocks' factors differ), quantised by the
//! quantisers' host references (`rows::quant::quantise_mxfp8` / `quantise_nvfp4`: the
//! OCP MX recipe's power-of-two factor, NVFP4's UE4M3 factor), the factors laid out by
//! `tirx::runtime::scale_image`. The reference sums the exact products of the dequantised
//! values (element × its factor) in f64.
//!
//! Bound: `|want|·2⁻⁸ + Σ|a·b|·2⁻²⁰`, as the kernels' own emulator tests
//! (`tests/sim_mxfp8.rs`). The first term is D's BF16 rounding at its worst (half an ulp is
//! at most 2⁻⁸ of the value), so over tens of thousands of elements the worst error sits just
//! under 1 of the bound (`tirx sim` prints 0.99–1.00); the second is the f32 accumulation's,
//! room for 16 roundings of Σ|a·b|. More than half of D must be larger than its bound, so
//! that a D of zeros cannot pass.

use half::bf16;
use tirx::abi::ElemType;
use tirx::problem::Factors;
use tirx::runtime::{TensorMeta, e2m1x2, e4m3, scale_image, ue4m3, ue8m0};
use tirx::{Element, KernelArtifact, Runtime, RuntimeError};
use tirx_sim::{Device, Stats};

use super::factors::{factor_cols, image_shapes, values_per_elem};
use crate::family::{CheckReport, SimRun, by_role};
use crate::reference::Rng;
use crate::rows::quant::{quantise_mxfp8, quantise_nvfp4};
use crate::simulate::{decode, put};

/// How an operand's and a factor's host types are built from their bytes.
type FromBytes<A, F> = (fn(u8) -> A, fn(u8) -> F);

/// One operand quantised: its bytes, its factor image's bytes, and its exact values.
struct Operand {
    bytes: Vec<u8>,
    image: Vec<u8>,
    exact: Vec<f64>,
}

/// A block-scaled GEMM's inputs on M×N×K (K in `a`'s elements) and their exact values.
pub struct FactorData {
    factors: Factors,
    input: ElemType,
    shape: (usize, usize, usize),
    a: Operand,
    b: Operand,
}

impl FactorData {
    /// Random operands of `input` under `factors` from `seed`; `Err` for a combination with
    /// no quantiser here (MXFP4).
    pub fn random(
        factors: Factors,
        input: ElemType,
        (m, n, k): (usize, usize, usize),
        seed: u64,
    ) -> Result<FactorData, String> {
        let mut rng = Rng::new(seed);
        let a = operand(&mut rng, factors, input, (m, k))?;
        let b = operand(&mut rng, factors, input, (n, k))?;
        Ok(FactorData {
            factors,
            input,
            shape: (m, n, k),
            a,
            b,
        })
    }

    /// D[i][j] and Σ|a·b| over row `i` of A and row `j` of B, in f64.
    pub fn want(&self, i: usize, j: usize) -> (f64, f64) {
        let kv = self.shape.2 * values_per_elem(self.input);
        let (ra, rb) = (
            &self.a.exact[i * kv..(i + 1) * kv],
            &self.b.exact[j * kv..(j + 1) * kv],
        );
        ra.iter()
            .zip(rb)
            .fold((0.0, 0.0), |(s, g), (x, y)| (s + x * y, g + (x * y).abs()))
    }

    /// Every element of `got` (D, M×N row-major) against [`FactorData::want`] within the
    /// bound of the module's docs: the worst error as a fraction of its bound, or the first
    /// element out of it (or a reference mostly zero).
    pub fn compare(&self, got: &[f64]) -> Result<f64, String> {
        let (m, n, _) = self.shape;
        let (mut worst, mut nonzero) = (0.0f64, 0);
        for i in 0..m {
            for j in 0..n {
                let (want, mag) = self.want(i, j);
                let tol = want.abs() * 2f64.powi(-8) + mag * 2f64.powi(-20) + 1e-30;
                let g = got[i * n + j];
                let err = (g - want).abs();
                if err.is_nan() || err > tol {
                    return Err(format!("D[{i}][{j}] = {g}, want {want} (±{tol:.3e})"));
                }
                worst = worst.max(err / tol);
                nonzero += usize::from(want.abs() > tol);
            }
        }
        if nonzero <= m * n / 2 {
            return Err(format!(
                "the reference is mostly zero ({nonzero} of {})",
                m * n
            ));
        }
        Ok(worst)
    }

    /// `art` run on `rt`'s device on these inputs (A's type `A`, the factors' `F`, built from
    /// their bytes by `elem` and `factor`), D in BF16, compared as [`FactorData::compare`].
    fn check_on<A: Element, F: Element>(
        &self,
        rt: &Runtime,
        art: &KernelArtifact,
        (elem, factor): FromBytes<A, F>,
    ) -> Result<CheckReport, RuntimeError> {
        let (m, n, k) = self.shape;
        let (sfa_shape, sfb_shape) = image_shapes(self.factors, self.input, self.shape);
        let a = rt.upload(
            &self.a.bytes.iter().map(|&b| elem(b)).collect::<Vec<_>>(),
            &[m, k],
        )?;
        let b = rt.upload(
            &self.b.bytes.iter().map(|&b| elem(b)).collect::<Vec<_>>(),
            &[n, k],
        )?;
        let sfa = rt.upload(
            &self.a.image.iter().map(|&b| factor(b)).collect::<Vec<_>>(),
            &sfa_shape,
        )?;
        let sfb = rt.upload(
            &self.b.image.iter().map(|&b| factor(b)).collect::<Vec<_>>(),
            &sfb_shape,
        )?;
        let d = rt.zeros::<bf16>(&[m, n])?;
        let roles = [
            ("a", a.view()),
            ("b", b.view()),
            ("sfa", sfa.view()),
            ("sfb", sfb.view()),
            ("d", d.view()),
        ];
        crate::family::launch_roles(rt, art, &roles, &[])?;
        rt.synchronize()?;
        let got: Vec<f64> = rt.download(&d)?.iter().map(|v| v.to_f64()).collect();
        let verdict = self.compare(&got);
        let (mut err, mut norm) = (0.0, 0.0);
        for (i, g) in got.iter().enumerate() {
            let want = self.want(i / n, i % n).0;
            err += (g - want) * (g - want);
            norm += want * want;
        }
        Ok(CheckReport {
            shape: self.shape,
            error: (err / norm.max(f64::MIN_POSITIVE)).sqrt(),
            ok: verdict.is_ok(),
            blocks: verdict.err().map_or_else(String::new, |e| format!("{e}\n")),
        })
    }

    /// The tensors on `dev` by role (`a`, `b`, `sfa`, `sfb`), D's added by the caller.
    fn upload(&self, dev: &mut Device) -> Vec<(&'static str, TensorMeta)> {
        let (m, n, k) = self.shape;
        let (sfa, sfb) = image_shapes(self.factors, self.input, (m, n, k));
        let fe = self.factors.elem();
        vec![
            ("a", put(dev, &self.a.bytes, self.input, &[m, k])),
            ("b", put(dev, &self.b.bytes, self.input, &[n, k])),
            ("sfa", put(dev, &self.a.image, fe, &sfa)),
            ("sfb", put(dev, &self.b.image, fe, &sfb)),
        ]
    }
}

/// `rows` × `k` elements of `input` quantised under `factors`.
fn operand(
    rng: &mut Rng,
    factors: Factors,
    input: ElemType,
    (rows, k): (usize, usize),
) -> Result<Operand, String> {
    let kv = k * values_per_elem(input);
    let cols = factor_cols(factors, input, k);
    let x: Vec<bf16> = (0..rows * kv)
        .map(|_| {
            let e = (rng.unit() * 5.0).round() as i32;
            bf16::from_f64(f64::from(rng.unit()) * 2f64.powi(e))
        })
        .collect();
    let at = |r: usize, c: usize| r * kv + c;
    match (factors, input) {
        (Factors::Mx, ElemType::E4m3) => {
            let (q, f) = quantise_mxfp8(&x, rows, kv);
            let exact = (0..rows * kv)
                .map(|i| {
                    f64::from(e4m3(q[i]).to_f32()) * f[(i / kv) * cols + (i % kv) / 32].to_f64()
                })
                .collect();
            let image = scale_image(&f, rows, cols, ue8m0(127)).0;
            Ok(Operand {
                bytes: q,
                image: image.iter().map(|f| f.0).collect(),
                exact,
            })
        }
        (Factors::Nv, ElemType::E2m1x2) => {
            let (q, f) = quantise_nvfp4(&x, rows, kv);
            let mut exact = vec![0.0; rows * kv];
            for r in 0..rows {
                for c in (0..kv).step_by(2) {
                    let [lo, hi] = e2m1x2(q[at(r, c) / 2]).to_f64();
                    let s = f[r * cols + c / 16].to_f64();
                    (exact[at(r, c)], exact[at(r, c) + 1]) = (lo * s, hi * s);
                }
            }
            let image = scale_image(&f, rows, cols, ue4m3::from_f32(1.0)).0;
            Ok(Operand {
                bytes: q,
                image: image.iter().map(|f| f.0).collect(),
                exact,
            })
        }
        (f, t) => Err(format!(
            "no quantiser for {} operands under {} factors here",
            t.name(),
            f.elem().name()
        )),
    }
}

/// `tirx run` of a block-scaled GEMM (`Epilogue::ScaleFactors(factors)`, A and B of
/// `input`, D of `output`) on M×N×K: [`FactorData::random`] of `seed`, checked as
/// [`FactorData::compare`]; the relative Frobenius error reported. MXFP8 (E4M3, UE8M0) and
/// NVFP4 (`e2m1x2`, UE4M3) into BF16 (what ships); another combination is
/// `RuntimeError::NoKernelFits`.
pub fn check_factors(
    rt: &Runtime,
    art: &KernelArtifact,
    (factors, input, output): (Factors, ElemType, ElemType),
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let refuse = |why: String| RuntimeError::NoKernelFits {
        problem: format!(
            "a block-scaled GEMM check of `{}/{}`",
            art.kernel, art.config
        ),
        table: format!("  {why}\n"),
    };
    let data = FactorData::random(factors, input, shape, seed).map_err(refuse)?;
    match (factors, input, output) {
        (Factors::Mx, ElemType::E4m3, ElemType::Bf16) => data.check_on(rt, art, (e4m3, ue8m0)),
        (Factors::Nv, ElemType::E2m1x2, ElemType::Bf16) => data.check_on(rt, art, (e2m1x2, ue4m3)),
        (f, i, o) => Err(refuse(format!(
            "it takes {} with {} factors -> {}, not MXFP8 or NVFP4 into bf16",
            i.name(),
            f.elem().name(),
            o.name()
        ))),
    }
}

/// A block-scaled GEMM (`Epilogue::ScaleFactors(factors)`, A and B of `input`, D of
/// `output`) on M×N×K in the emulator: [`FactorData::random`], D poisoned (NaN), every
/// element of D within the bound of the module's docs of the f64 reference. Returns the
/// emulator's statistics and a line on the worst error.
pub fn simulate_factors(
    art: &KernelArtifact,
    (factors, input, output): (Factors, ElemType, ElemType),
    (m, n, k): (usize, usize, usize),
    run: &SimRun,
) -> Result<(Stats, String), String> {
    let data = FactorData::random(factors, input, (m, n, k), run.seed)?;
    let dev = &mut Device::new();
    let mut roles = data.upload(dev);
    let dbytes = m * n * output.bytes() as usize;
    let dm = put(dev, &vec![0xff; dbytes], output, &[m, n]);
    roles.push(("d", dm.clone()));
    let (tensors, scalars) = by_role(art, &roles, &[]).map_err(|e| e.to_string())?;
    let stats = run.launch(art, dev, &tensors, &scalars)?;
    let got = decode(
        &dev.read(dm.addr, dbytes).map_err(|e| e.to_string())?,
        output,
    );
    let worst = data.compare(&got)?;
    Ok((
        stats,
        format!(
            "K = {k}, {} factors, worst error {worst:.2} of the bound",
            factors.elem().name()
        ),
    ))
}
