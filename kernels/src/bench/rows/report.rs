//! What `tirx bench rows` found, and its three forms: the table printed at the end, the JSON
//! file (`tirx-bench-rows/1`, [`RowsReportJson`]) and the SVG plot (ours beside the fastest
//! peer, drawn by [`crate::bench::plot`]).
//!
//! Invariants:
//! - Rates are GB/s of [`RowProblem::bytes`] (x read + y written, bf16), for ours, for the
//!   copy roof and for the peers alike (peers' rates recomputed from their medians).
//! - A row's ratio is ours over the fastest peer that ran and passed its check; our rate
//!   counts only when our output passed ([`RowsRow::ours`] is `None` otherwise).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::peers::PeersFile;
use crate::bench::plot::{self, BarPair, PlotError};
use crate::bench::report::{Failure, summary};
use crate::bench::{RUNS, WARMUP_MS};
use crate::rows::RowProblem;

/// A median time and its rate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Median milliseconds per run.
    pub median_ms: f64,
    /// [`RowProblem::bytes`] over the median, in GB/s.
    pub gbps: f64,
}

impl Rate {
    /// The rate of `p` taking `median_ms`.
    pub fn of(p: &RowProblem, median_ms: f64) -> Rate {
        Rate {
            median_ms,
            gbps: p.gbps(median_ms),
        }
    }
}

/// A peer's rate on one row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerRate {
    /// Who.
    pub peer: String,
    /// GB/s, when it ran and passed.
    pub gbps: Option<f64>,
    /// Why it has no rate, if it has none.
    pub failure: Option<String>,
}

/// One op on one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct RowsRow {
    /// The op and shape.
    pub problem: RowProblem,
    /// Our rate, when our kernel ran and its output passed the check.
    pub ours: Option<Rate>,
    /// Why ours has no rate (refused, wrong), if it has none.
    pub failure: Option<Failure>,
    /// Our output's error measure ([`crate::rows::reference::check`]), when checked.
    pub max_err: Option<f64>,
    /// The copy roof: a device-to-device copy of x into y, timed in the same rounds.
    pub copy: Option<Rate>,
    /// Why the copy has no rate, if it has none.
    pub copy_failure: Option<String>,
    /// Timed interleaved rounds.
    pub rounds: usize,
    /// Rotating buffer sets.
    pub sets: usize,
    /// The peers' rates from the peers file, in its order.
    pub peers: Vec<PeerRate>,
    /// The peers process's copy roof on this shape, in GB/s.
    pub peer_copy: Option<f64>,
}

impl RowsRow {
    /// The fastest peer that ran and passed.
    pub fn fastest_peer(&self) -> Option<(&str, f64)> {
        self.peers
            .iter()
            .filter_map(|p| p.gbps.map(|g| (p.peer.as_str(), g)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Our GB/s over the fastest peer's.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.ours?.gbps / self.fastest_peer()?.1)
    }

    /// Our GB/s over the copy roof's.
    pub fn of_copy(&self) -> Option<f64> {
        Some(self.ours?.gbps / self.copy?.gbps)
    }

    /// Whether the row passed: ours ran and was right, and the copy roof ran.
    pub fn ok(&self) -> bool {
        self.ours.is_some() && self.failure.is_none() && self.copy.is_some()
    }

    /// Fills the peers' columns from `file`.
    pub fn attach(&mut self, file: &PeersFile) {
        let p = self.problem;
        self.peers = file
            .results_for(&p)
            .map(|r| PeerRate {
                peer: r.peer.clone(),
                gbps: r.gbps(),
                failure: match (r.gbps(), &r.failure) {
                    (Some(_), _) => None,
                    (None, Some(why)) => Some(why.clone()),
                    (None, None) => Some("no passing time".into()),
                },
            })
            .collect();
        self.peer_copy = file.copy_gbps(p.rows, p.cols);
    }

    /// What went wrong, one line each.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.failure {
            Some(Failure::Refused(why)) => out.push(format!("tirx: refused: {why}")),
            Some(Failure::Wrong(why)) => out.push(format!("tirx: WRONG: {why}")),
            None => {}
        }
        if let Some(why) = &self.copy_failure {
            out.push(format!("copy roof: {why}"));
        }
        for p in &self.peers {
            if let Some(why) = &p.failure {
                out.push(format!("{}: {why}", p.peer));
            }
        }
        out
    }

