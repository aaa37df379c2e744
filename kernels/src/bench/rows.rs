//! `tirx bench rows`: the row ops (softmax, RMSNorm, LayerNorm; [`crate::rows`]) on the GPU in
//! GB/s, beside a device-to-device copy of the same bytes (the copy roof) and beside the peers
//! (torch, Liger, QuACK) that `kernels/bench/rows_peers.py` measured with the same method
//! ([`peers`]); a table, a JSON file and an SVG plot ([`report`]).
//!
//! Method, per shape and op, that of the GEMM sweep ([`super::sweep`]) with two
//! participants, our kernel (through a [`RowLaunch`], by default [`crate::rows::run`]) and the
//! copy roof (`cuMemcpyDtoD` of x into y):
//! 1. Warm-up: each participant runs [`WARMUP`] times, untimed; a launch that fails drops its
//!    participant (ours is then refused, the copy still timed). Then untimed interleaved rounds
//!    until [`WARMUP_MS`] have passed, which also time a round.
//! 2. Rounds: [`RUNS`] or, for short rounds, as many as take about [`TIMED_MS`] (at most
//!    [`MAX_RUNS`]); each runs both participants in a rotated order
//!    ([`super::sweep::round_order`]), each run bracketed by its own pair of CUDA events, all
//!    queued without waiting. Each participant's time is the median of its runs.
//! 3. Check, untimed: y of set 0 poisoned (NaN), one run of ours on set 0, y read back; every
//!    element must be finite (a row left unwritten stays NaN), and [`CHECK_ROWS`] rows spread
//!    over the matrix are compared with the f64 reference ([`crate::rows::reference::check`]).
//!
//! Invariants:
//! - Every buffer set holds the same x, and w and b are one vector each (`cols` elements, read
//!   by every row, so they stay in L2 for ours and the peers alike and are not counted).
//! - One rotation over the sets is shared by both participants: each run takes the next set,
//!   and a set is read again only after the others, whose bytes exceed twice the L2
//!   ([`super::sweep::rotation_within`]).
//! - The copy roof moves the bytes the op counts ([`RowProblem::bytes`]: rows·cols bf16 read
//!   and written), so "of copy" is the fraction of the achievable bandwidth the op reaches.

pub mod peers;
pub mod report;

use std::path::{Path, PathBuf};

use half::bf16;
use tirx::{Runtime, RuntimeError, Tensor};

use super::report::{Failure, now};
use super::sweep::{L2_BYTES, MEMORY_CAP, rotation_within, round_order};
use super::{
    BenchError, MAX_RUNS, RUNS, TIMED_MS, WARMUP, WARMUP_MS, driver, elapsed, event_pair, median,
    progress, record, write,
};
use crate::reference::Rng;
use crate::rows::reference::{check, reference_rows, sample_rows};
use crate::rows::{DEFAULT_EPS, RowOp, RowProblem};
use peers::PeersFile;
use report::{PeersMeta, Rate, RowsReport, RowsRow};

/// How the bench launches a row op: [`crate::rows::run`]'s signature (x, w, b, y), or a
/// closure that forces one artifact (`tirx bench rows --kernel …`).
pub type RowLaunch<'a> = &'a dyn Fn(
    &Runtime,
    &RowProblem,
    &Tensor<bf16>,
    Option<&Tensor<bf16>>,
    Option<&Tensor<bf16>>,
    &mut Tensor<bf16>,
) -> Result<(), RuntimeError>;

/// The shapes of `../shared/ANCHORS.md` (rows × cols): short, medium and long rows.
pub const DEFAULT_SHAPES: [(usize, usize); 3] = [(16384, 4096), (32768, 8192), (8192, 32768)];

/// Default JSON output (the SVG plot goes beside it).
pub const DEFAULT_JSON: &str = "bench-rows.json";

/// Rows of each output compared with the f64 reference (all rows of smaller matrices).
pub const CHECK_ROWS: usize = 256;

/// What the JSON's `timing` field says of the method.
pub const TIMING: &str = "interleaved rounds (tirx, copy roof)";

/// Participant 0: our kernel.
const OURS: usize = 0;
/// Participant 1: the copy roof.
const COPY: usize = 1;

/// What to measure.
#[derive(Clone)]
pub struct RowsBench<'a> {
    /// Our kernel's entry.
    pub launch: RowLaunch<'a>,
    /// The ops, in order.
    pub ops: Vec<RowOp>,
    /// The shapes (rows, cols), in order; each shape's buffers serve all its ops.
    pub shapes: Vec<(usize, usize)>,
    /// ε of RMSNorm and LayerNorm.
    pub eps: f32,
    /// The peers' numbers, when a file was given.
    pub peers: Option<&'a PeersFile>,
}

