//! `tirx sim NAME [--target T] [--config C] [--m M] [--n N] [--seed S] [--schedules K]
//! [--launch-regs R] [--sms N] [--clc fail|succeed|random] [--timeline FILE]`: run
//! a shipped kernel (sm_90a or sm_100a) in the CPU emulator (`tirx-sim`, issue #10) on random
//! inputs, check it against the CPU reference, and report what the emulator saw. Exit 0 only
//! when every schedule matched and no diagnostic fired.
//!
//! The launch is planned exactly as the runtime plans a GPU launch
//! (`tirx::runtime::plan_launch_with`); tensor maps are the `cuTensorMapEncodeTiled`
//! arguments of `tirx::runtime::tiled_encoding`. `--schedules K` runs K interleavings, seeds
//! `S, S+1, …`. An instruction the emulator does not run is refused with its line. GEMMs run
//! with K = `--n` (B given N×K or, for `nn` configs, K×N; `α = 1.5, β = −0.75` where the
//! kernel takes C). `--launch-regs` is the per-thread register count ptxas gave the kernel (for
//! the exact `setmaxnreg` pool); `--clc` how `clusterlaunchcontrol.try_cancel` is answered.
//! `--timeline FILE` records the first schedule of the first artifact run and writes its
//! picture (`tirx_kernels::timeline`: a lane per warp of CTA 0 and per asynchronous engine over
//! emulated time) to FILE and its events to FILE with the extension `.json`.

use tirx::KernelArtifact;
use tirx::runtime::{DeviceLimits, Target};
use tirx_kernels::catalogue;
use tirx_kernels::dispatch::Reject;
use tirx_kernels::family::{Family, Shape, SimRun};
use tirx_sim::{ClcMode, Policy, Stats, ptx};

/// `--m`, `--n`, `--k` over the family's default shape for `art`
/// ([`Family::default_shape`]); K is N when only `--n` is given.
fn shape_of(a: &SimArgs, family: &dyn Family, art: &KernelArtifact) -> Shape {
    let (dm, dn, dk) = family.default_shape(art);
    let n = a.n.unwrap_or(dn);
    let k = a.k.unwrap_or(if a.n.is_some() { n } else { dk });
    (a.m.unwrap_or(dm), n, k)
}

/// Why the dispatcher would never give `art` the problem of `shape` (a row kernel asked for
/// rows longer than it holds): the run is skipped, as the host would skip it. A refusal of
/// the launch itself is not a skip: the emulator reports it as the GPU would.
fn refusal(family: &dyn Family, art: &KernelArtifact, shape: Shape) -> Option<Reject> {
    family
        .request(art, shape)
        .ok()?
        .solves(art)
        .err()
        .filter(Reject::is_about_the_problem)
}

/// `--clc fail|succeed|random`.
fn parse_clc(s: &str) -> Result<ClcMode, String> {
    match s {
        "fail" => Ok(ClcMode::Fail),
        "succeed" => Ok(ClcMode::Succeed),
        "random" => Ok(ClcMode::Random),
        other => Err(format!("--clc {other}: fail, succeed or random")),
    }
}

/// `tirx sim`'s arguments.
#[derive(clap::Args)]
pub struct SimArgs {
    /// Kernel name.
    name: String,
    /// Target: sm_90a or sm_100a (default: every target the kernel has).
    #[arg(long)]
    target: Option<String>,
    /// Config (default: every config).
    #[arg(long)]
    config: Option<String>,
    /// Rows (attention: the sequence length). Default: the problem family's
    /// (`Family::default_shape`).
    #[arg(long)]
    m: Option<usize>,
    /// Columns (attention: the heads). Default: the problem family's.
    #[arg(long)]
    n: Option<usize>,
    /// GEMMs: the depth K (default: the family's with no `--n`, else N).
    #[arg(long)]
    k: Option<usize>,
    /// The first scheduler seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many interleavings (seeds `seed`, `seed + 1`, …) to run.
    #[arg(long, default_value_t = 1)]
    schedules: u64,
    /// The per-thread register count the kernel is launched with, for `setmaxnreg` (default:
    /// the entry's `.maxnreg`, else unknown).
    #[arg(long)]
    launch_regs: Option<u32>,
    /// The SM count of the emulated device, `SMS` in a persistent kernel's grid (the H200's
    /// 132 by default; fewer make each CTA of a persistent kernel walk more tiles).
    #[arg(long, default_value_t = DeviceLimits::HOPPER.sm_count)]
    sms: u32,
    /// How `clusterlaunchcontrol.try_cancel` requests are answered: fail, succeed or random.
    #[arg(long, default_value = "random", value_parser = parse_clc)]
    clc: ClcMode,
    /// Write an SVG timeline of the first schedule (warps of CTA 0 and the asynchronous
    /// engines over emulated time) to FILE, and its events to FILE with extension `.json`.
    #[arg(long, value_name = "FILE")]
    timeline: Option<std::path::PathBuf>,
}