    /// `softmax 16384x4096`, the row's label.
    pub fn label(&self) -> String {
        format!("{} {}", self.problem.op, self.problem.shape_label())
    }
}

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct RowsReport {
    /// UTC date and time, ISO 8601.
    pub date: String,
    /// The GPU's name.
    pub device: String,
    /// The peers file's header (device, date, versions), when one was read.
    pub peers: Option<PeersMeta>,
    /// One row per (shape, op), in the order measured.
    pub rows: Vec<RowsRow>,
}

/// Where the peers' numbers came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeersMeta {
    /// The peers file's device.
    pub device: String,
    /// The peers file's date.
    pub date: String,
    /// Its package versions, `name version` joined by commas.
    pub versions: String,
    /// The peers' names, in the file's order.
    pub names: Vec<String>,
}

impl PeersMeta {
    /// The header of `file`.
    pub fn of(file: &PeersFile) -> PeersMeta {
        PeersMeta {
            device: file.device.clone(),
            date: file.date.clone(),
            versions: file.versions_line(),
            names: file.peer_names().into_iter().map(String::from).collect(),
        }
    }
}

fn num(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "-".into(),
    }
}

impl RowsReport {
    /// The rows' ratios to their fastest peer, where both ran.
    pub fn ratios(&self) -> Vec<f64> {
        self.rows.iter().filter_map(RowsRow::ratio).collect()
    }

    /// The peers' names (the table's columns).
    pub fn peer_names(&self) -> Vec<String> {
        self.peers.as_ref().map_or(Vec::new(), |m| m.names.clone())
    }

    /// The table printed at the end: one line per op and shape with every peer's GB/s, problems
    /// under it; then the peers' origin and the geometric mean and minimum of the ratios.
    pub fn table(&self) -> String {
        let names = self.peer_names();
        let mut s = String::new();
        let _ = write!(s, "{:<22} {:>9}", "op, shape", "tirx GB/s");
        for n in &names {
            let _ = write!(s, " {n:>8}");
        }
        let _ = writeln!(
            s,
            " {:>19} {:>9} {:>10} {:>7} {:>8}",
            "vs fastest peer", "copy GB/s", "peer copy", "of copy", "max err"
        );
        for r in &self.rows {
            let _ = write!(s, "{:<22} {:>9}", r.label(), num(r.ours.map(|o| o.gbps), 1));
            for n in &names {
                let g = r.peers.iter().find(|p| &p.peer == n).and_then(|p| p.gbps);
                let _ = write!(s, " {:>8}", num(g, 1));
            }
            let versus = match (r.ratio(), r.fastest_peer()) {
                (Some(x), Some((who, _))) => format!("{x:.3} ({who})"),
                _ => "-".into(),
            };
            let _ = writeln!(
                s,
                " {versus:>19} {:>9} {:>10} {:>7} {:>8}",
                num(r.copy.map(|c| c.gbps), 1),
                num(r.peer_copy, 1),
                r.of_copy()
                    .map_or("-".into(), |x| format!("{:.1}%", 100.0 * x)),
                r.max_err.map_or("-".into(), |e| format!("{e:.2e}")),
            );
            for p in r.problems() {
                let _ = writeln!(s, "    {}", p.replace('\n', "\n      "));
            }
        }
        match &self.peers {
            Some(m) => {
                let _ = writeln!(s, "peers: {} on {}, {}", m.date, m.device, m.versions);
                if m.device != self.device {
                    let _ = writeln!(
                        s,
                        "note: the peers ran on {}, tirx on {}: the ratios compare devices",
                        m.device, self.device
                    );
                }
            }
            None => {
                s.push_str("peers: none (pass --peers PATH, from kernels/bench/rows_peers.py)\n")
            }
        }
        match summary(&self.ratios()) {
            Some((geo, min)) => {
                let at = self
                    .rows
                    .iter()
                    .find(|r| r.ratio() == Some(min))
                    .map_or(String::new(), |r| format!(" ({})", r.label()));
                let _ = writeln!(s, "geometric mean of ratios to the fastest peer: {geo:.3}");
                let _ = writeln!(s, "minimum ratio: {min:.3}{at}");
            }
            None => s.push_str("no row ran on both sides\n"),
        }
        s
    }

    /// The plot's bar pairs: ours beside the fastest peer.
    pub fn bars(&self) -> Vec<BarPair> {
        self.rows
            .iter()
            .map(|r| BarPair {
                label: r.label(),
                ours: r.ours.map(|o| o.gbps),
                cublas: r.fastest_peer().map(|(_, g)| g),
                note: match (r.ratio(), r.fastest_peer()) {
                    (Some(x), Some((who, _))) => format!("{x:.2}x {who}"),
                    (None, _) if r.ours.is_none() => "failed".into(),
                    _ => "no peer".into(),
                },
            })
            .collect()
    }

