//! `tirx bench gemm --epilogue E`: our fused GEMM D = act(A·Bᵀ + bias) (TN, bf16 in and out,
//! f32 accumulation, bias a bf16 vector of length N added per column) against cuBLASLt running
//! its own fused epilogue on the same buffers, in one process, by the GEMM bench's method
//! ([`super::sweep`]: warm-up, interleaved rounds timed by CUDA events, the median, inputs
//! rotated past L2). Ours is a closure ([`FusedLaunch`]), so the bench does not depend on how
//! the kernel is chosen or launched.
//!
//! cuBLASLt's epilogue for each of ours ([`Baseline::of`]): `bias` → `CUBLASLT_EPILOGUE_BIAS`,
//! `bias-relu` → `_RELU_BIAS`, `bias-gelu` → `_GELU_BIAS` (GELU's tanh form on both sides, see
//! [`super::cublaslt`]), `bias-silu` → `_BIAS`: cuBLASLt has no SiLU epilogue, so there its
//! column computes A·Bᵀ + bias, less work than ours, and the table, the JSON and the plot say
//! so.
//!
//! Data: A and the bias uniform in [-1, 1) (bf16), B uniform in [-1, 1) times 2^-e
//! ([`b_scale`]), so that A·Bᵀ has a standard deviation between 0.7 and 1.4 at any K.
//! Unscaled, A·Bᵀ would spread as √K/3 (21 at K = 4096): the activations would act as the
//! identity or zero on nearly every element, and a GELU computed as a ReLU (5% of ‖D‖ apart
//! even at a spread of 2.7), or a bias left out, would pass the 1% tolerance. At this scale any
//! two of the four epilogues differ by 13% of ‖D‖ or more, a missing bias by far more. A
//! power of two keeps B's bits as the plain bench's, only the exponent shifted.
//!
//! Checks, untimed, after the rounds (D of set 0 poisoned before each checked run, as in the
//! GEMM bench): cuBLASLt's output against the f64 reference of its own epilogue over three
//! 64×64 blocks (top-left, centre, bottom-right: the bias of the first and the last columns,
//! the tails), over the tolerance failing the row; ours against the f64 reference of ours over
//! the same blocks, and all of D (a strided sample above 8192², [`sweep::sample_stride`])
//! against cuBLASLt's, through the activation on the host where cuBLASLt's epilogue lacks it.

use std::path::{Path, PathBuf};

use half::bf16;
use indicatif::ProgressBar;
use tirx::{Runtime, RuntimeError, Tensor};

use super::cublaslt::{CublasLt, LtEpilogue};
use super::json::{EpilogueReportJson, ReportJson};
use super::report::{Candidate, Report, Row, shape_label};
use super::sweep::{self, L2_BYTES, MEMORY_CAP, drop_out, judge, sample_stride, time_rounds};
use super::{BenchError, RUNS, WARMUP_MS, progress, write};
use crate::gemm::check::GEMM_TOL;
use crate::gemm::reference::{Act, activate, apply_epilogue, formula};
use crate::gemm::request::GemmTypes;
use crate::reference::{Rng, gemm_tn_f64, rel_frobenius};

/// Our fused launch: `(rt, a [M,K], b [N,K], bias [N], d [M,N])`, all bf16, queues
/// D = act(A·Bᵀ + bias) on `rt`'s stream for the bench's epilogue. A shape it cannot run is
/// an `Err` (e.g. [`RuntimeError::NoKernelFits`]), and the bench then marks ours refused.
pub type FusedLaunch<'a> = dyn Fn(
        &Runtime,
        &Tensor<bf16>,
        &Tensor<bf16>,
        &Tensor<bf16>,
        &mut Tensor<bf16>,
    ) -> Result<(), RuntimeError>
    + 'a;

/// The bias is uniform in [-BIAS_SCALE, BIAS_SCALE) (a power of two, so exact in bf16), of the
/// order of the spread of A·Bᵀ ([`b_scale`]), so neither hides the other.
pub const BIAS_SCALE: f32 = 1.0;

