//! What a kernel computes: the problem an artifact solves, as typed data the host reads.
//!
//! A kernel declares its problem kind in its attribute (`solves = gemm`); the front end derives
//! the rest from the kernel's signature in each config (which layout B has, whether the
//! epilogue is scaled) with [`ProblemKind::derive`], which also checks that the signature has
//! the roles the problem needs (tensor names, shapes, scalars) and says what is missing. The
//! artifact carries the resulting [`Problem`]; the host-side dispatcher (`tirx-kernels`)
//! accepts or rejects artifacts by it, never by a kernel's or a config's name.
//!
//! Adding a problem kind: a variant here (its declaration and its roles), and its host-side
//! definition in `kernels/src/dispatch/` (see `docs/adding-a-kernel.md`).
//!
//! Invariant: a `Problem` is derived from a signature that has every role it names, with the
//! shapes it names, so the host may launch the artifact by role (`a`, `b`, `d`, …).

use crate::abi::{ElemType, Signature, TensorDecl};
use crate::encode::Major;
use std::fmt;

/// A problem kind as a kernel declares it (`solves = <name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// `solves = copy`: a tile copy, `dst ← src`.
    Copy,
    /// `solves = gemm`: D = A·op(B), or D = α·A·op(B) + β·C.
    Gemm,
    /// `solves = softmax`, `rmsnorm`, `layernorm`: a row op `y ← f(x)` (see [`RowOp`]).
    Row(RowOp),
    /// `solves = silu_mul`: the elementwise `y = silu(x) · g` of a SwiGLU MLP.
    SiluMul,
    /// `solves = attention`: O = softmax(scale·Q·Kᵀ)·V and the log-sum-exp of each row.
    Attention,
}

/// Every problem kind, for "expected one of" messages and the reference.
pub const PROBLEM_KINDS: [ProblemKind; 7] = [
    ProblemKind::Copy,
    ProblemKind::Gemm,
    ProblemKind::Row(RowOp::Softmax),
    ProblemKind::Row(RowOp::RmsNorm),
    ProblemKind::Row(RowOp::LayerNorm),
    ProblemKind::SiluMul,
    ProblemKind::Attention,
];

/// A row op: each row of `x` [M, N] independently into the same row of `y` [M, N], with
/// statistics in f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowOp {
    /// `y = exp(x − max x) / Σ exp(x − max x)`.
    Softmax,
    /// `y = x · rsqrt(mean(x²) + eps) · w` (`w` [N], scalar `eps`).
    RmsNorm,
    /// `y = (x − mean x) · rsqrt(var x + eps) · w + b` (`w`, `b` [N], scalar `eps`; the
    /// biased variance).
    LayerNorm,
}

impl RowOp {
    /// Every row op, in the order listings and benches show them.
    pub const ALL: [RowOp; 3] = [RowOp::Softmax, RowOp::RmsNorm, RowOp::LayerNorm];

    /// The op named `s` ([`RowOp::name`]), if any.
    pub fn parse(s: &str) -> Option<RowOp> {
        RowOp::ALL.into_iter().find(|op| op.name() == s)
    }

    /// Whether the op takes the weight vector `w`.
    pub fn takes_weight(self) -> bool {
        !matches!(self, RowOp::Softmax)
    }

    /// Whether the op takes the bias vector `b`.
    pub fn takes_bias(self) -> bool {
        matches!(self, RowOp::LayerNorm)
    }

    /// `softmax` / `rmsnorm` / `layernorm`.
    pub fn name(self) -> &'static str {
        match self {
            RowOp::Softmax => "softmax",
            RowOp::RmsNorm => "rmsnorm",
            RowOp::LayerNorm => "layernorm",
        }
    }
    /// The vectors [N] the op takes besides `x` and `y`.
    pub fn vectors(self) -> &'static [&'static str] {
        match self {
            RowOp::Softmax => &[],
            RowOp::RmsNorm => &["w"],
            RowOp::LayerNorm => &["w", "b"],
        }
    }
    /// The scalars it takes.
    pub fn scalars(self) -> &'static [&'static str] {
        match self {
            RowOp::Softmax => &[],
            RowOp::RmsNorm | RowOp::LayerNorm => &["eps"],
        }
    }
}

