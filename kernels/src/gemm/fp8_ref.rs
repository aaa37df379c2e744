//! The host side of the FP8 GEMMs (`fp8.rs`, `fp8_block.rs`): the f64 reference
//! D = diag(s_a)·A·Bᵀ·diag(s_b) — or, with block scales, Σ_kb (A_kb·B_kbᵀ)·sa[:, kb]·sb[nb, kb]
//! — of the FP8 values the kernel reads (the quantisation already applied: the inputs are the
//! E4M3/E5M2 values themselves, decoded exactly), and the bound a result is checked against.
//! Used by the GEMM family's checks (`tirx run`, `tirx sim`), the emulator tests, the GPU
//! tests and `tirx bench gemm --in e4m3`.

use tirx::Element;
use tirx::abi::ElemType;
use tirx::problem::Epilogue;

/// An FP8 host type: rounding from f32 and the exact value.
pub trait Fp8Host: Element {
    /// The nearest value to `x` (to nearest even, saturating).
    fn quantise(x: f32) -> Self;
    /// The exact value.
    fn value(self) -> f64;
}

impl Fp8Host for tirx::e4m3 {
    fn quantise(x: f32) -> Self {
        tirx::e4m3::from_f32(x)
    }
    fn value(self) -> f64 {
        f64::from(self.to_f32())
    }
}

impl Fp8Host for tirx::e5m2 {
    fn quantise(x: f32) -> Self {
        tirx::e5m2::from_f32(x)
    }
    fn value(self) -> f64 {
        f64::from(self.to_f32())
    }
}

/// How an FP8 GEMM accumulates its products: `torch._scaled_mm`'s `use_fast_accum`, cuBLASLt's
/// `CUBLASLT_MATMUL_DESC_FAST_ACCUM`. Hopper's FP8 wgmma adds into its f32 registers with an
/// adder that keeps fewer bits than f32 (about 14, the DeepSeek-V3 report's §3.3.2), so a
/// chain over the whole K extent loses precision as K grows: at K = 4096 with an f32 output
/// the relative Frobenius error against f64 is about 1.3e-3 where a promoted chain's is
/// 1.3e-4 (measured through `torch._scaled_mm` and `gemm_sm90_fp8_block`, issue #29).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Accum {
    /// `use_fast_accum=True`: any FP8 kernel, the fastest first — those that keep the tensor
    /// core's accumulator over all of K (`fp8.rs`'s fast configs, ping-pong, split-K), and the
    /// promoted ones where the cost model ranks them ahead.
    Fast,
    /// `use_fast_accum=False` (torch's default): only kernels that promote the tensor core's
    /// partial sum into an f32 register accumulator at least every 128 of K — `fp8.rs`'s and
    /// `fp8_splitk.rs`'s `promoted*` configs (config constant `PROMOTE`, the interval in K)
    /// and every block-scaled kernel (`fp8_block.rs`, which promotes each 128-wide K block).
    Promoted,
}

impl Fp8Accum {
    /// The accumulation `artifact` does: promoted when its config declares a promotion
    /// interval (`PROMOTE` > 0) or it solves the block-scaled problem; fast otherwise.
    pub fn of(artifact: &tirx::KernelArtifact) -> Fp8Accum {
        let blocks = matches!(
            artifact.problem,
            Some(tirx::problem::Problem::Gemm(g))
                if matches!(g.epilogue, Epilogue::ScaleBlocks | Epilogue::ScaleBlocksMn)
        );
        if blocks || artifact.int("PROMOTE").is_some_and(|p| p > 0) {
            Fp8Accum::Promoted
        } else {
            Fp8Accum::Fast
        }
    }

    /// Whether a request for this accumulation may run `artifact`: a promoted request only a
    /// promoted kernel, a fast one any.
    pub fn admits(self, artifact: &tirx::KernelArtifact) -> bool {
        self == Fp8Accum::Fast || Fp8Accum::of(artifact) == Fp8Accum::Promoted
    }

    /// `fast`, `promoted`.
    pub fn name(self) -> &'static str {
        match self {
            Fp8Accum::Fast => "fast",
            Fp8Accum::Promoted => "promoted",
        }
    }

    /// The accumulation of `torch._scaled_mm(…, use_fast_accum=…)`.
    pub fn from_fast_accum(use_fast_accum: bool) -> Fp8Accum {
        if use_fast_accum {
            Fp8Accum::Fast
        } else {
            Fp8Accum::Promoted
        }
    }
}

impl std::str::FromStr for Fp8Accum {
    type Err = String;
    fn from_str(s: &str) -> Result<Fp8Accum, String> {
        match s {
            "fast" => Ok(Fp8Accum::Fast),
            "promoted" => Ok(Fp8Accum::Promoted),
            _ => Err(format!(
                "`{s}`: an FP8 accumulation is `fast` or `promoted`"
            )),
        }
    }
}

