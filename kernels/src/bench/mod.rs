//! `tirx bench`: timings on a GPU, measured the way peers measure: CUDA events around each
//! launch, warm-up first, the median of many timed runs, and inputs rotated over several
//! buffer sets whose total exceeds the L2 cache (60 MB on an H200) twice over, so repeated runs
//! do not read from L2. Every timed kernel's output is also checked.
//!
//! - [`copy`] and [`gemm`]: one kernel on one shape.
//! - [`run_gemm_bench`]: `tirx bench gemm`, our GEMM configs and cuBLASLt side by side in one
//!   process on the same buffers, timed in interleaved rounds (one run of each per round, so
//!   clock drift hits all alike), over a sweep of shapes ([`sweep`], whose docs give the
//!   method), with a progress bar ([`progress`]), then a table ([`report`]), a JSON file
//!   ([`json`]) and an SVG plot ([`plot`]).
//! - [`fp8`]: `tirx bench gemm --in e4m3`, the FP8 GEMMs against cuBLASLt's FP8 GEMM
//!   ([`cublaslt_fp8`]) with the same per-tensor or row-wise scales, by the same rounds.
//! - [`epilogue`]: `tirx bench gemm --epilogue`, a fused GEMM D = act(A·Bᵀ + bias) against
//!   cuBLASLt's own fused epilogues, by the same rounds (`sweep::time_rounds`), checked
//!   against the CPU reference of [`crate::gemm::reference`].
//!
//! Timing: each run is bracketed by its own pair of events, and the runs are queued without
//! waiting in between; the host reads the events only after the last run. The GPU therefore
//! stays busy, and a run's time is its kernel's, not the host's launch latency, as long as the
//! host queues faster than the GPU runs (for tiny shapes it does not, and that shows).

pub mod attention;
pub mod cublaslt;
pub mod cublaslt_fp8;
pub mod epilogue;
pub mod fp8;
pub mod json;
pub mod plot;
pub mod progress;
pub mod quant;
pub mod report;
pub mod rows;
pub mod sweep;

use std::path::{Path, PathBuf};

use crate::copy::family::CopyLaunch;
use crate::gemm::host::GemmLaunch;
use crate::gemm::request::GemmTypes;
use crate::reference::HostElem;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, DriverError};
use half::bf16;
use tirx::problem::BLayout;
use tirx::{Runtime, RuntimeError, Tensor};

/// Timed runs per measurement (the GEMM sweep's minimum number of rounds).
pub const RUNS: usize = 50;
/// Untimed runs first (the GEMM sweep's minimum per participant).
pub const WARMUP: usize = 5;
/// The GEMM sweep keeps warming up, in untimed interleaved rounds, until this much time has
/// passed: a 10 µs kernel run five times does not bring the GPU's clocks up.
pub const WARMUP_MS: f64 = 50.0;
/// The GEMM sweep times at least [`RUNS`] rounds, and more (up to [`MAX_RUNS`]) until the
/// rounds take about this long: small shapes get many more samples than large ones.
pub const TIMED_MS: f64 = 200.0;
/// Upper bound on the GEMM sweep's timed rounds.
pub const MAX_RUNS: usize = 1000;

/// Why a measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The runtime refused or failed.
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
    /// The timed kernel computed a wrong result.
    #[error("wrong result: {0}")]
    Wrong(String),
    /// cuBLASLt could not be loaded.
    #[error("no cuBLASLt: {0}")]
    NoCublas(String),
    /// A cuBLASLt call failed.
    #[error("cuBLASLt: {0}")]
    Cublas(String),
    /// The plot could not be drawn.
    #[error("cannot draw the plot: {0}")]
    Plot(#[from] plot::PlotError),
    /// An output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Timing {
    /// What was timed.
    pub what: String,
    /// Median milliseconds per run.
    pub median_ms: f64,
    /// Work rate: TFLOP/s for GEMMs, TB/s (bytes read + written) for copies.
    pub rate: f64,
}

fn median(mut v: Vec<f32>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2] as f64
}

/// The fewest rotating sets (at least 2, at most 256) whose bytes exceed `l2_bytes` twice over;
/// shapes under 1 MB a set cannot reach that within 256 sets and get 256.
pub fn rotation(set_bytes: usize, l2_bytes: usize) -> usize {
    ((2 * l2_bytes) / set_bytes.max(1) + 1).clamp(2, 256)
}

