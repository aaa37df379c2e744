//! The JSON file `tirx bench gemm` writes (and `docs/perf/*.json` holds): its schema as serde
//! types, built from a [`Report`]; and the one `tirx bench gemm --epilogue` writes
//! ([`EpilogueReportJson`]), the same fields after the epilogue's.
//!
//! The file is a denormalized view of the report: each row repeats its best candidate's kernel,
//! config and timings, its ratio and whether it passed, so a reader needs no rules to find
//! "ours". That is why the schema is its own set of types rather than a derive on [`Report`]:
//! those fields are computed ([`Row::best`], [`Row::ratio`], [`Row::ok`]), not stored.
//!
//! Invariants:
//! - Field names and order are those of the files already committed; a field added later is an
//!   `Option` that older files lack and that is left out when absent, so every committed file
//!   parses and writes back with the same fields.
//! - Non-finite numbers are written as `null` (JSON has no NaN or infinity); serde_json does
//!   that for `f64`, and a `null` reads back as `None`.

use serde::{Deserialize, Serialize};

use super::report::{Failure, Report, Row, summary};
use super::{RUNS, WARMUP};

/// What the `timing` field says of the method ([`super::sweep`]).
pub const TIMING: &str = "interleaved rounds";

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportJson {
    /// UTC date and time, ISO 8601 (`2026-11-30T01:39:42Z`).
    pub date: String,
    /// The GPU's name.
    pub device: String,
    /// cuBLASLt's version number.
    pub cublaslt_version: usize,
    /// The element types, `A/B -> D`; absent in files from before the bench took types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<String>,
    /// What was computed (`D = A*B^T`); absent in files from before the bench took a layout
    /// and α, β.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The minimum number of timed rounds ([`RUNS`]).
    pub runs: usize,
    /// The minimum number of warm-up runs per participant ([`WARMUP`]).
    pub warmup: usize,
    /// The timing method ([`TIMING`]); absent in files from before the rounds were interleaved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<String>,
    /// Geometric mean of the rows' ratios.
    pub geomean_ratio: Option<f64>,
    /// Smallest ratio.
    pub min_ratio: Option<f64>,
    /// One per shape, in the order measured.
    pub rows: Vec<RowJson>,
}

/// One shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowJson {
    /// M.
    pub m: usize,
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    /// The best candidate's kernel.
    pub kernel: Option<String>,
    /// The best candidate's config.
    pub config: Option<String>,
    /// The best candidate's median milliseconds.
    pub ours_ms: Option<f64>,
    /// The best candidate's TFLOP/s.
    pub ours_tflops: Option<f64>,
    /// cuBLASLt's median milliseconds.
    pub cublas_ms: Option<f64>,
    /// cuBLASLt's TFLOP/s.
    pub cublas_tflops: Option<f64>,
    /// Ours over cuBLASLt's TFLOP/s.
    pub ratio: Option<f64>,
    /// The largest relative error measured on the shape ([`Row::max_err`]).
    pub max_rel_err: Option<f64>,
    /// cuBLASLt's corner against the f64 reference.
    pub cublas_rel_err_vs_ref: Option<f64>,
    /// Whether the shape passed ([`Row::ok`]).
    pub ok: bool,
    /// Why the shape as a whole failed.
    pub failure: Option<String>,
    /// Timed interleaved rounds; absent in files from before the round count varied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// Every config tried.
    pub candidates: Vec<CandidateJson>,
}

/// One config on one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateJson {
    /// The kernel.
    pub kernel: String,
    /// The config.
    pub config: String,
    /// Median milliseconds.
    pub ms: Option<f64>,
    /// TFLOP/s.
    pub tflops: Option<f64>,
    /// Against cuBLASLt's output.
    pub rel_err_vs_cublas: Option<f64>,
    /// The 64×64 corner against the f64 reference.
    pub rel_err_vs_ref: Option<f64>,
    /// Why it cannot be chosen, if it cannot.
    pub failure: Option<FailureKind>,
    /// The failure's detail.
    pub why: Option<String>,
    /// The slices `S` a split-K candidate ran with (its time is that plan's, at that `S`);
    /// absent for a one-launch kernel and in files from before the bench recorded it (issue
    /// #32: `dispatch::measured` judges a split-K choice only at the `S` it was measured with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub splits: Option<usize>,
}

/// [`Failure`]'s kind, as the file spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    /// [`Failure::Refused`].
    Refused,
    /// [`Failure::Wrong`].
    Wrong,
}

