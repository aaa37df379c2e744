//! The row problems: `y = op(x)` row by row (softmax, RMSNorm, LayerNorm), x and y `[M, N]`
//! bf16, with the weight `w` and bias `b` of `N` elements where the op takes them — their
//! acceptance rules and their cost model.
//!
//! Acceptance ([`ProblemDef::solves`] and the planner): the artifact declares this op
//! (`solves = softmax`, …); its row capacity ([`capacity`]: `CAP`, a kernel that walks a row in
//! chunks, else `C`, the columns its register tile holds) holds the row — columns past `N` are
//! masked, so any `N ≤ C` runs; it takes only tensors the problem has; and the runtime plans
//! its launch on exactly these tensors (a kernel that stages rows by TMA through a 2-D tensor
//! map needs 16-byte aligned rows, so a row of an odd length goes to a kernel of the same
//! capacity that holds it from its first aligned column, or the next one up). A kernel may
//! also take `xf`, `x` seen as one dimension of `M·N` elements (`TensorMeta::merge_outer`):
//! the odd-width staged kernels (`staged_odd.rs`) load rows through it, and a tensor whose
//! rows do not follow each other has no flat view, so they are refused there.
//!
//! The cost model ([`RowRequest::cost`]): the row capacity, scaled by what was measured
//! between designs of one capacity. The smallest capacity that holds the row wastes the fewest
//! registers and lanes; the factors stay within ±15%, so they order kernels of one capacity
//! and never one capacity against another (each holds twice the row of the last):
//! - a row staged in shared memory by TMA (`x` taken as a tensor map): ×0.87 — softmax
//!   `softmax_staged` 3561 GB/s against the register `c32k` 3082 at 8192×32768
//!   (docs/perf/rows-h200-2026-12-02b.md);
//! - LayerNorm: no factor of its own since it reads its row once into two register tiles (as
//!   RMSNorm does); at one capacity the dispatcher's tie order ([`crate::dispatch::ranked`]:
//!   fewer threads first) takes the narrower CTA, which RMSNorm measured faster (4091 against
//!   3244 GB/s at 32768×8192). The three-tile LayerNorm of 2026-12-02 measured the wider CTAs
//!   faster (docs/perf/rows-h200-2026-12-02.md); re-measure with `tirx tune` where it matters.
//!
//! - a row split over a cluster of CTAs (`*_staged_cluster`, cluster > 1): ranked by its
//!   capacity like the rest, except that with at least as many rows as SMs a row of up to
//!   [`LONGEST_ONE_CTA_STAGE`] columns keeps its one-CTA kernel (8192×32768 on the H100:
//!   softmax `s32k` 97.8 % of the device copy against `h2` 94.9 %, LayerNorm's `layernorm_long`
//!   85.3 % against 62.1 %). Past it the one-CTA kernels walk the row twice and the split
//!   reads it once: softmax / RMSNorm 4096×65536 `x2` 81.7 / 84.7 % against the walker's 75.5 /
//!   76.9 %, 2048×131072 `x4` 78.5 / 81.3 % against 69.6 / 69.5 %, 1024×262144 `x8` 76.2 /
//!   78.6 % against 67.0 / 66.3 % (docs/perf/h100-2026-12-07-stop56.md). LayerNorm's split
//!   measured even with its walker there (`x2` 74.1 % against 73.2 %, `x4` 69.0 against 61.8,
//!   `x8` 64.9 against 60.6). Equal capacities go to the smaller cluster (`x2` before `h4`:
//!   softmax `h4` ran 91.1 %, RMSNorm 78.2 %; the tune cache corrects it per shape).
//!
//! - a row whose bytes are not a whole number of 16-byte vectors (an odd bf16 width): a kernel
//!   holding the row in one tile from column 0 (`C`, no `CAP`, no `ODD`) ranks after every
//!   kernel that walks the row in chunks (`CAP`) and every one marked `ODD = 1`
//!   (`softmax_odd`, `rmsnorm_odd_rows` to 4096 columns and `rmsnorm_odd` from 5120,
//!   `layernorm_odd`: a row of up to 16384 columns in registers from its first aligned column;
//!   RMSNorm's two share no capacity, so the smallest that holds the row picks one), since
//!   those keep their vectors while the tile moves most of its chunks element by element
//!   (softmax 4096×4999 at 29 % of the device copy, 1024×50257 at 33 % on the H100,
//!   docs/perf/h100-2026-12-06-stop51.md). An `ODD` kernel costs its
//!   capacity, so it comes first where it holds the row (up to 16384 columns), the walkers
//!   above. Measured on the H200 (docs/perf/2026-12-06-stop52.md): 16384×1001 and 8192×3001
//!   softmax 30 % → 92 % / 89 % of the device copy, RMSNorm 77–79 %, LayerNorm 59 % (before
//!   the norms staged `w` and `b` once a CTA, `norm_odd.rs`); the walkers at 4096×4999 /
//!   8192×7171 ran 23–29 %, so the `ODD` ladder goes on to 16k. On a row of whole vectors an
//!   `ODD` kernel takes ×1.15, after the register kernels
//!   of its capacity: its head, tail and their reductions are dead weight there (emulator,
//!   softmax 4096×4096: 532 M thread-instructions against `softmax` c4k's 385 M; not
//!   measured on a GPU).
//!   Past 16384 columns the `ODD` kernels that also walk (`CAP`) are the odd-width staged
//!   ones (`*_staged_odd`: 24k and 32k, three or four CTAs an SM, the row read from DRAM once
//!   through the flat view); an odd row takes the smallest of them that holds it, its capacity
//!   far under the walkers' 1M. On the H100 (docs/perf/h100-2026-12-07-stop56.md) they beat
//!   the walkers at 2048×20001 (softmax / RMSNorm / LayerNorm 78.3 / 71.8 / 51.4 % of the copy
//!   against 65.3 / 67.0 / 45.9), 4096×16385 and 4096×24573. Past 32768 columns the walkers
//!   take odd rows: the staged `o52k` (two CTAs an SM) and `o100k` (one) measured slower there
//!   and were deleted (`staged_odd.rs`). The `*_staged_odd` kernels take no staged factor
//!   (×0.87 is for a map of `x` itself): no register kernel of their capacities competes for
//!   odd rows. On rows of whole vectors they rank after every one-CTA kernel (`+`
//!   [`LONGEST_ONE_CTA_ROW`], as a tile holding an odd row from column 0 does): there the
//!   aligned staged kernels, the register kernels and the walkers were measured, these not
//!   (LayerNorm has no aligned staged kernel, and at 8192×32768 `layernorm_long` keeps its
//!   place until one measures `layernorm_staged_odd` against it).
//!
//! - a config not yet timed on a GPU (`UNTIMED = 1`, as the GEMM configs of
//!   `gemm/untimed.rs`): refused (`Reject::Unranked`, [`UNTIMED_REASON`]), so the host never
//!   chooses it until a run measures it; `tirx bench rows --kernel NAME[/CONFIG]` runs it by
//!   name. The persistent double-buffered `*_staged_pipe` (`staged_pipe.rs`) carry it.
//!
//! Equal costs go by the dispatcher's stated tie order (smaller cluster, fewer threads, …),
//! never by where a kernel or a config is written. The tune cache corrects the model where it
//! is wrong.

