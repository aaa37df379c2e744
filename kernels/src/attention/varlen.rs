//! Variable-length attention batches on the host: the offsets' checks, the tile for a head dim,
//! mask and element type, the launch of `attention_sm90_varlen` (`hopper_varlen.rs`), its f64
//! reference and its run in the emulator.
//!
//! The layout is FA2/FA3's `flash_attn_varlen_func`'s: the B sequences packed one after the
//! other, Q `[TQ, HQ·D]`, K and V `[TK, HK·D]` (torch's `[total, H, D]`), O as Q, and the
//! cumulative offsets `cu_seqlens_q`, `cu_seqlens_k` (B + 1 non-decreasing i32 each, the last
//! the total): sequence `b` is rows `cu_q[b]…cu_q[b + 1]` of Q and `cu_k[b]…cu_k[b + 1]` of K/V.
//! The LSE is `[HQ, TQ, 1]` f32, one row per query head, one value per token (FA3's varlen
//! layout). Empty sequences and sequences of one token are allowed; a sequence's query and key
//! lengths may differ (a prefill after a cached prefix), causal then bottom-right aligned per
//! sequence (query i sees keys j ≤ i + SK − SQ); a query that sees no key (SQ > SK) gets O = 0
//! and LSE = −∞.
//!
//! The offsets are taken as host slices: they are checked here ([`Offsets::new`]) before
//! anything is launched — an offset array of the wrong length, one that decreases, starts below
//! zero or does not end at its tensor's total is a typed [`VarlenError`] — and uploaded for the
//! kernel (a few bytes).

use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor};

use super::hopper_varlen::kernels::attention_sm90_varlen;
use crate::reference::HostElem;

/// Why a variable-length attention call is refused before its launch.
#[derive(Debug, thiserror::Error)]
pub enum VarlenError {
    /// The two offset arrays have different lengths (they describe one batch).
    #[error("cu_seqlens_q has {q} entries and cu_seqlens_k {k}: both are B + 1 for one batch")]
    LengthsDiffer {
        /// Entries of `cu_seqlens_q`.
        q: usize,
        /// Entries of `cu_seqlens_k`.
        k: usize,
    },
    /// No entry at all (B + 1 ≥ 1).
    #[error("cu_seqlens_{which} is empty: it holds B + 1 offsets, at least [0]")]
    Empty {
        /// `q` or `k`.
        which: &'static str,
    },
    /// An offset below zero.
    #[error("cu_seqlens_{which}[0] = {first}: offsets start at 0 or above")]
    Negative {
        /// `q` or `k`.
        which: &'static str,
        /// The first offset.
        first: i32,
    },
    /// Offsets that decrease: a negative sequence length.
    #[error(
        "cu_seqlens_{which} decreases at {at}: {before} then {after} (offsets are cumulative lengths, non-decreasing)"
    )]
    NotMonotone {
        /// `q` or `k`.
        which: &'static str,
        /// Index of the smaller entry.
        at: usize,
        /// The entry before it.
        before: i32,
        /// The entry.
        after: i32,
    },
    /// The last offset is not the tensor's token count.
    #[error("cu_seqlens_{which} ends at {last}, but {tensor} holds {total} tokens")]
    LastNotTotal {
        /// `q` or `k`.
        which: &'static str,
        /// The last offset.
        last: i32,
        /// `q` or `k`/`v`.
        tensor: &'static str,
        /// Rows of that tensor.
        total: usize,
    },
    /// Tensors whose shapes do not fit the layout.
    #[error("{0}")]
    Shape(String),
    /// No tile of `attention_sm90_varlen` for this head dim, mask and type.
    #[error(
        "no attention_sm90_varlen tile for head dim {d}, {}, {}: head dims {have:?}",
        if *.causal { "causal" } else { "full" },
        .elem.name()
    )]
    NoTile {
        /// The head dim asked.
        d: usize,
        /// Causal.
        causal: bool,
        /// The element type.
        elem: ElemType,
        /// The head dims the kernel has.
        have: Vec<usize>,
    },
    /// The runtime refused or failed (upload, launch).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// Checked cumulative offsets of one batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offsets {
    /// `cu_seqlens_q`, B + 1 entries.
    pub q: Vec<i32>,
    /// `cu_seqlens_k`, B + 1 entries.
    pub k: Vec<i32>,
}

