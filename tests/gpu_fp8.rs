//! GPU tests of the FP8 GEMMs (feature `gpu`, sm_90a): every config of `gemm_sm90_fp8`
//! (per-tensor scales) and `gemm_sm90_fp8_rowwise` (row-wise scales), and of their ping-pong
//! forms (`fp8_pingpong.rs`), found in the catalogue by the problem they solve, on random FP8 data at odd shapes (tails in M, N and K; more
//! tiles than clusters), D poisoned first, every element checked against the f64 reference of
//! the same FP8 values and scales within the bound for the tensor core's FP8 accumulation
//! (`fp8_ref::check`); and cuBLASLt's FP8 GEMM on the same buffers checked the same way (it
//! is the bench's baseline: a wrong baseline would make the bench's ratio meaningless). The
//! FP8 split-K plans (`fp8_splitk.rs`: partials, then the reduce applying the scales) run
//! among every config, and on their own below: decode shapes, caller workspaces with uneven
//! slices, bit-identical reruns, and the host's choice at 128×8192×8192.

use half::{bf16, f16};
use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, Tensor, TensorArg};
use tirx_kernels::bench::cublaslt::CublasLt;
use tirx_kernels::bench::cublaslt_fp8::LtScales;
use tirx_kernels::bench::fp8::{Fp8Host, Fp8Problem};
use tirx_kernels::gemm::fp8_ref::{Fp8Scales, check, scaled_mm_f64};
use tirx_kernels::gemm::request::Fp8ScaleArgs;
use tirx_kernels::gemm::split;
use tirx_kernels::reference::{HostElem, Rng};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// Odd shapes: tails in M (1000 = 7·128 + 104), N (264 = 256 + 8; 1032 = 4·256 + 8) and K
/// (208 = 128 + 80; 1040 = 8·128 + 16), a single partial tile, and more tiles than clusters.
const SHAPES: [(usize, usize, usize); 4] = [
    (136, 264, 208),
    (1000, 1032, 1040),
    (72, 8, 16),
    (2048, 3000, 1024),
];

/// Inputs of one case: A, B (FP8 values), scales.
struct Case<A> {
    a: Vec<A>,
    b: Vec<A>,
    scales: Fp8Scales,
}

fn case<A: Fp8Host>((m, n, k): (usize, usize, usize), rows: bool, seed: u64) -> Case<A> {
    let mut rng = Rng::new(seed);
    let mut q =
        |len: usize| -> Vec<A> { (0..len).map(|_| A::quantise(2.0 * rng.unit())).collect() };
    let (a, b) = (q(m * k), q(n * k));
    let scales = if rows {
        let mut u =
            |len: usize| -> Vec<f32> { (0..len).map(|_| 1.25 + 0.75 * rng.unit()).collect() };
        Fp8Scales::Rows(u(m), u(n))
    } else {
        Fp8Scales::Tensor(0.375, -1.75)
    };
    Case { a, b, scales }
}

