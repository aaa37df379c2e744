//! The `tirx` command-line tool: list, print, explain, check and run the shipped kernels.
//! With no arguments it takes the tour: list, check, and run what this machine can run.

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tirx::Kernel;
use tirx::abi::ElemType;
use tirx::problem::{Epilogue, Problem as Solves};
use tirx::{KernelArtifact, Runtime, RuntimeError, Target};
use tirx_kernels::bench::{GemmEntry, Problem};
use tirx_kernels::check::{check_artifact, key_sass};
use tirx_kernels::dispatch::{self, Device, gemm::GemmRequest};
use tirx_kernels::registry::{self, BLayout, GemmLaunch, GemmTypes};

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
        /// GEMM: every config the dispatcher accepts competes (instead of the host's choice
        /// alone); the table marks the host's choice and its time against the fastest.
        #[arg(long)]
        all: bool,
    },
    /// Measure every accepted candidate of a problem on the GPU and remember the fastest in the
    /// tune cache that the host-side choice reads first (`gemm`).
    Tune {
        /// `gemm`.
        what: String,
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

fn list(json: bool) {
    if json {
        let all: Vec<serde_json::Value> = registry::all()
            .into_iter()
            .flat_map(|k| k.artifacts.iter().map(move |a| artifact_json(k, a)))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&all).expect("JSON values serialize")
        );
        return;
    }
    for k in registry::all() {
        for a in k.artifacts {
            let s = (a.signature)();
            let [cx, cy, cz] = s.cluster;
            let problem = a.problem.map_or_else(|| "-".to_string(), |p| p.to_string());
            println!(
                "{:<12} {:<8} threads={:<4} cluster={cx}x{cy}x{cz} smem={:<7} tmem={:<4} config={:<14} {problem}",
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

/// One artifact's metadata, as `tirx list --json` prints it.
fn artifact_json(k: &Kernel, a: &tirx::KernelArtifact) -> serde_json::Value {
    use tirx::abi::ConfigValue;
    let s = (a.signature)();
    let consts: serde_json::Map<String, serde_json::Value> = a
        .consts
        .iter()
        .map(|(n, v)| {
            let v = match v {
                ConfigValue::Int(i) => serde_json::json!(i),
                other => serde_json::json!(other.to_string()),
            };
            (n.to_string(), v)
        })
        .collect();
    let tensors: Vec<serde_json::Value> = s
        .tensors
        .iter()
        .map(|t| serde_json::json!({ "name": t.name, "elem": t.elem.name(), "shape": t.shape }))
        .collect();
    let tma: Vec<serde_json::Value> = s
        .params
        .iter()
        .filter_map(|p| match p {
            tirx::abi::AbiParam::TensorMap {
                tensor, box_dims, ..
            } => Some(serde_json::json!({ "tensor": tensor, "box": box_dims })),
            _ => None,
        })
        .collect();
    let problem = match a.problem {
        None => serde_json::Value::Null,
        Some(Solves::Copy) => serde_json::json!({ "kind": "copy" }),
        Some(Solves::Gemm(g)) => serde_json::json!({
            "kind": "gemm", "b": g.b.name(), "epilogue": g.epilogue.name()
        }),
    };
    serde_json::json!({
        "kernel": k.name,
        "config": a.config,
        "target": a.target.name(),
        "entry": s.entry,
        "problem": problem,
        "consts": consts,
        "tensors": tensors,
        "tma_boxes": tma,
        "scalars": s.scalars,
        "threads": s.threads,
        "cluster": s.cluster,
        "grid": s.grid.iter().map(|g| format!("{g:?}")).collect::<Vec<_>>(),
        "smem_bytes": s.smem_bytes,
        "tmem_cols": s.tmem_cols,
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
            let launch: registry::CopyLaunch = tirx_kernels::copy::tma_copy::tma_copy::launch;
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
    if !types.is_shipped() {
        let all: Vec<String> = GemmTypes::ALL.iter().map(|t| t.to_string()).collect();
        return Err(format!(
            "no GEMM takes {types}; supported: {}",
            all.join(", ")
        ));
    }
    Ok(types)
}

/// The problem a GEMM bench computes, as the dispatcher states it.
fn gemm_request(problem: Problem, types: GemmTypes, shape: (usize, usize, usize)) -> GemmRequest {
    let epilogue = match problem.scale {
        None => Epilogue::Plain,
        Some(_) => Epilogue::Scaled,
    };
    let mut r = GemmRequest::contiguous(problem.layout.problem(), epilogue, types, shape);
    if let Some((alpha, beta)) = problem.scale {
        r.scalars = (alpha, beta);
    }
    r
}

/// The configs of `k` in `types` compiled for `target`, as bench entries.
fn entries(k: &'static Kernel, types: GemmTypes, target: tirx::Target) -> Vec<GemmEntry> {
    let launch = GemmLaunch::of(k);
    k.artifacts
        .iter()
        .filter(|a| a.target == target && launch.types(a.config) == Some(types))
        .map(|a| (k.name, a.config, launch))
        .collect()
}

/// Every artifact the dispatcher accepts for the problem on `device`, cheapest first.
fn accepted(device: &Device, request: &GemmRequest) -> Vec<GemmEntry> {
    let verdicts = dispatch::judge(request, &registry::all(), device);
    dispatch::ranked(&verdicts)
        .into_iter()
        .map(|(v, _)| (v.kernel.name, v.artifact.config, GemmLaunch::of(v.kernel)))
        .collect()
}

/// `tirx bench gemm`: ours (the host-side choice per shape, every accepted config with
/// `--all`, or every config of the named kernels) against cuBLASLt in one process, B in
/// `layout`, in element types `types` (only configs of those types compete).
#[allow(clippy::too_many_arguments)]
fn bench_gemm(
    rt: &Runtime,
    shapes: &[String],
    names: &[String],
    ladder: bool,
    all: bool,
    json: Option<&std::path::Path>,
    problem: Problem,
    types: GemmTypes,
) -> Result<bool, String> {
    let device = Device::of(rt).map_err(|e| e.to_string())?;
    let target = device.target;
    let shapes = shapes
        .iter()
        .map(|s| parse_shape(s, 3).map(|v| (v[0], v[1], v[2])))
        .collect::<Result<Vec<_>, _>>()?;
    // The kernels that compute `problem`: plain or scaled, B in its layout.
    let solves = gemm_request(problem, types, (1, 1, 1));
    let gemms: Vec<&'static Kernel> = registry::all()
        .into_iter()
        .filter(|k| {
            k.artifacts
                .iter()
                .any(|a| dispatch::ProblemDef::solves(&solves, a).is_ok())
        })
        .collect();
    let by_name = |n: &str| {
        gemms.iter().copied().find(|k| k.name == n).ok_or_else(|| {
            format!(
                "no GEMM kernel `{n}` computing {} in {types}",
                problem.formula()
            )
        })
    };
    if ladder {
        let shapes = if shapes.is_empty() {
            vec![(8192, 8192, 8192)]
        } else {
            shapes
        };
        let mut ok = true;
        for k in gemms {
            let list = entries(k, types, target);
            if list.is_empty() {
                continue;
            }
            println!("\n== ladder: {}", k.name);
            let path = std::path::PathBuf::from(format!("bench-ladder-{}.json", k.name));
            let list_of = |_| list.clone();
            ok &= tirx_kernels::bench::run_gemm_bench_for(
                rt,
                types,
                &list_of,
                problem,
                Some(shapes.clone()),
                Some(&path),
                None,
            )
            .map_err(|e| e.to_string())?;
        }
        return Ok(ok);
    }
    let named: Vec<GemmEntry> = names
        .iter()
        .map(|n| by_name(n).map(|k| entries(k, types, target)))
        .collect::<Result<Vec<_>, _>>()?
        .concat();
    if !names.is_empty() && named.is_empty() {
        return Err(format!(
            "no GEMM config for {types} compiled for {} among the kernels asked for",
            target.name()
        ));
    }
    let choice = |shape: (usize, usize, usize)| {
        registry::choose_gemm(&device, &gemm_request(problem, types, shape))
    };
    let candidates = |shape: (usize, usize, usize)| -> Vec<GemmEntry> {
        if !names.is_empty() {
            named.clone()
        } else if all {
            accepted(&device, &gemm_request(problem, types, shape))
        } else {
            choice(shape)
                .map(|c| vec![(c.kernel.name, c.artifact.config, GemmLaunch::of(c.kernel))])
                .unwrap_or_default()
        }
    };
    let measured = if shapes.is_empty() {
        tirx_kernels::bench::sweep::default_shapes()
    } else {
        shapes.clone()
    };
    let report = tirx_kernels::bench::gemm_report_for(
        rt,
        types,
        &candidates,
        problem,
        (!shapes.is_empty()).then_some(shapes),
        json,
        None,
    )
    .map_err(|e| e.to_string())?;
    let ok = report.rows.iter().all(|r| r.ok());
    println!("host-side choice ({types}, {}):", problem.formula());
    let mut worst: Option<f64> = None;
    for shape in measured {
        let (m, n, k) = shape;
        let c = match choice(shape) {
            Ok(c) => c,
            Err(e) => {
                println!("  {m}x{n}x{k} -> {e}");
                continue;
            }
        };
        // With every accepted config measured: the choice's time against the fastest's.
        let row = report.rows.iter().find(|r| r.shape == shape);
        let time_of = |kernel: &str, config: &str| {
            row.and_then(|r| {
                r.candidates
                    .iter()
                    .find(|x| x.kernel == kernel && x.config == config && x.failure.is_none())
                    .and_then(|x| x.timing.map(|t| t.median_ms))
            })
        };
        let mine = time_of(c.kernel.name, c.artifact.config);
        let best = row
            .and_then(|r| r.best())
            .and_then(|b| b.timing.map(|t| t.median_ms));
        let versus = match (all, mine, best) {
            (true, Some(mine), Some(best)) => {
                let ratio = best / mine;
                worst = Some(worst.map_or(ratio, |w: f64| w.min(ratio)));
                format!(", {:.3} of the fastest config measured", ratio)
            }
            _ => String::new(),
        };
        println!("  {m}x{n}x{k} -> {} ({:?}){versus}", c.label(), c.source);
    }
    if let Some(w) = worst {
        println!("the choice's worst ratio to the fastest config of the same run: {w:.3}");
    }
    Ok(ok)
}

/// `tirx tune gemm`: every accepted candidate of the problem measured on each shape (in the
/// bench's interleaved rounds beside cuBLASLt, every result checked), the right ones written
/// fastest first into the tune cache; per shape, the cost model's pick against the fastest.
fn tune_gemm(
    rt: &Runtime,
    shapes: &[String],
    problem: Problem,
    types: GemmTypes,
    cache_path: Option<&std::path::Path>,
    json: &std::path::Path,
) -> Result<bool, String> {
    use tirx_kernels::dispatch::tune::{self, Cache, Entry, Measured};
    let device = Device::of(rt).map_err(|e| e.to_string())?;
    let shapes = if shapes.is_empty() {
        tirx_kernels::bench::sweep::default_shapes()
    } else {
        shapes
            .iter()
            .map(|s| parse_shape(s, 3).map(|v| (v[0], v[1], v[2])))
            .collect::<Result<Vec<_>, _>>()?
    };
    let path = cache_path
        .map(std::path::Path::to_path_buf)
        .or_else(tune::user_path)
        .ok_or("no cache file: pass --cache PATH or set TIRX_TUNE_CACHE")?;
    let mut cache = Cache::load(&path).map_err(|e| e.to_string())?;
    let candidates = |shape| accepted(&device, &gemm_request(problem, types, shape));
    let report = tirx_kernels::bench::gemm_report_for(
        rt,
        types,
        &candidates,
        problem,
        Some(shapes),
        Some(json),
        None,
    )
    .map_err(|e| e.to_string())?;
    println!(
        "tuned ({types}, {}) on {} ({} SMs):",
        problem.formula(),
        device.name,
        device.limits.sm_count
    );
    for row in &report.rows {
        let request = gemm_request(problem, types, row.shape);
        let (m, n, k) = row.shape;
        let measured: Vec<Measured> = row
            .candidates
            .iter()
            .filter(|c| c.failure.is_none())
            .filter_map(|c| {
                c.timing.map(|t| Measured {
                    kernel: c.kernel.clone(),
                    config: c.config.clone(),
                    median_us: t.median_ms * 1e3,
                })
            })
            .collect();
        let Some(best) = measured
            .iter()
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
        else {
            println!("  {m}x{n}x{k}: no candidate ran right; nothing remembered");
            continue;
        };
        let model = dispatch::choose(&request, &registry::all(), &device, &Cache::default());
        let model_us = model.as_ref().ok().and_then(|c| {
            measured
                .iter()
                .find(|x| x.kernel == c.kernel.name && x.config == c.artifact.config)
                .map(|x| x.median_us)
        });
        let model_label = model.as_ref().map_or_else(|e| e.to_string(), |c| c.label());
        println!(
            "  {m}x{n}x{k}: fastest {}/{} {:.1} us; cost model {} {}",
            best.kernel,
            best.config,
            best.median_us,
            model_label,
            model_us.map_or_else(
                || "not measured".to_string(),
                |us| format!("{us:.1} us ({:.3} of the fastest)", best.median_us / us)
            ),
        );
        cache.insert(Entry {
            key: dispatch::ProblemDef::cache_key(&request, &device),
            shape: [m, n, k],
            date: report.date.clone(),
            measured,
        });
    }
    cache.save(&path).map_err(|e| e.to_string())?;
    println!("wrote {} ({} entries)", path.display(), cache.entries.len());
    Ok(report.rows.iter().all(|r| r.ok()))
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
        }) => match (gpu(), gemm_types(&input, &output), parse_layout(&layout)) {
            (_, Err(e), _) | (_, _, Err(e)) => Err(e),
            (Ok(rt), Ok(types), Ok(layout)) if what == "gemm" => bench_gemm(
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
            (Ok(rt), Ok(_), Ok(_)) => bench(&rt, &what, &shapes),
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
            (Ok(rt), Ok(types), Ok(layout)) if what == "gemm" => {
                let problem = Problem {
                    layout,
                    scale: scaled.then_some((1.5, -0.75)),
                };
                tune_gemm(&rt, &shapes, problem, types, cache.as_deref(), &json)
            }
            (Ok(_), Ok(_), Ok(_)) => Err(format!("unknown tune `{what}`: gemm")),
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