use tirx::abi::ConfigValue;
use tirx::problem::{Problem, RowOp};
use tirx::runtime::TensorMeta;
use tirx::{KernelArtifact, TensorArg};

use crate::dispatch::tune::{self, Key};
use crate::dispatch::{Device, ProblemDef, Reject};
use crate::gemm::untimed::is_untimed;

/// Why a row config not yet timed on a GPU (its constant `UNTIMED = 1`) is not ranked (the
/// module docs).
pub const UNTIMED_REASON: &str = "not yet timed on a GPU (config constant `UNTIMED = 1`): the \
     row cost model ranks only designs it was measured on; it runs by name (`tirx bench rows \
     --kernel NAME/CONFIG`)";

/// The longest row a one-CTA row kernel holds (`softmax_long`, `rmsnorm_long`,
/// `layernorm_long`: `CAP = 1048576`); a cluster kernel that ranks after the one-CTA kernels
/// costs more than this.
pub const LONGEST_ONE_CTA_ROW: usize = 1 << 20;

/// The longest row one CTA stages in shared memory and reads from DRAM once (`softmax_staged`
/// and `rmsnorm_staged` `s32k`); past it the one-CTA kernels walk the row twice.
pub const LONGEST_ONE_CTA_STAGE: usize = 32768;

/// The longest row an artifact handles: its config's `CAP` (a kernel that walks a row in
/// chunks), else `C` (the columns its register tile holds), if it is a row kernel.
pub fn capacity(a: &KernelArtifact) -> Option<usize> {
    let get = |key: &str| {
        a.consts.iter().find_map(|(n, v)| match v {
            ConfigValue::Int(c) if *n == key => Some(*c as usize),
            _ => None,
        })
    };
    get("CAP").or_else(|| get("C"))
}

