//! The cost model's choice against measurements: at each skinny bf16 shape that
//! `tirx bench gemm --all` timed on an H100 (every accepted config beside cuBLASLt), the config
//! the model chooses must have measured within 5 % of the fastest config measured there
//! (issue #32), but at the shapes of a measurement's known misses, which must still miss (so
//! that a change that mends one also strikes it from the list). The measurements:
//! - [`STOP53`] (2026-12-07, `docs/perf/h100-2026-12-07-stop53/call2/bench-gemm.json`): 18
//!   TN shapes, stop 48's 15, 96×8192×8192, 128×11008×4096 and 192×4096×4096;
//! - [`STOP56`] (2026-12-07, `docs/perf/h100-2026-12-07-stop56/call1/gemm_tn.json`): 9 TN
//!   shapes at M = 80…256, the first GPU run of the transposed tile (`gemm_sm90_t`);
//! - [`STOP54_NN`] and [`STOP56_NN`]: 10 and 2 NN shapes;
//! - [`STOP56_TN6`] and [`STOP56_NN6`] (stop 56's call 6): 13 TN and 13 NN shapes;
//! - [`STOP59_TN`] and [`STOP59_NN`] (2026-12-07, `docs/perf/h100-2026-12-07-stop59/call2/`):
//!   9 TN shapes at M = 80…240, the first run of `gemm_sm90_t`'s `n80`/`n112`, and 3 NN;
//! - [`STOP59_TN3`] and [`STOP59_NN3`] (stop 59's call 3, `…/stop59/call3/`): 3 TN shapes (two
//!   choices stop 56's call 6 had not timed, and 240×4096×4096) and 5 NN, the first run of
//!   `gemm_sm90_t`'s `nn_n80`/`nn_n112`;
//! - [`STOP59_NN4`] (stop 59's call 4, `…/stop59/call4/`): the 3 stop-56 NN shapes whose choice
//!   moved to `nn_n80`/`nn_n112`.
//!
//! A choice that a measurement did not time (a kernel newer than the run: `gemm_sm90_t` in
//! stop 53's) is judged by the next measurement listed that timed it at the same shape.
//!
//! The files record the slices `S` each split-K candidate ran with (the host's plan,
//! `split::best_split` on the H100 of the run); a split-K choice counts only at the `S` it was
//! measured with (a plan at another `S` has no time in the file, and the test says so rather
//! than borrow another plan's). Until 2026-12-07 the test read stop 48's measurement
//! (`docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json`), which had no `S` per candidate
//! and no `gemm_sm90_splitk/m128n64`.

use super::tune::Cache;
use super::{Device, choose};
use crate::bench::json::{ReportJson, RowJson};
use crate::catalogue;
use crate::gemm::request::{GemmRequest, GemmTypes};
use crate::gemm::split;
use tirx::problem::{BLayout, Epilogue};

/// One `tirx bench gemm --all` file (H100 SXM, 132 SMs, bf16 → bf16) and its name in verdicts.
struct Measurement {
    /// `stop 53`.
    name: &'static str,
    /// The file's text.
    json: &'static str,
}

/// Stop 53's TN measurement (D = A·Bᵀ): 18 skinny shapes.
const STOP53: Measurement = Measurement {
    name: "stop 53",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop53/call2/bench-gemm.json"),
};

/// Stop 56's TN measurement: 160, 192, 224, 256 × 4096 × 4096, 192×8192×8192,
/// 192×8192×4096, 96×8192×8192, 128×4096×4096 and 80×8192×4096, with `gemm_sm90_t`'s four
/// TN configs (`docs/perf/h100-2026-12-07-stop56.md`).
const STOP56: Measurement = Measurement {
    name: "stop 56",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop56/call1/gemm_tn.json"),
};

/// The NN measurement (D = A·B with B given K×N; stop 54,
/// `tirx bench gemm --layout nn --all`): 10 skinny shapes, every NN config beside cuBLASLt,
/// the first GPU run of the NN split-K and NN decode plans.
const STOP54_NN: Measurement = Measurement {
    name: "stop 54",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop54/call1/gemm_nn.json"),
};

