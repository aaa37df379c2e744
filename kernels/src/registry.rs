//! The host side of the shipped kernels: typed launches by role, the host entries that choose
//! an artifact through the dispatcher ([`crate::dispatch`]) and run it, and the checks that
//! run an artifact on a GPU against the CPU reference. The `tirx` tool and the tests use these;
//! the kernels themselves are listed by [`crate::catalogue`].
//!
//! GEMMs come in several element-type combinations (each config of a kernel has its own), so a
//! GEMM is launched here generic over the tensors' types: the chosen artifact's signature
//! decides which types it takes, and the runtime refuses others with
//! `RuntimeError::ElemMismatch` before anything runs. Tensors are passed by role (`a`, `b`,
//! `c`, `d`), in whatever order the kernel declares them.

pub use crate::catalogue::{all, find};
use crate::dispatch::gemm::GemmRequest;
use crate::dispatch::{self, Choice, Device, tune::Cache};
use crate::reference::{HostElem, Rng, gemm_nn_f64, gemm_tn_f64, rel_frobenius};
use half::{bf16, f16};
use tirx::abi::ElemType;
use tirx::problem::{self, Epilogue};
use tirx::{Element, Kernel, KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};

/// A copy kernel's typed launcher (`src` → `dst`, both M×N bf16), e.g. `tma_copy::launch`.
pub type CopyLaunch =
    fn(&Runtime, &str, &Tensor<bf16>, &mut Tensor<bf16>) -> Result<(), RuntimeError>;

/// The launch of a GEMM kernel's configs (`d = a·bᵀ` with `b` N×K, `d = a·b` with `b` K×N,
/// or the scaled form) for any element types its configs take; the runtime checks `b`'s
/// shape against the kernel's.
#[derive(Clone, Copy)]
pub struct GemmLaunch {
    /// The kernel's artifacts.
    pub artifacts: &'static [KernelArtifact],
}

impl GemmLaunch {
    /// The launch of `kernel`'s configs.
    pub fn of(kernel: &'static Kernel) -> GemmLaunch {
        GemmLaunch {
            artifacts: kernel.artifacts,
        }
    }

    /// Launches `config` on `rt`'s device. A config compiled for other element types is a
    /// `RuntimeError::ElemMismatch`, returned before launch.
    pub fn launch<A: Element, D: Element>(
        &self,
        rt: &Runtime,
        config: &str,
        a: &Tensor<A>,
        b: &Tensor<A>,
        d: &mut Tensor<D>,
    ) -> Result<(), RuntimeError> {
        let art = tirx::select(self.artifacts, config, rt.target()?)?;
        launch_roles(
            rt,
            art,
            &[("a", a.view()), ("b", b.view()), ("d", d.view())],
            1.0,
            0.0,
        )
    }

    /// Launches `config` of a scaled kernel: D = α·A·op(B) + β·C (C and D in D's type; C is
    /// not read where β = 0).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_scaled<A: Element, D: Element>(
        &self,
        rt: &Runtime,
        config: &str,
        alpha: f32,
        a: &Tensor<A>,
        b: &Tensor<A>,
        beta: f32,
        c: &Tensor<D>,
        d: &mut Tensor<D>,
    ) -> Result<(), RuntimeError> {
        let art = tirx::select(self.artifacts, config, rt.target()?)?;
        let roles = [
            ("a", a.view()),
            ("b", b.view()),
            ("c", c.view()),
            ("d", d.view()),
        ];
        launch_roles(rt, art, &roles, alpha, beta)
    }

    /// The element types `config` takes (from its first compiled target's signature; they do
    /// not depend on the target), or `None` when there is no such config.
    pub fn types(&self, config: &str) -> Option<GemmTypes> {
        let a = self.artifacts.iter().find(|a| a.config == config)?;
        Some(GemmTypes {
            input: a.elem_of("a")?,
            output: a.elem_of("d")?,
        })
    }
}

/// Launches `art` with the tensors of `roles` in the order its signature declares them, and
/// its scalars (`alpha`, `beta`) by name. A role the kernel does not take is left out; a
/// tensor it takes that is not among `roles` is the runtime's argument-count error.
fn launch_roles(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    alpha: f32,
    beta: f32,
) -> Result<(), RuntimeError> {
    let sig = (art.signature)();
    let args: Vec<TensorArg<'_>> = sig
        .tensors
        .iter()
        .filter_map(|t| {
            roles
                .iter()
                .find(|(r, _)| *r == t.name)
                .map(|(_, v)| v.clone())
        })
        .collect();
    let scalars: Vec<f32> = sig
        .scalars
        .iter()
        .map(|s| if s == "alpha" { alpha } else { beta })
        .collect();
    rt.launch_with(art, &args, &scalars)
}