/// How a GEMM's B operand is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BLayout {
    /// B given N×K, K contiguous (both operands K-major; "TN" in BLAS's column-major terms):
    /// D = A·Bᵀ.
    Tn,
    /// B given K×N, N contiguous (B MN-major; "NN"): D = A·B.
    Nn,
}

impl BLayout {
    /// `tn` / `nn`.
    pub fn name(self) -> &'static str {
        match self {
            BLayout::Tn => "tn",
            BLayout::Nn => "nn",
        }
    }
    /// Parses [`BLayout::name`].
    pub fn from_name(s: &str) -> Option<BLayout> {
        match s {
            "tn" => Some(BLayout::Tn),
            "nn" => Some(BLayout::Nn),
            _ => None,
        }
    }
    /// B's majorness as an MMA operand: K-major for TN, MN-major for NN.
    pub fn major(self) -> Major {
        match self {
            BLayout::Tn => Major::K,
            BLayout::Nn => Major::MN,
        }
    }
}

/// The activation of a fused bias epilogue, applied after the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Act {
    /// None: D = A·op(B) + bias.
    None,
    /// `max(x, 0)`.
    Relu,
    /// GELU, tanh form: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    Gelu,
    /// SiLU: `x·σ(x)`.
    Silu,
}

impl Act {
    /// Every activation, by its config code (`ACT = 0 … 3`).
    pub const ALL: [Act; 4] = [Act::None, Act::Relu, Act::Gelu, Act::Silu];
    /// `bias`, `bias-relu`, `bias-gelu`, `bias-silu`: the epilogue's name.
    pub fn epilogue_name(self) -> &'static str {
        match self {
            Act::None => "bias",
            Act::Relu => "bias-relu",
            Act::Gelu => "bias-gelu",
            Act::Silu => "bias-silu",
        }
    }
    /// `bias-residual`, `bias-relu-residual`, …: the name of the epilogue that adds a
    /// residual after this activation ([`Epilogue::BiasResidual`]).
    pub fn residual_name(self) -> &'static str {
        match self {
            Act::None => "bias-residual",
            Act::Relu => "bias-relu-residual",
            Act::Gelu => "bias-gelu-residual",
            Act::Silu => "bias-silu-residual",
        }
    }
    /// The activation of a config code `ACT`.
    pub fn of_code(code: i64) -> Option<Act> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Act::ALL.get(i).copied())
    }
}

/// The epilogue of a GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Epilogue {
    /// D = A·op(B).
    Plain,
    /// D = α·A·op(B) + β·C, with `alpha`, `beta` scalar arguments and C in D's type.
    Scaled,
    /// D = act(A·op(B) + bias), `bias` a vector [N] in D's type added to every row; the
    /// activation is the config constant `ACT` (0 none, 1 ReLU, 2 GELU tanh form, 3 SiLU).
    Bias(Act),
    /// D = act(A·op(B) + bias) + R: [`Epilogue::Bias`] and then a residual `res` [M, N] in
    /// D's type added after the activation (a transformer block's `x + act(x·W + b)`), in f32
    /// before D is rounded. The residual without a bias or an activation, D = A·op(B) + R,
    /// is [`Epilogue::Scaled`] with α = β = 1 and C = R (what the host requests for it).
    BiasResidual(Act),
    /// D = (s_a·s_b)·A·op(B), the f32 scalars `scale_a`, `scale_b` (per-tensor scales of
    /// quantised operands: `torch._scaled_mm`'s tensor-wise form).
    ScaleTensor,
    /// D = diag(sa)·A·op(B)·diag(sb), `sa` [M] and `sb` [N] f32 vectors (one scale per row of
    /// A and per column of D: `torch._scaled_mm`'s row-wise form).
    ScaleRows,
    /// D = Σ_kb (A_kb·op(B)_kb)·sa[:, kb]·sb[n / 128, kb]: fine-grained block scales (the
    /// DeepSeek-V3 recipe), `sa` [M, KB] f32 (one per 1×128 block of A), `sb` [NB, KB] f32
    /// (one per 128×128 block of B), `KB = cdiv(K, 128)`, `NB = cdiv(N, 128)`; applied per
    /// K block into the f32 accumulator (`kernels/src/gemm/fp8_block.rs`).
    ScaleBlocks,
    /// [`Epilogue::ScaleBlocks`] with `sa` given MN-major (K-block-major): f32 `[KB, M4]`,
    /// each K block's M row scales contiguous and the row padded to `M4 = 4·cdiv(M, 4)`
    /// floats so that every K block's row starts 16-byte aligned (TMA's global strides are
    /// multiples of 16 bytes) — DeepGEMM's "TMA-aligned" scale layout, the transpose of
    /// `ScaleBlocks`' `sa` (torch `_scaled_mm`'s and cuBLASLt's block-wise `scale_a` is this
    /// form); `sb` [NB, KB] as there. `sa[kb, m]` scales row `m`'s K block `kb`; the padding
    /// columns `M ≤ m < M4` are never read into D.
    ScaleBlocksMn,
    /// D = (A·sA)·(B·sB)ᵀ: Blackwell's block-scaled MMA (`tcgen05.mma … .block_scale`, PTX
    /// ISA §9.7.16.10.7), one factor per [`Factors::vector`] elements of each row of A and of
    /// B (B given N×K), the factor matrices `sfa` [MS, KS] and `sfb` [NS, KS] laid out as
    /// `tirx::runtime::scale_image` writes them; applied inside the MMA, f32 accumulate. The
    /// recipe comes from the factors' element type (`ue8m0` or `ue4m3`), A's and B's from the
    /// GEMM's input type (`e4m3`, or `e2m1x2` packed FP4 whose `a` is [M, K / 2] bytes).
    ScaleFactors(Factors),
    /// Split K: `w[z] = A·op(B)` over the z-th of `S` slices of K, into an f32 workspace `w`
    /// [S, M, N] instead of `d` (one launch of a split-K GEMM; a second kernel sums the
    /// slices and applies the requested epilogue, `kernels/src/gemm/splitk.rs`).
    Partial,
}