/// Stop 56's NN measurement: 192×4096×4096 and 96×8192×8192.
const STOP56_NN: Measurement = Measurement {
    name: "stop 56",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop56/call1/gemm_nn.json"),
};

/// Stop 56's second TN run (call 6, `docs/perf/h100-2026-12-07-stop56/call6/`): call 1's
/// shapes but 256×4096×4096 and five the model was not fitted to (176×6144×4096,
/// 208×8192×2048, 112×4096×8192, 240×5120×5120, 72×14336×4096), every accepted config with the
/// transposed tile ranked.
const STOP56_TN6: Measurement = Measurement {
    name: "stop 56 call 6",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop56/call6/tn_all.json"),
};

/// Stop 56's NN run at the same 13 shapes with the transposed tile's NN configs ranked
/// (`nn_w2n96` first timed there).
const STOP56_NN6: Measurement = Measurement {
    name: "stop 56 call 6",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop56/call6/nn_all.json"),
};

/// Stop 59's TN run (call 2, `docs/perf/h100-2026-12-07-stop59.md`): 144…240 × 4096 × 4096,
/// 176×6144×4096 and 80×8192×4096, every accepted config with the then untimed two-row-block
/// tiles `gemm_sm90_t/n80`/`n112` (and the 2×1 clusters `c2*`, since removed) among them.
const STOP59_TN: Measurement = Measurement {
    name: "stop 59",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop59/call2/tn_all.json"),
};

/// Stop 59's NN run (call 2): 160, 208 and 224 × 4096 × 4096, every accepted NN config.
const STOP59_NN: Measurement = Measurement {
    name: "stop 59",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop59/call2/nn_all.json"),
};

/// Stop 59's third TN run (call 3): 112×4096×8192 and 72×14336×4096 (where the model's
/// choices, `t/n112` and `t/n80`, had no time) and 240×4096×4096, every accepted config.
const STOP59_TN3: Measurement = Measurement {
    name: "stop 59 call 3",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop59/call3/tn_all.json"),
};

/// Stop 59's third NN run (call 3): 144, 160, 192, 208 and 224 × 4096 × 4096, every accepted
/// NN config, the first run of `gemm_sm90_t/nn_n80`/`nn_n112`.
const STOP59_NN3: Measurement = Measurement {
    name: "stop 59 call 3",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop59/call3/nn_all.json"),
};

/// Stop 59's call 4 (H100, `session59f_h200.sh`, every NN config): the three stop-56 NN shapes
/// whose choice moved to `nn_n80`/`nn_n112` once they were ranked.
const STOP59_NN4: Measurement = Measurement {
    name: "stop 59 call 4",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop59/call4/nn_all.json"),
};

/// Stop 60's call 1 (H100, `session60a_h200.sh`, `docs/perf/h100-2026-12-07-stop60.md`): TN at
/// 144, 176, 208 and 240 × 4096 × 4096, the first run of `gemm_sm90_t`'s `n72`/`n88`/`n104`/
/// `n120`. The bench's JSON did not come back from the device; the file is the call's printed
/// table transcribed (the 8 fastest configs a shape, µs to 0.1), which holds every choice.
const STOP60_TN: Measurement = Measurement {
    name: "stop 60",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop60/call1/tn_top8.json"),
};

/// The same NN (`nn_n72`…`nn_n120`'s first run).
const STOP60_NN: Measurement = Measurement {
    name: "stop 60",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop60/call1/nn_top8.json"),
};

/// Stop 61's call (H100, `session61b_h200.sh`, `docs/perf/h100-2026-12-07-stop61.md`): TN at
/// 144…240 (every 16) × 4096 × 4096, every accepted config, the first run of `gemm_sm90_t`'s
/// B-sharing clusters `m2n72`…`m2n128`.
const STOP61_TN: Measurement = Measurement {
    name: "stop 61",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop61/call1/tn_all.json"),
};

/// The same NN (no B-sharing cluster solves NN).
const STOP61_NN: Measurement = Measurement {
    name: "stop 61",
    json: include_str!("../../../docs/perf/h100-2026-12-07-stop61/call1/nn_all.json"),
};

/// The least ratio of the fastest measured time to the chosen config's (issue #32: 0.95).
const LEAST_RATIO: f64 = 0.95;