    /// The plot as an SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        let title = format!("tirx row ops (bf16) vs the fastest peer on {}", self.device);
        let copies: Vec<f64> = self
            .rows
            .iter()
            .filter_map(|r| r.copy.map(|c| c.gbps))
            .collect();
        let roof = match (
            copies.iter().copied().reduce(f64::min),
            copies.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => format!("; device copy {lo:.0}-{hi:.0} GB/s"),
            _ => String::new(),
        };
        let ratios = match summary(&self.ratios()) {
            Some((geo, min)) => format!(" - geomean ratio {geo:.2}, min {min:.2}"),
            None => String::new(),
        };
        let subtitle = format!(
            "GB/s (x read + y written), median of at least {RUNS} interleaved rounds, inputs \
             rotated past L2{roof}. {}{ratios}",
            self.date
        );
        let svg = plot::svg(&title, &subtitle, &self.bars())?;
        // The plot names its series for the GEMM bench; here the second bar is a peer.
        Ok(svg
            .replace(">\ntirx (best config)\n<", ">\ntirx\n<")
            .replace(">\ncuBLASLt\n<", ">\nfastest peer\n<"))
    }

    /// The JSON file's text ([`RowsReportJson`]).
    pub fn json(&self) -> String {
        RowsReportJson::from(self).to_text()
    }
}

/// The format tag of the bench's JSON file.
pub const REPORT_FORMAT: &str = "tirx-bench-rows/1";

/// The bench's JSON file: the report, denormalized (each row repeats its computed ratio,
/// fastest peer and verdict, so a reader needs no rules).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowsReportJson {
    /// [`REPORT_FORMAT`].
    pub format: String,
    /// UTC date and time, ISO 8601.
    pub date: String,
    /// The GPU's name.
    pub device: String,
    /// The minimum number of timed rounds ([`RUNS`]).
    pub runs: usize,
    /// The minimum warm-up, in milliseconds ([`WARMUP_MS`]).
    pub warmup_ms: f64,
    /// The timing method.
    pub timing: String,
    /// Where the peers' numbers came from.
    pub peers: Option<PeersMeta>,
    /// Geometric mean of the rows' ratios.
    pub geomean_ratio: Option<f64>,
    /// Smallest ratio.
    pub min_ratio: Option<f64>,
    /// One per op and shape, in the order measured.
    pub rows: Vec<RowsRowJson>,
}

/// One op on one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowsRowJson {
    /// [`crate::rows::RowOp::name`].
    pub op: String,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// ε.
    pub eps: f32,
    /// [`RowProblem::bytes`].
    pub bytes: usize,
    /// Our median milliseconds.
    pub ours_ms: Option<f64>,
    /// Our GB/s.
    pub ours_gbps: Option<f64>,
    /// The copy roof's median milliseconds.
    pub copy_ms: Option<f64>,
    /// The copy roof's GB/s.
    pub copy_gbps: Option<f64>,
    /// The peers process's copy roof, GB/s.
    pub peer_copy_gbps: Option<f64>,
    /// Ours over the copy roof.
    pub of_copy: Option<f64>,
    /// The fastest peer that passed.
    pub fastest_peer: Option<String>,
    /// Its GB/s.
    pub fastest_peer_gbps: Option<f64>,
    /// Ours over the fastest peer.
    pub ratio: Option<f64>,
    /// Our output's error measure.
    pub max_err: Option<f64>,
    /// Whether the row passed ([`RowsRow::ok`]).
    pub ok: bool,
    /// `refused` or `wrong`, when ours failed.
    pub failure: Option<String>,
    /// The failure's detail.
    pub why: Option<String>,
    /// Why the copy roof failed, if it did.
    pub copy_failure: Option<String>,
    /// Timed interleaved rounds.
    pub timed_rounds: usize,
    /// Rotating buffer sets.
    pub sets: usize,
    /// Every peer tried on this row.
    pub peers: Vec<PeerRate>,
}

