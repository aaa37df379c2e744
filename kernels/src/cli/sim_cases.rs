//! The cases `tirx sim-dump` runs on the H200 and `tirx sim-compare` runs in the emulator
//! (issue #10, validation step 1): one table of (kernel, config, shape, seed) covering every
//! sm_90a kernel family tirx ships, and the one function that turns a case into its inputs.
//!
//! Invariants:
//! - Inputs are a pure function of the case (seeded [`Rng`], the generators of `tirx sim` and
//!   the sim tests), so only the outputs travel back from the device; the manifest records a
//!   hash of every input so a drift in the generator is caught, not compared.
//! - Every tensor a kernel does not read is still given (the signature decides what is
//!   passed); the output tensor starts as poison (`0xff` bytes, NaN in every float type), the
//!   same bytes on both sides, so an element a kernel forgets to write stands out.

use half::bf16;
use tirx::KernelArtifact;
use tirx::problem::{Epilogue, GemmProblem, Problem};
use tirx::runtime::{ElemType, Target};
use tirx_kernels::catalogue;
use tirx_kernels::gemm::fp8_ref::{Fp8ScaleMode, Fp8Scales};
use tirx_kernels::reference::Rng;
use tirx_kernels::row_kernels::host::capacity;
use tirx_kernels::rows::RowProblem;

/// One run: a kernel's config on one shape, inputs from `seed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// Kernel name.
    pub kernel: &'static str,
    /// Config name; `None`: the sm_90a config of the smallest row capacity that holds the
    /// row (row kernels), else the first sm_90a config.
    pub config: Option<&'static str>,
    /// M (rows), N (columns), K (GEMMs; 0 otherwise).
    pub shape: (usize, usize, usize),
    /// Input seed (also the emulator's scheduler seed).
    pub seed: u64,
}

const fn case(kernel: &'static str, config: &'static str, shape: (usize, usize, usize)) -> Case {
    Case {
        kernel,
        config: if config.is_empty() {
            None
        } else {
            Some(config)
        },
        shape,
        seed: 0,
    }
}

/// The GEMM shape: tails in M (130 = 128 + 2), N (136 = 128 + 8) and K (96 = 64 + 32, two
/// K tiles, the second half out of bounds).
const GEMM: (usize, usize, usize) = (130, 136, 96);

