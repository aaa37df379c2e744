//! The host side of the row kernels: which artifact runs a row problem, its launch, and the
//! check `tirx run` does against an f64 reference.
//!
//! The choice is the one host-side dispatcher's ([`crate::dispatch`]) for a [`RowRequest`]:
//! every artifact of the catalogue is judged from its metadata (the op it solves, its row
//! capacity, the tensors it takes, and whether the runtime would launch it on these tensors),
//! and the accepted ones ranked by the tune cache, then the cost model
//! ([`crate::row_kernels::request`]: the smallest capacity that holds the row). Rows longer than
//! every capacity are a typed error with the table of every candidate, never a launch.

use crate::catalogue;
use crate::dispatch::{self, Choice, Device, tune::Cache};
use crate::row_kernels::request::RowRequest;
use half::bf16;
use tirx::problem::RowOp;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor};

pub use crate::row_kernels::request::capacity;

/// The artifact the host takes for `request` on `device`, or the table of why none fits.
pub fn choose(request: &RowRequest, device: &Device) -> Result<Choice, RuntimeError> {
    dispatch::choose(request, &catalogue::all(), device, Cache::host())
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

/// Launches `art` on `args` into `y` by role (the runtime checks every shape against the
/// signature); a vector the kernel takes that `args` lacks is a typed error naming it.
pub fn launch(
    rt: &Runtime,
    art: &KernelArtifact,
    args: &RowArgs<'_>,
    y: &mut Tensor<bf16>,
) -> Result<(), RuntimeError> {
    let mut roles = vec![("x", args.x.view()), ("y", y.view())];
    roles.extend(args.w.map(|w| ("w", w.view())));
    roles.extend(args.b.map(|b| ("b", b.view())));
    // `x` as one dimension, for the kernels that stage rows of any length (`staged_odd.rs`).
    roles.extend(args.x.view().merge_outer().map(|f| ("xf", f)));
    crate::family::launch_roles(rt, art, &roles, &[("eps", args.eps)])
}

/// Chooses ([`choose`]) and launches the row kernel for `op` on `x`'s shape; returns the
/// choice.
pub fn run(
    rt: &Runtime,
    op: RowOp,
    args: &RowArgs<'_>,
    y: &mut Tensor<bf16>,
) -> Result<Choice, RuntimeError> {
    let choice = {
        let (xv, yv) = (args.x.view(), y.view());
        let (wv, bv) = (args.w.map(|w| w.view()), args.b.map(|b| b.view()));
        let request = RowRequest::on(op, &xv, wv.as_ref(), bv.as_ref(), &yv, args.eps);
        // Remembered for the process (`dispatch::remember`): the tensors' layouts are the key.
        let mut tensors = vec![xv.meta(), yv.meta()];
        tensors.extend(wv.as_ref().map(|w| w.meta()));
        tensors.extend(bv.as_ref().map(|b| b.meta()));
        dispatch::choose_remembered(&request, &tensors, &[], &Device::of(rt)?)?
    };
    launch(rt, choice.artifact, args, y)?;
    Ok(choice)
}

/// `tirx run` of a row kernel's config: random rows (a spread of magnitudes, so softmax sees
/// large exponents and the norms uneven rows), a poisoned output, the f64 reference of
/// `crate::rows::reference` on sampled rows, and its tolerance.
pub fn check(
    rt: &Runtime,
    art: &KernelArtifact,
    op: RowOp,
    (m, n): (usize, usize),
    seed: u64,
) -> Result<crate::family::CheckReport, RuntimeError> {
    use crate::reference::Rng;
    use crate::rows::{RowProblem, reference};
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
    Ok(crate::family::CheckReport {
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
    art: &KernelArtifact,
    (m, n): (usize, usize),
    seed: u64,
) -> Result<crate::family::CheckReport, RuntimeError> {
    use crate::reference::Rng;
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
    let roles = [("x", x.view()), ("g", g.view()), ("y", y.view())];
    crate::family::launch_roles(rt, art, &roles, &[])?;
    rt.synchronize()?;
    let got = rt.download(&y)?;
    let mut worst = 0.0f64;
    let mut bad = None;
    for (i, ((xv, gv), yv)) in xs.iter().zip(&gs).zip(&got).enumerate() {
        let (xf, gf) = (xv.to_f64(), gv.to_f64());
        let want = super::family::silu_mul_f64(xf, gf);
        let err = (yv.to_f64() - want).abs() / (want.abs() + 1e-2);
        if !err.is_finite() || err > crate::rows::reference::RTOL {
            bad.get_or_insert(format!("  element {i}: {} vs {want:.6e}", yv.to_f64()));
        }
        worst = worst.max(err);
    }
    Ok(crate::family::CheckReport {
        shape: (m, n, 0),
        error: worst,
        ok: bad.is_none(),
        blocks: bad.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Reject;
    use tirx::problem::Problem;
    use tirx::runtime::{DeviceLimits, TensorMeta, plan_launch_with};

    fn pick(op: RowOp, m: usize, n: usize) -> Result<Choice, RuntimeError> {
        choose(&RowRequest::contiguous(op, m, n), &Device::h200())
    }

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
                let a = pick(op, 64, n).expect("fits").artifact;
                let cap = capacity(a).expect("a capacity");
                assert!(cap >= n, "{op} {n}: capacity {cap}");
                // No other artifact of the op that would launch on these tensors holds the row
                // with less (a row of an odd length refuses the kernels that stage it by TMA).
                let verdicts = dispatch::judge(
                    &RowRequest::contiguous(op, 64, n),
                    &catalogue::all(),
                    &Device::h200(),
                );
                for v in verdicts.iter().filter(|v| v.outcome.is_ok()) {
                    if let Some(c) = capacity(v.artifact) {
                        assert!(
                            c < n || c >= cap,
                            "{op} {n}: {} {} holds {c} < {cap}",
                            v.artifact.kernel,
                            v.artifact.config
                        );
                    }
                }
                // Among 16-byte aligned rows (which every kernel takes; an odd row refuses the
                // ones that stage it by TMA and may take a longer capacity than the next length).
                if n % 8 == 0 {
                    assert!(cap >= last, "capacities grow with the row");
                    last = cap;
                }
            }
        }
    }

    #[test]
    fn rows_a_2d_map_cannot_stage_go_to_the_flat_view() {
        for op in [RowOp::Softmax, RowOp::RmsNorm] {
            for n in [24577, 30001, 32767] {
                let c = pick(op, 64, n).unwrap();
                // A tensor map of `x` [M, N] itself (a kernel staging through the flat view
                // `xf` maps that instead, `staged_odd.rs`).
                let by_tma = |a: &KernelArtifact| {
                    a.sig().params.iter().any(|p| {
                        matches!(p, tirx::abi::AbiParam::TensorMap { tensor, .. } if tensor == "x")
                    })
                };
                assert!(!by_tma(c.artifact), "{op} {n}: {}", c.label());
                let flat = c.artifact.sig().tensors.iter().any(|t| t.name == "xf");
                assert!(flat, "{op} {n}: {}", c.label());
                assert!(capacity(c.artifact).unwrap() >= n);
                // The planner is what refuses the kernels that stage rows by TMA.
                let verdicts = dispatch::judge(
                    &RowRequest::contiguous(op, 64, n),
                    &catalogue::all(),
                    &Device::h200(),
                );
                let staged: Vec<_> = verdicts
                    .iter()
                    .filter(|v| v.artifact.problem == Some(Problem::Row(op)) && by_tma(v.artifact))
                    .collect();
                assert!(!staged.is_empty(), "{op}: a kernel stages rows by TMA");
                for v in staged {
                    assert!(
                        matches!(
                            &v.outcome,
                            Err(Reject::Launch(_)) | Err(Reject::Capacity { .. })
                        ),
                        "{op} {n}: {} {:?}",
                        v.artifact.config,
                        v.outcome
                    );
                }
            }
            // An aligned row may be staged: the planner accepts it.
            let (x, w, y) = (
                TensorMeta::row_major(tirx::abi::ElemType::Bf16, &[64, 32768], 1 << 20),
                TensorMeta::row_major(tirx::abi::ElemType::Bf16, &[32768], 1 << 30),
                TensorMeta::row_major(tirx::abi::ElemType::Bf16, &[64, 32768], 1 << 32),
            );
            let c = pick(op, 64, 32768).unwrap();
            let sig = c.artifact.sig();
            let mut ts = vec![x];
            if op.takes_weight() {
                ts.push(w);
            }
            ts.push(y);
            let scalars = vec![0.0; sig.scalars.len()];
            assert!(plan_launch_with(sig, &ts, &scalars, &DeviceLimits::HOPPER).is_ok());
        }
    }

    #[test]
    fn the_flat_view_is_planned_only_as_xs_own() {
        use tirx::abi::ElemType::Bf16;
        let c = pick(RowOp::Softmax, 64, 20001).unwrap();
        let sig = c.artifact.sig();
        let x = TensorMeta::row_major(Bf16, &[64, 20001], 1 << 20);
        let y = TensorMeta::row_major(Bf16, &[64, 20001], 1 << 32);
        let with = |xf: TensorMeta| -> Vec<TensorMeta> {
            let roles = [("x", &x), ("xf", &xf), ("y", &y)];
            sig.tensors
                .iter()
                .map(|t| roles.iter().find(|r| r.0 == t.name).unwrap().1.clone())
                .collect()
        };
        let plan = |xf| plan_launch_with(sig, &with(xf), &[], &DeviceLimits::HOPPER);
        assert!(plan(x.merge_outer().unwrap()).is_ok());
        let short = TensorMeta::row_major(Bf16, &[64 * 20001 - 1], 1 << 20);
        let e = plan(short).unwrap_err().to_string();
        assert!(e.contains("L == M * N"), "{e}");
    }

    #[test]
    fn a_row_longer_than_every_kernel_is_a_typed_error_with_the_table() {
        let e = pick(RowOp::Softmax, 4, (1 << 20) + 1).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("softmax of 4x1048577 bf16"), "{text}");
        assert!(
            text.contains("holds rows up to 1024 columns, not 1048577"),
            "{text}"
        );
        assert!(text.contains("solves gemm"), "{text}");
        // No row kernel is compiled for Blackwell yet.
        let b200 = Device {
            target: tirx::Target::Sm100a,
            ..Device::h200()
        };
        let e = choose(&RowRequest::contiguous(RowOp::RmsNorm, 4, 64), &b200).unwrap_err();
        assert!(e.to_string().contains("compiled for sm_90a"), "{e}");
    }

    /// The persistent double-buffered `*_staged_pipe` configs (`staged_pipe.rs`) carry
    /// `UNTIMED = 1`: at the long widths they are written for, each is refused as unranked
    /// (`request.rs`) and the host keeps its measured choice.
    #[test]
    fn untimed_row_configs_are_refused_and_never_chosen() {
        use crate::row_kernels::request::UNTIMED_REASON;
        for op in [RowOp::Softmax, RowOp::RmsNorm] {
            for (m, n) in [(8192, 32768), (4096, 65536), (2048, 131072), (1024, 262144)] {
                let r = RowRequest::contiguous(op, m, n);
                for device in [Device::h100(), Device::h200()] {
                    let c = choose(&r, &device).expect("fits");
                    assert_ne!(c.artifact.int("UNTIMED"), Some(1), "{op} {m}x{n}");
                    let refused: Vec<_> = dispatch::judge(&r, &catalogue::all(), &device)
                        .into_iter()
                        .filter(|v| v.outcome == Err(Reject::Unranked(UNTIMED_REASON.into())))
                        .map(|v| v.artifact.int("CAP"))
                        .collect();
                    assert!(
                        refused.contains(&Some(n as i64)),
                        "{op} {m}x{n}: an untimed config of capacity {n} refused: {refused:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_missing_vector_refuses_every_kernel_of_the_op() {
        let mut r = RowRequest::contiguous(RowOp::LayerNorm, 4, 64);
        r.b = None;
        let e = choose(&r, &Device::h200()).unwrap_err().to_string();
        assert!(
            e.contains("takes the tensor `b`, which this problem lacks"),
            "{e}"
        );
    }
}
