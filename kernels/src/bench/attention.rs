//! `tirx bench attention`: the Hopper attention forward on the GPU in TFLOP/s, beside the peers
//! (cuDNN and FA2 through torch SDPA, FA4's CuTe-DSL Hopper kernel) that
//! `kernels/bench/attention_peers.py` measured on the same shapes with the same method.
//!
//! Method, per shape (that of the peers' script, which repeats it):
//! 1. Inputs: q, k, v uniform in [-1, 1) (bf16), in [`SETS`] buffer sets whose bytes exceed
//!    twice the L2 (one set of the sweep's shapes is 256 MB); each shape views the same
//!    buffers with its own `[B, S, H·D]` shape. Q and O are sized for the largest query
//!    side, K and V for the largest key side; past 64 Mi elements a buffer repeats a random
//!    pool at least batch 0 long (a decode cache of 64 × 128k tokens is 8 Gi elements).
//! 2. Timing: [`WARMUP`] untimed runs, then runs until [`WARMUP_MS`] have passed, then
//!    [`RUNS`] or more runs (about [`TIMED_MS`], at most [`MAX_RUNS`]), each bracketed by its
//!    own pair of CUDA events and queued without waiting, cycling over the sets; the median.
//!    TFLOP/s = 4·b·h·s²·d / t, halved for causal (FA3's count, [`Shape::flops`], when the
//!    query and key lengths differ).
//! 3. Check, untimed: O of set 0 poisoned, one run, read back: every element finite, and
//!    [`CHECK_ROWS`] rows of batch 0, heads 0 and 1, within [`TOL`] of the f64 reference
//!    ([`crate::attention::reference::attention_row`]); their LSE within 8·[`TOL`] (a row that
//!    sees no key — causal with more queries than keys — must give O = 0 and LSE = −∞).
//!
//! `tirx bench attention --shape B,HQ,HKV,SQ,SK,D[,causal]` ([`Shape::parse`], repeatable)
//! measures the shapes given instead of the sweep; `attention_peers.py --shape` takes the same.
//! With `--varlen` each shape runs as a packed variable-length batch of B equal sequences
//! through `attention_sm90_varlen` ([`forms`]), beside FA4's varlen kernel where the peers'
//! script measured it (`attention_peers.py --varlen`, peer `fa4-cute-sm90-varlen`), and the
//! dense peers otherwise. With `--paged PAGE` each shape runs over a paged K/V cache of
//! PAGE-token pages in a shuffled order through `attention_sm90_paged` ([`forms`]), beside
//! FA4's varlen kernel over a shuffled paged cache of its own where the peers' script measured it
//! (`attention_peers.py --paged PAGE`, peer `fa4-cute-sm90-pagedPAGE`), and the dense peers
//! (cuDNN, FA4 on contiguous K/V) otherwise — the label says `[paged P]` either way. With
//! `--decode [SPLITS]` each shape (SQ ≤ 16) runs through the split-KV decode path
//! (`attention::decode`: `attention_sm90_decode` over NS chunks of the keys, then
//! `attention_decode_combine`; NS the host's choice for the GPU's SMs, or SPLITS) on the dense
//! layout, the query heads of a K/V head packed into one tile where the GQA kernel can
//! (`--unpacked`: never), beside the dense peers (cuDNN through SDPA on the same shape) — the
//! label says `[decode NS]`, `[decode NS gG]` when packed.
//!
//! The peers file (`tirx-attention-peers/1`, the script's docstring gives the format) is read
//! by [`PeersFile`]; the ratio is ours over the faster of cuDNN and FA4-cute.

use std::path::Path;

use half::bf16;
use serde::{Deserialize, Serialize};
use tirx::{Runtime, Tensor};

use super::{
    BenchError, MAX_RUNS, RUNS, TIMED_MS, WARMUP, WARMUP_MS, elapsed, event_pair, median, record,
};
use crate::attention::host;
use crate::attention::reference::{Dims, attention_row};
use crate::attention::request::{AttentionRequest, Dims as RequestDims};
use crate::dispatch::Device;
use crate::reference::Rng;

mod forms;

/// How each shape is measured: dense `[B, S, H·D]`, as a packed variable-length batch
/// (`--varlen`), or over a paged K/V cache of pages of this many tokens (`--paged PAGE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// The dense kernels, through the host's choice (or `--kernel`).
    #[default]
    Dense,
    /// `attention_sm90_varlen`.
    Varlen,
    /// `attention_sm90_paged` with pages of this many tokens.
    Paged(usize),
    /// The split-KV decode path (`attention::decode`): the host's split or a number of
    /// chunks, packed or not.
    Decode(crate::attention::decode::Ask),
}

