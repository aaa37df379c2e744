//! The peers file that `kernels/bench/rows_peers.py` writes on the GPU machine and
//! `tirx bench rows --peers PATH` reads: torch, Liger and QuACK timed on the row ops with the
//! bench's method, one result per (op, shape, peer).
//!
//! Format `tirx-rows-peers/1` (JSON; the script's docstring repeats it):
//! ```text
//! {
//!   "format": "tirx-rows-peers/1",
//!   "date": "2026-12-01T12:00:00Z",           UTC, ISO 8601
//!   "device": "NVIDIA H200",
//!   "versions": {"torch": "2.11.0", "quack": "0.6.5", "liger_kernel": "0.8.5"},
//!   "method": "interleaved rounds: ...",      free text
//!   "eps": 1e-06,                             ε of RMSNorm and LayerNorm
//!   "l2_bytes": 62914560,                     the L2 size the rotation exceeded twice over
//!   "results": [
//!     {"op": "softmax", "rows": 16384, "cols": 4096, "peer": "quack",
//!      "median_ms": 0.0833, "gbps": 3222.5, "max_err": 0.0036, "ok": true,
//!      "runs": 50, "sets": 2, "first_call_s": 4.21, "failure": null}
//!   ]
//! }
//! ```
//! - `op` is a [`RowOp::name`] or `copy` (the peers process's own copy roof: torch's
//!   `dst.copy_(src)` of the same rows × cols bf16).
//! - `median_ms` is the median of the CUDA-event times; `gbps` is `2·rows·cols·2 / median`, for
//!   people: the reader recomputes it from `median_ms` by [`RowProblem::bytes`], so both sides
//!   count bytes one way.
//! - `max_err` is the checker's measure against an f32 torch reference (see
//!   [`crate::rows::reference`]; the script computes the same formula); `ok` says it passed.
//!   A peer that failed (import, launch, check) has `ok: false` and a `failure`.
//!
//! Invariants:
//! - A field added later is an `Option` that older files lack, so every file keeps parsing.
//! - Non-finite numbers are `null` (serde_json writes NaN as `null`; Python's `json` module
//!   must be told: the script writes `null` itself).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::rows::{RowOp, RowProblem};

/// The format tag this reader understands.
pub const FORMAT: &str = "tirx-rows-peers/1";

/// The `op` of a copy-roof result.
pub const COPY: &str = "copy";

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeersFile {
    /// [`FORMAT`].
    pub format: String,
    /// UTC date and time, ISO 8601.
    pub date: String,
    /// The GPU's name.
    pub device: String,
    /// Package versions by name (sorted), e.g. `torch`, `quack`, `liger_kernel`.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// How the script timed, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// ε of RMSNorm and LayerNorm.
    pub eps: f32,
    /// The L2 size the input rotation exceeded twice over, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bytes: Option<usize>,
    /// One per (op, shape, peer), in the order measured.
    pub results: Vec<PeerResult>,
}

/// One peer on one op and shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerResult {
    /// [`RowOp::name`], or [`COPY`].
    pub op: String,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Who: `torch`, `liger`, `quack`.
    pub peer: String,
    /// Median milliseconds per run, when it ran.
    pub median_ms: Option<f64>,
    /// GB/s as the script computed it (the reader recomputes it: [`PeerResult::gbps`]).
    pub gbps: Option<f64>,
    /// The checker's error measure against the f32 reference.
    pub max_err: Option<f64>,
    /// Whether it ran and passed the check.
    pub ok: bool,
    /// Timed runs the median is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<usize>,
    /// Rotating buffer sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<usize>,
    /// Seconds the first call took (JIT compilation and autotuning included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_call_s: Option<f64>,
    /// Why it has no usable time, if it has none.
    pub failure: Option<String>,
}

impl PeerResult {
    /// The bytes this result moved, counted as [`RowProblem::bytes`] counts them (a copy reads
    /// and writes the same bytes as a row op).
    pub fn bytes(&self) -> usize {
        2 * self.rows * self.cols * 2
    }

    /// Its GB/s from `median_ms`, when it ran and passed.
    pub fn gbps(&self) -> Option<f64> {
        let ms = self.median_ms.filter(|ms| self.ok && *ms > 0.0)?;
        Some(self.bytes() as f64 / (ms * 1e-3) / 1e9)
    }

