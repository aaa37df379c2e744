//! The row ops' CPU reference, in f64 from the bf16 inputs' exact values, and the checker that
//! compares a kernel's bf16 output with it.
//!
//! Tolerance ([`check`]): element `i` of a row passes when
//! `|got − want| ≤ RTOL · (|want| + FLOOR · rms(want row))`, with [`RTOL`] = 2⁻⁷ and
//! [`FLOOR`] = 2⁻³. Why these:
//! - bf16 keeps 8 significant bits, so rounding a right f32 result to bf16 moves it by up to
//!   2⁻⁸ of its magnitude (half an ulp; the ulp is 2⁻⁷ to 2⁻⁸ of the value).
//! - The kernel's f32 arithmetic (row sums over up to 2¹⁵ columns, `rsqrt`, `ex2.approx`) is
//!   off by far less (~2⁻¹⁶ relative with tree reductions), but can push a value over a bf16
//!   rounding boundary: the rounded result is then one whole ulp away. [`RTOL`] allows that ulp.
//! - Normalized outputs near zero (`x ≈ mean`) carry the absolute error of the row statistics,
//!   which is relative to the row's scale, not to the element: hence the floor, a fraction of
//!   the row's RMS. It also keeps softmax rows whose small entries are much below the row's
//!   largest exact enough: softmax of inputs in [-1, 1) never spans more than e² in a row.
//! - One element off by 2⁻⁶ (two to four ulps) or more fails, as does any NaN or infinity.
//!
//! The reported error is `max |got − want| / (|want| + FLOOR · rms)` over the elements, the
//! same measure as the bound, so it compares directly with [`RTOL`].

use super::{RowOp, RowProblem};
use half::bf16;

/// The relative tolerance of a bf16 output: one bf16 ulp at most (see the module docs).
pub const RTOL: f64 = 1.0 / 128.0;

/// The error floor, as a fraction of the row's RMS (see the module docs).
pub const FLOOR: f64 = 1.0 / 8.0;

