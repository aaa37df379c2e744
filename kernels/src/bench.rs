//! `tirx bench`: timings on a GPU, measured the way peers measure: CUDA events around each
//! launch, warm-up first, the median of many timed runs, and inputs rotated over several
//! buffer sets whose total exceeds the L2 cache (60 MB on an H200), so repeated runs do not
//! read from L2. Every timed kernel's output is also checked.

use crate::registry::{CopyLaunch, GemmLaunch};
use half::bf16;
use tirx::{Runtime, RuntimeError, Tensor};

/// Timed runs per measurement.
pub const RUNS: usize = 50;
/// Untimed runs first.
pub const WARMUP: usize = 5;

/// Why a measurement failed.
#[derive(Debug)]
pub enum BenchError {
    /// The runtime refused or failed.
    Runtime(RuntimeError),
    /// The timed kernel computed a wrong result.
    Wrong(String),
}

impl From<RuntimeError> for BenchError {
    fn from(e: RuntimeError) -> Self {
        BenchError::Runtime(e)
    }
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchError::Runtime(e) => write!(f, "{e}"),
            BenchError::Wrong(s) => write!(f, "wrong result: {s}"),
        }
    }
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

/// Enough rotating sets that their bytes exceed `l2_bytes` twice over (at least 2).
pub fn rotation(set_bytes: usize, l2_bytes: usize) -> usize {
    (2 * l2_bytes).div_ceil(set_bytes.max(1)).clamp(2, 16)
}

fn time_each(
    rt: &Runtime,
    sets: usize,
    mut run: impl FnMut(usize) -> Result<(), RuntimeError>,
) -> Result<Vec<f32>, RuntimeError> {
    for i in 0..WARMUP {
        run(i % sets)?;
    }
    (0..RUNS).map(|i| rt.time_ms(|| run(i % sets))).collect()
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
    let sets = rotation(2 * bytes, 60 << 20);
    let host = crate::reference::Rng::new(1).bf16s(m * n);
    let srcs: Vec<Tensor<bf16>> = (0..sets)
        .map(|_| rt.upload(&host, &[m, n]))
        .collect::<Result<_, _>>()?;
    let mut dsts: Vec<Tensor<bf16>> = (0..sets)
        .map(|_| rt.zeros(&[m, n]))
        .collect::<Result<_, _>>()?;
    let ours = time_each(rt, sets, |i| {
        let (s, d) = (&srcs[i], &mut dsts[i]);
        launch(rt, config, s, d)
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
    let plain = time_each(rt, sets, |i| {
        let src = srcs[i].buffer();
        let dst = dsts[i].buffer_mut();
        rt.stream()
            .memcpy_dtod(src, dst)
            .map_err(RuntimeError::from)
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

/// The GEMM kernel on M×N×K bf16 (output checked against the f64 reference on a corner).
pub fn gemm(
    rt: &Runtime,
    launch: GemmLaunch,
    name: &str,
    config: &str,
    (m, n, k): (usize, usize, usize),
) -> Result<Timing, BenchError> {
    let set_bytes = 2 * (m * k + n * k + m * n);
    let sets = rotation(set_bytes, 60 << 20);
    let mut rng = crate::reference::Rng::new(2);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let a: Vec<Tensor<bf16>> = (0..sets)
        .map(|_| rt.upload(&ha, &[m, k]))
        .collect::<Result<_, _>>()?;
    let b: Vec<Tensor<bf16>> = (0..sets)
        .map(|_| rt.upload(&hb, &[n, k]))
        .collect::<Result<_, _>>()?;
    let mut d: Vec<Tensor<bf16>> = (0..sets)
        .map(|_| rt.zeros(&[m, n]))
        .collect::<Result<_, _>>()?;
    let times = time_each(rt, sets, |i| {
        let (x, y, z) = (&a[i], &b[i], &mut d[i]);
        launch(rt, config, x, y, z)
    })?;
    // Check a 64×64 corner of the output against the f64 reference.
    let got = rt.download(&d[0])?;
    let (cm, cn) = (m.min(64), n.min(64));
    let corner: Vec<bf16> = (0..cm)
        .flat_map(|i| got[i * n..i * n + cn].to_vec())
        .collect();
    let want = crate::reference::gemm_tn_f64(&ha[..cm * k], &hb[..cn * k], cm, cn, k);
    let err = crate::reference::rel_frobenius(&corner, &want);
    if err >= crate::registry::GEMM_TOL {
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