/// Every case, in the order of the table `sim-compare` prints. Seeds are the index + 101
/// ([`cases`]). The GEMMs are the list of `tests/sim_gemm.rs` (every Hopper kind, TN and NN,
/// each input/output type, α/β, clusters, TMA-store epilogues, bias + GELU/SiLU).
const TABLE: &[Case] = &[
    // Copies: both configs, tails in both dimensions (N a multiple of 8: TMA rows are
    // multiples of 16 bytes).
    case("tma_copy", "default", (129, 136, 0)),
    case("tma_copy", "tall", (129, 136, 0)),
    // Row kernels: 3 rows of 300 (not a multiple of 8 or of any vector width); the staged
    // kernels take 16-byte aligned rows (their tensor maps), so 296.
    case("softmax", "", (3, 300, 0)),
    case("rmsnorm", "", (3, 300, 0)),
    case("layernorm", "", (3, 300, 0)),
    case("softmax_long", "", (3, 300, 0)),
    case("rmsnorm_long", "", (3, 300, 0)),
    case("layernorm_long", "", (3, 300, 0)),
    case("softmax_staged", "", (3, 296, 0)),
    case("rmsnorm_staged", "", (3, 296, 0)),
    // The odd-width staged kernels load rows through `x`'s flat view from each row's first
    // aligned column: an odd width past 16k, so every row starts elsewhere.
    case("softmax_staged_odd", "", (3, 16391, 0)),
    case("rmsnorm_staged_odd", "", (3, 16391, 0)),
    case("layernorm_staged_odd", "", (3, 16391, 0)),
    case("softmax_cluster", "", (3, 300, 0)),
    case("rmsnorm_cluster", "", (3, 300, 0)),
    case("silu_mul", "default", (3, 300, 0)),
    case("silu_mul", "wide", (3, 300, 0)),
    case("gemm_sm90_sync", "default", GEMM),
    case("gemm_sm90_tma", "default", GEMM),
    case("gemm_sm90", "default", GEMM),
    case("gemm_sm90_ws1", "default", GEMM),
    case("gemm_sm90_2wg", "default", GEMM),
    case("gemm_sm90_ws", "f16_f32_n64", GEMM),
    case("gemm_sm90_cluster", "bf16_f32", GEMM),
    case("gemm_sm90_tma_epi", "f16", GEMM),
    case("gemm_sm90_pair_n", "bf16_f16", GEMM),
    case("gemm_sm90_tma_epi_abc", "n64", GEMM),
    case("gemm_sm90_pair_n_abc", "f16_f32", GEMM),
    // B given K×N: MN-major B operands.
    case("gemm_sm90_ws", "nn_n64", GEMM),
    case("gemm_sm90_cluster", "nn_f16_f32", GEMM),
    case("gemm_sm90_tma_epi_abc", "nn_bf16_f16_n128", GEMM),
    // FP8 (E4M3) inputs, per-tensor and row-wise scales; K 208 = 128 + 80.
    case("gemm_sm90_fp8", "n128", (130, 136, 208)),
    case("gemm_sm90_fp8_rowwise", "n128", (130, 136, 208)),
    // Block scales (1×128 of A, 128×128 of B), promoted per K block; K 400 = 3·128 + 16.
    case("gemm_sm90_fp8_block", "default", (130, 264, 400)),
    // Split-K's first launch: [`SPLIT`] slices of K's four tiles (1, 1 and 2 tiles), each
    // slice's f32 partial into its own plane of the workspace `w`.
    case("gemm_sm90_splitk", "default", (130, 136, 208)),
    // D = act(A·Bᵀ + bias): the two activations with transcendental functions.
    case("gemm_sm90_bias_act", "gelu_n128", GEMM),
    case("gemm_sm90_bias_act", "silu_n128", GEMM),
    // Attention: 130 queries and keys (a tail in both), two heads of 64 (N = heads × D),
    // causal, the RS-form P·V and the online softmax.
    case("attention_sm90", "causal_d64", (130, 128, 0)),
    // The persistent walk: three heads of 128, two query tiles each (six tiles).
    case("attention_sm90_persistent", "d128_sms", (130, 384, 0)),
    // Its causal walk: two heads of 128, three query tiles each (the pair (2, 0), then the
    // middle tile 1 alone), a key tail.
    case(
        "attention_sm90_persistent",
        "causal_d128_sms",
        (300, 256, 0),
    ),
];

/// Every case with its seed: [`TABLE`], then one case for each shipped sm_90a kernel the
/// table does not name — its first sm_90a config at its family's default shape — so a new
/// kernel is compared with no edit here.
pub fn cases() -> Vec<Case> {
    let named: Vec<&str> = TABLE.iter().map(|c| c.kernel).collect();
    let rest = catalogue::all()
        .into_iter()
        .filter(|k| !named.contains(&k.name))
        .filter_map(default_case);
    TABLE
        .iter()
        .copied()
        .chain(rest)
        .enumerate()
        .map(|(i, c)| Case {
            seed: 101 + i as u64,
            ..c
        })
        .collect()
}

/// The case of `k` the table need not name: its first sm_90a config at its family's default
/// shape; `None` for a kernel with no sm_90a artifact or no family.
fn default_case(k: &'static tirx::Kernel) -> Option<Case> {
    let art = k.artifacts.iter().find(|a| a.target == Target::Sm90a)?;
    let family = catalogue::family_of(art)?;
    Some(Case {
        kernel: k.name,
        config: Some(art.config),
        shape: case_shape(art, family.default_shape(art)),
        seed: 0,
    })
}

/// A family's shape as a case takes it: attention's `(queries, heads)` becomes `(queries,
/// heads × D)` (the width of Q's rows); the other families' shapes are the same.
fn case_shape(art: &KernelArtifact, (m, n, k): (usize, usize, usize)) -> (usize, usize, usize) {
    match (art.problem, art.int("D")) {
        (Some(Problem::Attention), Some(d)) => (m, n * d as usize, 0),
        _ => (m, n, k),
    }
}

