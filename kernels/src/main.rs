//! The `tirx` command-line tool: list, print, explain, check and run the shipped kernels.
//! With no arguments it takes the tour: list, check, and run what this machine can run.

mod cli;

use clap::{Parser, Subcommand};
use cli::gemm::{
    bench_gemm, bench_gemm_epilogue, gemm_types, parse_layout, parse_shape, tune_gemm,
};
use cli::list::list;
use cli::rows::bench_rows;
use std::process::ExitCode;
use tirx::Kernel;
use tirx::problem::Problem as Solves;
use tirx::{KernelArtifact, Runtime, RuntimeError, Target};
use tirx_kernels::bench::Problem;
use tirx_kernels::bench::epilogue_ref::{Act, parse_epilogue};
use tirx_kernels::check::{check_artifact, key_sass};
use tirx_kernels::registry;

#[derive(Parser)]
#[command(
    name = "tirx",
    about = "The tirx tile-kernel language: list, inspect, check and run the shipped kernels"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// One compiled kernel per line: name, target, threads, cluster, shared memory, TMEM columns,
    /// config, problem; `--json`: every artifact's metadata as JSON.
    List {
        /// Print JSON: per artifact its kernel, config, target, problem, config entries,
        /// tensors, threads, cluster, grid and resources.
        #[arg(long)]
        json: bool,
    },
    /// Print a kernel's PTX.
    Ptx(Which),
    /// Print the IR after every pass, then the PTX.
    Explain(Which),
    /// Assemble every kernel with ptxas and inspect its SASS; non-zero exit on any failure.
    Check,
    /// Time the compiler pass by pass over every shipped artifact (IR parse, each pass of the
    /// pipeline, PTX writing): what the protocol checks cost beside the lowering.
    TimePasses {
        /// Rounds to run; the fastest is reported.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Time kernels on the GPU (median of many runs, inputs rotated past L2): `copy` (tma_copy
    /// against a plain device copy), `gemm` (TFLOP/s), `rows` (softmax, RMSNorm, LayerNorm in
    /// GB/s, against the copy roof and the peers) or `attention` (TFLOP/s against the peers).
    Bench {
        /// What to measure.
        #[arg(value_enum)]
        what: BenchWhat,
        /// Shapes `M,N` (copy), `M,N,K` (gemm) or `ROWS,COLS` (rows); repeatable. Default: a
        /// fixed sweep.
        #[arg(long = "shape")]
        shapes: Vec<String>,
        /// GEMM: kernels to measure (repeatable; every config of each competes per shape).
        /// Default: the production kernel.
        #[arg(long = "kernel")]
        kernels: Vec<String>,
        /// GEMM: every level of the ladder on one shape (default 8192³), each against cuBLASLt.
        #[arg(long)]
        ladder: bool,
        /// GEMM, rows: the JSON file (the SVG plot goes next to it).
        #[arg(long)]
        json: Option<std::path::PathBuf>,
        /// Rows: the ops to measure (softmax, rmsnorm, layernorm; repeatable). Default: all.
        #[arg(long = "op")]
        ops: Vec<String>,
        /// Rows, attention: the peers' numbers, from `kernels/bench/rows_peers.py` or
        /// `kernels/bench/attention_peers.py` on the same GPU.
        #[arg(long)]
        peers: Option<std::path::PathBuf>,
        /// Attention: sequence 2k and 8k only (the full sweep is 512…16k).
        #[arg(long)]
        quick: bool,
        /// Attention: write batch 0 of each large point (seq ≥ 8k; Q, K, V and our O) into this
        /// folder, for `kernels/bench/attention_compare.py` to check against cuDNN's output.
        #[arg(long)]
        dump: Option<std::path::PathBuf>,
        /// GEMM: how B is given — `tn` (N×K, D = A·Bᵀ) or `nn` (K×N, D = A·B). Only kernels
        /// taking that layout are measured, and cuBLASLt is run in the same layout.
        #[arg(long, default_value = "tn")]
        layout: String,
        /// GEMM: element type of A and B: bf16 or f16 (accumulation is f32).
        #[arg(long = "in", default_value = "bf16")]
        input: String,
        /// GEMM: element type of D: bf16, f16 or f32. Only configs of these types compete;
        /// cuBLASLt runs in the same types.
        #[arg(long = "out", default_value = "bf16")]
        output: String,
        /// GEMM: α of D = α·A·op(B) + β·C. With α ≠ 1 or β ≠ 0 the scaled kernels compete
        /// (C random, its own buffer) and cuBLASLt computes the same.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        alpha: f32,
        /// GEMM: β of D = α·A·op(B) + β·C (see `--alpha`).
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        beta: f32,
        /// GEMM: every config the dispatcher accepts competes (instead of the host's choice
        /// alone); the table marks the host's choice and its time against the fastest.
        #[arg(long)]
        all: bool,
        /// GEMM: a fused epilogue, D = act(A·Bᵀ + bias) with a bias of length N per column — `bias`,
        /// `bias-relu`, `bias-gelu` (tanh form) or `bias-silu` — against cuBLASLt's own fused
        /// epilogue (for `bias-silu`, which cuBLASLt lacks, its bias epilogue). TN, bf16 → bf16.
        #[arg(long, value_parser = parse_epilogue, conflicts_with_all = EPILOGUE_CONFLICTS)]
        epilogue: Option<Act>,
        /// GEMM with `--in e4m3` (or `e5m2`): the FP8 GEMMs' scales, `tensor` (one f32 per
        /// tensor) or `rows` (one per row of A and per row of B, `torch._scaled_mm`'s row-wise
        /// form), against cuBLASLt's FP8 GEMM with the same scales. TN only.
        #[arg(long, default_value = "tensor")]
        scales: String,
    },
    /// Measure every accepted candidate of a problem on the GPU and remember the fastest in the
    /// tune cache that the host-side choice reads first (`gemm`).
    Tune {
        /// What to tune.
        #[arg(value_enum)]
        what: TuneWhat,
        /// Shapes `M,N,K`; repeatable. Default: the bench's sweep.
        #[arg(long = "shape")]
        shapes: Vec<String>,
        /// How B is given: `tn` or `nn`.
        #[arg(long, default_value = "tn")]
        layout: String,
        /// Element type of A and B.
        #[arg(long = "in", default_value = "bf16")]
        input: String,
        /// Element type of D.
        #[arg(long = "out", default_value = "bf16")]
        output: String,
        /// Tune the scaled epilogue (D = α·A·op(B) + β·C, measured with α = 1.5, β = −0.75).
        #[arg(long)]
        scaled: bool,
        /// The cache file to update (default `$TIRX_TUNE_CACHE`, else
        /// `~/.cache/tirx/tune.json`).
        #[arg(long)]
        cache: Option<std::path::PathBuf>,
        /// Where the measurements' JSON goes (the plot beside it).
        #[arg(long, default_value = "tune-gemm.json")]
        json: std::path::PathBuf,
    },
    /// Run a kernel in the CPU emulator (no GPU needed) on random inputs and verify it against
    /// the CPU reference; exit 0 only when it matches and no diagnostic fired.
    Sim(cli::sim::SimArgs),
    /// Run the emulator-validation cases (every sm_90a kernel family on small odd shapes,
    /// seeded inputs) on the GPU and write their outputs for `tirx sim-compare`: DIR/manifest.json
    /// and DIR/outputs.bin.
    SimDump {
        /// The folder to write.
        #[arg(long)]
        out: std::path::PathBuf,
        /// Take the outputs from the emulator instead of a GPU (to test the harness).
        #[arg(long)]
        emulator: bool,
    },
    /// Compare a `tirx sim-dump` of the GPU with the emulator on the same inputs (no GPU
    /// needed): copies bit-exact, row kernels within 1 bf16 ulp, GEMMs within the f32
    /// accumulation-order bound; exit nonzero on any failure.
    SimCompare(cli::sim_compare::CompareArgs),
    /// Run a kernel on the GPU and verify it against the CPU reference.
    Run {
        /// Kernel name.
        name: String,
        /// Config (default: every config).
        #[arg(long)]
        config: Option<String>,
        /// Rows.
        #[arg(long, default_value_t = 1000)]
        m: usize,
        /// Columns.
        #[arg(long, default_value_t = 1000)]
        n: usize,
        /// Reduction length (GEMM; a multiple of 8).
        #[arg(long, default_value_t = 1000)]
        k: usize,
    },
}