impl<'a> RowsBench<'a> {
    /// Every op on [`DEFAULT_SHAPES`] with [`DEFAULT_EPS`], launched by [`crate::rows::run`].
    pub fn new(peers: Option<&'a PeersFile>) -> RowsBench<'a> {
        RowsBench {
            launch: &crate::rows::run,
            ops: RowOp::ALL.to_vec(),
            shapes: DEFAULT_SHAPES.to_vec(),
            eps: DEFAULT_EPS,
            peers,
        }
    }
}

/// Bytes of one buffer set: x and y, bf16.
pub fn set_bytes(rows: usize, cols: usize) -> usize {
    2 * rows * cols * 2
}

/// The device buffers and host inputs of one shape.
struct Buffers {
    rows: usize,
    cols: usize,
    x: Vec<Tensor<bf16>>,
    y: Vec<Tensor<bf16>>,
    w: Tensor<bf16>,
    b: Tensor<bf16>,
    host_x: Vec<bf16>,
    host_w: Vec<bf16>,
    host_b: Vec<bf16>,
}

impl Buffers {
    /// x uniform in [-1, 1), w in [0.5, 1.5), b in [-0.5, 0.5): the peers script's inputs.
    fn new(rt: &Runtime, (rows, cols): (usize, usize)) -> Result<Buffers, BenchError> {
        let sets = rotation_within(set_bytes(rows, cols), L2_BYTES, MEMORY_CAP);
        let mut rng = Rng::new(11);
        let host_x = rng.bf16s(rows * cols);
        let host_w: Vec<bf16> = (0..cols)
            .map(|_| bf16::from_f32(1.0 + 0.5 * rng.unit()))
            .collect();
        let host_b: Vec<bf16> = (0..cols)
            .map(|_| bf16::from_f32(0.5 * rng.unit()))
            .collect();
        let x = (0..sets)
            .map(|_| rt.upload(&host_x, &[rows, cols]))
            .collect::<Result<_, _>>()?;
        let y = (0..sets)
            .map(|_| rt.zeros(&[rows, cols]))
            .collect::<Result<_, _>>()?;
        Ok(Buffers {
            rows,
            cols,
            x,
            y,
            w: rt.upload(&host_w, &[cols])?,
            b: rt.upload(&host_b, &[cols])?,
            host_x,
            host_w,
            host_b,
        })
    }

    fn sets(&self) -> usize {
        self.x.len()
    }

    /// Runs participant `who` on set `set`.
    fn run(
        &mut self,
        rt: &Runtime,
        launch: RowLaunch<'_>,
        p: &RowProblem,
        who: usize,
        set: usize,
    ) -> Result<(), BenchError> {
        let Buffers { x, y, w, b, .. } = self;
        match who {
            OURS => {
                let w = p.op.takes_weight().then_some(&*w);
                let b = p.op.takes_bias().then_some(&*b);
                Ok(launch(rt, p, &x[set], w, b, &mut y[set])?)
            }
            _ => rt
                .stream()
                .memcpy_dtod(x[set].buffer(), y[set].buffer_mut())
                .map_err(driver),
        }
    }

    /// Poisons y of set 0, runs ours there, and checks what it wrote: every element finite,
    /// [`CHECK_ROWS`] rows against the f64 reference. Returns the error measure, or the
    /// failure.
    fn checked_run(
        &mut self,
        rt: &Runtime,
        launch: RowLaunch<'_>,
        p: &RowProblem,
    ) -> Result<Result<f64, Failure>, BenchError> {
        rt.poison(&mut self.y[0])?;
        if let Err(e) = self.run(rt, launch, p, OURS, 0) {
            return Ok(Err(Failure::Refused(e.to_string())));
        }
        let got = rt.download(&self.y[0])?;
        let n = self.cols;
        if let Some(i) = got.iter().position(|v| !v.to_f32().is_finite()) {
            return Ok(Err(Failure::Wrong(format!(
                "row {} col {} is {} (unwritten elements stay NaN)",
                i / n,
                i % n,
                got[i]
            ))));
        }
        let sample = sample_rows(self.rows, CHECK_ROWS);
        let got_rows: Vec<bf16> = sample
            .iter()
            .flat_map(|&r| got[r * n..(r + 1) * n].iter().copied())
            .collect();
        let (w, b) = (Some(&self.host_w[..]), Some(&self.host_b[..]));
        let want = reference_rows(p, &self.host_x, w, b, &sample);
        Ok(check(p.op, &got_rows, &want, n).map_err(|e| {
            let at = match e {
                crate::rows::reference::CheckError::Wrong { row, .. } => {
                    format!(" (matrix row {})", sample[row])
                }
                _ => String::new(),
            };
            Failure::Wrong(format!("{e}{at}"))
        }))
    }
}

/// The participants' shared rotation over the buffer sets, and why each dropped out.
struct Turns<'a> {
    rt: &'a Runtime,
    launch: RowLaunch<'a>,
    p: RowProblem,
    /// Runs so far: the next run takes set `turn % sets`.
    turn: usize,
    /// Why participant `i` dropped out, if it did.
    why: [Option<String>; 2],
}