/// Side of the checked blocks.
const BLOCK: usize = 64;

/// What cuBLASLt runs against one of our epilogues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Baseline {
    /// cuBLASLt's fused epilogue.
    pub epilogue: LtEpilogue,
    /// The activation it applies after the bias: ours, or [`Act::None`] where cuBLASLt has no
    /// epilogue for ours (SiLU).
    pub computes: Act,
}

impl Baseline {
    /// cuBLASLt's closest epilogue to `act` (see the module docs).
    pub fn of(act: Act) -> Baseline {
        let (epilogue, computes) = match act {
            Act::None => (LtEpilogue::Bias, Act::None),
            Act::Relu => (LtEpilogue::ReluBias, Act::Relu),
            Act::Gelu => (LtEpilogue::GeluBias, Act::Gelu),
            Act::Silu => (LtEpilogue::Bias, Act::None),
        };
        Baseline { epilogue, computes }
    }

    /// The activation the host applies to cuBLASLt's output before comparing ours with it:
    /// [`Act::None`] where cuBLASLt computed ours, else ours (the baseline then stops at the
    /// bias).
    pub fn host_after(self, act: Act) -> Act {
        if self.computes == act { Act::None } else { act }
    }
}

/// A·Bᵀ spreads as √K / B_SPREAD unscaled (the standard deviation of a sum of K products of
/// two uniforms in [-1, 1), each of variance 1/9), which [`b_scale`] divides out.
pub const B_SPREAD: f64 = 3.0;

/// B's scale at reduction length `k`: 2^-e with e = round(log2(√K / [`B_SPREAD`])), at most
/// 2^0, which brings the standard deviation of A·Bᵀ to between 1/√2 and √2.
pub fn b_scale(k: usize) -> f32 {
    let e = ((k as f64).sqrt() / B_SPREAD).log2().round().max(0.0);
    (-e).exp2() as f32
}

/// The shapes measured by default: 8192³ and LLM projections at M = 8192 (N, K) = (4096,
/// 4096), (14336, 4096) (up-projection), (4096, 14336) (down-projection), (28672, 8192).
pub fn default_shapes() -> Vec<(usize, usize, usize)> {
    vec![
        (8192, 8192, 8192),
        (8192, 4096, 4096),
        (8192, 14336, 4096),
        (8192, 4096, 14336),
        (8192, 28672, 8192),
    ]
}

/// The JSON file written by default for `act`: `bench-gemm-bias-gelu.json`.
pub fn default_json(act: Act) -> PathBuf {
    PathBuf::from(format!("bench-gemm-{}.json", act.epilogue_name()))
}

/// The three checked blocks of an M×N output, `(row, col, rows, cols)`: top-left, centre,
/// bottom-right, each 64×64 or the whole dimension if smaller; repeats left out.
pub fn blocks(m: usize, n: usize) -> Vec<(usize, usize, usize, usize)> {
    let (bm, bn) = (m.min(BLOCK), n.min(BLOCK));
    let mut out = Vec::new();
    for (r, c) in [(0, 0), ((m - bm) / 2, (n - bn) / 2), (m - bm, n - bn)] {
        if !out.contains(&(r, c, bm, bn)) {
            out.push((r, c, bm, bn));
        }
    }
    out
}

/// ‖got − post(theirs)‖_F / ‖post(theirs)‖_F over every `stride`-th element, `post` applied to
/// cuBLASLt's output on the host ([`Baseline::host_after`]); NaN or infinity gives infinity.
pub fn rel_err_after(got: &[bf16], theirs: &[bf16], post: Act, stride: usize) -> f64 {
    let pairs = got
        .iter()
        .step_by(stride)
        .zip(theirs.iter().step_by(stride));
    super::sweep::rel_frobenius_of(pairs.map(|(g, t)| (g.to_f64(), activate(post, t.to_f64()))))
}