/// What `--epilogue` fixes (TN, bf16 → bf16, α = 1, β = 0, one fused kernel): the options
/// that would change it.
const EPILOGUE_CONFLICTS: [&str; 8] = [
    "kernels", "ladder", "layout", "input", "output", "alpha", "beta", "all",
];

#[derive(clap::Args)]
struct Which {
    /// Kernel name.
    name: String,
    /// Target: sm_90a or sm_100a.
    #[arg(long)]
    target: String,
    /// Config.
    #[arg(long, default_value = "default")]
    config: String,
}

fn artifact(w: &Which) -> Result<&'static KernelArtifact, String> {
    let k = registry::find(&w.name)
        .ok_or_else(|| format!("no kernel `{}`; `tirx list` shows them", w.name))?;
    let k: &'static Kernel = k;
    let t = Target::from_name(&w.target)?;
    k.artifacts
        .iter()
        .find(|a| a.target == t && a.config == w.config)
        .ok_or_else(|| {
            format!(
                "`{}` has no config `{}` for {}; `tirx list` shows what exists",
                w.name, w.config, w.target
            )
        })
}

fn explain(a: &KernelArtifact) -> Result<(), String> {
    let module = tirx_ir::parse::parse_module(a.ir)
        .map_err(|e| format!("the embedded IR does not parse: {e}"))?;
    let kernel = module
        .kernels
        .into_iter()
        .next()
        .ok_or("the embedded IR has no kernel")?;
    let (k, snaps) = tirx_ir::passes::run_pipeline(kernel, true).map_err(|e| format!("{e:?}"))?;
    for s in snaps {
        println!("// ===== after {} =====\n{}", s.pass, s.text);
    }
    println!(
        "// ===== PTX =====\n{}",
        tirx_ptx::write_string(&k).map_err(|e| e.to_string())?
    );
    Ok(())
}

