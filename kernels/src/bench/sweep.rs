//! The GEMM sweep: which shapes `tirx bench gemm` measures, how many rotating buffer sets each
//! gets, and the measurement of one shape: cuBLASLt and every candidate config on the same
//! buffers, timed in interleaved rounds, each output checked against cuBLASLt's and against the
//! f64 CPU reference.
//!
//! Method, per shape ([`measure_shape`]); the participants are cuBLASLt and the candidates:
//! 1. Warm-up: each participant in turn runs [`WARMUP`] times, untimed. A candidate whose
//!    launch fails (e.g. its launcher refuses the shape) is [`Failure::Refused`] and drops out;
//!    if cuBLASLt fails, the row fails and the candidates are still measured. Then untimed
//!    interleaved rounds until [`WARMUP_MS`] have passed (small shapes: clocks come up; seen
//!    on the H200, 2026-11-30: the first small shape of a sweep timed 1.6–1.8× slower than the
//!    same shape later, for cuBLASLt and ours alike), which also give the round's duration.
//! 2. Rounds: R rounds, R = [`RUNS`] or, for short rounds, as many as take about
//!    [`TIMED_MS`] (at most [`MAX_RUNS`]); each times one run of every remaining participant, each run
//!    bracketed by its own pair of CUDA events. Round r runs them in a rotated order
//!    ([`round_order`]): it starts at participant r mod P (P participants) and goes on
//!    cyclically, so no one always goes first, and over any P consecutive rounds each holds
//!    every position once. All rounds are queued without waiting; the events are read after the
//!    last (see [`super`] on why queueing). A launch that fails during the rounds drops its
//!    participant as in step 1.
//! 3. Each participant's time is the median of its R runs.
//! 4. Checks, untimed: one checked run per participant, cuBLASLt's first: D of set 0 poisoned
//!    (NaN), one run on set 0, D read back. cuBLASLt's 64×64 corner is compared with the f64
//!    reference (over the tolerance: the row fails); each candidate's corner with the f64
//!    reference and its whole D with cuBLASLt's (a strided sample above 8192², see
//!    [`sample_stride`]); over the tolerance, or NaN, is [`Failure::Wrong`].
//!
//! Why interleaved: GPU clocks drift during a run (on the H200, cuBLASLt's median at 8192³
//! moved between 708 and 814 TFLOP/s across runs of one command). Timing the participants one
//! after another, [`RUNS`] runs each, compared them at different clock states. The earlier
//! remedy, timing cuBLASLt a second time after the candidates and keeping its faster median,
//! only kept drift from flattering our ratio, at the cost of a third block of runs, and still
//! compared candidates with each other at different clocks. In rounds every participant's runs
//! spread over the same span of time, so drift slower than a round (P runs, ~1.4 ms each at
//! 8192³) reaches all participants alike and the medians compare like with like; the second
//! cuBLASLt pass is gone. What stays unequal: each participant always follows the same one
//! (the rotation is cyclic), which matters only through effects that outlast a kernel, such as
//! power state; L2 contents do not, by the shared rotation below.
//!
//! Invariants:
//! - Every buffer set holds the same A and B, so every run of a kernel writes the same D.
//! - One rotation over the buffer sets is shared by all participants, warm-up and rounds: each
//!   run, whoever's, takes the next set. So a run never reads operands that the run before it
//!   (another participant's, in the same round) just brought into L2, and a set is read again
//!   only after all the others, whose bytes exceed twice the L2 ([`rotation_within`]).
//! - D of set 0 is poisoned (NaN) right before each participant's checked run, so a kernel that
//!   writes nothing, or only part of D, cannot pass on what a timed run, cuBLASLt or an earlier
//!   candidate left there.

use indicatif::ProgressBar;
use tirx::{Runtime, Tensor};