impl Epilogue {
    /// `plain` / `scaled` / `bias-gelu` …
    pub fn name(self) -> &'static str {
        match self {
            Epilogue::Plain => "plain",
            Epilogue::Scaled => "scaled",
            Epilogue::Bias(a) => a.epilogue_name(),
            Epilogue::BiasResidual(a) => a.residual_name(),
            Epilogue::ScaleTensor => "scale-tensor",
            Epilogue::ScaleRows => "scale-rows",
            Epilogue::ScaleBlocks => "scale-blocks",
            Epilogue::ScaleBlocksMn => "scale-blocks-mn",
            Epilogue::ScaleFactors(f) => f.epilogue_name(),
            Epilogue::Partial => "partial",
        }
    }
}

/// The block-scale factors of [`Epilogue::ScaleFactors`]: which recipe, told by the factors'
/// element type (never by a kernel's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Factors {
    /// The OCP MX recipe: one UE8M0 (a power of two) per 32 elements of a row (MXFP8 with
    /// E4M3 operands; MXFP4 with `e2m1x2`).
    Mx,
    /// NVFP4's recipe: one UE4M3 per 16 FP4 values of a row (its per-tensor f32 scale is the
    /// caller's to fold into the output).
    Nv,
}

impl Factors {
    /// Both recipes.
    pub const ALL: [Factors; 2] = [Factors::Mx, Factors::Nv];
    /// The recipe whose factors are of type `elem` (`ue8m0` or `ue4m3`).
    pub fn of(elem: ElemType) -> Option<Factors> {
        match elem {
            ElemType::Ue8m0 => Some(Factors::Mx),
            ElemType::Ue4m3 => Some(Factors::Nv),
            _ => None,
        }
    }
    /// The factors' element type.
    pub fn elem(self) -> ElemType {
        match self {
            Factors::Mx => ElemType::Ue8m0,
            Factors::Nv => ElemType::Ue4m3,
        }
    }
    /// Elements of a row one factor scales.
    pub fn vector(self) -> usize {
        match self {
            Factors::Mx => 32,
            Factors::Nv => 16,
        }
    }
    /// Whether A and B of type `input` take these factors: MX E4M3 or packed FP4, NVFP4
    /// packed FP4 only (the block-scaled MMA kinds `mxf8f6f4` and `mxf4nvf4`).
    pub fn takes(self, input: ElemType) -> bool {
        match self {
            Factors::Mx => matches!(input, ElemType::E4m3 | ElemType::E2m1x2),
            Factors::Nv => input == ElemType::E2m1x2,
        }
    }
    /// `scale-mx` / `scale-nv`: the epilogue's name.
    pub fn epilogue_name(self) -> &'static str {
        match self {
            Factors::Mx => "scale-mx",
            Factors::Nv => "scale-nv",
        }
    }
}

