//! The host side of the row kernels: which artifact runs a row problem, its launch, and the
//! check `tirx run` does against an f64 reference.
//!
//! Choice: among the catalogue's artifacts that solve the op on the device's target, the one
//! whose row capacity ([`capacity`]: `CAP`, or `C`, the columns its register tile holds) is
//! the smallest that holds the row — columns past `N` are masked, so any `N ≤ C` runs, and
//! the smallest `C` wastes the fewest registers and lanes; among configs of one capacity, the
//! first the kernel lists (kernels list their measured-fastest first). Rows longer than every `C` are a
//! typed error listing the capacities, never a launch.

use crate::catalogue;
use half::bf16;
use tirx::abi::ConfigValue;
use tirx::problem::{Problem, RowOp};
use tirx::runtime::{DeviceLimits, TensorMeta, plan_launch_with};
use tirx::{Kernel, KernelArtifact, Runtime, RuntimeError, Target, Tensor, TensorArg};

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

/// The artifact that runs `op` on rows of `cols` columns on `target`, or why none does (the
/// choice by capacity alone; [`choose_for`] also asks the launch planner).
pub fn choose(
    op: RowOp,
    cols: usize,
    target: Target,
) -> Result<(&'static Kernel, &'static KernelArtifact), RuntimeError> {
    choose_where(op, cols, target, |_| Ok(()))
}

/// The tensors of a row problem as the launch planner sees them: `x`, `y`, and `w`/`b` where
/// the op takes them.
pub struct RowMetas<'a> {
    /// `x` [M, N].
    pub x: &'a TensorMeta,
    /// `w` [N].
    pub w: Option<&'a TensorMeta>,
    /// `b` [N].
    pub b: Option<&'a TensorMeta>,
    /// `y` [M, N].
    pub y: &'a TensorMeta,
}