impl Turns<'_> {
    /// Runs `who` on the next set; a failure drops it out. Whether it ran.
    fn go(&mut self, bufs: &mut Buffers, who: usize) -> bool {
        let set = self.turn % bufs.sets();
        self.turn += 1;
        let r = bufs.run(self.rt, self.launch, &self.p, who, set);
        if let Err(e) = &r {
            self.why[who] = Some(e.to_string());
        }
        r.is_ok()
    }

    /// The participants still in.
    fn live(&self) -> Vec<usize> {
        (0..2).filter(|&w| self.why[w].is_none()).collect()
    }
}

/// Steps 1 and 2 of the module docs: warm-up, then timed interleaved rounds. Returns the
/// number of rounds and each participant's run times (empty for one that dropped out).
fn time_rounds(
    turns: &mut Turns,
    bufs: &mut Buffers,
    bar: &indicatif::ProgressBar,
    label: &str,
) -> Result<(usize, [Vec<f32>; 2]), BenchError> {
    let rt = turns.rt;
    bar.set_message(format!("{label} (warm-up)"));
    for who in [OURS, COPY] {
        for _ in 0..WARMUP {
            if !turns.go(bufs, who) {
                break;
            }
        }
    }
    let started = std::time::Instant::now();
    let mut warm_rounds = 0usize;
    while started.elapsed().as_secs_f64() * 1e3 < WARMUP_MS && !turns.live().is_empty() {
        let alive = turns.live();
        for who in round_order(warm_rounds, alive.len()).map(|i| alive[i]) {
            turns.go(bufs, who);
        }
        rt.synchronize()?;
        warm_rounds += 1;
    }
    let round_ms = started.elapsed().as_secs_f64() * 1e3 / warm_rounds.max(1) as f64;
    let rounds = ((TIMED_MS / round_ms).ceil() as usize).clamp(RUNS, MAX_RUNS);

    bar.set_message(format!("{label} ({rounds} rounds)"));
    let mut events: [Vec<_>; 2] = [Vec::with_capacity(rounds), Vec::with_capacity(rounds)];
    for r in 0..rounds {
        let alive = turns.live();
        for who in round_order(r, alive.len()).map(|i| alive[i]) {
            let (start, end) = event_pair(rt)?;
            record(rt, &start)?;
            if turns.go(bufs, who) {
                record(rt, &end)?;
                events[who].push((start, end));
            }
        }
    }
    let times = [elapsed(&events[OURS])?, elapsed(&events[COPY])?];
    Ok((if turns.live().is_empty() { 0 } else { rounds }, times))
}

/// Measures `p` on `bufs` (see the module docs): ours and the copy roof, interleaved, then
/// ours checked. A participant that fails to launch is recorded in the row, not returned.
fn measure(
    rt: &Runtime,
    launch: RowLaunch<'_>,
    bufs: &mut Buffers,
    p: RowProblem,
    bar: &indicatif::ProgressBar,
) -> Result<RowsRow, BenchError> {
    let label = format!("{} {}", p.op, p.shape_label());
    let mut turns = Turns {
        rt,
        launch,
        p,
        turn: 0,
        why: [None, None],
    };
    let (rounds, [ours, copy]) = time_rounds(&mut turns, bufs, bar, &label)?;
    let why = turns.why;
    // A participant that dropped out has no rate, whatever runs it timed before.
    let rate = |times: Vec<f32>, why: &Option<String>| match why {
        None if !times.is_empty() => Some(Rate::of(&p, median(times))),
        _ => None,
    };
    let mut row = report::unmeasured(p);
    row.sets = bufs.sets();
    row.rounds = rounds;
    row.copy = rate(copy, &why[COPY]);
    row.copy_failure = why[COPY].clone();
    let ours = rate(ours, &why[OURS]);
    if let Some(e) = &why[OURS] {
        row.failure = Some(Failure::Refused(e.clone()));
        return Ok(row);
    }
    bar.set_message(format!("{label} (checking)"));
    match bufs.checked_run(rt, launch, &p)? {
        Ok(err) => {
            row.ours = ours;
            row.max_err = Some(err);
        }
        Err(f) => row.failure = Some(f),
    }
    Ok(row)
}