/// Softmax of one row: `exp(x − max) / Σ exp(x − max)`.
pub fn softmax_row(x: &[bf16], out: &mut [f64]) {
    let max = x
        .iter()
        .map(|v| v.to_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for (o, v) in out.iter_mut().zip(x) {
        *o = (v.to_f64() - max).exp();
        sum += *o;
    }
    for o in out.iter_mut() {
        *o /= sum;
    }
}

/// RMSNorm of one row: `x · rsqrt(mean(x²) + eps) · w`; no `w` means a weight of ones.
pub fn rmsnorm_row(x: &[bf16], w: Option<&[bf16]>, eps: f32, out: &mut [f64]) {
    let mean_sq = x.iter().map(|v| v.to_f64().powi(2)).sum::<f64>() / x.len() as f64;
    let rstd = 1.0 / (mean_sq + f64::from(eps)).sqrt();
    for (j, (o, v)) in out.iter_mut().zip(x).enumerate() {
        *o = v.to_f64() * rstd * weight(w, j);
    }
}

/// LayerNorm of one row: `(x − mean) · rsqrt(var + eps) · w + b`, the variance biased (÷ the
/// row length), computed in two passes; no `w` means ones, no `b` zeros.
pub fn layernorm_row(
    x: &[bf16],
    w: Option<&[bf16]>,
    b: Option<&[bf16]>,
    eps: f32,
    out: &mut [f64],
) {
    let n = x.len() as f64;
    let mean = x.iter().map(|v| v.to_f64()).sum::<f64>() / n;
    let var = x.iter().map(|v| (v.to_f64() - mean).powi(2)).sum::<f64>() / n;
    let rstd = 1.0 / (var + f64::from(eps)).sqrt();
    for (j, (o, v)) in out.iter_mut().zip(x).enumerate() {
        let shift = b.map_or(0.0, |b| b[j].to_f64());
        *o = (v.to_f64() - mean) * rstd * weight(w, j) + shift;
    }
}

fn weight(w: Option<&[bf16]>, j: usize) -> f64 {
    w.map_or(1.0, |w| w[j].to_f64())
}

/// The reference of the given rows of `p` (in that order, `p.cols` values each) from x
/// (`p.rows × p.cols`, row-major), the weight `w` and the bias `b` (`p.cols` each; softmax
/// ignores both, RMSNorm ignores `b`).
///
/// # Panics
/// If x, w or b is shorter than `p` says, or a row index is out of range.
pub fn reference_rows(
    p: &RowProblem,
    x: &[bf16],
    w: Option<&[bf16]>,
    b: Option<&[bf16]>,
    rows: &[usize],
) -> Vec<f64> {
    let n = p.cols;
    let mut out = vec![0.0; rows.len() * n];
    for (o, &r) in out.chunks_exact_mut(n.max(1)).zip(rows) {
        let xr = &x[r * n..(r + 1) * n];
        match p.op {
            RowOp::Softmax => softmax_row(xr, o),
            RowOp::RmsNorm => rmsnorm_row(xr, w, p.eps, o),
            RowOp::LayerNorm => layernorm_row(xr, w, b, p.eps, o),
        }
    }
    out
}

/// The reference of every row of `p` ([`reference_rows`] over `0..p.rows`).
pub fn reference(p: &RowProblem, x: &[bf16], w: Option<&[bf16]>, b: Option<&[bf16]>) -> Vec<f64> {
    let all: Vec<usize> = (0..p.rows).collect();
    reference_rows(p, x, w, b, &all)
}

/// Which rows of `rows` a check compares: all of them up to `max`, else `max` rows spread
/// evenly from the first to the last (both included), so that the first and last CTAs' work
/// and the ones between are all seen.
pub fn sample_rows(rows: usize, max: usize) -> Vec<usize> {
    if rows <= max {
        return (0..rows).collect();
    }
    if max < 2 {
        return (0..max).collect();
    }
    (0..max).map(|i| i * (rows - 1) / (max - 1)).collect()
}

/// Why an output failed its check.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// The output has another number of elements than the reference.
    #[error("{op}: the output has {got} elements, the reference {want}")]
    Length {
        /// The op checked.
        op: RowOp,
        /// Elements of the output.
        got: usize,
        /// Elements of the reference.
        want: usize,
    },
    /// An element is out of tolerance (or not finite).
    #[error(
        "{op}: row {row} col {col} is {got}, the reference {want:.6e}: error {err:.3e} over \
         the tolerance {tol:.3e}"
    )]
    Wrong {
        /// The op checked.
        op: RowOp,
        /// The row, counted in the rows compared (not necessarily the matrix's row index).
        row: usize,
        /// The column.
        col: usize,
        /// The output's value.
        got: f64,
        /// The reference's value.
        want: f64,
        /// The error measure (see the module docs); infinite for NaN or infinity.
        err: f64,
        /// [`RTOL`].
        tol: f64,
    },
}

