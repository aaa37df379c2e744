//! Every shipped kernel, with its compiled artifacts and a host-side check that runs it on a
//! GPU and compares with the CPU reference. The `tirx` tool and the tests iterate this list.
//!
//! GEMMs come in several element-type combinations (each config of a kernel has its own; see
//! `gemm/warp_specialized.rs`), so a GEMM is launched here through [`GemmLaunch`], generic over
//! the tensors' types: the chosen artifact's signature decides which types it takes, and the
//! runtime refuses others with `RuntimeError::ElemMismatch` before anything runs. The
//! kernels' own typed launchers (`gemm_sm90_tma_epi::launch::<TA, TD>`) do the same.

use crate::copy::tma_copy;
use crate::gemm::warp_specialized::ladder as ws;
use crate::gemm::{
    level_01_sync as gemm90sync, level_02_tma as gemm90tma, level_03_pipeline_tcgen05 as gemm100,
    level_03_pipeline_wgmma as gemm90,
};
use crate::reference::{HostElem, Rng, gemm_nn_f64, gemm_tn_f64, rel_frobenius};
use half::{bf16, f16};
use tirx::abi::ElemType;
use tirx::{Element, KernelArtifact, Runtime, RuntimeError, Tensor};

/// A launcher of a copy kernel (`src` → `dst`, both M×N).
pub type CopyLaunch =
    fn(&Runtime, &str, &Tensor<bf16>, &mut Tensor<bf16>) -> Result<(), RuntimeError>;

/// The launch of a GEMM kernel (`d = a·bᵀ` with `b` N×K for [`Kind::Gemm`], `d = a·b` with `b`
/// K×N for [`Kind::GemmNn`]) for any element types its configs take; the runtime checks `b`'s
/// shape against the kernel's.
#[derive(Clone, Copy)]
pub struct GemmLaunch {
    /// The kernel's artifacts.
    pub artifacts: &'static [KernelArtifact],
}

impl GemmLaunch {
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
        rt.launch_variant(self.artifacts, config, &[a.view(), b.view(), d.view()])
    }

    /// Launches `config` of a [`Kind::GemmScaled`] kernel: D = α·A·op(B) + β·C (C and D in
    /// D's type; C is not read where β = 0).
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
        rt.launch_variant_with(
            self.artifacts,
            config,
            &[a.view(), b.view(), c.view(), d.view()],
            &[alpha, beta],
        )
    }

    /// The element types `config` takes (from its first compiled target's signature; they do
    /// not depend on the target), or `None` when there is no such config.
    pub fn types(&self, config: &str) -> Option<GemmTypes> {
        let a = self.artifacts.iter().find(|a| a.config == config)?;
        let sig = (a.signature)();
        let elem = |name: &str| sig.tensors.iter().find(|t| t.name == name).map(|t| t.elem);
        Some(GemmTypes {
            input: elem("a")?,
            output: elem("d")?,
        })
    }
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

    /// The config name this combination has in `gemm_sm90_ws` and `gemm_sm90_tma_epi` (the
    /// naming of `gemm/warp_specialized.rs`); `None` for a combination nothing ships.
    pub fn config(self) -> Option<&'static str> {
        use ElemType::{Bf16, F16, F32};
        Some(match (self.input, self.output) {
            (Bf16, Bf16) => "default",
            (Bf16, F16) => "bf16_f16",
            (Bf16, F32) => "bf16_f32",
            (F16, Bf16) => "f16_bf16",
            (F16, F16) => "f16",
            (F16, F32) => "f16_f32",
            _ => return None,
        })
    }

    /// Relative Frobenius error a GEMM with this output type must stay under: the output's
    /// rounding (2⁻⁹ relative for bf16, 2⁻¹² for f16) with a margin; for f32 the f32
    /// accumulation order only, since the inputs are exact.
    pub fn tolerance(self) -> f64 {
        match self.output {
            ElemType::Bf16 => GEMM_TOL,
            ElemType::F16 => 2e-3,
            ElemType::F32 => 1e-4,
        }
    }
}

impl std::fmt::Display for GemmTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.input.name(), self.output.name())
    }
}

/// What a kernel computes, and its typed launcher.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A tile copy.
    Copy(CopyLaunch),
    /// D = A·Bᵀ, B given N×K (both operands K-major: "TN" in BLAS column-major terms), for
    /// the element types of each config.
    Gemm(GemmLaunch),
    /// D = A·B, B given K×N (B N-major: "NN").
    GemmNn(GemmLaunch),
    /// D = α·A·op(B) + β·C ([`GemmLaunch::launch_scaled`]), B in the given layout (N×K for
    /// [`BLayout::Tn`], K×N for [`BLayout::Nn`]).
    GemmScaled(GemmLaunch, BLayout),
}

/// A shipped kernel.
pub struct Shipped {
    /// The kernel's name.
    pub name: &'static str,
    /// Every config × target compiled.
    pub artifacts: &'static [KernelArtifact],
    /// What it computes.
    pub kind: Kind,
}

