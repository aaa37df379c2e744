//! The cost model's choice against a measurement: at each of the 18 skinny bf16 shapes that
//! `tirx bench gemm --all` timed on an H100 on 2026-12-07 (every accepted config beside
//! cuBLASLt, `docs/perf/h100-2026-12-07-stop53/call2/bench-gemm.json`: stop 48's 15 shapes,
//! 96×8192×8192, 128×11008×4096 and 192×4096×4096), the config the model chooses must have
//! measured within 5 % of the fastest config measured there (issue #32), but at the shapes of
//! [`KNOWN_MISSES`], which must still miss (so that a change that mends one also strikes it
//! from the list).
//!
//! The file records the slices `S` each split-K candidate ran with (the host's plan,
//! `split::best_split` on the H100 of the run); a split-K choice counts only at the `S` it was
//! measured with (a plan at another `S` has no time in the file, and the test says so rather
//! than borrow another plan's). Until 2026-12-07 the test read stop 48's measurement
//! (`docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json`), which had no `S` per candidate
//! and no `gemm_sm90_splitk/m128n64`.

use super::tune::Cache;
use super::{Device, choose};
use crate::bench::json::{CandidateJson, ReportJson};
use crate::catalogue;
use crate::gemm::request::{GemmRequest, GemmTypes};
use crate::gemm::split;
use tirx::problem::{BLayout, Epilogue};

/// The measurement (H100 SXM, 132 SMs, bf16 → bf16, D = A·Bᵀ).
const MEASURED: &str =
    include_str!("../../../docs/perf/h100-2026-12-07-stop53/call2/bench-gemm.json");

/// The NN measurement (H100 SXM, bf16 → bf16, D = A·B with B given K×N; stop 54,
/// `tirx bench gemm --layout nn --all`): 10 skinny shapes, every NN config beside cuBLASLt,
/// the first GPU run of the NN split-K and NN decode plans.
const MEASURED_NN: &str =
    include_str!("../../../docs/perf/h100-2026-12-07-stop54/call1/gemm_nn.json");

/// The least ratio of the fastest measured time to the chosen config's (issue #32: 0.95).
const LEAST_RATIO: f64 = 0.95;

/// M, N, K.
type Shape = (usize, usize, usize);

/// The shapes where the model's choice is still under [`LEAST_RATIO`] of the fastest
/// measured config (issue #32), and why:
/// - 64×256×8192, `gemm_sm90_splitk_t/m16` (S = 5, 0.905 of the fastest): the split plans
///   there take 10–13 µs, mostly fixed costs (the fill, the second launch, the reduce's
///   rounds) that the model's terms do not resolve (stop 48: the reduce's estimates swept
///   over 0–1 and 0–4 µs mend it only by breaking other shapes);
/// - 96×8192×8192: measured, `gemm_sm90_splitk/n256` (S = 2, 0.763 of
///   `gemm_sm90_pair_n/default`): at M = 96 the split plan's two 64-row tiles carry 32 rows
///   of zero fill and read B twice from L2, which the split model's per-CTA pull does not
///   charge; the model now takes the transposed 64×96 tile (`gemm_sm90_t/n96`, one 96-row
///   block), which has no time in this measurement;
/// - 192×4096×4096: measured, `gemm_sm90_ws/n64` (0.918 of the fastest): the one-launch
///   128×64 tile leaves 64 of its second tile's rows empty; the model now takes
///   `gemm_sm90_t/n96` (cuBLAS's organisation there, `gemm/transposed.rs`), not yet measured.
///
/// Both stay on the list until a measurement of `gemm_sm90_t` judges them.
///
/// (32×4096×4096 left the list with this measurement: `gemm_sm90_splitk_t/m16_s10` at 0.971.)
const KNOWN_MISSES: &[Shape] = &[(64, 256, 8192), (96, 8192, 8192), (192, 4096, 4096)];

/// The NN shapes where the model's choice is under [`LEAST_RATIO`] of the fastest measured NN
/// config (stop 54, H100), and why:
/// - 16×4096×4096 and 32×4096×4096, `gemm_sm90_splitk_t/nn_m16_s10` (S = 2, 0.945 and
///   0.935 of `gemm_sm90_splitk/nn_n64` at S = 2): the transposed decode plan's model charges
///   its MN-major A (B's rows) as the TN plan's K-major one; the untransposed 64-row plan
///   streamed B 5–7 % faster there (at M = 1 and 8 the transposed plan is the fastest or
///   within 1.2 %);
/// - 96×8192×8192, `gemm_sm90_splitk/nn_n256` (S = 2, 0.775 of `gemm_sm90_ws/nn_n64`): as
///   TN's miss at the same shape.
const KNOWN_MISSES_NN: &[Shape] = &[(16, 4096, 4096), (32, 4096, 4096), (96, 8192, 8192)];

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

/// The slices a split-K candidate ran with in the measurement (`None` for a one-launch one).
fn measured_splits(candidate: Option<&CandidateJson>) -> Option<usize> {
    candidate?.splits
}

/// The model's choice at every shape of `measured` (B in `layout`) on the device of the
/// measurement (an H100 SXM: 132 SMs, its HBM rate), judged by the measurement.
fn judge_measured(measured: &str, layout: BLayout) -> Vec<Judged> {
    let report: ReportJson = serde_json::from_str(measured).expect("the committed file parses");
    let device = Device::h100();
    report
        .rows
        .iter()
        .map(|row| {
            let shape = (row.m, row.n, row.k);
            let request = GemmRequest::contiguous(layout, Epilogue::Plain, GemmTypes::BF16, shape);
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
            let ratio = time.and_then(|ms| match (splits, measured_splits(candidate)) {
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

/// The judged shapes under [`LEAST_RATIO`] that `known` does not list, and those `known`
/// lists that now meet it (each must be struck from the list).
fn verdict(judged: &[Judged], known: &[Shape]) -> (Vec<String>, Vec<String>) {
    let pick = |meets: bool| -> Vec<String> {
        judged
            .iter()
            .filter(|j| j.meets() == meets && known.contains(&j.shape) == meets)
            .map(|j| j.to_string())
            .collect()
    };
    (pick(false), pick(true))
}

/// Issue #32's target on the measured skinny shapes: the host's choice within 5 % of the
/// fastest config measured, at every one of them but the known misses (which must still miss).
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_measured_config() {
    let judged = judge_measured(MEASURED, BLayout::Tn);
    assert_eq!(judged.len(), 18, "the measurement has 18 shapes");
    let (misses, mended) = verdict(&judged, KNOWN_MISSES);
    assert!(
        misses.is_empty(),
        "the model's choice is under {LEAST_RATIO} of the fastest measured config at:\n{}",
        misses.join("\n")
    );
    assert!(
        mended.is_empty(),
        "known misses now within {LEAST_RATIO}; strike them from KNOWN_MISSES:\n{}",
        mended.join("\n")
    );
}

/// The same for D = A·B (B given K×N): the NN split-K, decode and one-launch configs.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_measured_nn_config() {
    let judged = judge_measured(MEASURED_NN, BLayout::Nn);
    assert_eq!(judged.len(), 10, "the NN measurement has 10 shapes");
    let (misses, mended) = verdict(&judged, KNOWN_MISSES_NN);
    assert!(
        misses.is_empty(),
        "the model's NN choice is under {LEAST_RATIO} of the fastest measured config at:\n{}",
        misses.join("\n")
    );
    assert!(
        mended.is_empty(),
        "known NN misses now within {LEAST_RATIO}; strike them from KNOWN_MISSES_NN:\n{}",
        mended.join("\n")
    );
}