/// A GEMM's variant: B's layout and the epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmProblem {
    /// How B is given.
    pub b: BLayout,
    /// The epilogue.
    pub epilogue: Epilogue,
}

/// The problem one artifact solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Problem {
    /// `dst ← src`, both M×N of one element type.
    Copy,
    /// A GEMM (tensors `a`, `b`, `d`, and `c` with scalars `alpha`, `beta` when scaled;
    /// `bias` and `res` with a residual epilogue).
    Gemm(GemmProblem),
    /// A row op (tensors `x`, `y` and the op's vectors and scalars).
    Row(RowOp),
    /// `y = silu(x) · g` (tensors `x`, `g`, `y`, all [M, N] of one type).
    SiluMul,
    /// Attention forward (tensors `q`, `k`, `v`, `o`, `lse`, scalar `scale_log2`); the head
    /// dims and mask are the config's `D` (or `D_QK` for Q/K and `D_V` for V/O) and `CAUSAL`.
    Attention,
}

impl ProblemKind {
    /// The spelling in `solves = …`.
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::Copy => "copy",
            ProblemKind::Gemm => "gemm",
            ProblemKind::Row(op) => op.name(),
            ProblemKind::SiluMul => "silu_mul",
            ProblemKind::Attention => "attention",
        }
    }

    /// Parses [`ProblemKind::name`].
    pub fn from_name(s: &str) -> Option<ProblemKind> {
        PROBLEM_KINDS.into_iter().find(|k| k.name() == s)
    }

    /// What the kind needs of a kernel's signature, for error messages.
    pub fn roles(self) -> &'static str {
        match self {
            ProblemKind::Copy => "tensors `src` [M, N] and `dst` [M, N] of one element type",
            ProblemKind::Gemm => {
                "tensors `a` [M, K], `b` [N, K] (B given N×K) or [K, N] (B given K×N) and \
                 `d` [M, N], A and B of one element type; for D = α·A·op(B) + β·C also `c` \
                 [M, N] in D's type and the scalars `alpha` and `beta`; for D = act(A·op(B) + \
                 bias) a vector `bias` [N] in D's type, and for act(A·op(B) + bias) + R also \
                 `res` [M, N] in D's type; for D = (s_a·s_b)·A·op(B) \
                 the scalars `scale_a` and `scale_b`; for D = diag(sa)·A·op(B)·diag(sb) the f32 \
                 vectors `sa` [M] and `sb` [N] (or matrices `sa` [M, KB], `sb` [NB, KB] per \
                 block); for D = (A·sA)·(B·sB)ᵀ the factor images `sfa` [MS, KS] and `sfb` \
                 [NS, KS] (ue8m0 or ue4m3); for split K's partial products an f32 `w` \
                 [S, M, N] instead of `d`"
            }
            ProblemKind::Row(RowOp::Softmax) => {
                "tensors `x` [M, N] and `y` [M, N], and optionally `xf` [L], `x`'s elements \
                 seen as one dimension (L = M·N)"
            }
            ProblemKind::SiluMul => "tensors `x`, `g` and `y`, all [M, N] of one element type",
            ProblemKind::Attention => {
                "tensors `q` [B, S, HQ], `o` [B, S, HO] (HO = HQ but where the V head dim \
                 differs) and `k` [B, SK, HK] of one element type, `v` (K/V heads, MN-major) \
                 of that type, `lse` [BH, S, 1] f32, and the scalar \
                 `scale_log2`"
            }
            ProblemKind::Row(RowOp::RmsNorm) => {
                "tensors `x` [M, N], `w` [N] and `y` [M, N], and the scalar `eps`; optionally \
                 `xf` [L], `x`'s elements seen as one dimension (L = M·N)"
            }
            ProblemKind::Row(RowOp::LayerNorm) => {
                "tensors `x` [M, N], `w` [N], `b` [N] and `y` [M, N], and the scalar `eps`; \
                 optionally `xf` [L], `x`'s elements seen as one dimension (L = M·N)"
            }
        }
    }

    /// The problem `sig` solves as this kind, or why `sig` does not fit it.
    pub fn derive(self, sig: &Signature) -> Result<Problem, String> {
        self.derive_with(sig, &[])
    }

    /// [`ProblemKind::derive`] in a config with these integer constants (a fused GEMM
    /// epilogue's activation is its `ACT`).
    pub fn derive_with(self, sig: &Signature, consts: &[(String, i64)]) -> Result<Problem, String> {
        match self {
            ProblemKind::Copy => derive_copy(sig),
            ProblemKind::Gemm => derive_gemm(sig, consts).map(Problem::Gemm),
            ProblemKind::Row(op) => derive_row(sig, op).map(|()| Problem::Row(op)),
            ProblemKind::SiluMul => {
                let kind = ProblemKind::SiluMul;
                let ts = [
                    role(sig, kind, "x")?,
                    role(sig, kind, "g")?,
                    role(sig, kind, "y")?,
                ];
                let same = ts
                    .iter()
                    .all(|t| t.shape == ts[0].shape && t.elem == ts[0].elem);
                if !same || ts[0].shape.len() != 2 || sig.tensors.len() != 3 {
                    return Err(format!("`solves = silu_mul` takes {}", kind.roles()));
                }
                Ok(Problem::SiluMul)
            }
            ProblemKind::Attention => {
                let kind = ProblemKind::Attention;
                let [q, k, v, o, lse] = ["q", "k", "v", "o", "lse"].map(|n| role(sig, kind, n));
                let (q, k, v, o, lse) = (q?, k?, v?, o?, lse?);
                let rank3 = [q, k, v, o, lse].iter().all(|t| t.shape.len() == 3);
                let typed = [k, v, o].iter().all(|t| t.elem == q.elem) && lse.elem == ElemType::F32;
                let scale = sig.scalars.iter().any(|s| s == "scale_log2");
                // O shares Q's batch and length; its width is Q's unless the V head dim
                // differs from the Q/K one (`D_V` ≠ `D_QK`).
                if !rank3 || !typed || !scale || q.shape[..2] != o.shape[..2] {
                    return Err(format!("`solves = attention` takes {}", kind.roles()));
                }
                Ok(Problem::Attention)
            }
        }
    }
}

