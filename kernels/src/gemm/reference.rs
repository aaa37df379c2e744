//! The GEMM family's f64 reference: D = A·op(B) with B in either layout ([`BOperand`]), and
//! the fused epilogue D = act(A·Bᵀ + bias): the activations of
//! [`Act`] (the problem's own, `tirx::problem::Act`, which the fused kernels' configs name) in
//! f64, their names on the command line (`--epilogue bias|bias-relu|bias-gelu|bias-silu`, from
//! [`Act::epilogue_name`]), and [`apply_epilogue`], which turns an f64 GEMM reference
//! ([`gemm_tn_f64`]) into the epilogue's, and [`add_residual`] (D = act(A·op(B) + bias) + R).
//!
//! The activations, from the inputs' exact values in f64:
//! - ReLU: max(x, 0).
//! - GELU, tanh form: ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (Hendrycks & Gimpel, "Gaussian
//!   Error Linear Units", 2016, §2; PyTorch's `gelu(approximate="tanh")`). It is not the exact
//!   x·Φ(x): the two differ by at most 4.8e-4, which in the far negative tail (x ≈ −3) is many
//!   bf16 units in the last place. The tanh form is the one cuBLASLt's GELU epilogue computes
//!   (see [`super::cublaslt`] for the evidence).
//! - SiLU: x·σ(x) = x / (1 + e^(−x)).
//!
//! Invariant: the bias is added per column, before the activation:
//! `D[i][j] = act(acc[i][j] + bias[j])`, bias of length N for a row-major M×N D.

use half::bf16;

pub use tirx::problem::Act;

use tirx::problem::BLayout;

use crate::reference::{HostElem, gemm_nn_f64, gemm_tn_f64};

/// What B's layout (the artifact's problem says which) means for the host: B's shape, the
/// f64 reference in that layout, and a corner of B.
pub trait BOperand {
    /// B's shape for an M×N×K problem: N×K (TN) or K×N (NN).
    fn b_shape(self, m: usize, n: usize, k: usize) -> [usize; 2];
    /// The f64 reference D (m×n) of `a` (m×k) and `b` in this layout.
    fn reference<T: HostElem>(self, a: &[T], b: &[T], m: usize, n: usize, k: usize) -> Vec<f64>;
    /// The first `cn` output columns' worth of `b` (the operand of a D corner's reference):
    /// the first `cn` rows of an N×K B, or the first `cn` columns of every row of a K×N B.
    fn b_columns<T: Copy>(self, b: &[T], n: usize, k: usize, cn: usize) -> Vec<T>;
}

impl BOperand for BLayout {
    fn b_shape(self, _m: usize, n: usize, k: usize) -> [usize; 2] {
        match self {
            BLayout::Tn => [n, k],
            BLayout::Nn => [k, n],
        }
    }

    fn reference<T: HostElem>(self, a: &[T], b: &[T], m: usize, n: usize, k: usize) -> Vec<f64> {
        match self {
            BLayout::Tn => gemm_tn_f64(a, b, m, n, k),
            BLayout::Nn => gemm_nn_f64(a, b, m, n, k),
        }
    }

    fn b_columns<T: Copy>(self, b: &[T], n: usize, k: usize, cn: usize) -> Vec<T> {
        match self {
            BLayout::Tn => b[..cn * k].to_vec(),
            BLayout::Nn => (0..k).flat_map(|p| b[p * n..p * n + cn].to_vec()).collect(),
        }
    }
}

/// `--epilogue` named no epilogue the bench knows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown epilogue `{0}`: bias, bias-relu, bias-gelu or bias-silu")]
pub struct UnknownEpilogue(pub String);

/// The activation named `s` on the command line, the inverse of [`Act::epilogue_name`]
/// (`bias`, `bias-relu`, `bias-gelu`, `bias-silu`).
pub fn parse_epilogue(s: &str) -> Result<Act, UnknownEpilogue> {
    Act::ALL
        .into_iter()
        .find(|a| a.epilogue_name() == s)
        .ok_or_else(|| UnknownEpilogue(s.to_string()))
}