impl From<&Report> for ReportJson {
    fn from(r: &Report) -> ReportJson {
        let (geomean_ratio, min_ratio) = summary(&r.ratios()).unzip();
        ReportJson {
            date: r.date.clone(),
            device: r.device.clone(),
            cublaslt_version: r.cublaslt_version,
            types: Some(r.types.clone()),
            problem: Some(r.problem.clone()),
            runs: RUNS,
            warmup: WARMUP,
            timing: Some(TIMING.into()),
            geomean_ratio,
            min_ratio,
            rows: r.rows.iter().map(RowJson::from).collect(),
        }
    }
}

impl From<&Row> for RowJson {
    fn from(r: &Row) -> RowJson {
        let (m, n, k) = r.shape;
        let best = r.best();
        let ours = best.and_then(|c| c.timing);
        RowJson {
            m,
            n,
            k,
            kernel: best.map(|c| c.kernel.clone()),
            config: best.map(|c| c.config.clone()),
            ours_ms: ours.map(|t| t.median_ms),
            ours_tflops: ours.map(|t| t.tflops),
            cublas_ms: r.cublas.map(|t| t.median_ms),
            cublas_tflops: r.cublas.map(|t| t.tflops),
            ratio: r.ratio(),
            max_rel_err: r.max_err(),
            cublas_rel_err_vs_ref: r.cublas_err_vs_ref,
            ok: r.ok(),
            failure: r.failure.clone(),
            rounds: Some(r.rounds),
            candidates: r
                .candidates
                .iter()
                .map(|c| {
                    let (failure, why) = match &c.failure {
                        None => (None, None),
                        Some(Failure::Refused(w)) => (Some(FailureKind::Refused), Some(w.clone())),
                        Some(Failure::Wrong(w)) => (Some(FailureKind::Wrong), Some(w.clone())),
                    };
                    CandidateJson {
                        kernel: c.kernel.clone(),
                        config: c.config.clone(),
                        ms: c.timing.map(|t| t.median_ms),
                        tflops: c.timing.map(|t| t.tflops),
                        rel_err_vs_cublas: c.err_vs_cublas,
                        rel_err_vs_ref: c.err_vs_ref,
                        failure,
                        why,
                        splits: c.splits,
                    }
                })
                .collect(),
        }
    }
}

impl ReportJson {
    /// The file's text: pretty-printed, with a final newline.
    pub fn to_text(&self) -> String {
        // These types hold only strings, numbers, booleans and lists, and serde_json fails
        // only on a failing `Serialize` impl or a map with non-string keys: neither is here.
        let mut s =
            serde_json::to_string_pretty(self).expect("the report's JSON always serializes");
        s.push('\n');
        s
    }

    /// Parses a file's text.
    pub fn parse(text: &str) -> Result<ReportJson, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// The file `tirx bench gemm --epilogue` writes ([`super::epilogue`]): the GEMM bench's fields
/// ([`ReportJson`]) after the epilogue's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpilogueReportJson {
    /// Our epilogue, as `--epilogue` names it (`bias-gelu`).
    pub epilogue: String,
    /// cuBLASLt's epilogue (`CUBLASLT_EPILOGUE_GELU_BIAS`).
    pub cublaslt_epilogue: String,
    /// Whether cuBLASLt computes the same D as ours (false for `bias-silu`).
    pub cublaslt_same_epilogue: bool,
    /// B's scale, as a formula of K ([`super::epilogue::b_scale`]).
    pub b_scale: String,
    /// The rest, as `tirx bench gemm` writes it.
    #[serde(flatten)]
    pub report: ReportJson,
}

impl EpilogueReportJson {
    /// The file's text: pretty-printed, with a final newline.
    pub fn to_text(&self) -> String {
        // As for `ReportJson::to_text`: strings, numbers, booleans and lists only.
        let mut s =
            serde_json::to_string_pretty(self).expect("the report's JSON always serializes");
        s.push('\n');
        s
    }

    /// Parses a file's text.
    pub fn parse(text: &str) -> Result<EpilogueReportJson, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::tests::report;
    use serde_json::Value;

    #[test]
    fn the_json_round_trips() {
        let file = ReportJson::from(&report());
        let text = file.to_text();
        assert_eq!(ReportJson::parse(&text).unwrap(), file);
        assert!(text.ends_with("}\n"), "{text}");
    }