/// The tensor named `name`, or why not.
fn role<'s>(sig: &'s Signature, kind: ProblemKind, name: &str) -> Result<&'s TensorDecl, String> {
    sig.tensors.iter().find(|t| t.name == name).ok_or_else(|| {
        format!(
            "`solves = {}` needs a tensor `{name}`; the kind takes {}",
            kind.name(),
            kind.roles()
        )
    })
}

/// The two shape symbols of a rank-2 tensor, or why not.
fn dims2(t: &TensorDecl) -> Result<(&str, &str), String> {
    match t.shape.as_slice() {
        [r, c] => Ok((r, c)),
        other => Err(format!(
            "tensor `{}` has rank {}; the problem needs rank 2",
            t.name,
            other.len()
        )),
    }
}

fn derive_copy(sig: &Signature) -> Result<Problem, String> {
    let kind = ProblemKind::Copy;
    let (src, dst) = (role(sig, kind, "src")?, role(sig, kind, "dst")?);
    if src.shape != dst.shape || src.elem != dst.elem {
        return Err(format!(
            "`solves = copy` needs `src` and `dst` of one shape and element type; found {} {:?} and {} {:?}",
            src.elem.name(),
            src.shape,
            dst.elem.name(),
            dst.shape
        ));
    }
    Ok(Problem::Copy)
}

