//! `tirx bench FAMILY …`: one subcommand per problem family, each with its own options (a
//! misspelt family or an option of another family is refused when the command line is
//! parsed, before any GPU is looked for).

use std::path::PathBuf;

use tirx::Runtime;
use tirx::abi::ElemType;
use tirx::problem::BLayout;
use tirx_kernels::bench::Problem;
use tirx_kernels::bench::attention::Shape as AttentionShape;
use tirx_kernels::bench::fp8::Fp8Problem;
use tirx_kernels::gemm::fp8_ref::{Fp8Accum, Fp8ScaleMode};
use tirx_kernels::gemm::reference::{Act, parse_epilogue};

use super::gemm::{
    bench_gemm, bench_gemm_epilogue, bench_gemm_fp8, gemm_types, parse_layout, parse_shape,
};

/// What `tirx bench` measures: a family and its options.
#[derive(clap::Subcommand)]
pub enum BenchCmd {
    /// `tma_copy` against a plain device copy (TB/s).
    Copy {
        /// Shapes `M,N`; repeatable. Default: 8192² and 16384².
        #[arg(long = "shape")]
        shapes: Vec<String>,
    },
    /// The GEMMs against cuBLASLt (TFLOP/s).
    Gemm(GemmBench),
    /// The FP8 quantisers (row-wise and 1×128 blocks, bf16 → E4M3) against the device copy
    /// (TB/s of bytes moved).
    Quant {
        /// Shapes `M,N`; repeatable. Default: 8192×7168, 16384×4096 and 4096×16384.
        #[arg(long = "shape")]
        shapes: Vec<String>,
    },
    /// The row kernels (softmax, RMSNorm, LayerNorm in GB/s) against the copy roof and the
    /// peers.
    Rows {
        /// Shapes `ROWS,COLS`; repeatable. Default: a fixed sweep.
        #[arg(long = "shape")]
        shapes: Vec<String>,
        /// The ops to measure (softmax, rmsnorm, layernorm; repeatable). Default: all.
        #[arg(long = "op")]
        ops: Vec<String>,
        /// Kernels to measure (repeatable; `NAME` every config, `NAME/CONFIG` one). Default:
        /// the host's choice.
        #[arg(long = "kernel")]
        kernels: Vec<String>,
        /// The peers' numbers, from `kernels/bench/rows_peers.py` on the same GPU.
        #[arg(long)]
        peers: Option<PathBuf>,
        /// The JSON file (the SVG plot goes next to it).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Attention against the peers (TFLOP/s).
    Attention {
        /// Sequence 2k and 8k only (the full sweep is 512…16k).
        #[arg(long, conflicts_with = "shapes")]
        quick: bool,
        /// Shapes `B,HQ,HKV,SQ,SK,D[,causal]` to measure instead of the sweep (repeatable):
        /// batch, query heads, K/V heads, query length, key length, head dim; `causal` is
        /// bottom-right aligned when SK ≠ SQ (FA2/FA3's convention).
        #[arg(long = "shape", value_parser = parse_attention_shape)]
        shapes: Vec<AttentionShape>,
        /// Measure each shape as a variable-length batch: its B sequences packed (`[B·SQ,
        /// HQ·D]`, offsets `cu_seqlens` = SQ·i and SK·i) through `attention_sm90_varlen`.
        #[arg(long, requires = "shapes", conflicts_with = "kernels")]
        varlen: bool,
        /// Measure each shape over a paged K/V cache of pages of PAGE tokens (16, 32, 64, 128 or 256):
        /// queries packed as with `--varlen`, K/V `[pages, PAGE, HK·D]` with each sequence's
        /// pages in a shuffled order, through `attention_sm90_paged`.
        #[arg(long, value_name = "PAGE", requires = "shapes", conflicts_with_all = ["kernels", "varlen"])]
        paged: Option<usize>,
        /// Measure each shape (SQ ≤ 16) through the decode path: `attention_sm90_decode` over
        /// the keys split into chunks, then `attention_decode_combine` — the host's split for
        /// the GPU's SMs, or SPLITS chunks when given (`--decode 4`).
        #[arg(
            long,
            value_name = "SPLITS",
            num_args = 0..=1,
            default_missing_value = "0",
            requires = "shapes",
            conflicts_with_all = ["kernels", "varlen", "paged"]
        )]
        decode: Option<usize>,
        /// With `--decode`: one CTA per query head (`attention_sm90_decode`), never the query
        /// heads of a K/V head packed into one tile (`attention_sm90_decode_gqa`).
        #[arg(long, requires = "decode")]
        unpacked: bool,
        /// Tiles to force (repeatable; a config name of an attention kernel). Default: the
        /// host's choice.
        #[arg(long = "kernel")]
        kernels: Vec<String>,
        /// The peers' numbers, from `kernels/bench/attention_peers.py` on the same GPU.
        #[arg(long)]
        peers: Option<PathBuf>,
        /// The JSON file (the SVG plot goes next to it).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write batch 0 of each large point (seq ≥ 8k; Q, K, V and our O) into this folder,
        /// for `kernels/bench/attention_compare.py` to check against cuDNN's output.
        #[arg(long)]
        dump: Option<PathBuf>,
    },
}

