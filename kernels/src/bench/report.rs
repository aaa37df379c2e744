//! What `tirx bench gemm` found, and its three forms: the table printed at the end, the JSON
//! file ([`super::json`]) and the SVG plot ([`super::plot`]).
//!
//! Invariants:
//! - A row's "ours" is its fastest candidate among those that ran and were checked right;
//!   a candidate that computed a wrong result is never chosen, and makes the row fail.

use std::fmt::Write as _;

use super::RUNS;
use super::json::ReportJson;
use super::plot::{self, BarPair, PlotError};

/// A median time and the rate it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// Median milliseconds per run.
    pub median_ms: f64,
    /// 2·M·N·K / median time, in TFLOP/s.
    pub tflops: f64,
}

impl Measured {
    /// The measurement of an M×N×K GEMM taking `median_ms`.
    pub fn gemm((m, n, k): (usize, usize, usize), median_ms: f64) -> Measured {
        Measured {
            median_ms,
            tflops: 2.0 * m as f64 * n as f64 * k as f64 / (median_ms * 1e-3) / 1e12,
        }
    }
}

/// Why a candidate has no usable timing.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// It did not run on this shape (e.g. the launcher refused the shape).
    Refused(String),
    /// It ran and computed a wrong result.
    Wrong(String),
}

/// One kernel config measured on one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The kernel's name.
    pub kernel: String,
    /// The config.
    pub config: String,
    /// Its timing, when it ran.
    pub timing: Option<Measured>,
    /// ‖ours − cuBLAS‖_F / ‖cuBLAS‖_F over the compared elements.
    pub err_vs_cublas: Option<f64>,
    /// Relative Frobenius error of the 64×64 corner against the f64 CPU reference.
    pub err_vs_ref: Option<f64>,
    /// Why it cannot be chosen, if it cannot.
    pub failure: Option<Failure>,
    /// The slices `S` a split-K candidate ran with (the host's plan, `split::best_split` on
    /// this device); `None` for a one-launch kernel.
    pub splits: Option<usize>,
}

/// One shape: cuBLASLt and every candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// M, N, K.
    pub shape: (usize, usize, usize),
    /// cuBLASLt's timing, when it ran.
    pub cublas: Option<Measured>,
    /// cuBLASLt's 64×64 corner against the f64 reference.
    pub cublas_err_vs_ref: Option<f64>,
    /// Every kernel config tried.
    pub candidates: Vec<Candidate>,
    /// Why the shape as a whole failed (allocation, cuBLASLt), if it did.
    pub failure: Option<String>,
    /// Timed interleaved rounds (each participant's median is over this many runs).
    pub rounds: usize,
}

/// "M×N×K" as the labels write it.
pub fn shape_label((m, n, k): (usize, usize, usize)) -> String {
    format!("{m}x{n}x{k}")
}

impl Row {
    /// A shape that could not be measured at all, and why.
    pub fn failed(shape: (usize, usize, usize), why: String) -> Row {
        Row {
            shape,
            cublas: None,
            cublas_err_vs_ref: None,
            candidates: Vec::new(),
            failure: Some(why),
            rounds: 0,
        }
    }

    /// The fastest candidate that ran and was right.
    pub fn best(&self) -> Option<&Candidate> {
        self.candidates
            .iter()
            .filter(|c| c.failure.is_none())
            .filter_map(|c| c.timing.map(|t| (c, t.median_ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(c, _)| c)
    }

    /// Our best TFLOP/s over cuBLASLt's.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.best()?.timing?.tflops / self.cublas?.tflops)
    }

    /// The largest relative error measured on this shape (any candidate, either check, and
    /// cuBLASLt against the reference).
    pub fn max_err(&self) -> Option<f64> {
        self.candidates
            .iter()
            .flat_map(|c| [c.err_vs_cublas, c.err_vs_ref])
            .chain([self.cublas_err_vs_ref])
            .flatten()
            .reduce(f64::max)
    }

    /// Whether the shape passed: cuBLASLt ran, some candidate ran right, none was wrong.
    pub fn ok(&self) -> bool {
        self.failure.is_none()
            && self.cublas.is_some()
            && self.best().is_some()
            && !self
                .candidates
                .iter()
                .any(|c| matches!(c.failure, Some(Failure::Wrong(_))))
    }

    /// What went wrong, one line per problem.
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self.failure.iter().cloned().collect();
        for c in &self.candidates {
            match &c.failure {
                Some(Failure::Refused(why)) => {
                    out.push(format!("{}/{}: {why}", c.kernel, c.config))
                }
                Some(Failure::Wrong(why)) => {
                    out.push(format!("{}/{}: WRONG: {why}", c.kernel, c.config))
                }
                None => {}
            }
        }
        out
    }
}