/// M, N, K.
type Shape = (usize, usize, usize);

/// The shapes of [`STOP53`] where the model's choice is still under [`LEAST_RATIO`] of the
/// fastest measured config (issue #32), and why:
/// - 64×256×8192, `gemm_sm90_splitk_t/m16` (S = 5, 0.905 of the fastest): the split plans
///   there take 10–13 µs, mostly fixed costs (the fill, the second launch, the reduce's
///   rounds) that the model's terms do not resolve (stop 48: the reduce's estimates swept
///   over 0–1 and 0–4 µs mend it only by breaking other shapes).
///
/// (32×4096×4096 left the list with stop 53's measurement: `gemm_sm90_splitk_t/m16_s10` at
/// 0.971; 96×8192×8192 and 192×4096×4096 with stop 56's, which timed the model's
/// `gemm_sm90_t/n96` there: the fastest config at both.)
const KNOWN_MISSES: &[Shape] = &[(64, 256, 8192)];

/// The shapes of [`STOP56`] where the model's choice is under [`LEAST_RATIO`]: none since the
/// re-read term (`gemm/reread.rs`, issue #32). 160×4096×4096 had been one, `gemm_sm90_t/n96`
/// at 0.898 of `gemm_sm90_t/w2n96`: both make one wave (128 one-warpgroup CTAs of 64×96
/// against 64 two-warpgroup CTAs of 128×96), the tile term costs a wave by its CTA's tile, and
/// nothing charged `n96`'s 128 CTAs for pulling 96 + 64 box rows each, 32 of them zero fill,
/// through the L2 that `w2n96`'s 64 share. The term charges it (every resident CTA at the
/// busiest CTA's boxes, a row of fill at 2.8 rows): `n96` 137.6 units against `w2n96`'s 133.0
/// (its tile at the 96-row efficiency 0.87), and `ws/n64`, whose 128-row tiles hold 96 rows
/// of fill there (34.0 µs measured), 219.1.
const KNOWN_MISSES_STOP56: &[Shape] = &[];

/// The NN shapes where the model's choice is under [`LEAST_RATIO`] of the fastest measured NN
/// config (stop 54, H100), and why:
/// - 16×4096×4096 and 32×4096×4096, `gemm_sm90_splitk_t/nn_m16_s10` (S = 2, 0.945 and
///   0.935 of `gemm_sm90_splitk/nn_n64` at S = 2): the transposed decode plan's model charges
///   its MN-major A (B's rows) as the TN plan's K-major one; the untransposed 64-row plan
///   streamed B 5–7 % faster there (at M = 1 and 8 the transposed plan is the fastest or
///   within 1.2 %);
///
/// (96×8192×8192 left the list at stop 56: the model now takes the transposed tile's
/// `nn_n96` there, untimed in this run, 1.000 of the fastest in stop 56's call 6.)
const KNOWN_MISSES_NN: &[Shape] = &[(16, 4096, 4096), (32, 4096, 4096)];

/// One shape's verdict: the model's choice, its slices, and its measured ratio to the fastest
/// config (`Err`: why no measurement can judge it).
struct Judged {
    /// M, N, K.
    shape: Shape,
    /// `kernel/config`.
    label: String,
    /// The slices of a split-K choice.
    splits: Option<usize>,
    /// The measurement that judged it.
    by: &'static str,
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
        let (s, by) = (
            self.splits.map_or(String::new(), |s| format!(" (S = {s})")),
            self.by,
        );
        match &self.ratio {
            Ok(r) => write!(
                f,
                "{m}x{n}x{k}: {}{s}, {r:.3} of the fastest ({by})",
                self.label
            ),
            Err(why) => write!(f, "{m}x{n}x{k}: {}{s}: {why} ({by})", self.label),
        }
    }
}