fn check() -> bool {
    let mut ok = true;
    println!(
        "{:<12} {:<8} {:<8} {:>5} {:>6}  sass",
        "kernel", "target", "config", "regs", "spills"
    );
    for k in registry::all() {
        for a in k.artifacts {
            match check_artifact(k.name, a) {
                Ok(c) => {
                    let status = if c.problems.is_empty() {
                        "ok".to_string()
                    } else {
                        format!("FAIL: {}", c.problems.join("; "))
                    };
                    println!(
                        "{:<12} {:<8} {:<8} {:>5} {:>6}  {}  {status}",
                        c.kernel,
                        c.target,
                        c.config,
                        c.registers,
                        c.spills,
                        key_sass(&c)
                    );
                    ok &= c.problems.is_empty();
                }
                Err(e) => {
                    println!(
                        "{:<12} {:<8} {:<8} FAIL: {e}",
                        k.name,
                        a.target.name(),
                        a.config
                    );
                    ok = false;
                }
            }
        }
    }
    ok
}

fn run(
    rt: &Runtime,
    k: &'static Kernel,
    config: Option<&str>,
    shape: (usize, usize, usize),
) -> bool {
    let target = match rt.target() {
        Ok(t) => t,
        Err(e) => {
            println!("{e}");
            return false;
        }
    };
    let mut ok = true;
    let mut ran = false;
    for a in k
        .artifacts
        .iter()
        .filter(|a| a.target == target && config.is_none_or(|c| c == a.config))
    {
        ran = true;
        match registry::check(rt, k, a.config, shape, 0x5eed) {
            Ok(r) => {
                let what = if a.problem == Some(Solves::Copy) {
                    "mismatches"
                } else {
                    "rel. error"
                };
                println!(
                    "{} {} {}: {}x{}x{} {what} {:.3e} {}",
                    k.name,
                    a.config,
                    target.name(),
                    r.shape.0,
                    r.shape.1,
                    r.shape.2,
                    r.error,
                    if r.ok { "ok" } else { "FAIL" }
                );
                if !r.ok && !r.blocks.is_empty() {
                    println!("  wrong 64x64 blocks of D (X):\n{}", r.blocks);
                }
                ok &= r.ok;
            }
            Err(e) => {
                println!("{} {} {}: error: {e}", k.name, a.config, target.name());
                ok = false;
            }
        }
    }
    if !ran {
        println!(
            "{}: nothing compiled for {} here (config {:?})",
            k.name,
            target.name(),
            config.unwrap_or("any")
        );
    }
    ok
}

