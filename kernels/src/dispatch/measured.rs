//! The cost model's choice against a measurement: at each of the 15 skinny bf16 shapes that
//! `tirx bench gemm --all` timed on an H100 on 2026-12-06 (every accepted config beside
//! cuBLASLt, `docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json`), the config the model
//! chooses must have measured within 5 % of the fastest config measured there (issue #32),
//! but at the shapes of [`KNOWN_MISSES`], which must still miss (so that a change that mends
//! one also strikes it from the list).
//!
//! The file records each candidate's time but not the slices `S` a split-K candidate ran
//! with (the bench records them since, as each candidate's `splits`): the bench runs a
//! split-K config through the host's plan (`split::launch_split`), whose `S` is
//! `split::best_split`'s for the device. [`MEASURED_SPLITS`] holds those `S` as the model of
//! the measured commit (`46d59a2`) picked them, for files without `splits`; a split-K choice
//! counts only at the `S` it was measured with (a plan at another `S` has no time in the file,
//! and the test says so rather than borrow another plan's).

use super::tune::Cache;
use super::{Device, choose};
use crate::bench::json::{CandidateJson, ReportJson};
use crate::catalogue;
use crate::gemm::request::{GemmRequest, GemmTypes};
use crate::gemm::split;
use tirx::problem::{BLayout, Epilogue};

/// The measurement (H100 SXM, 132 SMs, bf16 → bf16, D = A·Bᵀ).
const MEASURED: &str =
    include_str!("../../../docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json");

/// The least ratio of the fastest measured time to the chosen config's (issue #32: 0.95).
const LEAST_RATIO: f64 = 0.95;

/// The split-K candidates of the measurement, in [`MEASURED_SPLITS`]' column order.
const SPLIT_CONFIGS: [(&str, &str); 5] = [
    ("gemm_sm90_splitk", "default"),
    ("gemm_sm90_splitk", "n64"),
    ("gemm_sm90_splitk", "n256"),
    ("gemm_sm90_splitk_t", "m16"),
    ("gemm_sm90_splitk_t", "m16_s10"),
];

/// M, N, K.
type Shape = (usize, usize, usize);

/// The slices each split-K candidate ([`SPLIT_CONFIGS`]) ran with at each measured shape
/// (`best_split` at `46d59a2` on 132 SMs, whose model held every device to the H200's HBM
/// rate; at the H100's own rate the model still picks these `S` for every config it
/// chooses here, though not for every candidate: `gemm_sm90_splitk/n256` at 64×8192×8192 would
/// take 2).
const MEASURED_SPLITS: &[(Shape, [usize; 5])] = &[
    ((8, 4096, 4096), [4, 2, 7, 2, 4]),
    ((32, 4096, 4096), [4, 2, 7, 2, 2]),
    ((64, 4096, 4096), [4, 2, 6, 2, 2]),
    ((128, 4096, 4096), [2, 2, 4, 2, 2]),
    ((256, 4096, 4096), [2, 2, 2, 2, 2]),
    ((64, 8192, 8192), [2, 2, 3, 2, 2]),
    ((128, 8192, 8192), [2, 2, 2, 2, 2]),
    ((256, 8192, 2048), [2, 2, 2, 2, 2]),
    ((64, 14336, 4096), [2, 2, 2, 2, 2]),
    ((128, 4096, 14336), [2, 2, 4, 2, 2]),
    ((4096, 64, 4096), [2, 2, 2, 2, 2]),
    ((4096, 128, 8192), [2, 2, 2, 2, 2]),
    ((64, 64, 4104), [21, 17, 21, 9, 9]),
    ((32, 128, 4096), [21, 17, 21, 9, 9]),
    ((64, 256, 8192), [25, 21, 29, 5, 9]),
];

/// The shapes where the model's choice is still under [`LEAST_RATIO`] of the fastest
/// measured config (issue #32), and why. At each, one config alone measured within 5 % of the
/// fastest, so the model must rank it first over runners-up 6–8 % behind it:
/// - 32×4096×4096, `gemm_sm90_splitk_t/m16_s10` (S = 2, 0.938 of `gemm_sm90_splitk/n64`,
///   S = 2, 18.85 µs; `default` S = 4 0.939, `n256` S = 7 0.917): the four split plans
///   stream 36–41 MB near the H100's copy rate, and at that rate the model puts them within
///   8 % of one another (101.2, 102.9, 106.8, 110.0 units), finer than its terms resolve
///   (`m16_s10` reads B once per 16 rows of M, from L2, and its transposing reduce, neither
///   counted). Even `n64` is 0.94 of cuBLASLt's 17.73 µs there;
/// - 64×256×8192, `gemm_sm90_splitk_t/m16` (S = 5, 0.891 of `gemm_sm90_splitk/n64`, S = 21,
///   10.24 µs; `default` S = 25 0.941): the five plans took 10.2–12.6 µs, mostly fixed costs
///   (the fill, the second launch, the reduce's rounds). Counting each CTA's own bytes (the
///   transposed plan's B once per 16 rows of M, A once per N tile) in the pull term at the
///   measured stage latency moves the slices of the measured plans (`m16`: 5 → 6–8) and ranks
///   `gemm_sm90_splitk/n256` first at five shapes that pass now (0.735–0.917 where its `S`
///   is the measured one); the reduce's estimates (0.5 µs a round, 2 µs the second launch)
///   swept over 0–1 and 0–4 µs mend neither without breaking another.
///
/// (64×8192×8192, `gemm_sm90_ws/n64` at 0.820, left the list when the one-launch model's HBM
/// rate began to count only the bytes of its boxes inside the tensors, `request::box_share`.)
///
/// A new measurement that records each split candidate's `S` (the bench does now) and times
/// the split plans at more than the model's `S` would let the split model be refitted.
const KNOWN_MISSES: &[Shape] = &[(32, 4096, 4096), (64, 256, 8192)];

