//! `tirx bench gemm --in e4m3 [--out bf16|f16|f32] [--scales tensor|rows|blocks]
//! [--accum fast|promoted]`: our FP8
//! GEMMs (`gemm/fp8.rs`, `fp8_pingpong.rs`, `fp8_block.rs`, chosen from the catalogue by the problem their artifacts solve, never by
//! name) against cuBLASLt's FP8 GEMM ([`super::cublaslt_fp8`]) on the same buffers and the same
//! scales, in one process, by the GEMM bench's method ([`super::sweep`]: warm-up, interleaved
//! rounds timed by CUDA events, the median, inputs rotated past L2). Every config of ours that
//! takes the types competes; the row's "ours" is the fastest one checked right.
//!
//! Data: A and B uniform in [-1, 1) rounded to the FP8 type (the reference reads the rounded
//! values: the quantisation is applied before either side sees the data); per-tensor scales
//! 0.375 and 1.75, row-wise and block-wise scales uniform in [0.5, 2) (the block scales also
//! uploaded in cuBLASLt's own layouts, `LtScales::block_shapes`).
//!
//! Checks, untimed, after the rounds (D of set 0 poisoned before each checked run): both
//! sides element by element over three 64×64 blocks (top-left, centre, bottom-right: the tails)
//! against the f64 reference of the same FP8 values and scales, within the bound of
//! `fp8_ref::check` for the tensor core's FP8 accumulation (both run with the accumulation
//! asked for, [`Fp8Problem::accum`]: fast by default, `--accum promoted` for our `promoted*`
//! configs against cuBLASLt with `FAST_ACCUM = 0`; block scales always promote, on both sides);
//! and ours against cuBLASLt over all of D (a strided sample above 8192²).

use half::{bf16, f16};
use indicatif::ProgressBar;
use tirx::abi::ElemType;
use tirx::problem::{BLayout, GemmProblem, Problem};
use tirx::{Element, KernelArtifact, Runtime, Target, Tensor};

use super::cublaslt::CublasLt;
use super::cublaslt_fp8::LtScales;
use super::report::{Candidate, Failure, Report, Row, shape_label};
use super::sweep::{self, L2_BYTES, MEMORY_CAP, drop_out, sample_stride, time_rounds};
use super::{BenchError, RUNS, WARMUP_MS, progress};
use crate::dispatch::{Device, ProblemDef};
pub use crate::gemm::fp8_ref::Fp8Host;
use crate::gemm::fp8_ref::{Fp8Accum, Fp8ScaleMode, Fp8Scales, SCALE_BLOCK, check, mn_major};
use crate::gemm::request::{Fp8ScaleArgs, GemmRequest, GemmTypes};
use crate::gemm::split;
use crate::reference::{HostElem, Rng};

/// The per-tensor scales of the bench's data.
pub const TENSOR_SCALES: (f32, f32) = (0.375, 1.75);

/// The FP8 GEMM problem of a run: its epilogue (per-tensor, row-wise or block-wise scales)
/// and types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Problem {
    /// The scales' form.
    pub scales: Fp8ScaleMode,
    /// A's and B's type (E4M3 or E5M2).
    pub input: ElemType,
    /// D's type.
    pub output: ElemType,
    /// The accumulation: our artifacts of this kind compete (block scales: every one, all
    /// promote), and cuBLASLt runs with `FAST_ACCUM` = 1 for `Fast`, 0 for `Promoted`.
    pub accum: Fp8Accum,
}

impl Fp8Problem {
    /// The problem our artifacts must solve.
    pub fn problem(&self) -> Problem {
        Problem::Gemm(GemmProblem {
            b: BLayout::Tn,
            epilogue: self.scales.epilogue(),
        })
    }