/// What `tirx bench` measures: a typed value, so a misspelt one is refused when the command
/// line is parsed (with the list of those that exist), before any GPU is looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BenchWhat {
    /// `tma_copy` against a plain device copy (TB/s).
    Copy,
    /// The GEMMs against cuBLASLt (TFLOP/s).
    Gemm,
    /// The row kernels against the copy roof and the peers (GB/s).
    Rows,
    /// Attention against the peers (TFLOP/s).
    Attention,
}

/// What `tirx tune` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum TuneWhat {
    /// Every accepted GEMM candidate per shape.
    Gemm,
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
    let launch: registry::CopyLaunch = tirx_kernels::copy::tma_copy::tma_copy::launch;
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

fn gpu() -> Result<Runtime, RuntimeError> {
    Runtime::new(0)
}

fn tour() -> ExitCode {
    println!("== tirx list");
    list(false);
    println!("\n== tirx check");
    let checked = check();
    println!("\n== tirx run");
    let ran = match gpu() {
        Ok(rt) => {
            println!(
                "GPU: {} (compute capability {:?})",
                rt.name(),
                rt.compute_capability()
            );
            registry::all()
                .iter()
                .all(|k| run(&rt, k, None, (1000, 1000, 1000)))
        }
        Err(e) => {
            println!(
                "no GPU here ({e}); kernels were compiled and checked, not run. Run `tirx run NAME` on a machine with an H100/H200."
            );
            true
        }
    };
    if checked && ran {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<bool, String> = match cli.cmd {
        None => return tour(),
        Some(Cmd::List { json }) => {
            list(json);
            Ok(true)
        }
        Some(Cmd::Ptx(w)) => artifact(&w).map(|a| {
            print!("{}", a.ptx);
            true
        }),
        Some(Cmd::Explain(w)) => artifact(&w).and_then(explain).map(|_| true),
        Some(Cmd::Check) => Ok(check()),
        Some(Cmd::TimePasses { rounds }) => cli::time_passes::time_passes(rounds),
        Some(Cmd::Sim(a)) => cli::sim::sim(&a),
        Some(Cmd::SimCompare(a)) => cli::sim_compare::compare(&a),
        Some(Cmd::SimDump { out, emulator }) => {
            use cli::sim_dump::{Backend, dump};
            if emulator {
                dump(&Backend::Emulator, &out)
            } else {
                match gpu() {
                    Ok(rt) => dump(&Backend::Gpu(&rt), &out),
                    Err(e) => {
                        eprintln!("tirx sim-dump needs a GPU (or --emulator): {e}");
                        return ExitCode::from(2);
                    }
                }
            }
        }
        Some(Cmd::Bench {
            what,
            shapes,
            input,
            output,
            scales,
            ..
        }) if what == BenchWhat::Gemm && cli::gemm::is_fp8(&input) => match gpu() {
            Ok(rt) => cli::gemm::bench_gemm_fp8(&rt, &shapes, (&input, &output), &scales),
            Err(e) => {
                eprintln!("tirx bench needs a GPU: {e}");
                return ExitCode::from(2);
            }
        },
        Some(Cmd::Bench {
            what,
            shapes,
            kernels,
            ladder,
            json,
            layout,
            input,
            output,
            alpha,
            beta,
            all,
            ops,
            peers,
            quick,
            dump,
            epilogue,
            scales: _,
        }) => match (gpu(), gemm_types(&input, &output), parse_layout(&layout)) {
            (_, Err(e), _) | (_, _, Err(e)) => Err(e),
            (Ok(rt), Ok(types), Ok(layout)) if what == BenchWhat::Gemm => match epilogue {
                Some(act) => bench_gemm_epilogue(&rt, &shapes, act, json.as_deref()),
                None => bench_gemm(
                    &rt,
                    &shapes,
                    &kernels,
                    ladder,
                    all,
                    json.as_deref(),
                    Problem {
                        layout,
                        scale: (alpha != 1.0 || beta != 0.0).then_some((alpha, beta)),
                    },
                    types,
                ),
            },
            (Ok(rt), Ok(_), Ok(_)) if what == BenchWhat::Attention => {
                cli::attention::bench_attention(
                    &rt,
                    quick,
                    &kernels,
                    peers.as_deref(),
                    json.as_deref(),
                    dump.as_deref(),
                )
            }
            (Ok(rt), Ok(_), Ok(_)) if what == BenchWhat::Rows => bench_rows(
                &rt,
                &shapes,
                &ops,
                &kernels,
                peers.as_deref(),
                json.as_deref(),
            ),
            (Ok(rt), Ok(_), Ok(_)) => bench_copy(&rt, &shapes),
            (Err(e), _, _) => {
                eprintln!("tirx bench needs a GPU: {e}");
                return ExitCode::from(2);
            }
        },
        Some(Cmd::Tune {
            what,
            shapes,
            layout,
            input,
            output,
            scaled,
            cache,
            json,
        }) => match (gpu(), gemm_types(&input, &output), parse_layout(&layout)) {
            (_, Err(e), _) | (_, _, Err(e)) => Err(e),
            (Ok(rt), Ok(types), Ok(layout)) => {
                let TuneWhat::Gemm = what;
                let problem = Problem {
                    layout,
                    scale: scaled.then_some((1.5, -0.75)),
                };
                tune_gemm(&rt, &shapes, problem, types, cache.as_deref(), &json)
            }
            (Err(e), _, _) => {
                eprintln!("tirx tune needs a GPU: {e}");
                return ExitCode::from(2);
            }
        },
        Some(Cmd::Run {
            name,
            config,
            m,
            n,
            k,
        }) => {
            let Some(kernel) = registry::find(&name) else {
                eprintln!("no kernel `{name}`; `tirx list` shows them");
                return ExitCode::FAILURE;
            };
            match gpu() {
                Ok(rt) => Ok(run(&rt, kernel, config.as_deref(), (m, n, k))),
                Err(e) => {
                    eprintln!("tirx run needs a GPU: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_args(extra: &[&str]) -> Result<Cli, clap::Error> {
        let args = ["tirx", "bench", "gemm"].iter().chain(extra);
        Cli::try_parse_from(args)
    }

    fn epilogue_of(cli: Cli) -> Option<Act> {
        match cli.cmd {
            Some(Cmd::Bench { epilogue, .. }) => epilogue,
            _ => panic!("not a bench command"),
        }
    }

    #[test]
    fn epilogue_takes_the_four_names() {
        for act in Act::ALL {
            let cli = bench_args(&["--epilogue", act.epilogue_name()]).unwrap();
            assert_eq!(epilogue_of(cli), Some(act));
        }
        assert_eq!(epilogue_of(bench_args(&[]).unwrap()), None);
        let cli = bench_args(&["--epilogue", "bias-gelu", "--shape", "8192,4096,4096"]).unwrap();
        assert_eq!(epilogue_of(cli), Some(Act::Gelu));
    }

    #[test]
    fn epilogue_refuses_other_names_and_conflicting_options() {
        let err = bench_args(&["--epilogue", "gelu"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("unknown epilogue `gelu`"), "{err}");
        for extra in [
            &["--layout", "nn"][..],
            &["--in", "f16"],
            &["--out", "f32"],
            &["--alpha", "2"],
            &["--beta", "1"],
            &["--kernel", "gemm_sm90_ws"],
            &["--ladder"],
            &["--all"],
        ] {
            let args: Vec<&str> = ["--epilogue", "bias"]
                .iter()
                .chain(extra)
                .copied()
                .collect();
            let err = bench_args(&args).err();
            assert!(
                err.as_ref()
                    .is_some_and(|e| e.kind() == clap::error::ErrorKind::ArgumentConflict),
                "{extra:?}: {err:?}"
            );
        }
    }

    /// `tirx bench` and `tirx tune` take a typed `what`: a misspelt one is refused when the
    /// command line is parsed, naming the values that exist, with no GPU looked for.
    #[test]
    fn bench_and_tune_refuse_an_unknown_what_at_parse_time() {
        let e = Cli::try_parse_from(["tirx", "bench", "gem"])
            .err()
            .expect("refused")
            .to_string();
        for v in ["copy", "gemm", "rows", "attention"] {
            assert!(e.contains(v), "{e}");
        }
        assert!(Cli::try_parse_from(["tirx", "tune", "rows"]).is_err());
        for (w, want) in [
            ("copy", BenchWhat::Copy),
            ("attention", BenchWhat::Attention),
        ] {
            match Cli::try_parse_from(["tirx", "bench", w]).unwrap().cmd {
                Some(Cmd::Bench { what, .. }) => assert_eq!(what, want),
                _ => panic!("not a bench command"),
            }
        }
    }
}
