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

use half::bf16;
use tirx::KernelArtifact;
use tirx::problem::{Epilogue, GemmProblem, Problem, RowOp};
use tirx::runtime::{DeviceLimits, ElemType, Target, TensorMeta};
use tirx_kernels::reference::Rng;
use tirx_kernels::registry;
use tirx_kernels::row_kernels::host::capacity;
use tirx_kernels::rows::{RowProblem, reference};
use tirx_kernels::simulate::{self, decode, download, put, random_values, upload};
use tirx_sim::{ClcMode, Device, Policy, Stats, ptx};

/// The shape `tirx sim` runs when no `--m`/`--n`/`--k` is given: one each problem family's
/// kernels all take, odd where the kernels allow it (tails in every tiled dimension) and with
/// rows of a multiple of 16 bytes where a tensor map reads them (TMA refuses other strides).
/// GEMMs 130×136×96 (tails in M and N, 1.5 K tiles of 64); row kernels 3×296 (592-byte rows:
/// the staged kernels' tensor maps take them, and 296 is no power of two); copies 130×136;
/// attention 130 queries and keys (a tail in both) over 2 heads.
pub fn default_shape(problem: Option<Problem>) -> (usize, usize, usize) {
    match problem {
        Some(Problem::Gemm(_)) => (130, 136, 96),
        Some(Problem::Row(_) | Problem::SiluMul) => (3, 296, 0),
        Some(Problem::Copy) => (130, 136, 0),
        Some(Problem::Attention) => (130, 2, 0),
        None => (3, 296, 0),
    }
}

/// `--m`, `--n`, `--k` over the family's default shape; K is N when only `--n` is given.
fn shape_of(a: &SimArgs, art: &KernelArtifact) -> (usize, usize, usize) {
    let (dm, dn, dk) = default_shape(art.problem);
    let n = a.n.unwrap_or(dn);
    let k = a.k.unwrap_or(if a.n.is_some() { n } else { dk });
    (a.m.unwrap_or(dm), n, k)
}

/// One interleaving: the scheduler seed (also the inputs' seed) and the policy.
struct Schedule {
    seed: u64,
    /// The emulated device's SM count (`SMS` in a persistent kernel's grid).
    sms: u32,
    policy: Policy,
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
    /// ([`default_shape`]).
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
    #[arg(long, default_value = "random")]
    clc: String,
    /// Write an SVG timeline of the first schedule (warps of CTA 0 and the asynchronous
    /// engines over emulated time) to FILE, and its events to FILE with extension `.json`.
    #[arg(long, value_name = "FILE")]
    timeline: Option<std::path::PathBuf>,
}