/// The element types of a GEMM: A and B (`input`) and D (`output`); accumulation is f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmTypes {
    /// A's and B's element type.
    pub input: ElemType,
    /// D's element type.
    pub output: ElemType,
}

impl GemmTypes {
    /// BF16 in, BF16 out: the `default` configs.
    pub const BF16: GemmTypes = GemmTypes {
        input: ElemType::Bf16,
        output: ElemType::Bf16,
    };

    /// Every combination the shipped GEMMs take: BF16/FP16 in × BF16/FP16/FP32 out.
    pub const ALL: [GemmTypes; 6] = {
        use ElemType::{Bf16, F16, F32};
        [
            GemmTypes {
                input: Bf16,
                output: Bf16,
            },
            GemmTypes {
                input: Bf16,
                output: F16,
            },
            GemmTypes {
                input: Bf16,
                output: F32,
            },
            GemmTypes {
                input: F16,
                output: Bf16,
            },
            GemmTypes {
                input: F16,
                output: F16,
            },
            GemmTypes {
                input: F16,
                output: F32,
            },
        ]
    };

    /// Whether the shipped GEMMs take this combination ([`GemmTypes::ALL`]).
    pub fn is_shipped(self) -> bool {
        GemmTypes::ALL.contains(&self)
    }

    /// Relative Frobenius error a GEMM with this output type must stay under: the output's
    /// rounding (2⁻⁹ relative for bf16, 2⁻¹² for f16) with a margin; for f32 the f32
    /// accumulation order only, since the inputs are exact.
    pub fn tolerance(self) -> f64 {
        match self.output {
            ElemType::Bf16 => GEMM_TOL,
            ElemType::F16 => 2e-3,
            ElemType::F32 => 1e-4,
            // No GEMM writes 8-bit floats; their rounding is 2⁻⁴ (E4M3) relative.
            ElemType::E4m3 | ElemType::E5m2 | ElemType::Ue8m0 => 2f64.powi(-3),
        }
    }
}

impl std::fmt::Display for GemmTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.input.name(), self.output.name())
    }
}

/// SMs of an H100/H200 SXM: the device [`Device::h200`] describes, for choices made without
/// a GPU; the host entries take the device's own count.
pub const H200_SMS: usize = 132;

/// The artifact the host takes for `request` on `device`: the tune cache's fastest accepted
/// one, else the cost model's (see [`crate::dispatch`]); the table of candidates when none fits.
pub fn choose_gemm(device: &Device, request: &GemmRequest) -> Result<Choice, RuntimeError> {
    dispatch::choose(request, &all(), device, Cache::host())
}

/// D = A·op(B) with B in `layout`, or D = α·A·op(B) + β·C when `scaled` is `Some((α, C, β))`,
/// on the artifact the dispatcher chooses for these tensors and this device; returns the
/// choice. α = 1, β = 0 is the plain product (C is not read).
pub fn gemm<A: Element, D: Element>(
    rt: &Runtime,
    layout: problem::BLayout,
    a: &Tensor<A>,
    b: &Tensor<A>,
    scaled: Option<(f32, &Tensor<D>, f32)>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let scaled = scaled.filter(|&(alpha, _, beta)| alpha != 1.0 || beta != 0.0);
    let (av, bv, dv) = (a.view(), b.view(), d.view());
    let cv = scaled.map(|(_, c, _)| c.view());
    let request = GemmRequest::on(
        layout,
        &av,
        &bv,
        scaled
            .zip(cv.as_ref())
            .map(|((alpha, _, beta), c)| (alpha, c, beta)),
        &dv,
    );
    let choice = choose_gemm(&Device::of(rt)?, &request)?;
    let (alpha, beta) = request.scalars;
    let mut roles = vec![("a", av), ("b", bv), ("d", dv)];
    if let Some(c) = cv {
        roles.push(("c", c));
    }
    launch_roles(rt, choice.artifact, &roles, alpha, beta)?;
    Ok(choice)
}

/// D = A·Bᵀ (B given N×K) on the host's choice for the tensors' shapes and types; a
/// combination nothing takes is `RuntimeError::NoKernelFits`, with the table of candidates.
pub fn gemm_auto<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Tn, a, b, None, d)
}

/// D = A·B (B given K×N) on the host's choice ([`gemm_auto`]'s NN counterpart).
pub fn gemm_auto_nn<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Nn, a, b, None, d)
}