impl From<&RowsRow> for RowsRowJson {
    fn from(r: &RowsRow) -> RowsRowJson {
        let p = r.problem;
        let (failure, why) = match &r.failure {
            None => (None, None),
            Some(Failure::Refused(w)) => (Some("refused".to_string()), Some(w.clone())),
            Some(Failure::Wrong(w)) => (Some("wrong".to_string()), Some(w.clone())),
        };
        RowsRowJson {
            op: p.op.name().into(),
            rows: p.rows,
            cols: p.cols,
            eps: p.eps,
            bytes: p.bytes(),
            ours_ms: r.ours.map(|o| o.median_ms),
            ours_gbps: r.ours.map(|o| o.gbps),
            copy_ms: r.copy.map(|c| c.median_ms),
            copy_gbps: r.copy.map(|c| c.gbps),
            peer_copy_gbps: r.peer_copy,
            of_copy: r.of_copy(),
            fastest_peer: r.fastest_peer().map(|(n, _)| n.to_string()),
            fastest_peer_gbps: r.fastest_peer().map(|(_, g)| g),
            ratio: r.ratio(),
            max_err: r.max_err,
            ok: r.ok(),
            failure,
            why,
            copy_failure: r.copy_failure.clone(),
            timed_rounds: r.rounds,
            sets: r.sets,
            peers: r.peers.clone(),
        }
    }
}

impl From<&RowsReport> for RowsReportJson {
    fn from(r: &RowsReport) -> RowsReportJson {
        let (geomean_ratio, min_ratio) = summary(&r.ratios()).unzip();
        RowsReportJson {
            format: REPORT_FORMAT.into(),
            date: r.date.clone(),
            device: r.device.clone(),
            runs: RUNS,
            warmup_ms: WARMUP_MS,
            timing: super::TIMING.into(),
            peers: r.peers.clone(),
            geomean_ratio,
            min_ratio,
            rows: r.rows.iter().map(RowsRowJson::from).collect(),
        }
    }
}

impl RowsReportJson {
    /// The file's text: pretty-printed, with a final newline.
    pub fn to_text(&self) -> String {
        // Strings, numbers, booleans and lists only: this always serializes.
        let mut s = serde_json::to_string_pretty(self).expect("the rows report serializes");
        s.push('\n');
        s
    }