/// Buffer sets the runs cycle over (each set is q, k, v and o of 16k tokens × 2048 or more:
/// at least 256 MB).
pub const SETS: usize = 2;
/// Rows of each output compared with the f64 reference (per head checked).
pub const CHECK_ROWS: usize = 24;
/// Largest allowed |o − ref| (bf16 output of values of magnitude ≤ 1).
pub const TOL: f64 = 2e-2;
/// Tokens of every sweep shape (batch × sequence).
pub const TOKENS: usize = 16384;
/// Heads × head dim of every sweep shape.
pub const WIDTH: usize = 2048;

/// One point of the sweep, or a shape given with `--shape`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Head dimension.
    pub hd: usize,
    /// Query sequence length.
    pub seq: usize,
    /// Key/value sequence length when it is not `seq` (`None`: the same; the sweep's shapes
    /// and peers files written before `--shape` existed have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_k: Option<usize>,
    /// Batch.
    pub batch: usize,
    /// Query heads.
    pub heads: usize,
    /// K/V heads.
    pub kv_heads: usize,
    /// Causal mask (bottom-right aligned when the lengths differ, as FA2/FA3: query `i` sees
    /// keys `j ≤ i + seq_k − seq`).
    pub causal: bool,
}

impl Shape {
    /// The key length.
    pub fn sk(&self) -> usize {
        self.seq_k.unwrap_or(self.seq)
    }
    /// The FLOPs counted, FA3's convention (`hopper/benchmark_attn.py`, `flops`):
    /// 4·b·h·sq·avg·d, `avg` the keys a query sees on average — `sk` without a mask,
    /// `(max(0, sk − sq) + sk) / 2` with the bottom-right causal one (so 4·b·h·s²·d, halved
    /// for causal, when the lengths agree).
    pub fn flops(&self) -> f64 {
        let (sq, sk) = (self.seq as f64, self.sk() as f64);
        let avg = if self.causal {
            ((sk - sq).max(0.0) + sk) / 2.0
        } else {
            sk
        };
        4.0 * (self.batch * self.heads) as f64 * sq * avg * self.hd as f64
    }
    fn dims(&self) -> Dims {
        Dims {
            b: self.batch,
            s: self.seq,
            sk: self.sk(),
            hq: self.heads,
            hk: self.kv_heads,
            d: self.hd,
            dv: self.hd,
        }
    }
    /// The shape with its key length spelled out: what two shapes are compared by (a peers
    /// file may name `seq_k` where the sweep leaves it out).
    fn key(&self) -> Shape {
        Shape {
            seq_k: Some(self.sk()),
            ..*self
        }
    }
    /// `hd128 s8192 b2 h16/16 full`, or `hd128 s512/4096 …` when the key length differs.
    pub fn label(&self) -> String {
        let s = if self.sk() == self.seq {
            self.seq.to_string()
        } else {
            format!("{}/{}", self.seq, self.sk())
        };
        format!(
            "hd{} s{s} b{} h{}/{} {}",
            self.hd,
            self.batch,
            self.heads,
            self.kv_heads,
            if self.causal { "causal" } else { "full" }
        )
    }
    /// Parses `--shape B,HQ,HKV,SQ,SK,D[,causal]` (the last field `causal` or `full`,
    /// `full` when left out).
    pub fn parse(text: &str) -> Result<Shape, String> {
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        let bad = |why: String| {
            format!(
                "--shape `{text}`: {why} (expected B,HQ,HKV,SQ,SK,D[,causal], e.g. 2,32,8,512,4096,128,causal)"
            )
        };
        if !(6..=7).contains(&fields.len()) {
            return Err(bad(format!("{} fields", fields.len())));
        }
        let mut n = [0usize; 6];
        for (i, (f, name)) in fields
            .iter()
            .zip(["B", "HQ", "HKV", "SQ", "SK", "D"])
            .enumerate()
        {
            n[i] = f
                .parse()
                .ok()
                .filter(|&v: &usize| v > 0)
                .ok_or_else(|| bad(format!("{name} `{f}` is not a positive integer")))?;
        }
        let causal = match fields.get(6).copied() {
            None | Some("full") => false,
            Some("causal") => true,
            Some(other) => return Err(bad(format!("`{other}` is neither `causal` nor `full`"))),
        };
        let [batch, heads, kv_heads, seq, sk, hd] = n;
        if heads % kv_heads != 0 {
            return Err(bad(format!(
                "{kv_heads} K/V heads do not divide {heads} query heads"
            )));
        }
        Ok(Shape {
            hd,
            seq,
            seq_k: (sk != seq).then_some(sk),
            batch,
            heads,
            kv_heads,
            causal,
        })
    }
}

