//! The `tirx` command-line tool: list, print, explain, check and run the shipped kernels.
//! With no arguments it takes the tour: list, check, and run what this machine can run.

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, RuntimeError, Target};
use tirx_kernels::bench::{GemmEntry, Problem};
use tirx_kernels::check::{check_artifact, key_sass};
use tirx_kernels::registry::{self, BLayout, CheckReport, GemmTypes, Kind, Shipped};

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
    /// One compiled kernel per line: name, target, threads, cluster, shared memory, TMEM columns, config.
    List,
    /// Print a kernel's PTX.
    Ptx(Which),
    /// Print the IR after every pass, then the PTX.
    Explain(Which),
    /// Assemble every kernel with ptxas and inspect its SASS; non-zero exit on any failure.
    Check,
    /// Time kernels on the GPU (median of many runs, inputs rotated past L2): `copy` (tma_copy
    /// against a plain device copy) or `gemm` (TFLOP/s).
    Bench {
        /// `copy` or `gemm`.
        what: String,
        /// Shapes `M,N` (copy) or `M,N,K` (gemm); repeatable. Default: a fixed sweep.
        #[arg(long = "shape")]
        shapes: Vec<String>,
        /// GEMM: kernels to measure (repeatable; every config of each competes per shape).
        /// Default: the production kernel.
        #[arg(long = "kernel")]
        kernels: Vec<String>,
        /// GEMM: every level of the ladder on one shape (default 8192³), each against cuBLASLt.
        #[arg(long)]
        ladder: bool,
        /// GEMM: the JSON file (the SVG plot goes next to it).
        #[arg(long)]
        json: Option<std::path::PathBuf>,
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
    },
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