/// The model's choice at every shape of `measured[0]` (B in `layout`) on the device of the
/// measurements (an H100 SXM: 132 SMs, its HBM rate), judged by the first of `measured` that
/// timed the choice at that shape (by the first, with why, where none did).
fn judge_measured(measured: &[&Measurement], layout: BLayout) -> Vec<Judged> {
    let reports: Vec<(&'static str, ReportJson)> = measured
        .iter()
        .map(|m| {
            let report = serde_json::from_str(m.json).expect("the committed file parses");
            (m.name, report)
        })
        .collect();
    let device = Device::h100();
    reports[0]
        .1
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
            let timed = |r: &RowJson| {
                (r.m, r.n, r.k) == shape
                    && r.candidates
                        .iter()
                        .any(|c| c.kernel == kernel && c.config == config && c.ms.is_some())
            };
            let (by, row) = reports
                .iter()
                .find_map(|(name, report)| {
                    report.rows.iter().find(|r| timed(r)).map(|r| (*name, r))
                })
                .unwrap_or((reports[0].0, row));
            Judged {
                shape,
                label: format!("{kernel}/{config}"),
                splits,
                by,
                ratio: ratio_in(row, (kernel, config), splits),
            }
        })
        .collect()
}

/// The fastest time of `row` over that of the candidate `kernel/config` run with the slices
/// `splits` (a split-K choice counts only at the `S` it was measured with).
fn ratio_in(
    row: &RowJson,
    (kernel, config): (&str, &str),
    splits: Option<usize>,
) -> Result<f64, String> {
    let fastest = row
        .candidates
        .iter()
        .filter_map(|c| c.ms)
        .fold(f64::INFINITY, f64::min);
    let candidate = row
        .candidates
        .iter()
        .find(|c| c.kernel == kernel && c.config == config);
    let ms = candidate
        .and_then(|c| c.ms)
        .ok_or_else(|| format!("{kernel}/{config} has no time in the measurement"))?;
    match (splits, candidate.and_then(|c| c.splits)) {
        (Some(s), Some(at)) if s != at => Err(format!(
            "{kernel}/{config} splits K in {s}, but was measured split in {at}"
        )),
        (Some(_), None) => Err(format!("{kernel}/{config}'s measured S is not recorded")),
        _ => Ok(fastest / ms),
    }
}

/// The NN shapes of [`STOP56_NN`] where the model's choice is under [`LEAST_RATIO`]: none
/// since the transposed tile's NN configs are ranked (its choices there, `nn_n96` at
/// 192×4096×4096 and 96×8192×8192, untimed in that run, are judged by [`STOP56_NN6`]: 0.997
/// and 1.000 of the fastest).
const KNOWN_MISSES_STOP56_NN: &[Shape] = &[];

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

/// The judged shapes' verdicts against `known`: none under [`LEAST_RATIO`] unlisted, none
/// listed at or over it.
fn check(judged: &[Judged], known: &[Shape], list: &str) {
    let (misses, mended) = verdict(judged, known);
    assert!(
        misses.is_empty(),
        "the model's choice is under {LEAST_RATIO} of the fastest measured config at:\n{}",
        misses.join("\n")
    );
    assert!(
        mended.is_empty(),
        "known misses now within {LEAST_RATIO}; strike them from {list}:\n{}",
        mended.join("\n")
    );
}

/// Issue #32's target on stop 53's skinny shapes: the host's choice within 5 % of the fastest
/// config measured, at every one of them but the known misses (which must still miss); a
/// transposed-tile choice is judged by stop 56's run, the first to time `gemm_sm90_t`.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_measured_config() {
    let judged = judge_measured(&[&STOP53, &STOP56, &STOP61_TN], BLayout::Tn);
    assert_eq!(judged.len(), 18, "the measurement has 18 shapes");
    check(&judged, KNOWN_MISSES, "KNOWN_MISSES");
}

/// The same at stop 56's shapes, M = 80…256, where the transposed tile runs; a choice of the
/// tiles first timed at stop 59 (`t/n80` at 160×4096×4096 and 80×8192×4096, `t/n112` at
/// 224×4096×4096) is judged by that run.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_config_at_stop_56() {
    let judged = judge_measured(&[&STOP56, &STOP59_TN, &STOP61_TN], BLayout::Tn);
    assert_eq!(judged.len(), 9, "the measurement has 9 shapes");
    check(&judged, KNOWN_MISSES_STOP56, "KNOWN_MISSES_STOP56");
}