/// `tirx bench gemm`'s options.
#[derive(clap::Args)]
pub struct GemmBench {
    /// Shapes `M,N,K`; repeatable. Default: a fixed sweep.
    #[arg(long = "shape")]
    pub shapes: Vec<String>,
    /// Kernels to measure (repeatable; every config of each competes per shape). Default: the
    /// host's choice. With `--in e4m3`/`e5m2` (where every config competes by default), `NAME`
    /// or `NAME/CONFIG` narrows the FP8 configs measured.
    #[arg(long = "kernel")]
    pub kernels: Vec<String>,
    /// Every level of the ladder on one shape (default 8192³), each against cuBLASLt.
    #[arg(long)]
    pub ladder: bool,
    /// The JSON file (the SVG plot goes next to it).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// How B is given — `tn` (N×K, D = A·Bᵀ) or `nn` (K×N, D = A·B). Only kernels taking that
    /// layout are measured, and cuBLASLt is run in the same layout.
    #[arg(long, default_value = "tn", value_parser = parse_layout)]
    pub layout: BLayout,
    /// Element type of A and B: bf16 or f16 (accumulation is f32); e4m3 or e5m2 measures the
    /// FP8 GEMMs, D = s ⊙ A·Bᵀ with the scales of `--scales`, against cuBLASLt's FP8 GEMM (TN).
    #[arg(long = "in", default_value = "bf16")]
    pub input: String,
    /// Element type of D: bf16, f16 or f32. Only configs of these types compete; cuBLASLt runs
    /// in the same types.
    #[arg(long = "out", default_value = "bf16")]
    pub output: String,
    /// α of D = α·A·op(B) + β·C. With α ≠ 1 or β ≠ 0 the scaled kernels compete (C random, its
    /// own buffer) and cuBLASLt computes the same.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub alpha: f32,
    /// β of D = α·A·op(B) + β·C (see `--alpha`).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub beta: f32,
    /// Every config the dispatcher accepts competes (instead of the host's choice alone), and
    /// every config it holds back as not yet timed (`UNTIMED = 1`); the table marks the host's
    /// choice and its time against the fastest.
    #[arg(long)]
    pub all: bool,
    /// A fused epilogue, D = act(A·Bᵀ + bias) with a bias of length N per column — `bias`,
    /// `bias-relu`, `bias-gelu` (tanh form) or `bias-silu` — against cuBLASLt's own fused
    /// epilogue (for `bias-silu`, which cuBLASLt lacks, its bias epilogue). TN, bf16 → bf16.
    #[arg(long, value_parser = parse_epilogue, conflicts_with_all = EPILOGUE_CONFLICTS)]
    pub epilogue: Option<Act>,
    /// With `--in e4m3` or `e5m2`: the FP8 GEMMs' scales, `tensor` (one f32 per tensor,
    /// `Epilogue::ScaleTensor`; the default), `rows` (one per row of A and per row of B,
    /// `torch._scaled_mm`'s row-wise form, `Epilogue::ScaleRows`) or `blocks` (one per 1×128
    /// block of A and per 128×128 block of B, the DeepSeek-V3 recipe, `Epilogue::ScaleBlocks`;
    /// E4M3 only) or `blocks-mn` (the same with `sa` MN-major, [KB, 4·cdiv(M, 4)],
    /// `Epilogue::ScaleBlocksMn`); cuBLASLt applies the same.
    #[arg(long, value_enum, conflicts_with_all = FP8_CONFLICTS)]
    pub scales: Option<Scales>,
    /// With `--in e4m3` or `e5m2`: the FP8 accumulation, `fast` (the default: our configs
    /// that keep the tensor core's accumulator over all of K, cuBLASLt with `FAST_ACCUM = 1`,
    /// `torch._scaled_mm(use_fast_accum=True)`) or `promoted` (our `promoted*` configs, which
    /// add each 128 of K into f32 registers, against cuBLASLt with `FAST_ACCUM = 0`, torch's
    /// default). Block scales always promote, on both sides.
    #[arg(long, value_enum, conflicts_with_all = FP8_CONFLICTS)]
    pub accum: Option<Accum>,
}