/// Runs `art` (or cuBLASLt, `art` = None) on the case; D poisoned first; returns D as f64.
fn run<A: Fp8Host, D: HostElem>(
    rt: &Runtime,
    art: Option<&KernelArtifact>,
    c: &Case<A>,
    (m, n, k): (usize, usize, usize),
) -> Result<Vec<f64>, String> {
    let e = |e: tirx::RuntimeError| e.to_string();
    let a = rt.upload(&c.a, &[m, k]).map_err(e)?;
    let b = rt.upload(&c.b, &[n, k]).map_err(e)?;
    let (sa, sb) = match &c.scales {
        Fp8Scales::Rows(sa, sb) => (rt.upload(sa, &[m]), rt.upload(sb, &[n])),
        Fp8Scales::Tensor(x, y) => (rt.upload(&[*x], &[1]), rt.upload(&[*y], &[1])),
    };
    let (sa, sb) = (sa.map_err(e)?, sb.map_err(e)?);
    let mut d: Tensor<D> = rt.zeros(&[m, n]).map_err(e)?;
    rt.poison(&mut d).map_err(e)?;
    match art {
        // An FP8 split-K artifact (`fp8_splitk.rs`) runs its plan: the partials over the
        // model's slices, then the reduce applying the scales.
        Some(art) if split::is_partial(art) => {
            let (av, bv, dv) = (a.view(), b.view(), d.view());
            let (sav, sbv) = (sa.view(), sb.view());
            let scales = match c.scales {
                Fp8Scales::Tensor(x, y) => Fp8ScaleArgs::Tensor(x, y),
                Fp8Scales::Rows(..) => Fp8ScaleArgs::Rows(&sav, &sbv),
            };
            let roles = [("a", av), ("b", bv), ("d", dv)];
            split::launch_fp8_split(rt, art, &roles, scales).map_err(e)?;
        }
        Some(art) => {
            let sig = (art.signature)();
            let dv = d.view();
            let args: Vec<TensorArg<'_>> = sig
                .tensors
                .iter()
                .map(|t| match t.name.as_str() {
                    "a" => a.view(),
                    "b" => b.view(),
                    "sa" => sa.view(),
                    "sb" => sb.view(),
                    _ => dv.clone(),
                })
                .collect();
            let scalars = match c.scales {
                Fp8Scales::Tensor(x, y) => vec![x, y],
                Fp8Scales::Rows(..) => vec![],
            };
            rt.launch_with(art, &args, &scalars).map_err(e)?;
        }
        None => {
            let lt = CublasLt::new(rt).map_err(|e| e.to_string())?;
            let mode = match c.scales {
                Fp8Scales::Tensor(..) => LtScales::Tensor,
                Fp8Scales::Rows(..) => LtScales::Rows,
            };
            let plan = lt
                .gemm_fp8((m, n, k), A::ELEM, D::ELEM, mode)
                .map_err(|e| format!("plan: {e}"))?;
            plan.run(&a, &b, (&sa, &sb), &mut d)
                .map_err(|e| e.to_string())?;
        }
    }
    rt.synchronize().map_err(e)?;
    Ok(rt
        .download(&d)
        .map_err(e)?
        .into_iter()
        .map(D::to_f64)
        .collect())
}