/// The same for D = A·B (B given K×N): the NN split-K, decode and one-launch configs.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_measured_nn_config() {
    let judged = judge_measured(&[&STOP54_NN, &STOP56_NN6], BLayout::Nn);
    assert_eq!(judged.len(), 10, "the NN measurement has 10 shapes");
    check(&judged, KNOWN_MISSES_NN, "KNOWN_MISSES_NN");
}

/// The same at stop 56's two NN shapes.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_nn_config_at_stop_56() {
    let judged = judge_measured(&[&STOP56_NN, &STOP56_NN6], BLayout::Nn);
    assert_eq!(judged.len(), 2, "the measurement has 2 shapes");
    check(&judged, KNOWN_MISSES_STOP56_NN, "KNOWN_MISSES_STOP56_NN");
}

/// The shapes of [`STOP56_TN6`] where the model's choice is under [`LEAST_RATIO`], and why:
/// - 240×5120×5120, `gemm_sm90_tma_epi/n128` (0.920 of `gemm_sm90_t/w2n128`): the four
///   one-wave 128×128 tiles (`tma_epi/n128`, `cluster/n128`, `t/w2n128`, `ws/n128`: 80 CTAs,
///   two row blocks, 16 rows of fill) are within 3.5 % in the model, 154.5–160.0 units, bound by
///   their tiles, and the cluster's ×0.98 ranks `tma_epi/n128` first; measured 36.2, 35.2, 33.3
///   and 33.9 µs. Until the re-read term (`gemm/reread.rs`) the model took `t/w2n96` there
///   (0.776): three 96-row blocks, 288 rows for 240 with 48 of fill and B read three times,
///   whose tile term (117 units) undercut the 128-row tiles'; with the term it costs 171.8
///   (42.9 µs measured). What would mend it: the cluster's ×0.98 on the re-read term instead
///   of the tile term (multicast saves the L2 reads of the shared operand, not MMA time). In a
///   sketch of the model (not this code) that took `t/w2n128` here, left every other measured
///   choice within 0.95 (geomean over call 6 0.988 → 0.992) and no bf16 plain choice of
///   `dispatch::tests` moved; not landed, since the ×0.98 is the levels 6 → 7 measurement at
///   8192³, where the re-read term does not bind and the cluster would lose its measured
///   gain. (The cluster tiles led `t/w2n128` at 192×8192×4096 and 192×8192×8192, 128 CTAs,
///   and trailed it at 160 and 224×4096×4096 and here, 64–80 CTAs.)
///
/// (160×4096×4096 left the list with the re-read term: `t/w2n96`, 1.000; see
/// [`KNOWN_MISSES_STOP56`].)
const KNOWN_MISSES_STOP56_TN6: &[Shape] = &[(240, 5120, 5120)];

/// The shapes of [`STOP56_TN6`] where no run listed has timed the model's choice (a run that
/// times one strikes it): 72×14336×4096, whose choice is `t/n72` since stop 60 ranks the
/// odd-block tiles (stop 59's call 3 had timed the choice before, `t/n80`, at 47.7 µs, 0.977
/// of `t/w2n96`'s 46.6); and 112×4096×8192, whose choice is the B-sharing cluster `t/m2n112`
/// since stop 61 ranks the `m2*` tiles (stop 59's call 3 ([`STOP59_TN3`]) had timed the
/// choice before, `t/n112`, at 33.0 µs, 0.994 of `t/n128`'s 32.8).
const UNTIMED_CHOICES_STOP56_TN6: &[Shape] = &[(72, 14336, 4096), (112, 4096, 8192)];

/// The shapes of [`STOP56_NN6`] where no run listed has timed the model's choice:
/// 72×14336×4096, `nn_n72` since stop 60 ranks the odd-block tiles. Stop 59's call 4
/// ([`STOP59_NN4`]) timed the choices the ranked `nn_n80`/`nn_n112` took there: `nn_n80` at
/// 80×8192×4096 (27.8 µs, the fastest) and 72×14336×4096 (47.6, 0.964 of `nn_w2n96`'s 45.9),
/// `nn_n112` at 112×4096×8192 (31.1, 0.975 of `nn_n128`'s 30.3).
const UNTIMED_CHOICES_STOP56_NN6: &[Shape] = &[(72, 14336, 4096)];