    #[test]
    fn the_json_has_the_files_fields() {
        let j = ReportJson::from(&report()).to_text();
        assert!(j.contains("\"device\": \"NVIDIA H200\""), "{j}");
        assert!(j.contains("\"runs\": 50"), "{j}");
        assert!(j.contains("\"timing\": \"interleaved rounds\""), "{j}");
        assert!(j.contains("\"rounds\": 0"), "{j}");
        assert_eq!(j.matches("\"m\": ").count(), 3);
        assert!(
            j.contains("\"failure\": \"cuBLASLt: \\\"no algorithm\\\"\""),
            "{j}"
        );
        assert!(j.contains("\"ratio\": null"), "{j}");
        assert!(j.contains("\"geomean_ratio\": 0.7071067811865476"), "{j}");
        let v: Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["rows"][0]["kernel"], "gemm_sm90");
        assert_eq!(v["rows"][0]["ratio"], 0.5);
        assert_eq!(v["rows"][0]["candidates"][0]["failure"], Value::Null);
        assert_eq!(v["rows"][2]["ok"], false);
    }

    /// A split-K candidate's slices are written beside its time; a one-launch candidate, and
    /// every candidate of a file from before they were recorded, has none.
    #[test]
    fn a_split_k_candidate_records_its_slices() {
        let mut r = report();
        r.rows[0].candidates[0].splits = Some(3);
        let file = ReportJson::from(&r);
        let text = file.to_text();
        assert_eq!(ReportJson::parse(&text).unwrap(), file);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["rows"][0]["candidates"][0]["splits"], 3);
        assert!(
            v["rows"][0]["candidates"][1].get("splits").is_none(),
            "{text}"
        );
        let old = ReportJson::parse(include_str!(
            "../../../docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json"
        ))
        .unwrap();
        let mut candidates = old.rows.iter().flat_map(|r| &r.candidates).peekable();
        assert!(candidates.peek().is_some());
        assert!(candidates.all(|c| c.splits.is_none()));
    }

    #[test]
    fn non_finite_numbers_are_null() {
        let mut file = ReportJson::from(&report());
        file.geomean_ratio = Some(f64::NAN);
        file.min_ratio = Some(f64::INFINITY);
        let back = ReportJson::parse(&file.to_text()).unwrap();
        assert_eq!((back.geomean_ratio, back.min_ratio), (None, None));
    }

    #[test]
    fn failure_kinds_are_lowercase() {
        let mut r = report();
        r.rows[0].candidates[0].failure = Some(Failure::Wrong("rel. error 0.5".into()));
        let file = ReportJson::from(&r);
        let c = &file.rows[0].candidates[0];
        assert_eq!(c.failure, Some(FailureKind::Wrong));
        assert!(file.to_text().contains("\"failure\": \"wrong\""));
    }

    /// Numbers as f64, so that `0` in a file and the `0.0` serde_json writes compare equal.
    fn normalized(v: Value) -> Value {
        match v {
            Value::Number(x) => x.as_f64().map_or(Value::Null, Value::from),
            Value::Array(a) => Value::Array(a.into_iter().map(normalized).collect()),
            Value::Object(o) => {
                Value::Object(o.into_iter().map(|(k, v)| (k, normalized(v))).collect())
            }
            v => v,
        }
    }

    /// The object keys in the order the text has them (enough for these files: no string
    /// value in them holds `":`).
    fn keys_in_order(text: &str) -> Vec<&str> {
        let mut parts: Vec<&str> = text.split("\":").collect();
        // What follows the last key is no key.
        parts.pop();
        parts.iter().filter_map(|p| p.rsplit('"').next()).collect()
    }

    /// Every committed `docs/perf/*.json` parses into the schema and writes back with the same
    /// fields, in the same order, with the same values: today's layout
    /// (`gemm-h200-sweep-2026-11-30c.json`) and the oldest (`gemm-h200-sweep-2026-11-29.json`:
    /// no `types`, `problem`, `timing` or `rounds`) among them.
    #[test]
    fn committed_files_parse_and_write_back_unchanged() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/perf");
        let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        files.sort();
        assert!(files.len() >= 2, "only {} files in {dir}", files.len());
        let text_of = |name: &str| &files.iter().find(|f| f.0 == name).unwrap().1;
        for (name, text) in &files {
            let file = ReportJson::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!file.rows.is_empty(), "{name}");
            let back: Value = serde_json::from_str(&file.to_text()).unwrap();
            let original: Value = serde_json::from_str(text).unwrap();
            assert_eq!(normalized(back), normalized(original), "{name}");
            assert_eq!(
                keys_in_order(&file.to_text()),
                keys_in_order(text),
                "{name}"
            );
        }
        let today = ReportJson::parse(text_of("gemm-h200-sweep-2026-11-30c.json")).unwrap();
        assert_eq!(today.types.as_deref(), Some("bf16 -> bf16"));
        assert_eq!(today.problem.as_deref(), Some("D = A*B^T"));
        assert!(today.rows.iter().all(|r| r.rounds.is_some()));
        let oldest = ReportJson::parse(text_of("gemm-h200-sweep-2026-11-29.json")).unwrap();
        assert_eq!(
            (oldest.types, oldest.timing, oldest.rows[0].rounds),
            (None, None, None)
        );
    }
}
