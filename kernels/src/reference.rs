//! CPU references and test data: a deterministic random generator (no dependency), the f64
//! GEMM reference, and the error measures the checks use, for every element type a kernel
//! takes (bf16, f16, f32).

use half::{bf16, f16};
use tirx::Element;

/// An element type the host makes test data in and reads results from.
pub trait HostElem: Element {
    /// The nearest value to `x` (round to nearest even).
    fn from_f32(x: f32) -> Self;
    /// The exact value.
    fn to_f64(self) -> f64;
}

impl HostElem for bf16 {
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

impl HostElem for f16 {
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}

impl HostElem for f32 {
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

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
        self.values(n)
    }
    /// `n` random values in [-1, 1), rounded to `T`.
    pub fn values<T: HostElem>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| T::from_f32(self.unit())).collect()
    }
}

/// D = A·Bᵀ in f64 (A m×k, B n×k, row-major), from the inputs' exact values.
pub fn gemm_tn_f64<T: HostElem>(a: &[T], b: &[T], m: usize, n: usize, k: usize) -> Vec<f64> {
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
pub fn gemm_nn_f64<T: HostElem>(a: &[T], b: &[T], m: usize, n: usize, k: usize) -> Vec<f64> {
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
pub fn transpose<T: Copy>(b: &[T], k: usize, n: usize) -> Vec<T> {
    let mut t = b.to_vec();
    for p in 0..k {
        for j in 0..n {
            t[j * k + p] = b[p * n + j];
        }
    }
    t
}

/// ‖got − want‖_F / ‖want‖_F; NaN anywhere gives infinity.
pub fn rel_frobenius<T: HostElem>(got: &[T], want: &[f64]) -> f64 {
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
    fn the_reference_reads_every_element_type_exactly() {
        let (a16, b16): (Vec<f16>, Vec<f16>) = (
            [1.5, -2.0].iter().map(|&x| f16::from_f32(x)).collect(),
            [0.25, 3.0].iter().map(|&x| f16::from_f32(x)).collect(),
        );
        assert_eq!(gemm_tn_f64(&a16, &b16, 1, 1, 2), vec![1.5 * 0.25 - 6.0]);
        let got = vec![f16::from_f32(-5.625)];
        assert_eq!(rel_frobenius(&got, &[-5.625]), 0.0);
        assert_eq!(rel_frobenius(&[3.0f32, 4.0], &[3.0, 4.0]), 0.0);
        assert!(rel_frobenius(&[f16::NAN], &[1.0]).is_infinite());
        let mut rng = Rng::new(3);
        let xs: Vec<f16> = rng.values(100);
        assert!(xs.iter().all(|x| (-1.0..1.0).contains(&x.to_f32())));
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