impl Case {
    /// The sm_90a artifact the case runs.
    pub fn artifact(&self) -> Result<&'static KernelArtifact, String> {
        let k =
            catalogue::find(self.kernel).ok_or_else(|| format!("no kernel `{}`", self.kernel))?;
        let mut arts = k.artifacts.iter().filter(|a| a.target == Target::Sm90a);
        match self.config {
            Some(c) => arts
                .find(|a| a.config == c)
                .ok_or_else(|| format!("`{}` has no sm_90a config `{c}`", self.kernel)),
            None => arts
                .filter(|a| capacity(a).is_none_or(|cap| cap >= self.shape.1))
                .min_by_key(|a| capacity(a).unwrap_or(usize::MAX))
                .ok_or_else(|| {
                    format!("no sm_90a `{}` holds rows of {}", self.kernel, self.shape.1)
                }),
        }
    }

    /// `kernel-config-MxN[xK]`: the case's name in the manifest and the table.
    pub fn label(&self, config: &str) -> String {
        let (m, n, k) = self.shape;
        let shape = if k == 0 {
            format!("{m}x{n}")
        } else {
            format!("{m}x{n}x{k}")
        };
        format!("{}-{config}-{shape}", self.kernel)
    }
}

/// One tensor argument: its name in the signature, type, shape and bytes (little-endian).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorData {
    /// The signature's name (`x`, `y`, `a`, `d`, …).
    pub name: String,
    /// Element type.
    pub elem: ElemType,
    /// Shape, row-major.
    pub shape: Vec<usize>,
    /// The contents.
    pub bytes: Vec<u8>,
}

/// A case's arguments: tensors in the signature's order, scalars, and which tensor is the
/// output.
#[derive(Clone, Debug)]
pub struct CaseData {
    /// Tensors in the order the signature declares them.
    pub tensors: Vec<TensorData>,
    /// Scalars in the signature's order.
    pub scalars: Vec<f32>,
    /// Index into `tensors` of the output.
    pub output: usize,
}

impl CaseData {
    /// The output tensor.
    pub fn out(&self) -> &TensorData {
        &self.tensors[self.output]
    }

    /// The input tensor named `name`, if any.
    pub fn input(&self, name: &str) -> Option<&TensorData> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// FNV-1a over every input tensor's bytes and the scalars' bits: recorded by the dump,
    /// checked by the compare.
    pub fn input_hash(&self) -> u64 {
        let mut h = Fnv::new();
        for (i, t) in self.tensors.iter().enumerate() {
            if i != self.output {
                h.feed(t.name.as_bytes());
                h.feed(&t.bytes);
            }
        }
        for s in &self.scalars {
            h.feed(&s.to_bits().to_le_bytes());
        }
        h.0
    }
}

/// 64-bit FNV-1a: a stable fingerprint (std's hasher may change between Rust releases).
pub struct Fnv(pub u64);

impl Fnv {
    /// The offset basis.
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    /// Mixes in `bytes`.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// FNV-1a of `bytes` alone.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv::new();
        h.feed(bytes);
        h.0
    }
}

/// The output tensor's name for a problem.
/// The slices of K a split-K case takes: the planes of its workspace `w` [SPLIT, M, N].
pub const SPLIT: usize = 3;

/// Whether `art` is split-K's first launch (the `partial` epilogue: output `w` [S, M, N]).
pub fn is_partial(art: &KernelArtifact) -> bool {
    matches!(art.problem, Some(Problem::Gemm(g)) if g.epilogue == Epilogue::Partial)
}

fn output_name(p: Option<Problem>) -> &'static str {
    match p {
        Some(Problem::Copy) => "dst",
        Some(Problem::Gemm(GemmProblem {
            epilogue: Epilogue::Partial,
            ..
        })) => "w",
        Some(Problem::Gemm(_)) => "d",
        Some(Problem::Attention) => "o",
        _ => "y",
    }
}