/// `tirx bench rows`: measures `bench` (see the module docs), prints the table, writes the JSON
/// to `json` (default [`DEFAULT_JSON`]) and the SVG plot to `plot` (default: the JSON path with
/// a `.svg` extension). `Ok(true)` when every row passed ([`RowsRow::ok`]); `Err` only when an
/// output could not be written.
pub fn run_rows_bench(
    rt: &Runtime,
    bench: &RowsBench,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<bool, BenchError> {
    let report = rows_report(rt, bench, json, plot)?;
    Ok(report.rows.iter().all(RowsRow::ok))
}

/// [`run_rows_bench`], returning the whole report.
pub fn rows_report(
    rt: &Runtime,
    bench: &RowsBench,
    json: Option<&Path>,
    plot: Option<&Path>,
) -> Result<RowsReport, BenchError> {
    let json = json.map_or_else(|| PathBuf::from(DEFAULT_JSON), Path::to_path_buf);
    let plot = plot.map_or_else(|| json.with_extension("svg"), Path::to_path_buf);
    println!(
        "{} (compute capability {:?}); bf16 row ops, GB/s of x read + y written; median of at \
         least {RUNS} interleaved rounds (tirx, device copy) after at least {WARMUP_MS} ms of \
         warm-up, inputs rotated past L2; {} shape(s) x {} op(s), eps {:e}",
        rt.name(),
        rt.compute_capability(),
        bench.shapes.len(),
        bench.ops.len(),
        bench.eps,
    );
    if let Some(f) = bench.peers.filter(|f| f.eps != bench.eps) {
        println!(
            "note: the peers ran with eps {:e}, tirx with {:e}",
            f.eps, bench.eps
        );
    }
    let bar = progress::bar(bench.shapes.len() * bench.ops.len());
    let mut rows = Vec::new();
    for &(r, c) in &bench.shapes {
        bar.set_message(format!("{r}x{c} (allocating)"));
        let mut bufs = Buffers::new(rt, (r, c));
        for &op in &bench.ops {
            let p = RowProblem {
                op,
                rows: r,
                cols: c,
                eps: bench.eps,
            };
            let measured = match &mut bufs {
                Ok(bufs) => measure(rt, bench.launch, bufs, p, &bar).map_err(|e| e.to_string()),
                Err(e) => Err(format!("cannot allocate the buffers: {e}")),
            };
            rows.push(measured.unwrap_or_else(|e| {
                let mut row = report::unmeasured(p);
                row.failure = Some(Failure::Refused(e.clone()));
                row.copy_failure = Some(e);
                row
            }));
            bar.inc(1);
        }
    }
    bar.finish_with_message("done");
    if let Some(file) = bench.peers {
        for row in &mut rows {
            row.attach(file);
        }
    }
    let report = RowsReport {
        date: now(),
        device: rt.name().to_string(),
        peers: bench.peers.map(PeersMeta::of),
        rows,
    };
    print!("{}", report.table());
    write(&json, report.json().as_bytes())?;
    write(&plot, report.svg()?.as_bytes())?;
    println!("wrote {} and {}", json.display(), plot.display());
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_shapes_rotate_past_twice_the_l2() {
        for (r, c) in DEFAULT_SHAPES {
            let bytes = set_bytes(r, c);
            let sets = rotation_within(bytes, L2_BYTES, MEMORY_CAP);
            assert!(sets >= 2 && sets * bytes > 2 * L2_BYTES, "{r}x{c}: {sets}");
            assert!(sets * bytes <= MEMORY_CAP, "{r}x{c}: {sets}");
            // A set is x and y: the bytes the op counts.
            assert_eq!(bytes, RowProblem::new(RowOp::Softmax, r, c).bytes());
        }
        // 1024x1024: 4 MiB a set, 31 sets are the fewest over 120 MiB.
        assert_eq!(
            rotation_within(set_bytes(1024, 1024), L2_BYTES, MEMORY_CAP),
            31
        );
    }

    #[test]
    fn the_default_bench_measures_every_op_on_the_anchor_shapes() {
        let b = RowsBench::new(None);
        assert_eq!(b.ops, RowOp::ALL);
        assert_eq!(b.shapes, DEFAULT_SHAPES);
        assert_eq!(b.eps, DEFAULT_EPS);
    }
}