/// act(x) in f64.
pub fn activate(act: Act, x: f64) -> f64 {
    match act {
        Act::None => x,
        Act::Relu => relu(x),
        Act::Gelu => gelu_tanh(x),
        Act::Silu => silu(x),
    }
}

/// The epilogue's formula in ASCII, as reports print it (`D = relu(A*B^T + bias)`).
pub fn formula(act: Act) -> &'static str {
    match act {
        Act::None => "D = A*B^T + bias",
        Act::Relu => "D = relu(A*B^T + bias)",
        Act::Gelu => "D = gelu_tanh(A*B^T + bias)",
        Act::Silu => "D = silu(A*B^T + bias)",
    }
}

/// max(x, 0).
pub fn relu(x: f64) -> f64 {
    x.max(0.0)
}

/// GELU's tanh form: ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
pub fn gelu_tanh(x: f64) -> f64 {
    let sqrt_2_over_pi = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (sqrt_2_over_pi * (x + 0.044715 * x * x * x)).tanh())
}

/// x·σ(x) = x / (1 + e^(−x)).
pub fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

/// Applies the epilogue to `acc_f64`, a row-major block of an f64 GEMM reference with `n`
/// columns: each element becomes act(acc + bias[column]). `bias` holds the block's columns'
/// bias values (for a block of columns c0..c0+n of D, pass `&bias[c0..c0 + n]`).
///
/// # Panics
/// When `bias` does not hold `n` values or `acc_f64` is not whole rows of `n`.
pub fn apply_epilogue(acc_f64: &mut [f64], n: usize, bias: &[bf16], act: Act) {
    assert_eq!(bias.len(), n, "one bias value per column");
    assert!(
        n > 0 && acc_f64.len().is_multiple_of(n),
        "{} elements are not whole rows of {n}",
        acc_f64.len()
    );
    let bias: Vec<f64> = bias.iter().map(|b| b.to_f64()).collect();
    for row in acc_f64.chunks_exact_mut(n) {
        for (x, b) in row.iter_mut().zip(&bias) {
            *x = activate(act, *x + b);
        }
    }
}

/// D = act(A·Bᵀ + bias) in f64 (A m×k, B n×k, row-major; bias of length n).
pub fn gemm_epilogue_f64(
    a: &[bf16],
    b: &[bf16],
    bias: &[bf16],
    (m, n, k): (usize, usize, usize),
    act: Act,
) -> Vec<f64> {
    let mut d = gemm_tn_f64(a, b, m, n, k);
    apply_epilogue(&mut d, n, bias, act);
    d
}