fn derive_row(sig: &Signature, op: RowOp) -> Result<(), String> {
    let kind = ProblemKind::Row(op);
    let (x, y) = (role(sig, kind, "x")?, role(sig, kind, "y")?);
    let (_, n) = dims2(x)?;
    if x.shape != y.shape {
        return Err(format!(
            "`y` must have `x`'s shape {:?}, found {:?}",
            x.shape, y.shape
        ));
    }
    for v in op.vectors() {
        let t = role(sig, kind, v)?;
        if t.shape.as_slice() != [n.to_string()] {
            return Err(format!(
                "`{v}` must be a vector [{n}] (one entry per column), found {:?}",
                t.shape
            ));
        }
    }
    let want: Vec<&str> = op.scalars().to_vec();
    if sig.scalars.iter().map(String::as_str).collect::<Vec<_>>() != want {
        return Err(format!(
            "`solves = {}` takes the scalars [{}]; found [{}]",
            op.name(),
            want.join(", "),
            sig.scalars.join(", ")
        ));
    }
    // `xf`: the flat view of `x` (its `M·N` elements as one dimension), which a kernel
    // staging rows of any length by TMA reads (a 1-D tensor map has no row stride to align).
    let flat = match sig.tensors.iter().find(|t| t.name == "xf") {
        Some(f) if f.shape.len() != 1 || f.elem != x.elem => {
            return Err(format!(
                "`xf` is `x`'s flat view: a vector of {} [L], found {} {:?}",
                x.elem.name(),
                f.elem.name(),
                f.shape
            ));
        }
        Some(_) => 1,
        None => 0,
    };
    if sig.tensors.len() != 2 + op.vectors().len() + flat {
        return Err(format!(
            "`solves = {}` takes {}; this kernel has more tensors",
            op.name(),
            kind.roles()
        ));
    }
    Ok(())
}

fn derive_gemm(sig: &Signature, consts: &[(String, i64)]) -> Result<GemmProblem, String> {
    let kind = ProblemKind::Gemm;
    if !sig.tensors.iter().any(|t| t.name == "d") && sig.tensors.iter().any(|t| t.name == "w") {
        return derive_partial(sig);
    }
    let (a, b, d) = (
        role(sig, kind, "a")?,
        role(sig, kind, "b")?,
        role(sig, kind, "d")?,
    );
    let ((m, k), (dm, n)) = (dims2(a)?, dims2(d)?);
    if dm != m {
        return Err(format!(
            "`d` is [{dm}, {n}] but `a` is [{m}, {k}]: D's rows are A's rows"
        ));
    }
    let layout = match dims2(b)? {
        (bn, bk) if bn == n && bk == k => BLayout::Tn,
        (bk, bn) if bn == n && bk == k => BLayout::Nn,
        (r, c) => {
            return Err(format!(
                "`b` is [{r}, {c}]; with `a` [{m}, {k}] and `d` [{m}, {n}] it must be [{n}, {k}] \
                 (B given N×K) or [{k}, {n}] (B given K×N)"
            ));
        }
    };
    if a.elem != b.elem {
        return Err(format!(
            "`a` holds {} but `b` holds {}: A and B have one element type",
            a.elem.name(),
            b.elem.name()
        ));
    }
    let scalars = |names: &[&str]| names.iter().all(|s| sig.scalars.iter().any(|x| x == s));
    let bias = sig.tensors.iter().find(|t| t.name == "bias");
    let epilogue = match sig.tensors.iter().find(|t| t.name == "c") {
        None if sig.scalars.is_empty() && bias.is_some() => {
            let bias = bias.expect("checked");
            if bias.shape.as_slice() != [n.to_string()] || bias.elem != d.elem {
                return Err(format!(
                    "`bias` must be a vector [{n}] in D's type ({}), found {} {:?}",
                    d.elem.name(),
                    bias.elem.name(),
                    bias.shape
                ));
            }
            let code = consts
                .iter()
                .find(|(k, _)| k == "ACT")
                .map_or(0, |(_, v)| *v);
            let act = Act::of_code(code).ok_or_else(|| {
                format!("`ACT = {code}` is no activation: 0 none, 1 ReLU, 2 GELU, 3 SiLU")
            })?;
            match sig.tensors.iter().find(|t| t.name == "res") {
                None => Epilogue::Bias(act),
                Some(res) if res.shape == d.shape && res.elem == d.elem => {
                    Epilogue::BiasResidual(act)
                }
                Some(res) => {
                    return Err(format!(
                        "`res` (the residual) must have D's shape and element type ({} {:?}), \
                         found {} {:?}",
                        d.elem.name(),
                        d.shape,
                        res.elem.name(),
                        res.shape
                    ));
                }
            }
        }
        None if sig.scalars.is_empty() && sig.tensors.iter().any(|t| t.name == "sa") => {
            let vector = |name: &str, len: &str| {
                let t = role(sig, kind, name)?;
                if t.shape.as_slice() != [len.to_string()] || t.elem != ElemType::F32 {
                    return Err(format!(
                        "`{name}` must be an f32 vector [{len}], found {} {:?}",
                        t.elem.name(),
                        t.shape
                    ));
                }
                Ok(())
            };
            let sa = role(sig, kind, "sa")?;
            if sa.shape.len() == 2 {
                block_scales(sig, kind, m)?
            } else {
                vector("sa", m)?;
                vector("sb", n)?;
                Epilogue::ScaleRows
            }
        }
        None if sig.scalars.is_empty() && sig.tensors.iter().any(|t| t.name == "sfa") => {
            Epilogue::ScaleFactors(factor_images(sig, kind, (a, b), n)?)
        }
        None if sig.scalars.is_empty() => Epilogue::Plain,
        None if scalars(&["scale_a", "scale_b"]) && sig.scalars.len() == 2 => Epilogue::ScaleTensor,
        Some(c) if scalars(&["alpha", "beta"]) && sig.scalars.len() == 2 => {
            if c.shape != d.shape || c.elem != d.elem {
                return Err(format!(
                    "`c` must have D's shape and element type ({} {:?}), found {} {:?}",
                    d.elem.name(),
                    d.shape,
                    c.elem.name(),
                    c.shape
                ));
            }
            Epilogue::Scaled
        }
        _ => {
            return Err(format!(
                "`solves = gemm` takes either no `c` and no scalars (D = A·op(B)) or a tensor \
                 `c` and exactly the scalars `alpha` and `beta` (D = α·A·op(B) + β·C); found \
                 c: {}, scalars: [{}]",
                if sig.tensors.iter().any(|t| t.name == "c") {
                    "yes"
                } else {
                    "no"
                },
                sig.scalars.join(", ")
            ));
        }
    };
    let extra = match epilogue {
        Epilogue::Scaled | Epilogue::Bias(_) => 1,
        Epilogue::ScaleRows
        | Epilogue::ScaleBlocks
        | Epilogue::ScaleBlocksMn
        | Epilogue::ScaleFactors(_)
        | Epilogue::BiasResidual(_) => 2,
        Epilogue::Plain | Epilogue::ScaleTensor | Epilogue::Partial => 0,
    };
    if sig.tensors.len() != 3 + extra {
        return Err(format!(
            "`solves = gemm` takes {}; this kernel has more tensors",
            kind.roles()
        ));
    }
    Ok(GemmProblem {
        b: layout,
        epilogue,
    })
}