/// One row op to run: the op and the tensors it runs on.
#[derive(Clone, Debug)]
pub struct RowRequest {
    /// The op.
    pub op: RowOp,
    /// `x` `[M, N]`.
    pub x: TensorMeta,
    /// `w` `[N]` (RMSNorm, LayerNorm).
    pub w: Option<TensorMeta>,
    /// `b` `[N]` (LayerNorm).
    pub b: Option<TensorMeta>,
    /// `y` `[M, N]`.
    pub y: TensorMeta,
    /// The norms' ε (every scalar of a row kernel is ε).
    pub eps: f32,
}

impl RowRequest {
    /// The request on contiguous bf16 tensors at 256-byte aligned addresses, with the vectors
    /// the op takes.
    pub fn contiguous(op: RowOp, rows: usize, cols: usize) -> RowRequest {
        let meta = |shape: &[usize]| TensorMeta::row_major(tirx::abi::ElemType::Bf16, shape, 0);
        RowRequest {
            op,
            x: meta(&[rows, cols]),
            w: op.takes_weight().then(|| meta(&[cols])),
            b: op.takes_bias().then(|| meta(&[cols])),
            y: meta(&[rows, cols]),
            eps: 1e-6,
        }
    }

    /// The request on the tensors given (their strides and addresses count).
    pub fn on(
        op: RowOp,
        x: &TensorArg<'_>,
        w: Option<&TensorArg<'_>>,
        b: Option<&TensorArg<'_>>,
        y: &TensorArg<'_>,
        eps: f32,
    ) -> RowRequest {
        RowRequest {
            op,
            x: x.meta().clone(),
            w: w.map(|t| t.meta().clone()),
            b: b.map(|t| t.meta().clone()),
            y: y.meta().clone(),
            eps,
        }
    }

    /// The row length.
    pub fn cols(&self) -> usize {
        self.x.shape.get(1).copied().unwrap_or(0)
    }

    /// The tensor of the role `name` (`x`, `w`, `b`, `y`, and `xf`: `x` seen as one
    /// dimension, `TensorMeta::merge_outer`), if the problem has it.
    pub fn tensor(&self, name: &str) -> Option<TensorMeta> {
        match name {
            "x" => Some(self.x.clone()),
            "y" => Some(self.y.clone()),
            "w" => self.w.clone(),
            "b" => self.b.clone(),
            "xf" => self.x.merge_outer(),
            _ => None,
        }
    }
}