/// The device buffers of one shape (one set per rotation slot) and the f64 references of the
/// checked blocks.
struct Buffers {
    shape: (usize, usize, usize),
    a: Vec<Tensor<bf16>>,
    b: Vec<Tensor<bf16>>,
    bias: Vec<Tensor<bf16>>,
    d: Vec<Tensor<bf16>>,
    /// Ours' reference over [`blocks`], block after block, each row-major.
    ours_ref: Vec<f64>,
    /// cuBLASLt's reference (its own epilogue) over the same elements.
    lt_ref: Vec<f64>,
}

impl Buffers {
    fn new(
        rt: &Runtime,
        (m, n, k): (usize, usize, usize),
        act: Act,
        baseline: Baseline,
    ) -> Result<Buffers, BenchError> {
        let set = 2 * (m * k + n * k + m * n + n);
        let sets = sweep::rotation_within(set, L2_BYTES, MEMORY_CAP);
        let mut rng = Rng::new(2);
        let ha: Vec<bf16> = rng.values(m * k);
        let scale = |v: Vec<bf16>, s: f32| -> Vec<bf16> {
            v.into_iter()
                .map(|x| bf16::from_f32(x.to_f32() * s))
                .collect()
        };
        let hb = scale(rng.values(n * k), b_scale(k));
        let hbias = scale(rng.values(n), BIAS_SCALE);
        let upload = |h: &[bf16], dims: &[usize]| -> Result<Vec<Tensor<bf16>>, BenchError> {
            (0..sets).map(|_| Ok(rt.upload(h, dims)?)).collect()
        };
        let (a, b, bias) = (
            upload(&ha, &[m, k])?,
            upload(&hb, &[n, k])?,
            upload(&hbias, &[n])?,
        );
        let d = (0..sets)
            .map(|_| rt.zeros(&[m, n]))
            .collect::<Result<_, _>>()?;
        let (mut ours_ref, mut lt_ref) = (Vec::new(), Vec::new());
        for (r, c, rows, cols) in blocks(m, n) {
            let acc = gemm_tn_f64(
                &ha[r * k..(r + rows) * k],
                &hb[c * k..(c + cols) * k],
                rows,
                cols,
                k,
            );
            for (out, act) in [(&mut ours_ref, act), (&mut lt_ref, baseline.computes)] {
                let mut block = acc.clone();
                apply_epilogue(&mut block, cols, &hbias[c..c + cols], act);
                out.extend(block);
            }
        }
        Ok(Buffers {
            shape: (m, n, k),
            a,
            b,
            bias,
            d,
            ours_ref,
            lt_ref,
        })
    }

    /// Poisons D of set 0, runs `run` on set 0, downloads D: the output and its values over
    /// [`blocks`], in the references' order.
    fn checked(
        &mut self,
        rt: &Runtime,
        run: impl FnOnce(&mut Buffers) -> Result<(), BenchError>,
    ) -> Result<(Vec<bf16>, Vec<bf16>), BenchError> {
        let (m, n, _) = self.shape;
        rt.poison(&mut self.d[0])?;
        run(self)?;
        let got = rt.download(&self.d[0])?;
        let mut sampled = Vec::with_capacity(self.ours_ref.len());
        for (r, c, rows, cols) in blocks(m, n) {
            for i in r..r + rows {
                sampled.extend_from_slice(&got[i * n + c..i * n + c + cols]);
            }
        }
        Ok((got, sampled))
    }
}