/// Every config solving `p` on every shape; failures collected.
fn check_problem<A: Fp8Host, D: HostElem>(rt: &Runtime, p: Fp8Problem, failures: &mut Vec<String>) {
    let arts = p.artifacts();
    assert!(!arts.is_empty(), "no kernel solves {}", p.describe());
    for (i, &shape) in SHAPES.iter().enumerate() {
        let c = case::<A>(shape, p.rows, 40 + i as u64);
        let av: Vec<f64> = c.a.iter().map(|x| x.value()).collect();
        let bv: Vec<f64> = c.b.iter().map(|x| x.value()).collect();
        let (want, mag) = scaled_mm_f64(&av, &bv, shape, &c.scales);
        for art in &arts {
            let what = format!("{}/{} {shape:?}", art.kernel, art.config);
            // A split-K plan needs two K tiles: one is a typed refusal, not a result.
            let k_tiles = shape.2.div_ceil(art.int("BK").unwrap_or(128) as usize);
            if split::is_partial(art) && k_tiles < 2 {
                match run::<A, D>(rt, Some(art), &c, shape) {
                    Err(e) if e.contains("two K tiles") => {}
                    other => failures.push(format!("{what}: not refused: {:?}", other.err())),
                }
                continue;
            }
            match run::<A, D>(rt, Some(art), &c, shape) {
                Ok(got) => {
                    if let Err(e) = check(&got, (&want, &mag), (shape.2, D::ELEM, false), shape.1) {
                        failures.push(format!("{what}: {e}"));
                    }
                }
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
}

#[test]
fn every_fp8_config_matches_the_f64_reference_with_tails() {
    let rt = rt();
    let mut failures = Vec::new();
    for rows in [false, true] {
        let p = |input, output| Fp8Problem {
            rows,
            input,
            output,
        };
        use ElemType::{Bf16, E4m3, E5m2, F16, F32};
        check_problem::<tirx::e4m3, bf16>(&rt, p(E4m3, Bf16), &mut failures);
        check_problem::<tirx::e4m3, f16>(&rt, p(E4m3, F16), &mut failures);
        check_problem::<tirx::e4m3, f32>(&rt, p(E4m3, F32), &mut failures);
        check_problem::<tirx::e5m2, bf16>(&rt, p(E5m2, Bf16), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cublaslt_fp8_matches_the_same_reference() {
    let rt = rt();
    let mut failures = Vec::new();
    // cuBLASLt's FP8 layouts want K and the leading dimensions multiples of 16 bytes.
    for rows in [false, true] {
        for (i, shape) in [(1000, 1032, 1040), (2048, 3000, 1024)]
            .into_iter()
            .enumerate()
        {
            let c = case::<tirx::e4m3>(shape, rows, 60 + i as u64);
            let av: Vec<f64> = c.a.iter().map(|x| x.value()).collect();
            let bv: Vec<f64> = c.b.iter().map(|x| x.value()).collect();
            let (want, mag) = scaled_mm_f64(&av, &bv, shape, &c.scales);
            match run::<tirx::e4m3, bf16>(&rt, None, &c, shape) {
                Ok(got) => {
                    if let Err(e) = check(
                        &got,
                        (&want, &mag),
                        (shape.2, ElemType::Bf16, false),
                        shape.1,
                    ) {
                        failures.push(format!("cuBLASLt rows={rows} {shape:?}: {e}"));
                    }
                }
                // A library without the outer-vector scale mode on this GPU has no plan for
                // the row-wise form: the bench then reports it; not a wrong result.
                Err(e) if rows && e.starts_with("plan:") => {
                    eprintln!("note: cuBLASLt has no row-wise FP8 plan here: {e}");
                }
                Err(e) => failures.push(format!("cuBLASLt rows={rows} {shape:?}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A planted bug the check must see on the GPU: the row scales swapped (sa given as sb).
#[test]
fn swapped_row_scales_are_caught() {
    let rt = rt();
    let shape = (136, 136, 208);
    let p = Fp8Problem {
        rows: true,
        input: ElemType::E4m3,
        output: ElemType::F32,
    };
    let art = p.artifacts()[0];
    let mut c = case::<tirx::e4m3>(shape, true, 77);
    let av: Vec<f64> = c.a.iter().map(|x| x.value()).collect();
    let bv: Vec<f64> = c.b.iter().map(|x| x.value()).collect();
    let (want, mag) = scaled_mm_f64(&av, &bv, shape, &c.scales);
    if let Fp8Scales::Rows(sa, sb) = &mut c.scales {
        std::mem::swap(sa, sb);
    }
    let got = run::<tirx::e4m3, f32>(&rt, Some(art), &c, shape).expect("runs");
    assert!(
        check(
            &got,
            (&want, &mag),
            (shape.2, ElemType::F32, false),
            shape.1
        )
        .is_err()
    );
}

/// One FP8 split-K run into a caller workspace of `splits` slices (D poisoned first); D as f64.
fn run_split_into<A: Fp8Host, D: HostElem>(
    rt: &Runtime,
    art: &KernelArtifact,
    c: &Case<A>,
    (m, n, k): (usize, usize, usize),
    splits: usize,
) -> Result<Vec<f64>, String> {
    let e = |e: tirx::RuntimeError| e.to_string();
    let a = rt.upload(&c.a, &[m, k]).map_err(e)?;
    let b = rt.upload(&c.b, &[n, k]).map_err(e)?;
    let (sa, sb) = match &c.scales {
        Fp8Scales::Rows(sa, sb) => (rt.upload(sa, &[m]), rt.upload(sb, &[n])),
        Fp8Scales::Tensor(x, y) => (rt.upload(&[*x], &[1]), rt.upload(&[*y], &[1])),
    };
    let (sa, sb) = (sa.map_err(e)?, sb.map_err(e)?);
    let mut d: Tensor<D> = rt.zeros(&[m, n]).map_err(e)?;
    rt.poison(&mut d).map_err(e)?;
    let mut w: Tensor<f32> = rt.zeros(&[splits, m, n]).map_err(e)?;
    rt.poison(&mut w).map_err(e)?;
    let (sav, sbv) = (sa.view(), sb.view());
    let scales = match c.scales {
        Fp8Scales::Tensor(x, y) => Fp8ScaleArgs::Tensor(x, y),
        Fp8Scales::Rows(..) => Fp8ScaleArgs::Rows(&sav, &sbv),
    };
    let roles = [("a", a.view()), ("b", b.view()), ("d", d.view())];
    split::launch_fp8_split_into(rt, art, &roles, scales, &mut w).map_err(e)?;
    rt.synchronize().map_err(e)?;
    Ok(rt
        .download(&d)
        .map_err(e)?
        .into_iter()
        .map(D::to_f64)
        .collect())
}

/// The FP8 split-K partial configs of A's type.
fn fp8_partials(input: ElemType) -> Vec<&'static KernelArtifact> {
    tirx_kernels::catalogue::all()
        .into_iter()
        .flat_map(|k| k.artifacts.iter())
        .filter(|a| {
            a.target == tirx::Target::Sm90a && split::is_partial(a) && a.elem_of("a") == Some(input)
        })
        .collect()
}

/// FP8 split-K (issue #29) at decode-like shapes — tails in M (127, 9), N (520 = 2·256 + 8)
/// and K (4112 = 32·128 + 16, 2064 = 16·128 + 16) — every partial config, per-tensor and
/// row-wise scales, into BF16 and FP32 (E4M3) and BF16 (E5M2): in caller workspaces of
/// slice counts that do not divide the K tiles (3, 5, 7), D and the workspace poisoned,
/// against the f64 reference of the same FP8 values; and one rerun into the same workspace
/// bit-identical (the reduce's fixed order: no atomics).
#[test]
fn fp8_split_k_matches_the_f64_reference_and_reruns_bit_identical() {
    let rt = rt();
    let mut failures = Vec::new();
    let shapes = [(127, 520, 4112), (9, 264, 2064), (128, 136, 1040)];
    fn one<A: Fp8Host, D: HostElem>(
        rt: &Runtime,
        input: ElemType,
        shapes: &[(usize, usize, usize)],
        failures: &mut Vec<String>,
    ) {
        for art in fp8_partials(input) {
            for rows in [false, true] {
                for (i, &shape) in shapes.iter().enumerate() {
                    let splits = [3, 5, 7][i];
                    let c = case::<A>(shape, rows, 90 + i as u64);
                    let av: Vec<f64> = c.a.iter().map(|x| x.value()).collect();
                    let bv: Vec<f64> = c.b.iter().map(|x| x.value()).collect();
                    let (want, mag) = scaled_mm_f64(&av, &bv, shape, &c.scales);
                    let what = format!(
                        "{}/{} {} rows={rows} {shape:?} S={splits}",
                        art.kernel,
                        art.config,
                        D::ELEM.name()
                    );
                    let first = run_split_into::<A, D>(rt, art, &c, shape, splits);
                    let again = run_split_into::<A, D>(rt, art, &c, shape, splits);
                    match (first, again) {
                        (Ok(got), Ok(again)) => {
                            let k = shape.2;
                            if let Err(e) = check(&got, (&want, &mag), (k, D::ELEM, false), shape.1)
                            {
                                failures.push(format!("{what}: {e}"));
                            }
                            let same = got
                                .iter()
                                .zip(&again)
                                .all(|(x, y)| x.to_bits() == y.to_bits());
                            if !same {
                                failures.push(format!("{what}: a rerun differs"));
                            }
                        }
                        (Err(e), _) | (_, Err(e)) => failures.push(format!("{what}: {e}")),
                    }
                }
            }
        }
    }
    use ElemType::{E4m3, E5m2};
    one::<tirx::e4m3, bf16>(&rt, E4m3, &shapes, &mut failures);
    one::<tirx::e4m3, f32>(&rt, E4m3, &shapes, &mut failures);
    one::<tirx::e4m3, f16>(&rt, E4m3, &shapes[..1], &mut failures);
    one::<tirx::e5m2, bf16>(&rt, E5m2, &shapes, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The host's FP8 entry (`gemm::host::gemm_fp8`) at the decode-like 128×8192×8192 takes the
/// split-K plan (the cost model's choice, slices its own) and its result matches the f64
/// reference over a sample of rows (every 9th, all columns), per-tensor and row-wise; and
/// the one-launch kernels stay at 2048×3000×1024.
#[test]
fn the_host_takes_fp8_split_k_at_the_decode_shape() {
    use tirx_kernels::gemm::host::{Fp8Scaling, gemm_fp8};
    let rt = rt();
    let mut failures = Vec::new();
    for rows in [false, true] {
        for shape in [(128, 8192, 8192), (2048, 3000, 1024)] {
            let (m, n, k) = shape;
            let c = case::<tirx::e4m3>(shape, rows, 120);
            let a = rt.upload(&c.a, &[m, k]).expect("upload");
            let b = rt.upload(&c.b, &[n, k]).expect("upload");
            let (sa, sb) = match &c.scales {
                Fp8Scales::Rows(sa, sb) => (rt.upload(sa, &[m]), rt.upload(sb, &[n])),
                Fp8Scales::Tensor(x, y) => (rt.upload(&[*x], &[1]), rt.upload(&[*y], &[1])),
            };
            let (sa, sb) = (sa.expect("upload"), sb.expect("upload"));
            let scaling = match c.scales {
                Fp8Scales::Tensor(x, y) => Fp8Scaling::Tensor(x, y),
                Fp8Scales::Rows(..) => Fp8Scaling::Rows(&sa, &sb),
            };
            let mut d: Tensor<bf16> = rt.zeros(&[m, n]).expect("alloc");
            rt.poison(&mut d).expect("poison");
            let choice = gemm_fp8(&rt, &a, &b, scaling, &mut d).expect("runs");
            rt.synchronize().expect("sync");
            let what = format!("rows={rows} {shape:?}: {}", choice.label());
            println!("{what}");
            if split::is_partial(choice.artifact) != (m == 128) {
                failures.push(format!("{what}: split K expected only at M = 128"));
            }
            // The reference over every 9th row of A (and D).
            let picked: Vec<usize> = (0..m).step_by(9).collect();
            let av: Vec<f64> = picked
                .iter()
                .flat_map(|&i| c.a[i * k..(i + 1) * k].iter().map(|x| x.value()))
                .collect();
            let bv: Vec<f64> = c.b.iter().map(|x| x.value()).collect();
            let scales = match &c.scales {
                Fp8Scales::Rows(sa, sb) => {
                    Fp8Scales::Rows(picked.iter().map(|&i| sa[i]).collect(), sb.clone())
                }
                Fp8Scales::Tensor(x, y) => Fp8Scales::Tensor(*x, *y),
            };
            let (want, mag) = scaled_mm_f64(&av, &bv, (picked.len(), n, k), &scales);
            let all: Vec<f64> = rt
                .download(&d)
                .expect("download")
                .into_iter()
                .map(|x| x.to_f64())
                .collect();
            let got: Vec<f64> = picked
                .iter()
                .flat_map(|&i| all[i * n..(i + 1) * n].iter().copied())
                .collect();
            if let Err(e) = check(&got, (&want, &mag), (k, ElemType::Bf16, false), n) {
                failures.push(format!("{what}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