    /// Every shipped sm_90a artifact solving it in its types: the one-launch FP8 GEMMs, and the
    /// FP8 split-K partials of its input type (`fp8_splitk.rs`; their plan's reduce writes
    /// D's type and applies the scales), which the request accepts.
    pub fn artifacts(&self) -> Vec<&'static KernelArtifact> {
        let elem = |a: &KernelArtifact, name: &str| {
            (a.signature)()
                .tensors
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.elem)
        };
        crate::catalogue::all()
            .into_iter()
            .flat_map(|k| k.artifacts.iter())
            .filter(|a| {
                let split = crate::gemm::split::is_partial(a)
                    && self.request((256, 256, 256)).solves(a).is_ok();
                let accum = self.scales.is_blocks() || Fp8Accum::of(a) == self.accum;
                a.target == Target::Sm90a
                    && accum
                    && (split
                        || a.problem == Some(self.problem())
                            && elem(a, "a") == Some(self.input)
                            && elem(a, "d") == Some(self.output))
            })
            .collect()
    }

    /// [`Self::artifacts`] narrowed to `names` (`tirx bench gemm --in e4m3 --kernel …`):
    /// `NAME` keeps every config of kernel `NAME`, `NAME/CONFIG` that config; no names keep
    /// them all. `Err` names the first entry that matches none of them, with what does solve
    /// the problem, before any GPU work.
    pub fn select(&self, names: &[String]) -> Result<Vec<&'static KernelArtifact>, String> {
        let arts = self.artifacts();
        if names.is_empty() {
            return Ok(arts);
        }
        let named = |a: &KernelArtifact, n: &str| match n.split_once('/') {
            Some((kernel, config)) => a.kernel == kernel && a.config == config,
            None => a.kernel == n,
        };
        if let Some(n) = names.iter().find(|n| !arts.iter().any(|a| named(a, n))) {
            let known: Vec<String> = arts
                .iter()
                .map(|a| format!("{}/{}", a.kernel, a.config))
                .collect();
            return Err(format!(
                "--kernel {n}: no config of that name solves {} ({}); these do: {}",
                self.problem(),
                self.describe(),
                known.join(", ")
            ));
        }
        Ok(arts
            .into_iter()
            .filter(|a| names.iter().any(|n| named(a, n)))
            .collect())
    }

    /// The host's request of this problem at `shape` (contiguous tensors).
    pub fn request(&self, shape: (usize, usize, usize)) -> GemmRequest {
        let epilogue = self.scales.epilogue();
        let types = GemmTypes {
            input: self.input,
            output: self.output,
        };
        GemmRequest::contiguous(BLayout::Tn, epilogue, types, shape).with_accum(self.accum)
    }

    /// How both sides accumulate, for the report's header: the tensor core's accumulator over
    /// all of K (`Fast` with per-tensor or row scales: `FAST_ACCUM` = 1), else promoted into
    /// f32 every 128 of K.
    pub fn accumulation(&self) -> &'static str {
        if self.accum == Fp8Accum::Fast && !self.scales.is_blocks() {
            "fast accumulation"
        } else {
            "promoted every 128 of K"
        }
    }

    /// `e4m3 -> bf16, row-wise scales` (`, promoted accumulation` for a promoted per-tensor
    /// or row-wise run).
    pub fn describe(&self) -> String {
        let promoted = self.accum == Fp8Accum::Promoted && !self.scales.is_blocks();
        format!(
            "{} -> {}, {} scales{}",
            self.input.name(),
            self.output.name(),
            self.scales.describe(),
            if promoted {
                ", promoted accumulation"
            } else {
                ""
            }
        )
    }
}

/// The shapes measured by default: 8192³, 4096³ and the LLM projections at M = 8192 (N, K) =
/// (28672, 4096), (4096, 14336), the FP8 rows of `ANCHORS.md`; and decode-like M = 128.
pub fn default_shapes() -> Vec<(usize, usize, usize)> {
    vec![
        (8192, 8192, 8192),
        (4096, 4096, 4096),
        (8192, 28672, 4096),
        (8192, 4096, 14336),
        (128, 8192, 8192),
    ]
}