/// Measures one shape: cuBLASLt (participant 0, `baseline`'s epilogue) and ours (participant 1)
/// on the same buffers, timed in interleaved rounds, then checked (module docs).
#[allow(clippy::too_many_arguments)]
fn measure_shape(
    rt: &Runtime,
    lt: &CublasLt,
    act: Act,
    baseline: Baseline,
    ours_name: &str,
    ours: &FusedLaunch<'_>,
    shape: (usize, usize, usize),
    progress: &ProgressBar,
) -> Result<Row, BenchError> {
    let label = shape_label(shape);
    progress.set_message(format!("{label} (allocating)"));
    let mut bufs = Buffers::new(rt, shape, act, baseline)?;
    let mut row = Row {
        shape,
        cublas: None,
        cublas_err_vs_ref: None,
        candidates: vec![Candidate {
            kernel: ours_name.to_string(),
            config: act.epilogue_name().to_string(),
            timing: None,
            err_vs_cublas: None,
            err_vs_ref: None,
            failure: None,
            splits: None,
        }],
        failure: None,
        rounds: 0,
    };
    let plan = match lt.gemm_epilogue(shape, baseline.epilogue) {
        Ok(g) => Some(g),
        Err(e) => {
            row.failure = Some(format!("cuBLASLt: {e}"));
            None
        }
    };
    let run = |who: usize, bufs: &mut Buffers, set: usize| -> Result<(), BenchError> {
        let Buffers { a, b, bias, d, .. } = bufs;
        let (a, b, bias, d) = (&a[set], &b[set], &bias[set], &mut d[set]);
        match (who, &plan) {
            (0, Some(g)) => g.run_epilogue(a, b, bias, d),
            (0, None) => Err(BenchError::Cublas("no plan for this shape".into())),
            _ => Ok(ours(rt, a, b, bias, d)?),
        }
    };
    let names = [
        format!("cuBLASLt {}", baseline.epilogue.name()),
        format!("{ours_name}/{}", act.epilogue_name()),
    ];
    let mut alive = vec![plan.is_some(), true];
    let sets = bufs.a.len();
    let timed = time_rounds(
        rt,
        &label,
        &names,
        alive.clone(),
        sets,
        progress,
        &mut |who, set| run(who, &mut bufs, set),
    )?;
    timed.record(&mut row, &mut alive);

    let say = |who: usize| progress.set_message(format!("{label} (checking {})", names[who]));
    check(
        rt,
        &mut bufs,
        &mut row,
        &mut alive,
        &run,
        baseline.host_after(act),
        &say,
    );
    Ok(row)
}

/// A launch of participant `who` (0: cuBLASLt, 1: ours) on buffer set `set`.
type Run<'a> = dyn Fn(usize, &mut Buffers, usize) -> Result<(), BenchError> + 'a;

/// The checked runs of the participants still `alive`, cuBLASLt's first, as ours is compared
/// with its output (through `post` on the host, [`Baseline::host_after`]); `say(who)` reports
/// progress. Records the errors in `row` (module docs).
fn check(
    rt: &Runtime,
    bufs: &mut Buffers,
    row: &mut Row,
    alive: &mut [bool],
    run: &Run<'_>,
    post: Act,
    say: &dyn Fn(usize),
) {
    let tol = GEMM_TOL;
    let mut theirs = None;
    if alive[0] {
        say(0);
        match bufs.checked(rt, |b| run(0, b, 0)) {
            Ok((got, sampled)) => {
                let err = rel_frobenius(&sampled, &bufs.lt_ref);
                row.cublas_err_vs_ref = Some(err);
                if err >= tol {
                    row.failure = Some(format!(
                        "cuBLASLt: rel. error {err:.3e} over three 64x64 blocks against the f64 \
                         reference"
                    ));
                }
                theirs = Some(got);
            }
            Err(e) => drop_out(row, alive, 0, &e),
        }
    }
    if alive[1] {
        say(1);
        match bufs.checked(rt, |b| run(1, b, 0)) {
            Ok((got, sampled)) => {
                let err_ref = rel_frobenius(&sampled, &bufs.ours_ref);
                let err_cublas = theirs
                    .as_deref()
                    .map(|t| rel_err_after(&got, t, post, sample_stride(got.len())));
                let part = "three 64x64 blocks";
                judge(&mut row.candidates[0], err_ref, part, err_cublas, tol);
            }
            Err(e) => drop_out(row, alive, 1, &e),
        }
    }
}

/// A whole run of the epilogue bench: the GEMM bench's [`Report`] (its `problem` the
/// epilogue's formula) and the epilogue on each side.
#[derive(Clone, Debug, PartialEq)]
pub struct EpilogueReport {
    /// Our epilogue.
    pub act: Act,
    /// cuBLASLt's.
    pub baseline: Baseline,
    /// The rows.
    pub report: Report,
}