impl Offsets {
    /// Checks `cu_q` and `cu_k` against the token counts `total_q` (Q's rows) and `total_k`
    /// (K's and V's): equal lengths, at least one entry, starting at 0 or above,
    /// non-decreasing, ending at the totals.
    pub fn new(
        cu_q: &[i32],
        cu_k: &[i32],
        total_q: usize,
        total_k: usize,
    ) -> Result<Offsets, VarlenError> {
        if cu_q.len() != cu_k.len() {
            return Err(VarlenError::LengthsDiffer {
                q: cu_q.len(),
                k: cu_k.len(),
            });
        }
        for (which, cu, tensor, total) in [("q", cu_q, "q", total_q), ("k", cu_k, "k/v", total_k)] {
            let (&first, &last) = cu
                .first()
                .zip(cu.last())
                .ok_or(VarlenError::Empty { which })?;
            if first < 0 {
                return Err(VarlenError::Negative { which, first });
            }
            if let Some(at) = cu.windows(2).position(|w| w[1] < w[0]) {
                return Err(VarlenError::NotMonotone {
                    which,
                    at: at + 1,
                    before: cu[at],
                    after: cu[at + 1],
                });
            }
            if usize::try_from(last).ok() != Some(total) {
                return Err(VarlenError::LastNotTotal {
                    which,
                    last,
                    tensor,
                    total,
                });
            }
        }
        Ok(Offsets {
            q: cu_q.to_vec(),
            k: cu_k.to_vec(),
        })
    }

    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.q.len() - 1
    }

    /// Sequence `b`'s query rows and key rows.
    pub fn seq(&self, b: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let r = |cu: &[i32]| cu[b] as usize..cu[b + 1] as usize;
        (r(&self.q), r(&self.k))
    }
}

/// The `attention_sm90_varlen` artifact for head dim `d`, the mask and the element type.
pub fn tile_for(
    d: usize,
    causal: bool,
    elem: ElemType,
) -> Result<&'static KernelArtifact, VarlenError> {
    let arts = attention_sm90_varlen::KERNEL.artifacts;
    arts.iter()
        .find(|a| {
            a.int("D") == Some(d as i64)
                && a.int("CAUSAL") == Some(i64::from(causal))
                && a.elem_of("q") == Some(elem)
        })
        .ok_or_else(|| {
            let mut have: Vec<usize> = arts
                .iter()
                .filter_map(|a| a.int("D").map(|d| d as usize))
                .collect();
            have.sort();
            have.dedup();
            VarlenError::NoTile {
                d,
                causal,
                elem,
                have,
            }
        })
}

/// The outputs of one call: O `[TQ, HQ·D]` and the LSE `[HQ, TQ, 1]`.
pub struct Outputs<'a, T: tirx::Element> {
    /// O.
    pub o: &'a mut Tensor<T>,
    /// The log-sum-exp of each query token per head (natural log; −∞ where no key is seen).
    pub lse: &'a mut Tensor<f32>,
}

/// Checks the shapes of a call: q and o `[TQ, HQ·D]`, k and v `[TK, HK·D]`, HK | HQ, the LSE
/// `[HQ, TQ, 1]`; gives (HQ, HK).
fn heads([q, k, v, o, lse]: [&[usize]; 5], d: usize) -> Result<(usize, usize), VarlenError> {
    let bad = |why: String| VarlenError::Shape(format!("varlen attention: {why}"));
    if [q, k, v, o].iter().any(|s| s.len() != 2) || q != o || k != v {
        return Err(bad(format!(
            "q {q:?}, k {k:?}, v {v:?}, o {o:?}: q and o must be one [TQ, HQ·D], k and v one [TK, HK·D]"
        )));
    }
    if d == 0
        || k[1] == 0
        || !q[1].is_multiple_of(d)
        || !k[1].is_multiple_of(d)
        || !(q[1] / d).is_multiple_of(k[1] / d)
    {
        return Err(bad(format!(
            "head dim {d} over q {q:?} and k {k:?}: D must divide both widths and the K/V heads the query heads"
        )));
    }
    let hq = q[1] / d;
    if lse != [hq, q[0], 1] {
        return Err(bad(format!(
            "lse {lse:?}: it must be [HQ, TQ, 1] = {:?}",
            [hq, q[0], 1]
        )));
    }
    Ok((hq, k[1] / d))
}