/// Geometric mean and minimum of the ratios (`None` when there are none).
pub fn summary(ratios: &[f64]) -> Option<(f64, f64)> {
    if ratios.is_empty() {
        return None;
    }
    let log_mean = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    Some((
        log_mean.exp(),
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
    ))
}

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// UTC date and time, ISO 8601.
    pub date: String,
    /// The GPU's name.
    pub device: String,
    /// cuBLASLt's version number.
    pub cublaslt_version: usize,
    /// The element types measured, `A/B -> D` (`bf16 -> f32`); accumulation is f32.
    pub types: String,
    /// What was computed ([`super::Problem::formula`]: `D = A*B^T`, `D = 2*A*B + 0.5*C`).
    pub problem: String,
    /// One row per shape, in the order measured.
    pub rows: Vec<Row>,
}

fn num(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "-".into(),
    }
}

impl Report {
    /// The rows' ratios, where both sides ran.
    pub fn ratios(&self) -> Vec<f64> {
        self.rows.iter().filter_map(Row::ratio).collect()
    }

    /// The table printed at the end: one line per shape, problems under it, then the
    /// geometric mean and minimum of the ratios.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<19} {:<24} {:>12} {:>15} {:>7} {:>14}",
            "shape", "config", "ours TFLOP/s", "cuBLAS TFLOP/s", "ratio", "max rel. err"
        );
        for r in &self.rows {
            let best = r.best();
            let config = best.map_or("-".into(), |c| format!("{}/{}", c.kernel, c.config));
            let _ = writeln!(
                s,
                "{:<19} {:<24} {:>12} {:>15} {:>7} {:>14}",
                shape_label(r.shape),
                config,
                num(best.and_then(|c| c.timing).map(|t| t.tflops), 1),
                num(r.cublas.map(|t| t.tflops), 1),
                num(r.ratio(), 3),
                r.max_err()
                    .filter(|e| e.is_finite())
                    .map_or("-".into(), |e| format!("{e:.2e}")),
            );
            for p in r.problems() {
                let _ = writeln!(s, "    {}", p.replace('\n', "\n      "));
            }
        }
        match summary(&self.ratios()) {
            Some((geo, min)) => {
                let at = self
                    .rows
                    .iter()
                    .find(|r| r.ratio() == Some(min))
                    .map_or(String::new(), |r| format!(" ({})", shape_label(r.shape)));
                let _ = writeln!(s, "geometric mean of ratios: {geo:.3}");
                let _ = writeln!(s, "minimum ratio: {min:.3}{at}");
            }
            None => s.push_str("no shape ran on both sides\n"),
        }
        s
    }

    /// The JSON file's text ([`ReportJson`]).
    pub fn json(&self) -> String {
        ReportJson::from(self).to_text()
    }

    /// The plot's bar pairs.
    pub fn bars(&self) -> Vec<BarPair> {
        self.rows
            .iter()
            .map(|r| BarPair {
                label: shape_label(r.shape),
                ours: r.best().and_then(|c| c.timing).map(|t| t.tflops),
                cublas: r.cublas.map(|t| t.tflops),
                note: r.ratio().map_or("failed".into(), |x| format!("{x:.2}x")),
            })
            .collect()
    }

    /// The plot as an SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        let title = format!(
            "tirx vs cuBLASLt: {} GEMM {} on {}",
            self.types, self.problem, self.device
        );
        let subtitle = match summary(&self.ratios()) {
            Some((geo, min)) => format!(
                "TFLOP/s, median of at least {RUNS} interleaved rounds, inputs rotated past L2. {} - geomean ratio {geo:.2}, min {min:.2}",
                self.date
            ),
            None => format!(
                "TFLOP/s, median of at least {RUNS} interleaved rounds. {}",
                self.date
            ),
        };
        plot::svg(&title, &subtitle, &self.bars())
    }
}