/// Runs `tirx sim`; `Ok(true)` when every run matched.
pub fn sim(a: &SimArgs) -> Result<bool, String> {
    let k = catalogue::find(&a.name)
        .ok_or_else(|| format!("no kernel `{}`; `tirx list` shows them", a.name))?;
    let target = match &a.target {
        Some(t) => Some(Target::from_name(t)?),
        None => None,
    };
    let arts: Vec<&KernelArtifact> = k
        .artifacts
        .iter()
        .filter(|x| target.is_none_or(|t| x.target == t))
        .filter(|x| a.config.as_deref().is_none_or(|c| c == x.config))
        .collect();
    if arts.is_empty() {
        return Err(format!(
            "`{}` has no artifact{}{}",
            a.name,
            a.target
                .as_ref()
                .map(|t| format!(" for {t}"))
                .unwrap_or_default(),
            a.config
                .as_ref()
                .map(|c| format!(" of config `{c}`"))
                .unwrap_or_default()
        ));
    }
    let policy = Policy {
        launch_regs: a.launch_regs,
        clc: a.clc,
        ..Policy::default()
    };
    let mut ok = true;
    // The timeline records the first schedule run, then is spent.
    let mut timeline = a.timeline.as_deref();
    for art in arts {
        let Some(family) = catalogue::family_of(art) else {
            // The emulator's own refusal names the first instruction it cannot run.
            let module = ptx::parse(art.ptx).map_err(|e| e.to_string())?;
            tirx_sim::Program::new(&module, &(art.signature)().entry).map_err(|e| e.to_string())?;
            return Err(format!(
                "`{}` solves no problem a family of `tirx sim` knows",
                art.kernel
            ));
        };
        let shape = shape_of(a, family, art);
        let (m, n, k) = shape;
        if let Some(why) = refusal(family, art, shape) {
            println!(
                "{} {} {}: skipped at {m}x{n}: {why}",
                art.kernel,
                art.config,
                art.target.name(),
            );
            continue;
        }
        for seed in a.seed..a.seed + a.schedules.max(1) {
            let label = format!(
                "{} {} {} {}x{} seed {seed}",
                art.kernel,
                art.config,
                art.target.name(),
                m,
                n
            );
            let record = timeline.take();
            let run = SimRun {
                seed,
                sms: a.sms,
                policy: Policy {
                    timeline: record.is_some(),
                    ..policy
                },
            };
            let result = family.simulate(art, shape, &run);
            if let (Some(file), Ok((stats, _))) = (record, &result) {
                // The title names the whole shape: a GEMM's K too.
                let title = if k > 0 {
                    format!("{label}, K = {k}")
                } else {
                    label.clone()
                };
                write_timeline(file, stats, &title)?;
            }
            match result {
                Ok((stats, verdict)) => {
                    println!(
                        "{label}: {verdict}; {} thread-instructions, {} async copies, {:.2} M \
                         instructions/s",
                        stats.thread_instructions,
                        stats.async_ops,
                        stats.instructions_per_second() / 1e6
                    );
                }
                Err(e) => {
                    let e = tirx_kernels::simulate::with_source_lines(art, &e);
                    println!("{label}: FAILED: {e}");
                    ok = false;
                }
            }
        }
    }
    Ok(ok)
}

/// Writes the recorded timeline of `stats` as an SVG to `file` and as JSON beside it.
fn write_timeline(file: &std::path::Path, stats: &Stats, title: &str) -> Result<(), String> {
    let tl = stats
        .timeline
        .as_deref()
        .ok_or("the emulator recorded no timeline")?;
    println!("{}", tirx_kernels::timeline::write(file, tl, title)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    /// `tirx sim tma_copy --timeline FILE` writes the SVG and the JSON beside it, only once
    /// (the first schedule), and the run still passes.
    #[test]
    fn timeline_writes_the_svg_and_its_json() {
        let dir = std::env::temp_dir().join(format!("tirx-sim-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("copy.svg");
        let args = Cli::try_parse_from([
            "sim",
            "tma_copy",
            "--target",
            "sm_90a",
            "--config",
            "default",
            "--m",
            "8",
            "--n",
            "64",
            "--schedules",
            "2",
            "--timeline",
            svg.to_str().unwrap(),
        ])
        .unwrap();
        assert_eq!(sim(&args.sim), Ok(true));
        let picture = std::fs::read_to_string(&svg).unwrap();
        assert!(
            picture.contains("tma_copy default sm_90a 8x64 seed 1"),
            "{picture}"
        );
        assert!(picture.contains("data-lane=\"TMA\""));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(svg.with_extension("json")).unwrap())
                .unwrap();
        let units: Vec<&str> = json["timeline"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["unit"].as_str().unwrap())
            .collect();
        assert!(
            units.contains(&"tma_load") && units.contains(&"tma_store"),
            "{units:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// With no shape flags, a TMA GEMM (the default 3×300 of earlier versions had a 600-byte
    /// row stride TMA refuses), a staged row kernel and the fused bias + activation GEMM (once
    /// refused: "takes tensors `tirx sim` has no reference for") run at their family's default
    /// shape and match the reference, as a new user would try them.
    #[test]
    fn no_shape_flags_run_the_familys_default_shape() {
        for (name, config) in [
            ("gemm_sm90_ws", "n64"),
            ("softmax_staged", "s32k_t256"),
            ("gemm_sm90_bias_act", "gelu_n128"),
            ("gemm_sm90_bias_act", "silu_n128"),
        ] {
            let args = Cli::try_parse_from(["sim", name, "--target", "sm_90a", "--config", config])
                .unwrap();
            assert_eq!(sim(&args.sim), Ok(true), "{name} {config}");
        }
        let gemm = &catalogue::find("gemm_sm90_ws").expect("shipped").artifacts[0];
        let shape = catalogue::family_of(gemm)
            .expect("a family")
            .default_shape(gemm);
        // Tails in M and N, and rows whose byte strides TMA takes.
        assert!(
            !shape.0.is_multiple_of(64)
                && !shape.1.is_multiple_of(64)
                && (shape.2 * 2).is_multiple_of(16)
        );
    }
}