/// Side of the checked blocks.
const BLOCK: usize = 64;

/// The device buffers of one shape (one set per rotation slot) and the checked blocks'
/// references.
struct Buffers<A: Element, D: Element> {
    shape: (usize, usize, usize),
    a: Vec<Tensor<A>>,
    b: Vec<Tensor<A>>,
    d: Vec<Tensor<D>>,
    /// The scales on the device: [1] each, [M] and [N], [M, KB] and [NB, KB], or [KB, M4]
    /// and [NB, KB].
    sa: Tensor<f32>,
    sb: Tensor<f32>,
    /// The block scales in cuBLASLt's layouts (`LtScales::block_shapes`); the others' own.
    lt_scales: Option<(Tensor<f32>, Tensor<f32>)>,
    scales: Fp8Scales,
    /// The f64 reference and magnitudes over [`super::epilogue::blocks`], block by block.
    want: Vec<f64>,
    mag: Vec<f64>,
}

impl<A: Fp8Host, D: HostElem> Buffers<A, D> {
    fn new(
        rt: &Runtime,
        (m, n, k): (usize, usize, usize),
        mode: Fp8ScaleMode,
    ) -> Result<Self, BenchError> {
        let set = m * k + n * k + m * n * size_of::<D>();
        let sets = sweep::rotation_within(set, L2_BYTES, MEMORY_CAP);
        let mut rng = Rng::new(3);
        let mut q = |len: usize| -> Vec<A> { (0..len).map(|_| A::quantise(rng.unit())).collect() };
        let (ha, hb) = (q(m * k), q(n * k));
        let (sa_shape, sb_shape) = mode.shapes((m, n, k));
        let mut u =
            |len: usize| -> Vec<f32> { (0..len).map(|_| 1.25 + 0.75 * rng.unit()).collect() };
        // Block scales are drawn row-major ([M, KB]) in either layout, so that both layouts
        // see the same values; MN-major `sa` is their transpose, padded ([KB, M4]).
        let kb = k.div_ceil(SCALE_BLOCK);
        let blocks = mode
            .is_blocks()
            .then(|| (u(m * kb), u(sb_shape.iter().product())));
        let scales = match (mode, &blocks) {
            (Fp8ScaleMode::Rows, _) => Fp8Scales::Rows(u(m), u(n)),
            (Fp8ScaleMode::BlocksMn, Some((sa, sb))) => {
                Fp8Scales::BlocksMn(mn_major(sa, m, kb), sb.clone())
            }
            (_, Some((sa, sb))) => Fp8Scales::Blocks(sa.clone(), sb.clone()),
            (_, None) => Fp8Scales::Tensor(TENSOR_SCALES.0, TENSOR_SCALES.1),
        };
        let (sa, sb) = match &scales {
            Fp8Scales::Rows(sa, sb) | Fp8Scales::Blocks(sa, sb) | Fp8Scales::BlocksMn(sa, sb) => {
                (rt.upload(sa, &sa_shape)?, rt.upload(sb, &sb_shape)?)
            }
            Fp8Scales::Tensor(a, b) => (rt.upload(&[*a], &[1])?, rt.upload(&[*b], &[1])?),
        };
        let lt_scales = match &blocks {
            Some((sa, sb)) => Some(lt_block_scales(rt, (m, n, k), (sa, sb))?),
            None => None,
        };
        let upload = |h: &[A], dims: &[usize]| -> Result<Vec<Tensor<A>>, BenchError> {
            (0..sets).map(|_| Ok(rt.upload(h, dims)?)).collect()
        };
        let (a, b) = (upload(&ha, &[m, k])?, upload(&hb, &[n, k])?);
        let d = (0..sets)
            .map(|_| rt.zeros(&[m, n]))
            .collect::<Result<_, _>>()?;
        let (mut want, mut mag) = (Vec::new(), Vec::new());
        let row = |h: &[A], i: usize| -> Vec<f64> {
            h[i * k..(i + 1) * k].iter().map(|x| x.value()).collect()
        };
        for (r, c, br, bc) in super::epilogue::blocks(m, n) {
            let rbs: Vec<Vec<f64>> = (c..c + bc).map(|j| row(&hb, j)).collect();
            for i in r..r + br {
                let ra = row(&ha, i);
                for (j, rb) in (c..c + bc).zip(&rbs) {
                    let (s, g) = scales.element(&ra, rb, i, j);
                    want.push(s);
                    mag.push(g);
                }
            }
        }
        Ok(Buffers {
            shape: (m, n, k),
            a,
            b,
            d,
            sa,
            sb,
            lt_scales,
            scales,
            want,
            mag,
        })
    }