/// `t` as the report writes dates: ISO 8601 in UTC, to the second (`2026-11-30T01:39:42Z`).
pub fn utc(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Now, as [`utc`].
pub fn now() -> String {
    utc(jiff::Timestamp::now())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn candidate(config: &str, ms: f64, failure: Option<Failure>) -> Candidate {
        Candidate {
            kernel: "gemm_sm90".into(),
            config: config.into(),
            // Rates are irrelevant here: rows compare times, and `row` uses the same shape.
            timing: Some(Measured::gemm((1024, 1024, 1024), ms)),
            err_vs_cublas: Some(1e-3),
            err_vs_ref: Some(2e-3),
            failure,
            splits: None,
        }
    }

    fn row(shape: (usize, usize, usize), cublas_ms: f64, candidates: Vec<Candidate>) -> Row {
        Row {
            shape,
            cublas: Some(Measured::gemm((1024, 1024, 1024), cublas_ms)),
            cublas_err_vs_ref: Some(5e-3),
            candidates,
            failure: None,
            rounds: 50,
        }
    }

    #[test]
    fn tflops_count_two_flops_per_multiply_add() {
        let t = Measured::gemm((1000, 1000, 1000), 1.0);
        assert!((t.tflops - 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_fastest_right_candidate_is_chosen() {
        let wrong = Some(Failure::Wrong("rel. error 0.5".into()));
        let r = row(
            (1024, 1024, 1024),
            1.0,
            vec![
                candidate("a", 2.0, None),
                candidate("b", 0.5, wrong),
                candidate("c", 1.25, None),
                candidate("d", 0.1, Some(Failure::Refused("shape".into()))),
            ],
        );
        assert_eq!(r.best().unwrap().config, "c");
        assert!((r.ratio().unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(r.max_err(), Some(5e-3));
        assert!(!r.ok(), "a wrong candidate fails the row");
        assert_eq!(r.problems().len(), 2);
        let fine = row((64, 64, 64), 1.0, vec![candidate("a", 1.0, None)]);
        assert!(fine.ok());
    }

    #[test]
    fn geometric_mean_and_minimum() {
        let (geo, min) = summary(&[0.5, 2.0, 1.0]).unwrap();
        assert!((geo - 1.0).abs() < 1e-12);
        assert_eq!(min, 0.5);
        let (geo, min) = summary(&[0.9, 0.4]).unwrap();
        assert!((geo - 0.6).abs() < 1e-12);
        assert_eq!(min, 0.4);
        assert_eq!(summary(&[]), None);
    }

    #[test]
    fn dates_are_iso_8601_utc() {
        let at = |secs| utc(jiff::Timestamp::from_second(secs).unwrap());
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(at(4_102_444_800), "2100-01-01T00:00:00Z");
        // Sub-second parts are dropped, not rounded.
        let t = jiff::Timestamp::new(59, 999_999_999).unwrap();
        assert_eq!(utc(t), "1970-01-01T00:00:59Z");
        assert_eq!(now().len(), "1970-01-01T00:00:00Z".len());
    }

    /// A made-up run: two shapes that ran (ratios 0.5 and 1) and one whose cuBLASLt failed.
    pub(crate) fn report() -> Report {
        let failed = Row {
            shape: (4095, 4097, 4096),
            cublas: None,
            cublas_err_vs_ref: None,
            candidates: vec![],
            failure: Some("cuBLASLt: \"no algorithm\"".into()),
            rounds: 0,
        };
        Report {
            date: utc(jiff::Timestamp::UNIX_EPOCH),
            device: "NVIDIA H200".into(),
            cublaslt_version: 130000,
            types: "bf16 -> bf16".into(),
            problem: "D = A*B^T".into(),
            rows: vec![
                row(
                    (1024, 1024, 1024),
                    1.0,
                    vec![candidate("default", 2.0, None)],
                ),
                row(
                    (2048, 2048, 2048),
                    1.0,
                    vec![candidate("default", 1.0, None)],
                ),
                failed,
            ],
        }
    }

    #[test]
    fn table_lists_every_shape_and_the_summary() {
        let t = report().table();
        assert!(t.contains("1024x1024x1024      gemm_sm90/default"), "{t}");
        assert!(t.contains("0.500"), "{t}");
        assert!(t.contains("cuBLASLt: \"no algorithm\""), "{t}");
        assert!(t.contains("geometric mean of ratios: 0.707"), "{t}");
        assert!(t.contains("minimum ratio: 0.500 (1024x1024x1024)"), "{t}");
    }

    #[test]
    fn bars_mark_failed_shapes() {
        let bars = report().bars();
        assert_eq!(bars.len(), 3);
        assert_eq!(bars[0].note, "0.50x");
        assert_eq!(bars[2].ours, None);
        assert_eq!(bars[2].note, "failed");
        let svg = report().svg().unwrap();
        assert!(svg.contains("tirx vs cuBLASLt: bf16 -&gt; bf16 GEMM D = A*B^T on NVIDIA H200"));
        assert!(svg.contains("geomean ratio 0.71, min 0.50"), "{svg}");
    }
}
