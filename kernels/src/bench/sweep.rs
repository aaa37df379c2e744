//! The GEMM sweep: which shapes `tirx bench gemm` measures, how many rotating buffer sets each
//! gets, and the measurement of one shape (cuBLASLt, then every candidate config, on the same
//! buffers, each output checked against cuBLASLt's and against the f64 CPU reference).
//!
//! Invariants:
//! - Every buffer set holds the same A and B, so every run of a kernel writes the same D and
//!   the D of set 0 (written by one of the timed runs) is the one checked.
//! - D is poisoned (NaN) before each candidate runs, so a kernel that writes nothing, or only
//!   part of D, cannot pass on what cuBLASLt or an earlier candidate left there.

use half::bf16;
use tirx::{Runtime, Tensor};

use super::cublaslt::CublasLt;
use super::progress::Progress;
use super::report::{Candidate, Failure, Measured, Row, shape_label};
use super::{BenchError, median, time_runs};
use crate::reference::{Rng, gemm_tn_f64, rel_frobenius};
use crate::registry::{GEMM_TOL, GemmLaunch};

/// L2 cache of an H200, in bytes.
pub const L2_BYTES: usize = 60 << 20;
/// The most device memory the buffer sets of one shape may take.
pub const MEMORY_CAP: usize = 40 << 30;
/// Above this many output elements, cuBLASLt and ours are compared on a strided sample.
pub const FULL_COMPARE: usize = 8192 * 8192;
/// The least number of elements a strided sample compares.
pub const SAMPLE: usize = 4 << 20;

/// The sweep the issue asks for: squares, LLM projection shapes, and odd sizes, each once
/// (4096³ is both a square and an LLM shape).
pub fn default_shapes() -> Vec<(usize, usize, usize)> {
    let squares = [1024, 2048, 4096, 8192, 16384].map(|s| (s, s, s));
    let llm = [
        (4096, 4096, 4096),
        (4096, 14336, 4096),
        (4096, 4096, 14336),
        (8192, 28672, 8192),
    ];
    let odd = [(1000, 1000, 1000), (4095, 4097, 4096)];
    let mut shapes: Vec<(usize, usize, usize)> = Vec::new();
    for s in squares.into_iter().chain(llm).chain(odd) {
        if !shapes.contains(&s) {
            shapes.push(s);
        }
    }
    shapes
}

/// Bytes of one buffer set (A, B and D in bf16).
pub fn set_bytes((m, n, k): (usize, usize, usize)) -> usize {
    2 * (m * k + n * k + m * n)
}

/// How many sets to rotate: enough to exceed twice the L2 ([`super::rotation`]), but no more
/// than fit in `cap` bytes, and at least one.
pub fn rotation_within(set_bytes: usize, l2_bytes: usize, cap: usize) -> usize {
    super::rotation(set_bytes, l2_bytes)
        .min(cap / set_bytes.max(1))
        .max(1)
}

/// The stride of the comparison sample for `len` elements: 1 (every element) up to
/// [`FULL_COMPARE`], else the largest odd stride that still samples at least [`SAMPLE`]
/// elements. Odd, so that with a power-of-two row length the sample visits every column.
pub fn sample_stride(len: usize) -> usize {
    if len <= FULL_COMPARE {
        return 1;
    }
    let s = (len / SAMPLE).max(1);
    if s.is_multiple_of(2) { s - 1 } else { s }
}