/// The scales of an FP8 GEMM: one per tensor (`torch._scaled_mm`'s tensor-wise form), one
/// per row of A and one per row of B (its row-wise form), or one per 1×128 block of A and per
/// 128×128 block of B (the DeepSeek-V3 recipe, `fp8_block.rs`).
#[derive(Clone, Debug, PartialEq)]
pub enum Fp8Scales {
    /// D = (a·b)·A·Bᵀ.
    Tensor(f32, f32),
    /// D = diag(sa)·A·Bᵀ·diag(sb), `sa` [M], `sb` [N].
    Rows(Vec<f32>, Vec<f32>),
    /// D = Σ_kb (A_kb·B_kbᵀ)·sa[:, kb]·sb[n / 128, kb], `sa` [M, KB] and `sb` [NB, KB]
    /// row-major (`KB = cdiv(K, 128)`, `NB = cdiv(N, 128)`).
    Blocks(Vec<f32>, Vec<f32>),
    /// [`Fp8Scales::Blocks`] with `sa` MN-major: `[KB, M4]` (`M4 = 4·cdiv(M, 4)`, the
    /// padding never read into D; [`mn_major`] makes it from the row-major form), `sb`
    /// [NB, KB] as there.
    BlocksMn(Vec<f32>, Vec<f32>),
}

/// Which of the three forms of [`Fp8Scales`] a GEMM takes (the request's epilogue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8ScaleMode {
    /// One f32 per tensor: `Epilogue::ScaleTensor`.
    Tensor,
    /// One f32 per row of A and per row of B: `Epilogue::ScaleRows`.
    Rows,
    /// One f32 per 1×128 block of A and per 128×128 block of B: `Epilogue::ScaleBlocks`.
    Blocks,
    /// [`Fp8ScaleMode::Blocks`] with `sa` MN-major, `[KB, M4]`: `Epilogue::ScaleBlocksMn`.
    BlocksMn,
}

impl Fp8ScaleMode {
    /// The epilogue of a GEMM with these scales.
    pub fn epilogue(self) -> Epilogue {
        match self {
            Fp8ScaleMode::Tensor => Epilogue::ScaleTensor,
            Fp8ScaleMode::Rows => Epilogue::ScaleRows,
            Fp8ScaleMode::Blocks => Epilogue::ScaleBlocks,
            Fp8ScaleMode::BlocksMn => Epilogue::ScaleBlocksMn,
        }
    }

    /// The scales of an FP8 epilogue; `None` for the others.
    pub fn of(epilogue: Epilogue) -> Option<Fp8ScaleMode> {
        match epilogue {
            Epilogue::ScaleTensor => Some(Fp8ScaleMode::Tensor),
            Epilogue::ScaleRows => Some(Fp8ScaleMode::Rows),
            Epilogue::ScaleBlocks => Some(Fp8ScaleMode::Blocks),
            Epilogue::ScaleBlocksMn => Some(Fp8ScaleMode::BlocksMn),
            _ => None,
        }
    }

    /// `per-tensor`, `row-wise`, `block-wise (1x128, 128x128)`, `… MN-major sa`.
    pub fn describe(self) -> &'static str {
        match self {
            Fp8ScaleMode::Tensor => "per-tensor",
            Fp8ScaleMode::Rows => "row-wise",
            Fp8ScaleMode::Blocks => "block-wise (1x128, 128x128)",
            Fp8ScaleMode::BlocksMn => "block-wise (1x128, 128x128), MN-major sa",
        }
    }

    /// The shapes of the scale tensors `sa`, `sb` of an M×N×K GEMM: [1] each (the per-tensor
    /// scales are scalars; a bench keeps them on the device too), [M] and [N], [M, KB] and
    /// [NB, KB], or (MN-major) [KB, M4] and [NB, KB].
    pub fn shapes(self, (m, n, k): (usize, usize, usize)) -> (Vec<usize>, Vec<usize>) {
        let kb = k.div_ceil(SCALE_BLOCK);
        match self {
            Fp8ScaleMode::Tensor => (vec![1], vec![1]),
            Fp8ScaleMode::Rows => (vec![m], vec![n]),
            Fp8ScaleMode::Blocks => (vec![m, kb], vec![n.div_ceil(SCALE_BLOCK), kb]),
            Fp8ScaleMode::BlocksMn => (vec![kb, m4(m)], vec![n.div_ceil(SCALE_BLOCK), kb]),
        }
    }
}

impl Fp8ScaleMode {
    /// The names of [`Fp8ScaleMode::shapes`]' dimensions, as the kernels declare them.
    pub fn symbols(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Fp8ScaleMode::Tensor => (&["1"], &["1"]),
            Fp8ScaleMode::Rows => (&["M"], &["N"]),
            Fp8ScaleMode::Blocks => (&["M", "KB"], &["NB", "KB"]),
            Fp8ScaleMode::BlocksMn => (&["KB", "M4"], &["NB", "KB"]),
        }
    }
}