/// The arguments of `case` on `art`: the same bytes on every machine.
pub fn inputs(art: &KernelArtifact, case: &Case) -> Result<CaseData, String> {
    let (m, n, k) = case.shape;
    let mut rng = Rng::new(case.seed);
    let sig = (art.signature)();
    let mut named: Vec<(&str, ElemType, Vec<usize>, Vec<u8>)> = Vec::new();
    let mut scalars = Vec::new();
    match art.problem {
        Some(Problem::Copy) => {
            named.push((
                "src",
                ElemType::Bf16,
                vec![m, n],
                bf16_bytes(&rng.bf16s(m * n)),
            ));
        }
        Some(Problem::Row(op)) => {
            // As `tirx sim` and tests/sim_exec.rs: a random scale per case, x in ±scale,
            // w in [0.5, 1.5), b in [-0.5, 0.5).
            let scale = 1.0 + 7.0 * rng.unit();
            let x: Vec<bf16> = (0..m * n)
                .map(|_| bf16::from_f32((rng.unit() * 2.0 - 1.0) * scale))
                .collect();
            let w: Vec<bf16> = (0..n).map(|_| bf16::from_f32(0.5 + rng.unit())).collect();
            let b: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.unit() - 0.5)).collect();
            named.push(("x", ElemType::Bf16, vec![m, n], bf16_bytes(&x)));
            // `x` seen as one dimension (`xf`, the odd-width staged kernels'): the same
            // elements in a buffer of their own.
            named.push(("xf", ElemType::Bf16, vec![m * n], bf16_bytes(&x)));
            named.push(("w", ElemType::Bf16, vec![n], bf16_bytes(&w)));
            named.push(("b", ElemType::Bf16, vec![n], bf16_bytes(&b)));
            let eps = RowProblem::new(op, m, n).eps;
            scalars = sig.scalars.iter().map(|_| eps).collect();
        }
        Some(Problem::SiluMul) => {
            let xs: Vec<bf16> = (0..m * n)
                .map(|_| bf16::from_f32(8.0 * rng.unit() - 4.0))
                .collect();
            let gs: Vec<bf16> = (0..m * n)
                .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
                .collect();
            named.push(("x", ElemType::Bf16, vec![m, n], bf16_bytes(&xs)));
            named.push(("g", ElemType::Bf16, vec![m, n], bf16_bytes(&gs)));
        }
        Some(Problem::Gemm(GemmProblem { epilogue, .. })) => {
            let elem = |name: &str| sig.tensors.iter().find(|t| t.name == name).map(|t| t.elem);
            let (Some(ta), Some(td)) = (elem("a"), elem(output_name(art.problem))) else {
                return Err(format!("`{}` is not an a, b, d (or w) GEMM", art.kernel));
            };
            let nn = tirx_kernels::simulate::b_is_k_by_n(art);
            named.push(("a", ta, vec![m, k], random_bytes(&mut rng, ta, m * k)));
            let b_shape = if nn { vec![k, n] } else { vec![n, k] };
            named.push(("b", ta, b_shape, random_bytes(&mut rng, ta, n * k)));
            let tc = elem("c").unwrap_or(td);
            named.push(("c", tc, vec![m, n], random_bytes(&mut rng, tc, m * n)));
            let tb = elem("bias").unwrap_or(td);
            named.push(("bias", tb, vec![n], random_bytes(&mut rng, tb, n)));
            // The FP8 GEMMs' scales (`sa` [M], `sb` [N], or `scale_a`, `scale_b`), from a
            // generator of their own so that the other cases' inputs stay as they were.
            let mut srng = Rng::new(case.seed ^ 0x005c_a1e5);
            let f32s = |rng: &mut Rng, len: usize| -> Vec<u8> {
                (0..len)
                    .flat_map(|_| (1.5 + rng.unit()).to_le_bytes())
                    .collect()
            };
            // Block scales (`ScaleBlocks`): `sa` [M, KB] (MN-major: [KB, M4]), `sb` [NB, KB].
            let (sa, sb) = match Fp8ScaleMode::of(epilogue) {
                Some(mode @ (Fp8ScaleMode::Blocks | Fp8ScaleMode::BlocksMn)) => {
                    mode.shapes((m, n, k))
                }
                _ => (vec![m], vec![n]),
            };
            let (la, lb) = (sa.iter().product(), sb.iter().product());
            named.push(("sa", ElemType::F32, sa, f32s(&mut srng, la)));
            named.push(("sb", ElemType::F32, sb, f32s(&mut srng, lb)));
            // The residual `res` [M, N] of D = act(A·op(B) + bias) + R, from a generator of its
            // own too.
            let tr = elem("res").unwrap_or(td);
            let mut rrng = Rng::new(case.seed ^ 0x0e51_d0a1);
            named.push(("res", tr, vec![m, n], random_bytes(&mut rrng, tr, m * n)));
            let (alpha, beta) = gemm_scale(epilogue);
            scalars = sig
                .scalars
                .iter()
                .map(|s| match s.as_str() {
                    "alpha" => alpha,
                    "scale_a" => TENSOR_SCALES.0,
                    "scale_b" => TENSOR_SCALES.1,
                    _ => beta,
                })
                .collect();
        }
        Some(Problem::Attention) => {
            // One batch of m queries and keys, N = heads × D columns; the LSE (a second
            // output, not compared) starts as poison.
            let elem = sig.tensors[0].elem;
            let d = art.int("D").map(|c| c as usize).ok_or("no head dim `D`")?;
            for name in ["q", "k", "v"] {
                named.push((
                    name,
                    elem,
                    vec![1, m, n],
                    random_bytes(&mut rng, elem, m * n),
                ));
            }
            named.push((
                "lse",
                ElemType::F32,
                vec![n / d, m, 1],
                vec![0xff; n / d * m * 4],
            ));
            let scale_log2 = std::f64::consts::LOG2_E / (d as f64).sqrt();
            scalars = vec![scale_log2 as f32];
        }
        None => return Err(format!("`{}` solves no problem the dump knows", art.kernel)),
    }
    let out = output_name(art.problem);
    let mut tensors = Vec::new();
    let mut output = None;
    for t in &sig.tensors {
        if t.name == out {
            output = Some(tensors.len());
            // Every output is M×N (attention's O: one batch of M×N; split-K's workspace:
            // SPLIT planes of M×N).
            let shape = if art.problem == Some(Problem::Attention) {
                vec![1, m, n]
            } else if is_partial(art) {
                // A transposed partial's planes are N×M (`split::is_transposed`).
                if tirx_kernels::gemm::split::is_transposed(art) {
                    vec![SPLIT, n, m]
                } else {
                    vec![SPLIT, m, n]
                }
            } else {
                vec![m, n]
            };
            let bytes = vec![0xff; shape.iter().product::<usize>() * t.elem.bytes() as usize];
            tensors.push(TensorData {
                name: t.name.clone(),
                elem: t.elem,
                shape,
                bytes,
            });
            continue;
        }
        let (_, elem, shape, bytes) =
            named
                .iter()
                .find(|(name, ..)| *name == t.name)
                .ok_or_else(|| {
                    format!(
                        "`{}` takes a tensor `{}` the dump has no input for",
                        art.kernel, t.name
                    )
                })?;
        tensors.push(TensorData {
            name: t.name.clone(),
            elem: *elem,
            shape: shape.clone(),
            bytes: bytes.clone(),
        });
    }
    let output = output.ok_or_else(|| format!("`{}` has no output `{out}`", art.kernel))?;
    Ok(CaseData {
        tensors,
        scalars,
        output,
    })
}

