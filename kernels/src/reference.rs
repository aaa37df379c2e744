//! CPU references and test data: a deterministic random generator (no dependency), the f64
//! GEMM reference, and the error measures the checks use.

use half::bf16;

/// A small deterministic generator (SplitMix64), enough for test data.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    /// Uniform integer in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }
    /// `n` random bf16 values in [-1, 1).
    pub fn bf16s(&mut self, n: usize) -> Vec<bf16> {
        (0..n).map(|_| bf16::from_f32(self.unit())).collect()
    }
}

/// D = A·Bᵀ in f64 (A m×k, B n×k, row-major).
pub fn gemm_tn_f64(a: &[bf16], b: &[bf16], m: usize, n: usize, k: usize) -> Vec<f64> {
    let a: Vec<f64> = a.iter().map(|x| x.to_f64()).collect();
    let b: Vec<f64> = b.iter().map(|x| x.to_f64()).collect();
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        let ar = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let br = &b[j * k..(j + 1) * k];
            d[i * n + j] = ar.iter().zip(br).map(|(x, y)| x * y).sum();
        }
    }
    d
}

/// D = A·B in f64 with B given K×N (A m×k, B k×n, row-major): the "NN" form.
pub fn gemm_nn_f64(a: &[bf16], b: &[bf16], m: usize, n: usize, k: usize) -> Vec<f64> {
    let a: Vec<f64> = a.iter().map(|x| x.to_f64()).collect();
    let b: Vec<f64> = b.iter().map(|x| x.to_f64()).collect();
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        let dr = &mut d[i * n..(i + 1) * n];
        // Row i of D is the sum over p of A[i][p] · (row p of B): contiguous in both.
        for p in 0..k {
            let x = a[i * k + p];
            for (dj, y) in dr.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *dj += x * y;
            }
        }
    }
    d
}

/// B (k×n, row-major) transposed into n×k, so that `gemm_tn_f64(a, &transpose(b), ..)` is the
/// NN product; used to cross-check the two references.
pub fn transpose(b: &[bf16], k: usize, n: usize) -> Vec<bf16> {
    let mut t = vec![bf16::ZERO; k * n];
    for p in 0..k {
        for j in 0..n {
            t[j * k + p] = b[p * n + j];
        }
    }
    t
}

/// ‖got − want‖_F / ‖want‖_F; NaN anywhere gives infinity.
pub fn rel_frobenius(got: &[bf16], want: &[f64]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (g, w) in got.iter().zip(want) {
        let g = g.to_f64();
        if !g.is_finite() {
            return f64::INFINITY;
        }
        num += (g - w) * (g - w);
        den += w * w;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_gemm_matches_a_hand_computed_product() {
        let a: Vec<bf16> = [1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&x| bf16::from_f32(x))
            .collect();
        let b: Vec<bf16> = [5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
            .iter()
            .map(|&x| bf16::from_f32(x))
            .collect();
        // A 2×2, B 3×2: D[i][j] = A[i]·B[j].
        assert_eq!(
            gemm_tn_f64(&a, &b, 2, 3, 2),
            vec![17.0, 23.0, 29.0, 39.0, 53.0, 67.0]
        );
    }

    #[test]
    fn nn_reference_is_the_tn_reference_of_the_transpose() {
        let a: Vec<bf16> = [1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&x| bf16::from_f32(x))
            .collect();
        // B 2×3 (K×N): D[i][j] = Σ_p A[i][p]·B[p][j].
        let b: Vec<bf16> = [5.0, 7.0, 9.0, 6.0, 8.0, 10.0]
            .iter()
            .map(|&x| bf16::from_f32(x))
            .collect();
        assert_eq!(
            gemm_nn_f64(&a, &b, 2, 3, 2),
            vec![17.0, 23.0, 29.0, 39.0, 53.0, 67.0]
        );
        let mut rng = Rng::new(3);
        let (m, n, k) = (7, 13, 9);
        let (a, b) = (rng.bf16s(m * k), rng.bf16s(k * n));
        let (nn, tn) = (
            gemm_nn_f64(&a, &b, m, n, k),
            gemm_tn_f64(&a, &transpose(&b, k, n), m, n, k),
        );
        assert!(nn.iter().zip(&tn).all(|(x, y)| (x - y).abs() < 1e-12));
    }

    #[test]
    fn frobenius_error_flags_nan_and_measures_difference() {
        let want = vec![3.0, 4.0];
        let got = vec![bf16::from_f32(3.0), bf16::from_f32(4.0)];
        assert_eq!(rel_frobenius(&got, &want), 0.0);
        let off = vec![bf16::from_f32(3.0), bf16::from_f32(5.0)];
        assert!((rel_frobenius(&off, &want) - 0.2).abs() < 1e-12);
        assert!(rel_frobenius(&[bf16::NAN, bf16::ONE], &want).is_infinite());
    }

    #[test]
    fn rng_is_deterministic_and_spread() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let xs: Vec<f32> = (0..1000).map(|_| a.unit()).collect();
        assert!(
            xs.iter()
                .zip((0..1000).map(|_| b.unit()))
                .all(|(x, y)| *x == y)
        );
        assert!(xs.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f32>() / 1000.0;
        assert!(mean.abs() < 0.1, "mean {mean}");
    }
}