use super::Problem;
use super::cublaslt::CublasLt;
use super::report::{Candidate, Failure, Measured, Row, shape_label};
use super::{
    BenchError, MAX_RUNS, RUNS, TIMED_MS, WARMUP, WARMUP_MS, elapsed, event_pair, median, record,
};
use crate::dispatch::Device;
use crate::gemm::reference::BOperand;
use crate::gemm::request::{GemmRequest, GemmTypes};
use crate::gemm::split;
use crate::reference::{HostElem, Rng, rel_frobenius};
use tirx::problem::Epilogue;

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
pub fn set_bytes(shape: (usize, usize, usize)) -> usize {
    set_bytes_of(shape, GemmTypes::BF16)
}

/// Bytes of one buffer set in `types`.
pub fn set_bytes_of((m, n, k): (usize, usize, usize), types: GemmTypes) -> usize {
    let (i, o) = (types.input.bytes() as usize, types.output.bytes() as usize);
    i * (m * k + n * k) + o * m * n
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
pub fn rel_frobenius_sampled<T: HostElem>(got: &[T], want: &[T], stride: usize) -> f64 {
    let pairs = got.iter().step_by(stride).zip(want.iter().step_by(stride));
    rel_frobenius_of(pairs.map(|(g, w)| (g.to_f64(), w.to_f64())))
}

/// ‖g − w‖_F / ‖w‖_F over `(g, w)` pairs (‖g − w‖_F when w is all zero); NaN or infinity in
/// either gives infinity.
pub fn rel_frobenius_of(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (g, w) in pairs {
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

/// The device buffers and host inputs of one shape, A and B in `A`, C and D in `D`.
struct Buffers<A: HostElem, D: HostElem> {
    shape: (usize, usize, usize),
    a: Vec<Tensor<A>>,
    b: Vec<Tensor<A>>,
    /// C of a scaled problem, one per set (random, never written); empty otherwise.
    c: Vec<Tensor<D>>,
    d: Vec<Tensor<D>>,
    /// The f64 reference for the 64×64 corner of D.
    corner_ref: Vec<f64>,
}

impl<A: HostElem, D: HostElem> Buffers<A, D> {
    fn new(
        rt: &Runtime,
        shape: (usize, usize, usize),
        problem: Problem,
    ) -> Result<Buffers<A, D>, BenchError> {
        let (m, n, k) = shape;
        let layout = problem.layout;
        let mut set = set_bytes_of(shape, types::<A, D>());
        if problem.scale.is_some() {
            set += m * n * D::ELEM.bytes() as usize;
        }
        let sets = rotation_within(set, L2_BYTES, MEMORY_CAP);
        let mut rng = Rng::new(2);
        let (ha, hb): (Vec<A>, Vec<A>) = (rng.values(m * k), rng.values(n * k));
        let upload = |h: &[A], dims: [usize; 2]| -> Result<Vec<Tensor<A>>, BenchError> {
            (0..sets).map(|_| Ok(rt.upload(h, &dims)?)).collect()
        };
        let (a, b) = (upload(&ha, [m, k])?, upload(&hb, layout.b_shape(m, n, k))?);
        let d = (0..sets)
            .map(|_| rt.zeros(&[m, n]))
            .collect::<Result<_, _>>()?;
        let (cm, cn) = (m.min(64), n.min(64));
        let b_corner = layout.b_columns(&hb, n, k, cn);
        let mut corner_ref = layout.reference(&ha[..cm * k], &b_corner, cm, cn, k);
        let mut c = Vec::new();
        if let Some((alpha, beta)) = problem.scale {
            let hc: Vec<D> = rng.values(m * n);
            for (i, w) in corner_ref.iter_mut().enumerate() {
                let old = hc[(i / cn) * n + i % cn].to_f64();
                *w = f64::from(alpha) * *w + f64::from(beta) * old;
            }
            c = (0..sets)
                .map(|_| rt.upload(&hc, &[m, n]))
                .collect::<Result<_, _>>()?;
        }
        Ok(Buffers {
            shape,
            a,
            b,
            c,
            d,
            corner_ref,
        })
    }

    fn sets(&self) -> usize {
        self.d.len()
    }

    /// Poisons D of set 0, the one a checked run writes and [`Buffers::read_back`] reads, so
    /// what is read back was written by the next kernel.
    fn poison(&mut self, rt: &Runtime) -> Result<(), BenchError> {
        Ok(rt.poison(&mut self.d[0])?)
    }

    /// Downloads D of set 0 and measures its 64×64 corner against the reference.
    fn read_back(&self, rt: &Runtime) -> Result<(Vec<D>, f64), BenchError> {
        let (m, n, _) = self.shape;
        let got = rt.download(&self.d[0])?;
        let (cm, cn) = (m.min(64), n.min(64));
        let corner: Vec<D> = (0..cm)
            .flat_map(|i| got[i * n..i * n + cn].iter().copied())
            .collect();
        let err = rel_frobenius(&corner, &self.corner_ref);
        Ok((got, err))
    }
}

/// The element types of `A` → `D`.
fn types<A: HostElem, D: HostElem>() -> GemmTypes {
    GemmTypes {
        input: A::ELEM,
        output: D::ELEM,
    }
}

/// The order in which round `round` runs `p` participants (indices `0..p`): it starts at
/// participant `round mod p` and goes on cyclically, so over any `p` consecutive rounds each
/// participant holds every position once. Empty when `p` is 0.
pub fn round_order(round: usize, p: usize) -> impl Iterator<Item = usize> {
    (0..p).map(move |i| (round + i) % p)
}

/// The slices `S` the host's split-K plan of `name/config` takes for `problem` at `shape` on
/// `device` (`split::best_split`, as `split::launch_split` picks them), if it is a split-K
/// artifact of the catalogue.
fn splits_of(
    name: &str,
    config: &str,
    problem: Problem,
    types: GemmTypes,
    shape: (usize, usize, usize),
    device: &Device,
) -> Option<usize> {
    let art = crate::catalogue::find(name)?
        .artifacts
        .iter()
        .find(|a| a.config == config && split::is_partial(a))?;
    let epilogue = match problem.scale {
        Some(_) => Epilogue::Scaled,
        None => Epilogue::Plain,
    };
    let mut request = GemmRequest::contiguous(problem.layout, epilogue, types, shape);
    if let Some(scalars) = problem.scale {
        request.scalars = scalars;
    }
    split::best_split(&request, art, device)
        .ok()
        .map(|(s, _)| s)
}

/// Takes out of the rounds a participant whose launch failed: cuBLASLt (participant 0) fails
/// the row and loses its timing; a candidate (participant `1 + i`) is refused.
pub(super) fn drop_out(row: &mut Row, alive: &mut [bool], who: usize, e: &BenchError) {
    alive[who] = false;
    match who {
        0 => {
            row.cublas = None;
            row.failure = Some(format!("cuBLASLt: {e}"));
        }
        i => {
            let c = &mut row.candidates[i - 1];
            c.timing = None;
            c.failure = Some(Failure::Refused(e.to_string()));
        }
    }
}

/// Measures one shape in element types `A` → `D`: cuBLASLt and each of `kernels` (name,
/// config, launcher), all computing `problem`, warmed up, timed in interleaved rounds, then
/// checked (see the module docs). A candidate compiled for other types, or for another
/// problem, is refused at its first launch.
pub fn measure_shape<A: HostElem, D: HostElem>(
    rt: &Runtime,
    lt: &CublasLt,
    kernels: &[super::GemmEntry],
    problem: Problem,
    shape: (usize, usize, usize),
    progress: &ProgressBar,
) -> Result<Row, BenchError> {
    let label = shape_label(shape);
    progress.set_message(format!("{label} (allocating)"));
    let mut bufs = Buffers::<A, D>::new(rt, shape, problem)?;
    let tol = types::<A, D>().tolerance();
    let device = Device::of(rt)?;
    let mut row = Row {
        shape,
        cublas: None,
        cublas_err_vs_ref: None,
        candidates: kernels
            .iter()
            .map(|&(name, config, _)| Candidate {
                kernel: name.into(),
                config: config.into(),
                timing: None,
                err_vs_cublas: None,
                err_vs_ref: None,
                failure: None,
                splits: splits_of(name, config, problem, types::<A, D>(), shape, &device),
            })
            .collect(),
        failure: None,
        rounds: 0,
    };
    // Participant 0 is cuBLASLt, participant 1 + i is kernels[i].
    let gemm = match lt.gemm(shape, problem.layout, types::<A, D>()) {
        Ok(g) => Some(g),
        Err(e) => {
            row.failure = Some(format!("cuBLASLt: {e}"));
            None
        }
    };
    let p = 1 + kernels.len();
    let mut alive: Vec<bool> = std::iter::once(gemm.is_some())
        .chain(kernels.iter().map(|_| true))
        .collect();
    let names: Vec<String> = std::iter::once("cuBLASLt".to_string())
        .chain(kernels.iter().map(|(k, c, _)| format!("{k}/{c}")))
        .collect();
    let run = |who: usize, bufs: &mut Buffers<A, D>, set: usize| -> Result<(), BenchError> {
        let Buffers { a, b, c, d, .. } = bufs;
        let (a, b, d) = (&a[set], &b[set], &mut d[set]);
        match (who, &gemm, problem.scale) {
            (0, Some(g), None) => g.run(a, b, d),
            (0, Some(g), Some((alpha, beta))) => g.run_scaled(alpha, a, b, beta, Some(&c[set]), d),
            (0, None, _) => Err(BenchError::Cublas("no plan for this shape".into())),
            (i, _, scale) => {
                let (_, config, launch) = kernels[i - 1];
                Ok(match scale {
                    None => launch.launch(rt, config, a, b, d),
                    Some((alpha, beta)) => {
                        launch.launch_scaled(rt, config, alpha, a, b, beta, &c[set], d)
                    }
                }?)
            }
        }
    };
    let sets = bufs.sets();
    let timed = time_rounds(
        rt,
        &label,
        &names,
        alive.clone(),
        sets,
        progress,
        &mut |who, set| run(who, &mut bufs, set),
    )?;
    timed.record(&mut row, &mut alive);

    // Checked runs, untimed: D poisoned, one run on set 0, read back. cuBLASLt's first, as the
    // candidates are compared with its output.
    let mut theirs = None;
    if alive[0] {
        progress.set_message(format!("{label} (checking cuBLASLt)"));
        bufs.poison(rt)?;
        match run(0, &mut bufs, 0) {
            Ok(()) => {
                let (got, err) = bufs.read_back(rt)?;
                row.cublas_err_vs_ref = Some(err);
                if err >= tol {
                    row.failure = Some(format!(
                        "cuBLASLt: rel. error {err:.3e} on the 64x64 corner against the f64 \
                         reference"
                    ));
                }
                theirs = Some(got);
            }
            Err(e) => drop_out(&mut row, &mut alive, 0, &e),
        }
    }
    for who in 1..p {
        if !alive[who] {
            continue;
        }
        progress.set_message(format!("{label} (checking {})", names[who]));
        bufs.poison(rt)?;
        if let Err(e) = run(who, &mut bufs, 0) {
            drop_out(&mut row, &mut alive, who, &e);
            continue;
        }
        let (got, err_ref) = bufs.read_back(rt)?;
        let err_cublas = theirs
            .as_deref()
            .map(|t| rel_frobenius_sampled(&got, t, sample_stride(got.len())));
        judge(
            &mut row.candidates[who - 1],
            err_ref,
            "the 64x64 corner",
            err_cublas,
            tol,
        );
    }
    Ok(row)
}

/// Records a candidate's checked output: its error `err_ref` against the f64 reference over
/// `ref_part` (e.g. "the 64x64 corner"), its error `err_cublas` against cuBLASLt's output
/// (when cuBLASLt ran), and [`Failure::Wrong`] when either reaches `tol`, the output type's
/// tolerance (or the latter is NaN).
pub(super) fn judge(
    c: &mut Candidate,
    err_ref: f64,
    ref_part: &str,
    err_cublas: Option<f64>,
    tol: f64,
) {
    c.err_vs_ref = Some(err_ref);
    c.err_vs_cublas = err_cublas;
    let mut wrong = Vec::new();
    if err_ref >= tol {
        wrong.push(format!(
            "rel. error {err_ref:.3e} on {ref_part} vs the f64 reference"
        ));
    }
    if let Some(e) = err_cublas.filter(|e| *e >= tol || e.is_nan()) {
        wrong.push(format!("rel. error {e:.3e} against cuBLASLt"));
    }
    if !wrong.is_empty() {
        c.failure = Some(Failure::Wrong(wrong.join("; ")));
    }
}

/// What the rounds of one shape found ([`time_rounds`]), per participant.
pub(super) struct Timed {
    /// Median milliseconds of each participant that ran to the end.
    pub medians: Vec<Option<f64>>,
    /// Why a participant dropped out (its first failed launch), where one did.
    pub failures: Vec<Option<BenchError>>,
    /// Timed rounds.
    pub rounds: usize,
}

impl Timed {
    /// Writes what the rounds found into `row` (participant 0 is cuBLASLt, participant `1 + i`
    /// the row's candidate `i`): the round count, each median as a [`Measured`] of the row's
    /// shape, and each dropout ([`drop_out`], which also clears its `alive` flag).
    pub(super) fn record(&self, row: &mut Row, alive: &mut [bool]) {
        row.rounds = self.rounds;
        for (who, e) in self.failures.iter().enumerate() {
            if let Some(e) = e {
                drop_out(row, alive, who, e);
            }
        }
        for (who, ms) in self.medians.iter().enumerate() {
            let Some(ms) = *ms else { continue };
            let timing = Measured::gemm(row.shape, ms);
            match who {
                0 => row.cublas = Some(timing),
                i => row.candidates[i - 1].timing = Some(timing),
            }
        }
    }
}

/// Steps 1 to 3 of the method (module docs) for participants `0..names.len()`, those of
/// `alive` taking part: warm-up (the first launch doubles as the refusal check), untimed
/// rounds until [`WARMUP_MS`], then the timed interleaved rounds, all queued, the events read
/// after the last. `run(who, set)` queues one run of participant `who` on buffer set `set`;
/// one rotation over the `sets` buffer sets is shared by all (each run takes the next set).
/// A participant whose launch fails drops out, its error kept. `label` names the shape in the
/// progress messages.
pub(super) fn time_rounds(
    rt: &Runtime,
    label: &str,
    names: &[String],
    mut alive: Vec<bool>,
    sets: usize,
    progress: &ProgressBar,
    run: &mut dyn FnMut(usize, usize) -> Result<(), BenchError>,
) -> Result<Timed, BenchError> {
    let p = names.len();
    let mut failures: Vec<Option<BenchError>> = (0..p).map(|_| None).collect();
    let mut fail = |alive: &mut [bool], who: usize, e: BenchError| {
        alive[who] = false;
        failures[who] = Some(e);
    };
    let mut turn = 0usize;
    let mut next_set = || {
        turn += 1;
        (turn - 1) % sets
    };

    // Warm-up; the first launch doubles as the refusal check.
    for who in 0..p {
        if !alive[who] {
            continue;
        }
        progress.set_message(format!("{label} (warm-up {})", names[who]));
        for _ in 0..WARMUP {
            if let Err(e) = run(who, next_set()) {
                fail(&mut alive, who, e);
                break;
            }
        }
    }

    // More warm-up, in untimed rounds, until WARMUP_MS have passed; it also times a round.
    let started = std::time::Instant::now();
    let mut warm_rounds = 0usize;
    while started.elapsed().as_secs_f64() * 1e3 < WARMUP_MS && alive.iter().any(|&a| a) {
        let live: Vec<usize> = (0..p).filter(|&w| alive[w]).collect();
        for who in round_order(warm_rounds, live.len()).map(|i| live[i]) {
            if let Err(e) = run(who, next_set()) {
                fail(&mut alive, who, e);
            }
        }
        rt.synchronize()?;
        warm_rounds += 1;
    }
    let round_ms = started.elapsed().as_secs_f64() * 1e3 / warm_rounds.max(1) as f64;
    let rounds = ((TIMED_MS / round_ms).ceil() as usize).clamp(RUNS, MAX_RUNS);

    // Interleaved rounds, all queued; the events are read after the last.
    let live = alive.iter().filter(|&&a| a).count();
    progress.set_message(format!("{label} ({rounds} rounds x {live})"));
    let mut events: Vec<Vec<_>> = (0..p).map(|_| Vec::with_capacity(rounds)).collect();
    for r in 0..rounds {
        let live: Vec<usize> = (0..p).filter(|&w| alive[w]).collect();
        for who in round_order(r, live.len()).map(|i| live[i]) {
            let (start, end) = event_pair(rt)?;
            record(rt, &start)?;
            if let Err(e) = run(who, next_set()) {
                fail(&mut alive, who, e);
                continue;
            }
            record(rt, &end)?;
            events[who].push((start, end));
        }
    }
    let mut medians = vec![None; p];
    for who in (0..p).filter(|&w| alive[w]) {
        medians[who] = Some(median(elapsed(&events[who])?));
    }
    Ok(Timed {
        medians,
        failures,
        rounds,
    })
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
    fn rounds_rotate_who_goes_first() {
        let order = |r, p| round_order(r, p).collect::<Vec<_>>();
        assert_eq!(order(0, 3), [0, 1, 2]);
        assert_eq!(order(1, 3), [1, 2, 0]);
        assert_eq!(order(2, 3), [2, 0, 1]);
        assert_eq!(order(3, 3), [0, 1, 2]);
        assert_eq!(order(7, 1), [0]);
        assert!(order(4, 0).is_empty());
        for p in 1..=12 {
            // Every round runs each participant once.
            for r in 0..RUNS {
                let mut o = order(r, p);
                assert_eq!(o[0], r % p, "round {r} of {p}");
                o.sort_unstable();
                assert_eq!(o, (0..p).collect::<Vec<_>>(), "round {r} of {p}");
            }
            // Over any p consecutive rounds, each participant holds each position once.
            for start in [0, 5, RUNS - p.min(RUNS)] {
                let mut seen = vec![vec![0; p]; p];
                for r in start..start + p {
                    for (pos, who) in round_order(r, p).enumerate() {
                        seen[who][pos] += 1;
                    }
                }
                assert!(seen.iter().flatten().all(|&n| n == 1), "{p} from {start}");
            }
        }
    }

    #[test]
    fn sampled_comparison_measures_and_flags_nan() {
        use half::bf16;
        let f = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
        let want = f(&[3.0, 100.0, 4.0, 100.0]);
        assert_eq!(rel_frobenius_sampled(&want, &want, 1), 0.0);
        // Stride 2 sees only 3 and 4.
        let got = f(&[3.0, 0.0, 5.0, 0.0]);
        assert!((rel_frobenius_sampled(&got, &want, 2) - 0.2).abs() < 1e-12);
        let nan = f(&[f32::NAN, 100.0, 4.0, 100.0]);
        assert!(rel_frobenius_sampled(&nan, &want, 1).is_infinite());
        let wide = [3.0f32, 4.0];
        assert_eq!(rel_frobenius_sampled(&wide, &wide, 1), 0.0);
    }

    #[test]
    fn problems_name_their_formula() {
        use tirx::problem::BLayout;
        let p = |layout, scale| Problem { layout, scale }.formula();
        assert_eq!(p(BLayout::Tn, None), "D = A*B^T");
        assert_eq!(p(BLayout::Nn, None), "D = A*B");
        assert_eq!(p(BLayout::Nn, Some((1.5, -0.5))), "D = 1.5*A*B + -0.5*C");
    }

    #[test]
    fn set_bytes_follow_the_element_types() {
        let t = GemmTypes {
            input: tirx::abi::ElemType::F16,
            output: tirx::abi::ElemType::F32,
        };
        assert_eq!(set_bytes_of((4, 2, 8), t), 2 * (32 + 16) + 4 * 8);
        assert_eq!(set_bytes((4, 2, 8)), 2 * (32 + 16 + 8));
    }
}