/// `scale_a`, `scale_b` of the per-tensor FP8 GEMM's cases.
pub const TENSOR_SCALES: (f32, f32) = tirx_kernels::gemm::check::FP8_TENSOR_SCALES;

/// The scale of element (i, j) of an FP8 GEMM's D (`sa[i]·sb[j]` or `scale_a·scale_b`), 1
/// for the other GEMMs and for block scales, whose scale varies along K
/// ([`fp8_block_scales`]).
pub fn fp8_scale(art: &KernelArtifact, data: &CaseData, i: usize, j: usize) -> f64 {
    let Some(Problem::Gemm(GemmProblem { epilogue, .. })) = art.problem else {
        return 1.0;
    };
    let at = |name: &str, x: usize| {
        data.input(name).map_or(1.0, |t| {
            decode(&t.bytes[4 * x..4 * x + 4], ElemType::F32)[0]
        })
    };
    match epilogue {
        Epilogue::ScaleRows => at("sa", i) * at("sb", j),
        Epilogue::ScaleTensor => f64::from(TENSOR_SCALES.0) * f64::from(TENSOR_SCALES.1),
        _ => 1.0,
    }
}

/// The block scales of a `ScaleBlocks` GEMM's case (`sa` [M, KB], `sb` [NB, KB]) or a
/// `ScaleBlocksMn` one's (`sa` [KB, M4]), `None` for the other GEMMs.
pub fn fp8_block_scales(art: &KernelArtifact, data: &CaseData) -> Option<Fp8Scales> {
    let Some(Problem::Gemm(GemmProblem { epilogue, .. })) = art.problem else {
        return None;
    };
    let mode = Fp8ScaleMode::of(epilogue).filter(|m| m.is_blocks())?;
    let f32s = |name: &str| -> Option<Vec<f32>> {
        let t = data.input(name)?;
        Some(
            t.bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    };
    mode.vectors(f32s("sa")?, f32s("sb")?)
}

/// α, β of a GEMM epilogue: (1.5, −0.75) where it takes C, as `tirx sim` and the sim tests.
pub fn gemm_scale(epilogue: Epilogue) -> (f32, f32) {
    match epilogue {
        Epilogue::Scaled => (1.5, -0.75),
        _ => (1.0, 0.0),
    }
}

fn bf16_bytes(v: &[bf16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
}

/// `n` random values of `elem` as bytes (`simulate::random_values`, the generator `tirx sim`
/// and the tests use).
fn random_bytes(rng: &mut Rng, elem: ElemType, n: usize) -> Vec<u8> {
    tirx_kernels::simulate::random_values(rng, elem, n).0
}

pub use tirx_kernels::simulate::decode;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every sm_90a kernel tirx ships has a case, every case (and every kernel's default
    /// case) resolves to an artifact, and the inputs build.
    #[test]
    fn the_cases_cover_every_shipped_sm90_kernel() {
        let covered: BTreeSet<&str> = cases().iter().map(|c| c.kernel).collect();
        for k in catalogue::all() {
            if k.artifacts.iter().any(|a| a.target == Target::Sm90a) {
                assert!(
                    covered.contains(k.name),
                    "no sim-dump case runs `{}`",
                    k.name
                );
            }
        }
        // The cases a kernel gets when the table does not name it build too.
        let defaults = catalogue::all().into_iter().filter_map(default_case);
        for c in cases().into_iter().chain(defaults) {
            let art = c.artifact().unwrap_or_else(|e| panic!("{c:?}: {e}"));
            let data = inputs(art, &c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            assert!(data.out().bytes.iter().all(|&b| b == 0xff));
        }
    }

    /// Row kernels take the smallest capacity that holds the row; tma_copy runs both configs.
    #[test]
    fn row_cases_pick_the_smallest_capacity_and_copies_both_configs() {
        let all = cases();
        let softmax = all.iter().find(|c| c.kernel == "softmax").unwrap();
        assert_eq!(softmax.artifact().unwrap().config, "c1k");
        let copies: Vec<_> = all.iter().filter(|c| c.kernel == "tma_copy").collect();
        assert_eq!(copies.len(), 2);
        let seeds: BTreeSet<u64> = all.iter().map(|c| c.seed).collect();
        assert_eq!(seeds.len(), all.len(), "distinct seeds");
    }

    /// The inputs are a function of the case alone.
    #[test]
    fn inputs_are_deterministic() {
        let c = cases()[2];
        let art = c.artifact().unwrap();
        let (a, b) = (inputs(art, &c).unwrap(), inputs(art, &c).unwrap());
        assert_eq!(a.input_hash(), b.input_hash());
        assert_eq!(a.tensors, b.tensors);
        let other = Case {
            seed: c.seed + 1,
            ..c
        };
        assert_ne!(inputs(art, &other).unwrap().input_hash(), a.input_hash());
    }
}