/// The sweep: total tokens 16k, heads × head dim 2048, sequence 512…16k (`quick`: 2k and 8k),
/// head dims 64/128/256, causal and not; then GQA, 32 query heads over 8 K/V heads at hd 128,
/// sequence 8k. The peers' script lists the same.
pub fn sweep(quick: bool) -> Vec<Shape> {
    let seqs: &[usize] = if quick {
        &[2048, 8192]
    } else {
        &[512, 1024, 2048, 4096, 8192, 16384]
    };
    let mut out = Vec::new();
    for hd in [64, 128, 256] {
        for &seq in seqs {
            for causal in [false, true] {
                let heads = WIDTH / hd;
                out.push(Shape {
                    hd,
                    seq,
                    seq_k: None,
                    batch: TOKENS / seq,
                    heads,
                    kv_heads: heads,
                    causal,
                });
            }
        }
    }
    for causal in [false, true] {
        out.push(Shape {
            hd: 128,
            seq: 8192,
            seq_k: None,
            batch: 2,
            heads: 32,
            kv_heads: 8,
            causal,
        });
    }
    out
}

/// The peers' file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PeersFile {
    /// `tirx-attention-peers/1`.
    pub format: String,
    /// UTC, ISO 8601.
    pub date: String,
    /// The GPU.
    pub device: String,
    /// One result per (shape, peer).
    pub results: Vec<PeerResult>,
}

/// One peer on one shape.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PeerResult {
    /// The shape's fields.
    #[serde(flatten)]
    pub shape: Shape,
    /// `cudnn`, `fa2` or `fa4-cute-sm90`.
    pub peer: String,
    /// Median ms, if it ran.
    pub median_ms: Option<f64>,
    /// Whether its output passed the script's check.
    pub ok: bool,
}

impl PeersFile {
    /// Reads and checks the format tag.
    pub fn read(path: &Path) -> Result<PeersFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let f: PeersFile =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if f.format != "tirx-attention-peers/1" {
            return Err(format!(
                "{}: format `{}`, expected tirx-attention-peers/1",
                path.display(),
                f.format
            ));
        }
        Ok(f)
    }
    /// The TFLOP/s of `peer` on `shape`, if it ran and passed its check.
    pub fn tflops(&self, shape: &Shape, peer: &str) -> Option<f64> {
        self.results
            .iter()
            .find(|r| r.shape.key() == shape.key() && r.peer == peer && r.ok)
            .and_then(|r| r.median_ms)
            .map(|ms| shape.flops() / ms / 1e9)
    }
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The shape.
    #[serde(flatten)]
    pub shape: Shape,
    /// Measured as a variable-length batch (`--varlen`: `attention_sm90_varlen`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub varlen: bool,
    /// Measured over a paged K/V cache of pages of this many tokens (`--paged`:
    /// `attention_sm90_paged`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paged: Option<usize>,
    /// Measured through the decode path (`--decode`), with this many splits of the keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_splits: Option<usize>,
    /// The query heads packed per CTA (`--decode`, the GQA kernel), where packed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_pack: Option<usize>,
    /// The tile entry forced (`--kernel`), or `None`: the host's choice.
    pub tile: Option<String>,
    /// Our median ms.
    pub median_ms: f64,
    /// Our TFLOP/s.
    pub tflops: f64,
    /// Runs timed.
    pub runs: usize,
    /// Largest |o − ref| over the checked rows.
    pub max_err: f64,
    /// The peers' TFLOP/s (cuDNN, FA4-cute, FA2), where measured.
    pub cudnn: Option<f64>,
    /// FA4's CuTe-DSL Hopper kernel.
    pub fa4: Option<f64>,
    /// FA2.
    pub fa2: Option<f64>,
    /// Ours over the faster of cuDNN and FA4-cute.
    pub ratio: Option<f64>,
}

/// Times `run(set)`: warm-up, then the timed runs (see the module docs); (median ms, runs).
fn time(
    rt: &Runtime,
    mut run: impl FnMut(usize) -> Result<(), BenchError>,
) -> Result<(f64, usize), BenchError> {
    for i in 0..WARMUP {
        run(i % SETS)?;
    }
    rt.synchronize()?;
    let t0 = std::time::Instant::now();
    let mut n = 0;
    while t0.elapsed().as_secs_f64() * 1e3 < WARMUP_MS {
        run(n % SETS)?;
        rt.synchronize()?;
        n += 1;
    }
    let per = (t0.elapsed().as_secs_f64() * 1e3 / n.max(1) as f64).max(1e-3);
    let runs = ((TIMED_MS / per) as usize).clamp(RUNS, MAX_RUNS);
    let mut events = Vec::with_capacity(runs);
    for i in 0..runs {
        let (s, e) = event_pair(rt)?;
        record(rt, &s)?;
        run(i % SETS)?;
        record(rt, &e)?;
        events.push((s, e));
    }
    Ok((median(elapsed(&events)?), runs))
}

