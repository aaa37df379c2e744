//! Families on the shipped catalogue, without a GPU: every artifact has exactly one family,
//! every family's own request accepts its artifacts at their default shape (or refuses them
//! with a typed reason), and a throwaway family defined here — one module plus one line in a
//! list — gets the dispatcher's choice and the emulator's check from the generic machinery.

use super::*;
use crate::catalogue::{self, FAMILIES};
use crate::dispatch::{self, Device, Reject, tune::Cache};

/// Every shipped artifact declares a problem that exactly one family owns, and that family's
/// request at the artifact's default shape does not refuse the artifact's own problem.
#[test]
fn every_artifact_has_exactly_one_family_whose_request_takes_it() {
    for k in catalogue::all() {
        for art in k.artifacts {
            let problem = art
                .problem
                .expect("every shipped artifact declares its problem");
            let owners: Vec<&str> = FAMILIES
                .iter()
                .filter(|f| f.owns(problem))
                .map(|f| f.name())
                .collect();
            assert_eq!(owners.len(), 1, "{}/{}: {owners:?}", k.name, art.config);
            let family = catalogue::family_of(art).expect("owned");
            let shape = family.default_shape(art);
            let request = family
                .request(art, shape)
                .unwrap_or_else(|e| panic!("{}/{}: {e}", k.name, art.config));
            assert_eq!(
                request.solves(art),
                Ok(()),
                "{}/{} at {shape:?}: {}",
                k.name,
                art.config,
                request.describe()
            );
        }
    }
}

/// Each family's default shape has tails: no tiled dimension a multiple of 64.
#[test]
fn default_shapes_are_odd() {
    for k in catalogue::all() {
        for art in k.artifacts {
            let family = catalogue::family_of(art).expect("owned");
            let (m, n, _) = family.default_shape(art);
            assert!(
                !m.is_multiple_of(64) && !n.is_multiple_of(64),
                "{}/{}: {m}x{n}",
                k.name,
                art.config
            );
        }
    }
}

/// The throwaway family: "the folder". It owns copies (as a new family would own a new
/// problem kind), checks them bit-exactly in the emulator, and defines its request by reusing
/// nothing but the dispatcher's trait.
mod scratch {
    use super::super::*;
    use crate::copy::family::CopyRequest;
    use crate::dispatch::ProblemDef;
    use tirx::abi::ElemType;

    pub struct Scratch;

    impl Family for Scratch {
        fn name(&self) -> &'static str {
            "scratch"
        }
        fn owns(&self, problem: Problem) -> bool {
            problem == Problem::Copy
        }
        fn request(
            &self,
            _art: &KernelArtifact,
            (m, n, _): Shape,
        ) -> Result<Box<dyn ProblemDef>, RuntimeError> {
            Ok(Box::new(CopyRequest::contiguous(ElemType::Bf16, (m, n))))
        }
        fn default_shape(&self, _art: &KernelArtifact) -> Shape {
            (17, 24, 0)
        }
        fn check(
            &self,
            _rt: &Runtime,
            _art: &'static KernelArtifact,
            _shape: Shape,
            _seed: u64,
        ) -> Result<CheckReport, RuntimeError> {
            Err(RuntimeError::NoKernelFits {
                problem: "scratch".into(),
                table: String::new(),
            })
        }
        fn simulate(
            &self,
            art: &KernelArtifact,
            (m, n, _): Shape,
            run: &SimRun,
        ) -> Result<(Stats, String), String> {
            let data = crate::reference::Rng::new(run.seed).bf16s(m * n);
            let dev = &mut SimDevice::new();
            let src = crate::simulate::upload(dev, &data, &[m, n]);
            let dst = crate::simulate::upload(dev, &[], &[m, n]);
            let (ts, _) = by_role(art, &[("src", src), ("dst", dst.clone())], &[])
                .map_err(|e| e.to_string())?;
            let stats = run.launch(art, dev, &ts, &[])?;
            let same = crate::simulate::download(dev, &dst) == data;
            same.then(|| (stats, "scratch: equal".to_string()))
                .ok_or_else(|| "scratch: differs".to_string())
        }
    }
}