/// The shapes of [`STOP56_NN6`] where the model's choice is under [`LEAST_RATIO`]: none since
/// the re-read term (`gemm/reread.rs`): 160×4096×4096 takes `nn_w2n96` (1.000, was `nn_n96`
/// at 0.883) and 240×5120×5120 `gemm_sm90_ws/nn_n128` (1.000, was `nn_w2n96` at 0.775; the
/// NN tile has no `w2n128` and no cluster config at 128×128).
const KNOWN_MISSES_STOP56_NN6: &[Shape] = &[];

/// Stop 56's second run `m` (a choice it did not time judged by `later`) with the choices no
/// run has timed set apart: those listed in `untimed` must still have no time (a run that
/// times one strikes it), and are left out.
fn judge_stop56_call6(
    m: &Measurement,
    later: &[&Measurement],
    layout: BLayout,
    untimed: &[Shape],
) -> Vec<Judged> {
    let runs: Vec<&Measurement> = std::iter::once(m).chain(later.iter().copied()).collect();
    let judged = judge_measured(&runs, layout);
    assert_eq!(
        judged.len(),
        13,
        "{layout:?}: the measurement has 13 shapes"
    );
    let (unjudged, judged): (Vec<_>, Vec<_>) =
        judged.into_iter().partition(|j| untimed.contains(&j.shape));
    let timed: Vec<String> = unjudged
        .iter()
        .filter(|j| j.ratio.is_ok())
        .map(|j| j.to_string())
        .collect();
    assert!(
        timed.is_empty(),
        "{layout:?}: now timed; strike them from UNTIMED_CHOICES_STOP56_{layout:?}6:\n{}",
        timed.join("\n")
    );
    assert_eq!(unjudged.len(), untimed.len(), "{layout:?}: {untimed:?}");
    judged
}

/// Stop 59's runs, in order, by which a choice an earlier run did not time is judged.
const STOP59_TN_RUNS: &[&Measurement] = &[&STOP59_TN, &STOP59_TN3, &STOP60_TN, &STOP61_TN];
/// The same for NN.
const STOP59_NN_RUNS: &[&Measurement] = &[&STOP59_NN, &STOP59_NN3, &STOP59_NN4, &STOP60_NN];

/// The same at stop 56's second run, TN and NN, with five shapes the model was not fitted to
/// (a choice first timed at stop 59 judged by the first of its runs that timed it; those no
/// run timed set apart).
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_config_at_unseen_shapes() {
    let runs = [
        (
            &STOP56_TN6,
            BLayout::Tn,
            UNTIMED_CHOICES_STOP56_TN6,
            KNOWN_MISSES_STOP56_TN6,
            "KNOWN_MISSES_STOP56_TN6",
        ),
        (
            &STOP56_NN6,
            BLayout::Nn,
            UNTIMED_CHOICES_STOP56_NN6,
            KNOWN_MISSES_STOP56_NN6,
            "KNOWN_MISSES_STOP56_NN6",
        ),
    ];
    for (m, layout, untimed, known, list) in runs {
        let later = if layout == BLayout::Tn {
            STOP59_TN_RUNS
        } else {
            STOP59_NN_RUNS
        };
        let judged = judge_stop56_call6(m, later, layout, untimed);
        check(&judged, known, list);
    }
}

/// The shapes of [`STOP59_TN`] where the model's choice is under [`LEAST_RATIO`]: none since
/// `n72`…`n120` are ranked (stop 60; its call 1, [`STOP60_TN`], judges the choices call 2 had
/// not timed). 240×4096×4096 had been one: `gemm_sm90_t/n128` (22.8 µs, 0.933 of
/// `gemm_sm90_ws/n64`'s 21.2), both covering M = 240 in two 128-row blocks with 16 rows of
/// fill; the model now takes `n120`, two blocks of 120 with none (stop 60: 21.7 µs, 0.995 of
/// `ws/n64`'s 21.6).
const KNOWN_MISSES_STOP59: &[Shape] = &[];

