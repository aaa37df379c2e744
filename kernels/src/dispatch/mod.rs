//! The host-side dispatcher: which compiled artifact runs a problem, chosen from the artifacts'
//! own metadata, the way the compile-time dispatcher chooses an instruction.
//!
//! A problem definition ([`ProblemDef`], one request type per problem family:
//! `crate::gemm::request::GemmRequest`, `crate::row_kernels::request::RowRequest`, …) judges
//! every artifact of the catalogue ([`crate::catalogue`]): it is accepted with an estimated
//! cost, or refused with a typed [`Reject`] (another problem, another target, other element
//! types, or a launch the runtime would refuse: shapes, alignment, shared memory, clusters,
//! the SM count). The accepted ones are ranked by a measured cache entry first ([`tune`]: the
//! fastest accepted artifact measured on this device for this problem and shape bucket), and
//! otherwise by the problem's cost model, equal costs by the launch's [`Footprint`] (see
//! [`ranked`]). When nothing fits, the error prints the table of every candidate and its
//! reason ([`RuntimeError::NoKernelFits`]).
//!
//! Invariants:
//! - Nothing here reads a kernel's or a config's name for meaning: names only label rows, and
//!   identify a measured artifact in the cache (a renamed config is re-measured, never
//!   misrouted: its entry no longer matches, and the cost model decides).
//! - The choice does not depend on where a kernel is written: not on the catalogue's order
//!   (its folders, files and declarations) nor on the order of a kernel's configs. Ties are
//!   broken by the stated [`Footprint`] order, and a test chooses every family's requests
//!   over the catalogue reversed.
//! - An accepted artifact is one the runtime's pure launch planner accepts for exactly these
//!   tensors, so choosing never picks a kernel that would then refuse to launch.

pub mod remember;
pub mod tune;

pub use remember::choose_remembered;

use std::fmt;

use tirx::abi::ElemType;
use tirx::problem::Problem;
use tirx::runtime::{DeviceLimits, LaunchPlan, TensorMeta, plan_launch_with};
use tirx::{Kernel, KernelArtifact, RuntimeError, Target};

/// The device a choice is made for: what the cache is keyed by and the planner checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// The device's name (`NVIDIA H200`), a cache key.
    pub name: String,
    /// The target its artifacts must be compiled for.
    pub target: Target,
    /// Launch limits, the SM count among them.
    pub limits: DeviceLimits,
    /// Bytes a second its HBM moves in a device copy: the most a cost model's stream can pull
    /// ([`hbm_bytes_per_s`]).
    pub hbm_bytes_per_s: f64,
}

/// Bytes a second an H200's HBM moves: its device copy, about 4300 GB/s (3560–4210 on
/// 2026-12-03), measured beside the peers on 2026-12-01 (`/work/shared/ANCHORS.md`).
pub const H200_HBM_BYTES_PER_S: f64 = 4.3e12;

/// Bytes a second an H100 SXM's HBM3 moves: its device copy (`cuMemcpyDtoD` of 8192×7168
/// bf16), 2.87 TB/s, measured on 2026-12-06 (`docs/perf/h100-2026-12-06-stop46.md`, the
/// quantisers' table; 86 % of the datasheet's 3.35 TB/s).
pub const H100_HBM_BYTES_PER_S: f64 = 2.87e12;

/// The peak bytes a second of a device memory clocked at `clock_khz` (the driver's
/// `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`, kHz) on a bus `bus_bits` wide
/// (`CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH`): two transfers a clock (HBM is double data
/// rate), `bus_bits / 8` bytes each — CUDA's convention for `cudaDeviceProp`'s fields, which
/// deviceQuery prints (NVIDIA's "How to Query Device Properties and Handle Errors in CUDA
/// C/C++": `2.0 * memoryClockRate * (memoryBusWidth / 8)`). An H100 SXM reports 2619 MHz
/// and 5120 bits: 3.35 TB/s, its datasheet's; an H200 3201 MHz and 6144 bits: 4.92 TB/s
/// (deviceQuery's published outputs for those cards; tirx has not yet read them on ours).
pub fn hbm_peak_bytes_per_s(clock_khz: u32, bus_bits: u32) -> f64 {
    2.0 * f64::from(clock_khz) * 1e3 * f64::from(bus_bits) / 8.0
}

/// The devices whose copy was measured: a fragment of the driver's name, the measured copy
/// (bytes/s) and the peak its driver reports ([`hbm_peak_bytes_per_s`]), whose ratio is the
/// share of the peak a stream sustains there.
const MEASURED_HBM: [(&str, f64, f64); 2] = [
    ("H100", H100_HBM_BYTES_PER_S, H100_HBM_PEAK),
    ("H200", H200_HBM_BYTES_PER_S, H200_HBM_PEAK),
];