/// D = α·A·Bᵀ + β·C (B given N×K) on the host's choice; α = 1, β = 0 is [`gemm_auto`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled<A: Element, D: Element>(
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Tn, a, b, Some((alpha, c, beta)), d)
}

/// [`gemm_scaled`] with B given K×N (D = α·A·B + β·C).
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled_nn<A: Element, D: Element>(
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    gemm(rt, problem::BLayout::Nn, a, b, Some((alpha, c, beta)), d)
}

/// D = act(A·Bᵀ + bias) (B given N×K, `bias` a vector [N] in D's type) on the host's choice
/// of a fused-epilogue kernel; a combination nothing takes is `RuntimeError::NoKernelFits`.
pub fn gemm_bias_act<A: Element, D: Element>(
    rt: &Runtime,
    act: problem::Act,
    a: &Tensor<A>,
    b: &Tensor<A>,
    bias: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<Choice, RuntimeError> {
    let (av, bv, biasv, dv) = (a.view(), b.view(), bias.view(), d.view());
    let request = GemmRequest::on_bias(problem::BLayout::Tn, act, &av, &bv, &biasv, &dv);
    let choice = choose_gemm(&Device::of(rt)?, &request)?;
    let roles = [("a", av), ("b", bv), ("bias", biasv), ("d", dv)];
    launch_roles(rt, choice.artifact, &roles, 1.0, 0.0)?;
    Ok(choice)
}

/// The choice for a GEMM given by its problem alone (contiguous tensors), on `device`:
/// what `tirx bench gemm` measures by default and `tirx tune` compares with.
pub fn choose_gemm_for(
    device: &Device,
    layout: problem::BLayout,
    epilogue: Epilogue,
    types: GemmTypes,
    shape: (usize, usize, usize),
) -> Result<Choice, RuntimeError> {
    choose_gemm(
        device,
        &GemmRequest::contiguous(layout, epilogue, types, shape),
    )
}

/// What a check found.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Problem shape (M, N, K; K = 0 for copies).
    pub shape: (usize, usize, usize),
    /// Relative Frobenius error (GEMM) or mismatching elements (copy).
    pub error: f64,
    /// Whether it is within tolerance.
    pub ok: bool,
    /// For a failed GEMM check, which 64×64 blocks of D are wrong, one text line per block row
    /// (`.` right, `X` over the tolerance, at most 32×32 blocks shown); empty otherwise.
    pub blocks: String,
}

/// Relative Frobenius error a bf16-output GEMM must stay under.
pub const GEMM_TOL: f64 = 1e-2;

/// Runs `config` of `kernel` on random data of shape `(m, n, k)` and compares with the CPU
/// reference, whatever problem the config solves (from its artifact's metadata): a copy bit-exact, a
/// GEMM within its output type's tolerance (a scaled one with α = 1.5, β = −0.75).
pub fn check(
    rt: &Runtime,
    kernel: &'static Kernel,
    config: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    use problem::Problem;
    let launch = GemmLaunch::of(kernel);
    let solves = kernel
        .artifacts
        .iter()
        .find(|a| a.config == config)
        .and_then(|a| a.problem);
    match solves.or(kernel.problem()) {
        Some(Problem::Copy) => check_copy(rt, kernel, config, m, n, seed),
        Some(Problem::Gemm(g)) => {
            if let Epilogue::Bias(act) = g.epilogue {
                return fused::check_bias(rt, kernel, config, act, (m, n, k), seed);
            }
            let layout = BLayout::of(g.b);
            let scaled = (g.epilogue == Epilogue::Scaled).then_some((1.5, -0.75));
            check_typed(Check {
                rt,
                launch,
                layout,
                config,
                shape: (m, n, k),
                scaled,
                seed,
            })
        }
        Some(Problem::SiluMul) => {
            crate::row_kernels::host::check_silu_mul(rt, kernel, config, (m, n), seed)
        }
        Some(Problem::Attention) => {
            crate::attention::host::check(rt, kernel, config, (m, n, k), seed)
        }
        Some(Problem::Row(op)) => {
            crate::row_kernels::host::check(rt, kernel, config, op, (m, n), seed)
        }
        None => Err(RuntimeError::NoKernelFits {
            problem: format!("a check of `{}`", kernel.name),
            table: "  it declares no problem (`solves = …`), so nothing knows its inputs\n".into(),
        }),
    }
}

