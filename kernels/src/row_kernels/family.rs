//! The rows family: softmax, RMSNorm and LayerNorm row by row, and the elementwise
//! `y = silu(x)·g`, as [`crate::family::Family`] sees it.
//!
//! - Problems: `Problem::Row(op)` and `Problem::SiluMul`.
//! - Requests: [`RowRequest`] (`request.rs`: op, capacity, tensors, planner; cost by capacity)
//!   and [`SiluMulRequest`].
//! - Reference: `crate::rows::reference` (f64, sampled rows on the GPU) and `silu(x)·g` in f64.
//! - Host entries and launch by role: `host.rs`.
//!
//! Default shape: 3 rows of 296 columns (592-byte rows, which the staged kernels' tensor maps
//! take; no power of two), or of the kernel's capacity less 8 where it holds fewer (a row
//! kernel computes the first `C` columns of a row, and the host never gives it a longer one).

use half::bf16;
use tirx::problem::{Problem, RowOp};
use tirx::runtime::TensorMeta;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};
use tirx_sim::{Device as SimDevice, Stats};

use super::host::{check as check_row, check_silu_mul};
use super::request::{RowRequest, capacity};
use crate::dispatch::tune::{self, Key};
use crate::dispatch::{self, Choice, Device, ProblemDef, Reject};
use crate::family::{CheckReport, Family, Shape, SimRun, by_role, launch_roles};
use crate::reference::Rng;
use crate::rows::{RowProblem, reference};
use crate::simulate::{download, upload};

/// The rows family.
pub struct Rows;

/// Columns of the default row (see the module docs).
const DEFAULT_COLS: usize = 296;

impl Family for Rows {
    fn name(&self) -> &'static str {
        "rows"
    }

    fn owns(&self, problem: Problem) -> bool {
        matches!(problem, Problem::Row(_) | Problem::SiluMul)
    }

    fn request(
        &self,
        art: &KernelArtifact,
        (m, n, _): Shape,
    ) -> Result<Box<dyn ProblemDef>, RuntimeError> {
        match art.problem {
            Some(Problem::Row(op)) => Ok(Box::new(RowRequest::contiguous(op, m, n))),
            _ => Ok(Box::new(SiluMulRequest::contiguous(m, n))),
        }
    }

    fn default_shape(&self, art: &KernelArtifact) -> Shape {
        let cols = match capacity(art) {
            Some(c) if c < DEFAULT_COLS => c.saturating_sub(8).max(8),
            _ => DEFAULT_COLS,
        };
        (3, cols, 0)
    }

    fn check(
        &self,
        rt: &Runtime,
        art: &'static KernelArtifact,
        (m, n, _): Shape,
        seed: u64,
    ) -> Result<CheckReport, RuntimeError> {
        match art.problem {
            Some(Problem::Row(op)) => check_row(rt, art, op, (m, n), seed),
            _ => check_silu_mul(rt, art, (m, n), seed),
        }
    }

    fn simulate(
        &self,
        art: &KernelArtifact,
        (m, n, _): Shape,
        run: &SimRun,
    ) -> Result<(Stats, String), String> {
        match art.problem {
            Some(Problem::Row(op)) => {
                // A row kernel computes the first `C` columns of a row (its capacity); the host
                // never gives it a longer row, so neither does the emulator.
                if let Some(c) = capacity(art).filter(|c| *c < n) {
                    return Err(format!(
                        "it holds rows of {c} columns, not {n} (give --n {c} or less)"
                    ));
                }
                simulate_row(art, op, (m, n), run)
            }
            _ => simulate_silu_mul(art, (m, n), run),
        }
    }
}

/// A row op in the emulator on random rows (a spread of magnitudes), against the f64
/// reference within its tolerance.
fn simulate_row(
    art: &KernelArtifact,
    op: RowOp,
    (m, n): (usize, usize),
    run: &SimRun,
) -> Result<(Stats, String), String> {
    let mut rng = Rng::new(run.seed);
    let scale = 1.0 + 7.0 * rng.unit();
    let x: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32((rng.unit() * 2.0 - 1.0) * scale))
        .collect();
    let w: Vec<bf16> = (0..n).map(|_| bf16::from_f32(0.5 + rng.unit())).collect();
    let b: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
    let p = RowProblem::new(op, m, n);
    let dev = &mut SimDevice::new();
    let ym = upload(dev, &[], &[m, n]);
    let xm = upload(dev, &x, &[m, n]);
    let xf = xm.merge_outer().expect("a contiguous x");
    let roles = [
        ("x", xm),
        ("xf", xf),
        ("y", ym.clone()),
        ("w", upload(dev, &w, &[n])),
        ("b", upload(dev, &b, &[n])),
    ];
    let (tensors, scalars) = by_role(art, &roles, &[("eps", p.eps)]).map_err(|e| e.to_string())?;
    let stats = run.launch(art, dev, &tensors, &scalars)?;
    let got = download(dev, &ym);
    let want = reference::reference(
        &p,
        &x,
        op.takes_weight().then_some(&w[..]),
        op.takes_bias().then_some(&b[..]),
    );
    let err = reference::check(op, &got, &want, n).map_err(|e| e.to_string())?;
    Ok((
        stats,
        format!("max error {err:.2e} (tolerance {:.2e})", reference::RTOL),
    ))
}

/// `y = silu(x)·g` in f64, elementwise.
pub fn silu_mul_f64(x: f64, g: f64) -> f64 {
    x / (1.0 + (-x).exp()) * g
}