/// The FP8 GEMMs' accumulation (`--accum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Accum {
    /// The tensor core's accumulator over all of K.
    Fast,
    /// Promoted into f32 every 128 of K.
    Promoted,
}

/// The FP8 GEMMs' scales (`--scales`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scales {
    /// One f32 per tensor.
    Tensor,
    /// One f32 per row of A and per row of B.
    Rows,
    /// One f32 per 1×128 block of A and per 128×128 block of B.
    Blocks,
    /// The same block scales with `sa` MN-major, [cdiv(K, 128), 4·cdiv(M, 4)].
    BlocksMn,
}

/// What `--epilogue` fixes (TN, bf16 → bf16, α = 1, β = 0, one fused kernel): the options
/// that would change it.
const EPILOGUE_CONFLICTS: [&str; 9] = [
    "kernels", "ladder", "layout", "input", "output", "alpha", "beta", "all", "scales",
];

/// What the FP8 bench fixes (TN, no α/β/C, every FP8 config of the problem against
/// cuBLASLt): the options that would change it.
const FP8_CONFLICTS: [&str; 5] = ["ladder", "layout", "alpha", "beta", "all"];

impl GemmBench {
    /// The FP8 GEMM problem these options ask for (`--in e4m3|e5m2`, `--scales`), `None` for
    /// a 16-bit GEMM; `Err` for `--scales` without FP8 inputs, or FP8 inputs with an option
    /// the FP8 bench does not take (which `--scales` refuses at parse time).
    pub fn fp8(&self) -> Result<Option<Fp8Problem>, String> {
        let Some(input) = ElemType::from_name(&self.input).filter(|e| e.is_fp8()) else {
            return match (self.scales, self.accum) {
                (Some(_), _) => {
                    Err("`--scales` is for the FP8 GEMMs (`--in e4m3` or `e5m2`)".into())
                }
                (_, Some(_)) => {
                    Err("`--accum` is for the FP8 GEMMs (`--in e4m3` or `e5m2`)".into())
                }
                (None, None) => Ok(None),
            };
        };
        // `--kernel` narrows the FP8 configs that compete (`Fp8Problem::select`).
        let defaults = !self.ladder
            && !self.all
            && self.layout == BLayout::Tn
            && self.alpha == 1.0
            && self.beta == 0.0;
        if !defaults {
            return Err(format!(
                "`--in {}` measures every FP8 GEMM (TN, scales by `--scales`) against cuBLASLt: \
                 `--ladder`, `--all` (every config competes already), `--layout nn`, \
                 `--alpha` and `--beta` are not for it",
                self.input
            ));
        }
        let output = ElemType::from_name(&self.output)
            .ok_or_else(|| format!("unknown element type `{}`", self.output))?;
        Ok(Some(Fp8Problem {
            scales: match self.scales {
                None | Some(Scales::Tensor) => Fp8ScaleMode::Tensor,
                Some(Scales::Rows) => Fp8ScaleMode::Rows,
                Some(Scales::Blocks) => Fp8ScaleMode::Blocks,
                Some(Scales::BlocksMn) => Fp8ScaleMode::BlocksMn,
            },
            input,
            output,
            accum: match self.accum {
                None | Some(Accum::Fast) => Fp8Accum::Fast,
                Some(Accum::Promoted) => Fp8Accum::Promoted,
            },
        }))
    }
}

/// Runs `cmd` on `rt`'s GPU; `Ok(true)` when every result was right.
pub fn bench(rt: &Runtime, cmd: &BenchCmd) -> Result<bool, String> {
    match cmd {
        BenchCmd::Copy { shapes } => bench_copy(rt, shapes),
        BenchCmd::Quant { shapes } => bench_quant(rt, shapes),
        BenchCmd::Gemm(g) => {
            if let Some(p) = g.fp8()? {
                return bench_gemm_fp8(rt, &g.shapes, &g.kernels, p);
            }
            let types = gemm_types(&g.input, &g.output)?;
            match g.epilogue {
                Some(act) => bench_gemm_epilogue(rt, &g.shapes, act, g.json.as_deref()),
                None => bench_gemm(
                    rt,
                    &g.shapes,
                    &g.kernels,
                    g.ladder,
                    g.all,
                    g.json.as_deref(),
                    Problem {
                        layout: g.layout,
                        scale: (g.alpha != 1.0 || g.beta != 0.0).then_some((g.alpha, g.beta)),
                    },
                    types,
                ),
            }
        }
        BenchCmd::Rows {
            shapes,
            ops,
            kernels,
            peers,
            json,
        } => super::rows::bench_rows(rt, shapes, ops, kernels, peers.as_deref(), json.as_deref()),
        BenchCmd::Attention {
            quick,
            shapes,
            varlen,
            paged,
            decode,
            unpacked,
            kernels,
            peers,
            json,
            dump,
        } => super::attention::bench_attention(
            rt,
            super::attention::Points {
                quick: *quick,
                shapes,
                varlen: *varlen,
                paged: *paged,
                decode: *decode,
                unpacked: *unpacked,
            },
            kernels,
            peers.as_deref(),
            json.as_deref(),
            dump.as_deref(),
        ),
    }
}