/// A pair of timing events, to bracket one run.
fn event_pair(rt: &Runtime) -> Result<(CudaEvent, CudaEvent), BenchError> {
    let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let start = rt.context().new_event(timed).map_err(driver)?;
    let end = rt.context().new_event(timed).map_err(driver)?;
    Ok((start, end))
}

/// Queues `event` on the runtime's stream.
fn record(rt: &Runtime, event: &CudaEvent) -> Result<(), BenchError> {
    event.record(rt.stream()).map_err(driver)
}

/// The milliseconds between each pair's events (waits for the last to complete).
fn elapsed(pairs: &[(CudaEvent, CudaEvent)]) -> Result<Vec<f32>, BenchError> {
    pairs
        .iter()
        .map(|(s, e)| s.elapsed_ms(e).map_err(driver))
        .collect()
}

fn driver(e: DriverError) -> BenchError {
    BenchError::Runtime(RuntimeError::from(e))
}

/// Times [`RUNS`] runs of `run(set)` after [`WARMUP`] untimed ones, cycling over `sets` buffer
/// sets; returns each run's milliseconds. See the module docs for why the runs are queued.
/// (`bench gemm` interleaves its participants instead: [`sweep`].)
fn time_runs(
    rt: &Runtime,
    sets: usize,
    mut run: impl FnMut(usize) -> Result<(), BenchError>,
) -> Result<Vec<f32>, BenchError> {
    for i in 0..WARMUP {
        run(i % sets)?;
    }
    let mut events = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let (start, end) = event_pair(rt)?;
        record(rt, &start)?;
        run((WARMUP + i) % sets)?;
        record(rt, &end)?;
        events.push((start, end));
    }
    elapsed(&events)
}

fn alloc_sets(
    sets: usize,
    make: impl Fn() -> Result<Tensor<bf16>, RuntimeError>,
) -> Result<Vec<Tensor<bf16>>, RuntimeError> {
    (0..sets).map(|_| make()).collect()
}

/// The copy kernel against a plain device-to-device copy of the same bytes, on M×N bf16.
pub fn copy(
    rt: &Runtime,
    launch: CopyLaunch,
    config: &str,
    m: usize,
    n: usize,
) -> Result<Vec<Timing>, BenchError> {
    let bytes = m * n * 2;
    let sets = sweep::rotation_within(2 * bytes, sweep::L2_BYTES, sweep::MEMORY_CAP);
    let host = crate::reference::Rng::new(1).bf16s(m * n);
    let srcs = alloc_sets(sets, || rt.upload(&host, &[m, n]))?;
    let mut dsts = alloc_sets(sets, || rt.zeros(&[m, n]))?;
    let ours = time_runs(rt, sets, |i| {
        Ok(launch(rt, config, &srcs[i], &mut dsts[i])?)
    })?;
    let got = rt.download(&dsts[0])?;
    if got
        .iter()
        .zip(&host)
        .any(|(g, h)| g.to_bits() != h.to_bits())
    {
        return Err(BenchError::Wrong(format!(
            "{config} {m}x{n}: the copy differs from its input"
        )));
    }
    let plain = time_runs(rt, sets, |i| {
        let src = srcs[i].buffer();
        let dst = dsts[i].buffer_mut();
        rt.stream()
            .memcpy_dtod(src, dst)
            .map_err(|e| RuntimeError::from(e).into())
    })?;
    let tb = |ms: f64| 2.0 * bytes as f64 / (ms * 1e-3) / 1e12;
    let (a, b) = (median(ours), median(plain));
    Ok(vec![
        Timing {
            what: format!("tirx tma_copy {config} {m}x{n}"),
            median_ms: a,
            rate: tb(a),
        },
        Timing {
            what: format!("device copy (cuMemcpyDtoD) {m}x{n}"),
            median_ms: b,
            rate: tb(b),
        },
    ])
}