/// The shapes of [`STOP59_NN`] where the model's choice is under [`LEAST_RATIO`]: none since
/// `nn_n80`/`nn_n112` were timed (stop 59's call 3, [`STOP59_NN3`], judges the choices the
/// call 2 run had not timed). With them untimed, 208×4096×4096 took
/// `gemm_sm90_splitk/nn_m128n64` (0.827 of the fastest) and 224×4096×4096 `gemm_sm90_t/nn_n128`
/// (0.944); the model takes `nn_n112` at both, the fastest in call 3 (22.7 and 22.4 µs).
const KNOWN_MISSES_STOP59_NN: &[Shape] = &[];

/// The shapes of [`STOP59_TN3`] where the model's choice is under [`LEAST_RATIO`]: none since
/// stop 60 (240×4096×4096 takes `t/n120`, judged by [`STOP60_TN`]: 0.995; it had been
/// `t/n128` at 0.940, as in call 2). 112×4096×8192 (`t/n112`, 0.994) meets it; 72×14336×4096
/// now takes `t/n72`, which no run has timed there (`t/n80` had measured 0.977), and is set
/// apart ([`UNTIMED_CHOICES_STOP59_TN3`]).
const KNOWN_MISSES_STOP59_TN3: &[Shape] = &[];

/// The shapes of [`STOP59_TN3`] whose choice no listed run has timed (a run that times one
/// strikes it): 72×14336×4096, `t/n72` (one row block of 72, no fill, against `t/n80`'s 8
/// rows of fill; both 224 CTAs); 112×4096×8192, `t/m2n112` since stop 61 (`t/n112` had
/// measured 0.994 there).
const UNTIMED_CHOICES_STOP59_TN3: &[Shape] = &[(72, 14336, 4096), (112, 4096, 8192)];

/// The shapes of [`STOP59_NN3`] where the model's choice is under [`LEAST_RATIO`]: none (the
/// fastest config at all five, `dispatch::transposed`).
const KNOWN_MISSES_STOP59_NN3: &[Shape] = &[];

/// The shapes of [`STOP59_NN4`] where the model's choice is under [`LEAST_RATIO`]: none.
const KNOWN_MISSES_STOP59_NN4: &[Shape] = &[];

/// The shapes of [`STOP59_NN4`] whose choice no listed run has timed: 72×14336×4096, `nn_n72`
/// since stop 60 (its choice before, `nn_n80`, measured 0.964 of `nn_w2n96`).
const UNTIMED_CHOICES_STOP59_NN4: &[Shape] = &[(72, 14336, 4096)];

/// The same at stop 59's shapes (the first runs of the two-row-block tiles), TN and NN, calls
/// 2, 3 and 4.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_config_at_stop_59() {
    let judged = judge_measured(&[&STOP59_TN, &STOP60_TN, &STOP61_TN], BLayout::Tn);
    assert_eq!(judged.len(), 9, "the TN measurement has 9 shapes");
    check(&judged, KNOWN_MISSES_STOP59, "KNOWN_MISSES_STOP59");
    let judged = judge_measured(STOP59_NN_RUNS, BLayout::Nn);
    assert_eq!(judged.len(), 3, "the NN measurement has 3 shapes");
    check(&judged, KNOWN_MISSES_STOP59_NN, "KNOWN_MISSES_STOP59_NN");
    let judged = judge_measured(&[&STOP59_TN3, &STOP60_TN, &STOP61_TN], BLayout::Tn);
    assert_eq!(judged.len(), 3, "call 3's TN measurement has 3 shapes");
    let judged = set_apart(
        judged,
        UNTIMED_CHOICES_STOP59_TN3,
        "UNTIMED_CHOICES_STOP59_TN3",
    );
    check(&judged, KNOWN_MISSES_STOP59_TN3, "KNOWN_MISSES_STOP59_TN3");
    let judged = judge_measured(&[&STOP59_NN3, &STOP60_NN], BLayout::Nn);
    assert_eq!(judged.len(), 5, "call 3's NN measurement has 5 shapes");
    check(&judged, KNOWN_MISSES_STOP59_NN3, "KNOWN_MISSES_STOP59_NN3");
    let judged = judge_measured(&[&STOP59_NN4, &STOP60_NN], BLayout::Nn);
    assert_eq!(judged.len(), 3, "call 4's NN measurement has 3 shapes");
    let judged = set_apart(
        judged,
        UNTIMED_CHOICES_STOP59_NN4,
        "UNTIMED_CHOICES_STOP59_NN4",
    );
    check(&judged, KNOWN_MISSES_STOP59_NN4, "KNOWN_MISSES_STOP59_NN4");
}