/// `tirx bench copy`.
fn bench_copy(rt: &Runtime, shapes: &[String]) -> Result<bool, String> {
    use tirx_kernels::bench;
    println!(
        "{} (compute capability {:?}); median of {} runs after {} warm-up, inputs rotated past L2",
        rt.name(),
        rt.compute_capability(),
        bench::RUNS,
        bench::WARMUP
    );
    let mut rows = Vec::new();
    let launch: tirx_kernels::copy::family::CopyLaunch =
        tirx_kernels::copy::tma_copy::tma_copy::launch;
    let shapes = if shapes.is_empty() {
        vec!["8192,8192".to_string(), "16384,16384".to_string()]
    } else {
        shapes.to_vec()
    };
    for s in &shapes {
        let v = parse_shape(s, 2)?;
        for config in ["default", "tall"] {
            rows.extend(bench::copy(rt, launch, config, v[0], v[1]).map_err(|e| e.to_string())?);
        }
    }
    println!("{:<44} {:>10} {:>8}", "what", "median ms", "TB/s");
    for r in &rows {
        println!("{:<44} {:>10.4} {:>8.1}", r.what, r.median_ms, r.rate);
    }
    Ok(true)
}

/// `tirx bench quant`: each quantiser's rate and its fraction of the device copy's.
fn bench_quant(rt: &Runtime, shapes: &[String]) -> Result<bool, String> {
    use tirx_kernels::bench;
    println!(
        "{} (compute capability {:?}); median of {} runs after {} warm-up, inputs rotated past L2",
        rt.name(),
        rt.compute_capability(),
        bench::RUNS,
        bench::WARMUP
    );
    let shapes = if shapes.is_empty() {
        ["8192,7168", "16384,4096", "4096,16384"]
            .map(String::from)
            .to_vec()
    } else {
        shapes.to_vec()
    };
    println!(
        "{:<48} {:>10} {:>8} {:>8}",
        "what", "median ms", "TB/s", "of copy"
    );
    for s in &shapes {
        let v = parse_shape(s, 2)?;
        let rows = bench::quant::quant(rt, v[0], v[1]).map_err(|e| e.to_string())?;
        let copy = rows.last().map_or(f64::NAN, |r| r.rate);
        for r in &rows {
            println!(
                "{:<48} {:>10.4} {:>8.2} {:>7.0}%",
                r.what,
                r.median_ms,
                r.rate,
                100.0 * r.rate / copy
            );
        }
    }
    Ok(true)
}

/// `--shape B,HQ,HKV,SQ,SK,D[,causal]` of `tirx bench attention`.
fn parse_attention_shape(text: &str) -> Result<AttentionShape, String> {
    AttentionShape::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn gemm(args: &[&str]) -> GemmBench {
        let cli = crate::Cli::try_parse_from(["tirx", "bench", "gemm"].iter().chain(args))
            .expect("parses");
        match cli.cmd {
            Some(crate::Cmd::Bench(BenchCmd::Gemm(g))) => g,
            _ => panic!("not a bench gemm command"),
        }
    }

    /// `--accum promoted` reaches the FP8 problem (fast by default), and is refused without
    /// FP8 inputs.
    #[test]
    fn the_fp8_accumulation_reaches_the_bench() {
        let fp8 = |args: &[&str]| gemm(args).fp8().expect("an FP8 bench").expect("FP8");
        assert_eq!(fp8(&["--in", "e4m3"]).accum, Fp8Accum::Fast);
        let p = fp8(&["--in", "e4m3", "--scales", "rows", "--accum", "promoted"]);
        assert_eq!(
            (p.accum, p.scales),
            (Fp8Accum::Promoted, Fp8ScaleMode::Rows)
        );
        let err = gemm(&["--accum", "promoted"]).fp8().unwrap_err();
        assert!(err.contains("`--accum` is for the FP8 GEMMs"), "{err}");
    }
}