/// The block scales of [`Epilogue::ScaleBlocks`]: `sa` an f32 matrix whose rows are A's
/// (`[M, KB]`), `sb` an f32 matrix with as many columns (`[NB, KB]`); or, MN-major
/// ([`Epilogue::ScaleBlocksMn`]), `sa` `[KB, M4]` whose rows are `sb`'s columns (its first
/// extent `sb`'s second, its second not `M`: the padded `M4`). That `KB = cdiv(K, 128)`,
/// `NB = cdiv(N, 128)` and `M4 = 4·cdiv(M, 4)` the kernel states as shape assertions
/// (checked at launch).
fn block_scales(sig: &Signature, kind: ProblemKind, m: &str) -> Result<Epilogue, String> {
    let (sa, sb) = (role(sig, kind, "sa")?, role(sig, kind, "sb")?);
    let f32s = sa.elem == ElemType::F32
        && sb.elem == ElemType::F32
        && sa.shape.len() == 2
        && sb.shape.len() == 2;
    if f32s && sa.shape[0] == m && sa.shape[1] == sb.shape[1] {
        return Ok(Epilogue::ScaleBlocks);
    }
    if f32s && sa.shape[0] == sb.shape[1] && sa.shape[1] != m && sa.shape[1] != sb.shape[1] {
        return Ok(Epilogue::ScaleBlocksMn);
    }
    Err(format!(
        "block scales must be f32 matrices `sa` [{m}, KB] (or MN-major `sa` [KB, M4]) and `sb` \
         [NB, KB], found {} {:?} and {} {:?}",
        sa.elem.name(),
        sa.shape,
        sb.elem.name(),
        sb.shape
    ))
}