/// One shape's verdict: the model's choice, its slices, and its measured ratio to the fastest
/// config (`Err`: why the measurement cannot judge it).
struct Judged {
    /// M, N, K.
    shape: Shape,
    /// `kernel/config`.
    label: String,
    /// The slices of a split-K choice.
    splits: Option<usize>,
    /// The fastest measured time over the choice's.
    ratio: Result<f64, String>,
}

impl Judged {
    /// Whether the choice measured within [`LEAST_RATIO`] of the fastest.
    fn meets(&self) -> bool {
        self.ratio.as_ref().is_ok_and(|r| *r >= LEAST_RATIO)
    }
}

impl std::fmt::Display for Judged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (m, n, k) = self.shape;
        let s = self.splits.map_or(String::new(), |s| format!(" (S = {s})"));
        match &self.ratio {
            Ok(r) => write!(f, "{m}x{n}x{k}: {}{s}, {r:.3} of the fastest", self.label),
            Err(why) => write!(f, "{m}x{n}x{k}: {}{s}: {why}", self.label),
        }
    }
}

/// The slices `(kernel, config)` ran with at `shape` in the measurement: the candidate's
/// recorded `splits`, else [`MEASURED_SPLITS`]' if it is a split-K candidate of
/// [`SPLIT_CONFIGS`].
fn measured_splits(shape: Shape, candidate: Option<&CandidateJson>) -> Option<usize> {
    let c = candidate?;
    if c.splits.is_some() {
        return c.splits;
    }
    let (kernel, config) = (c.kernel.as_str(), c.config.as_str());
    let column = SPLIT_CONFIGS.iter().position(|c| *c == (kernel, config))?;
    let (_, splits) = MEASURED_SPLITS.iter().find(|(s, _)| *s == shape)?;
    Some(splits[column])
}

/// The model's choice at every measured shape on the device of the measurement (an H100 SXM:
/// 132 SMs, its HBM rate), judged by the measurement.
fn judge_measured() -> Vec<Judged> {
    let report: ReportJson = serde_json::from_str(MEASURED).expect("the committed file parses");
    let device = Device::h100();
    report
        .rows
        .iter()
        .map(|row| {
            let shape = (row.m, row.n, row.k);
            let request =
                GemmRequest::contiguous(BLayout::Tn, Epilogue::Plain, GemmTypes::BF16, shape);
            let choice = choose(&request, &catalogue::all(), &device, &Cache::default())
                .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
            let (kernel, config) = (choice.kernel.name, choice.artifact.config);
            let splits = split::is_partial(choice.artifact).then(|| {
                split::best_split(&request, choice.artifact, &device)
                    .expect("a ranked split-K plan has slices")
                    .0
            });
            let fastest = row
                .candidates
                .iter()
                .filter_map(|c| c.ms)
                .fold(f64::INFINITY, f64::min);
            let candidate = row
                .candidates
                .iter()
                .find(|c| c.kernel == kernel && c.config == config);
            let time = candidate
                .and_then(|c| c.ms)
                .ok_or_else(|| format!("{kernel}/{config} has no time in the measurement"));
            let ratio = time.and_then(|ms| match (splits, measured_splits(shape, candidate)) {
                (Some(s), Some(at)) if s != at => Err(format!(
                    "{kernel}/{config} splits K in {s}, but was measured split in {at}"
                )),
                (Some(_), None) => Err(format!("{kernel}/{config}'s measured S is not recorded")),
                _ => Ok(fastest / ms),
            });
            Judged {
                shape,
                label: format!("{kernel}/{config}"),
                splits,
                ratio,
            }
        })
        .collect()
}

/// Issue #32's target on the measured skinny shapes: the host's choice within 5 % of the
/// fastest config measured, at every one of them but the known misses (which must still miss).
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_measured_config() {
    let judged = judge_measured();
    assert_eq!(judged.len(), 15, "the measurement has 15 shapes");
    let misses: Vec<String> = judged
        .iter()
        .filter(|j| !j.meets() && !KNOWN_MISSES.contains(&j.shape))
        .map(|j| j.to_string())
        .collect();
    assert!(
        misses.is_empty(),
        "the model's choice is under {LEAST_RATIO} of the fastest measured config at:\n{}",
        misses.join("\n")
    );
    let mended: Vec<String> = judged
        .iter()
        .filter(|j| j.meets() && KNOWN_MISSES.contains(&j.shape))
        .map(|j| j.to_string())
        .collect();
    assert!(
        mended.is_empty(),
        "known misses now within {LEAST_RATIO}; strike them from KNOWN_MISSES:\n{}",
        mended.join("\n")
    );
}
