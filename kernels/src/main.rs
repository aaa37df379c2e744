//! The `tirx` command-line tool: list, print, explain, check and run the shipped kernels.
//! With no arguments it takes the tour: list, check, and run what this machine can run.

mod cli;

use clap::{Parser, Subcommand};
use cli::gemm::{gemm_types, parse_layout, tune_gemm};
use cli::list::list;
use std::process::ExitCode;
use tirx::Kernel;
use tirx::{KernelArtifact, Runtime, RuntimeError, Target};
use tirx_kernels::catalogue;
use tirx_kernels::check::{check_artifact, key_sass};

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
    /// Time kernels on the GPU (median of many runs, inputs rotated past L2), one subcommand
    /// per family: `copy` (tma_copy against a plain device copy), `gemm` (TFLOP/s), `rows`
    /// (softmax, RMSNorm, LayerNorm in GB/s, against the copy roof and the peers) or
    /// `attention` (TFLOP/s against the peers).
    #[command(subcommand)]
    Bench(cli::bench::BenchCmd),
    /// Measure every accepted candidate of a problem on the GPU and remember the fastest in the
    /// tune cache that the host-side choice reads first, one subcommand per family (`gemm`).
    #[command(subcommand)]
    Tune(TuneCmd),
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
        /// Rows (attention: the sequence length). Default: the problem family's shape.
        #[arg(long)]
        m: Option<usize>,
        /// Columns (attention: the heads). Default: the problem family's shape.
        #[arg(long)]
        n: Option<usize>,
        /// Reduction length (GEMM; a multiple of 8). Default: the problem family's shape.
        #[arg(long)]
        k: Option<usize>,
    },
}

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
    let k = catalogue::find(&w.name)
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
    for k in catalogue::all() {
        for a in k.artifacts {
            match check_artifact(k.name, a) {
                Ok(c) => {
                    let mut status = if c.problems.is_empty() {
                        "ok".to_string()
                    } else {
                        format!("FAIL: {}", c.problems.join("; "))
                    };
                    for note in &c.pipeline_losses {
                        status.push_str(&format!(" (note: {note})"));
                    }
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

/// `tirx run`: every artifact of `k` for `rt`'s target (or `config`'s) through its family's
/// check ([`tirx_kernels::family::Family::check`]) at `shape`, or the family's default shape
/// where `shape` leaves a dimension out.
fn run(rt: &Runtime, k: &'static Kernel, config: Option<&str>, shape: ShapeArgs) -> bool {
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
        let Some(family) = catalogue::family_of(a) else {
            println!(
                "{} {} {}: error: it declares no problem (`solves = …`), so no family knows its inputs",
                k.name,
                a.config,
                target.name()
            );
            ok = false;
            continue;
        };
        let shape = shape.over(family.default_shape(a));
        // An artifact the dispatcher would never give this problem (a row kernel asked for
        // rows longer than it holds) is skipped, as the host would skip it.
        let refused = family
            .request(a, shape)
            .ok()
            .and_then(|r| r.solves(a).err())
            .filter(tirx_kernels::dispatch::Reject::is_about_the_problem);
        if let Some(why) = refused {
            println!(
                "{} {} {}: skipped at {}x{}x{}: {why}",
                k.name,
                a.config,
                target.name(),
                shape.0,
                shape.1,
                shape.2
            );
            continue;
        }
        match family.check(rt, a, shape, 0x5eed) {
            Ok(r) => {
                println!(
                    "{} {} {}: {}x{}x{} {} {:.3e} {}",
                    k.name,
                    a.config,
                    target.name(),
                    r.shape.0,
                    r.shape.1,
                    r.shape.2,
                    family.error_name(),
                    r.error,
                    if r.ok { "ok" } else { "FAIL" }
                );
                if !r.ok && !r.blocks.is_empty() {
                    println!("  where it is wrong:\n{}", r.blocks);
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

/// `--m`, `--n`, `--k` as given; the family's default fills what is left out.
#[derive(Clone, Copy, Debug, Default)]
struct ShapeArgs {
    m: Option<usize>,
    n: Option<usize>,
    k: Option<usize>,
}

impl ShapeArgs {
    fn over(self, (m, n, k): tirx_kernels::family::Shape) -> tirx_kernels::family::Shape {
        (
            self.m.unwrap_or(m),
            self.n.unwrap_or(n),
            self.k.unwrap_or(k),
        )
    }
}

/// What `tirx tune` measures: a family and its options.
#[derive(Subcommand)]
enum TuneCmd {
    /// Every accepted GEMM candidate per shape.
    Gemm {
        /// Shapes `M,N,K`; repeatable. Default: the bench's sweep.
        #[arg(long = "shape")]
        shapes: Vec<String>,
        /// How B is given: `tn` or `nn`.
        #[arg(long, default_value = "tn", value_parser = parse_layout)]
        layout: tirx::problem::BLayout,
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
            catalogue::all()
                .iter()
                .all(|k| run(&rt, k, None, ShapeArgs::default()))
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
        Some(Cmd::Bench(cmd)) => match gpu() {
            Ok(rt) => cli::bench::bench(&rt, &cmd),
            Err(e) => {
                eprintln!("tirx bench needs a GPU: {e}");
                return ExitCode::from(2);
            }
        },
        Some(Cmd::Tune(TuneCmd::Gemm {
            shapes,
            layout,
            input,
            output,
            scaled,
            cache,
            json,
        })) => match (gpu(), gemm_types(&input, &output)) {
            (_, Err(e)) => Err(e),
            (Ok(rt), Ok(types)) => {
                let problem = tirx_kernels::bench::Problem {
                    layout,
                    scale: scaled.then_some((1.5, -0.75)),
                };
                tune_gemm(&rt, &shapes, problem, types, cache.as_deref(), &json)
            }
            (Err(e), _) => {
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
            let Some(kernel) = catalogue::find(&name) else {
                eprintln!("no kernel `{name}`; `tirx list` shows them");
                return ExitCode::FAILURE;
            };
            match gpu() {
                Ok(rt) => Ok(run(&rt, kernel, config.as_deref(), ShapeArgs { m, n, k })),
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
    use clap::CommandFactory;
    use cli::bench::BenchCmd;
    use tirx_kernels::gemm::reference::Act;

    fn bench_args(extra: &[&str]) -> Result<Cli, clap::Error> {
        let args = ["tirx", "bench", "gemm"].iter().chain(extra);
        Cli::try_parse_from(args)
    }

    fn epilogue_of(cli: Cli) -> Option<Act> {
        match cli.cmd {
            Some(Cmd::Bench(BenchCmd::Gemm(g))) => g.epilogue,
            _ => panic!("not a bench gemm command"),
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

    fn fp8_of(extra: &[&str]) -> Result<Option<tirx_kernels::bench::fp8::Fp8Problem>, String> {
        match bench_args(extra).map_err(|e| e.to_string())?.cmd {
            Some(Cmd::Bench(BenchCmd::Gemm(g))) => g.fp8(),
            _ => panic!("not a bench gemm command"),
        }
    }

    /// `tirx bench gemm --in e4m3|e5m2 [--scales tensor|rows|blocks]` is the FP8 bench: its
    /// problem from the element types and the scales; options it does not take are refused.
    #[test]
    fn bench_gemm_takes_the_fp8_problem() {
        use tirx::abi::ElemType;
        use tirx_kernels::gemm::fp8_ref::Fp8ScaleMode;
        let p = fp8_of(&["--in", "e4m3"]).unwrap().unwrap();
        assert_eq!(
            (p.scales, p.input, p.output),
            (Fp8ScaleMode::Tensor, ElemType::E4m3, ElemType::Bf16)
        );
        let p = fp8_of(&["--in", "e5m2", "--out", "f32", "--scales", "rows"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.scales, p.input, p.output),
            (Fp8ScaleMode::Rows, ElemType::E5m2, ElemType::F32)
        );
        let p = fp8_of(&["--in", "e4m3", "--scales", "blocks"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.scales, p.input, p.output),
            (Fp8ScaleMode::Blocks, ElemType::E4m3, ElemType::Bf16)
        );
        // MN-major `sa` ([KB, M4]): `Epilogue::ScaleBlocksMn`.
        let p = fp8_of(&["--in", "e4m3", "--scales", "blocks-mn"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.scales, p.input, p.output),
            (Fp8ScaleMode::BlocksMn, ElemType::E4m3, ElemType::Bf16)
        );
        assert_eq!(fp8_of(&["--in", "f16"]), Ok(None));
        // `--kernel` narrows the configs measured (checked against the catalogue by
        // `Fp8Problem::select` before any GPU work).
        let p = fp8_of(&[
            "--in",
            "e4m3",
            "--scales",
            "blocks",
            "--kernel",
            "gemm_sm90_fp8_block/ping",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(p.scales, Fp8ScaleMode::Blocks);
        for bad in [
            &["--in", "bf16", "--scales", "rows"][..],
            &["--in", "e4m3", "--layout", "nn"],
            &["--in", "e4m3", "--all"],
            &["--in", "e4m3", "--scales", "rows", "--all"],
            &["--in", "e4m3", "--scales", "diag"],
            &["--epilogue", "bias", "--scales", "rows"],
        ] {
            assert!(fp8_of(bad).is_err(), "{bad:?}");
        }
    }

    /// `tirx bench` and `tirx tune` take a family as a subcommand: a misspelt one, or an option
    /// of another family, is refused when the command line is parsed, with no GPU looked for.
    #[test]
    fn bench_and_tune_take_a_family_subcommand() {
        let e = Cli::try_parse_from(["tirx", "bench", "gem"])
            .err()
            .expect("refused");
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidSubcommand, "{e}");
        let cmd = Cli::command();
        let bench = cmd.find_subcommand("bench").expect("bench");
        let families: Vec<&str> = bench.get_subcommands().map(|c| c.get_name()).collect();
        assert_eq!(families, ["copy", "gemm", "quant", "rows", "attention"]);
        assert!(Cli::try_parse_from(["tirx", "tune", "rows"]).is_err());
        // An option of another family is refused.
        assert!(Cli::try_parse_from(["tirx", "bench", "copy", "--quick"]).is_err());
        assert!(Cli::try_parse_from(["tirx", "bench", "attention", "--alpha", "2"]).is_err());
        match Cli::try_parse_from(["tirx", "bench", "attention", "--quick"])
            .unwrap()
            .cmd
        {
            Some(Cmd::Bench(BenchCmd::Attention { quick, .. })) => assert!(quick),
            _ => panic!("not a bench attention command"),
        }
        match Cli::try_parse_from([
            "tirx",
            "bench",
            "attention",
            "--shape",
            "2,32,8,512,4096,128,causal",
            "--shape",
            "1,16,16,1000,1000,64",
        ])
        .unwrap()
        .cmd
        {
            Some(Cmd::Bench(BenchCmd::Attention { shapes, .. })) => {
                assert_eq!(shapes.len(), 2);
                assert_eq!(
                    (shapes[0].seq, shapes[0].sk(), shapes[0].causal),
                    (512, 4096, true)
                );
                assert_eq!(
                    (shapes[1].hd, shapes[1].sk(), shapes[1].causal),
                    (64, 1000, false)
                );
            }
            _ => panic!("not a bench attention command"),
        }
        match Cli::try_parse_from([
            "tirx",
            "bench",
            "attention",
            "--varlen",
            "--shape",
            "4,16,16,1000,1000,128",
        ])
        .unwrap()
        .cmd
        {
            Some(Cmd::Bench(BenchCmd::Attention { varlen, shapes, .. })) => {
                assert!(varlen);
                assert_eq!(shapes.len(), 1);
            }
            _ => panic!("not a bench attention command"),
        }
        match Cli::try_parse_from([
            "tirx",
            "bench",
            "attention",
            "--paged",
            "128",
            "--shape",
            "8,32,8,16,4000,128,causal",
        ])
        .unwrap()
        .cmd
        {
            Some(Cmd::Bench(BenchCmd::Attention {
                paged,
                varlen,
                shapes,
                ..
            })) => {
                assert_eq!((paged, varlen, shapes.len()), (Some(128), false, 1));
            }
            _ => panic!("not a bench attention command"),
        }
        // `--decode` alone takes the host's split (0), `--decode N` forces N chunks.
        for (args, want) in [
            (&["--decode", "--shape", "1,32,8,1,8192,128"][..], 0),
            (&["--decode", "4", "--shape", "1,32,8,4,8192,128,causal"], 4),
            (
                &["--decode", "--unpacked", "--shape", "1,32,8,1,8192,128"],
                0,
            ),
        ] {
            let argv = ["tirx", "bench", "attention"].iter().chain(args);
            match Cli::try_parse_from(argv).unwrap().cmd {
                Some(Cmd::Bench(BenchCmd::Attention { decode, shapes, .. })) => {
                    assert_eq!((decode, shapes.len()), (Some(want), 1));
                }
                _ => panic!("not a bench attention command"),
            }
        }
        // A malformed shape, a shape list with the sweep's `--quick`, `--varlen` or `--paged`
        // without a shape, `--paged` with `--varlen`, `--varlen` with a forced dense tile, are
        // refused.
        for bad in [
            &["tirx", "bench", "attention", "--varlen"][..],
            &["tirx", "bench", "attention", "--decode"],
            &[
                "tirx",
                "bench",
                "attention",
                "--unpacked",
                "--shape",
                "1,1,1,1,64,64",
            ],
            &[
                "tirx",
                "bench",
                "attention",
                "--decode",
                "--varlen",
                "--shape",
                "1,1,1,1,64,64",
            ],
            &[
                "tirx",
                "bench",
                "attention",
                "--decode",
                "--shape",
                "1,1,1,1,64,64",
                "--kernel",
                "d128",
            ],
            &["tirx", "bench", "attention", "--paged", "128"][..],
            &[
                "tirx",
                "bench",
                "attention",
                "--paged",
                "128",
                "--varlen",
                "--shape",
                "1,1,1,64,64,64",
            ],
            &[
                "tirx",
                "bench",
                "attention",
                "--varlen",
                "--shape",
                "1,1,1,64,64,64",
                "--kernel",
                "d128",
            ],
            &["tirx", "bench", "attention", "--shape", "2,32,8,512,4096"],
            &[
                "tirx",
                "bench",
                "attention",
                "--quick",
                "--shape",
                "1,1,1,64,64,64",
            ],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
        match Cli::try_parse_from(["tirx", "bench", "copy", "--shape", "64,64"])
            .unwrap()
            .cmd
        {
            Some(Cmd::Bench(BenchCmd::Copy { shapes })) => assert_eq!(shapes, ["64,64"]),
            _ => panic!("not a bench copy command"),
        }
        // A layout or an emulator option is a typed value, refused when misspelt.
        for bad in [
            &["tirx", "bench", "gemm", "--layout", "tt"][..],
            &["tirx", "tune", "gemm", "--layout", "NN"],
            &["tirx", "sim", "tma_copy", "--clc", "never"],
        ] {
            let e = Cli::try_parse_from(bad).err().expect("refused");
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{e}");
        }
    }
}