/// The GEMM kernel on M×N×K bf16 with B given N×K (a `Kind::Gemm` launcher; NN kernels go
/// through [`run_gemm_bench`] with `BLayout::Nn`), output checked against the f64 reference
/// on a corner.
pub fn gemm(
    rt: &Runtime,
    launch: GemmLaunch,
    name: &str,
    config: &str,
    (m, n, k): (usize, usize, usize),
) -> Result<Timing, BenchError> {
    let sets = sweep::rotation_within(
        sweep::set_bytes((m, n, k)),
        sweep::L2_BYTES,
        sweep::MEMORY_CAP,
    );
    let mut rng = crate::reference::Rng::new(2);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let a = alloc_sets(sets, || rt.upload(&ha, &[m, k]))?;
    let b = alloc_sets(sets, || rt.upload(&hb, &[n, k]))?;
    let mut d = alloc_sets(sets, || rt.zeros(&[m, n]))?;
    let times = time_runs(rt, sets, |i| {
        Ok(launch.launch(rt, config, &a[i], &b[i], &mut d[i])?)
    })?;
    // Check a 64×64 corner of the output against the f64 reference.
    let got = rt.download(&d[0])?;
    let (cm, cn) = (m.min(64), n.min(64));
    let corner: Vec<bf16> = (0..cm)
        .flat_map(|i| got[i * n..i * n + cn].to_vec())
        .collect();
    let want = crate::reference::gemm_tn_f64(&ha[..cm * k], &hb[..cn * k], cm, cn, k);
    let err = crate::reference::rel_frobenius(&corner, &want);
    if err >= crate::gemm::check::GEMM_TOL {
        return Err(BenchError::Wrong(format!(
            "{name} {m}x{n}x{k}: rel. error {err:.3e} on the 64x64 corner"
        )));
    }
    let ms = median(times);
    Ok(Timing {
        what: format!("tirx {name} {config} {m}x{n}x{k}"),
        median_ms: ms,
        rate: 2.0 * (m * n * k) as f64 / (ms * 1e-3) / 1e12,
    })
}

/// What a GEMM bench computes: B's layout, and the BLAS epilogue's α, β (`None`: the plain
/// product D = A·op(B), C not involved).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// How B is given.
    pub layout: BLayout,
    /// (α, β) of D = α·A·op(B) + β·C; the candidates are then scaled kernels
    /// (`Epilogue::Scaled`) and cuBLASLt reads C from its own buffer.
    pub scale: Option<(f32, f32)>,
}

impl Problem {
    /// The formula, in ASCII (`D = A*B^T`, `D = 1.5*A*B + -0.5*C`).
    pub fn formula(&self) -> String {
        let ab = match self.layout {
            BLayout::Tn => "A*B^T",
            BLayout::Nn => "A*B",
        };
        match self.scale {
            None => format!("D = {ab}"),
            Some((alpha, beta)) => format!("D = {alpha}*{ab} + {beta}*C"),
        }
    }
}

/// Default JSON output of [`run_gemm_bench`].
pub const DEFAULT_JSON: &str = "bench-gemm.json";

/// A GEMM config to measure: kernel name, config, launcher.
pub type GemmEntry = (&'static str, &'static str, GemmLaunch);