impl Fp8ScaleMode {
    /// Scales of this form from their tensors' values (in [`Fp8ScaleMode::shapes`]' layout);
    /// `None` for the per-tensor form, whose scales are scalars.
    pub fn vectors(self, sa: Vec<f32>, sb: Vec<f32>) -> Option<Fp8Scales> {
        match self {
            Fp8ScaleMode::Tensor => None,
            Fp8ScaleMode::Rows => Some(Fp8Scales::Rows(sa, sb)),
            Fp8ScaleMode::Blocks => Some(Fp8Scales::Blocks(sa, sb)),
            Fp8ScaleMode::BlocksMn => Some(Fp8Scales::BlocksMn(sa, sb)),
        }
    }

    /// Whether these are block scales (either layout of `sa`).
    pub fn is_blocks(self) -> bool {
        matches!(self, Fp8ScaleMode::Blocks | Fp8ScaleMode::BlocksMn)
    }
}

impl Fp8Scales {
    /// Which form these scales are.
    pub fn mode(&self) -> Fp8ScaleMode {
        match self {
            Fp8Scales::Tensor(..) => Fp8ScaleMode::Tensor,
            Fp8Scales::Rows(..) => Fp8ScaleMode::Rows,
            Fp8Scales::Blocks(..) => Fp8ScaleMode::Blocks,
            Fp8Scales::BlocksMn(..) => Fp8ScaleMode::BlocksMn,
        }
    }

    /// Element (i, j) of D in f64 from row `i` of A and row `j` of B (exact values, K each),
    /// and its magnitude Σ|a·b|·|scale| (per K block for block scales).
    pub fn element(&self, ra: &[f64], rb: &[f64], i: usize, j: usize) -> (f64, f64) {
        let dot = |r: std::ops::Range<usize>| {
            r.fold((0.0, 0.0), |(s, g), c| {
                let x = ra[c] * rb[c];
                (s + x, g + x.abs())
            })
        };
        let sc = match self {
            Fp8Scales::Tensor(a, b) => f64::from(*a) * f64::from(*b),
            Fp8Scales::Rows(sa, sb) => f64::from(sa[i]) * f64::from(sb[j]),
            Fp8Scales::Blocks(sa, sb) | Fp8Scales::BlocksMn(sa, sb) => {
                let k = ra.len();
                let kbs = k.div_ceil(SCALE_BLOCK);
                // sa[i, kb] row-major, or sa[kb, i] in rows of M4 = sa.len() / KB.
                let at = |kb: usize| match self {
                    Fp8Scales::BlocksMn(..) => sa[kb * (sa.len() / kbs) + i],
                    _ => sa[i * kbs + kb],
                };
                return (0..kbs).fold((0.0, 0.0), |(s, g), kb| {
                    let (p, q) = dot(kb * SCALE_BLOCK..((kb + 1) * SCALE_BLOCK).min(k));
                    let sc = f64::from(at(kb)) * f64::from(sb[(j / SCALE_BLOCK) * kbs + kb]);
                    (s + p * sc, g + q * sc.abs())
                });
            }
        };
        let (s, g) = dot(0..ra.len());
        (s * sc, g * sc.abs())
    }

    /// The K [`check`] is given for a GEMM of depth `k` with these scales: `k`, or
    /// [`block_check_k`] for block scales.
    pub fn check_k(&self, k: usize) -> usize {
        match self {
            Fp8Scales::Blocks(..) | Fp8Scales::BlocksMn(..) => block_check_k(k),
            _ => k,
        }
    }
}

/// D = scale ⊙ A·Bᵀ in f64 (per K block for block scales), A M×K and B N×K given as exact
/// values (row-major), and per element Σ|a·b|·|scale| (the magnitude the accumulation error
/// is relative to).
pub fn scaled_mm_f64(
    a: &[f64],
    b: &[f64],
    (m, n, k): (usize, usize, usize),
    scales: &Fp8Scales,
) -> (Vec<f64>, Vec<f64>) {
    let (mut d, mut mag) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        let ra = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let (s, g) = scales.element(ra, &b[j * k..(j + 1) * k], i, j);
            d[i * n + j] = s;
            mag[i * n + j] = g;
        }
    }
    (d, mag)
}

/// The block size of the fine-grained scales (`fp8_block.rs`): 1×128 blocks of A, 128×128
/// blocks of B.
pub const SCALE_BLOCK: usize = 128;

