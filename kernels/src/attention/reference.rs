//! The f64 reference of attention forward: O and the log-sum-exp per row, from the inputs'
//! exact values, with the kernels' conventions (bottom-right causal alignment, a row that sees
//! no key gives O = 0 and LSE = −∞, GQA head `h` reading K/V head `h / (HQ / HK)`).

use crate::reference::HostElem;

/// The extents of one attention problem: Q is `[b, s, hq·d]`, K `[b, sk, hk·d]`, V
/// `[b, sk, hk·dv]` and O `[b, s, hq·dv]` (torch's `[B, S, H, D]` row-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Batch.
    pub b: usize,
    /// Query sequence length.
    pub s: usize,
    /// Key/value sequence length.
    pub sk: usize,
    /// Query heads.
    pub hq: usize,
    /// Key/value heads (divides `hq`).
    pub hk: usize,
    /// Head dimension of Q and K.
    pub d: usize,
    /// Head dimension of V and O (`d` but for MLA-style shapes).
    pub dv: usize,
}

impl Dims {
    /// Whether query `i` sees key `j`.
    pub fn sees(&self, causal: bool, i: usize, j: usize) -> bool {
        j < self.sk && (!causal || j + self.s <= i + self.sk)
    }
}

/// O `[b, s, hq·dv]` and LSE `[b, hq, s]` (natural log) of softmax(scale·Q·Kᵀ)·V, the rows
/// computed on every core the machine has (each row on its own: the result does not depend on
/// the split).
pub fn attention_f64<T: HostElem + Sync>(
    q: &[T],
    k: &[T],
    v: &[T],
    dims: Dims,
    causal: bool,
    scale: f64,
) -> (Vec<f64>, Vec<f64>) {
    let Dims { b, s, hq, dv, .. } = dims;
    let rows: Vec<(usize, usize, usize)> = (0..b)
        .flat_map(|bi| (0..hq).flat_map(move |h| (0..s).map(move |i| (bi, h, i))))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = rows.len().div_ceil(threads).max(1);
    let done: Vec<(Vec<f64>, f64)> = std::thread::scope(|sc| {
        let parts: Vec<_> = rows
            .chunks(chunk)
            .map(|c| {
                sc.spawn(move || {
                    c.iter()
                        .map(|&r| attention_row(q, k, v, dims, causal, scale, r))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().expect("a reference thread"))
            .collect()
    });
    let mut o = vec![0.0; b * s * hq * dv];
    let mut lse = vec![f64::NEG_INFINITY; b * hq * s];
    for (&(bi, h, i), (row, l)) in rows.iter().zip(done) {
        o[(bi * s + i) * hq * dv + h * dv..][..dv].copy_from_slice(&row);
        lse[(bi * hq + h) * s + i] = l;
    }
    (o, lse)
}

/// One row of [`attention_f64`]: O of query `i` of head `h` in batch `bi` (`dv` values) and
/// its LSE.
pub fn attention_row<T: HostElem>(
    q: &[T],
    k: &[T],
    v: &[T],
    dims: Dims,
    causal: bool,
    scale: f64,
    (bi, h, i): (usize, usize, usize),
) -> (Vec<f64>, f64) {
    let Dims {
        s,
        sk,
        hq,
        hk,
        d,
        dv,
        ..
    } = dims;
    let kh = h / (hq / hk);
    let qr: Vec<f64> = q[(bi * s + i) * hq * d + h * d..][..d]
        .iter()
        .map(|x| x.to_f64())
        .collect();
    let mut p = vec![f64::NEG_INFINITY; sk];
    let mut max = f64::NEG_INFINITY;
    for (j, pj) in p.iter_mut().enumerate() {
        if dims.sees(causal, i, j) {
            let kr = &k[(bi * sk + j) * hk * d + kh * d..][..d];
            *pj = scale * qr.iter().zip(kr).map(|(x, y)| x * y.to_f64()).sum::<f64>();
            max = max.max(*pj);
        }
    }
    let mut o = vec![0.0; dv];
    if max == f64::NEG_INFINITY {
        return (o, max);
    }
    let mut sum = 0.0;
    for (j, pj) in p.iter().enumerate() {
        if *pj == f64::NEG_INFINITY {
            continue;
        }
        let e = (*pj - max).exp();
        sum += e;
        let vr = &v[(bi * sk + j) * hk * dv + kh * dv..][..dv];
        for (oe, ve) in o.iter_mut().zip(vr) {
            *oe += e * ve.to_f64();
        }
    }
    for oe in o.iter_mut() {
        *oe /= sum;
    }
    (o, max + sum.ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_returns_its_value_and_the_lse_is_the_score() {
        let dims = Dims {
            b: 1,
            s: 1,
            sk: 1,
            hq: 1,
            hk: 1,
            d: 2,
            dv: 2,
        };
        let (o, lse) = attention_f64(
            &[1.0f32, 2.0],
            &[3.0f32, 4.0],
            &[5.0f32, 6.0],
            dims,
            false,
            0.5,
        );
        assert_eq!(o, vec![5.0, 6.0]);
        assert_eq!(lse, vec![0.5 * 11.0]);
    }

    #[test]
    fn causal_rows_before_the_first_key_are_zero_and_gqa_shares_heads() {
        // s = 3 queries over sk = 2 keys, bottom-right: query 0 sees none, 1 sees key 0.
        let dims = Dims {
            b: 1,
            s: 3,
            sk: 2,
            hq: 2,
            hk: 1,
            d: 1,
            dv: 1,
        };
        let q = [1.0f32, 1.0, 1.0, 1.0, 1.0, 1.0];
        let (o, lse) = attention_f64(&q, &[0.0f32, 0.0], &[2.0f32, 4.0], dims, true, 1.0);
        assert_eq!(&o[0..2], &[0.0, 0.0]);
        assert_eq!(&o[2..4], &[2.0, 2.0]);
        assert_eq!(&o[4..6], &[3.0, 3.0]);
        assert_eq!(lse[0], f64::NEG_INFINITY);
        assert!((lse[2] - 2f64.ln()).abs() < 1e-12);
    }

    /// Q/K head dim 2 and V/O head dim 3 (MLA's split): the scores contract over two values,
    /// O has three per row, read from V rows of three.
    #[test]
    fn the_v_head_dim_may_differ_from_the_qk_one() {
        let dims = Dims {
            b: 1,
            s: 1,
            sk: 2,
            hq: 1,
            hk: 1,
            d: 2,
            dv: 3,
        };
        let (o, lse) = attention_f64(
            &[1.0f32, 0.0],
            &[0.0f32, 1.0, 0.0, 0.0],
            &[1.0f32, 2.0, 3.0, 5.0, 7.0, 9.0],
            dims,
            false,
            2f64.ln(),
        );
        // Scores ln 2 · (0, 0): equal weights.
        assert_eq!(o, vec![3.0, 4.5, 6.0]);
        assert!((lse[0] - 2f64.ln()).abs() < 1e-12);
    }
}