    /// Poisons D of set 0, runs `run` on set 0, downloads D: all of it (as f64) and its
    /// values over the checked blocks.
    fn checked(
        &mut self,
        rt: &Runtime,
        run: impl FnOnce(&mut Self) -> Result<(), BenchError>,
    ) -> Result<(Vec<f64>, Vec<f64>), BenchError> {
        let (m, n, _) = self.shape;
        rt.poison(&mut self.d[0])?;
        run(self)?;
        let got: Vec<f64> = rt
            .download(&self.d[0])?
            .into_iter()
            .map(D::to_f64)
            .collect();
        let mut sampled = Vec::with_capacity(self.want.len());
        for (r, c, br, bc) in super::epilogue::blocks(m, n) {
            for i in r..r + br {
                sampled.extend_from_slice(&got[i * n + c..i * n + c + bc]);
            }
        }
        Ok((got, sampled))
    }

    /// The element-wise check of a checked run's blocks: the worst error/bound, or why not.
    fn judge(&self, sampled: &[f64]) -> Result<f64, String> {
        check(
            sampled,
            (&self.want, &self.mag),
            (self.scales.check_k(self.shape.2), D::ELEM, false),
            BLOCK.min(self.shape.1),
        )
    }
}

/// The block scales `sa` [M, KB] and `sb` [NB, KB] (row-major, ours) in cuBLASLt's layouts on
/// the device ([`LtScales::block_shapes`]): `sa` transposed, `sb`'s rows padded with 1s.
fn lt_block_scales(
    rt: &Runtime,
    shape: (usize, usize, usize),
    (sa, sb): (&[f32], &[f32]),
) -> Result<(Tensor<f32>, Tensor<f32>), BenchError> {
    let ([kb, m], [nb, kbp]) = LtScales::block_shapes(shape);
    let at: Vec<f32> = (0..kb * m).map(|x| sa[(x % m) * kb + x / m]).collect();
    let bp: Vec<f32> = (0..nb * kbp)
        .map(|x| {
            let (r, c) = (x / kbp, x % kbp);
            if c < kb { sb[r * kb + c] } else { 1.0 }
        })
        .collect();
    Ok((rt.upload(&at, &[kb, m])?, rt.upload(&bp, &[nb, kbp])?))
}