/// [`choose`] among the artifacts whose launch the runtime's planner accepts on these
/// tensors: a kernel that stages rows by TMA needs 16-byte aligned rows, so a row of an odd
/// length goes to a register kernel of the same capacity, or the next one up.
pub fn choose_for(
    op: RowOp,
    t: &RowMetas<'_>,
    target: Target,
    limits: &DeviceLimits,
) -> Result<(&'static Kernel, &'static KernelArtifact), RuntimeError> {
    let cols = t.x.shape.get(1).copied().unwrap_or(0);
    choose_where(op, cols, target, |a| {
        let sig = (a.signature)();
        let mut metas = Vec::new();
        for p in &sig.tensors {
            let m = match p.name.as_str() {
                "x" => Some(t.x),
                "y" => Some(t.y),
                "w" => t.w,
                "b" => t.b,
                _ => None,
            };
            metas.push(
                m.ok_or_else(|| {
                    format!("needs the vector `{}`, which this problem lacks", p.name)
                })?
                .clone(),
            );
        }
        let scalars = vec![0.0; sig.scalars.len()];
        plan_launch_with(&sig, &metas, &scalars, limits)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

/// The smallest-capacity artifact for `op` that holds the row and that `fits` accepts (the
/// first listed among equals).
fn choose_where(
    op: RowOp,
    cols: usize,
    target: Target,
    fits: impl Fn(&KernelArtifact) -> Result<(), String>,
) -> Result<(&'static Kernel, &'static KernelArtifact), RuntimeError> {
    let mut table = String::new();
    let mut best: Option<(&'static Kernel, &'static KernelArtifact, usize)> = None;
    for k in catalogue::all() {
        for a in k.artifacts {
            if a.problem != Some(Problem::Row(op)) || a.target != target {
                continue;
            }
            match capacity(a) {
                Some(c) if c >= cols => match fits(a) {
                    Ok(()) if best.is_none_or(|(_, _, b)| c < b) => best = Some((k, a, c)),
                    Ok(()) => {}
                    Err(why) => table += &format!("  {} {}: {why}\n", k.name, a.config),
                },
                Some(c) => {
                    table += &format!("  {} {}: holds rows of {c} columns\n", k.name, a.config)
                }
                None => table += &format!("  {} {}: declares no capacity `C`\n", k.name, a.config),
            }
        }
    }
    best.map(|(k, a, _)| (k, a))
        .ok_or_else(|| RuntimeError::NoKernelFits {
            problem: format!(
                "{} of rows of {cols} columns on {}",
                op.name(),
                target.name()
            ),
            table,
        })
}

/// The inputs of one row op.
pub struct RowArgs<'a> {
    /// `x` [M, N].
    pub x: &'a Tensor<bf16>,
    /// `w` [N] (RMSNorm, LayerNorm).
    pub w: Option<&'a Tensor<bf16>>,
    /// `b` [N] (LayerNorm).
    pub b: Option<&'a Tensor<bf16>>,
    /// `eps` (RMSNorm, LayerNorm).
    pub eps: f32,
}

/// Launches `art` on `args` into `y` (the runtime checks every shape against the signature).
pub fn launch(
    rt: &Runtime,
    art: &KernelArtifact,
    args: &RowArgs<'_>,
    y: &mut Tensor<bf16>,
) -> Result<(), RuntimeError> {
    let sig = (art.signature)();
    let mut tensors: Vec<TensorArg<'_>> = Vec::new();
    for t in &sig.tensors {
        let view = match t.name.as_str() {
            "x" => args.x.view(),
            "y" => y.view(),
            "w" | "b" => {
                let v = if t.name == "w" { args.w } else { args.b };
                v.ok_or_else(|| RuntimeError::NoKernelFits {
                    problem: format!("`{}` needs the vector `{}`", art.kernel, t.name),
                    table: String::new(),
                })?
                .view()
            }
            other => {
                return Err(RuntimeError::NoKernelFits {
                    problem: format!("`{}` takes a tensor `{other}` no row op has", art.kernel),
                    table: String::new(),
                });
            }
        };
        tensors.push(view);
    }
    let scalars: Vec<f32> = sig.scalars.iter().map(|_| args.eps).collect();
    rt.launch_with(art, &tensors, &scalars)
}

/// Chooses and launches the row kernel for `op` on `x`'s shape.
pub fn run(
    rt: &Runtime,
    op: RowOp,
    args: &RowArgs<'_>,
    y: &mut Tensor<bf16>,
) -> Result<(), RuntimeError> {
    let (xv, yv) = (args.x.view(), y.view());
    let (wv, bv) = (args.w.map(|w| w.view()), args.b.map(|b| b.view()));
    let metas = RowMetas {
        x: xv.meta(),
        w: wv.as_ref().map(|v| v.meta()),
        b: bv.as_ref().map(|v| v.meta()),
        y: yv.meta(),
    };
    let (_, art) = choose_for(op, &metas, rt.target()?, rt.limits())?;
    launch(rt, art, args, y)
}

/// `tirx run` of a row kernel's config: random rows (a spread of magnitudes, so softmax sees
/// large exponents and the norms uneven rows), a poisoned output, the f64 reference of
/// `crate::rows::reference` on sampled rows, and its tolerance.
pub fn check(
    rt: &Runtime,
    kernel: &'static Kernel,
    config: &str,
    op: RowOp,
    (m, n): (usize, usize),
    seed: u64,
) -> Result<crate::registry::CheckReport, RuntimeError> {
    use crate::reference::Rng;
    use crate::rows::{RowProblem, reference};
    let art = tirx::select(kernel.artifacts, config, rt.target()?)?;
    let mut rng = Rng::new(seed);
    let scale = 1.0 + 7.0 * rng.unit();
    let host: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32((rng.unit() * 2.0 - 1.0) * scale))
        .collect();
    let wv: Vec<bf16> = (0..n).map(|_| bf16::from_f32(0.5 + rng.unit())).collect();
    let bv: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
    let x = rt.upload(&host, &[m, n])?;
    let w = rt.upload(&wv, &[n])?;
    let b = rt.upload(&bv, &[n])?;
    let mut y = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut y)?;
    let p = RowProblem {
        op,
        rows: m,
        cols: n,
        eps: 1e-6,
    };
    let args = RowArgs {
        x: &x,
        w: op.takes_weight().then_some(&w),
        b: op.takes_bias().then_some(&b),
        eps: p.eps,
    };
    launch(rt, art, &args, &mut y)?;
    rt.synchronize()?;
    let got = rt.download(&y)?;
    let rows = reference::sample_rows(m, 256);
    let want = reference::reference_rows(
        &p,
        &host,
        args.w.map(|_| &wv[..]),
        args.b.map(|_| &bv[..]),
        &rows,
    );
    let got_rows: Vec<bf16> = rows
        .iter()
        .flat_map(|&r| got[r * n..(r + 1) * n].iter().copied())
        .collect();
    let (error, ok, blocks) = match reference::check(op, &got_rows, &want, n) {
        Ok(e) => (e, true, String::new()),
        Err(e) => (f64::INFINITY, false, format!("  {e}")),
    };
    Ok(crate::registry::CheckReport {
        shape: (m, n, 0),
        error,
        ok,
        blocks,
    })
}