impl ProblemDef for RowRequest {
    fn describe(&self) -> String {
        let rows = self.x.shape.first().copied().unwrap_or(0);
        format!("{} of {rows}x{} bf16", self.op.name(), self.cols())
    }

    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        if artifact.problem != Some(Problem::Row(self.op)) {
            return Err(Reject::problem(artifact));
        }
        match capacity(artifact) {
            None => {
                return Err(Reject::Unranked(
                    "declares no row capacity `C` or `CAP`".into(),
                ));
            }
            Some(c) if c < self.cols() => {
                return Err(Reject::Capacity {
                    holds: c,
                    cols: self.cols(),
                });
            }
            Some(_) => {}
        }
        let sig = artifact.sig();
        if let Some(t) = sig.tensors.iter().find(|t| self.tensor(&t.name).is_none()) {
            return Err(Reject::Tensor {
                role: t.name.clone(),
            });
        }
        match artifact.elem_of("x") {
            Some(e) if e == self.x.elem => Ok(()),
            e => Err(Reject::Types { found: vec![e] }),
        }
    }

    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>) {
        let sig = artifact.sig();
        let tensors = sig
            .tensors
            .iter()
            .filter_map(|t| self.tensor(&t.name))
            .collect();
        (tensors, vec![self.eps; sig.scalars.len()])
    }

    fn cost(&self, artifact: &KernelArtifact, device: &Device) -> Result<f64, Reject> {
        if is_untimed(artifact) {
            // Never the host's choice before a run measures it (the module docs).
            return Err(Reject::Unranked(UNTIMED_REASON.into()));
        }
        let capacity =
            capacity(artifact).ok_or_else(|| Reject::Unranked("no row capacity".into()))?;
        let sig = artifact.sig();
        let rows = self.x.shape.first().copied().unwrap_or(0);
        let cluster: u32 = sig.cluster.iter().product();
        if cluster > 1
            && rows >= device.limits.sm_count as usize
            && self.cols() <= LONGEST_ONE_CTA_STAGE
        {
            // With a row for every SM, a row one CTA stages is not split over a cluster (the
            // module docs); a longer one is, rather than walked twice.
            return Ok(LONGEST_ONE_CTA_ROW as f64 * cluster as f64 + capacity as f64);
        }
        let staged = sig
            .params
            .iter()
            .any(|p| matches!(p, tirx::abi::AbiParam::TensorMap { tensor, .. } if tensor == "x"));
        let mut cost = capacity as f64;
        if staged {
            cost *= 0.87;
        }
        let walks = artifact.int("CAP").is_some();
        let from_aligned = artifact.int("ODD") == Some(1);
        let odd = !(self.cols() * self.x.elem.bytes() as usize).is_multiple_of(16);
        if odd && !walks && !from_aligned {
            // A row whose bytes are not a whole number of 16-byte vectors starts aligned only
            // every few rows, and a tile holding it from column 0 moves most of it element by
            // element; the `ODD` kernels hold it, and the walkers walk it, from its first
            // aligned column (`softmax_odd`'s, `softmax_long`'s docs). They rank first.
            cost += LONGEST_ONE_CTA_ROW as f64;
        }
        let flat = sig.tensors.iter().any(|t| t.name == "xf");
        if !odd && flat {
            // The flat view is for rows a 2-D tensor map cannot take; on rows of whole vectors
            // the aligned staged kernels and the walkers keep their measured places (the
            // module docs).
            cost += LONGEST_ONE_CTA_ROW as f64;
        }
        if !odd && from_aligned {
            // Its head and tail are empty on a row of whole vectors: after the register
            // kernels of its capacity (the module docs).
            cost *= 1.15;
        }
        Ok(cost)
    }

    fn cache_key(&self, device: &Device) -> Key {
        let (rows, cols) = (self.x.shape.first().copied().unwrap_or(0), self.cols());
        Key {
            device: device.name.clone(),
            sms: device.limits.sm_count,
            problem: self.op.name().to_string(),
            types: "bf16".into(),
            bucket: [tune::bucket(rows), tune::bucket(cols), 0],
            align: [tune::alignment(rows), tune::alignment(cols), 0],
        }
    }
}