/// ‖got − want‖_F / ‖want‖_F over every `stride`-th element; NaN or infinity gives infinity.
pub fn rel_frobenius_bf16(got: &[bf16], want: &[bf16], stride: usize) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (g, w) in got.iter().step_by(stride).zip(want.iter().step_by(stride)) {
        let (g, w) = (g.to_f64(), w.to_f64());
        if !g.is_finite() || !w.is_finite() {
            return f64::INFINITY;
        }
        num += (g - w) * (g - w);
        den += w * w;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

/// The device buffers and host inputs of one shape.
struct Buffers {
    shape: (usize, usize, usize),
    a: Vec<Tensor<bf16>>,
    b: Vec<Tensor<bf16>>,
    d: Vec<Tensor<bf16>>,
    /// The f64 reference for the 64×64 corner of D.
    corner_ref: Vec<f64>,
}

impl Buffers {
    fn new(rt: &Runtime, shape: (usize, usize, usize)) -> Result<Buffers, BenchError> {
        let (m, n, k) = shape;
        let sets = rotation_within(set_bytes(shape), L2_BYTES, MEMORY_CAP);
        let mut rng = Rng::new(2);
        let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
        let upload = |h: &[bf16], dims: [usize; 2]| -> Result<Vec<Tensor<bf16>>, BenchError> {
            (0..sets).map(|_| Ok(rt.upload(h, &dims)?)).collect()
        };
        let (a, b) = (upload(&ha, [m, k])?, upload(&hb, [n, k])?);
        let d = (0..sets)
            .map(|_| rt.zeros(&[m, n]))
            .collect::<Result<_, _>>()?;
        let (cm, cn) = (m.min(64), n.min(64));
        let corner_ref = gemm_tn_f64(&ha[..cm * k], &hb[..cn * k], cm, cn, k);
        Ok(Buffers {
            shape,
            a,
            b,
            d,
            corner_ref,
        })
    }

    fn sets(&self) -> usize {
        self.d.len()
    }

    /// Poisons every D, so what is read back was written by the next kernel.
    fn poison(&mut self, rt: &Runtime) -> Result<(), BenchError> {
        self.d.iter_mut().try_for_each(|d| Ok(rt.poison(d)?))
    }

    /// Downloads D of set 0 and measures its 64×64 corner against the reference.
    fn read_back(&self, rt: &Runtime) -> Result<(Vec<bf16>, f64), BenchError> {
        let (m, n, _) = self.shape;
        let got = rt.download(&self.d[0])?;
        let (cm, cn) = (m.min(64), n.min(64));
        let corner: Vec<bf16> = (0..cm)
            .flat_map(|i| got[i * n..i * n + cn].iter().copied())
            .collect();
        let err = rel_frobenius(&corner, &self.corner_ref);
        Ok((got, err))
    }
}

/// Measures one shape: cuBLASLt, then each of `kernels` (name, config, launcher).
pub fn measure_shape(
    rt: &Runtime,
    lt: &CublasLt,
    kernels: &[(&'static str, &'static str, GemmLaunch)],
    shape: (usize, usize, usize),
    progress: &mut Progress,
) -> Result<Row, BenchError> {
    let label = shape_label(shape);
    progress.show(&format!("{label} (allocating)"));
    let mut bufs = Buffers::new(rt, shape)?;
    let mut row = Row {
        shape,
        cublas: None,
        cublas_err_vs_ref: None,
        candidates: Vec::new(),
        failure: None,
    };
    progress.show(&format!("{label} (cuBLASLt)"));
    let theirs = match run_cublas(rt, lt, &mut bufs) {
        Ok((timing, d, err)) => {
            row.cublas = Some(timing);
            row.cublas_err_vs_ref = Some(err);
            if err >= GEMM_TOL {
                row.failure = Some(format!(
                    "cuBLASLt: rel. error {err:.3e} on the 64x64 corner against the f64 reference"
                ));
            }
            Some(d)
        }
        Err(e) => {
            row.failure = Some(format!("cuBLASLt: {e}"));
            None
        }
    };
    for &(name, config, launch) in kernels {
        progress.show(&format!("{label} ({name}/{config})"));
        row.candidates.push(run_candidate(
            rt,
            &mut bufs,
            (name, config, launch),
            theirs.as_deref(),
        )?);
    }
    // Clocks drift between the first and the last measurement of a shape (seen on the H200:
    // cuBLASLt's median moved from 708 to 802 TFLOP/s between runs of one command). Time
    // cuBLASLt again after the candidates and keep its faster median, so drift never flatters
    // the ratio.
    if row.cublas.is_some() {
        progress.show(&format!("{label} (cuBLASLt again)"));
        if let Ok((again, _, _)) = run_cublas(rt, lt, &mut bufs)
            && let Some(first) = &row.cublas
            && again.median_ms < first.median_ms
        {
            row.cublas = Some(again);
        }
    }
    Ok(row)
}

fn run_cublas(
    rt: &Runtime,
    lt: &CublasLt,
    bufs: &mut Buffers,
) -> Result<(Measured, Vec<bf16>, f64), BenchError> {
    let gemm = lt.tn_gemm(bufs.shape)?;
    bufs.poison(rt)?;
    let sets = bufs.sets();
    let Buffers { a, b, d, .. } = bufs;
    let times = time_runs(rt, sets, |i| gemm.run(&a[i], &b[i], &mut d[i]))?;
    let (got, err) = bufs.read_back(rt)?;
    Ok((Measured::gemm(bufs.shape, median(times)), got, err))
}

/// Times one candidate and checks it. A launch error becomes [`Failure::Refused`]; only an
/// error reading D back (the device is in trouble) stops the sweep.
fn run_candidate(
    rt: &Runtime,
    bufs: &mut Buffers,
    (name, config, launch): (&'static str, &'static str, GemmLaunch),
    theirs: Option<&[bf16]>,
) -> Result<Candidate, BenchError> {
    let mut c = Candidate {
        kernel: name.into(),
        config: config.into(),
        timing: None,
        err_vs_cublas: None,
        err_vs_ref: None,
        failure: None,
    };
    bufs.poison(rt)?;
    let sets = bufs.sets();
    let Buffers { a, b, d, .. } = bufs;
    let times = match time_runs(rt, sets, |i| {
        Ok(launch(rt, config, &a[i], &b[i], &mut d[i])?)
    }) {
        Ok(t) => t,
        Err(e) => {
            c.failure = Some(Failure::Refused(e.to_string()));
            return Ok(c);
        }
    };
    c.timing = Some(Measured::gemm(bufs.shape, median(times)));
    let (got, err_ref) = bufs.read_back(rt)?;
    c.err_vs_ref = Some(err_ref);
    c.err_vs_cublas = theirs.map(|t| rel_frobenius_bf16(&got, t, sample_stride(got.len())));
    let mut wrong = Vec::new();
    if err_ref >= GEMM_TOL {
        wrong.push(format!(
            "rel. error {err_ref:.3e} on the 64x64 corner vs the f64 reference"
        ));
    }
    if let Some(e) = c.err_vs_cublas.filter(|e| *e >= GEMM_TOL || e.is_nan()) {
        wrong.push(format!("rel. error {e:.3e} against cuBLASLt"));
    }
    if !wrong.is_empty() {
        c.failure = Some(Failure::Wrong(wrong.join("; ")));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_has_the_issue_shapes() {
        let s = default_shapes();
        for sq in [1024, 2048, 4096, 8192, 16384] {
            assert!(s.contains(&(sq, sq, sq)), "{sq}");
        }
        for llm in [
            (4096, 4096, 4096),
            (4096, 14336, 4096),
            (4096, 4096, 14336),
            (8192, 28672, 8192),
        ] {
            assert!(s.contains(&llm), "{llm:?}");
        }
        assert!(s.contains(&(1000, 1000, 1000)));
        assert!(s.contains(&(4095, 4097, 4096)));
        // 4096³ is both a square and an LLM shape, and is measured once.
        assert_eq!(s.len(), 10);
    }

    #[test]
    fn rotation_exceeds_twice_l2_within_the_cap() {
        for shape in default_shapes() {
            let bytes = set_bytes(shape);
            let sets = rotation_within(bytes, L2_BYTES, MEMORY_CAP);
            assert!(sets >= 2, "{shape:?}");
            assert!(sets * bytes > 2 * L2_BYTES, "{shape:?}: {sets} sets");
            assert!(sets * bytes <= MEMORY_CAP, "{shape:?}: {sets} sets");
        }
        // 16384² bf16: 1.5 GiB a set, two sets.
        assert_eq!(set_bytes((16384, 16384, 16384)), 3 << 29);
        assert_eq!(rotation_within(3 << 29, L2_BYTES, MEMORY_CAP), 2);
        // 1000³: 6 MB a set; 21 sets are the fewest over 120 MiB.
        assert_eq!(rotation_within(6_000_000, L2_BYTES, MEMORY_CAP), 21);
        // The cap wins over the L2 rule, but one set always fits.
        assert_eq!(rotation_within(30 << 30, L2_BYTES, MEMORY_CAP), 1);
        assert_eq!(rotation_within(50 << 30, L2_BYTES, MEMORY_CAP), 1);
    }

    #[test]
    fn samples_are_full_up_to_8192_squared_and_odd_strided_above() {
        assert_eq!(sample_stride(8192 * 8192), 1);
        assert_eq!(sample_stride(1000 * 1000), 1);
        for len in [16384 * 16384, 8192 * 28672, 8193 * 8192] {
            let s = sample_stride(len);
            assert_eq!(s % 2, 1, "{len}");
            assert!(len.div_ceil(s) >= SAMPLE, "{len}: stride {s}");
        }
        assert_eq!(sample_stride(16384 * 16384), 63);
    }

    #[test]
    fn bf16_comparison_measures_and_flags_nan() {
        let f = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
        let want = f(&[3.0, 100.0, 4.0, 100.0]);
        assert_eq!(rel_frobenius_bf16(&want, &want, 1), 0.0);
        // Stride 2 sees only 3 and 4.
        let got = f(&[3.0, 0.0, 5.0, 0.0]);
        assert!((rel_frobenius_bf16(&got, &want, 2) - 0.2).abs() < 1e-12);
        let nan = f(&[f32::NAN, 100.0, 4.0, 100.0]);
        assert!(rel_frobenius_bf16(&nan, &want, 1).is_infinite());
    }
}