/// O = softmax(scale·Q·Kᵀ [+ causal mask])·V per sequence and head, and the LSE, over the
/// packed batch the offsets describe (module docs). Checks the shapes and the offsets, then
/// launches `attention_sm90_varlen` on the runtime's stream; returns the artifact.
#[allow(clippy::too_many_arguments)]
pub fn run<T: tirx::Element>(
    rt: &Runtime,
    q: &Tensor<T>,
    k: &Tensor<T>,
    v: &Tensor<T>,
    out: Outputs<'_, T>,
    (cu_q, cu_k): (&[i32], &[i32]),
    d: usize,
    causal: bool,
    scale: f32,
) -> Result<&'static KernelArtifact, VarlenError> {
    let shapes = [
        q.shape(),
        k.shape(),
        v.shape(),
        out.o.shape(),
        out.lse.shape(),
    ];
    heads(shapes, d)?;
    let off = Offsets::new(cu_q, cu_k, q.shape()[0], k.shape()[0])?;
    let art = tile_for(d, causal, T::ELEM)?;
    if q.shape()[0] == 0 {
        return Ok(art); // no query token: nothing to compute
    }
    if k.shape()[0] == 0 {
        return Err(VarlenError::Shape(
            "varlen attention: k and v hold no token (TK = 0), and a TMA tensor needs extents of 1 or more: pass K and V with at least one token (sequences of no key still give O = 0 and LSE = −∞)".into(),
        ));
    }
    let cq = rt.upload(&off.q, &[off.q.len()])?;
    let ck = rt.upload(&off.k, &[off.k.len()])?;
    let args = [q.view(), k.view(), v.view(), out.o.view(), out.lse.view()];
    launch(rt, art, args, [cq.view(), ck.view()], scale)?;
    // The offsets' buffers are freed when they go out of scope: wait for the kernel first.
    rt.synchronize()?;
    Ok(art)
}