/// Runs a copy of an M×N random tensor and counts elements that are not bit-exact.
pub fn check_copy(
    rt: &Runtime,
    kernel: &'static Kernel,
    config: &str,
    m: usize,
    n: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let host = Rng::new(seed).bf16s(m * n);
    let src = rt.upload(&host, &[m, n])?;
    let mut dst = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut dst)?;
    let art = tirx::select(kernel.artifacts, config, rt.target()?)?;
    launch_roles(
        rt,
        art,
        &[("src", src.view()), ("dst", dst.view())],
        1.0,
        0.0,
    )?;
    rt.synchronize()?;
    let got = rt.download(&dst)?;
    let bad = got
        .iter()
        .zip(&host)
        .filter(|(g, h)| g.to_bits() != h.to_bits())
        .count();
    Ok(CheckReport {
        shape: (m, n, 0),
        error: bad as f64,
        ok: bad == 0,
        blocks: String::new(),
    })
}

/// The layout of B a GEMM check uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BLayout {
    /// B given N×K (D = A·Bᵀ).
    Tn,
    /// B given K×N (D = A·B).
    Nn,
}

impl BLayout {
    /// B's shape for an M×N×K problem: N×K or K×N.
    pub fn b_shape(self, _m: usize, n: usize, k: usize) -> [usize; 2] {
        match self {
            BLayout::Tn => [n, k],
            BLayout::Nn => [k, n],
        }
    }
    /// The layout of a problem's B.
    pub fn of(layout: problem::BLayout) -> BLayout {
        match layout {
            problem::BLayout::Tn => BLayout::Tn,
            problem::BLayout::Nn => BLayout::Nn,
        }
    }
    /// The problem's spelling of this layout.
    pub fn problem(self) -> problem::BLayout {
        match self {
            BLayout::Tn => problem::BLayout::Tn,
            BLayout::Nn => problem::BLayout::Nn,
        }
    }
    /// The f64 reference D (m×n) of `a` (m×k) and `b` in this layout.
    pub fn reference<T: HostElem>(
        self,
        a: &[T],
        b: &[T],
        m: usize,
        n: usize,
        k: usize,
    ) -> Vec<f64> {
        match self {
            BLayout::Tn => gemm_tn_f64(a, b, m, n, k),
            BLayout::Nn => gemm_nn_f64(a, b, m, n, k),
        }
    }
    /// The first `cn` output columns' worth of `b` (the operand of a D corner's reference):
    /// the first `cn` rows of an N×K B, or the first `cn` columns of every row of a K×N B.
    pub fn b_columns<T: Copy>(self, b: &[T], n: usize, k: usize, cn: usize) -> Vec<T> {
        match self {
            BLayout::Tn => b[..cn * k].to_vec(),
            BLayout::Nn => (0..k).flat_map(|p| b[p * n..p * n + cn].to_vec()).collect(),
        }
    }
}

/// Runs D = A·Bᵀ of `config` on random data in the config's element types (its signature's)
/// and compares with the f64 reference, within the output type's tolerance.
pub fn check_gemm(
    rt: &Runtime,
    launch: GemmLaunch,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_gemm_layout(rt, launch, BLayout::Tn, config, (m, n, k), seed)
}

/// [`check_gemm`] for D = A·B with B given K×N, against the f64 NN reference.
pub fn check_gemm_nn(
    rt: &Runtime,
    launch: GemmLaunch,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_gemm_layout(rt, launch, BLayout::Nn, config, (m, n, k), seed)
}

/// A GEMM check with B in `layout`, in the config's element types.
fn check_gemm_layout(
    rt: &Runtime,
    launch: GemmLaunch,
    layout: BLayout,
    config: &str,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_typed(Check {
        rt,
        launch,
        layout,
        config,
        shape: (m, n, k),
        scaled: None,
        seed,
    })
}

/// Runs D = α·A·op(B) + β·C of a scaled kernel's `config` (B in `layout`) on
/// random data (C random, or all NaN where β = 0, which the kernel must then not read; D
/// poisoned) and compares with the f64 reference α·A·op(B) + β·C.
#[allow(clippy::too_many_arguments)]
pub fn check_gemm_scaled(
    rt: &Runtime,
    launch: GemmLaunch,
    layout: BLayout,
    config: &str,
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    beta: f32,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_typed(Check {
        rt,
        launch,
        layout,
        config,
        shape: (m, n, k),
        scaled: Some((alpha, beta)),
        seed,
    })
}