/// `tirx bench gemm`: for each shape (default [`sweep::default_shapes`]) times cuBLASLt and
/// every one of `kernels(shape)` (name, config, launcher) on the same buffers, computing
/// `problem` (B N×K, or K×N for `tirx bench gemm --layout nn`; with `--alpha`/`--beta`, D =
/// α·A·op(B) + β·C; the kernels must compute that), in element types `A` (A and B) and `D` (C
/// and D), cuBLASLt in the same types; checks each result against cuBLASLt's and the f64
/// reference, and reports the fastest right config as "ours".
/// Prints the table to stdout, writes the JSON to `json` (default [`DEFAULT_JSON`]) and the
/// SVG plot to `plot` (default: the JSON path with a `.svg` extension).
///
/// Returns `Ok(true)` when every shape passed ([`report::Row::ok`]), `Ok(false)` when some
/// shape failed (the table says why); `Err` when nothing could be measured (no cuBLASLt) or
/// an output could not be written.
pub fn run_gemm_bench<A: HostElem, D: HostElem>(
    rt: &Runtime,
    kernels: &dyn Fn((usize, usize, usize)) -> Vec<GemmEntry>,
    problem: Problem,
    shapes: Option<Vec<(usize, usize, usize)>>,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<bool, BenchError> {
    let report = gemm_report::<A, D>(rt, kernels, problem, shapes, json, plot)?;
    Ok(report.rows.iter().all(report::Row::ok))
}

/// [`run_gemm_bench`], returning the whole report (`tirx tune` keeps every candidate's time).
pub fn gemm_report<A: HostElem, D: HostElem>(
    rt: &Runtime,
    kernels: &dyn Fn((usize, usize, usize)) -> Vec<GemmEntry>,
    problem: Problem,
    shapes: Option<Vec<(usize, usize, usize)>>,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<report::Report, BenchError> {
    let lt = cublaslt::CublasLt::new(rt)?;
    let shapes = shapes.unwrap_or_else(sweep::default_shapes);
    let json = json.map_or_else(|| PathBuf::from(DEFAULT_JSON), Path::to_path_buf);
    let plot = plot.map_or_else(|| json.with_extension("svg"), Path::to_path_buf);
    let types = GemmTypes {
        input: A::ELEM,
        output: D::ELEM,
    };
    println!(
        "{} (compute capability {:?}), cuBLASLt {}; {types} (f32 accumulation); {}, B given \
         {}; median of at least {RUNS} interleaved rounds after at least {WARMUP_MS} ms of \
         warm-up, inputs rotated past L2; {} shape(s), cuBLASLt and our config(s) for each",
        rt.name(),
        rt.compute_capability(),
        lt.version(),
        problem.formula(),
        match problem.layout {
            BLayout::Tn => "NxK",
            BLayout::Nn => "KxN",
        },
        shapes.len(),
    );
    let bar = progress::bar(shapes.len());
    let mut rows = Vec::with_capacity(shapes.len());
    for &shape in &shapes {
        let row = sweep::measure_shape::<A, D>(rt, &lt, &kernels(shape), problem, shape, &bar)
            .unwrap_or_else(|e| report::Row::failed(shape, e.to_string()));
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_with_message("done");
    let report = report::Report {
        date: report::now(),
        device: rt.name().to_string(),
        cublaslt_version: lt.version(),
        types: types.to_string(),
        problem: problem.formula(),
        rows,
    };
    print!("{}", report.table());
    write(&json, report.json().as_bytes())?;
    write(&plot, report.svg()?.as_bytes())?;
    println!("wrote {} and {}", json.display(), plot.display());
    Ok(report)
}

/// [`run_gemm_bench`] in the element types `types`, chosen at run time (`tirx bench gemm --in
/// f16 --out f32`); only the shipped combinations ([`GemmTypes::ALL`]).
pub fn run_gemm_bench_for(
    rt: &Runtime,
    types: GemmTypes,
    kernels: &dyn Fn((usize, usize, usize)) -> Vec<GemmEntry>,
    problem: Problem,
    shapes: Option<Vec<(usize, usize, usize)>>,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<bool, BenchError> {
    let report = gemm_report_for(rt, types, kernels, problem, shapes, json, plot)?;
    Ok(report.rows.iter().all(report::Row::ok))
}

/// [`gemm_report`] in the element types `types`, chosen at run time.
pub fn gemm_report_for(
    rt: &Runtime,
    types: GemmTypes,
    kernels: &dyn Fn((usize, usize, usize)) -> Vec<GemmEntry>,
    problem: Problem,
    shapes: Option<Vec<(usize, usize, usize)>>,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<report::Report, BenchError> {
    use half::f16;
    use tirx::abi::ElemType::{Bf16, F16, F32};
    match (types.input, types.output) {
        (Bf16, Bf16) => gemm_report::<bf16, bf16>(rt, kernels, problem, shapes, json, plot),
        (Bf16, F16) => gemm_report::<bf16, f16>(rt, kernels, problem, shapes, json, plot),
        (Bf16, F32) => gemm_report::<bf16, f32>(rt, kernels, problem, shapes, json, plot),
        (F16, Bf16) => gemm_report::<f16, bf16>(rt, kernels, problem, shapes, json, plot),
        (F16, F16) => gemm_report::<f16, f16>(rt, kernels, problem, shapes, json, plot),
        (F16, F32) => gemm_report::<f16, f32>(rt, kernels, problem, shapes, json, plot),
        _ => Err(BenchError::Runtime(RuntimeError::NoKernelFits {
            problem: format!("a GEMM bench in {types}"),
            table: "  the bench runs bf16 or f16 inputs and bf16, f16 or f32 outputs\n".into(),
        })),
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), BenchError> {
    std::fs::write(path, bytes).map_err(|source| BenchError::Write {
        path: path.to_path_buf(),
        source,
    })
}