/// Our launch of `art` on one buffer set, its tensors and scalars by role
/// ([`crate::family::launch_roles`]); a split-K artifact runs its plan of two launches with
/// the slices the host's model picks ([`split::launch_fp8_split`]).
fn launch_ours<A: Element, D: Element>(
    rt: &Runtime,
    art: &KernelArtifact,
    (a, b, d): (&Tensor<A>, &Tensor<A>, &mut Tensor<D>),
    (sa, sb): (&Tensor<f32>, &Tensor<f32>),
    scales: &Fp8Scales,
) -> Result<(), BenchError> {
    let roles = [
        ("a", a.view()),
        ("b", b.view()),
        ("sa", sa.view()),
        ("sb", sb.view()),
        ("d", d.view()),
    ];
    let (x, y) = match scales {
        Fp8Scales::Tensor(x, y) => (*x, *y),
        Fp8Scales::Rows(..) | Fp8Scales::Blocks(..) | Fp8Scales::BlocksMn(..) => (1.0, 1.0),
    };
    if split::is_partial(art) {
        let (sav, sbv) = (sa.view(), sb.view());
        let args = match scales {
            Fp8Scales::Tensor(..) => Fp8ScaleArgs::Tensor(x, y),
            Fp8Scales::Rows(..) => Fp8ScaleArgs::Rows(&sav, &sbv),
            Fp8Scales::Blocks(..) => Fp8ScaleArgs::Blocks(&sav, &sbv),
            Fp8Scales::BlocksMn(..) => Fp8ScaleArgs::BlocksMn(&sav, &sbv),
        };
        return Ok(split::launch_fp8_split(rt, art, &roles, args)?);
    }
    Ok(crate::family::launch_roles(
        rt,
        art,
        &roles,
        &[("scale_a", x), ("scale_b", y)],
    )?)
}

