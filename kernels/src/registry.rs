//! Every shipped kernel, with its compiled artifacts and a host-side check that runs it on a
//! GPU and compares with the CPU reference. The `tirx` tool and the tests iterate this list.

use crate::copy::tma_copy;
use crate::gemm::warp_specialized::ladder as ws;
use crate::gemm::{
    level_01_sync as gemm90sync, level_02_tma as gemm90tma, level_03_pipeline_tcgen05 as gemm100,
    level_03_pipeline_wgmma as gemm90,
};
use crate::reference::{Rng, gemm_nn_f64, gemm_tn_f64, rel_frobenius};
use half::bf16;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor};

/// A launcher of a copy kernel (`src` → `dst`, both M×N).
pub type CopyLaunch =
    fn(&Runtime, &str, &Tensor<bf16>, &mut Tensor<bf16>) -> Result<(), RuntimeError>;
/// A launcher of a GEMM kernel: `d = a·bᵀ` with `b` N×K ([`Kind::Gemm`]), or `d = a·b` with
/// `b` K×N ([`Kind::GemmNn`]); the launcher checks `b`'s shape against the kernel's.
pub type GemmLaunch =
    fn(&Runtime, &str, &Tensor<bf16>, &Tensor<bf16>, &mut Tensor<bf16>) -> Result<(), RuntimeError>;

/// What a kernel computes, and its typed launcher.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A tile copy.
    Copy(CopyLaunch),
    /// D = A·Bᵀ, B given N×K (both operands K-major: "TN" in BLAS column-major terms).
    Gemm(GemmLaunch),
    /// D = A·B, B given K×N (B N-major: "NN").
    GemmNn(GemmLaunch),
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
pub fn all() -> [Shipped; 12] {
    [
        Shipped {
            name: "tma_copy",
            artifacts: tma_copy::tma_copy::ARTIFACTS,
            kind: Kind::Copy(tma_copy::tma_copy::launch),
        },
        Shipped {
            name: "gemm_sm90_sync",
            artifacts: gemm90sync::gemm_sm90_sync::ARTIFACTS,
            kind: Kind::Gemm(gemm90sync::gemm_sm90_sync::launch),
        },
        Shipped {
            name: "gemm_sm90_tma",
            artifacts: gemm90tma::gemm_sm90_tma::ARTIFACTS,
            kind: Kind::Gemm(gemm90tma::gemm_sm90_tma::launch),
        },
        Shipped {
            name: "gemm_sm90",
            artifacts: gemm90::gemm_sm90::ARTIFACTS,
            kind: Kind::Gemm(gemm90::gemm_sm90::launch),
        },
        Shipped {
            name: "gemm_sm90_2wg",
            artifacts: ws::gemm_sm90_2wg::ARTIFACTS,
            kind: Kind::Gemm(ws::gemm_sm90_2wg::launch),
        },
        Shipped {
            name: "gemm_sm90_ws",
            artifacts: ws::gemm_sm90_ws::ARTIFACTS,
            kind: Kind::Gemm(ws::gemm_sm90_ws::launch),
        },
        Shipped {
            name: "gemm_sm90_cluster",
            artifacts: ws::gemm_sm90_cluster::ARTIFACTS,
            kind: Kind::Gemm(ws::gemm_sm90_cluster::launch),
        },
        Shipped {
            name: "gemm_sm90_tma_epi",
            artifacts: ws::gemm_sm90_tma_epi::ARTIFACTS,
            kind: Kind::Gemm(ws::gemm_sm90_tma_epi::launch),
        },
        Shipped {
            name: "gemm_sm90_pair_n",
            artifacts: ws::gemm_sm90_pair_n::ARTIFACTS,
            kind: Kind::Gemm(ws::gemm_sm90_pair_n::launch),
        },
        Shipped {
            name: "gemm_sm90_ws_nn",
            artifacts: ws::gemm_sm90_ws_nn::ARTIFACTS,
            kind: Kind::GemmNn(ws::gemm_sm90_ws_nn::launch),
        },
        Shipped {
            name: "gemm_sm90_tma_epi_nn",
            artifacts: ws::gemm_sm90_tma_epi_nn::ARTIFACTS,
            kind: Kind::GemmNn(ws::gemm_sm90_tma_epi_nn::launch),
        },
        Shipped {
            name: "gemm_sm100",
            artifacts: gemm100::gemm_sm100::ARTIFACTS,
            kind: Kind::Gemm(gemm100::gemm_sm100::launch),
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
}

/// The GEMM `tirx bench gemm` measures by default: the top of the ladder.
pub const PRODUCTION_GEMM: &str = "gemm_sm90_tma_epi";

/// The NN GEMM (B given K×N) `tirx bench gemm --layout nn` measures by default.
pub const PRODUCTION_GEMM_NN: &str = "gemm_sm90_tma_epi_nn";

/// SMs of the H100/H200 SXM part the persistent configs are compiled for (their grid).
pub const PERSISTENT_CTAS: usize = 132;

/// The host-side choice of GEMM kernel and config for a shape (sm_90a).
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
    let bn = tile_n(m, n);
    let tma_store = n.is_multiple_of(8);
    let a_rows_aligned = (2 * k).is_multiple_of(128);
    match (bn, tma_store) {
        (256, true) => ("gemm_sm90_tma_epi", "default"),
        (256, false) => ("gemm_sm90_cluster", "default"),
        (128, true) => ("gemm_sm90_tma_epi", "n128"),
        (128, false) => ("gemm_sm90_cluster", "n128"),
        (_, true) if !a_rows_aligned => ("gemm_sm90_pair_n", "default"),
        _ => ("gemm_sm90_ws", "n64"),
    }
}

/// The tile width (256, 128 or 64, for 128-row tiles) [`choose_gemm`] takes for an M×N
/// output: the one whose tiles keep the SMs busiest over the waves they need, the larger on a
/// tie (within 2 %).
pub fn tile_n(m: usize, n: usize) -> usize {
    let sms = PERSISTENT_CTAS;
    let utilisation = |bn: usize| {
        let tiles = m.div_ceil(128) * n.div_ceil(bn);
        tiles as f64 / (tiles.div_ceil(sms) * sms) as f64
    };
    let mut bn = 256;
    for smaller in [128, 64] {
        if utilisation(smaller) > utilisation(bn) * 1.02 {
            bn = smaller;
        }
    }
    bn
}

/// The NN counterpart of [`choose_gemm`] (B given K×N; N must be a multiple of 8 for every NN
/// kernel): [`tile_n`]'s tile, then the cluster kernel with the TMA-store epilogue for
/// 128×256, the persistent non-cluster kernel (`gemm_sm90_ws_nn`) for 128×128 and 128×64.
/// Not yet measured on the H200 as a choice: the tile rule is the TN one.
pub fn choose_gemm_nn(m: usize, n: usize, _k: usize) -> (&'static str, &'static str) {
    match tile_n(m, n) {
        256 => ("gemm_sm90_tma_epi_nn", "default"),
        128 => ("gemm_sm90_ws_nn", "n128"),
        _ => ("gemm_sm90_ws_nn", "n64"),
    }
}

/// Runs D = A·Bᵀ with the kernel and config `choose_gemm` picks for the shape.
pub fn gemm_auto(
    rt: &Runtime,
    a: &Tensor<bf16>,
    b: &Tensor<bf16>,
    d: &mut Tensor<bf16>,
) -> Result<(), RuntimeError> {
    let (m, n, k) = (
        a.shape()[0],
        b.shape()[0],
        a.shape().get(1).copied().unwrap_or(0),
    );
    let (name, config) = choose_gemm(m, n, k);
    let Some(Shipped {
        kind: Kind::Gemm(launch),
        ..
    }) = find(name)
    else {
        unreachable!("choose_gemm names a shipped GEMM")
    };
    launch(rt, config, a, b, d)
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
            Kind::Copy(_) => None,
            Kind::Gemm(_) => Some(BLayout::Tn),
            Kind::GemmNn(_) => Some(BLayout::Nn),
        }
    }
    /// The f64 reference D (m×n) of `a` (m×k) and `b` in this layout.
    pub fn reference(self, a: &[bf16], b: &[bf16], m: usize, n: usize, k: usize) -> Vec<f64> {
        match self {
            BLayout::Tn => gemm_tn_f64(a, b, m, n, k),
            BLayout::Nn => gemm_nn_f64(a, b, m, n, k),
        }
    }
    /// The first `cn` output columns' worth of `b` (the operand of a D corner's reference):
    /// the first `cn` rows of an N×K B, or the first `cn` columns of every row of a K×N B.
    pub fn b_columns(self, b: &[bf16], n: usize, k: usize, cn: usize) -> Vec<bf16> {
        match self {
            BLayout::Tn => b[..cn * k].to_vec(),
            BLayout::Nn => (0..k).flat_map(|p| b[p * n..p * n + cn].to_vec()).collect(),
        }
    }
}