impl EpilogueReport {
    /// The line that says what cuBLASLt's column computes.
    pub fn baseline_note(&self) -> String {
        let name = self.baseline.epilogue.name();
        if self.baseline.computes == self.act {
            format!(
                "cuBLASLt: {name}, the same epilogue ({})",
                formula(self.act)
            )
        } else {
            format!(
                "cuBLASLt: {name}, {}: cuBLASLt has no epilogue for {}, so its column does less \
                 work than ours",
                formula(self.baseline.computes),
                formula(self.act)
            )
        }
    }

    /// The table printed at the end: the baseline note, then the GEMM bench's table.
    pub fn table(&self) -> String {
        format!("{}\n{}", self.baseline_note(), self.report.table())
    }

    /// The JSON file's text ([`EpilogueReportJson`]).
    pub fn json(&self) -> String {
        EpilogueReportJson::from(self).to_text()
    }
}

impl From<&EpilogueReport> for EpilogueReportJson {
    fn from(r: &EpilogueReport) -> EpilogueReportJson {
        EpilogueReportJson {
            epilogue: r.act.epilogue_name().to_string(),
            cublaslt_epilogue: r.baseline.epilogue.name().to_string(),
            cublaslt_same_epilogue: r.baseline.computes == r.act,
            b_scale: format!("2^-round(log2(sqrt(K)/{B_SPREAD}))"),
            report: ReportJson::from(&r.report),
        }
    }
}