/// Compares the output `got` of `op` with the reference `want`, both row-major with `cols`
/// columns, by the tolerance in the module docs. Returns the largest error measured (compare
/// with [`RTOL`]); the first element over the tolerance is the error.
pub fn check(op: RowOp, got: &[bf16], want: &[f64], cols: usize) -> Result<f64, CheckError> {
    if got.len() != want.len() {
        return Err(CheckError::Length {
            op,
            got: got.len(),
            want: want.len(),
        });
    }
    let cols = cols.max(1);
    let mut worst = 0.0f64;
    for (row, (g, w)) in got.chunks(cols).zip(want.chunks(cols)).enumerate() {
        let rms = (w.iter().map(|v| v * v).sum::<f64>() / w.len() as f64).sqrt();
        for (col, (&g, &w)) in g.iter().zip(w).enumerate() {
            let g = g.to_f64();
            // An all-zero row asks for exact zeros rather than dividing by zero.
            let scale = w.abs() + FLOOR * rms + f64::MIN_POSITIVE;
            let err = if g.is_finite() && w.is_finite() {
                (g - w).abs() / scale
            } else {
                f64::INFINITY
            };
            if err > RTOL {
                return Err(CheckError::Wrong {
                    op,
                    row,
                    col,
                    got: g,
                    want: w,
                    err,
                    tol: RTOL,
                });
            }
            worst = worst.max(err);
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Rng;

    fn bf(v: &[f32]) -> Vec<bf16> {
        v.iter().map(|&x| bf16::from_f32(x)).collect()
    }

    fn close(got: &[f64], want: &[f64], tol: f64) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() <= tol, "element {i}: {g} vs {w}\n{got:?}");
        }
    }

    fn problem(op: RowOp, rows: usize, cols: usize, eps: f32) -> RowProblem {
        RowProblem {
            op,
            rows,
            cols,
            eps,
        }
    }

    /// Rounded to bf16, as a right kernel writes it.
    fn rounded(want: &[f64]) -> Vec<bf16> {
        want.iter().map(|&v| bf16::from_f64(v)).collect()
    }

    #[test]
    fn softmax_of_1_2_3_4_by_hand() {
        // e^-3, e^-2, e^-1, 1 over their sum 1.5530017923...
        let y = reference(
            &problem(RowOp::Softmax, 1, 4, 0.0),
            &bf(&[1.0, 2.0, 3.0, 4.0]),
            None,
            None,
        );
        close(&y, &[0.0320586, 0.0871443, 0.2368828, 0.6439143], 1e-7);
    }

    #[test]
    fn rmsnorm_of_1_2_3_4_by_hand() {
        // mean(x²) = 30/4 = 7.5; 1/sqrt(7.5) = 0.3651483717.
        let x = bf(&[1.0, 2.0, 3.0, 4.0]);
        let w = bf(&[1.0, 0.5, 2.0, -1.0]);
        let y = reference(&problem(RowOp::RmsNorm, 1, 4, 0.0), &x, Some(&w), None);
        close(&y, &[0.3651484, 0.3651484, 2.1908902, -1.4605935], 1e-7);
        // eps enters under the root: 1/sqrt(7.5 + 0.5) = 1/sqrt(8).
        let y = reference(&problem(RowOp::RmsNorm, 1, 4, 0.5), &x, None, None);
        let r = 1.0 / 8f64.sqrt();
        close(&y, &[r, 2.0 * r, 3.0 * r, 4.0 * r], 1e-12);
    }

    #[test]
    fn layernorm_of_1_2_3_4_by_hand() {
        // mean 2.5, biased var 1.25, 1/sqrt(1.25) = 0.8944271910.
        let x = bf(&[1.0, 2.0, 3.0, 4.0]);
        let w = bf(&[1.0, 1.0, 2.0, -1.0]);
        let b = bf(&[0.5, 0.5, 0.5, 0.0]);
        let y = reference(
            &problem(RowOp::LayerNorm, 1, 4, 0.0),
            &x,
            Some(&w),
            Some(&b),
        );
        close(&y, &[-0.8416408, 0.0527864, 1.3944272, -1.3416408], 1e-7);
    }

    #[test]
    fn softmax_rows_are_distributions_that_keep_the_order() {
        let (rows, cols) = (5, 777);
        let x = Rng::new(3).bf16s(rows * cols);
        let y = reference(&problem(RowOp::Softmax, rows, cols, 0.0), &x, None, None);
        for (xr, yr) in x.chunks(cols).zip(y.chunks(cols)) {
            assert!((yr.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(yr.iter().all(|&v| v > 0.0));
            let argmax = |v: Vec<f64>| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b]));
            assert_eq!(
                argmax(xr.iter().map(|v| v.to_f64()).collect()),
                argmax(yr.to_vec())
            );
        }
    }

    #[test]
    fn rmsnorm_of_a_constant_row_is_the_weight_times_its_sign() {
        let cols = 64;
        let w = Rng::new(4).bf16s(cols);
        for c in [-0.5f32, 3.0] {
            let x = bf(&vec![c; cols]);
            let y = reference(&problem(RowOp::RmsNorm, 1, cols, 1e-6), &x, Some(&w), None);
            let want: Vec<f64> = w
                .iter()
                .map(|w| w.to_f64() * f64::from(c.signum()))
                .collect();
            // c / sqrt(c² + eps) is 1 − eps/(2c²) in magnitude.
            close(&y, &want, 1e-5);
        }
    }

    #[test]
    fn layernorm_rows_are_standardized_before_the_affine() {
        let (rows, cols) = (4, 1000);
        let mut rng = Rng::new(5);
        let x = rng.bf16s(rows * cols);
        // Weights away from zero, so (y − b) / w recovers the standardized row.
        let w: Vec<bf16> = (0..cols)
            .map(|_| bf16::from_f32(1.0 + 0.5 * rng.unit()))
            .collect();
        let b = rng.bf16s(cols);
        let p = problem(RowOp::LayerNorm, rows, cols, 1e-6);
        let y = reference(&p, &x, Some(&w), Some(&b));
        for yr in y.chunks(cols) {
            let z: Vec<f64> = (0..cols)
                .map(|j| (yr[j] - b[j].to_f64()) / w[j].to_f64())
                .collect();
            let mean = z.iter().sum::<f64>() / cols as f64;
            let var = z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
            assert!(mean.abs() < 1e-12, "{mean}");
            assert!((var - 1.0).abs() < 1e-4, "{var}");
        }
        // With w and b constant, each row's mean is b and its standard deviation |w|.
        let (w1, b1) = (bf(&vec![-2.0; cols]), bf(&vec![0.25; cols]));
        let y = reference(&p, &x, Some(&w1), Some(&b1));
        for yr in y.chunks(cols) {
            let mean = yr.iter().sum::<f64>() / cols as f64;
            let var = yr.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
            assert!((mean - 0.25).abs() < 1e-12, "{mean}");
            assert!((var.sqrt() - 2.0).abs() < 1e-4, "{var}");
        }
    }

    #[test]
    fn selected_rows_match_the_full_reference() {
        let (rows, cols) = (9, 33);
        let mut rng = Rng::new(6);
        let (x, w, b) = (rng.bf16s(rows * cols), rng.bf16s(cols), rng.bf16s(cols));
        for op in RowOp::ALL {
            let p = problem(op, rows, cols, 1e-6);
            let all = reference(&p, &x, Some(&w), Some(&b));
            let picked = reference_rows(&p, &x, Some(&w), Some(&b), &[8, 0, 3]);
            for (k, r) in [8, 0, 3].into_iter().enumerate() {
                assert_eq!(
                    picked[k * cols..(k + 1) * cols],
                    all[r * cols..(r + 1) * cols]
                );
            }
        }
    }

    #[test]
    fn samples_cover_first_and_last_rows() {
        assert_eq!(sample_rows(5, 256), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample_rows(5, 5), vec![0, 1, 2, 3, 4]);
        let s = sample_rows(32768, 256);
        assert_eq!(s.len(), 256);
        assert_eq!((s[0], s[255]), (0, 32767));
        assert!(s.windows(2).all(|p| p[0] < p[1]));
        assert_eq!(sample_rows(10, 2), vec![0, 9]);
        assert_eq!(sample_rows(10, 1), vec![0]);
        assert!(sample_rows(10, 0).is_empty());
        assert!(sample_rows(0, 256).is_empty());
    }

    /// What a plain f32 kernel computes: sequential f32 sums (the worst order for rounding),
    /// rounded to bf16 at the end.
    fn f32_kernel(p: &RowProblem, x: &[bf16], w: &[bf16], b: &[bf16]) -> Vec<bf16> {
        let n = p.cols;
        let mut out = Vec::with_capacity(x.len());
        for xr in x.chunks(n) {
            let xf: Vec<f32> = xr.iter().map(|v| v.to_f32()).collect();
            let y: Vec<f32> = match p.op {
                RowOp::Softmax => {
                    let m = xf.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let s: f32 = xf.iter().map(|v| (v - m).exp()).sum();
                    xf.iter().map(|v| (v - m).exp() / s).collect()
                }
                RowOp::RmsNorm => {
                    let ms = xf.iter().map(|v| v * v).sum::<f32>() / n as f32;
                    let r = 1.0 / (ms + p.eps).sqrt();
                    (0..n).map(|j| xf[j] * r * w[j].to_f32()).collect()
                }
                RowOp::LayerNorm => {
                    let mean = xf.iter().sum::<f32>() / n as f32;
                    let var = xf.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / n as f32;
                    let r = 1.0 / (var + p.eps).sqrt();
                    (0..n)
                        .map(|j| (xf[j] - mean) * r * w[j].to_f32() + b[j].to_f32())
                        .collect()
                }
            };
            out.extend(y.into_iter().map(bf16::from_f32));
        }
        out
    }

    #[test]
    fn right_outputs_pass_and_perturbed_ones_fail() {
        // Long rows: the f32 sums' error grows with the row length.
        let (rows, cols) = (3, 32768);
        let mut rng = Rng::new(7);
        let x = rng.bf16s(rows * cols);
        let (w, b) = (rng.bf16s(cols), rng.bf16s(cols));
        for op in RowOp::ALL {
            let p = problem(op, rows, cols, 1e-6);
            let want = reference(&p, &x, Some(&w), Some(&b));
            let exact = check(op, &rounded(&want), &want, cols).unwrap();
            assert!(exact <= RTOL / 2.0, "{op}: rounding alone gives {exact}");
            let kernel = f32_kernel(&p, &x, &w, &b);
            let err = check(op, &kernel, &want, cols).unwrap();
            assert!(err <= RTOL, "{op}: {err}");

            // The largest element of the middle row off by 2^-5 of its value (four ulps, less
            // the rounding): rejected, and located.
            let mut bad = rounded(&want);
            let middle = &want[cols..2 * cols];
            let col = (0..cols)
                .max_by(|&a, &b| middle[a].abs().total_cmp(&middle[b].abs()))
                .unwrap();
            bad[cols + col] = bf16::from_f64(middle[col] * (1.0 + 1.0 / 32.0));
            match check(op, &bad, &want, cols) {
                Err(CheckError::Wrong { row, col: c, .. }) => assert_eq!((row, c), (1, col)),
                other => panic!("{op}: {other:?}"),
            }
            let mut nan = rounded(&want);
            nan[5] = bf16::NAN;
            let e = check(op, &nan, &want, cols).unwrap_err();
            assert!(
                matches!(e, CheckError::Wrong { err, .. } if err.is_infinite()),
                "{e}"
            );
            // Rows swapped: every row is someone's right answer, but not this one's.
            let mut swapped = rounded(&want);
            swapped[..2 * cols].rotate_left(cols);
            assert!(check(op, &swapped, &want, cols).is_err(), "{op}");
        }
    }

    #[test]
    fn a_short_output_is_an_error() {
        let want = [0.5, 0.5];
        let e = check(RowOp::Softmax, &bf(&[0.5]), &want, 2).unwrap_err();
        assert_eq!(
            e,
            CheckError::Length {
                op: RowOp::Softmax,
                got: 1,
                want: 2
            }
        );
        assert_eq!(
            e.to_string(),
            "softmax: the output has 1 elements, the reference 2"
        );
    }
}