/// The H100 SXM's HBM3 peak, 2619 MHz × 5120 bits ([`hbm_peak_bytes_per_s`]).
const H100_HBM_PEAK: f64 = 3.352e12;
/// The H200's HBM3e peak, 3201 MHz × 6144 bits ([`hbm_peak_bytes_per_s`]).
const H200_HBM_PEAK: f64 = 4.917e12;

/// The share of its peak a device copy sustains where it was not measured: the H100 SXM's,
/// 2.87 of 3.35 TB/s (0.856; the H200's 4.3 of 4.92 is 0.875).
pub const HBM_SUSTAINED_SHARE: f64 = H100_HBM_BYTES_PER_S / H100_HBM_PEAK;

/// The HBM rate of the device named `name` (the driver's name, [`tirx::Runtime::name`]) whose
/// memory peaks at `peak` bytes a second where its driver says ([`hbm_peak_bytes_per_s`]):
/// the peak at the share a device copy of that kind measured ([`MEASURED_HBM`]: so an H100
/// SXM gets its measured 2.87 TB/s and an H100 PCIe's 2.0 TB/s HBM2e the same share of it), or
/// at [`HBM_SUSTAINED_SHARE`] for a kind never measured. Without a peak (a choice made with no
/// GPU: tests, listings), the measured copy of its kind, else the H200's, as every device took
/// before the H100's was measured.
pub fn hbm_bytes_per_s(name: &str, peak: Option<f64>) -> f64 {
    let measured = MEASURED_HBM.iter().find(|(kind, ..)| name.contains(kind));
    match (peak.filter(|p| *p > 0.0), measured) {
        (Some(peak), Some((_, copy, at))) => peak * copy / at,
        (Some(peak), None) => peak * HBM_SUSTAINED_SHARE,
        (None, Some((_, copy, _))) => *copy,
        (None, None) => H200_HBM_BYTES_PER_S,
    }
}

impl Device {
    /// An H200 SXM (132 SMs), for choices made without a GPU (tests, listings).
    pub fn h200() -> Device {
        Device {
            name: "NVIDIA H200".into(),
            target: Target::Sm90a,
            limits: DeviceLimits::HOPPER,
            hbm_bytes_per_s: H200_HBM_BYTES_PER_S,
        }
    }

    /// An H100 SXM (132 SMs, the H200's limits, its slower HBM3), for choices made without a
    /// GPU: the device of the measurements `dispatch::measured` judges the model by.
    pub fn h100() -> Device {
        let name = "NVIDIA H100 80GB HBM3";
        Device {
            name: name.into(),
            hbm_bytes_per_s: hbm_bytes_per_s(name, None),
            ..Device::h200()
        }
    }

    /// A B200 (148 SMs, 227 KB of shared memory a block), for choices made without one (there
    /// is no Blackwell GPU here: tests and listings only).
    pub fn b200() -> Device {
        Device {
            name: "NVIDIA B200".into(),
            target: Target::Sm100a,
            limits: DeviceLimits {
                sm_count: 148,
                ..DeviceLimits::HOPPER
            },
            // No Blackwell GPU here: the H200's until one is measured.
            hbm_bytes_per_s: H200_HBM_BYTES_PER_S,
        }
    }

    /// `h200()` with another SM count (an H100 PCIe has 114).
    pub fn hopper_with_sms(sms: u32) -> Device {
        let mut d = Device::h200();
        d.limits.sm_count = sms;
        d
    }

    /// The device `rt` runs on; its HBM rate from its name and the peak its driver reports
    /// ([`hbm_bytes_per_s`]; a driver that answers neither attribute leaves the peak unknown).
    pub fn of(rt: &tirx::Runtime) -> Result<Device, RuntimeError> {
        let peak = rt
            .memory_clock_and_bus()
            .map(|(clock, bits)| hbm_peak_bytes_per_s(clock, bits));
        Ok(Device {
            name: rt.name().to_string(),
            target: rt.target()?,
            limits: *rt.limits(),
            hbm_bytes_per_s: hbm_bytes_per_s(rt.name(), peak),
        })
    }
}