/// All shipped kernels.
pub fn all() -> [Shipped; 19] {
    [
        Shipped {
            name: "tma_copy",
            artifacts: tma_copy::tma_copy::ARTIFACTS,
            kind: Kind::Copy(tma_copy::tma_copy::launch),
        },
        Shipped {
            name: "gemm_sm90_sync",
            artifacts: gemm90sync::gemm_sm90_sync::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: gemm90sync::gemm_sm90_sync::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_tma",
            artifacts: gemm90tma::gemm_sm90_tma::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: gemm90tma::gemm_sm90_tma::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90",
            artifacts: gemm90::gemm_sm90::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: gemm90::gemm_sm90::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_ws1",
            artifacts: ws::gemm_sm90_ws1::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: ws::gemm_sm90_ws1::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_2wg",
            artifacts: ws::gemm_sm90_2wg::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: ws::gemm_sm90_2wg::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_ws",
            artifacts: ws::gemm_sm90_ws::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: ws::gemm_sm90_ws::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_cluster",
            artifacts: ws::gemm_sm90_cluster::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: ws::gemm_sm90_cluster::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_tma_epi",
            artifacts: ws::gemm_sm90_tma_epi::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: ws::gemm_sm90_tma_epi::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_pair_n",
            artifacts: ws::gemm_sm90_pair_n::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: ws::gemm_sm90_pair_n::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_ws_nn",
            artifacts: ws::gemm_sm90_ws_nn::ARTIFACTS,
            kind: Kind::GemmNn(GemmLaunch {
                artifacts: ws::gemm_sm90_ws_nn::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_cluster_nn",
            artifacts: ws::gemm_sm90_cluster_nn::ARTIFACTS,
            kind: Kind::GemmNn(GemmLaunch {
                artifacts: ws::gemm_sm90_cluster_nn::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_tma_epi_nn",
            artifacts: ws::gemm_sm90_tma_epi_nn::ARTIFACTS,
            kind: Kind::GemmNn(GemmLaunch {
                artifacts: ws::gemm_sm90_tma_epi_nn::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_pair_n_nn",
            artifacts: ws::gemm_sm90_pair_n_nn::ARTIFACTS,
            kind: Kind::GemmNn(GemmLaunch {
                artifacts: ws::gemm_sm90_pair_n_nn::ARTIFACTS,
            }),
        },
        Shipped {
            name: "gemm_sm90_tma_epi_abc",
            artifacts: ws::gemm_sm90_tma_epi_abc::ARTIFACTS,
            kind: Kind::GemmScaled(
                GemmLaunch {
                    artifacts: ws::gemm_sm90_tma_epi_abc::ARTIFACTS,
                },
                BLayout::Tn,
            ),
        },
        Shipped {
            name: "gemm_sm90_tma_epi_abc_nn",
            artifacts: ws::gemm_sm90_tma_epi_abc_nn::ARTIFACTS,
            kind: Kind::GemmScaled(
                GemmLaunch {
                    artifacts: ws::gemm_sm90_tma_epi_abc_nn::ARTIFACTS,
                },
                BLayout::Nn,
            ),
        },
        Shipped {
            name: "gemm_sm90_pair_n_abc",
            artifacts: ws::gemm_sm90_pair_n_abc::ARTIFACTS,
            kind: Kind::GemmScaled(
                GemmLaunch {
                    artifacts: ws::gemm_sm90_pair_n_abc::ARTIFACTS,
                },
                BLayout::Tn,
            ),
        },
        Shipped {
            name: "gemm_sm90_pair_n_abc_nn",
            artifacts: ws::gemm_sm90_pair_n_abc_nn::ARTIFACTS,
            kind: Kind::GemmScaled(
                GemmLaunch {
                    artifacts: ws::gemm_sm90_pair_n_abc_nn::ARTIFACTS,
                },
                BLayout::Nn,
            ),
        },
        Shipped {
            name: "gemm_sm100",
            artifacts: gemm100::gemm_sm100::ARTIFACTS,
            kind: Kind::Gemm(GemmLaunch {
                artifacts: gemm100::gemm_sm100::ARTIFACTS,
            }),
        },
    ]
}

/// The shipped kernel named `name`.
pub fn find(name: &str) -> Option<Shipped> {
    all().into_iter().find(|k| k.name == name)
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

/// The GEMM `tirx bench gemm` measures by default: the top of the ladder.
pub const PRODUCTION_GEMM: &str = "gemm_sm90_tma_epi";

/// The NN GEMM (B given K×N) `tirx bench gemm --layout nn` measures by default.
pub const PRODUCTION_GEMM_NN: &str = "gemm_sm90_tma_epi_nn";

/// SMs of an H100/H200 SXM: what [`choose_gemm`] and [`choose_gemm_nn`] assume; the `_for`
/// choices take the count (the `gemm_*` entries pass the device's), and the persistent
/// kernels read it at launch (`SMS` in their grid).
pub const H200_SMS: usize = 132;

/// The host-side choice of GEMM kernel and config for a BF16 → BF16 shape (sm_90a).
///
/// First the tile: of 128×256, 128×128 and 128×64, the one whose tiles keep the SMs busiest
/// over the waves they need (`tiles / (waves · SMs)`), the larger tile on a tie (within 2 %):
/// a small output is spread over more SMs with smaller tiles, a large one keeps the larger
/// tile's better operand reuse. Then the kernel for that tile:
/// - D's rows 16-byte aligned (N a multiple of 8): the TMA-store epilogue kernels —
///   `gemm_sm90_tma_epi` for 128×256 / 128×128 (`n128`); for 128×64, `gemm_sm90_pair_n`
///   (A shared by a cluster pair) when A's rows are not 128-byte aligned (the operand loads
///   are then the limit), else `gemm_sm90_ws`/`n64`;
/// - otherwise the register-epilogue kernels: `gemm_sm90_cluster` (`default`, `n128`) or
///   `gemm_sm90_ws`/`n64`.
///
/// Measured basis (docs/perf/gemm-h200.md, 2026-11-30 small-shape runs and the 2026-11-29
/// sweeps): 4096³ and up best with 128×256 and the TMA-store epilogue; 2000×1000×1000 with
/// 128×128 (`tma_epi/n128` 15.7 µs against 25.0 for 128×64); 1000³ `pair_n` 12.0 µs against
/// `ws/n64` 14.6; 1024³ and 1024×1024×4096 `ws/n64` ahead of `pair_n` (10.2 against 10.8,
/// 20.5 against 23.1).
pub fn choose_gemm(m: usize, n: usize, k: usize) -> (&'static str, &'static str) {
    choose_gemm_for(H200_SMS, GemmTypes::BF16, m, n, k)
        .expect("every shipped combination has a choice, bf16 → bf16 first")
}

/// The host-side choice for any element types on a device with `sms` SMs, by the same rule as
/// [`choose_gemm`]: the tile from [`tile_n`], then the kernel for it, in the config of those types (config names:
/// `default`/`n128`/`n64` for BF16 → BF16; otherwise the types' name from
/// [`GemmTypes::config`], with `_n128`/`_n64` for the smaller tiles):
/// - 128×256: `gemm_sm90_tma_epi` for a 16-bit D with 16-byte rows; `gemm_sm90_cluster` for an
///   f32 D (its register stores fill whole sectors; measured 681 against 624 TFLOP/s for the
///   128×128 TMA-store config at 8192³, 2026-11-30) and for BF16 rows that are not aligned;
/// - 128×192 (`n192` configs): the same kernels — where 128×256 tiles leave a wave mostly
///   empty (1536³: 72 tiles on 132 SMs, 96 of 128×192; measured 18.8 against 23.1 µs);
/// - 128×128: `gemm_sm90_tma_epi` (`n128`, or the f32-D config, which is 128×128), or
///   `gemm_sm90_cluster`/`n128` for unaligned BF16 rows;
/// - 128×64: `gemm_sm90_pair_n` when A's rows are not 128-byte aligned and D's are 16-byte
///   aligned, else `gemm_sm90_ws` (`n64`).
///
/// Where a kernel lacks the types' config (`gemm_sm90_cluster` has no 16-bit configs but
/// BF16's), the fallback is `gemm_sm90_ws` at 128×128. `None` for a combination nothing ships
/// (f32 inputs).
pub fn choose_gemm_for(
    sms: usize,
    types: GemmTypes,
    m: usize,
    n: usize,
    k: usize,
) -> Option<(&'static str, &'static str)> {
    types.config()?;
    let bn = tile_n(sms, m, n, &WIDTHS);
    let f32_out = types.output == ElemType::F32;
    let d_rows_aligned = (n * types.output.bytes() as usize).is_multiple_of(16);
    let a_rows_aligned = (k * types.input.bytes() as usize).is_multiple_of(128);
    let pick = |kernel: &'static str, suffix: Option<&str>| {
        config_of(kernel, types, suffix).map(|c| (kernel, c))
    };
    let choice = match (bn, d_rows_aligned) {
        (256, true) if !f32_out => pick("gemm_sm90_tma_epi", None),
        (256, _) => pick("gemm_sm90_cluster", None),
        (192, true) if !f32_out => pick("gemm_sm90_tma_epi", Some("n192")),
        (192, _) => pick("gemm_sm90_cluster", Some("n192")),
        (128, true) if f32_out => pick("gemm_sm90_tma_epi", None),
        (128, true) => pick("gemm_sm90_tma_epi", Some("n128")),
        (128, false) => pick("gemm_sm90_cluster", Some("n128")),
        (_, true) if !a_rows_aligned => pick("gemm_sm90_pair_n", None),
        _ => pick("gemm_sm90_ws", Some("n64")),
    };
    choice.or_else(|| pick("gemm_sm90_ws", None))
}

/// The config of `kernel` for `types` with an optional tile suffix (`n128`, `n64`): the
/// types' base name ([`GemmTypes::config`]), `<base>_<suffix>`, or just the suffix for BF16 →
/// BF16 (whose base name is `default`); `None` when the kernel has no such config.
fn config_of(kernel: &str, types: GemmTypes, suffix: Option<&str>) -> Option<&'static str> {
    let base = types.config()?;
    let name = match (base, suffix) {
        (base, None) => base.to_string(),
        ("default", Some(suffix)) => suffix.to_string(),
        (base, Some(suffix)) => format!("{base}_{suffix}"),
    };
    find(kernel)?
        .artifacts
        .iter()
        .find(|a| a.config == name)
        .map(|a| a.config)
}

/// The tile widths (of 128-row tiles) the choices weigh for a 16-bit D (and the TN choice for
/// any D).
pub const WIDTHS: [usize; 4] = [256, 192, 128, 64];
/// The widths the NN and scaled choices weigh for an f32 D, which has no 128×192 configs there.
pub const WIDTHS_WITHOUT_192: [usize; 3] = [256, 128, 64];

/// The tile width the host-side choice takes for an M×N output on `sms` SMs, of `widths`
/// (largest first): the one with the least estimated time, `waves × width / efficiency`, where
/// a wave is `sms` tiles and a tile's time is proportional to its width over its efficiency
/// relative to 128×256 — 1.0 for 256 and 192, 0.92 for 128, 0.85 for 64 (measured on the H200,
/// docs/perf/gemm-h200.md, 2026-11-30 01:48: 6144³ in 9 waves of 128×256 tiles 682.5 µs, 12
/// waves of 128×192 670.5, 18 of 128×128 743.6). A smaller width must be 3 % faster to win.
pub fn tile_n(sms: usize, m: usize, n: usize, widths: &[usize]) -> usize {
    let cost = |bn: usize| {
        let efficiency = match bn {
            256 | 192 => 1.0,
            128 => 0.92,
            _ => 0.85,
        };
        let tiles = m.div_ceil(128) * n.div_ceil(bn);
        (tiles.div_ceil(sms.max(1)) * bn) as f64 / efficiency
    };
    let mut best = widths[0];
    for &bn in &widths[1..] {
        if cost(bn) < 0.97 * cost(best) {
            best = bn;
        }
    }
    best
}

/// The NN counterpart of [`choose_gemm`] (B given K×N; N must be a multiple of 8 for every NN
/// kernel): BF16 → BF16 by [`choose_gemm_nn_for`].
pub fn choose_gemm_nn(m: usize, n: usize, k: usize) -> (&'static str, &'static str) {
    choose_gemm_nn_for(H200_SMS, GemmTypes::BF16, m, n, k)
        .expect("every shipped combination has an NN choice, bf16 → bf16 first")
}

/// The NN choice for any element types: [`tile_n`]'s tile, then for 128×256 the cluster
/// kernel — with the TMA-store epilogue for a 16-bit D (`gemm_sm90_tma_epi_nn`), with the
/// register epilogue for an f32 D (`gemm_sm90_cluster_nn`, whose f32 configs keep 128×256
/// tiles; the TN rule) —, for 128×192 (a 16-bit D) `gemm_sm90_pair_n_nn`/`n192` (its CTAs
/// load their own B chunks, so no 128-column split), for 128×128 the persistent non-cluster
/// kernel (`gemm_sm90_ws_nn`, `n128`) or for an f32 D the TMA-store kernel's 128×128 config,
/// and for 128×64
/// `gemm_sm90_ws_nn`/`n64` or, when A's rows are not 128-byte aligned, `gemm_sm90_pair_n_nn`
/// (the TN rule). `None` for a combination nothing ships.
pub fn choose_gemm_nn_for(
    sms: usize,
    types: GemmTypes,
    m: usize,
    n: usize,
    k: usize,
) -> Option<(&'static str, &'static str)> {
    types.config()?;
    let a_rows_aligned = (k * types.input.bytes() as usize).is_multiple_of(128);
    let f32_out = types.output == ElemType::F32;
    let pick = |kernel: &'static str, suffix: Option<&str>| {
        config_of(kernel, types, suffix).map(|c| (kernel, c))
    };
    let widths: &[usize] = if f32_out {
        &WIDTHS_WITHOUT_192
    } else {
        &WIDTHS
    };
    match tile_n(sms, m, n, widths) {
        256 if f32_out => pick("gemm_sm90_cluster_nn", None),
        192 => pick("gemm_sm90_pair_n_nn", Some("n192")),
        256 => pick("gemm_sm90_tma_epi_nn", None),
        128 if f32_out => pick("gemm_sm90_tma_epi_nn", None),
        128 => pick("gemm_sm90_ws_nn", Some("n128")),
        _ if !a_rows_aligned => pick("gemm_sm90_pair_n_nn", None),
        _ => pick("gemm_sm90_ws_nn", Some("n64")),
    }
}

/// Runs D = A·Bᵀ with the kernel and config `choose_gemm_for` picks for the shape and the
/// tensors' element types; a combination nothing ships is `RuntimeError::NoKernelForTypes`.
pub fn gemm_auto<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    d: &mut Tensor<D>,
) -> Result<(), RuntimeError> {
    let (m, n, k) = (
        a.shape()[0],
        b.shape()[0],
        a.shape().get(1).copied().unwrap_or(0),
    );
    let types = GemmTypes {
        input: A::ELEM,
        output: D::ELEM,
    };
    let sms = rt.sm_count() as usize;
    let Some((name, config)) = choose_gemm_for(sms, types, m, n, k) else {
        return Err(no_kernel_for("GEMM", types));
    };
    let Some(Shipped {
        kind: Kind::Gemm(launch),
        ..
    }) = find(name)
    else {
        unreachable!("choose_gemm names a shipped GEMM")
    };
    launch.launch(rt, config, a, b, d)
}

/// No shipped `what` ("GEMM", "scaled GEMM") takes `types`; the error lists the combinations
/// that ship ([`GemmTypes::ALL`]).
pub fn no_kernel_for(what: &str, types: GemmTypes) -> RuntimeError {
    let supported: Vec<String> = GemmTypes::ALL.iter().map(|t| t.to_string()).collect();
    RuntimeError::NoKernelForTypes {
        what: what.into(),
        types: types.to_string(),
        supported: supported.join(", "),
    }
}

/// Runs D = A·B (B given K×N) with the kernel and config [`choose_gemm_nn_for`] picks for
/// the shape and the tensors' element types; a combination nothing ships is
/// `RuntimeError::NoKernelForTypes`.
pub fn gemm_auto_nn<A: Element, D: Element>(
    rt: &Runtime,
    a: &Tensor<A>,
    b: &Tensor<A>,
    d: &mut Tensor<D>,
) -> Result<(), RuntimeError> {
    let (m, k) = (a.shape()[0], a.shape().get(1).copied().unwrap_or(0));
    let n = b.shape().get(1).copied().unwrap_or(0);
    let types = GemmTypes {
        input: A::ELEM,
        output: D::ELEM,
    };
    let choice = choose_gemm_nn_for(rt.sm_count() as usize, types, m, n, k);
    let Some((name, config)) = choice else {
        return Err(no_kernel_for("GEMM", types));
    };
    let Some(Shipped {
        kind: Kind::GemmNn(launch),
        ..
    }) = find(name)
    else {
        unreachable!("choose_gemm_nn_for names a shipped NN GEMM")
    };
    launch.launch(rt, config, a, b, d)
}

/// D = α·A·Bᵀ + β·C (B given N×K) with the host-side choice: β = 0 and α = 1 is the plain
/// product ([`gemm_auto`]; C is not read); otherwise `gemm_sm90_tma_epi_abc` in the config
/// [`choose_gemm_scaled_for`] picks for the shape and the tensors' types. C's and D's rows
/// must be 16-byte aligned (TMA loads and stores); a combination no config takes is
/// `RuntimeError::NoKernelForTypes`.
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled<A: Element, D: Element>(
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<(), RuntimeError> {
    if alpha == 1.0 && beta == 0.0 {
        return gemm_auto(rt, a, b, d);
    }
    scaled_in(BLayout::Tn, rt, alpha, a, b, beta, c, d)
}

/// [`gemm_scaled`] with B given K×N (D = α·A·B + β·C): [`gemm_auto_nn`] for α = 1, β = 0,
/// otherwise `gemm_sm90_tma_epi_abc_nn` in [`choose_gemm_scaled_for`]'s config. N must be a
/// multiple of 8 (B's, C's and D's rows 16-byte aligned).
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled_nn<A: Element, D: Element>(
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<(), RuntimeError> {
    if alpha == 1.0 && beta == 0.0 {
        return gemm_auto_nn(rt, a, b, d);
    }
    scaled_in(BLayout::Nn, rt, alpha, a, b, beta, c, d)
}

/// The kernel and config the host takes for D = α·A·op(B) + β·C (α ≠ 1 or β ≠ 0) in
/// `types`, B in `layout`: `gemm_sm90_tma_epi_abc` (TN) or `gemm_sm90_tma_epi_abc_nn` (NN),
/// with [`tile_n`]'s tile: the types' base config for 128×256 (an f32 D's base config is
/// 128×128, its largest), the pair-N kernel's `n192` for 128×192 (a 16-bit D), `n128` for
/// 128×128 (a 16-bit D); for 128×64, when A's rows are not
/// 128-byte aligned, the pair-N kernels (`gemm_sm90_pair_n_abc`, `_nn`: 1×2 clusters sharing
/// A), else TN's `n64` config (NN has none: its cluster splits B's slab into 128-column
/// halves) or NN's 128×128 one. The plain product's rule, and measured the same way
/// (docs/perf/gemm-h200.md, 2026-11-30 01:37: 1000³ pair-N 13.6 µs against `n64` 14.9;
/// 1024³ `n64` 12.7 against pair-N 16.0). `None` for types no scaled config takes.
pub fn choose_gemm_scaled_for(
    sms: usize,
    layout: BLayout,
    types: GemmTypes,
    m: usize,
    n: usize,
    k: usize,
) -> Option<(&'static str, &'static str)> {
    let (kernel, small) = match layout {
        BLayout::Tn => ("gemm_sm90_tma_epi_abc", "gemm_sm90_pair_n_abc"),
        BLayout::Nn => ("gemm_sm90_tma_epi_abc_nn", "gemm_sm90_pair_n_abc_nn"),
    };
    let a_rows_aligned = (k * types.input.bytes() as usize).is_multiple_of(128);
    let f32_out = types.output == ElemType::F32;
    let pick = |kernel: &'static str, suffix: Option<&str>| {
        config_of(kernel, types, suffix).map(|c| (kernel, c))
    };
    let widths: &[usize] = if f32_out {
        &WIDTHS_WITHOUT_192
    } else {
        &WIDTHS
    };
    match tile_n(sms, m, n, widths) {
        256 => pick(kernel, None),
        192 => pick(small, Some("n192")),
        128 if f32_out => pick(kernel, None),
        128 => pick(kernel, Some("n128")),
        _ if !a_rows_aligned => pick(small, None),
        _ => pick(kernel, Some("n64"))
            .or_else(|| pick(kernel, (!f32_out).then_some("n128")))
            .or_else(|| pick(kernel, None)),
    }
}

/// The scaled kernel [`choose_gemm_scaled_for`] takes, launched.
#[allow(clippy::too_many_arguments)]
fn scaled_in<A: Element, D: Element>(
    layout: BLayout,
    rt: &Runtime,
    alpha: f32,
    a: &Tensor<A>,
    b: &Tensor<A>,
    beta: f32,
    c: &Tensor<D>,
    d: &mut Tensor<D>,
) -> Result<(), RuntimeError> {
    let (m, n) = (a.shape()[0], d.shape().get(1).copied().unwrap_or(0));
    let types = GemmTypes {
        input: A::ELEM,
        output: D::ELEM,
    };
    let k = a.shape().get(1).copied().unwrap_or(0);
    let choice = choose_gemm_scaled_for(rt.sm_count() as usize, layout, types, m, n, k);
    let Some((
        Shipped {
            kind: Kind::GemmScaled(launch, _),
            ..
        },
        config,
    )) = choice.and_then(|(kernel, config)| Some((find(kernel)?, config)))
    else {
        return Err(no_kernel_for("scaled GEMM", types));
    };
    launch.launch_scaled(rt, config, alpha, a, b, beta, c, d)
}

/// Relative Frobenius error a bf16-output GEMM must stay under.
pub const GEMM_TOL: f64 = 1e-2;

/// Runs a copy of an M×N random tensor and counts elements that are not bit-exact.
pub fn check_copy(
    rt: &Runtime,
    launch: CopyLaunch,
    config: &str,
    m: usize,
    n: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let host = Rng::new(seed).bf16s(m * n);
    let src = rt.upload(&host, &[m, n])?;
    let mut dst = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut dst)?;
    launch(rt, config, &src, &mut dst)?;
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
    /// The layout a shipped GEMM kind takes (`None` for a copy).
    pub fn of(kind: Kind) -> Option<BLayout> {
        match kind {
            Kind::Copy(_) | Kind::GemmScaled(..) => None,
            Kind::Gemm(_) => Some(BLayout::Tn),
            Kind::GemmNn(_) => Some(BLayout::Nn),
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

/// Runs D = α·A·op(B) + β·C of a [`Kind::GemmScaled`] kernel's `config` (B in `layout`) on
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_follows_the_tile_count_and_names_a_compiled_config() {
        let tma_epi = ("gemm_sm90_tma_epi", "default");
        assert_eq!(choose_gemm(8192, 8192, 8192), tma_epi);
        assert_eq!(choose_gemm(4096, 4096, 4096), tma_epi);
        assert_eq!(choose_gemm(2048, 2048, 2048), tma_epi);
        assert_eq!(choose_gemm(4095, 4097, 4096), ("gemm_sm90_cluster", "n128"));
        assert_eq!(choose_gemm(2000, 1000, 1000), ("gemm_sm90_tma_epi", "n128"));
        assert_eq!(choose_gemm(2000, 1001, 1000), ("gemm_sm90_cluster", "n128"));
        assert_eq!(
            choose_gemm(1000, 1000, 1000),
            ("gemm_sm90_pair_n", "default")
        );
        assert_eq!(
            choose_gemm(1000, 1000, 4000),
            ("gemm_sm90_pair_n", "default")
        );
        assert_eq!(choose_gemm(1024, 1024, 1024), ("gemm_sm90_ws", "n64"));
        assert_eq!(choose_gemm(1000, 1001, 1000), ("gemm_sm90_ws", "n64"));
        // One tile either way: the narrowest does the least wasted work.
        assert_eq!(choose_gemm(1, 1, 8), ("gemm_sm90_ws", "n64"));
        assert_eq!(choose_gemm(8, 8, 8), ("gemm_sm90_pair_n", "default"));
        assert_eq!(choose_gemm(1536, 1536, 1536), ("gemm_sm90_tma_epi", "n192"));
        assert_eq!(choose_gemm(1536, 1538, 1536), ("gemm_sm90_cluster", "n192"));
        let shapes = [
            (8192, 8192),
            (2048, 2048),
            (1000, 1000),
            (4095, 4097),
            (2000, 1000),
        ];
        for (m, n) in shapes {
            for k in [1000, 4096] {
                let (name, config) = choose_gemm(m, n, k);
                let kernel = find(name).expect("shipped");
                assert!(
                    kernel.artifacts.iter().any(|a| a.config == config),
                    "{name}/{config} is not compiled"
                );
            }
        }
        assert_eq!(
            choose_gemm_nn(8192, 8192, 8192),
            ("gemm_sm90_tma_epi_nn", "default")
        );
        assert_eq!(
            choose_gemm_nn(2000, 1000, 1000),
            ("gemm_sm90_ws_nn", "n128")
        );
        assert_eq!(
            choose_gemm_nn(1000, 1000, 1000),
            ("gemm_sm90_pair_n_nn", "default")
        );
        assert_eq!(choose_gemm_nn(1024, 1024, 1024), ("gemm_sm90_ws_nn", "n64"));
        for (m, n) in [(8192, 8192), (2048, 2048), (1000, 1000), (4095, 4096)] {
            let (name, config) = choose_gemm_nn(m, n, 4096);
            let k = find(name).expect("shipped");
            assert!(matches!(k.kind, Kind::GemmNn(_)), "{name} is not NN");
            assert!(
                k.artifacts.iter().any(|a| a.config == config),
                "{name}/{config} is not compiled"
            );
        }
    }

    #[test]
    fn every_type_combination_routes_to_a_config_of_its_types() {
        for types in GemmTypes::ALL {
            for (m, n) in [
                (8192, 8192),
                (4096, 4097),
                (2048, 2048),
                (1000, 1000),
                (1, 1),
            ] {
                let (name, config) = choose_gemm_for(H200_SMS, types, m, n, 4096).expect("shipped");
                let Some(Shipped {
                    kind: Kind::Gemm(launch),
                    ..
                }) = find(name)
                else {
                    panic!("{name} is not a GEMM")
                };
                assert_eq!(launch.types(config), Some(types), "{name}/{config}");
            }
        }
        let f32_in = GemmTypes {
            input: ElemType::F32,
            output: ElemType::F32,
        };
        assert_eq!(choose_gemm_for(H200_SMS, f32_in, 4096, 4096, 4096), None);
        let f16_f32 = GemmTypes {
            input: ElemType::F16,
            output: ElemType::F32,
        };
        let f16 = GemmTypes {
            input: ElemType::F16,
            output: ElemType::F16,
        };
        for (types, shape, want) in [
            // An f32 D: 128×256 from registers, 128×128 through the TMA store, 128×64 tiles in
            // pairs or alone.
            (
                f16_f32,
                (4096, 4096, 4096),
                ("gemm_sm90_cluster", "f16_f32"),
            ),
            (
                f16_f32,
                (2000, 1000, 1000),
                ("gemm_sm90_tma_epi", "f16_f32"),
            ),
            (f16_f32, (1000, 1000, 1000), ("gemm_sm90_pair_n", "f16_f32")),
            (f16_f32, (1024, 1024, 1024), ("gemm_sm90_ws", "f16_f32_n64")),
            // f32 rows are 16-byte aligned at N a multiple of 4, 16-bit ones at 8.
            (
                f16_f32,
                (2000, 1004, 1000),
                ("gemm_sm90_tma_epi", "f16_f32"),
            ),
            (f16, (4096, 4092, 4096), ("gemm_sm90_ws", "f16")),
            (f16, (4096, 4096, 4096), ("gemm_sm90_tma_epi", "f16")),
            (f16, (2000, 1000, 1000), ("gemm_sm90_tma_epi", "f16_n128")),
            (f16, (1000, 1000, 1000), ("gemm_sm90_pair_n", "f16")),
            (f16, (1024, 1024, 1024), ("gemm_sm90_ws", "f16_n64")),
        ] {
            let (m, n, k) = shape;
            let got = choose_gemm_for(H200_SMS, types, m, n, k);
            assert_eq!(got, Some(want), "{types} {shape:?}");
        }
    }

    /// The tile follows the device's SM count and the widths the kernel family has: 2048² is
    /// one wave of 128×256 tiles on 132 SMs, but two (the second 14 % full) on 114, where
    /// 128×192 tiles or (without 192) 128×64 do better; 1536² and 3072² leave 128×256 waves
    /// mostly empty on 132 SMs and go to 128×192, in every layout.
    #[test]
    fn the_tile_follows_the_sm_count_and_the_widths() {
        let h200 = H200_SMS;
        let no_192 = &WIDTHS_WITHOUT_192;
        assert_eq!(tile_n(h200, 2048, 2048, &WIDTHS), 256);
        assert_eq!(tile_n(114, 2048, 2048, &WIDTHS), 192);
        assert_eq!(tile_n(114, 2048, 2048, no_192), 64);
        assert_eq!(tile_n(h200, 1536, 1536, &WIDTHS), 192);
        assert_eq!(tile_n(h200, 3072, 3072, &WIDTHS), 192);
        for big in [4096, 6144, 8192, 16384] {
            assert_eq!(tile_n(h200, big, big, &WIDTHS), 256, "{big}");
            assert_eq!(tile_n(114, big, big, no_192), 256, "{big}");
        }
        let bf16 = GemmTypes::BF16;
        let f32_out = GemmTypes {
            input: ElemType::Bf16,
            output: ElemType::F32,
        };
        let (tn, nn) = (BLayout::Tn, BLayout::Nn);
        let cases = [
            (tn, None, h200, bf16, 1536, ("gemm_sm90_tma_epi", "n192")),
            (tn, None, 114, bf16, 2048, ("gemm_sm90_tma_epi", "n192")),
            (nn, None, h200, bf16, 3072, ("gemm_sm90_pair_n_nn", "n192")),
            (
                nn,
                None,
                h200,
                f32_out,
                3072,
                ("gemm_sm90_tma_epi_nn", "bf16_f32"),
            ),
            (
                tn,
                Some(()),
                h200,
                bf16,
                1536,
                ("gemm_sm90_pair_n_abc", "n192"),
            ),
        ];
        for (layout, scaled, sms, types, s, want) in cases {
            let got = match (layout, scaled) {
                (layout, Some(())) => choose_gemm_scaled_for(sms, layout, types, s, s, s),
                (BLayout::Tn, None) => choose_gemm_for(sms, types, s, s, s),
                (BLayout::Nn, None) => choose_gemm_nn_for(sms, types, s, s, s),
            };
            assert_eq!(
                got,
                Some(want),
                "{layout:?} {scaled:?} {sms} SMs {types} {s}³"
            );
        }
    }

    #[test]
    fn every_scaled_choice_is_a_scaled_config_of_its_types_and_layout() {
        for types in GemmTypes::ALL {
            for layout in [BLayout::Tn, BLayout::Nn] {
                for (m, n, k) in [
                    (8192, 8192, 8192),
                    (1000, 1000, 1000),
                    (1024, 1024, 1024),
                    (2000, 1000, 1000),
                    (1, 8, 8),
                ] {
                    let choice = choose_gemm_scaled_for(H200_SMS, layout, types, m, n, k);
                    let (name, config) = choice.expect("every shipped type has a scaled config");
                    let Some(Shipped {
                        kind: Kind::GemmScaled(launch, l),
                        ..
                    }) = find(name)
                    else {
                        panic!("{name} is not a scaled GEMM")
                    };
                    assert_eq!(l, layout, "{name}");
                    assert_eq!(launch.types(config), Some(types), "{name}/{config}");
                }
            }
        }
        // The tile follows `tile_n`, as for the plain product.
        let bf16 = GemmTypes::BF16;
        let (tn, nn) = (BLayout::Tn, BLayout::Nn);
        for (layout, shape, want) in [
            (tn, (1000, 1000, 1000), ("gemm_sm90_pair_n_abc", "default")),
            (tn, (1024, 1024, 1024), ("gemm_sm90_tma_epi_abc", "n64")),
            (tn, (8192, 8192, 8192), ("gemm_sm90_tma_epi_abc", "default")),
            (
                nn,
                (1000, 1000, 1000),
                ("gemm_sm90_pair_n_abc_nn", "default"),
            ),
            (nn, (1024, 1024, 1024), ("gemm_sm90_tma_epi_abc_nn", "n128")),
            (nn, (2000, 1000, 1000), ("gemm_sm90_tma_epi_abc_nn", "n128")),
        ] {
            let (m, n, k) = shape;
            let got = choose_gemm_scaled_for(H200_SMS, layout, bf16, m, n, k);
            assert_eq!(got, Some(want), "{layout:?} {shape:?}");
        }
    }

    #[test]
    fn every_nn_type_combination_routes_to_an_nn_config_of_its_types() {
        for types in GemmTypes::ALL {
            for (m, n, k) in [
                (8192, 8192, 8192),
                (2000, 1000, 1000),
                (1000, 1000, 1000),
                (1024, 1024, 1024),
            ] {
                let (name, config) = choose_gemm_nn_for(H200_SMS, types, m, n, k).expect("shipped");
                let Some(Shipped {
                    kind: Kind::GemmNn(launch),
                    ..
                }) = find(name)
                else {
                    panic!("{name} is not an NN GEMM")
                };
                assert_eq!(launch.types(config), Some(types), "{name}/{config}");
            }
        }
    }

    #[test]
    fn every_gemm_config_declares_its_types() {
        for k in all() {
            let (Kind::Gemm(launch) | Kind::GemmNn(launch) | Kind::GemmScaled(launch, _)) = k.kind
            else {
                continue;
            };
            for a in k.artifacts {
                let t = launch.types(a.config).expect("a, d tensors");
                assert!(t.config().is_some(), "{}/{}: {t}", k.name, a.config);
            }
        }
    }
}