/// "The line": a family list with the throwaway family in it.
const WITH_SCRATCH: &[&dyn Family] = &[&scratch::Scratch];

/// Adding a family is one module plus one line: the throwaway family finds its artifacts by
/// their problem, the one dispatcher chooses among them for its request (and refuses the
/// rest with typed reasons), and its emulator check runs through the generic `SimRun`.
#[test]
fn a_throwaway_family_gets_the_dispatcher_and_the_emulator() {
    let art = &catalogue::find("tma_copy").expect("shipped").artifacts[0];
    let family = of(WITH_SCRATCH, art).expect("the scratch family owns copies");
    assert_eq!(family.name(), "scratch");
    let gemm = &catalogue::find("gemm_sm90_ws").expect("shipped").artifacts[0];
    assert!(of(WITH_SCRATCH, gemm).is_none(), "it owns no GEMM");

    let shape = family.default_shape(art);
    let request = family.request(art, shape).expect("a request");
    let verdicts = dispatch::judge(request.as_ref(), &catalogue::all(), &Device::h200());
    let choice = dispatch::choose(
        request.as_ref(),
        &catalogue::all(),
        &Device::h200(),
        &Cache::default(),
    )
    .expect("a copy kernel fits");
    assert_eq!(choice.artifact.problem, Some(Problem::Copy));
    assert!(verdicts.iter().any(|v| matches!(
        &v.outcome,
        Err(Reject::Problem {
            found: Some(Problem::Gemm(_))
        })
    )));

    let (_, verdict) = family
        .simulate(choice.artifact, shape, &SimRun::seeded(3))
        .expect("the emulator runs the chosen copy");
    assert_eq!(verdict, "scratch: equal");
}