fn list() {
    for k in registry::all() {
        for a in k.artifacts {
            let s = (a.signature)();
            let [cx, cy, cz] = s.cluster;
            println!(
                "{:<12} {:<8} threads={:<4} cluster={cx}x{cy}x{cz} smem={:<7} tmem={:<4} config={}",
                k.name,
                a.target.name(),
                s.threads,
                s.smem_bytes,
                s.tmem_cols,
                a.config
            );
        }
    }
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

fn run_one(
    rt: &Runtime,
    k: &Shipped,
    config: &str,
    (m, n, kk): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    match k.kind {
        Kind::Copy(l) => registry::check_copy(rt, l, config, m, n, seed),
        Kind::Gemm(l) => registry::check_gemm(rt, l, config, m, n, kk, seed),
        Kind::GemmNn(l) => registry::check_gemm_nn(rt, l, config, m, n, kk, seed),
        Kind::GemmScaled(l, layout) => {
            registry::check_gemm_scaled(rt, l, layout, config, (m, n, kk), 1.5, -0.75, seed)
        }
    }
}

fn run(rt: &Runtime, k: &Shipped, config: Option<&str>, shape: (usize, usize, usize)) -> bool {
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
        match run_one(rt, k, a.config, shape, 0x5eed) {
            Ok(r) => {
                let what = if matches!(k.kind, Kind::Copy(_)) {
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

fn parse_shape(s: &str, want: usize) -> Result<Vec<usize>, String> {
    let v: Vec<usize> = s
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad shape `{s}`: {e}"))?;
    if v.len() == want {
        Ok(v)
    } else {
        Err(format!("bad shape `{s}`: {want} numbers expected"))
    }
}

fn bench(rt: &Runtime, what: &str, shapes: &[String]) -> Result<bool, String> {
    use tirx_kernels::bench;
    println!(
        "{} (compute capability {:?}); median of {} runs after {} warm-up, inputs rotated past L2",
        rt.name(),
        rt.compute_capability(),
        bench::RUNS,
        bench::WARMUP
    );
    let mut rows = Vec::new();
    match what {
        "copy" => {
            let k = registry::find("tma_copy").ok_or("tma_copy is not shipped")?;
            let Kind::Copy(launch) = k.kind else {
                return Err("tma_copy is not a copy".into());
            };
            let shapes = if shapes.is_empty() {
                vec!["8192,8192".to_string(), "16384,16384".to_string()]
            } else {
                shapes.to_vec()
            };
            for s in &shapes {
                let v = parse_shape(s, 2)?;
                for config in ["default", "tall"] {
                    rows.extend(
                        bench::copy(rt, launch, config, v[0], v[1]).map_err(|e| e.to_string())?,
                    );
                }
            }
            println!("{:<44} {:>10} {:>8}", "what", "median ms", "TB/s");
        }
        other => return Err(format!("unknown bench `{other}`: copy or gemm")),
    }
    for r in &rows {
        println!("{:<44} {:>10.4} {:>8.1}", r.what, r.median_ms, r.rate);
    }
    Ok(true)
}

/// `--layout tn|nn` of `tirx bench gemm`.
fn parse_layout(s: &str) -> Result<BLayout, String> {
    match s {
        "tn" => Ok(BLayout::Tn),
        "nn" => Ok(BLayout::Nn),
        other => Err(format!(
            "unknown layout `{other}`: tn (B given N×K) or nn (B given K×N)"
        )),
    }
}

/// `--in X --out Y` → the GEMM element types.
fn gemm_types(input: &str, output: &str) -> Result<GemmTypes, String> {
    let elem = |s: &str| {
        ElemType::from_name(s).ok_or_else(|| format!("unknown element type `{s}`: bf16, f16, f32"))
    };
    let types = GemmTypes {
        input: elem(input)?,
        output: elem(output)?,
    };
    if types.config().is_none() {
        let all: Vec<String> = GemmTypes::ALL.iter().map(|t| t.to_string()).collect();
        return Err(format!(
            "no GEMM takes {types}; supported: {}",
            all.join(", ")
        ));
    }
    Ok(types)
}

/// `tirx bench gemm`: ours (the host-side choice per shape, or the fastest config of the named
/// kernels) against cuBLASLt in one process, B in `layout`, in element types `types` (only
/// configs of those types compete).
fn bench_gemm(
    rt: &Runtime,
    shapes: &[String],
    names: &[String],
    ladder: bool,
    json: Option<&std::path::Path>,
    problem: Problem,
    types: GemmTypes,
) -> Result<bool, String> {
    let layout = problem.layout;
    let run_gemm_bench = |rt: &Runtime,
                          list: &dyn Fn((usize, usize, usize)) -> Vec<GemmEntry>,
                          shapes: Option<Vec<(usize, usize, usize)>>,
                          json: Option<&std::path::Path>,
                          png: Option<&std::path::Path>| {
        tirx_kernels::bench::run_gemm_bench_for(rt, types, list, problem, shapes, json, png)
    };
    let target = rt.target().map_err(|e| e.to_string())?;
    let shapes = shapes
        .iter()
        .map(|s| parse_shape(s, 3).map(|v| (v[0], v[1], v[2])))
        .collect::<Result<Vec<_>, _>>()?;
    // The kernels that compute `problem`: plain or scaled, B in its layout.
    let computes = |kind: Kind| match (kind, problem.scale) {
        (Kind::GemmScaled(_, l), Some(_)) => l == layout,
        (kind, None) => BLayout::of(kind) == Some(layout),
        _ => false,
    };
    let gemms: Vec<Shipped> = registry::all()
        .into_iter()
        .filter(|k| computes(k.kind))
        .collect();
    let by_name = |n: &str| {
        gemms
            .iter()
            .find(|k| k.name == n)
            .ok_or_else(|| format!("no GEMM kernel `{n}` computing {}", problem.formula()))
    };
    let chosen: Vec<&Shipped> = if !names.is_empty() {
        names.iter().map(|n| by_name(n)).collect::<Result<_, _>>()?
    } else if ladder {
        gemms.iter().collect()
    } else {
        Vec::new()
    };
    let entries = |k: &Shipped| -> Vec<GemmEntry> {
        let (Kind::Gemm(launch) | Kind::GemmNn(launch) | Kind::GemmScaled(launch, _)) = k.kind
        else {
            return vec![];
        };
        k.artifacts
            .iter()
            .filter(|a| a.target == target && launch.types(a.config) == Some(types))
            .map(|a| (k.name, a.config, launch))
            .collect()
    };
    if ladder {
        let shapes = if shapes.is_empty() {
            vec![(8192, 8192, 8192)]
        } else {
            shapes
        };
        let mut ok = true;
        for k in chosen {
            let list = entries(k);
            if list.is_empty() {
                continue;
            }
            println!("\n== ladder: {}", k.name);
            let path = std::path::PathBuf::from(format!("bench-ladder-{}.json", k.name));
            ok &= run_gemm_bench(
                rt,
                &|_| list.clone(),
                Some(shapes.clone()),
                Some(&path),
                None,
            )
            .map_err(|e| e.to_string())?;
        }
        return Ok(ok);
    }
    // With `--kernel`: every config of the named kernels, the fastest reported; without: the
    // kernel and config the host-side choice takes for each shape (what `gemm_auto` runs).
    let list: Vec<_> = chosen.into_iter().flat_map(entries).collect();
    // The host-side choice for these types and this layout, on this device's SMs.
    let sms = rt.sm_count() as usize;
    let choose = |m: usize, n: usize, k: usize| match (layout, problem.scale) {
        (layout, Some(_)) => registry::choose_gemm_scaled_for(sms, layout, types, m, n, k),
        (BLayout::Tn, None) => registry::choose_gemm_for(sms, types, m, n, k),
        (BLayout::Nn, None) => registry::choose_gemm_nn_for(sms, types, m, n, k),
    };
    let choice = |(m, n, k): (usize, usize, usize)| {
        let Some((name, config)) = choose(m, n, k) else {
            return Vec::new();
        };
        let kernel = by_name(name).expect("the choice names a shipped GEMM");
        entries(kernel)
            .into_iter()
            .filter(|e| e.1 == config)
            .collect::<Vec<_>>()
    };
    if !names.is_empty() && list.is_empty() {
        return Err(format!(
            "no GEMM config for {types} compiled for {} among the kernels asked for",
            target.name()
        ));
    }
    let measured = if shapes.is_empty() {
        tirx_kernels::bench::sweep::default_shapes()
    } else {
        shapes.clone()
    };
    let fixed = |_| list.clone();
    let candidates: &dyn Fn((usize, usize, usize)) -> Vec<_> =
        if names.is_empty() { &choice } else { &fixed };
    let ok = run_gemm_bench(
        rt,
        candidates,
        (!shapes.is_empty()).then_some(shapes),
        json,
        None,
    )
    .map_err(|e| e.to_string())?;
    println!(
        "host-side choice without measuring ({types}, {}):",
        problem.formula()
    );
    for (m, n, k) in measured {
        match choose(m, n, k) {
            Some((name, config)) => println!("  {m}x{n}x{k} -> {name}/{config}"),
            None => println!("  {m}x{n}x{k} -> none shipped"),
        }
    }
    Ok(ok)
}

fn gpu() -> Result<Runtime, RuntimeError> {
    Runtime::new(0)
}

fn tour() -> ExitCode {
    println!("== tirx list");
    list();
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
        Some(Cmd::List) => {
            list();
            Ok(true)
        }
        Some(Cmd::Ptx(w)) => artifact(&w).map(|a| {
            print!("{}", a.ptx);
            true
        }),
        Some(Cmd::Explain(w)) => artifact(&w).and_then(explain).map(|_| true),
        Some(Cmd::Check) => Ok(check()),
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
        }) => match (gpu(), gemm_types(&input, &output), parse_layout(&layout)) {
            (_, Err(e), _) | (_, _, Err(e)) => Err(e),
            (Ok(rt), Ok(types), Ok(layout)) if what == "gemm" => bench_gemm(
                &rt,
                &shapes,
                &kernels,
                ladder,
                json.as_deref(),
                Problem {
                    layout,
                    scale: (alpha != 1.0 || beta != 0.0).then_some((alpha, beta)),
                },
                types,
            ),
            (Ok(rt), Ok(_), Ok(_)) => bench(&rt, &what, &shapes),
            (Err(e), _, _) => {
                eprintln!("tirx bench needs a GPU: {e}");
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
                Ok(rt) => Ok(run(&rt, &kernel, config.as_deref(), (m, n, k))),
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