/// `tirx run` of `silu_mul`: random x and g, a poisoned y, every element against
/// `silu(x)·g` in f64 within the row ops' bf16 tolerance.
pub fn check_silu_mul(
    rt: &Runtime,
    kernel: &'static Kernel,
    config: &str,
    (m, n): (usize, usize),
    seed: u64,
) -> Result<crate::registry::CheckReport, RuntimeError> {
    use crate::reference::Rng;
    let art = tirx::select(kernel.artifacts, config, rt.target()?)?;
    let mut rng = Rng::new(seed);
    let xs: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32(8.0 * rng.unit() - 4.0))
        .collect();
    let gs: Vec<bf16> = (0..m * n)
        .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
        .collect();
    let x = rt.upload(&xs, &[m, n])?;
    let g = rt.upload(&gs, &[m, n])?;
    let mut y = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut y)?;
    rt.launch_with(art, &[x.view(), g.view(), y.view()], &[])?;
    rt.synchronize()?;
    let got = rt.download(&y)?;
    let mut worst = 0.0f64;
    let mut bad = None;
    for (i, ((xv, gv), yv)) in xs.iter().zip(&gs).zip(&got).enumerate() {
        let (xf, gf) = (xv.to_f64(), gv.to_f64());
        let want = xf / (1.0 + (-xf).exp()) * gf;
        let err = (yv.to_f64() - want).abs() / (want.abs() + 1e-2);
        if !err.is_finite() || err > crate::rows::reference::RTOL {
            bad.get_or_insert(format!("  element {i}: {} vs {want:.6e}", yv.to_f64()));
        }
        worst = worst.max(err);
    }
    Ok(crate::registry::CheckReport {
        shape: (m, n, 0),
        error: worst,
        ok: bad.is_none(),
        blocks: bad.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_capacity_that_holds_the_row_is_chosen() {
        for op in RowOp::ALL {
            let mut last = 0;
            for n in [
                1,
                1024,
                1025,
                4096,
                8192,
                16384,
                16385,
                32768,
                65536,
                1 << 20,
            ] {
                let (_, a) = choose(op, n, Target::Sm90a).expect("fits");
                let cap = capacity(a).expect("a capacity");
                assert!(cap >= n, "{op} {n}: capacity {cap}");
                // No other artifact of the op holds the row with less.
                for k in catalogue::all() {
                    for b in k
                        .artifacts
                        .iter()
                        .filter(|b| b.problem == Some(Problem::Row(op)))
                    {
                        if b.target == Target::Sm90a
                            && let Some(c) = capacity(b)
                        {
                            assert!(
                                c < n || c >= cap,
                                "{op} {n}: {} holds {c} < {cap}",
                                b.config
                            );
                        }
                    }
                }
                assert!(cap >= last, "capacities grow with the row");
                last = cap;
            }
        }
    }

    /// Tensors as the planner sees them: row-major at a 256-byte aligned address.
    fn metas(op: RowOp, m: usize, n: usize) -> (TensorMeta, Option<TensorMeta>, TensorMeta) {
        use tirx::abi::ElemType;
        let x = TensorMeta::row_major(ElemType::Bf16, &[m, n], 1 << 20);
        let w = op
            .takes_weight()
            .then(|| TensorMeta::row_major(ElemType::Bf16, &[n], 1 << 30));
        let y = TensorMeta::row_major(ElemType::Bf16, &[m, n], 1 << 32);
        (x, w, y)
    }

    #[test]
    fn rows_tma_cannot_stage_go_to_a_register_kernel() {
        for op in [RowOp::Softmax, RowOp::RmsNorm] {
            for n in [24577, 30001, 32767] {
                let (x, w, y) = metas(op, 64, n);
                let t = RowMetas {
                    x: &x,
                    w: w.as_ref(),
                    b: None,
                    y: &y,
                };
                let (k, a) = choose_for(op, &t, Target::Sm90a, &DeviceLimits::HOPPER).unwrap();
                assert!(
                    !k.name.ends_with("_staged"),
                    "{op} {n}: {} {}",
                    k.name,
                    a.config
                );
                assert!(capacity(a).unwrap() >= n);
                // The planner is what refuses the staged kernels (their tensor maps).
                let all = catalogue::all();
                let staged = all
                    .iter()
                    .filter(|k| k.name.ends_with("_staged"))
                    .flat_map(|k| k.artifacts)
                    .filter(|a| a.problem == Some(Problem::Row(op)));
                for a in staged {
                    let sig = (a.signature)();
                    let mut ts = vec![x.clone()];
                    ts.extend(w.clone());
                    ts.push(y.clone());
                    let scalars = vec![0.0; sig.scalars.len()];
                    let e = plan_launch_with(&sig, &ts, &scalars, &DeviceLimits::HOPPER);
                    assert!(e.is_err(), "{op} {n}: {} accepted", a.config);
                }
            }
            // An aligned row may be staged: the planner accepts every capacity choice.
            let (x, w, y) = metas(op, 64, 32768);
            let t = RowMetas {
                x: &x,
                w: w.as_ref(),
                b: None,
                y: &y,
            };
            let planned = choose_for(op, &t, Target::Sm90a, &DeviceLimits::HOPPER).unwrap();
            let plain = choose(op, 32768, Target::Sm90a).unwrap();
            assert_eq!(planned.1.config, plain.1.config, "{op}");
            assert_eq!(planned.0.name, plain.0.name, "{op}");
        }
    }

    #[test]
    fn a_row_longer_than_every_kernel_is_a_typed_error_with_the_capacities() {
        let e = choose(RowOp::Softmax, (1 << 20) + 1, Target::Sm90a).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("softmax of rows of 1048577 columns"),
            "{text}"
        );
        assert!(text.contains("holds rows of 1024 columns"), "{text}");
        // No row kernel is compiled for Blackwell yet.
        assert!(choose(RowOp::RmsNorm, 64, Target::Sm100a).is_err());
    }
}