/// Adds the residual `res` (row-major, the shape of `acc_f64`) to an f64 reference already
/// through its epilogue: D = act(A·op(B) + bias) + R, the residual after the activation.
///
/// # Panics
/// When `res` does not hold one value per element of `acc_f64`.
pub fn add_residual<T: HostElem>(acc_f64: &mut [f64], res: &[T]) {
    assert_eq!(res.len(), acc_f64.len(), "one residual value per element");
    for (x, r) in acc_f64.iter_mut().zip(res) {
        *x += HostElem::to_f64(*r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() < 5e-7
    }

    fn bf(v: &[f32]) -> Vec<bf16> {
        v.iter().map(|&x| bf16::from_f32(x)).collect()
    }

    #[test]
    fn activations_match_hand_computed_values() {
        // gelu_tanh(1) = ½(1 + tanh(0.7978846·1.044715)) = ½(1 + tanh(0.8335620)) = ½·1.6823840.
        assert!(close(gelu_tanh(1.0), 0.841192), "{}", gelu_tanh(1.0));
        assert!(close(gelu_tanh(-1.0), -0.158808), "{}", gelu_tanh(-1.0));
        assert_eq!(gelu_tanh(0.0), 0.0);
        // Far out it is the identity, or zero.
        assert!((gelu_tanh(10.0) - 10.0).abs() < 1e-12);
        assert!(gelu_tanh(-10.0).abs() < 1e-12);
        // silu(1) = 1/(1 + 1/e).
        assert!(close(silu(1.0), 0.731059), "{}", silu(1.0));
        assert!(close(silu(-1.0), -0.268941), "{}", silu(-1.0));
        assert_eq!(silu(0.0), 0.0);
        assert_eq!(relu(-1.0), 0.0);
        assert_eq!(relu(2.5), 2.5);
        assert_eq!(activate(Act::None, -3.0), -3.0);
        assert_eq!(activate(Act::Relu, -3.0), 0.0);
        assert_eq!(activate(Act::Gelu, 1.0), gelu_tanh(1.0));
        assert_eq!(activate(Act::Silu, 1.0), silu(1.0));
    }

    #[test]
    fn the_tanh_form_is_not_the_exact_gelu() {
        // x·Φ(x) at x = -3 is -0.0040497 (Φ(-3) = 0.0013499); the tanh form is 4.1e-4 above
        // it, some 13 bf16 units in the last place there.
        let exact = -3.0 * 0.001_349_898_031_630_1;
        let diff = gelu_tanh(-3.0) - exact;
        assert!((diff - 4.123e-4).abs() < 1e-6, "{diff}");
    }

    #[test]
    fn the_residual_is_added_after_the_activation() {
        // relu(acc + bias) + R: a negative pre-activation still gets its residual.
        let mut acc = vec![-0.5, 1.0, -1.0, 2.0];
        apply_epilogue(&mut acc, 2, &bf(&[-1.0, 0.5]), Act::Relu);
        add_residual(&mut acc, &bf(&[0.25, -4.0, 1.5, 0.0]));
        assert_eq!(acc, [0.25, -2.5, 1.5, 2.5]);
    }

    #[test]
    fn the_bias_is_added_per_column_before_the_activation() {
        // acc 2×3; bias per column [1, -2, 0.5].
        let mut acc = vec![-0.5, 1.0, -1.0, 2.0, 3.0, 0.0];
        let bias = bf(&[1.0, -2.0, 0.5]);
        let mut none = acc.clone();
        apply_epilogue(&mut none, 3, &bias, Act::None);
        assert_eq!(none, [0.5, -1.0, -0.5, 3.0, 1.0, 0.5]);
        apply_epilogue(&mut acc, 3, &bias, Act::Relu);
        assert_eq!(acc, [0.5, 0.0, 0.0, 3.0, 1.0, 0.5]);
        let mut g = vec![0.0, 0.0];
        apply_epilogue(&mut g, 2, &bf(&[1.0, -1.0]), Act::Gelu);
        assert!(close(g[0], 0.841192) && close(g[1], -0.158808), "{g:?}");
        let mut s = vec![2.0, 0.0];
        apply_epilogue(&mut s, 1, &bf(&[-1.0]), Act::Silu);
        assert!(close(s[0], 0.731059) && close(s[1], -0.268941), "{s:?}");
    }

    #[test]
    fn the_gemm_reference_takes_the_epilogue() {
        // A 2×2, B 3×2: A·Bᵀ = [[17, 23, 29], [39, 53, 67]]; bias [-20, -50, 0].
        let a = bf(&[1.0, 2.0, 3.0, 4.0]);
        let b = bf(&[5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        let bias = bf(&[-20.0, -50.0, 0.0]);
        let d = gemm_epilogue_f64(&a, &b, &bias, (2, 3, 2), Act::Relu);
        assert_eq!(d, [0.0, 0.0, 29.0, 19.0, 3.0, 67.0]);
        // A bias applied per row instead would have given D[0][1] = 23 - 50 = -27 → 0 too, but
        // D[1][0] = 39 - 50 → 0, not 19.
        assert_ne!(d[3], 0.0);
    }

    #[test]
    #[should_panic(expected = "one bias value per column")]
    fn a_bias_of_the_wrong_length_is_refused() {
        apply_epilogue(&mut [0.0; 6], 3, &bf(&[1.0, 2.0]), Act::None);
    }

    #[test]
    fn names_parse_back() {
        for act in Act::ALL {
            assert_eq!(parse_epilogue(act.epilogue_name()), Ok(act));
            assert!(formula(act).starts_with("D = "));
        }
        assert_eq!(parse_epilogue("bias-gelu"), Ok(Act::Gelu));
        let err = parse_epilogue("gelu").unwrap_err();
        assert_eq!(err, UnknownEpilogue("gelu".into()));
        assert!(err.to_string().contains("bias-silu"), "{err}");
    }
}