/// Measures one shape: cuBLASLt (participant 0) and each of `arts` (participants 1..) on the
/// same buffers, timed in interleaved rounds, then checked (module docs).
fn measure_shape<A: Fp8Host, D: HostElem>(
    rt: &Runtime,
    lt: &CublasLt,
    p: Fp8Problem,
    arts: &[&'static KernelArtifact],
    shape: (usize, usize, usize),
    progress: &ProgressBar,
) -> Result<Row, BenchError> {
    let label = shape_label(shape);
    progress.set_message(format!("{label} (allocating)"));
    let device = Device::of(rt)?;
    let mut bufs = Buffers::<A, D>::new(rt, shape, p.scales)?;
    let mut row = Row {
        shape,
        cublas: None,
        cublas_err_vs_ref: None,
        candidates: arts
            .iter()
            .map(|a| Candidate {
                kernel: a.kernel.to_string(),
                // A split-K plan's slices: the host's model's for this shape on this device.
                config: match split::is_partial(a) {
                    true => split::best_split(&p.request(shape), a, &device)
                        .map_or(a.config.to_string(), |(s, _)| format!("{} S={s}", a.config)),
                    false => a.config.to_string(),
                },
                timing: None,
                err_vs_cublas: None,
                err_vs_ref: None,
                failure: None,
                splits: split::is_partial(a)
                    .then(|| split::best_split(&p.request(shape), a, &device).ok())
                    .flatten()
                    .map(|(s, _)| s),
            })
            .collect(),
        failure: None,
        rounds: 0,
    };
    let lt_scales = match p.scales {
        Fp8ScaleMode::Tensor => LtScales::Tensor,
        Fp8ScaleMode::Rows => LtScales::Rows,
        Fp8ScaleMode::Blocks | Fp8ScaleMode::BlocksMn => LtScales::Blocks,
    };
    let plan = match lt.gemm_fp8(
        shape,
        p.input,
        p.output,
        lt_scales,
        p.accum == Fp8Accum::Fast,
    ) {
        Ok(g) => Some(g),
        Err(e) => {
            row.failure = Some(format!("cuBLASLt: {e}"));
            None
        }
    };
    let run = |who: usize, bufs: &mut Buffers<A, D>, set: usize| -> Result<(), BenchError> {
        let Buffers {
            a,
            b,
            d,
            sa,
            sb,
            lt_scales,
            scales,
            ..
        } = bufs;
        let (a, b, d) = (&a[set], &b[set], &mut d[set]);
        match (who, &plan) {
            (0, Some(g)) => match lt_scales {
                Some((la, lb)) => g.run(a, b, (la, lb), d),
                None => g.run(a, b, (sa, sb), d),
            },
            (0, None) => Err(BenchError::Cublas("no plan for this shape".into())),
            (i, _) => launch_ours(rt, arts[i - 1], (a, b, d), (sa, sb), scales),
        }
    };
    let promoted = p.accum == Fp8Accum::Promoted && !p.scales.is_blocks();
    let mut names = vec![format!(
        "cuBLASLt FP8 {lt_scales:?}{}",
        if promoted { " FAST_ACCUM=0" } else { "" }
    )];
    names.extend(arts.iter().map(|a| format!("{}/{}", a.kernel, a.config)));
    let mut alive: Vec<bool> = std::iter::once(plan.is_some())
        .chain(arts.iter().map(|_| true))
        .collect();
    let sets = bufs.a.len();
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

    // Checks: cuBLASLt first (ours is compared with its whole output), then each of ours.
    let mut theirs = None;
    let checked: Vec<usize> = (0..names.len()).filter(|&w| alive[w]).collect();
    for who in checked {
        progress.set_message(format!("{label} (checking {})", names[who]));
        match bufs.checked(rt, |b| run(who, b, 0)) {
            Ok((got, sampled)) => {
                let verdict = bufs.judge(&sampled);
                let rel = sweep::rel_frobenius_of(sampled.iter().copied().zip(bufs.want.clone()));
                if who == 0 {
                    row.cublas_err_vs_ref = Some(rel);
                    if let Err(e) = verdict {
                        row.failure = Some(format!("cuBLASLt: {e}"));
                    }
                    theirs = Some(got);
                    continue;
                }
                let c = &mut row.candidates[who - 1];
                c.err_vs_ref = Some(rel);
                c.err_vs_cublas = theirs.as_ref().map(|t: &Vec<f64>| {
                    let s = sample_stride(got.len());
                    sweep::rel_frobenius_of(
                        got.iter()
                            .step_by(s)
                            .copied()
                            .zip(t.iter().step_by(s).copied()),
                    )
                });
                if let Err(e) = verdict {
                    c.failure = Some(Failure::Wrong(e));
                }
            }
            Err(e) => drop_out(&mut row, &mut alive, who, &e),
        }
    }
    Ok(row)
}

/// `tirx bench gemm --in e4m3`: for each shape (default [`default_shapes`]) times cuBLASLt's
/// FP8 GEMM and every config of ours solving `p` (or those of `kernels`, [`Fp8Problem::select`]), checks them (module docs), prints the table
/// and returns the report. `Err` when nothing could be measured (no cuBLASLt, no kernel).
pub fn fp8_report(
    rt: &Runtime,
    p: Fp8Problem,
    shapes: Option<Vec<(usize, usize, usize)>>,
    kernels: &[String],
) -> Result<Report, BenchError> {
    let arts = p.select(kernels).map_err(BenchError::Wrong)?;
    let lt = CublasLt::new(rt)?;
    if arts.is_empty() {
        return Err(BenchError::Wrong(format!(
            "no shipped kernel solves {} ({})",
            p.problem(),
            p.describe()
        )));
    }
    let shapes = shapes.unwrap_or_else(default_shapes);
    println!(
        "{} (compute capability {:?}), cuBLASLt {}; FP8 GEMM {} (f32 accumulation, {} on \
         both sides), B given NxK; median of at least {RUNS} interleaved rounds after at least \
         {WARMUP_MS} ms of warm-up, inputs rotated past L2; {} config(s) of ours, {} shape(s)",
        rt.name(),
        rt.compute_capability(),
        lt.version(),
        p.describe(),
        p.accumulation(),
        arts.len(),
        shapes.len(),
    );
    let bar = progress::bar(shapes.len());
    let mut rows = Vec::with_capacity(shapes.len());
    for &shape in &shapes {
        let measured = match (p.input, p.output) {
            (ElemType::E4m3, ElemType::Bf16) => {
                measure_shape::<tirx::e4m3, bf16>(rt, &lt, p, &arts, shape, &bar)
            }
            (ElemType::E4m3, ElemType::F16) => {
                measure_shape::<tirx::e4m3, f16>(rt, &lt, p, &arts, shape, &bar)
            }
            (ElemType::E4m3, ElemType::F32) => {
                measure_shape::<tirx::e4m3, f32>(rt, &lt, p, &arts, shape, &bar)
            }
            (ElemType::E5m2, ElemType::Bf16) => {
                measure_shape::<tirx::e5m2, bf16>(rt, &lt, p, &arts, shape, &bar)
            }
            _ => Err(BenchError::Wrong(format!("no bench for {}", p.describe()))),
        };
        rows.push(measured.unwrap_or_else(|e| Row::failed(shape, e.to_string())));
        bar.inc(1);
    }
    bar.finish_with_message("done");
    let r = Report {
        date: super::report::now(),
        device: rt.name().to_string(),
        cublaslt_version: lt.version(),
        types: format!("{} -> {}", p.input.name(), p.output.name()),
        problem: format!("{}", p.problem()),
        rows,
    };
    print!("{}", r.table());
    print!("{}", every_config(&r));
    Ok(r)
}

/// Every config's time per shape (the table shows the fastest only), so that configs that
/// differ in schedule — `fp8.rs`'s cooperative and `fp8_pingpong.rs`'s ping-pong — can be
/// compared from one run.
fn every_config(r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::from("every config, TFLOP/s:\n");
    for row in &r.rows {
        for c in &row.candidates {
            let t = c
                .timing
                .map_or("-".to_string(), |t| format!("{:.1}", t.tflops));
            let bad = if c.failure.is_some() { " (failed)" } else { "" };
            let _ = writeln!(
                s,
                "  {:<19} {:<40} {:>8}{bad}",
                shape_label(row.shape),
                format!("{}/{}", c.kernel, c.config),
                t
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_each_sides_accumulation() {
        let p = |scales, accum| Fp8Problem {
            scales,
            input: ElemType::E4m3,
            output: ElemType::Bf16,
            accum,
        };
        let promoted = "promoted every 128 of K";
        assert_eq!(
            p(Fp8ScaleMode::Rows, Fp8Accum::Fast).accumulation(),
            "fast accumulation"
        );
        assert_eq!(
            p(Fp8ScaleMode::Tensor, Fp8Accum::Promoted).accumulation(),
            promoted
        );
        // Block scales promote on both sides whichever is asked.
        assert_eq!(
            p(Fp8ScaleMode::Blocks, Fp8Accum::Fast).accumulation(),
            promoted
        );
    }

    #[test]
    fn kernel_names_narrow_the_fp8_configs_and_a_wrong_one_is_refused() {
        let p = Fp8Problem {
            scales: Fp8ScaleMode::Blocks,
            input: ElemType::E4m3,
            output: ElemType::Bf16,
            accum: Fp8Accum::Fast,
        };
        let all = p.select(&[]).expect("no names: all");
        assert_eq!(all.len(), p.artifacts().len());
        let names = |v: &[&KernelArtifact]| -> Vec<String> {
            v.iter()
                .map(|a| format!("{}/{}", a.kernel, a.config))
                .collect()
        };
        let one = p
            .select(&["gemm_sm90_fp8_block/default".into()])
            .expect("a config");
        assert_eq!(names(&one), ["gemm_sm90_fp8_block/default"]);
        let kernel = p.select(&["gemm_sm90_fp8_block".into()]).expect("a kernel");
        assert!(
            kernel.len() >= 2 && kernel.len() < all.len(),
            "{:?}",
            names(&kernel)
        );
        assert!(kernel.iter().all(|a| a.kernel == "gemm_sm90_fp8_block"));
        // The f16 config solves another problem (D in f16): named here, it is refused.
        for wrong in [
            "gemm_sm90_fp8_block/f16",
            "gemm_sm90_nope",
            "gemm_sm90_fp8_block/",
        ] {
            let e = p
                .select(&["gemm_sm90_fp8_block".into(), wrong.into()])
                .unwrap_err();
            assert!(
                e.contains(wrong) && e.contains("gemm_sm90_fp8_block/default"),
                "{e}"
            );
        }
    }

    #[test]
    fn the_fp8_problems_find_their_kernels_by_what_they_solve() {
        for scales in [Fp8ScaleMode::Tensor, Fp8ScaleMode::Rows] {
            for output in [ElemType::Bf16, ElemType::F16, ElemType::F32] {
                let p = Fp8Problem {
                    scales,
                    input: ElemType::E4m3,
                    output,
                    accum: Fp8Accum::Fast,
                };
                let arts = p.artifacts();
                assert!(!arts.is_empty(), "{}", p.describe());
                assert!(
                    arts.iter()
                        .all(|a| a.problem == Some(p.problem()) || split::is_partial(a))
                );
                // The FP8 split-K partials compete, in the problem's input type only.
                let partials: Vec<_> = arts.iter().filter(|a| split::is_partial(a)).collect();
                assert!(!partials.is_empty(), "{}", p.describe());
                assert!(partials.iter().all(|a| a.elem_of("a") == Some(p.input)));
            }
        }
        // Block scales: `fp8_block.rs`'s two schedules and `fp8_block_wide.rs` (bf16, f16 and
        // f32 out; the overlapped and wide ones bf16 only), no split-K partial (the scales
        // vary along K; no reduce applies them).
        for output in [ElemType::Bf16, ElemType::F16, ElemType::F32] {
            let p = Fp8Problem {
                scales: Fp8ScaleMode::Blocks,
                input: ElemType::E4m3,
                output,
                accum: Fp8Accum::Fast,
            };
            let arts = p.artifacts();
            assert!(!arts.is_empty(), "{}", p.describe());
            const BLOCK_SCALED: [&str; 3] = [
                "gemm_sm90_fp8_block",
                "gemm_sm90_fp8_block_overlap",
                "gemm_sm90_fp8_block_wide",
            ];
            let kernels: Vec<&str> = arts.iter().map(|a| a.kernel).collect();
            assert!(
                kernels.iter().all(|k| BLOCK_SCALED.contains(k)),
                "{kernels:?}"
            );
            // MN-major `sa`: `fp8_block_mn.rs`'s two kernels alone, in every output type.
            let mn = Fp8Problem {
                scales: Fp8ScaleMode::BlocksMn,
                ..p
            };
            let kernels: Vec<&str> = mn.artifacts().iter().map(|a| a.kernel).collect();
            assert_eq!(
                kernels,
                ["gemm_sm90_fp8_block_mn", "gemm_sm90_fp8_block_mn_dbl"],
                "{}",
                mn.describe()
            );
        }
        // No FP8 GEMM with 16-bit inputs: the BF16 kernels solve other problems.
        let none = Fp8Problem {
            scales: Fp8ScaleMode::Tensor,
            input: ElemType::Bf16,
            output: ElemType::Bf16,
            accum: Fp8Accum::Fast,
        };
        assert!(none.artifacts().is_empty());
        // `--accum promoted`: only the promoted configs compete (one-launch and split-K), and
        // `--accum fast` none of them.
        for scales in [Fp8ScaleMode::Tensor, Fp8ScaleMode::Rows] {
            for accum in [Fp8Accum::Fast, Fp8Accum::Promoted] {
                let p = Fp8Problem {
                    scales,
                    input: ElemType::E4m3,
                    output: ElemType::Bf16,
                    accum,
                };
                let arts = p.artifacts();
                assert!(
                    arts.iter().any(|a| split::is_partial(a)),
                    "{}",
                    p.describe()
                );
                assert!(
                    arts.iter().any(|a| !split::is_partial(a)),
                    "{}",
                    p.describe()
                );
                assert!(
                    arts.iter().all(|a| Fp8Accum::of(a) == accum),
                    "{}",
                    p.describe()
                );
            }
        }
    }
}