/// Every kernel with an sm_90a artifact runs in the emulator at its family's default shape
/// (tails in every tiled dimension, rows TMA takes) through the generic [`Family::simulate`]
/// and matches the family's f64 reference: `tirx sim KERNEL` with no shape flags, for every
/// kernel. One config per kernel (its first sm_90a artifact in catalogue order) keeps this
/// within CI's budget; `every_artifact_runs_in_the_emulator` runs them all.
#[test]
fn every_sm90_kernel_runs_in_the_emulator_at_its_default_shape() {
    let mut failures = Vec::new();
    for k in catalogue::all() {
        let Some(art) = k.artifacts.iter().find(|a| a.target == tirx::Target::Sm90a) else {
            continue;
        };
        let family = catalogue::family_of(art).expect("owned");
        let shape = family.default_shape(art);
        if let Err(e) = family.simulate(art, shape, &SimRun::seeded(1)) {
            failures.push(format!("{}/{} at {shape:?}: {e}", k.name, art.config));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The row kernels that walk a row in pieces (a `CAP` beyond one piece: chunks of `C` or `K`
/// columns, or `C` per CTA of a cluster) at a length past their first piece with a tail: the
/// family's default row (296 or 300 columns) fits in one piece, so the walk, the last piece's
/// mask and (for a cluster) the CTAs after the first run here. Their first sm_90a config,
/// one row, 16-byte rows (TMA stages them), against the f64 reference.
#[test]
fn every_chunked_row_kernel_runs_past_its_first_chunk() {
    use crate::row_kernels::request::capacity;
    let mut failures = Vec::new();
    let mut ran = 0;
    for k in catalogue::all() {
        let Some(art) = k.artifacts.iter().find(|a| a.target == tirx::Target::Sm90a) else {
            continue;
        };
        let piece = art.int("C").or(art.int("K"));
        let (Some(cap), Some(piece)) = (art.int("CAP"), piece) else {
            continue;
        };
        let cols = piece as usize + 296;
        assert!(cols <= cap as usize && cols <= capacity(art).unwrap_or(0));
        let family = catalogue::family_of(art).expect("owned");
        ran += 1;
        if let Err(e) = family.simulate(art, (1, cols, 0), &SimRun::seeded(2)) {
            failures.push(format!("{}/{} at 1x{cols}: {e}", k.name, art.config));
        }
    }
    assert!(ran >= 7, "the long, staged and cluster row kernels: {ran}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The FP8 GEMMs' problems (per-tensor, row-wise and block-wise scales) go through the GEMM
/// family as any GEMM does: the dispatcher chooses an FP8 artifact of the problem for E4M3 →
/// bf16 on contiguous tensors (the row-wise and block-wise requests carry `sa`, `sb`, which
/// the planner checks), a
/// 16-bit request is refused by them with a typed reason, and the choice runs in the
/// emulator at the family's default shape against the f64 reference with its scales.
#[test]
fn the_fp8_gemms_go_through_the_gemm_family() {
    use crate::gemm::request::{GemmRequest, GemmTypes};
    use tirx::abi::ElemType;
    use tirx::problem::{BLayout, Epilogue, GemmProblem};
    for epilogue in [
        Epilogue::ScaleTensor,
        Epilogue::ScaleRows,
        Epilogue::ScaleBlocks,
        Epilogue::ScaleBlocksMn,
    ] {
        let types = GemmTypes {
            input: ElemType::E4m3,
            output: ElemType::Bf16,
        };
        let request = GemmRequest::contiguous(BLayout::Tn, epilogue, types, (130, 136, 208));
        let choice = dispatch::choose(
            &request,
            &catalogue::all(),
            &Device::h200(),
            &Cache::default(),
        )
        .unwrap_or_else(|e| panic!("{epilogue:?}: {e}"));
        let art = choice.artifact;
        let problem = Problem::Gemm(GemmProblem {
            b: BLayout::Tn,
            epilogue,
        });
        assert_eq!(art.problem, Some(problem));
        assert_eq!(
            (art.elem_of("a"), art.elem_of("d")),
            (Some(ElemType::E4m3), Some(ElemType::Bf16))
        );
        let bf16 = GemmRequest::contiguous(
            BLayout::Tn,
            Epilogue::Plain,
            GemmTypes::BF16,
            (130, 136, 208),
        );
        assert!(matches!(
            bf16.solves(art),
            Err(Reject::Problem { found: Some(p) }) if p == problem
        ));
        let family = catalogue::family_of(art).expect("owned");
        assert_eq!(family.name(), "gemm");
        let shape = family.default_shape(art);
        assert_eq!(shape, (130, 136, 208), "K: a full K tile of 128 and a tail");
        if let Err(e) = family.simulate(art, shape, &SimRun::seeded(1)) {
            panic!("{}/{} at {shape:?}: {e}", art.kernel, art.config);
        }
    }
}

/// The block-scaled GEMMs (`Epilogue::ScaleFactors`: MXFP8 and NVFP4 with factor images) go
/// through the GEMM family as any GEMM does: on a B200 (described) the family's request at
/// the default shape chooses an artifact of the recipe, and every block-scaled artifact —
/// the one-CTA kernels' configs and the CTA pair's — runs in the emulator at the family's
/// default shape (tails in M, N and K) against the f64 reference of the same quantised values.
#[test]
fn the_block_scaled_gemms_go_through_the_gemm_family() {
    use tirx::problem::{Epilogue, Factors, GemmProblem};
    let mut ran = Vec::new();
    for k in catalogue::all() {
        for art in k.artifacts {
            let Some(Problem::Gemm(GemmProblem {
                epilogue: Epilogue::ScaleFactors(f),
                ..
            })) = art.problem
            else {
                continue;
            };
            let family = catalogue::family_of(art).expect("owned");
            let shape = family.default_shape(art);
            assert_eq!(shape, (200, 264, 208));
            let request = family.request(art, shape).expect("a request");
            let choice = dispatch::choose(
                request.as_ref(),
                &catalogue::all(),
                &Device::b200(),
                &Cache::default(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", request.describe()));
            assert_eq!(choice.artifact.problem, art.problem);
            if let Err(e) = family.simulate(art, shape, &SimRun::seeded(3)) {
                panic!("{}/{} at {shape:?}: {e}", k.name, art.config);
            }
            ran.push((f, format!("{}/{}", k.name, art.config)));
        }
    }
    for f in Factors::ALL {
        assert!(
            ran.iter().filter(|(g, _)| *g == f).count() >= 3,
            "{f:?}: {ran:?}"
        );
    }
}

/// Every shipped artifact (both targets) in the emulator at its family's default shape:
/// `cargo xtask sim-all`, which runs
/// `cargo test --release -p tirx-kernels --lib every_artifact -- --ignored` (173 s in a
/// release build on 2 shared cores, 2026-12-03; 183 s on 2026-12-04, after the emulator's
/// state moved to `cta.rs`: all pass; about an hour in a debug build).
#[test]
#[ignore = "about an hour in a debug build; run it with --release"]
fn every_artifact_runs_in_the_emulator() {
    let mut failures = Vec::new();
    for k in catalogue::all() {
        for art in k.artifacts {
            let family = catalogue::family_of(art).expect("owned");
            let shape = family.default_shape(art);
            if let Err(e) = family.simulate(art, shape, &SimRun::seeded(1)) {
                failures.push(format!(
                    "{}/{} {}: {e}",
                    k.name,
                    art.config,
                    art.target.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Median nanoseconds per call of `f`, over 51 batches of `per` calls.
fn median_ns(per: u32, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..51)
        .map(|_| {
            let started = std::time::Instant::now();
            (0..per).for_each(|_| f());
            started.elapsed().as_nanos() as f64 / f64::from(per)
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The host path of a launch by role before the runtime ([`launch_roles`]'s ordering of the
/// caller's tensors and scalars), timed on the CPU for `gemm_sm90_ws`'s `bf16_f16_n64` config
/// with `TensorMeta`s standing in for the tensor arguments (a `TensorArg` is a `TensorMeta` and
/// a context address, so it clones at the same cost). Prints the median.
#[test]
#[ignore = "timing: cargo test --release -p tirx-kernels --lib role_order_timing -- --ignored --nocapture"]
fn role_order_timing() {
    use tirx::abi::ElemType;
    use tirx::runtime::TensorMeta;
    let art = catalogue::find("gemm_sm90_ws")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.config == "bf16_f16_n64")
        .expect("config");
    let (m, n, k) = (128usize, 4096usize, 4096usize);
    let roles = [
        (
            "a",
            TensorMeta::row_major(ElemType::Bf16, &[m, k], 0x7000_0000_0000),
        ),
        (
            "b",
            TensorMeta::row_major(ElemType::Bf16, &[n, k], 0x7000_1000_0000),
        ),
        (
            "d",
            TensorMeta::row_major(ElemType::F16, &[m, n], 0x7000_2000_0000),
        ),
    ];
    let scalars = [("alpha", 1.0f32), ("beta", 0.0f32)];
    let cloned = median_ns(10_000, || {
        std::hint::black_box(by_role(art, &roles, &scalars).unwrap());
    });
    let refs = median_ns(10_000, || {
        std::hint::black_box(in_role_order(art, &roles, &scalars, ScalarArg::F32).unwrap());
    });
    let sig = median_ns(10_000, || {
        std::hint::black_box(std::hint::black_box(art).sig());
    });
    println!(
        "ordering by role: cloned (by_role) {cloned:.0} ns, by reference {refs:.0} ns (of which \
         the artifact's kept signature {sig:.0} ns)"
    );
}