/// D = Σ_kb (A_kb·B_kbᵀ)·sa[i, kb]·sb[j / 128, kb] in f64 — the block-scaled GEMM of
/// `fp8_block.rs` — A M×K and B N×K given as exact values, `sa` [M, KB] and `sb` [NB, KB]
/// row-major (`KB = cdiv(K, 128)`, `NB = cdiv(N, 128)`); and per element
/// Σ_kb Σ|a·b|·|sa·sb| (the magnitude the accumulation error is relative to).
pub fn block_scaled_mm_f64(
    a: &[f64],
    b: &[f64],
    shape: (usize, usize, usize),
    (sa, sb): (&[f32], &[f32]),
) -> (Vec<f64>, Vec<f64>) {
    scaled_mm_f64(a, b, shape, &Fp8Scales::Blocks(sa.to_vec(), sb.to_vec()))
}

/// `M4 = 4·cdiv(M, 4)`: the row length of MN-major block scales ([`Fp8ScaleMode::BlocksMn`]),
/// so that every K block's row starts 16-byte aligned (TMA's global strides).
pub fn m4(m: usize) -> usize {
    m.div_ceil(4) * 4
}

/// Row-major block scales `sa` [M, KB] in the MN-major layout `[KB, M4]` (zeros in the
/// padding columns): what [`Fp8Scales::BlocksMn`] and `gemm_sm90_fp8_block_mn` take.
pub fn mn_major(sa: &[f32], m: usize, kb: usize) -> Vec<f32> {
    let w = m4(m);
    let mut t = vec![0.0; kb * w];
    for (i, row) in sa.chunks_exact(kb).take(m).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            t[c * w + i] = v;
        }
    }
    t
}

/// The K that [`check`] is given for a block-scaled GEMM of depth `k`: the promotion adds
/// two f32 roundings per K block (the product of the two scales, and the `fma` into the
/// accumulator), each at most 2⁻²⁴ of that block's share of the magnitude — counted as two
/// more K = 32 steps of the chain per block.
pub fn block_check_k(k: usize) -> usize {
    k + 2 * 32 * k.div_ceil(SCALE_BLOCK)
}

/// The relative precision of the accumulation a checker allows, per unit of Σ|a·b|·|scale|:
/// `exact` for an accumulation in f32 (the emulator: each K = 32 step's exact products rounded
/// once into f32, `(K/32 + 2)·2⁻²⁴`), otherwise the Hopper tensor core's FP8 accumulation
/// (both ours and cuBLASLt's with fast accumulation), whose adder keeps about 14 bits: the
/// DeepSeek-V3 technical report (§3.3.2) measured "a maximum relative error of nearly 2%" at
/// K = 4096 on random data. Relative to Σ|a·b| — about √K/2 times |Σ a·b| on such data — 2⁻⁹
/// allows several times that (≈ 6% of |D| at K = 4096) while a wrong scale (≥ 50% of |D|) or
/// a lost K tile (≈ √(128/K) of |D|, 18% at K = 4096) stays far outside. Not yet measured on
/// the H200: the bench prints both sides' errors against the f64 reference, and cuBLASLt
/// failing the check would show the bound too tight.
pub fn accumulation_bound(k: usize, exact: bool) -> f64 {
    let chain = (k.div_ceil(32) as f64 + 2.0) * 2f64.powi(-24);
    if exact { chain } else { 2f64.powi(-9) + chain }
}

/// Half an ulp of `elem` at `x`, relative: the output's rounding (and the scale products'
/// two f32 roundings).
pub fn output_bound(elem: ElemType, x: f64) -> f64 {
    let frac = match elem {
        ElemType::Bf16 => 7,
        ElemType::F16 => 10,
        _ => 23,
    };
    // f16's subnormals below 2⁻¹⁴ keep absolute steps of 2⁻²⁴.
    let floor = if elem == ElemType::F16 {
        2f64.powi(-25)
    } else {
        0.0
    };
    x.abs() * (2f64.powi(-frac - 1) + 2f64.powi(-22)) + floor
}

/// Checks `got` (D decoded to f64) against the reference; returns the worst
/// error / bound ratio (≤ 1 passes) or the first element out of bounds.
pub fn check(
    got: &[f64],
    (want, mag): (&[f64], &[f64]),
    (k, d_elem, exact): (usize, ElemType, bool),
    n: usize,
) -> Result<f64, String> {
    let acc = accumulation_bound(k, exact);
    let mut worst = 0f64;
    for (e, (&g, (&w, &m))) in got.iter().zip(want.iter().zip(mag)).enumerate() {
        let tol = m * acc + output_bound(d_elem, w) + 1e-30;
        let err = (g - w).abs();
        if err > tol || err.is_nan() {
            return Err(format!(
                "D[{}][{}] = {g}, want {w} (|err| {err:.3e} > {tol:.3e})",
                e / n,
                e % n
            ));
        }
        worst = worst.max(err / tol);
    }
    Ok(worst)
}