/// Launches `art` (an `attention_sm90_varlen` artifact, [`tile_for`]) on `[q, k, v, o, lse]`
/// and the offsets already on the device, `[cu_q, cu_k]`, with no check of the offsets
/// (the bench's repeated launches; [`run`] checks them): the caller has checked them with
/// [`Offsets::new`].
pub fn launch(
    rt: &Runtime,
    art: &KernelArtifact,
    [q, k, v, o, lse]: [tirx::TensorArg<'_>; 5],
    [cu_q, cu_k]: [tirx::TensorArg<'_>; 2],
    scale: f32,
) -> Result<(), VarlenError> {
    let roles = [
        ("q", q),
        ("k", k),
        ("v", v),
        ("o", o),
        ("lse", lse),
        ("cu_q", cu_q),
        ("cu_k", cu_k),
    ];
    let scale_log2 = scale * std::f32::consts::LOG2_E;
    crate::family::launch_roles(rt, art, &roles, &[("scale_log2", scale_log2)])?;
    Ok(())
}

/// The f64 reference: O `[TQ, HQ·D]` and the LSE `[HQ, TQ]` of each sequence, computed as
/// one batch of its own lengths ([`super::reference::attention_row`]).
#[allow(clippy::too_many_arguments)]
pub fn attention_varlen_f64<T: HostElem>(
    q: &[T],
    k: &[T],
    v: &[T],
    off: &Offsets,
    (hq, hk, d): (usize, usize, usize),
    causal: bool,
    scale: f64,
) -> (Vec<f64>, Vec<f64>) {
    use super::reference::{Dims, attention_row};
    let total_q = *off.q.last().unwrap_or(&0) as usize;
    let mut o = vec![0.0; total_q * hq * d];
    let mut lse = vec![f64::NEG_INFINITY; hq * total_q];
    for b in 0..off.batch() {
        let (rq, rk) = off.seq(b);
        let dims = Dims {
            b: 1,
            s: rq.len(),
            sk: rk.len(),
            hq,
            hk,
            d,
            dv: d,
        };
        let qs = &q[rq.start * hq * d..rq.end * hq * d];
        let ks = &k[rk.start * hk * d..rk.end * hk * d];
        let vs = &v[rk.start * hk * d..rk.end * hk * d];
        for h in 0..hq {
            for i in 0..rq.len() {
                let (row, l) = attention_row(qs, ks, vs, dims, causal, scale, (0, h, i));
                let t = rq.start + i;
                o[t * hq * d + h * d..][..d].copy_from_slice(&row);
                lse[h * total_q + t] = l;
            }
        }
    }
    (o, lse)
}

/// `art` (an `attention_sm90_varlen` artifact) in the emulator on the batch `cu_q`/`cu_k`
/// with `hq` query heads over `hk` K/V heads, inputs from `seed`, outputs poisoned: O within
/// 2e-2 and the LSE within 2e-3 of [`attention_varlen_f64`] (−∞ exactly where no key is
/// seen), or the first element that is not. Returns max |o − ref|.
pub fn simulate(
    art: &KernelArtifact,
    (cu_q, cu_k): (&[i32], &[i32]),
    (hq, hk): (usize, usize),
    sms: u32,
    seed: u64,
    policy: &tirx_sim::Policy,
) -> Result<f64, String> {
    use crate::simulate::{decode, encode, launch_with, put, random_values};
    let d = art.int("D").ok_or("no head dim `D`")? as usize;
    let causal = art.int("CAUSAL") == Some(1);
    let elem = (art.signature)().tensors[0].elem;
    let (tq, tk) = (
        *cu_q.last().unwrap_or(&0) as usize,
        *cu_k.last().unwrap_or(&0) as usize,
    );
    let off = Offsets::new(cu_q, cu_k, tq, tk).map_err(|e| e.to_string())?;
    let mut rng = crate::reference::Rng::new(seed);
    let (_, qv) = random_values(&mut rng, elem, tq * hq * d);
    let (_, kv) = random_values(&mut rng, elem, tk * hk * d);
    let (_, vv) = random_values(&mut rng, elem, tk * hk * d);
    let [(qb, qv), (kb, kv), (vb, vv)] = [&qv, &kv, &vv].map(|x| encode(x, elem));
    let mut dev = tirx_sim::Device::new();
    let ints = |cu: &[i32]| cu.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let ob = tq * hq * d * elem.bytes() as usize;
    let tensors = [
        put(&mut dev, &qb, elem, &[tq, hq * d]),
        put(&mut dev, &kb, elem, &[tk, hk * d]),
        put(&mut dev, &vb, elem, &[tk, hk * d]),
        put(&mut dev, &vec![0xff; ob], elem, &[tq, hq * d]),
        put(
            &mut dev,
            &vec![0xff; hq * tq * 4],
            ElemType::F32,
            &[hq, tq, 1],
        ),
        put(&mut dev, &ints(cu_q), ElemType::I32, &[cu_q.len()]),
        put(&mut dev, &ints(cu_k), ElemType::I32, &[cu_k.len()]),
    ];
    let scale = 1.0 / (d as f64).sqrt();
    let scalars = [(scale * std::f64::consts::LOG2_E) as f32];
    let limits = tirx::runtime::DeviceLimits {
        sm_count: sms,
        ..tirx::runtime::DeviceLimits::HOPPER
    };
    launch_with(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&tensors, &scalars),
        seed,
        &limits,
        policy,
    )
    .map_err(|e| crate::simulate::with_source_lines(art, &e.to_string()))?;
    let read = |t: &tirx::runtime::TensorMeta, bytes: usize, elem| {
        dev.read(t.addr, bytes)
            .map(|b| decode(&b, elem))
            .map_err(|e| e.to_string())
    };
    let got = read(&tensors[3], ob, elem)?;
    let got_lse = read(&tensors[4], hq * tq * 4, ElemType::F32)?;
    let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (want, want_lse) =
        attention_varlen_f64(&f(&qv), &f(&kv), &f(&vv), &off, (hq, hk, d), causal, scale);
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let e = (g - w).abs();
        if e.is_nan() || e > 2e-2 {
            return Err(format!("O element {i} is {g}, the reference {w:.6e}"));
        }
        worst = worst.max(e);
    }
    for (i, (g, w)) in got_lse.iter().zip(&want_lse).enumerate() {
        let ok = if *w == f64::NEG_INFINITY {
            g == w
        } else {
            (g - w).abs() <= 2e-3
        };
        if !ok {
            return Err(format!(
                "LSE of head {} token {} is {g}, the reference {w:.6e}",
                i / tq.max(1),
                i % tq.max(1)
            ));
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_that_do_not_describe_the_tensors_are_typed_errors() {
        let ok = Offsets::new(&[0, 3, 3, 10], &[0, 5, 6, 6], 10, 6).unwrap();
        assert_eq!(ok.batch(), 3);
        assert_eq!(ok.seq(1), (3..3, 5..6));
        let e = |q: &[i32], k: &[i32], tq, tk| Offsets::new(q, k, tq, tk).unwrap_err();
        assert!(matches!(
            e(&[0, 3], &[0, 1, 2], 3, 2),
            VarlenError::LengthsDiffer { q: 2, k: 3 }
        ));
        assert!(matches!(
            e(&[0, 5, 4], &[0, 1, 2], 4, 2),
            VarlenError::NotMonotone {
                which: "q",
                at: 2,
                before: 5,
                after: 4
            }
        ));
        assert!(matches!(
            e(&[0, 2, 4], &[0, 1, 3], 4, 2),
            VarlenError::LastNotTotal {
                which: "k",
                last: 3,
                total: 2,
                ..
            }
        ));
        assert!(matches!(
            e(&[-1, 4], &[0, 2], 4, 2),
            VarlenError::Negative {
                which: "q",
                first: -1
            }
        ));
        assert!(matches!(
            e(&[], &[], 0, 0),
            VarlenError::Empty { which: "q" }
        ));
        let text = e(&[0, 5, 4], &[0, 1, 2], 4, 2).to_string();
        assert!(
            text.contains("cu_seqlens_q decreases at 2: 5 then 4"),
            "{text}"
        );
    }

    #[test]
    fn shapes_that_do_not_fit_the_layout_are_refused() {
        let q: &[usize] = &[10, 256];
        let k: &[usize] = &[6, 128];
        assert_eq!(heads([q, k, k, q, &[4, 10, 1]], 64).unwrap(), (4, 2));
        for (shapes, why) in [
            ([q, k, k, q, &[4usize, 9, 1][..]], "lse [4, 9, 1]"),
            ([q, k, &[6, 64][..], q, &[4, 10, 1][..]], "k and v one"),
            (
                [q, &[6, 192][..], &[6, 192][..], q, &[4, 10, 1][..]],
                "head dim 64",
            ),
        ] {
            let e = heads(shapes, 64).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn every_head_dim_mask_and_type_has_a_tile_and_others_are_refused() {
        for d in [64, 128, 256] {
            for causal in [false, true] {
                for elem in [ElemType::Bf16, ElemType::F16] {
                    let a = tile_for(d, causal, elem).unwrap();
                    assert_eq!(a.int("D"), Some(d as i64));
                }
            }
        }
        let e = tile_for(96, false, ElemType::Bf16).unwrap_err().to_string();
        assert!(e.contains("head dims [64, 128, 256]"), "{e}");
    }

    /// The reference is the dense one per sequence: two sequences of one token each against
    /// keys of their own; an empty sequence contributes nothing; a causal query before every
    /// key (SQ > SK) gives O = 0 and LSE = −∞.
    #[test]
    fn the_reference_treats_each_sequence_on_its_own() {
        let off = Offsets::new(&[0, 1, 1, 3], &[0, 1, 2, 3], 3, 3).unwrap();
        // d = 1, one head: q = 1, keys 0, values 2, 4, 8.
        let (o, lse) = attention_varlen_f64(
            &[1.0f32, 1.0, 1.0],
            &[0.0f32, 0.0, 0.0],
            &[2.0f32, 4.0, 8.0],
            &off,
            (1, 1, 1),
            true,
            1.0,
        );
        // Sequence 0: query 0 sees key 0 (value 2). Sequence 1: no queries. Sequence 2:
        // queries 1, 2 against one key (value 8): query 1 sees none, query 2 sees it.
        assert_eq!(o, vec![2.0, 0.0, 8.0]);
        assert_eq!(lse, vec![0.0, f64::NEG_INFINITY, 0.0]);
    }
}