/// Runs the sweep (or `shapes`), prints the table, writes `json` if given.
pub fn run_attention_bench(
    rt: &Runtime,
    shapes: &[Shape],
    tiles: &[String],
    peers: Option<&PeersFile>,
    json: Option<&Path>,
    dump: Option<&Path>,
    form: Form,
) -> Result<Vec<Point>, BenchError> {
    if form != Form::Dense && !tiles.is_empty() {
        return Err(BenchError::Wrong(
            "--kernel forces a tile of the dense kernels; --varlen, --paged and --decode measure attention_sm90_varlen, attention_sm90_paged and attention_sm90_decode"
                .into(),
        ));
    }
    let mut dumped = Vec::new();
    // One buffer per tensor, as large as the largest shape's: Q and O `B·SQ·HQ·D`, K and V
    // `B·SK·HK·D` (a decode shape's cache dwarfs its queries).
    let numel_q = shapes
        .iter()
        .map(|s| s.batch * s.seq * s.heads * s.hd)
        .max()
        .unwrap_or(0);
    let numel_kv = shapes
        .iter()
        .map(|s| {
            let dense = s.batch * s.sk() * s.kv_heads * s.hd;
            match form {
                // The cache's pages past a sequence's last key are in the buffers too.
                Form::Paged(page) => dense.max(forms::PagedCache::cache_numel(s, page)),
                _ => dense,
            }
        })
        .max()
        .unwrap_or(0);
    // The host keeps (and checks against) batch 0 of each input; beyond `POOL` elements a
    // buffer repeats a random pool that holds at least batch 0 (a paged cache is read through
    // its table anywhere: whole).
    let batch0 = |f: fn(&Shape) -> usize| shapes.iter().map(f).max().unwrap_or(0);
    let pool_q = numel_q.min(POOL.max(batch0(|s| s.seq * s.heads * s.hd)));
    let pool_kv = match form {
        Form::Paged(_) => numel_kv,
        _ => numel_kv.min(POOL.max(batch0(|s| s.sk() * s.kv_heads * s.hd))),
    };
    let mut rng = Rng::new(0xa77e);
    let mut sets: Vec<[Tensor<bf16>; 4]> = Vec::new();
    let lse_numel = shapes
        .iter()
        .map(|s| s.batch * s.seq * s.heads)
        .max()
        .unwrap_or(0);
    let lse_sets: Vec<Tensor<f32>> = (0..SETS)
        .map(|_| rt.zeros::<f32>(&[lse_numel]))
        .collect::<Result<_, _>>()?;
    let mut host0: Vec<Vec<bf16>> = Vec::new();
    for si in 0..SETS {
        let mut t = Vec::new();
        for (numel, pool) in [(numel_q, pool_q), (numel_kv, pool_kv), (numel_kv, pool_kv)] {
            let (d, h) = random_buffer(rt, &mut rng, numel, pool)?;
            t.push(d);
            if si == 0 {
                host0.push(h);
            }
        }
        t.push(rt.zeros::<bf16>(&[numel_q])?);
        sets.push(t.try_into().map_err(|_| BenchError::Wrong("set".into()))?);
    }
    println!(
        "{:<44} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>9}",
        "shape", "ours ms", "TFLOP/s", "cuDNN", "FA4", "FA2", "ratio", "max err"
    );
    let mut points = Vec::new();
    // The host's choice, or each forced tile entry that has this head dim.
    let mut choices: Vec<Option<(&str, &'static tirx::KernelArtifact)>> = Vec::new();
    for t in tiles {
        let Some(a) = host::tile_named(t) else {
            let known: Vec<&str> = host::tiles().iter().map(|a| a.config).collect();
            return Err(BenchError::Wrong(format!(
                "no attention tile `{t}`; tiles: {known:?}"
            )));
        };
        choices.push(Some((t.as_str(), a)));
    }
    if choices.is_empty() {
        choices.push(None);
    }
    for (sh, tile) in shapes
        .iter()
        .flat_map(|s| choices.iter().map(move |t| (s, *t)))
    {
        let (b, s, sk, hq, hk, d) = (sh.batch, sh.seq, sh.sk(), sh.heads, sh.kv_heads, sh.hd);
        let forced = tile.map(|(_, a)| a);
        if let Some(a) = forced {
            // A forced tile runs only the shapes it can take (its head dim).
            let dims = RequestDims { b, s, sk, hq, hk };
            let r = AttentionRequest::contiguous(dims, d, tirx::abi::ElemType::Bf16, sh.causal)?;
            if host::choose(&r.forced(a), &Device::of(rt)?).is_err() {
                continue;
            }
        }
        let tile = tile.map(|(t, _)| t);
        let q_shape = [b, s, hq * d];
        let k_shape = [b, sk, hk * d];
        let strides = |sh: &[usize; 3]| [sh[1] * sh[2], sh[2], 1];
        let scale = 1.0 / (d as f32).sqrt();
        let l_shape = [b * hq, s, 1];
        let batched = forms::Batched::new(rt, sh, form)?;
        let launch = |set: &[Tensor<bf16>; 4], lse: &Tensor<f32>| -> Result<(), BenchError> {
            if let Some(p) = &batched {
                return p.launch(rt, set, lse, scale);
            }
            let args = [
                set[0].subview(0, &q_shape, &strides(&q_shape))?,
                set[1].subview(0, &k_shape, &strides(&k_shape))?,
                set[2].subview(0, &k_shape, &strides(&k_shape))?,
                set[3].subview(0, &q_shape, &strides(&q_shape))?,
                lse.subview(0, &l_shape, &strides(&l_shape))?,
            ];
            host::launch(rt, args, d, sh.causal, scale, forced)?;
            Ok(())
        };
        let (ms, runs) = time(rt, |i| launch(&sets[i], &lse_sets[i]))?;
        // Check.
        rt.poison(&mut sets[0][3])?;
        launch(&sets[0], &lse_sets[0])?;
        rt.synchronize()?;
        let o = rt.download(&sets[0][3])?;
        let lse = rt.download(&lse_sets[0])?;
        let used = b * s * hq * d;
        if let Some(i) = o[..used].iter().position(|x| !x.to_f64().is_finite()) {
            return Err(BenchError::Wrong(format!(
                "{}: element {i} not written (or not finite)",
                sh.label()
            )));
        }
        let mut max_err = 0.0f64;
        // Batch 0's keys and values as the kernel reads them (through the page table when
        // paged), for the reference.
        let kv0 = batched
            .as_ref()
            .and_then(|p| p.batch0_kv(&host0[1], &host0[2]));
        let (k0, v0) = kv0
            .as_ref()
            .map_or((&host0[1][..], &host0[2][..]), |(k, v)| (&k[..], &v[..]));
        let batched_lse = matches!(form, Form::Varlen | Form::Paged(_));
        for h in 0..2.min(hq) {
            for r in 0..CHECK_ROWS {
                let i = (r * 7919 + h * 104729) % s;
                let (want, want_lse) = attention_row(
                    &host0[0],
                    k0,
                    v0,
                    sh.dims(),
                    sh.causal,
                    f64::from(scale),
                    (0, h, i),
                );
                let got = &o[i * hq * d + h * d..][..d];
                for (g, w) in got.iter().zip(&want) {
                    max_err = max_err.max((g.to_f64() - w).abs());
                }
                // Dense: [B·HQ, S, 1]; varlen and paged: [HQ, B·S, 1] (batch 0's tokens first).
                let got_lse = f64::from(lse[h * if batched_lse { b * s } else { s } + i]);
                let lse_err = if want_lse == f64::NEG_INFINITY && got_lse == want_lse {
                    0.0
                } else {
                    (got_lse - want_lse).abs() / 8.0
                };
                // NaN (an LSE not written) fails the check as infinity would.
                max_err = max_err.max(if lse_err.is_nan() {
                    f64::INFINITY
                } else {
                    lse_err
                });
            }
        }
        if max_err > TOL {
            return Err(BenchError::Wrong(format!(
                "{}: max |o − ref| = {max_err:.3e} > {TOL}",
                sh.label()
            )));
        }
        // `attention_compare.py` reads one length: shapes whose key length differs are not dumped.
        if let Some(dir) =
            dump.filter(|_| tile.is_none() && form == Form::Dense && sh.seq >= DUMP_SEQ && sk == s)
        {
            dumped.push(dump_point(dir, sh, scale, &host0, &o)?);
        }
        let tflops = sh.flops() / ms / 1e9;
        let cudnn = peers.and_then(|p| p.tflops(sh, "cudnn"));
        // With --varlen (--paged), FA4's varlen (paged) entry where the peers' script measured
        // it (`--varlen`, `--paged PAGE`); the dense FA4 otherwise.
        let fa4_form = match form {
            Form::Dense | Form::Decode(_) => None,
            Form::Varlen => Some("fa4-cute-sm90-varlen".to_string()),
            Form::Paged(page) => Some(format!("fa4-cute-sm90-paged{page}")),
        };
        let fa4_batched = fa4_form.and_then(|peer| peers.and_then(|p| p.tflops(sh, &peer)));
        let fa4 = fa4_batched.or_else(|| peers.and_then(|p| p.tflops(sh, "fa4-cute-sm90")));
        let fa2 = peers.and_then(|p| p.tflops(sh, "fa2"));
        let best = cudnn
            .into_iter()
            .chain(fa4)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        let ratio = best.map(|b| tflops / b);
        let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.1}"));
        let label = match (tile, form) {
            (Some(t), _) => format!("{} [{t}]", sh.label()),
            (None, Form::Varlen) => format!("{} [varlen]", sh.label()),
            (None, Form::Paged(page)) => format!("{} [paged {page}]", sh.label()),
            (None, Form::Decode(_)) => match batched.as_ref().and_then(|p| p.splits()) {
                Some((n, Some(g))) => format!("{} [decode {n} g{g}]", sh.label()),
                Some((n, None)) => format!("{} [decode {n}]", sh.label()),
                None => format!("{} [decode]", sh.label()),
            },
            (None, Form::Dense) => sh.label(),
        };
        println!(
            "{:<44} {:>9.4} {:>8.1} {:>8} {:>8} {:>8} {:>7} {:>9.2e}",
            label,
            ms,
            tflops,
            f(cudnn),
            f(fa4),
            f(fa2),
            ratio.map_or("-".into(), |r| format!("{r:.3}")),
            max_err
        );
        points.push(Point {
            shape: *sh,
            varlen: form == Form::Varlen,
            paged: match form {
                Form::Paged(page) => Some(page),
                _ => None,
            },
            decode_splits: batched.as_ref().and_then(|p| p.splits()).map(|s| s.0),
            decode_pack: batched.as_ref().and_then(|p| p.splits()).and_then(|s| s.1),
            tile: tile.map(str::to_string),
            median_ms: ms,
            tflops,
            runs,
            max_err,
            cudnn,
            fa4,
            fa2,
            ratio,
        });
    }
    let ratios: Vec<f64> = points.iter().filter_map(|p| p.ratio).collect();
    if !ratios.is_empty() {
        let g = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        // The targets judge points of seq ≥ 2k on their own; a run without one (decode:
        // a few queries each) says so rather than printing an empty minimum.
        let min2k = points
            .iter()
            .filter(|p| p.shape.seq >= 2048)
            .filter_map(|p| p.ratio)
            .min_by(f64::total_cmp)
            .map_or_else(|| "(no point)".to_string(), |r| format!("{r:.3}"));
        println!(
            "geomean ratio {g:.3} over {} points; lowest at seq ≥ 2k {min2k}",
            ratios.len()
        );
    }
    if let Some(dir) = dump {
        let doc = serde_json::json!({
            "format": "tirx-attention-dump/1",
            "device": rt.name(),
            "points": dumped,
        });
        write_file(
            &dir.join("dump.json"),
            serde_json::to_string_pretty(&doc)
                .expect("serialises")
                .as_bytes(),
        )?;
        println!("dumped {} points into {}", dumped.len(), dir.display());
    }
    if let Some(path) = json {
        let plot = path.with_extension("svg");
        write_file(&plot, plot_svg(&points)?.as_bytes())?;
        println!("wrote {}", plot.display());
        let doc = serde_json::json!({
            "format": "tirx-bench-attention/1",
            "date": super::report::now(),
            "device": rt.name(),
            "method": "module docs of kernels/src/bench/attention.rs",
            "points": points,
        });
        std::fs::write(
            path,
            serde_json::to_string_pretty(&doc).expect("serialises"),
        )
        .map_err(|source| BenchError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        println!("wrote {}", path.display());
    }
    Ok(points)
}

/// Points with at least this sequence length are dumped by `--dump` (the large shapes).
const DUMP_SEQ: usize = 8192;

/// Elements of random data a buffer holds before it repeats (64 Mi: 128 MiB of bf16), so a
/// 128k-token decode cache is not drawn value by value on the host.
const POOL: usize = 1 << 26;

/// A device buffer of `numel` bf16 values uniform in [-1, 1): `pool` drawn from `rng`, repeated
/// to fill it. Returns the buffer and the pool (its first `pool` elements, what the check reads).
fn random_buffer(
    rt: &Runtime,
    rng: &mut Rng,
    numel: usize,
    pool: usize,
) -> Result<(Tensor<bf16>, Vec<bf16>), BenchError> {
    let host: Vec<bf16> = rng.values(pool.min(numel));
    if host.len() == numel {
        return Ok((rt.upload(&host, &[numel])?, host));
    }
    let mut dev = rt.zeros::<bf16>(&[numel])?;
    let bits: Vec<u16> = host.iter().map(|x| x.to_bits()).collect();
    let mut at = 0;
    while at < numel {
        let n = bits.len().min(numel - at);
        let mut dst = dev.buffer_mut().slice_mut(at..at + n);
        rt.stream()
            .memcpy_htod(&bits[..n], &mut dst)
            .map_err(tirx::RuntimeError::from)?;
        at += n;
    }
    Ok((dev, host))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), BenchError> {
    std::fs::write(path, bytes).map_err(|source| BenchError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes batch 0 of a checked point (Q, K, V as uploaded, O as the kernel wrote it, each
/// `[S, H, D]` little-endian bf16) into `dir`, for `kernels/bench/attention_compare.py` to
/// run cuDNN on the same inputs; returns the manifest entry.
fn dump_point(
    dir: &Path,
    sh: &Shape,
    scale: f32,
    inputs: &[Vec<bf16>],
    o: &[bf16],
) -> Result<serde_json::Value, BenchError> {
    std::fs::create_dir_all(dir).map_err(|source| BenchError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let name = format!(
        "hd{}_s{}_h{}_{}_{}",
        sh.hd,
        sh.seq,
        sh.heads,
        sh.kv_heads,
        if sh.causal { "causal" } else { "full" }
    );
    let (nq, nk) = (sh.seq * sh.heads * sh.hd, sh.seq * sh.kv_heads * sh.hd);
    let mut files = serde_json::Map::new();
    for (what, data) in [
        ("q", &inputs[0][..nq]),
        ("k", &inputs[1][..nk]),
        ("v", &inputs[2][..nk]),
        ("o", &o[..nq]),
    ] {
        let file = format!("{name}.{what}.bin");
        let bytes: Vec<u8> = data
            .iter()
            .flat_map(|x| x.to_bits().to_le_bytes())
            .collect();
        write_file(&dir.join(&file), &bytes)?;
        files.insert(what.into(), file.into());
    }
    Ok(serde_json::json!({
        "hd": sh.hd, "seq": sh.seq, "heads": sh.heads, "kv_heads": sh.kv_heads,
        "causal": sh.causal, "scale": scale, "files": files,
    }))
}

/// The sweep's plot: per point, our TFLOP/s beside the faster of cuDNN and FA4-cute, the
/// ratio above the pair.
fn plot_svg(points: &[Point]) -> Result<String, BenchError> {
    let pairs: Vec<super::plot::BarPair> = points
        .iter()
        .map(|p| {
            let best = [p.cudnn, p.fa4].into_iter().flatten().reduce(f64::max);
            let sh = &p.shape;
            super::plot::BarPair {
                label: format!(
                    "hd{} s{}{} {}",
                    sh.hd,
                    if sh.sk() == sh.seq {
                        sh.seq.to_string()
                    } else {
                        format!("{}/{}", sh.seq, sh.sk())
                    },
                    if sh.heads != sh.kv_heads {
                        format!(" {}/{}", sh.heads, sh.kv_heads)
                    } else {
                        String::new()
                    },
                    if sh.causal { "causal" } else { "full" }
                ),
                ours: Some(p.tflops),
                cublas: best,
                note: p.ratio.map_or("no peer".into(), |r| format!("{r:.2}x")),
            }
        })
        .collect();
    super::plot::svg_with(
        "tirx attention (sm_90a) vs the faster peer",
        "TFLOP/s, 4·b·h·s²·d (halved for causal; FA3's count when SQ ≠ SK); bf16",
        ["tirx attention_sm90", "max(cuDNN, FA4-cute)"],
        &pairs,
    )
    .map_err(|e| BenchError::Wrong(format!("plot: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(hd: usize, causal: bool, tflops: f64, cudnn: Option<f64>, fa4: Option<f64>) -> Point {
        let best = [cudnn, fa4].into_iter().flatten().reduce(f64::max);
        Point {
            shape: Shape {
                hd,
                seq: 8192,
                seq_k: None,
                batch: 2,
                heads: 2048 / hd,
                kv_heads: 2048 / hd,
                causal,
            },
            varlen: false,
            paged: None,
            decode_splits: None,
            decode_pack: None,
            tile: None,
            median_ms: 1.0,
            tflops,
            runs: 30,
            max_err: 1e-4,
            cudnn,
            fa4,
            fa2: None,
            ratio: best.map(|b| tflops / b),
        }
    }

    #[test]
    fn the_plot_compares_each_point_with_the_faster_peer() {
        let pts = [
            point(128, false, 600.0, Some(605.0), Some(660.0)),
            point(64, true, 400.0, None, None),
        ];
        let svg = plot_svg(&pts).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in [
            "hd128 s8192 full",
            "hd64 s8192 causal",
            "0.91x",
            "no peer",
            "max(cuDNN, FA4-cute)",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn a_dumped_point_holds_batch_0_of_each_tensor_as_bf16() {
        let dir = std::env::temp_dir().join(format!("tirx-dump-test-{}", std::process::id()));
        let sh = Shape {
            hd: 64,
            seq: 4,
            seq_k: None,
            batch: 2,
            heads: 2,
            kv_heads: 1,
            causal: true,
        };
        let v = |n: usize, base: f32| -> Vec<bf16> {
            (0..n).map(|i| bf16::from_f32(base + i as f32)).collect()
        };
        // Batch 0 is the first S·H·D (Q, O) or S·HK·D (K, V) elements of each buffer.
        let inputs = [v(2 * 512, 1.0), v(2 * 256, 2.0), v(2 * 256, 3.0)];
        let o = v(2 * 512, 4.0);
        let entry = dump_point(&dir, &sh, 0.125, &inputs, &o).unwrap();
        assert_eq!(entry["files"]["k"], "hd64_s4_h2_1_causal.k.bin");
        let k = std::fs::read(dir.join("hd64_s4_h2_1_causal.k.bin")).unwrap();
        assert_eq!(k.len(), 256 * 2);
        assert_eq!(k[2..4], bf16::from_f32(3.0).to_bits().to_le_bytes());
        let o_file = std::fs::read(dir.join("hd64_s4_h2_1_causal.o.bin")).unwrap();
        assert_eq!(o_file.len(), 512 * 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_shape_is_parsed_from_its_seven_fields() {
        let sh = Shape::parse("2,32,8,512,4096,128,causal").unwrap();
        assert_eq!(
            sh,
            Shape {
                hd: 128,
                seq: 512,
                seq_k: Some(4096),
                batch: 2,
                heads: 32,
                kv_heads: 8,
                causal: true,
            }
        );
        assert_eq!(sh.label(), "hd128 s512/4096 b2 h32/8 causal");
        let same = Shape::parse("4, 16, 16, 2048, 2048, 64").unwrap();
        assert_eq!((same.seq_k, same.causal, same.sk()), (None, false, 2048));
        assert_eq!(same.label(), "hd64 s2048 b4 h16/16 full");
        for (bad, why) in [
            ("2,32,8,512,4096", "5 fields"),
            ("2,32,8,512,4096,128,top", "`top` is neither"),
            ("2,32,0,512,4096,128", "HKV `0` is not a positive integer"),
            ("2,32,6,512,4096,128", "6 K/V heads do not divide 32"),
            ("2,x,8,512,4096,128", "HQ `x`"),
        ] {
            let e = Shape::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.contains("B,HQ,HKV,SQ,SK,D[,causal]"), "{e}");
        }
    }

    /// FA3's count: the sweep's 4·b·h·s²·d (halved for causal) when the lengths agree; with
    /// more keys than queries each causal query sees the cached prefix and half the rest.
    #[test]
    fn flops_follow_fa3s_count() {
        let mut sh = Shape::parse("1,1,1,1024,1024,128,causal").unwrap();
        assert_eq!(sh.flops(), 4.0 * 1024.0 * 1024.0 * 128.0 / 2.0);
        sh.causal = false;
        assert_eq!(sh.flops(), 4.0 * 1024.0 * 1024.0 * 128.0);
        let prefix = Shape::parse("1,2,1,256,1024,64,causal").unwrap();
        assert_eq!(
            prefix.flops(),
            4.0 * 2.0 * 256.0 * (768.0 + 1024.0) / 2.0 * 64.0
        );
        let full = Shape::parse("1,2,1,256,1024,64").unwrap();
        assert_eq!(full.flops(), 4.0 * 2.0 * 256.0 * 1024.0 * 64.0);
    }

    /// A peers file's result names `seq_k` (the script always writes it); the sweep's shape
    /// leaves it out: the two are one shape.
    #[test]
    fn a_peer_result_with_seq_k_matches_a_shape_without() {
        let sh = sweep(true)[0];
        assert_eq!(sh.seq_k, None);
        let mut named = serde_json::to_value(sh).unwrap();
        named["seq_k"] = sh.seq.into();
        named["peer"] = "cudnn".into();
        named["median_ms"] = 2.0.into();
        named["ok"] = true.into();
        let peers = PeersFile {
            format: "tirx-attention-peers/1".into(),
            date: String::new(),
            device: String::new(),
            results: vec![serde_json::from_value(named).unwrap()],
        };
        assert_eq!(peers.tflops(&sh, "cudnn"), Some(sh.flops() / 2.0 / 1e9));
        let other = Shape {
            seq_k: Some(2 * sh.seq),
            ..sh
        };
        assert_eq!(peers.tflops(&other, "cudnn"), None);
    }
}