/// Runs D = A·Bᵀ on random data and compares with the f64 reference.
pub fn check_gemm(
    rt: &Runtime,
    launch: GemmLaunch,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_gemm_layout(rt, launch, BLayout::Tn, config, m, n, k, seed)
}

/// Runs D = A·B with B given K×N on random data and compares with the f64 NN reference.
pub fn check_gemm_nn(
    rt: &Runtime,
    launch: GemmLaunch,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    check_gemm_layout(rt, launch, BLayout::Nn, config, m, n, k, seed)
}

/// Runs a GEMM with B in `layout` on random data (D poisoned first) and compares with the
/// matching f64 reference.
#[allow(clippy::too_many_arguments)]
fn check_gemm_layout(
    rt: &Runtime,
    launch: GemmLaunch,
    layout: BLayout,
    config: &str,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let mut rng = Rng::new(seed);
    let (ha, hb) = (rng.bf16s(m * k), rng.bf16s(n * k));
    let a = rt.upload(&ha, &[m, k])?;
    let b = rt.upload(&hb, &layout.b_shape(m, n, k))?;
    let mut d = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut d)?;
    launch(rt, config, &a, &b, &mut d)?;
    rt.synchronize()?;
    let got = rt.download(&d)?;
    let err = rel_frobenius(&got, &layout.reference(&ha, &hb, m, n, k));
    Ok(CheckReport {
        shape: (m, n, k),
        error: err,
        ok: err < GEMM_TOL,
    })
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
        assert_eq!(choose_gemm(1, 1, 8), ("gemm_sm90_cluster", "default"));
        assert_eq!(choose_gemm(8, 8, 8), tma_epi);
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
        assert_eq!(choose_gemm_nn(1000, 1000, 1000), ("gemm_sm90_ws_nn", "n64"));
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
}