/// Why an artifact does not fit a problem: a typed value, so tests and tools match on the
/// reason, never on its text.
#[derive(Clone, Debug, PartialEq)]
pub enum Reject {
    /// It solves another problem (`None`: it declares none).
    Problem {
        /// What it solves.
        found: Option<Problem>,
    },
    /// It is compiled for another target.
    Target {
        /// Its target.
        found: Target,
    },
    /// Its tensors hold other element types (in the problem's order: `a` and `d` of a GEMM,
    /// the input of the others; `None` where the role is missing).
    Types {
        /// Its element types.
        found: Vec<Option<ElemType>>,
    },
    /// A row kernel whose rows are shorter than the problem's.
    Capacity {
        /// The longest row it holds (`CAP`, else `C`).
        holds: usize,
        /// The problem's row length.
        cols: usize,
    },
    /// It takes a tensor the problem does not have (say a LayerNorm's bias `b` where none is
    /// given).
    Tensor {
        /// The role it takes.
        role: String,
    },
    /// An attention tile of another head dimension or mask (its config's `D`, or `D_QK` and
    /// `D_V`, and `CAUSAL`).
    Tile {
        /// Its head dimension (of Q and K: `D_QK`, else `D`).
        head_dim: Option<i64>,
        /// Its head dimension of V and O (`D_V`, else `D`).
        head_dim_v: Option<i64>,
        /// Its mask (`CAUSAL`).
        causal: Option<i64>,
    },
    /// An attention kernel with one head dimension (`D`) for Q·Kᵀ and P·V (the Hopper ones),
    /// asked for a problem whose Q/K and V/O head dimensions differ.
    OneHeadDim {
        /// The request's Q/K head dimension.
        qk: usize,
        /// The request's V/O head dimension.
        v: usize,
    },
    /// The request forces one tile ([`crate::attention::request::AttentionRequest::forced`])
    /// and this artifact is not one of its siblings.
    NotForced {
        /// The forced tile, `kernel/config`.
        forced: String,
    },
    /// The runtime would refuse this launch (shapes, strides, alignment, shared memory,
    /// cluster, grid).
    Launch(String),
    /// The cost model cannot rank it (a config constant it needs is missing).
    Unranked(String),
    /// An FP8 kernel that accumulates on the tensor core over all of K, for a request that
    /// asks for promoted accumulation (`gemm::fp8_ref::Fp8Accum`).
    FastAccum,
}

impl Reject {
    /// The refusal of an artifact that solves another problem than the request's.
    pub fn problem(artifact: &KernelArtifact) -> Reject {
        Reject::Problem {
            found: artifact.problem,
        }
    }

    /// Whether the artifact does not compute this problem at all (another problem, types,
    /// row capacity, tensors, tile), as opposed to a launch refusal or a target: `tirx sim`
    /// skips such an artifact at that shape, as the host would.
    pub fn is_about_the_problem(&self) -> bool {
        !matches!(
            self,
            Reject::Target { .. } | Reject::Launch(_) | Reject::Unranked(_)
        )
    }
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reject::Problem { found: Some(p) } => write!(f, "solves {p}"),
            Reject::Problem { found: None } => write!(f, "solves nothing declared"),
            Reject::Target { found } => write!(f, "compiled for {}", found.name()),
            Reject::Types { found } => {
                let names: Vec<&str> = found.iter().map(|e| e.map_or("?", |e| e.name())).collect();
                write!(f, "takes {}", names.join(" -> "))
            }
            Reject::Capacity { holds, cols } => {
                write!(f, "holds rows up to {holds} columns, not {cols}")
            }
            Reject::Tensor { role } => {
                write!(f, "takes the tensor `{role}`, which this problem lacks")
            }
            Reject::Tile {
                head_dim,
                head_dim_v,
                causal,
            } => {
                let mask = match causal {
                    Some(0) => "full",
                    Some(_) => "causal",
                    None => "no mask declared",
                };
                match (head_dim, head_dim_v) {
                    (Some(d), Some(dv)) if d != dv => {
                        write!(f, "solves attention hd {d}/{dv} {mask}")
                    }
                    (Some(d), _) => write!(f, "solves attention hd {d} {mask}"),
                    (None, _) => write!(f, "solves attention with no head dim declared, {mask}"),
                }
            }
            Reject::OneHeadDim { qk, v } => write!(
                f,
                "has one head dim `D` for Q·Kᵀ and P·V, not Q/K {qk} with V/O {v}"
            ),
            Reject::NotForced { forced } => write!(f, "another tile than the forced {forced}"),
            Reject::Launch(why) => write!(f, "launch refused: {why}"),
            Reject::Unranked(why) => write!(f, "cannot be ranked: {why}"),
            Reject::FastAccum => write!(
                f,
                "accumulates on the tensor core over all of K (fast), not promoted into f32"
            ),
        }
    }
}