    /// Parses a file's text.
    pub fn parse(text: &str) -> Result<RowsReportJson, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// A row of `p` with nothing measured yet (the measurement fills it in).
pub fn unmeasured(p: RowProblem) -> RowsRow {
    RowsRow {
        problem: p,
        ours: None,
        failure: None,
        max_err: None,
        copy: None,
        copy_failure: None,
        rounds: 0,
        sets: 0,
        peers: Vec::new(),
        peer_copy: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::peers::tests::file;
    use super::*;
    use crate::rows::RowOp;

    /// A row at 1000x1000 (4 MB moved): ours at `ours_ms`, the copy at 1.25 us (3200 GB/s).
    fn row(op: RowOp, ours_ms: Option<f64>) -> RowsRow {
        let p = RowProblem::new(op, 1000, 1000);
        let mut r = unmeasured(p);
        r.ours = ours_ms.map(|ms| Rate::of(&p, ms));
        r.max_err = ours_ms.map(|_| 3.5e-3);
        r.copy = Some(Rate::of(&p, 1.25e-3));
        r.rounds = 50;
        r.sets = 31;
        if ours_ms.is_none() {
            r.failure = Some(Failure::Refused(
                "no kernel fits softmax 1000x1000 bf16".into(),
            ));
        }
        r
    }

    /// Softmax at 2.5 us (1600 GB/s, 0.8 of quack's 2000), rmsnorm at 4 us (1000 GB/s, 2x
    /// torch's 500; liger failed), layernorm refused (no peer ran it), with the peers attached.
    fn report() -> RowsReport {
        let peers = file();
        let mut rows = vec![
            row(RowOp::Softmax, Some(2.5e-3)),
            row(RowOp::RmsNorm, Some(4e-3)),
            row(RowOp::LayerNorm, None),
        ];
        for r in &mut rows {
            r.attach(&peers);
        }
        RowsReport {
            date: "2026-12-01T00:00:00Z".into(),
            device: "NVIDIA H200".into(),
            peers: Some(PeersMeta::of(&peers)),
            rows,
        }
    }

    #[test]
    fn rates_ratios_and_the_copy_fraction() {
        let r = report();
        let [sm, rn, ln] = &r.rows[..] else {
            panic!("three rows")
        };
        assert!((sm.ours.unwrap().gbps - 1600.0).abs() < 1e-9);
        assert_eq!(sm.fastest_peer().map(|p| p.0), Some("quack"));
        assert!((sm.ratio().unwrap() - 0.8).abs() < 1e-12);
        assert!((sm.of_copy().unwrap() - 0.5).abs() < 1e-12);
        assert!((sm.peer_copy.unwrap() - 4000.0).abs() < 1e-9);
        // Liger failed on rmsnorm: torch is the fastest that ran.
        assert_eq!(rn.fastest_peer().map(|p| p.0), Some("torch"));
        assert!((rn.ratio().unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(rn.peers[1].gbps, None);
        assert!(
            rn.peers[1]
                .failure
                .as_deref()
                .unwrap()
                .contains("ImportError")
        );
        assert!(sm.ok() && rn.ok());
        assert!(!ln.ok() && ln.ratio().is_none() && ln.fastest_peer().is_none());
        let (geo, min) = summary(&r.ratios()).unwrap();
        assert!((geo - 1.6f64.sqrt()).abs() < 1e-12);
        assert!((min - 0.8).abs() < 1e-12);
    }

    #[test]
    fn the_table_has_every_peer_column_and_the_summary() {
        let t = report().table();
        let header = t.lines().next().unwrap();
        for col in [
            "tirx GB/s",
            "torch",
            "quack",
            "liger",
            "vs fastest peer",
            "copy GB/s",
        ] {
            assert!(header.contains(col), "{col}: {t}");
        }
        assert!(
            t.contains("softmax 1000x1000         1600.0   1000.0   2000.0        -"),
            "{t}"
        );
        assert!(t.contains("0.800 (quack)"), "{t}");
        assert!(t.contains("2.000 (torch)"), "{t}");
        assert!(t.contains("50.0%"), "{t}");
        assert!(t.contains("tirx: refused: no kernel fits"), "{t}");
        assert!(t.contains("liger: FAILED ImportError"), "{t}");
        assert!(
            t.contains("peers: 2026-12-01T00:00:00Z on NVIDIA H200, quack 0.6.5"),
            "{t}"
        );
        assert!(!t.contains("note: the peers ran on"), "{t}");
        assert!(
            t.contains("geometric mean of ratios to the fastest peer: 1.265"),
            "{t}"
        );
        assert!(
            t.contains("minimum ratio: 0.800 (softmax 1000x1000)"),
            "{t}"
        );
    }

    #[test]
    fn a_run_without_peers_or_on_another_device_says_so() {
        let mut r = report();
        r.device = "NVIDIA H100".into();
        assert!(
            r.table()
                .contains("the peers ran on NVIDIA H200, tirx on NVIDIA H100")
        );
        r.peers = None;
        for row in &mut r.rows {
            row.peers.clear();
            row.peer_copy = None;
        }
        let t = r.table();
        assert!(t.contains("peers: none"), "{t}");
        assert!(t.contains("no row ran on both sides"), "{t}");
        assert!(!t.lines().next().unwrap().contains("torch"), "{t}");
    }

    #[test]
    fn bars_and_plot_name_the_peer() {
        let r = report();
        let bars = r.bars();
        assert_eq!(bars[0].note, "0.80x quack");
        assert_eq!(bars[0].cublas, Some(2000.0));
        assert_eq!(bars[2].note, "failed");
        assert_eq!(bars[2].ours, None);
        let svg = r.svg().unwrap();
        assert!(svg.contains("tirx row ops (bf16) vs the fastest peer on NVIDIA H200"));
        assert!(svg.contains("device copy 3200-3200 GB/s"), "{svg}");
        assert!(svg.contains("geomean ratio 1.26, min 0.80"), "{svg}");
        assert!(svg.contains("\nfastest peer\n"), "{svg}");
        assert!(
            !svg.contains("cuBLASLt") && !svg.contains("best config"),
            "{svg}"
        );
    }

    #[test]
    fn the_json_round_trips_and_repeats_the_verdicts() {
        let file = RowsReportJson::from(&report());
        let text = file.to_text();
        assert_eq!(RowsReportJson::parse(&text).unwrap(), file);
        assert_eq!(file.format, REPORT_FORMAT);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["rows"][0]["op"], "softmax");
        assert_eq!(v["rows"][0]["bytes"], 4_000_000);
        assert_eq!(v["rows"][0]["fastest_peer"], "quack");
        assert_eq!(v["rows"][0]["ok"], true);
        assert_eq!(v["rows"][2]["failure"], "refused");
        assert_eq!(v["rows"][2]["ratio"], serde_json::Value::Null);
        assert_eq!(v["peers"]["names"][2], "liger");
        assert_eq!(v["runs"], 50);
    }
}