/// `judged` less the shapes of `untimed` (the list named `list`), whose choice no run has timed
/// (each must still have no time: a run that times one strikes it from the list).
fn set_apart(judged: Vec<Judged>, untimed: &[Shape], list: &str) -> Vec<Judged> {
    let (unjudged, judged): (Vec<_>, Vec<_>) =
        judged.into_iter().partition(|j| untimed.contains(&j.shape));
    assert_eq!(unjudged.len(), untimed.len(), "{list}");
    for j in &unjudged {
        assert!(j.ratio.is_err(), "now timed; strike it from {list}: {j}");
    }
    judged
}

/// The same at stop 60's call 1 (the first run of the odd-block tiles `n72`…`n120`, TN and
/// NN): the model's choice within 5 % of the fastest at all four shapes of each, no known miss.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_config_at_stop_60() {
    let runs: [(&[&Measurement], BLayout); 2] = [
        (&[&STOP60_TN, &STOP61_TN], BLayout::Tn),
        (&[&STOP60_NN], BLayout::Nn),
    ];
    for (m, layout) in runs {
        let judged = judge_measured(m, layout);
        assert_eq!(judged.len(), 4, "{layout:?}: the measurement has 4 shapes");
        check(&judged, &[], "(none)");
    }
}

/// The same at stop 61's call (the first run of the B-sharing clusters `m2n72`…`m2n128`, TN;
/// NN beside it): the model's choice within 5 % of the fastest at all seven shapes of each, no
/// known miss.
#[test]
fn the_model_chooses_within_5_percent_of_the_fastest_config_at_stop_61() {
    for (m, layout) in [(&STOP61_TN, BLayout::Tn), (&STOP61_NN, BLayout::Nn)] {
        let judged = judge_measured(&[m], layout);
        assert_eq!(judged.len(), 7, "{layout:?}: the measurement has 7 shapes");
        check(&judged, &[], "(none)");
    }
}

/// The geometric mean of the choice's ratio to the fastest config over stop 56's second run
/// (13 TN and 13 NN shapes, every accepted config timed): 0.964 before the re-read term
/// (`gemm/reread.rs`), 0.988 with it; since stop 59 over those whose choice a run timed (a
/// choice of `n80`/`n112` judged by stop 59's runs): 24 after its call 2, 23 after its call 3
/// (TN 112×4096×8192 and 72×14336×4096 timed, NN 80×8192×4096, 112×4096×8192 and
/// 72×14336×4096 then untimed choices), all 26 again after its call 4 timed those three, 24
/// since stop 60 ranks `t/n72` and `t/nn_n72`, TN's and NN's choices at 72×14336×4096 now,
/// which no run has timed there; 23 since stop 61 ranks the B-sharing clusters (TN
/// 112×4096×8192 takes `t/m2n112`, untimed there; the 4096×4096 shapes' `m2*` choices are
/// judged by stop 61's run).
/// It must not fall back under 0.985; a change that moves it says so in its commit.
#[test]
fn the_geomean_over_stop_56s_second_run_holds() {
    let ratios: Vec<f64> = [
        (
            &STOP56_TN6,
            STOP59_TN_RUNS,
            BLayout::Tn,
            UNTIMED_CHOICES_STOP56_TN6,
        ),
        (
            &STOP56_NN6,
            STOP59_NN_RUNS,
            BLayout::Nn,
            UNTIMED_CHOICES_STOP56_NN6,
        ),
    ]
    .into_iter()
    .flat_map(|(m, later, layout, untimed)| judge_stop56_call6(m, later, layout, untimed))
    .map(|j| j.ratio.unwrap_or_else(|why| panic!("{}: {why}", j.label)))
    .collect();
    assert_eq!(ratios.len(), 23);
    let geomean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    eprintln!("geomean of choice/fastest over stop 56 call 6 (23 points): {geomean:.4}");
    assert!(geomean >= 0.985, "geomean {geomean:.4} under 0.985");
}