    /// Whether this is `p`'s op on `p`'s shape.
    pub fn is_for(&self, p: &RowProblem) -> bool {
        self.op == p.op.name() && (self.rows, self.cols) == (p.rows, p.cols)
    }

    /// Whether this is a copy roof of `rows × cols`.
    pub fn is_copy_of(&self, rows: usize, cols: usize) -> bool {
        self.op == COPY && (self.rows, self.cols) == (rows, cols)
    }
}

/// Why a peers file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PeersError {
    /// The file could not be read.
    #[error("peers file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON of this schema.
    #[error("peers file {} is not a {FORMAT} file: {source}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The file says another format.
    #[error("peers file {} has format `{found}`; this tirx reads `{FORMAT}`", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// Its `format`.
        found: String,
    },
    /// A result names an op that is neither a row op nor `copy`.
    #[error("peers file {}: unknown op `{op}` (softmax, rmsnorm, layernorm or copy)", path.display())]
    UnknownOp {
        /// The file.
        path: PathBuf,
        /// The op.
        op: String,
    },
}

impl PeersFile {
    /// Parses a file's text; `path` only names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<PeersFile, PeersError> {
        let file: PeersFile = serde_json::from_str(text).map_err(|source| PeersError::Format {
            path: path.to_path_buf(),
            source,
        })?;
        if file.format != FORMAT {
            return Err(PeersError::Version {
                path: path.to_path_buf(),
                found: file.format,
            });
        }
        if let Some(r) = file
            .results
            .iter()
            .find(|r| r.op != COPY && RowOp::parse(&r.op).is_none())
        {
            return Err(PeersError::UnknownOp {
                path: path.to_path_buf(),
                op: r.op.clone(),
            });
        }
        Ok(file)
    }

    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<PeersFile, PeersError> {
        let text = std::fs::read_to_string(path).map_err(|source| PeersError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        PeersFile::parse(&text, path)
    }

    /// The file's text: pretty-printed, with a final newline.
    pub fn to_text(&self) -> String {
        // Strings, numbers, booleans, lists and a string-keyed map: this always serializes.
        let mut s = serde_json::to_string_pretty(self).expect("a peers file serializes");
        s.push('\n');
        s
    }

    /// The peers' names, in the order they first appear (copy roofs left out).
    pub fn peer_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for r in self.results.iter().filter(|r| r.op != COPY) {
            if !names.contains(&r.peer.as_str()) {
                names.push(&r.peer);
            }
        }
        names
    }

    /// The results for `p` (every peer that was tried on it).
    pub fn results_for<'a>(&'a self, p: &'a RowProblem) -> impl Iterator<Item = &'a PeerResult> {
        self.results.iter().filter(move |r| r.is_for(p))
    }

    /// The fastest copy roof the peers measured on `rows × cols`, in GB/s.
    pub fn copy_gbps(&self, rows: usize, cols: usize) -> Option<f64> {
        self.results
            .iter()
            .filter(|r| r.is_copy_of(rows, cols))
            .filter_map(PeerResult::gbps)
            .reduce(f64::max)
    }

    /// "torch 2.11.0, quack 0.6.5" (sorted by name; empty when none are known).
    pub fn versions_line(&self) -> String {
        let v: Vec<String> = self
            .versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        v.join(", ")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn result(
        op: &str,
        shape: (usize, usize),
        peer: &str,
        ms: Option<f64>,
    ) -> PeerResult {
        let (rows, cols) = shape;
        PeerResult {
            op: op.into(),
            rows,
            cols,
            peer: peer.into(),
            median_ms: ms,
            gbps: ms.map(|ms| 4.0 * (rows * cols) as f64 / (ms * 1e6)),
            max_err: ms.map(|_| 3.6e-3),
            ok: ms.is_some(),
            runs: Some(50),
            sets: Some(2),
            first_call_s: Some(0.5),
            failure: ms.is_none().then(|| "FAILED ImportError: no quack".into()),
        }
    }

    /// A made-up file: at 1000x1000 (4 MB moved), softmax from torch at 4 us (1000 GB/s) and
    /// quack at 2 us (2000 GB/s), rmsnorm from torch only (liger failed), a copy at 1 us.
    pub(crate) fn file() -> PeersFile {
        let s = (1000, 1000);
        PeersFile {
            format: FORMAT.into(),
            date: "2026-12-01T00:00:00Z".into(),
            device: "NVIDIA H200".into(),
            versions: [("torch", "2.11.0"), ("quack", "0.6.5")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            method: Some("interleaved rounds".into()),
            eps: 1e-6,
            l2_bytes: Some(60 << 20),
            results: vec![
                result("softmax", s, "torch", Some(4e-3)),
                result("softmax", s, "quack", Some(2e-3)),
                result("rmsnorm", s, "torch", Some(8e-3)),
                result("rmsnorm", s, "liger", None),
                result(COPY, s, "torch", Some(1e-3)),
            ],
        }
    }

    fn path() -> &'static Path {
        Path::new("peers.json")
    }

    #[test]
    fn the_file_round_trips() {
        let f = file();
        let text = f.to_text();
        assert_eq!(PeersFile::parse(&text, path()).unwrap(), f);
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\"format\": \"tirx-rows-peers/1\""), "{text}");
        // Versions are sorted by name.
        assert!(text.find("\"quack\"").unwrap() < text.find("\"torch\"").unwrap());
        assert_eq!(f.versions_line(), "quack 0.6.5, torch 2.11.0");
    }

    #[test]
    fn a_minimal_file_from_the_script_parses() {
        // What a failed import and NaN error look like from Python: nulls, no optional fields.
        let text = r#"{"format": "tirx-rows-peers/1", "date": "d", "device": "g", "eps": 1e-06,
            "results": [{"op": "layernorm", "rows": 2, "cols": 8, "peer": "quack",
            "median_ms": null, "gbps": null, "max_err": null, "ok": false,
            "failure": "FAILED AttributeError: no layernorm_fwd"}]}"#;
        let f = PeersFile::parse(text, path()).unwrap();
        assert!(f.versions.is_empty() && f.method.is_none() && f.l2_bytes.is_none());
        assert_eq!(f.results[0].gbps(), None);
        assert_eq!(f.peer_names(), ["quack"]);
    }

    #[test]
    fn rates_are_recomputed_from_the_median() {
        let f = file();
        let p = RowProblem::new(RowOp::Softmax, 1000, 1000);
        let rates: Vec<(&str, Option<f64>)> = f
            .results_for(&p)
            .map(|r| (r.peer.as_str(), r.gbps()))
            .collect();
        assert_eq!(rates.len(), 2);
        assert!((rates[0].1.unwrap() - 1000.0).abs() < 1e-9, "{rates:?}");
        assert!((rates[1].1.unwrap() - 2000.0).abs() < 1e-9, "{rates:?}");
        // A result that did not pass has no rate, even with a time.
        let mut wrong = f.results[0].clone();
        wrong.ok = false;
        assert_eq!(wrong.gbps(), None);
        assert!((f.copy_gbps(1000, 1000).unwrap() - 4000.0).abs() < 1e-9);
        assert_eq!(f.copy_gbps(1000, 999), None);
        assert_eq!(f.peer_names(), ["torch", "quack", "liger"]);
        let ln = RowProblem::new(RowOp::LayerNorm, 1000, 1000);
        assert_eq!(f.results_for(&ln).count(), 0);
    }

    #[test]
    fn wrong_files_are_typed_errors() {
        let e = PeersFile::parse("{", path()).unwrap_err();
        assert!(matches!(e, PeersError::Format { .. }), "{e}");
        let mut f = file();
        f.format = "tirx-rows-peers/2".into();
        let e = PeersFile::parse(&f.to_text(), path()).unwrap_err();
        assert!(
            e.to_string().contains("has format `tirx-rows-peers/2`"),
            "{e}"
        );
        let mut f = file();
        f.results[0].op = "gelu".into();
        let e = PeersFile::parse(&f.to_text(), path()).unwrap_err();
        assert!(
            matches!(e, PeersError::UnknownOp { ref op, .. } if op == "gelu"),
            "{e}"
        );
        let e = PeersFile::load(Path::new("/nonexistent/peers.json")).unwrap_err();
        assert!(matches!(e, PeersError::Io { .. }), "{e}");
    }
}