/// The factor images of [`Epilogue::ScaleFactors`]: `sfa` [MS, KS] and `sfb` [NS, KS] (one
/// column symbol: both operands have K's factors) of one factor type, which names the recipe
/// ([`Factors::of`]), and A and B of a type that recipe scales ([`Factors::takes`]). How the
/// image's extents follow from M, N and K (`scale_image`'s layout) the kernel states as shape
/// assertions, checked at launch; B is given N×K (the block-scaled MMAs read K-major factors).
fn factor_images(
    sig: &Signature,
    kind: ProblemKind,
    (a, b): (&TensorDecl, &TensorDecl),
    n: &str,
) -> Result<Factors, String> {
    let (sfa, sfb) = (role(sig, kind, "sfa")?, role(sig, kind, "sfb")?);
    let images = sfa.shape.len() == 2
        && sfb.shape.len() == 2
        && sfa.shape[1] == sfb.shape[1]
        && sfa.elem == sfb.elem;
    let factors = Factors::of(sfa.elem).filter(|_| images).ok_or_else(|| {
        format!(
            "factor images must be 2-D `sfa` [MS, KS] and `sfb` [NS, KS] of one factor type \
             (ue8m0 or ue4m3), found {} {:?} and {} {:?}",
            sfa.elem.name(),
            sfa.shape,
            sfb.elem.name(),
            sfb.shape
        )
    })?;
    if !factors.takes(a.elem) {
        return Err(format!(
            "{} factors do not scale {} operands (ue8m0: e4m3 or e2m1x2; ue4m3: e2m1x2)",
            sfa.elem.name(),
            a.elem.name()
        ));
    }
    if b.shape.first().map(String::as_str) != Some(n) {
        return Err(format!(
            "a block-scaled GEMM takes B given N×K (`b` [{n}, K]), found {:?}",
            b.shape
        ));
    }
    Ok(factors)
}

/// A split-K GEMM's partial products: `a` [M, K], `b` [N, K] or [K, N], and the f32
/// workspace `w` [S, M, N], or [S, N, M] for a kernel that stores each slice's product
/// transposed (no `d`, no scalars).
fn derive_partial(sig: &Signature) -> Result<GemmProblem, String> {
    let kind = ProblemKind::Gemm;
    let (a, b, w) = (
        role(sig, kind, "a")?,
        role(sig, kind, "b")?,
        role(sig, kind, "w")?,
    );
    let (m, k) = dims2(a)?;
    let n = match w.shape.as_slice() {
        [_, wm, n] if wm == m && w.elem == ElemType::F32 => n,
        // The transposed partials of a decode kernel (`gemm_sm90_splitk_t`): w[z] = (A·Bᵀ)ᵀ.
        [_, n, wm] if wm == m && w.elem == ElemType::F32 => n,
        _ => {
            return Err(format!(
                "`w` must be an f32 workspace [S, {m}, N] (one M×N partial product per slice \
                 of K) or its transpose [S, N, {m}], found {} {:?}",
                w.elem.name(),
                w.shape
            ));
        }
    };
    let layout = match dims2(b)? {
        (bn, bk) if bn == n && bk == k => BLayout::Tn,
        (bk, bn) if bn == n && bk == k => BLayout::Nn,
        (r, c) => {
            return Err(format!(
                "`b` is [{r}, {c}]; with `a` [{m}, {k}] and `w` [S, {m}, {n}] it must be \
                 [{n}, {k}] or [{k}, {n}]"
            ));
        }
    };
    if a.elem != b.elem || sig.tensors.len() != 3 || !sig.scalars.is_empty() {
        return Err(format!(
            "`solves = gemm` with a workspace `w` takes `a`, `b` of one element type and `w`, \
             no other tensor and no scalars ({})",
            kind.roles()
        ));
    }
    Ok(GemmProblem {
        b: layout,
        epilogue: Epilogue::Partial,
    })
}

impl fmt::Display for RowOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Problem {
    /// `copy`, `gemm(b = tn, epilogue = plain)`: the text form of the signature and listings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Copy => write!(f, "copy"),
            Problem::Row(op) => write!(f, "{}", op.name()),
            Problem::SiluMul => write!(f, "silu_mul"),
            Problem::Attention => write!(f, "attention"),
            Problem::Gemm(g) => write!(
                f,
                "gemm(b = {}, epilogue = {})",
                g.b.name(),
                g.epilogue.name()
            ),
        }
    }
}

#[cfg(test)]
mod tests;