/// `tirx bench gemm --epilogue E`: for each shape (default [`default_shapes`]) times cuBLASLt
/// with its epilogue closest to `act` ([`Baseline::of`]) and `ours` (named `ours_name` in the
/// report) on the same buffers, checks both (module docs), prints the table, writes the JSON
/// to `json` (default [`default_json`]) and the SVG plot to `plot` (default: the JSON path
/// with a `.svg` extension).
///
/// Returns `Ok(true)` when every shape passed ([`Row::ok`]: cuBLASLt and ours ran and were
/// right), `Ok(false)` when some shape failed (the table says why); `Err` when nothing could be
/// measured (no cuBLASLt) or an output could not be written.
pub fn run_epilogue_bench(
    rt: &Runtime,
    act: Act,
    ours_name: &str,
    ours: &FusedLaunch<'_>,
    shapes: Option<Vec<(usize, usize, usize)>>,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<bool, BenchError> {
    let r = epilogue_report(rt, act, ours_name, ours, shapes, json, plot)?;
    Ok(r.report.rows.iter().all(Row::ok))
}

/// [`run_epilogue_bench`], returning the whole report.
pub fn epilogue_report(
    rt: &Runtime,
    act: Act,
    ours_name: &str,
    ours: &FusedLaunch<'_>,
    shapes: Option<Vec<(usize, usize, usize)>>,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<EpilogueReport, BenchError> {
    let lt = CublasLt::new(rt)?;
    let baseline = Baseline::of(act);
    let shapes = shapes.unwrap_or_else(default_shapes);
    let json = json.map_or_else(|| default_json(act), Path::to_path_buf);
    let plot = plot.map_or_else(|| json.with_extension("svg"), Path::to_path_buf);
    println!(
        "{} (compute capability {:?}), cuBLASLt {}; bf16 -> bf16 (f32 accumulation); {}, B \
         given NxK, bias [N] per column; {}; median of at least {RUNS} interleaved rounds \
         after at least {WARMUP_MS} ms of warm-up, inputs rotated past L2; {} shape(s)",
        rt.name(),
        rt.compute_capability(),
        lt.version(),
        formula(act),
        baseline.epilogue.name(),
        shapes.len(),
    );
    let bar = progress::bar(shapes.len());
    let mut rows = Vec::with_capacity(shapes.len());
    for &shape in &shapes {
        let row = measure_shape(rt, &lt, act, baseline, ours_name, ours, shape, &bar)
            .unwrap_or_else(|e| Row::failed(shape, e.to_string()));
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_with_message("done");
    let problem = if baseline.computes == act {
        formula(act).to_string()
    } else {
        format!(
            "{} vs cuBLASLt {}",
            formula(act),
            formula(baseline.computes)
        )
    };
    let r = EpilogueReport {
        act,
        baseline,
        report: Report {
            date: super::report::now(),
            device: rt.name().to_string(),
            cublaslt_version: lt.version(),
            types: GemmTypes::BF16.to_string(),
            problem,
            rows,
        },
    };
    print!("{}", r.table());
    write(&json, r.json().as_bytes())?;
    write(&plot, r.report.svg()?.as_bytes())?;
    println!("wrote {} and {}", json.display(), plot.display());
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::tests::report;
    use crate::reference::Rng;

    #[test]
    fn each_epilogue_has_its_baseline() {
        let b = Baseline::of;
        assert_eq!(b(Act::None).epilogue, LtEpilogue::Bias);
        assert_eq!(b(Act::Relu).epilogue, LtEpilogue::ReluBias);
        assert_eq!(b(Act::Gelu).epilogue, LtEpilogue::GeluBias);
        // cuBLASLt has no SiLU epilogue: the bias alone, the host applies SiLU to compare.
        assert_eq!(b(Act::Silu).epilogue, LtEpilogue::Bias);
        assert_eq!(b(Act::Silu).computes, Act::None);
        assert_eq!(b(Act::Silu).host_after(Act::Silu), Act::Silu);
        for act in [Act::None, Act::Relu, Act::Gelu] {
            assert_eq!(b(act).computes, act);
            assert_eq!(b(act).host_after(act), Act::None);
        }
    }

    #[test]
    fn b_scale_keeps_the_product_near_unit_spread() {
        for k in [64, 1000, 4096, 8192, 14336, 16384, 65536] {
            let s = b_scale(k);
            assert_eq!(s, s.log2().round().exp2(), "{k}: {s} is a power of two");
            let std = (k as f64).sqrt() / 3.0 * f64::from(s);
            assert!((0.7..1.42).contains(&std), "K = {k}: std {std}");
        }
        assert_eq!(b_scale(4096), 0.0625);
        assert_eq!(b_scale(14336), 0.03125);
        // Tiny K: no scaling up.
        assert_eq!(b_scale(8), 1.0);
    }

    /// With the bench's data, the checks tell the activations apart and see a missing bias:
    /// each pair of references differs by far more than the tolerance.
    #[test]
    fn the_scaled_data_makes_the_epilogue_visible() {
        let (m, n, k) = (32, 48, 4096);
        let mut rng = Rng::new(2);
        let a: Vec<bf16> = rng.values(m * k);
        let b: Vec<bf16> = rng
            .values::<bf16>(n * k)
            .into_iter()
            .map(|x| bf16::from_f32(x.to_f32() * b_scale(k)))
            .collect();
        let bias: Vec<bf16> = rng
            .values::<bf16>(n)
            .into_iter()
            .map(|x| bf16::from_f32(x.to_f32() * BIAS_SCALE))
            .collect();
        let acc = gemm_tn_f64(&a, &b, m, n, k);
        let with = |act| {
            let mut d = acc.clone();
            apply_epilogue(&mut d, n, &bias, act);
            d
        };
        let dist = |x: &[f64], y: &[f64]| {
            let num: f64 = x.iter().zip(y).map(|(p, q)| (p - q) * (p - q)).sum();
            (num / y.iter().map(|q| q * q).sum::<f64>()).sqrt()
        };
        let refs: Vec<Vec<f64>> = Act::ALL.iter().map(|&a| with(a)).collect();
        for i in 0..refs.len() {
            for j in 0..refs.len() {
                if i != j {
                    let d = dist(&refs[i], &refs[j]);
                    assert!(
                        d > 10.0 * GEMM_TOL,
                        "{:?} vs {:?}: {d}",
                        Act::ALL[i],
                        Act::ALL[j]
                    );
                }
            }
        }
        // The bias left out.
        assert!(dist(&acc, &refs[0]) > 10.0 * GEMM_TOL);
    }

    #[test]
    fn blocks_cover_both_corners_and_the_centre() {
        assert_eq!(
            blocks(8192, 4096),
            [(0, 0, 64, 64), (4064, 2016, 64, 64), (8128, 4032, 64, 64)]
        );
        // Odd sizes: the last block ends at the last row and column.
        assert_eq!(blocks(100, 70)[2], (36, 6, 64, 64));
        // Small: one block, the whole matrix.
        assert_eq!(blocks(40, 64), [(0, 0, 40, 64)]);
    }

    #[test]
    fn comparison_with_cublaslt_applies_the_missing_activation() {
        let f = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
        let theirs = f(&[1.0, -1.0, 2.0, 0.0]);
        assert_eq!(rel_err_after(&theirs, &theirs, Act::None, 1), 0.0);
        // Ours as SiLU of theirs, rounded to bf16: within bf16 rounding.
        let ours = f(&[0.731_059, -0.268_941, 1.761_594, 0.0]);
        assert!(rel_err_after(&ours, &theirs, Act::Silu, 1) < 5e-3);
        // Compared without the activation it is far off.
        assert!(rel_err_after(&ours, &theirs, Act::None, 1) > 0.1);
        // ReLU of theirs vs theirs: only the -1 differs; stride 2 skips it.
        let relu = f(&[1.0, 0.0, 2.0, 0.0]);
        assert!(rel_err_after(&relu, &theirs, Act::Relu, 1) == 0.0);
        assert!(rel_err_after(&relu, &theirs, Act::None, 1) > 0.3);
        assert_eq!(rel_err_after(&relu, &theirs, Act::None, 2), 0.0);
        let nan = f(&[f32::NAN, 0.0, 0.0, 0.0]);
        assert!(rel_err_after(&nan, &theirs, Act::None, 1).is_infinite());
    }

    fn epilogue_report_of(act: Act) -> EpilogueReport {
        EpilogueReport {
            act,
            baseline: Baseline::of(act),
            report: report(),
        }
    }

    #[test]
    fn the_json_round_trips_with_the_epilogue_fields() {
        for act in Act::ALL {
            let file = EpilogueReportJson::from(&epilogue_report_of(act));
            let text = file.to_text();
            assert_eq!(EpilogueReportJson::parse(&text).unwrap(), file, "{text}");
            assert!(text.ends_with("}\n"));
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["epilogue"], act.epilogue_name());
            assert_eq!(v["cublaslt_same_epilogue"], act != Act::Silu);
            assert_eq!(v["b_scale"], "2^-round(log2(sqrt(K)/3))");
            // The GEMM bench's fields sit at the top level, as in its own files.
            assert_eq!(v["device"], "NVIDIA H200");
            assert_eq!(v["rows"][0]["ratio"], 0.5);
        }
        let silu = EpilogueReportJson::from(&epilogue_report_of(Act::Silu));
        assert_eq!(silu.cublaslt_epilogue, "CUBLASLT_EPILOGUE_BIAS");
        // The GEMM bench's reader takes the file too (it ignores the epilogue's fields).
        let plain = ReportJson::parse(&silu.to_text()).unwrap();
        assert_eq!(plain, silu.report);
    }

    #[test]
    fn the_table_says_what_cublaslt_computes() {
        let gelu = epilogue_report_of(Act::Gelu).table();
        assert!(
            gelu.starts_with("cuBLASLt: CUBLASLT_EPILOGUE_GELU_BIAS, the same epilogue"),
            "{gelu}"
        );
        assert!(gelu.contains("geometric mean of ratios"), "{gelu}");
        let silu = epilogue_report_of(Act::Silu).table();
        assert!(
            silu.starts_with(
                "cuBLASLt: CUBLASLT_EPILOGUE_BIAS, D = A*B^T + bias: cuBLASLt has no epilogue \
                 for D = silu(A*B^T + bias), so its column does less work than ours"
            ),
            "{silu}"
        );
    }
}