/// Runs `run` in its config's element types.
fn check_typed(run: Check<'_>) -> Result<CheckReport, RuntimeError> {
    // An unknown config: the launch reports it, with the configs that exist.
    let types = run.launch.types(run.config).unwrap_or(GemmTypes::BF16);
    use ElemType::{Bf16, F16, F32};
    match (types.input, types.output) {
        (Bf16, Bf16) => run.typed::<bf16, bf16>(),
        (Bf16, F16) => run.typed::<bf16, f16>(),
        (Bf16, F32) => run.typed::<bf16, f32>(),
        (F16, Bf16) => run.typed::<f16, bf16>(),
        (F16, F16) => run.typed::<f16, f16>(),
        (F16, F32) => run.typed::<f16, f32>(),
        (F32, Bf16) => run.typed::<f32, bf16>(),
        (F32, F16) => run.typed::<f32, f16>(),
        (F32, F32) => run.typed::<f32, f32>(),
        // No shipped GEMM config takes 8-bit floats (`GemmTypes::ALL`); the FP8 MMA kinds are
        // checked in the emulator (tests/kinds.rs).
        (i, o) => Err(RuntimeError::NoKernelFits {
            problem: format!("gemm {} -> {}", i.name(), o.name()),
            table: "  (no GEMM check runs 8-bit floats on a GPU yet)".into(),
        }),
    }
}

/// One GEMM check, before its element types are chosen.
struct Check<'r> {
    rt: &'r Runtime,
    launch: GemmLaunch,
    layout: BLayout,
    config: &'r str,
    shape: (usize, usize, usize),
    /// (α, β) of a scaled GEMM.
    scaled: Option<(f32, f32)>,
    seed: u64,
}

impl Check<'_> {
    /// Random A, B in `A`; D in `D`, poisoned first; compared with the f64 reference.
    fn typed<A: HostElem, D: HostElem>(&self) -> Result<CheckReport, RuntimeError> {
        let (rt, (m, n, k)) = (self.rt, self.shape);
        let mut rng = Rng::new(self.seed);
        let (ha, hb): (Vec<A>, Vec<A>) = (rng.values(m * k), rng.values(n * k));
        let a = rt.upload(&ha, &[m, k])?;
        let b = rt.upload(&hb, &self.layout.b_shape(m, n, k))?;
        let mut d = rt.zeros::<D>(&[m, n])?;
        rt.poison(&mut d)?;
        let mut want = self.layout.reference(&ha, &hb, m, n, k);
        match self.scaled {
            None => self.launch.launch(rt, self.config, &a, &b, &mut d)?,
            Some((alpha, beta)) => {
                let hc: Vec<D> = rng.values(m * n);
                let mut c = rt.upload(&hc, &[m, n])?;
                if beta == 0.0 {
                    rt.poison(&mut c)?;
                }
                for (w, cv) in want.iter_mut().zip(&hc) {
                    let old = if beta == 0.0 { 0.0 } else { cv.to_f64() };
                    *w = f64::from(alpha) * *w + f64::from(beta) * old;
                }
                let launch = self.launch;
                launch.launch_scaled(rt, self.config, alpha, &a, &b, beta, &c, &mut d)?;
            }
        }
        rt.synchronize()?;
        let got = rt.download(&d)?;
        let err = rel_frobenius(&got, &want);
        let tol = GemmTypes {
            input: A::ELEM,
            output: D::ELEM,
        }
        .tolerance();
        Ok(CheckReport {
            shape: (m, n, k),
            error: err,
            ok: err < tol,
            blocks: if err < tol {
                String::new()
            } else {
                block_map(&got, &want, m, n, tol)
            },
        })
    }
}

/// The 64×64 blocks of an M×N result, `.` where the block's relative error is under `tol`
/// and `X` where it is not, one line per block row (at most 32×32 blocks).
fn block_map<T: HostElem>(got: &[T], want: &[f64], m: usize, n: usize, tol: f64) -> String {
    let mut out = String::new();
    for bi in 0..m.div_ceil(64).min(32) {
        for bj in 0..n.div_ceil(64).min(32) {
            let (mut num, mut den) = (0.0f64, 0.0f64);
            for i in bi * 64..((bi + 1) * 64).min(m) {
                for j in bj * 64..((bj + 1) * 64).min(n) {
                    let (g, w) = (got[i * n + j].to_f64(), want[i * n + j]);
                    num += (g - w) * (g - w);
                    den += w * w;
                }
            }
            // NaN is wrong too: only a finite error under the tolerance is right.
            let right = num.sqrt() <= tol * den.sqrt().max(f64::MIN_POSITIVE);
            let bad = !right;
            out.push(if bad { 'X' } else { '.' });
        }
        out.push('\n');
    }
    out
}

mod fused;
pub use fused::check_bias as fused_check;
#[cfg(test)]
mod tests;