/// A problem kind's host-side definition.
pub trait ProblemDef {
    /// The problem in words, for tables and errors (`gemm tn plain, bf16 -> bf16, 8x8x8`).
    fn describe(&self) -> String;
    /// Whether `artifact` computes this problem in these types (not yet whether it launches).
    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject>;
    /// The tensors and scalars to plan the launch with, in the artifact's parameter order.
    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>);
    /// The estimated time of an accepted artifact on `device`, in arbitrary units (lower runs
    /// sooner); `Err` when the model cannot rank it.
    fn cost(&self, artifact: &KernelArtifact, device: &Device) -> Result<f64, Reject>;
    /// The key of this problem's measured entries in the tune cache.
    fn cache_key(&self, device: &Device) -> tune::Key;
}

/// One candidate and what the dispatcher made of it.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The kernel.
    pub kernel: &'static Kernel,
    /// The artifact.
    pub artifact: &'static KernelArtifact,
    /// The estimated cost, or why it was refused.
    pub outcome: Result<f64, Reject>,
    /// What the launch occupies (`None` where the planner was not reached or refused it).
    pub footprint: Option<Footprint>,
}

/// What an accepted launch occupies, from the runtime's plan for exactly these tensors: the
/// ranking's second key, deciding between equal costs ([`ranked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// CTAs per cluster.
    pub cluster: u32,
    /// Threads per CTA.
    pub threads: u32,
    /// Dynamic shared memory per CTA, bytes.
    pub smem: u32,
    /// CTAs in the grid.
    pub ctas: u64,
}

impl Footprint {
    /// The footprint of a planned launch.
    pub fn of(plan: &LaunchPlan) -> Footprint {
        let product = |v: [u32; 3]| v.iter().map(|&x| u64::from(x)).product::<u64>();
        Footprint {
            cluster: plan.cluster.iter().product(),
            threads: plan.block.iter().product(),
            smem: plan.smem_bytes,
            ctas: product(plan.grid),
        }
    }

    /// The tie order, smaller first: fewer CTAs per cluster, fewer threads per CTA, less
    /// shared memory per CTA, then more CTAs.
    fn order(&self) -> (u32, u32, u32, std::cmp::Reverse<u64>) {
        (
            self.cluster,
            self.threads,
            self.smem,
            std::cmp::Reverse(self.ctas),
        )
    }
}

/// How a choice was made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// The fastest accepted artifact measured for this device, problem and shape bucket
    /// (`tirx tune`), with its median time in microseconds.
    Measured(f64),
    /// The cost model's cheapest (no cache entry, or none of its artifacts fits).
    Model,
}

/// The artifact chosen for a problem.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    /// Its kernel.
    pub kernel: &'static Kernel,
    /// The artifact.
    pub artifact: &'static KernelArtifact,
    /// How it was chosen.
    pub source: Source,
}

impl Choice {
    /// `kernel/config`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.kernel.name, self.artifact.config)
    }
}

/// Judges every artifact of `kernels` for `problem` on `device`, in catalogue order.
pub fn judge(
    problem: &dyn ProblemDef,
    kernels: &[&'static Kernel],
    device: &Device,
) -> Vec<Verdict> {
    let mut out = Vec::new();
    for &kernel in kernels {
        for artifact in kernel.artifacts {
            let (outcome, footprint) = match judge_one(problem, artifact, device) {
                Ok((cost, footprint)) => (Ok(cost), Some(footprint)),
                Err(why) => (Err(why), None),
            };
            out.push(Verdict {
                kernel,
                artifact,
                outcome,
                footprint,
            });
        }
    }
    out
}

/// One artifact: target, problem, then the launch planner, then the cost model.
fn judge_one(
    problem: &dyn ProblemDef,
    artifact: &'static KernelArtifact,
    device: &Device,
) -> Result<(f64, Footprint), Reject> {
    if artifact.target != device.target {
        return Err(Reject::Target {
            found: artifact.target,
        });
    }
    problem.solves(artifact)?;
    let (tensors, scalars) = problem.arguments(artifact);
    let plan = plan_launch_with(artifact.sig(), &tensors, &scalars, &device.limits)
        .map_err(|e| Reject::Launch(e.to_string()))?;
    Ok((problem.cost(artifact, device)?, Footprint::of(&plan)))
}

/// The accepted verdicts, best first: the cost model's estimate, and among equal estimates the
/// smaller launch ([`Footprint`]):
/// 1. fewer CTAs per cluster (a cluster is scheduled whole and waits for its slowest CTA: the
///    row kernels split over a cluster measured 0.69x the staged ones at 8192x32768,
///    docs/perf/rows-h200-2026-12-02b.md);
/// 2. fewer threads per CTA (at one row capacity the narrower CTA measured faster or equal:
///    softmax c8k 4131 GB/s against c8k_t512 3029, c32k 3084 against c32k_t1024 2880,
///    RMSNorm c4k 3875 against c4k_t256 3779, docs/perf/rows-h200-2026-12-02.md; where a
///    family measured otherwise its cost model says so, as LayerNorm's does);
/// 3. less shared memory per CTA (more CTAs fit an SM);
/// 4. more CTAs (the same work in finer pieces balances better over the SMs);
/// 5. the kernel with more artifacts. Launches equal in all of the above are the same launch
///    as far as the host can tell — a ladder level whose code the production kernel took over
///    whole (Blackwell level 9, `gemm_sm100_tma_epi`, is `gemm_sm100_prod/default` but for the
///    entry's name) — and the kernel that generalises it over types, layouts and tiles is the
///    one a user is meant to run.
///
/// Never the catalogue's order or a name. `dispatch::tests` checks that no two shipped
/// artifacts are equal in all of these at the top of any family's swept requests.
pub fn ranked(verdicts: &[Verdict]) -> Vec<(&Verdict, f64)> {
    let mut ok: Vec<(&Verdict, f64)> = verdicts
        .iter()
        .filter_map(|v| v.outcome.as_ref().ok().map(|c| (v, *c)))
        .collect();
    ok.sort_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then_with(|| tie_order(a.0).cmp(&tie_order(b.0)))
    });
    ok
}