/// Runs `tirx sim`; `Ok(true)` when every run matched.
pub fn sim(a: &SimArgs) -> Result<bool, String> {
    let k = registry::find(&a.name)
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
    let clc = match a.clc.as_str() {
        "fail" => ClcMode::Fail,
        "succeed" => ClcMode::Succeed,
        "random" => ClcMode::Random,
        other => return Err(format!("--clc {other}: fail, succeed or random")),
    };
    let policy = Policy {
        launch_regs: a.launch_regs,
        clc,
        ..Policy::default()
    };
    let mut ok = true;
    // The timeline records the first schedule run, then is spent.
    let mut timeline = a.timeline.as_deref();
    for art in arts {
        let (m, n, k) = shape_of(a, art);
        // A row kernel computes the first `C` columns of a row (its capacity); the host never
        // gives it a longer row (`row_kernels::host::choose`), so neither does `tirx sim`.
        if let (Some(Problem::Row(_)), Some(c)) = (art.problem, capacity(art))
            && c < n
        {
            println!(
                "{} {} {}: skipped, it holds rows of {c} columns, not {}",
                art.kernel,
                art.config,
                art.target.name(),
                n
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
            let policy = Policy {
                timeline: record.is_some(),
                ..policy
            };
            let result = one(
                art,
                (m, n, k),
                &Schedule {
                    seed,
                    sms: a.sms,
                    policy,
                },
            );
            if let (Some(file), Ok((stats, _))) = (record, &result) {
                // The title names the whole shape: a GEMM's K too.
                let title = match art.problem {
                    Some(Problem::Gemm(_)) => format!("{label}, K = {k}"),
                    _ => label.clone(),
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
    let json = file.with_extension("json");
    let write = |p: &std::path::Path, text: String| {
        std::fs::write(p, text).map_err(|e| format!("writing {}: {e}", p.display()))
    };
    write(file, tirx_kernels::timeline::svg(tl, title))?;
    write(&json, tirx_kernels::timeline::json(tl, title))?;
    println!(
        "timeline of {title}: {} and {} ({} warp spans, {} async operations over {} steps)",
        file.display(),
        json.display(),
        tl.warps.len(),
        tl.ops.len(),
        tl.end
    );
    Ok(())
}

/// One run: inputs from `seed`, the emulator, the check. The verdict text on success.
fn one(
    art: &KernelArtifact,
    (m, n, k): (usize, usize, usize),
    s: &Schedule,
) -> Result<(Stats, String), String> {
    let mut rng = Rng::new(s.seed);
    let mut dev = Device::new();
    match art.problem {
        Some(Problem::Copy) => {
            let data = rng.bf16s(m * n);
            let src = upload(&mut dev, &data, &[m, n]);
            let dst = upload(&mut dev, &[], &[m, n]);
            let stats = launch(art, &mut dev, &[src, dst.clone()], &[], s)?;
            let got = download(&dev, &dst);
            match got
                .iter()
                .zip(&data)
                .position(|(g, d)| g.to_bits() != d.to_bits())
            {
                None => Ok((stats, "bit-exact".into())),
                Some(i) => Err(format!("element {i} is {} , the input {}", got[i], data[i])),
            }
        }
        Some(Problem::Row(op)) => row(art, op, m, n, s, &mut rng, &mut dev),
        Some(Problem::SiluMul) => {
            let xs: Vec<bf16> = (0..m * n)
                .map(|_| bf16::from_f32(8.0 * rng.unit() - 4.0))
                .collect();
            let gs: Vec<bf16> = (0..m * n)
                .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
                .collect();
            let x = upload(&mut dev, &xs, &[m, n]);
            let g = upload(&mut dev, &gs, &[m, n]);
            let y = upload(&mut dev, &[], &[m, n]);
            let stats = launch(art, &mut dev, &[x, g, y.clone()], &[], s)?;
            let mut worst = 0.0f64;
            for (i, ((xv, gv), yv)) in xs.iter().zip(&gs).zip(download(&dev, &y)).enumerate() {
                let (xf, gf) = (xv.to_f64(), gv.to_f64());
                let want = xf / (1.0 + (-xf).exp()) * gf;
                let err = (yv.to_f64() - want).abs() / (want.abs() + 1e-2);
                if !err.is_finite() || err > reference::RTOL {
                    return Err(format!("element {i} is {yv}, the reference {want:.6e}"));
                }
                worst = worst.max(err);
            }
            Ok((
                stats,
                format!("max error {worst:.2e} (tolerance {:.2e})", reference::RTOL),
            ))
        }
        Some(Problem::Gemm(_)) => gemm(art, (m, n, k), s, &mut rng, &mut dev),
        Some(Problem::Attention) => attention(art, m, n, s),
        None => {
            // The emulator's own refusal names the first instruction it cannot run.
            let module = ptx::parse(art.ptx).map_err(|e| e.to_string())?;
            tirx_sim::Program::new(&module, &(art.signature)().entry).map_err(|e| e.to_string())?;
            Err(format!(
                "`{}` solves no problem `tirx sim` knows",
                art.kernel
            ))
        }
    }
}

fn row(
    art: &KernelArtifact,
    op: RowOp,
    m: usize,
    n: usize,
    s: &Schedule,
    rng: &mut Rng,
    dev: &mut Device,
) -> Result<(Stats, String), String> {
    let scale = 1.0 + 7.0 * rng.unit();
    let x: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32((rng.unit() * 2.0 - 1.0) * scale))
        .collect();
    let w: Vec<bf16> = (0..n).map(|_| bf16::from_f32(0.5 + rng.unit())).collect();
    let b: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
    let p = RowProblem::new(op, m, n);
    let sig = (art.signature)();
    let xm = upload(dev, &x, &[m, n]);
    let ym = upload(dev, &[], &[m, n]);
    let wm = upload(dev, &w, &[n]);
    let bm = upload(dev, &b, &[n]);
    let tensors: Vec<TensorMeta> = sig
        .tensors
        .iter()
        .map(|t| match t.name.as_str() {
            "x" => Ok(xm.clone()),
            "y" => Ok(ym.clone()),
            "w" => Ok(wm.clone()),
            "b" => Ok(bm.clone()),
            other => Err(format!("a row kernel with a tensor `{other}`")),
        })
        .collect::<Result<_, _>>()?;
    let scalars: Vec<f32> = sig.scalars.iter().map(|_| p.eps).collect();
    let stats = launch(art, dev, &tensors, &scalars, s)?;
    let got = download(dev, &ym);
    let want = reference::reference(
        &p,
        &x,
        op.takes_weight().then_some(&w[..]),
        op.takes_bias().then_some(&b[..]),
    );
    let err = reference::check(op, &got, &want, n).map_err(|e| e.to_string())?;
    Ok((
        stats,
        format!("max error {err:.2e} (tolerance {:.2e})", reference::RTOL),
    ))
}

/// A GEMM on M×N×K: D = α·A·op(B) + β·C against the f64 reference, each element within half
/// an ulp of D's type plus `(K + 2)·2⁻²³·(|α|·Σ|a·b| + |β·c|)`.
fn gemm(
    art: &KernelArtifact,
    (m, n, kk): (usize, usize, usize),
    s: &Schedule,
    rng: &mut Rng,
    dev: &mut Device,
) -> Result<(Stats, String), String> {
    let sig = (art.signature)();
    let elem = |name: &str| sig.tensors.iter().find(|t| t.name == name).map(|t| t.elem);
    let (Some(ta), Some(td)) = (elem("a"), elem("d")) else {
        return Err(format!("`{}` is not an a, b, d GEMM", art.kernel));
    };
    if sig
        .tensors
        .iter()
        .any(|t| !["a", "b", "c", "bias", "d", "sa", "sb"].contains(&t.name.as_str()))
    {
        return Err(format!(
            "`{}` takes tensors `tirx sim` has no reference for",
            art.kernel
        ));
    }
    let nn = simulate::b_is_k_by_n(art);
    let tc = elem("c");
    let (ab, av) = random_values(rng, ta, m * kk);
    let (bb, bv) = random_values(rng, ta, n * kk);
    let (cb, cv) = random_values(rng, tc.unwrap_or(td), m * n);
    let (alpha, beta) = if tc.is_some() {
        (1.5f32, -0.75f32)
    } else {
        (1.0, 0.0)
    };
    // D = act(A·op(B) + bias): the bias vector [N] and the activation from the problem.
    let act = match art.problem {
        Some(Problem::Gemm(GemmProblem {
            epilogue: Epilogue::Bias(act),
            ..
        })) => Some(act),
        _ => None,
    };
    let tbias = elem("bias").unwrap_or(td);
    let (biasb, biasv) = random_values(rng, tbias, n);
    let biasm = put(dev, &biasb, tbias, &[n]);
    let am = put(dev, &ab, ta, &[m, kk]);
    let bm = put(dev, &bb, ta, &if nn { [kk, n] } else { [n, kk] });
    let cm = put(dev, &cb, tc.unwrap_or(td), &[m, n]);
    // The FP8 GEMMs' row-wise scales (`sa` [M], `sb` [N]), drawn only for them.
    let rows = art.problem
        == Some(Problem::Gemm(GemmProblem {
            b: tirx::problem::BLayout::Tn,
            epilogue: Epilogue::ScaleRows,
        }));
    let draw = |rng: &mut Rng, len: usize| -> Vec<f32> {
        (0..if rows { len } else { 0 })
            .map(|_| 1.5 + rng.unit())
            .collect()
    };
    let (sav, sbv) = (draw(rng, m), draw(rng, n));
    let f32_bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let sam = put(dev, &f32_bytes(&sav), ElemType::F32, &[sav.len()]);
    let sbm = put(dev, &f32_bytes(&sbv), ElemType::F32, &[sbv.len()]);
    let (scale_a, scale_b) = super::sim_cases::TENSOR_SCALES;
    let s8 = |i: usize, j: usize| {
        if rows {
            f64::from(sav[i]) * f64::from(sbv[j])
        } else if sig.scalars.iter().any(|s| s == "scale_a") {
            f64::from(scale_a) * f64::from(scale_b)
        } else {
            1.0
        }
    };
    let dbytes = m * n * td.bytes() as usize;
    let dm = put(dev, &vec![0xff; dbytes], td, &[m, n]);
    let tensors: Vec<TensorMeta> = sig
        .tensors
        .iter()
        .map(|t| match t.name.as_str() {
            "a" => am.clone(),
            "b" => bm.clone(),
            "c" => cm.clone(),
            "bias" => biasm.clone(),
            "sa" => sam.clone(),
            "sb" => sbm.clone(),
            _ => dm.clone(),
        })
        .collect();
    let scalars: Vec<f32> = sig
        .scalars
        .iter()
        .map(|s| match s.as_str() {
            "alpha" => alpha,
            "scale_a" => scale_a,
            "scale_b" => scale_b,
            _ => beta,
        })
        .collect();
    let stats = launch(art, dev, &tensors, &scalars, s)?;
    let got = decode(&dev.read(dm.addr, dbytes).map_err(|e| e.to_string())?, td);
    let half_ulp = match td {
        ElemType::Bf16 => 1.0 / 256.0,
        ElemType::F16 => 1.0 / 2048.0,
        ElemType::F32 => 1.0 / 16_777_216.0,
        ElemType::E4m3 => 1.0 / 16.0,
        ElemType::E5m2 => 1.0 / 8.0,
    };
    let mut worst = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let (mut dot, mut mag) = (0.0, 0.0);
            for p in 0..kk {
                let b = if nn { bv[p * n + j] } else { bv[j * kk + p] };
                dot += av[i * kk + p] * b;
                mag += (av[i * kk + p] * b).abs();
            }
            let c = if tc.is_some() { cv[i * n + j] } else { 0.0 };
            let sc = s8(i, j);
            let mut w = sc * (f64::from(alpha) * dot + f64::from(beta) * c);
            let scale = sc.abs() * (f64::from(alpha.abs()) * mag + (f64::from(beta) * c).abs());
            // D rounded (half an ulp of the result) after an f32 accumulation error `acc`.
            let mut acc = (kk as f64 + 2.0) * scale / 8_388_608.0;
            if let Some(act) = act {
                (w, acc, _) = simulate::bias_act_bound(act, w, biasv[j], acc);
            }
            let bound = (w.abs() + acc) * half_ulp + acc + 1e-30;
            let g = got[i * n + j];
            if (g - w).abs() > bound || g.is_nan() {
                return Err(format!(
                    "D({i}, {j}) is {g}, the reference {w:.6e} (bound {bound:.2e})"
                ));
            }
            worst = worst.max((g - w).abs() / bound);
        }
    }
    Ok((
        stats,
        format!("K = {kk}, worst error {worst:.2} of the bound"),
    ))
}

/// Attention ([`simulate::attention`]): `m` queries and keys, `n` heads.
fn attention(
    art: &KernelArtifact,
    m: usize,
    n: usize,
    s: &Schedule,
) -> Result<(Stats, String), String> {
    let (stats, worst) = simulate::attention(art, (m, n.max(1)), s.sms, s.seed, &s.policy)?;
    let causal = art.int("CAUSAL") == Some(1);
    let d = art.int("D").unwrap_or(0);
    Ok((
        stats,
        format!("hd {d}, causal {causal}: max |o − ref| {worst:.2e}"),
    ))
}

/// Plans the launch as the runtime does on an H200 and runs it in the emulator.
fn launch(
    art: &KernelArtifact,
    dev: &mut Device,
    tensors: &[TensorMeta],
    scalars: &[f32],
    s: &Schedule,
) -> Result<Stats, String> {
    let sig = (art.signature)();
    simulate::launch_with(
        art.ptx,
        &sig,
        dev,
        (tensors, scalars),
        s.seed,
        &DeviceLimits {
            sm_count: s.sms,
            ..DeviceLimits::HOPPER
        },
        &s.policy,
    )
    .map_err(|e| e.to_string())
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
        let gemm = default_shape(Some(Problem::Gemm(tirx::problem::GemmProblem {
            b: tirx::problem::BLayout::Tn,
            epilogue: tirx::problem::Epilogue::Plain,
        })));
        // Tails in M and N, and rows whose byte strides TMA takes.
        assert!(
            !gemm.0.is_multiple_of(64)
                && !gemm.1.is_multiple_of(64)
                && (gemm.2 * 2).is_multiple_of(16)
        );
    }
}