/// `silu_mul` in the emulator: every element against [`silu_mul_f64`] within the row ops'
/// bf16 tolerance.
fn simulate_silu_mul(
    art: &KernelArtifact,
    (m, n): (usize, usize),
    run: &SimRun,
) -> Result<(Stats, String), String> {
    let mut rng = Rng::new(run.seed);
    let xs: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32(8.0 * rng.unit() - 4.0))
        .collect();
    let gs: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
        .collect();
    let dev = &mut SimDevice::new();
    let y = upload(dev, &[], &[m, n]);
    let roles = [
        ("x", upload(dev, &xs, &[m, n])),
        ("g", upload(dev, &gs, &[m, n])),
        ("y", y.clone()),
    ];
    let (tensors, _) = by_role(art, &roles, &[]).map_err(|e| e.to_string())?;
    let stats = run.launch(art, dev, &tensors, &[])?;
    let mut worst = 0.0f64;
    for (i, ((xv, gv), yv)) in xs.iter().zip(&gs).zip(download(dev, &y)).enumerate() {
        let want = silu_mul_f64(xv.to_f64(), gv.to_f64());
        let err = (yv.to_f64() - want).abs() / (want.abs() + 1e-2);
        if !err.is_finite() || err > reference::RTOL {
            return Err(format!("element {i} is {yv}, the reference {want:.6e}"));
        }
        worst = worst.max(err);
    }
    Ok((
        stats,
        format!("max error {worst:.2e} (tolerance {:.2e})", reference::RTOL),
    ))
}

/// One `y = silu(x)·g` to run: `x`, `g`, `y`, all [M, N] of one element type.
#[derive(Clone, Debug)]
pub struct SiluMulRequest {
    /// `x`, `g`, `y`.
    pub tensors: [TensorMeta; 3],
}

impl SiluMulRequest {
    /// The request on contiguous bf16 tensors at 256-byte aligned addresses.
    pub fn contiguous(m: usize, n: usize) -> SiluMulRequest {
        let meta = TensorMeta::row_major(tirx::abi::ElemType::Bf16, &[m, n], 0);
        SiluMulRequest {
            tensors: [meta.clone(), meta.clone(), meta],
        }
    }

    /// The request on the tensors given.
    pub fn on(x: &TensorArg<'_>, g: &TensorArg<'_>, y: &TensorArg<'_>) -> SiluMulRequest {
        SiluMulRequest {
            tensors: [x.meta().clone(), g.meta().clone(), y.meta().clone()],
        }
    }

    fn dims(&self) -> (usize, usize) {
        let s = &self.tensors[0].shape;
        (
            s.first().copied().unwrap_or(0),
            s.get(1).copied().unwrap_or(0),
        )
    }
}

impl ProblemDef for SiluMulRequest {
    fn describe(&self) -> String {
        let (m, n) = self.dims();
        format!("silu_mul of {m}x{n} {}", self.tensors[0].elem.name())
    }

    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        if artifact.problem != Some(Problem::SiluMul) {
            return Err(Reject::problem(artifact));
        }
        match artifact.elem_of("x") {
            Some(e) if e == self.tensors[0].elem => Ok(()),
            e => Err(Reject::Types { found: vec![e] }),
        }
    }

    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>) {
        let [x, g, y] = self.tensors.clone();
        by_role(artifact, &[("x", x), ("g", g), ("y", y)], &[]).unwrap_or_default()
    }

    /// The elements the grid's `R × C` tiles cover, masked tails included (millions): a
    /// memory-bound op runs in the time of what its CTAs load and store, and a tile past the
    /// tensor's edge still takes its CTA's slot. Equal coverage is decided by the dispatcher's
    /// tie order (the finer grid first).
    fn cost(&self, artifact: &KernelArtifact, _device: &Device) -> Result<f64, Reject> {
        let (m, n) = self.dims();
        let (Some(r), Some(c)) = (artifact.int("R"), artifact.int("C")) else {
            return Err(Reject::Unranked(
                "the cost model needs the tile constants R and C".into(),
            ));
        };
        let (r, c) = (r.max(1) as usize, c.max(1) as usize);
        Ok((m.div_ceil(r) * r * n.div_ceil(c) * c) as f64 / 1e6)
    }

    fn cache_key(&self, device: &Device) -> Key {
        let (m, n) = self.dims();
        Key {
            device: device.name.clone(),
            sms: device.limits.sm_count,
            problem: "silu_mul".into(),
            types: self.tensors[0].elem.name().into(),
            bucket: [tune::bucket(m), tune::bucket(n), 0],
            align: [tune::alignment(m), tune::alignment(n), 0],
        }
    }
}

/// `y = silu(x)·g` on the host's choice of kernel for these tensors; returns the choice.
pub fn silu_mul(
    rt: &Runtime,
    x: &Tensor<bf16>,
    g: &Tensor<bf16>,
    y: &mut Tensor<bf16>,
) -> Result<Choice, RuntimeError> {
    let (xv, gv, yv) = (x.view(), g.view(), y.view());
    let request = SiluMulRequest::on(&xv, &gv, &yv);
    let choice = dispatch::choose(
        &request,
        &crate::catalogue::all(),
        &Device::of(rt)?,
        dispatch::tune::Cache::host(),
    )?;
    launch_roles(rt, choice.artifact, &[("x", xv), ("g", gv), ("y", yv)], &[])?;
    Ok(choice)
}