/// The ranking's keys after the cost ([`ranked`]): the launch's [`Footprint`] order, then the
/// kernel with more artifacts first.
pub(crate) fn tie_order(v: &Verdict) -> impl Ord + std::fmt::Debug + use<> {
    (
        v.footprint.map(|f| f.order()),
        std::cmp::Reverse(v.kernel.artifacts.len()),
    )
}

/// The choice for `problem`: the cache's fastest accepted artifact, else the cost model's
/// cheapest; when nothing fits, [`RuntimeError::NoKernelFits`] with the table.
pub fn choose(
    problem: &dyn ProblemDef,
    kernels: &[&'static Kernel],
    device: &Device,
    cache: &tune::Cache,
) -> Result<Choice, RuntimeError> {
    let verdicts = judge(problem, kernels, device);
    let accepted = |kernel: &str, config: &str| {
        verdicts
            .iter()
            .find(|v| v.kernel.name == kernel && v.artifact.config == config && v.outcome.is_ok())
    };
    if let Some(entry) = cache.lookup(&problem.cache_key(device)) {
        for m in &entry.measured {
            if let Some(v) = accepted(&m.kernel, &m.config) {
                return Ok(Choice {
                    kernel: v.kernel,
                    artifact: v.artifact,
                    source: Source::Measured(m.median_us),
                });
            }
        }
    }
    match ranked(&verdicts).first() {
        Some((v, _)) => Ok(Choice {
            kernel: v.kernel,
            artifact: v.artifact,
            source: Source::Model,
        }),
        None => Err(RuntimeError::NoKernelFits {
            problem: problem.describe(),
            table: table(&verdicts),
        }),
    }
}

/// The candidates and their outcomes, one line each (`kernel/config  target  accepted, cost
/// 123.4` or `refused: why`), aligned.
pub fn table(verdicts: &[Verdict]) -> String {
    let label = |v: &Verdict| format!("{}/{}", v.kernel.name, v.artifact.config);
    let width = verdicts.iter().map(|v| label(v).len()).max().unwrap_or(0);
    let mut out = String::new();
    for v in verdicts {
        let what = match &v.outcome {
            Ok(cost) => format!("accepted, cost {cost:.1}"),
            Err(why) => format!("refused: {why}"),
        };
        out.push_str(&format!(
            "  {:<width$}  {:<7}  {what}\n",
            label(v),
            v.artifact.target.name()
        ));
    }
    out
}

/// Whether a grid expression reads the SM count (a persistent kernel's grid).
pub(crate) fn mentions_sms(e: &tirx::abi::SymExpr) -> bool {
    use tirx::abi::SymExpr;
    match e {
        SymExpr::Sms => true,
        SymExpr::Const(_) | SymExpr::Sym(_) => false,
        SymExpr::CeilDiv(a, b)
        | SymExpr::Div(a, b)
        | SymExpr::Mul(a, b)
        | SymExpr::Add(a, b)
        | SymExpr::Sub(a, b)
        | SymExpr::Rem(a, b) => mentions_sms(a) || mentions_sms(b),
    }
}

#[cfg(test)]
mod measured;
#[cfg(test)]
mod refusals;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod ties;
#[cfg(test)]
mod transposed;
